/* cli.h - what every memprof command shares: exit codes, messages, the
 * command table.
 *
 * Adding a command (git's builtin.h checklist):
 *   1. write src/cli/cmd_<name>.c defining  int cmd_<name>(int argc, char **argv)
 *      (argv[0] is the command name; parse with cli_parse_options (options.h):
 *      its own options, the input options it takes from inputs.h's table,
 *      --help and unknown options; it only wires what they say);
 *   2. add one X(<name>, "one-line summary") row to src/cli/commands.def;
 *   3. add the file to src/cli/CMakeLists.txt;
 *   4. add tests and a section in docs/cli.md.
 */
#ifndef MEMPROF_CLI_H
#define MEMPROF_CLI_H

#include <memprof/error.h>

#include <stdio.h>

/* Exit codes: documented in docs/cli.md; scripts depend on them. */
enum {
	MP_EXIT_OK = 0,      /* success */
	MP_EXIT_FAILURE = 1, /* the analysis failed or found nothing usable */
	MP_EXIT_USAGE = 2,   /* bad command line: unknown option, bad range, unknown device */
	MP_EXIT_IO = 3,      /* a file could not be opened, read or written */
	MP_EXIT_FORMAT = 4,  /* input is not in the expected format, or is corrupted */
};

#define X(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef X

/* Print "memprof: error: <msg>" to stderr; returns -1 (git's error()). */
int mp_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "memprof: warning: <msg>" to stderr. */
void mp_cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a diag as one line: "memprof: error: FILE: offset N: text" and return
 * the exit code matching its error code (MP_EXIT_IO / MP_EXIT_FORMAT / ...). */
int mp_cli_diag(const mp_diag_t *diag);
/* Exit code for an error code. */
int mp_cli_exit_code(int err);

/* Why `memprof record` gets no capture from CMD (record_why.c): when CMD's
 * file (found as execvp finds it; a script's by its interpreter) is one the
 * loader cannot preload into, writes a sentence naming it into why and
 * returns MP_UNTRACED_NO_LOADER (statically linked, or setuid/setgid for
 * this user: the preload is harmless, just unused) or MP_UNTRACED_FOREIGN
 * (another C library's loader, which fails to start the program when given
 * the preload: CMD must run without it); otherwise 0. */
enum { MP_UNTRACED_NO_LOADER = 1, MP_UNTRACED_FOREIGN = 2 };
int mp_cli_untraced_reason(const char *cmd, char *why, size_t n);

/* The files memprof runs, found relative to its own executable in the
 * build tree or an install prefix (beside_exe.c): the preload library of
 * `memprof record` ($MEMPROF_PRELOAD when set) and the example program of
 * `memprof demo` ($MEMPROF_DEMO_PROGRAM when set). The path goes into out
 * (size >= PATH_MAX) and 0 is returned; else an error naming every path
 * tried is printed and MP_EXIT_IO returned. */
int mp_cli_find_preload(char *out, size_t size);
int mp_cli_find_demo(char *out, size_t size);

/* report_keep.c: for a kept run (`record --keep`), the lines report
 * prints before the window's report (its segments, where it starts, the
 * whole run's figures); nothing for another input. 0. */
int cli_keep_print(FILE *out, const char *path);
/* report_keep.c: for a window of a full capture (report --from-event),
 * the line report prints before its figures, saying what they cover. */
struct mp_report_input;
void cli_window_print(FILE *out, const struct mp_report_input *in);

#endif
