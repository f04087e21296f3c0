/* inputs.c - the input options of report, plot, diff, convert and dump,
 * and opening and solving the inputs of report, plot and diff. */
#include "inputs.h"
#include "replay_par.h"
#include "report_seek.h"
#include "report_window.h"

#include "cli.h"

#include <memprof/capture.h>
#include <memprof/functions.h>
#include <memprof/seed_checkpoint.h>
#include <memprof/torch.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_i64(const char *s, size_t len, int64_t *out)
{
	char buf[32], *end;
	long long v;

	if (len == 0 || len >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_steps(const char *s, int64_t *first, int64_t *last)
{
	const char *colon = strchr(s, ':');

	*first = 0;
	*last = INT64_MAX;
	if (!colon) {
		if (parse_i64(s, strlen(s), first) < 0)
			return -1;
		*last = *first;
		return 0;
	}
	if (colon == s && !colon[1])
		return -1;
	if (colon > s && parse_i64(s, (size_t)(colon - s), first) < 0)
		return -1;
	if (colon[1] && parse_i64(colon + 1, strlen(colon + 1), last) < 0)
		return -1;
	return *first <= *last ? 0 : -1;
}

int cli_parse_min_percent(const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !(*out >= 0 && *out <= 100)) {
		mp_cli_error("invalid --min-percent '%s' (expected a number from 0 to 100)", arg);
		return MP_EXIT_USAGE;
	}
	return MP_EXIT_OK;
}

int cli_parse_from_event(const char *arg, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(arg, &end, 10);
	if (errno || !*arg || *end || *arg == '-') {
		mp_cli_error("invalid --from-event '%s' (expected an event count)", arg);
		return MP_EXIT_USAGE;
	}
	return MP_EXIT_OK;
}

int cli_steps_option(const char *arg, int64_t *first, int64_t *last)
{
	if (cli_parse_steps(arg, first, last) < 0) {
		mp_cli_error("invalid --steps range '%s' (expected A:B with 0 <= A <= B)", arg);
		return MP_EXIT_USAGE;
	}
	return MP_EXIT_OK;
}

int cli_top_option(const char *arg, uint32_t *out)
{
	if (cli_parse_u32(arg, out) < 0 || *out == 0) {
		mp_cli_error("invalid --top '%s' (expected a positive number)", arg);
		return MP_EXIT_USAGE;
	}
	return MP_EXIT_OK;
}

int cli_parse_user_code(const char *arg, const char **out)
{
	size_t n = strlen(arg);

	if (*out) { /* one list: a second would silently replace or merge the first */
		mp_cli_error("--user-code given twice (give one comma-separated list)");
		return MP_EXIT_USAGE;
	}
	if (!n || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,")) {
		mp_cli_error("invalid --user-code '%s' (expected a comma-separated list of 'packages', "
			     "package names and path prefixes)", arg);
		return MP_EXIT_USAGE;
	}
	*out = arg;
	return MP_EXIT_OK;
}

/* The one table of input options: name, argument, which bit names it. */
static const struct {
	const char *name;
	int has_arg;
	unsigned bit;
} input_options[] = {
	{"device", required_argument, CLI_IN_DEVICE},
	{"steps", required_argument, CLI_IN_STEPS},
	{"run", required_argument, CLI_IN_RUN},
	{"pid", required_argument, CLI_IN_PID},
	{"process", required_argument, CLI_IN_PROCESS},
	{"all-frames", no_argument, CLI_IN_FRAMES},
	{"user-code", required_argument, CLI_IN_FRAMES},
};
enum { IN_DEVICE, IN_STEPS, IN_RUN, IN_PID, IN_PROCESS, IN_ALL_FRAMES, IN_USER_CODE, IN_COUNT };
_Static_assert(sizeof(input_options) / sizeof(input_options[0]) == IN_COUNT && IN_COUNT == CLI_IN_COUNT,
	       "one row per input option");

size_t cli_input_longopts(unsigned mask, struct option *out, size_t max)
{
	size_t n = 0;

	for (int i = 0; i < IN_COUNT && n < max; i++)
		if (mask & input_options[i].bit)
			out[n++] = (struct option){input_options[i].name, input_options[i].has_arg, NULL, CLI_IN_OPT_BASE + i};
	return n;
}

int cli_input_option(int val, const char *arg, cli_input_args_t *a)
{
	switch (val - CLI_IN_OPT_BASE) {
	case IN_DEVICE:
		a->device = arg;
		return MP_EXIT_OK;
	case IN_STEPS:
		if (cli_steps_option(arg, &a->step_first, &a->step_last) != MP_EXIT_OK)
			return MP_EXIT_USAGE;
		a->steps_set = 1;
		return MP_EXIT_OK;
	case IN_RUN:
		a->xplane.run = arg;
		return MP_EXIT_OK;
	case IN_PID:
		return cli_run_parse_pid(arg, &a->sel) ? MP_EXIT_USAGE : MP_EXIT_OK;
	case IN_PROCESS:
		return cli_run_parse_process(arg, &a->sel) ? MP_EXIT_USAGE : MP_EXIT_OK;
	case IN_ALL_FRAMES:
		a->all_frames = 1;
		return MP_EXIT_OK;
	case IN_USER_CODE:
		return cli_parse_user_code(arg, &a->user_code);
	default:
		return MP_EXIT_USAGE; /* not an input option: a caller's slip */
	}
}

void cli_input_args_wire(const cli_input_args_t *a, cli_inputs_options_t *io, mp_solver_options_t *sopt)
{
	io->device = a->device;
	io->xplane = &a->xplane;
	io->torch_all_frames = a->all_frames;
	io->torch_user_code = a->user_code;
	if (sopt) {
		sopt->steps_set = a->steps_set;
		sopt->step_first = a->step_first;
		sopt->step_last = a->step_last;
	}
}

/* The memory id that --device names in one input: a number, or a name. */
static int resolve_device(const mp_solver_t *s, const mp_source_t *src, const char *arg, uint32_t *id)
{
	uint32_t n;

	if (cli_parse_u32(arg, &n) == 0)
		return mp_solver_find(s, n) ? (*id = n, 0) : -1;
	for (size_t i = 0; i < mp_solver_device_count(s); i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		const mp_memory_info_t *m = mp_source_memory(src, d->id);
		if (m && m->name && !strcmp(m->name, arg)) {
			*id = d->id;
			return 0;
		}
	}
	return -1;
}

static void list_devices(const mp_solver_t *s, const mp_source_t *src, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < mp_solver_device_count(s) && used < size; i++) {
		const mp_solver_device_t *d = mp_solver_device(s, i);
		const mp_memory_info_t *m = mp_source_memory(src, d->id);
		int w = snprintf(buf + used, size - used, "%s%" PRIu32 " '%s'", i ? ", " : "", d->id, m ? m->name : "");
		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (!buf[0])
		snprintf(buf, size, "none");
}

int cli_input_fail(mp_diag_t *diag, const char *path, int err)
{
	if (!diag->file[0])
		mp_diag_set_file(diag, path);
	if (!diag->code)
		diag->code = err;
	return mp_cli_diag(diag);
}

/* --tree: the call tree of input i, or one line saying why there is none
 * (an exit code). */
static int open_tree(cli_inputs_t *ci, int i, const char *path, const cli_inputs_options_t *o,
		     const mp_solver_seed_t *seed, mp_diag_t *diag)
{
	mp_calltree_options_t to = {o->tree_min_percent, 1u << (o->tree - 1), seed, o->torch_all_frames};
	int err = mp_calltree_compute(&ci->trees[i], ci->sources[i], ci->solvers[i], &to, diag);

	if (err == MP_ENODATA) {
		if (mp_torch_is_source(ci->sources[i]))
			mp_cli_error("'%s': no call tree: the snapshot's blocks and trace entries carry no frames", path);
		else if (mp_capture_from_source(ci->sources[i]))
			mp_cli_error("'%s': no call tree: the capture has no call stacks (record it with "
				     "'memprof record --stacks')", path);
		else
			mp_cli_error("'%s': no call tree: the input has no call stacks", path);
		return MP_EXIT_FAILURE;
	}
	if (err < 0) {
		if (!diag->file[0])
			mp_diag_set_file(diag, path);
		return mp_cli_diag(diag);
	}
	return MP_EXIT_OK;
}

/* The source detection: files[f] (and the xplane files read with it) as
 * a PyTorch snapshot, xplane input or capture into ci->sources[i]; how
 * many arguments it used in *used. 0 or a negative code with diag. */
static int open_source(cli_inputs_t *ci, int i, char *const *files, int f, int nfiles, const cli_inputs_options_t *o,
		       int *used, mp_diag_t *diag)
{
	const char *path = files[f];
	char note[512];
	int err;

	*used = 1;
	if (mp_torch_path_is_candidate(path)) { /* a PyTorch memory snapshot */
		mp_torch_options_t topt = {o->torch_all_frames, o->torch_user_code};
		return mp_torch_open_source(&ci->sources[i], path, &topt, diag);
	}
	/* TF/JAX captures: a log directory, or xplane files read together */
	err = mp_xplane_open_args(&ci->sources[i], (const char *const *)files + f, (size_t)(nfiles - f), o->xplane, note,
				  sizeof(note), diag);
	*used = err > 0 ? err : 1;
	if (note[0])
		fprintf(stderr, "memprof: %s\n", note);
	if (err == 0 && (err = mp_capture_open_source(&ci->sources[i], path, diag)) == 0)
		cli_capture_frame_ops(mp_capture_from_source(ci->sources[i]), o);
	return err;
}

void cli_capture_frame_ops(mp_capture_t *cap, const cli_inputs_options_t *o)
{
	/* allocations without an op grouped by the frame --by-function
	 * charges them to: the reader names a Python frame of the user's
	 * code, the report's symbolizer any other (a C program's function) */
	mp_capture_set_frame_ops(cap, o->torch_all_frames, o->torch_user_code);
	if (mp_functions_label_stacks(cap, o->torch_all_frames, o->torch_user_code))
		fprintf(stderr, "memprof: out of memory: allocations without an op keep '-'\n");
}

/* An xplane input without memory events is skipped with a note (1), or is
 * an empty file, no capture at all (MP_EXIT_FORMAT, said); else 0. The
 * source is closed when it is not kept. */
static int skip_empty(cli_inputs_t *ci, int i, char *const *files, int f, int used)
{
	struct stat st;

	if (!mp_xplane_is_source(ci->sources[i]) || mp_xplane_memory_event_count(ci->sources[i]) != 0)
		return 0;
	mp_source_close(ci->sources[i]);
	ci->sources[i] = NULL;
	for (int k = f; k < f + used; k++)
		if (stat(files[k], &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
			/* an empty XSpace to the reader, but no capture: a profile
			 * that was never written (or cut before its first byte) */
			mp_cli_error("'%s': the file is empty (0 bytes): not a capture", files[k]);
			return MP_EXIT_FORMAT;
		}
	fprintf(stderr, "memprof: '%s': no memory events in this capture (TensorFlow records them "
			"for GPU allocators with host_trace_level >= 2)\n", files[f]);
	return 1;
}

/* --by-function: input i's table (o->functions 1: required). An exit code. */
static int open_functions(cli_inputs_t *ci, int i, const char *path, const cli_inputs_options_t *o,
			  const mp_solver_seed_t *seed, mp_diag_t *diag)
{
	/* a PyTorch snapshot's op is already the allocating frame; a
	 * capture's is found by the same rule and options */
	mp_functions_options_t fopt = {o->torch_all_frames, o->torch_user_code, seed};
	int err = mp_torch_is_source(ci->sources[i])
			  ? mp_functions_compute_ops(&ci->functions[i], ci->sources[i], ci->solvers[i], diag)
			  : mp_functions_compute_opts(&ci->functions[i], ci->sources[i], ci->solvers[i], &fopt, diag);

	if (err == MP_ENODATA && o->functions == 1) {
		mp_cli_error("'%s': the capture has no call stacks (record it with 'memprof record --stacks')", path);
		return MP_EXIT_USAGE;
	}
	if (err < 0 && err != MP_ENODATA) {
		if (!diag->file[0])
			mp_diag_set_file(diag, path);
		return mp_cli_diag(diag);
	}
	return MP_EXIT_OK;
}

/* Input i through the solver, its --device resolved, its functions and
 * call tree computed as asked. An exit code. */
static int analyse_seeded(cli_inputs_t *ci, int i, const char *path, const cli_inputs_options_t *o,
			  mp_checkpoint_seed_t *seed, mp_diag_t *diag)
{
	mp_source_t *sought;
	uint64_t start;
	int err;

	/* a window (report_window.h): a kept run's, --from-event's */
	if (o->window && (o->from_set ? mp_capture_from_source(ci->sources[i]) != NULL : 1) &&
	    (err = cli_window_solve(path, o, &sought, &ci->solvers[i], &start, seed, diag)) != 0) {
		if (err < 0)
			return cli_input_fail(diag, path, err);
		mp_source_close(ci->sources[i]);
		ci->sources[i] = sought;
		ci->in[i].window_set = 1;
		ci->in[i].window_from = start;
	} else if (o->window && o->from_set && !mp_capture_from_source(ci->sources[i])) {
		mp_cli_error("'%s': --from-event applies to captures (.memprof)", path);
		return MP_EXIT_USAGE;
	} else /* a long capture from its checkpoint before the moment the report
	 * needs (report_seek.c), else every event */
	if (o->seek && mp_capture_from_source(ci->sources[i]) &&
	    (err = cli_seek_solve(path, o->solver, o->seek, &sought, &ci->solvers[i], diag)) != 0) {
		if (err < 0)
			return cli_input_fail(diag, path, err);
		mp_source_close(ci->sources[i]);
		ci->sources[i] = sought;
		ci->sought[i] = 1;
	} else if (o->par && mp_capture_from_source(ci->sources[i]) &&
		   (err = cli_par_solve(path, o->solver, &sought, &ci->solvers[i], diag)) != 0) {
		/* every event, on every core (replay_par.c) */
		if (err < 0)
			return cli_input_fail(diag, path, err);
		mp_source_close(ci->sources[i]);
		ci->sources[i] = sought;
	} else if (!(ci->solvers[i] = mp_solver_new(o->solver))) {
		mp_cli_error("out of memory");
		return MP_EXIT_FAILURE;
	} else if ((err = mp_solver_run(ci->solvers[i], ci->sources[i], diag)) < 0) {
		int rc = cli_input_fail(diag, path, err);
		return rc == MP_EXIT_USAGE ? MP_EXIT_FORMAT : rc; /* a solver limit is a property of the input */
	}
	ci->in[i].path = path;
	ci->in[i].solver = ci->solvers[i];
	ci->in[i].source = ci->sources[i];
	if (o->device) {
		if (resolve_device(ci->solvers[i], ci->sources[i], o->device, &ci->in[i].device) < 0) {
			char list[512];
			list_devices(ci->solvers[i], ci->sources[i], list, sizeof(list));
			mp_cli_error("'%s': unknown device '%s' (memory ids: %s)", path, o->device, list);
			return MP_EXIT_USAGE;
		}
		ci->in[i].device_set = 1;
	}
	if (o->functions && (err = open_functions(ci, i, path, o, ci->in[i].window_set ? &seed->seed : NULL, diag)) !=
				    MP_EXIT_OK)
		return err;
	if (o->tree && (err = open_tree(ci, i, path, o, ci->in[i].window_set ? &seed->seed : NULL, diag)) != MP_EXIT_OK)
		return err;
	return MP_EXIT_OK;
}

static int analyse(cli_inputs_t *ci, int i, const char *path, const cli_inputs_options_t *o, mp_diag_t *diag)
{
	mp_checkpoint_seed_t seed; /* a window's state at its start: its functions' and tree's too */
	int rc;

	memset(&seed, 0, sizeof(seed));
	rc = analyse_seeded(ci, i, path, o, &seed, diag);
	mp_checkpoint_seed_free(&seed);
	return rc;
}

int cli_inputs_init(cli_inputs_t *ci, int nfiles)
{
	memset(ci, 0, sizeof(*ci));
	ci->in = calloc((size_t)nfiles, sizeof(*ci->in));
	ci->solvers = calloc((size_t)nfiles, sizeof(*ci->solvers));
	ci->sources = calloc((size_t)nfiles, sizeof(*ci->sources));
	ci->paths = calloc((size_t)nfiles, sizeof(*ci->paths));
	ci->titles = calloc((size_t)nfiles, sizeof(*ci->titles));
	ci->functions = calloc((size_t)nfiles, sizeof(*ci->functions));
	ci->trees = calloc((size_t)nfiles, sizeof(*ci->trees));
	ci->sought = calloc((size_t)nfiles, sizeof(*ci->sought));
	if (!ci->in || !ci->solvers || !ci->sources || !ci->paths || !ci->titles || !ci->functions || !ci->trees ||
	    !ci->sought) {
		mp_cli_error("out of memory");
		return MP_EXIT_FAILURE;
	}
	ci->cap = nfiles;
	return MP_EXIT_OK;
}

int cli_inputs_next(cli_inputs_t *ci, char *const *files, int nfiles, int *f, const cli_inputs_options_t *o)
{
	const char *path = files[*f];
	mp_diag_t diag;
	int err, i = ci->n, used = 1;

	mp_diag_clear(&diag);
	err = open_source(ci, i, files, *f, nfiles, o, &used, &diag);
	*f += used;
	if (err >= 0 && (err = skip_empty(ci, i, files, *f - used, used)) != 0)
		return err == 1 ? MP_EXIT_OK : err;
	ci->n++;
	if (err >= 0 && used > 1)
		path = ci->sources[i]->path; /* "host1.xplane.pb, host2.xplane.pb" */
	ci->paths[i] = path;
	if (err < 0)
		return cli_input_fail(&diag, path, err);
	if (o->solver && (err = analyse(ci, i, path, o, &diag)) != MP_EXIT_OK)
		return err;
	return MP_EXIT_OK;
}

int cli_inputs_open(cli_inputs_t *ci, char *const *files, int nfiles, const cli_inputs_options_t *o)
{
	int rc = cli_inputs_init(ci, nfiles);

	for (int f = 0; rc == MP_EXIT_OK && f < nfiles;)
		rc = cli_inputs_next(ci, files, nfiles, &f, o);
	return rc;
}

void cli_inputs_release(cli_inputs_t *ci, int i)
{
	mp_functions_free(ci->functions[i]);
	mp_calltree_free(ci->trees[i]);
	mp_solver_free(ci->solvers[i]);
	mp_source_close(ci->sources[i]);
	ci->functions[i] = NULL;
	ci->trees[i] = NULL;
	ci->solvers[i] = NULL;
	ci->sources[i] = NULL;
	ci->sought[i] = 0;
	ci->in[i].solver = NULL;
	ci->in[i].source = NULL;
}

void cli_inputs_close(cli_inputs_t *ci)
{
	for (int i = 0; i < ci->cap; i++) {
		mp_functions_free(ci->functions[i]);
		if (ci->trees)
			mp_calltree_free(ci->trees[i]);
		mp_solver_free(ci->solvers[i]);
		mp_source_close(ci->sources[i]);
	}
	free(ci->in);
	free(ci->solvers);
	free(ci->sources);
	free(ci->paths);
	free(ci->titles);
	free(ci->functions);
	free(ci->trees);
	free(ci->sought);
	memset(ci, 0, sizeof(*ci));
}
