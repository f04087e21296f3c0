/* inputs.h - what the commands that read inputs (report, plot, diff,
 * convert, dump) share: the one table of input options (--device, --steps,
 * --run, --pid, --process, --all-frames, --user-code), parsed in one place,
 * their number and range arguments, and the inputs they analyse (captures,
 * xplane files read together, TensorBoard log directories, PyTorch
 * snapshots), opened and run through the solver the same way. */
#ifndef MEMPROF_CLI_INPUTS_H
#define MEMPROF_CLI_INPUTS_H

#include <memprof/calltree.h>
#include <memprof/functions.h>
#include <memprof/reader.h>
#include <memprof/report.h>
#include <memprof/solver.h>
#include <memprof/xplane.h>

#include "runs.h"

#include <getopt.h>
#include <stdint.h>

/* "123" -> 123 (no sign, no junk, fits). Returns 0 or -1. */
int cli_parse_u32(const char *s, uint32_t *out);
/* "A:B", "A:", ":B" or "A" with 0 <= A <= B. Returns 0 or -1. */
int cli_parse_steps(const char *s, int64_t *first, int64_t *last);
/* --user-code LIST (docs/torch.md): once, comma-separated, no empty item.
 * Prints what is wrong and returns MP_EXIT_USAGE, else MP_EXIT_OK. */
int cli_parse_user_code(const char *arg, const char **out);
/* --min-percent P of report --tree and plot --chart flame: a number from 0
 * to 100. Prints what is wrong and returns MP_EXIT_USAGE, else MP_EXIT_OK. */
int cli_parse_min_percent(const char *arg, double *out);
/* --from-event N of report and plot (a window from event N on): a count of
 * events. Prints what is wrong and returns MP_EXIT_USAGE, else MP_EXIT_OK. */
int cli_parse_from_event(const char *arg, uint64_t *out);
/* --steps A:B (cli_parse_steps) and --top N (a positive number) of report,
 * plot and diff. Print what is wrong and return MP_EXIT_USAGE, else
 * MP_EXIT_OK. */
int cli_steps_option(const char *arg, int64_t *first, int64_t *last);
int cli_top_option(const char *arg, uint32_t *out);

/* The input options, one bit each (--all-frames and --user-code go
 * together): a command names those it takes (options.h's parser). */
enum {
	CLI_IN_DEVICE = 1u << 0,  /* --device ID */
	CLI_IN_STEPS = 1u << 1,   /* --steps A:B */
	CLI_IN_RUN = 1u << 2,     /* --run NAME (TensorBoard log directories) */
	CLI_IN_PID = 1u << 3,     /* --pid N (a process of a 'memprof record' run) */
	CLI_IN_PROCESS = 1u << 4, /* --process main|all */
	CLI_IN_FRAMES = 1u << 5,  /* --all-frames, --user-code LIST */
};
/* report and plot take them all. */
#define CLI_IN_ALL (CLI_IN_DEVICE | CLI_IN_STEPS | CLI_IN_RUN | CLI_IN_PID | CLI_IN_PROCESS | CLI_IN_FRAMES)
/* How many input options there are (--all-frames and --user-code two). */
#define CLI_IN_COUNT 7
/* getopt vals of the input options: above every command's own. */
#define CLI_IN_OPT_BASE 0x1000

/* What the input options said; zero-initialised means none given. */
typedef struct cli_input_args {
	const char *device;                /* --device, or NULL */
	int steps_set;                     /* --steps A:B */
	int64_t step_first, step_last;
	mp_xplane_input_options_t xplane;  /* .run: --run (.xprof_clock is the command's: --compat) */
	cli_run_select_t sel;              /* --pid, --process */
	int all_frames;                    /* --all-frames */
	const char *user_code;             /* --user-code, or NULL */
} cli_input_args_t;

/* The long options of the input options in mask, into out (max slots).
 * Returns how many. */
size_t cli_input_longopts(unsigned mask, struct option *out, size_t max);
/* Parse input option val (from cli_input_longopts) into a. Prints what is
 * wrong and returns MP_EXIT_USAGE, else MP_EXIT_OK. */
int cli_input_option(int val, const char *arg, cli_input_args_t *a);

struct cli_inputs_options;
/* Wire a's options into what opens and solves the inputs: io's device,
 * xplane and frame options (io->xplane borrows a->xplane) and, where sopt
 * is not NULL, its steps window. */
void cli_input_args_wire(const cli_input_args_t *a, struct cli_inputs_options *io, mp_solver_options_t *sopt);

typedef struct cli_inputs_options {
	const mp_solver_options_t *solver; /* NULL: no solver is run (--compat) */
	const mp_xplane_input_options_t *xplane;
	const char *device;                /* --device, or NULL */
	int functions;                     /* 1: required (--by-function), 2: when the capture has stacks, 0: never */
	int torch_all_frames;              /* --all-frames: PyTorch snapshots' ops, captures' allocating
					      functions from any frame */
	const char *torch_user_code;       /* --user-code: more Python files that are the user's (snapshots
					      and captures with Python frames), or NULL */
	int tree;                          /* --tree: 1 + the mp_tree_kind_t to build (required), 0: none */
	double tree_min_percent;           /* --min-percent */
	int seek;                          /* solve captures from a checkpoint when they allow it
					      (report_seek.h: CLI_SEEK | _OOM | _LEAKS); 0: replay in full */
	int par;                           /* a full replay split at checkpoints, on every core
					      (replay_par.h), where the sections allow it */
	int window;                        /* a kept run's window from its first checkpoint, or
					      with from_set the window from event from_event
					      (report_window.h) */
	int from_set;
	uint64_t from_event;
	int window_replay;                 /* the window's state from the first event, not from a
					      checkpoint (--full-replay) */
} cli_inputs_options_t;

/* What a capture read by these options needs before its events: the op
 * of allocations without one, from their stacks' frames (as --by-function
 * charges them). */
void cli_capture_frame_ops(mp_capture_t *cap, const cli_inputs_options_t *o);

/* The failure err of input path as an exit code, said: diag named after
 * path and given err where it says neither. */
int cli_input_fail(mp_diag_t *diag, const char *path, int err);

typedef struct cli_inputs {
	int n;                       /* inputs opened (xplane files read together count once) */
	int cap;                     /* slots in the arrays below */
	mp_report_input_t *in;       /* path, solver, source, device of each */
	mp_source_t **sources;       /* owned */
	mp_solver_t **solvers;       /* owned; NULL without a solver */
	mp_functions_t **functions;  /* owned; NULL where none */
	mp_calltree_t **trees;       /* owned; NULL where none (without --tree) */
	const char **paths;          /* borrowed from argv or the sources: the file each input was
					read from, which what reads it again (a seek's, a window's)
					opens */
	const char **titles;         /* what charts call each input (a run's process:
					cli_runs_title_inputs), NULL: its path; borrowed */
	unsigned char *sought;       /* 1: solved from a checkpoint (o->seek), its source read from there */
} cli_inputs_t;

/* What charts call input i: its title, else its path. Borrowed. */
static inline const char *cli_input_title(const cli_inputs_t *ci, int i)
{
	return ci->titles[i] ? ci->titles[i] : ci->paths[i];
}

/* Open files[0..nfiles) as report does: xplane inputs grouped, captures
 * without memory events skipped with a note on stderr, each run through
 * the solver, --device resolved. Prints what goes wrong and returns an
 * exit code (MP_EXIT_OK with ci->n == 0 when every input was skipped).
 * Free with cli_inputs_close() in every case. */
int cli_inputs_open(cli_inputs_t *ci, char *const *files, int nfiles, const cli_inputs_options_t *o);
void cli_inputs_close(cli_inputs_t *ci);

/* cli_inputs_open() one input at a time, so that a command can write
 * each input's part and release it before the next (report --process all
 * of a run of many processes in the memory of the largest): init makes
 * room for nfiles inputs; next opens (and solves) the input at files[*f]
 * into slot ci->n, advancing *f past the arguments it used (ci->n is not
 * advanced for an input skipped with a note); both print what goes wrong
 * and return an exit code. release frees slot i's source, solver,
 * functions and tree (its path may be the source's: copy it first). */
int cli_inputs_init(cli_inputs_t *ci, int nfiles);
int cli_inputs_next(cli_inputs_t *ci, char *const *files, int nfiles, int *f, const cli_inputs_options_t *o);
void cli_inputs_release(cli_inputs_t *ci, int i);

#endif
