/* cmd_record.c - `memprof record [-o RUN] [options] -- CMD ARGS...`: run an
 * unmodified program with the preload library (allocator_hooks/preload/)
 * and write a capture of every host allocation it makes -- one per traced
 * process, all in one run directory that every command reads as one
 * capture (memprof/run.h).
 *
 * The program's own exit status is returned (128 + signal when it was
 * killed), so `memprof record` can wrap any command in a script. Where the
 * capture went and a one-line summary are printed on stderr after CMD ends.
 * The environment knobs the preload reads are documented in docs/hooks.md.
 */
#include "cli.h"
#include "record.h"
#include "options.h"
#include "runs.h"

#include <memprof/report_doc.h>
#include <memprof/run.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: memprof record [-o RUN] [--no-children] [--no-fork] [--main-only]\n"
		"                      [--delay MS] [--duration MS] [--flush MS] [--stacks] [--gpu]\n"
		"                      [--keep SIZE|DURATION] [--no-python-objects]\n"
		"                      -- CMD ARGS...\n"
		"\n"
		"Run CMD with the allocation hooks and capture every host allocation it makes\n"
		"(malloc, calloc, realloc, free, the aligned variants, C++ new/delete), next to\n"
		"whatever it reports through <memprof/annotate.h>, in every process it runs\n"
		"or starts. Returns CMD's exit status.\n"
		"\n"
		"  -o, --output RUN    the run to write (default: memprof.<program>.<pid>.memprof):\n"
		"                      a directory with one capture per process, which report,\n"
		"                      plot, dump and convert read as one; never overwritten: an\n"
		"                      existing RUN is an error, except a plain directory, which\n"
		"                      gets the default name in it\n"
		"      --no-children   do not trace programs CMD runs (exec) nor forked children\n"
		"      --no-fork       do not trace forked children (exec'd programs still are)\n"
		"      --main-only     keep only the program CMD's process ran last (the end of a\n"
		"                      shim's or wrapper's exec chain) and what it started\n"
		"      --delay MS      start capturing MS milliseconds after CMD starts\n"
		"      --duration MS   stop capturing after MS milliseconds\n"
		"      --flush MS      write a block at least every MS ms (default 100)\n"
		"      --stacks        record a call stack per allocation (MEMPROF_STACKS=1; at most\n"
		"                      64 frames; report groups by allocating function)\n"
		"      --gpu           also record CUDA device, pinned and managed memory through\n"
		"                      CUPTI (docs/gpu.md)\n"
		"      --no-python-objects\n"
		"                      a Python's small objects are not recorded one by one: its\n"
		"                      allocator's 1 MiB arenas are (host_mmap, with --stacks each\n"
		"                      charged to the line that needed it), as memray does by\n"
		"                      default; faster (a dict/json loop: 0.84x of plain against\n"
		"                      0.59x), no per-object figures (MEMPROF_PYMALLOC=0)\n"
		"      --keep SIZE|DURATION\n"
		"                      a flight recorder: keep only the newest events, within SIZE\n"
		"                      of disk (64MiB, 1GiB: units B KiB MiB GiB TiB) or DURATION\n"
		"                      (90s, 10m, 2h, 1d), plus one segment (SIZE/8, at least\n"
		"                      2 MiB), and every round's figures of the whole run; each\n"
		"                      process's capture P is then the whole run's figures and its\n"
		"                      events are in P.d/ (docs/format.md, \"Segments and the\n"
		"                      ring\"); may be given twice, a size and a duration\n"
		"\n"
		"The main process -- the one with the largest peak -- is what commands analyse\n"
		"by default ('report --pid N' and '--process all' for the others).\n"
		"Environment knobs (MEMPROF_*) are described in docs/hooks.md.\n");
}

/* --- running the program ------------------------------------------------ */

typedef struct {
	const char *output;
	int no_children, no_fork, stacks, main_only, no_pyobjects;
	const char *delay, *duration, *flush;
	char keep_bytes[24], keep_ns[24]; /* --keep, as MEMPROF_KEEP_BYTES / _NS ("": none) */
	int output_is_dir; /* -o names a directory: the default name goes in it */
	int no_preload;    /* CMD has another C library's loader: not given the preload */
	const char *gpu_lib; /* --gpu: CUDA_INJECTION64_PATH (record_gpu.c) */
	int gpu;
} rec_opts_t;

/* How long the summary waits, after CMD ended, for the processes it left
 * running: their captures are complete once they end. */
#define ORPHAN_GRACE_MS 1000

/* CMD's pid while it runs, for forward_signal. */
static volatile sig_atomic_t cmd_pid;

/* SIGTERM and SIGHUP sent to memprof record (kill, a supervisor, a script's
 * kill $!) are passed on to CMD, as perf record does, and we stay to
 * report: otherwise CMD would run on, orphaned, while we died without a
 * word. A hangup from the terminal (si_code SI_KERNEL) reached CMD's
 * process group, ours, already. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	int e = errno;

	(void)uc;
	if (cmd_pid > 0 && !(si && si->si_code == SI_KERNEL))
		kill((pid_t)cmd_pid, sig);
	errno = e;
}

/* In the child: pick the run's name (never an existing one), create it,
 * tell the parent through fd, set the environment, exec. */
static void child(const rec_opts_t *o, const char *preload, char **cmd, int fd)
{
	char path[PATH_MAX], pre[PATH_MAX * 2];
	const char *old = getenv("LD_PRELOAD");
	const char *prog = strrchr(cmd[0], '/') ? strrchr(cmd[0], '/') + 1 : cmd[0];
	int n;

	if (o->output && !o->output_is_dir) {
		snprintf(path, sizeof(path), "%s", o->output);
	} else {
		/* DIR/ with its trailing slashes dropped: "DIR/name", "./name" */
		const char *dir = o->output ? o->output : ".", *sep;
		int dl = (int)strlen(dir);
		while (dl > 1 && dir[dl - 1] == '/')
			dl--;
		sep = dir[dl - 1] == '/' ? "" : "/"; /* "/" itself */
		snprintf(path, sizeof(path), "%.*s%smemprof.%s.%ld.memprof", dl, dir, sep, prog, (long)getpid());
		for (n = 1; access(path, F_OK) == 0 && n < 1000; n++)
			snprintf(path, sizeof(path), "%.*s%smemprof.%s.%ld-%d.memprof", dl, dir, sep, prog, (long)getpid(),
				 n);
	}
	/* Absolute, so that children that chdir still name theirs next to it. */
	if (path[0] != '/') {
		char cwd[PATH_MAX], abs[PATH_MAX * 2 + 2];
		size_t len;
		const char *rel = path;
		while (rel[0] == '.' && rel[1] == '/') /* "./name": no "/./" in the name printed */
			rel += 2;
		if (getcwd(cwd, sizeof(cwd))) {
			snprintf(abs, sizeof(abs), "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", rel);
			len = strlen(abs);
			if (len < sizeof(path))
				memcpy(path, abs, len + 1);
		}
	}
	/* The run directory, with its marker (the name was checked free; a
	 * run started since in the same place makes this fail, never mix). */
	n = mp_cli_run_create(path, cmd, (long)getpid());
	if (n < 0) {
		fprintf(stderr, "memprof: error: cannot create the run directory '%s': %s\n", path, strerror(-n));
		_exit(126);
	}
	(void)!write(fd, path, strlen(path) + 1);
	if (old && *old)
		snprintf(pre, sizeof(pre), "%s:%s", preload, old);
	else
		snprintf(pre, sizeof(pre), "%s", preload);
	if (!o->no_preload) /* else another C library's program: runs untraced (record_why.c) */
		setenv("LD_PRELOAD", pre, 1);
	setenv("MEMPROF_RUN", path, 1);
	unsetenv("MEMPROF_OUTPUT"); /* (libmemprof.so in CMD forwards to the preload) */
	unsetenv("MEMPROF_OUTPUT_PID");
	unsetenv("MEMPROF_OVERWRITE");
	if (o->no_children)
		setenv("MEMPROF_CHILDREN", "0", 1);
	if (o->no_fork)
		setenv("MEMPROF_FORK", "0", 1);
	if (o->delay)
		setenv("MEMPROF_DELAY_MS", o->delay, 1);
	if (o->duration)
		setenv("MEMPROF_DURATION_MS", o->duration, 1);
	if (o->flush)
		setenv("MEMPROF_FLUSH_MS", o->flush, 1);
	if (o->keep_bytes[0])
		setenv("MEMPROF_KEEP_BYTES", o->keep_bytes, 1);
	if (o->keep_ns[0])
		setenv("MEMPROF_KEEP_NS", o->keep_ns, 1);
	if (o->stacks) {
		const char *sv = getenv("MEMPROF_STACKS"); /* an explicit MEMPROF_STACKS=fp keeps its unwinder */
		if (!sv || !*sv || !strcmp(sv, "0") || !strcmp(sv, "off") || !strcmp(sv, "no"))
			setenv("MEMPROF_STACKS", "1", 1);
	}
	if (o->no_pyobjects)
		setenv("MEMPROF_PYMALLOC", "0", 1);
	if (o->gpu_lib)
		setenv("CUDA_INJECTION64_PATH", o->gpu_lib, 1);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	execvp(cmd[0], cmd);
	n = errno;
	if (n == ENOENT && !strchr(cmd[0], '/')) {
		/* as a shell says it; and the likely slip: the program is right here */
		char hint[PATH_MAX + 64] = "";
		if (access(cmd[0], F_OK) == 0)
			snprintf(hint, sizeof(hint), " (for the one in this directory: './%s')", cmd[0]);
		fprintf(stderr, "memprof: error: cannot run '%s': command not found in PATH%s\n", cmd[0], hint);
	} else
		fprintf(stderr, "memprof: error: cannot run '%s': %s\n", cmd[0], strerror(n));
	_exit(n == ENOENT ? 127 : 126);
}

static int check_ms(const char *what, const char *v)
{
	char *end;

	errno = 0;
	(void)strtoull(v, &end, 10);
	if (errno || *end || !*v || *v == '-') {
		mp_cli_error("%s expects milliseconds, got '%s'", what, v);
		return -1;
	}
	return 0;
}

/* -o: a run that exists is never reused; a directory gets the default
 * name in it. Then: can a capture be created where it goes (the directory
 * -o names, the one its file is in, or this one)? An exit code. */
static int check_output(rec_opts_t *o)
{
	char dirbuf[PATH_MAX];
	const char *where;

	if (o->output) {
		struct stat sb;
		size_t ol = strlen(o->output);
		if (mp_run_is_run(o->output)) {
			mp_cli_error("'%s' is a run already; remove it or choose another name with -o", o->output);
			return MP_EXIT_IO;
		} else if (stat(o->output, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			o->output_is_dir = 1;
		} else if (ol && o->output[ol - 1] == '/') {
			mp_cli_error("'%s' is not a directory", o->output);
			return MP_EXIT_IO;
		} else if (access(o->output, F_OK) == 0) {
			mp_cli_error("'%s' exists; remove it or choose another name with -o", o->output);
			return MP_EXIT_IO;
		}
	}
	/* fail before running CMD when the capture could not be created */
	snprintf(dirbuf, sizeof(dirbuf), "%s", o->output ? o->output : "./x");
	where = o->output_is_dir ? dirbuf : dirname(dirbuf);
	if (access(where, W_OK) != 0) {
		mp_cli_error("cannot write a capture in '%s': %s", where, strerror(errno));
		return MP_EXIT_IO;
	}
	return MP_EXIT_OK;
}

enum { O_DELAY = 256, O_DURATION, O_FLUSH, O_KEEP };

/* The least --keep SIZE: one segment (the writer's MP_KEEP_SEGMENT_MIN,
 * wkeep.c), and the least DURATION (a segment of it is an eighth: about a
 * flush round at 1 s). */
#define KEEP_MIN_BYTES (2ull << 20)
#define KEEP_MIN_NS 1000000000ull

/* --keep SIZE or DURATION: a number and a unit, into o. An exit code. */
static int keep_option(rec_opts_t *o, const char *arg)
{
	static const struct {
		const char *unit;
		uint64_t mul;
		int time;
	} units[] = {{"B", 1, 0},
		     {"KiB", 1ull << 10, 0},
		     {"MiB", 1ull << 20, 0},
		     {"GiB", 1ull << 30, 0},
		     {"TiB", 1ull << 40, 0},
		     {"s", 1000000000ull, 1},
		     {"m", 60000000000ull, 1},
		     {"h", 3600000000000ull, 1},
		     {"d", 86400000000000ull, 1}};
	char *end;
	unsigned long long v;
	size_t i;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *arg == '-')
		goto bad;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t x;
		if (strcmp(end, units[i].unit))
			continue;
		if (__builtin_mul_overflow((uint64_t)v, units[i].mul, &x))
			goto bad;
		if (units[i].time ? x < KEEP_MIN_NS : x < KEEP_MIN_BYTES) {
			mp_cli_error("--keep %s is smaller than one segment (at least %s)", arg,
				     units[i].time ? "1s" : "2MiB");
			return MP_EXIT_USAGE;
		}
		snprintf(units[i].time ? o->keep_ns : o->keep_bytes, sizeof(o->keep_ns), "%llu", (unsigned long long)x);
		return MP_EXIT_OK;
	}
bad:
	mp_cli_error("--keep expects a size (64MiB, 1GiB) or a duration (10m, 2h), got '%s'", arg);
	return MP_EXIT_USAGE;
}

/* -o, and the times in milliseconds. */
static int record_option(void *ctx, int c, const char *arg)
{
	static const char *const names[] = {"--delay", "--duration", "--flush"};
	rec_opts_t *o = ctx;
	const char **ms[] = {&o->delay, &o->duration, &o->flush};

	if (c == 'o') {
		o->output = arg;
		return MP_EXIT_OK;
	}
	if (c == O_KEEP)
		return keep_option(o, arg);
	if (check_ms(names[c - O_DELAY], arg))
		return MP_EXIT_USAGE;
	*ms[c - O_DELAY] = arg;
	return MP_EXIT_OK;
}

/* The options into o, CMD from argv[optind]: CLI_OPT_CONTINUE, or the exit
 * code to return. */
static int parse_args(rec_opts_t *o, int argc, char **argv)
{
	const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"no-children", no_argument, &o->no_children, 1},
		{"no-fork", no_argument, &o->no_fork, 1},
		{"delay", required_argument, NULL, O_DELAY},
		{"duration", required_argument, NULL, O_DURATION},
		{"flush", required_argument, NULL, O_FLUSH},
		{"keep", required_argument, NULL, O_KEEP},
		{"stacks", no_argument, &o->stacks, 1},
		{"main-only", no_argument, &o->main_only, 1},
		{"gpu", no_argument, &o->gpu, 1},
		{"no-python-objects", no_argument, &o->no_pyobjects, 1},
		{NULL, 0, NULL, 0},
	};
	/* '+': the options end at CMD, whose own options are its */
	cli_parser_t p = {.command = "record", .usage = usage, .shortopts = "+o:h", .own = opts,
			  .option = record_option, .ctx = o, .unknown_prints_usage = 1};
	int rc;

	if ((rc = cli_parse_options(&p, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (optind >= argc) {
		mp_cli_error("no command to record (usage: memprof record [options] -- CMD ARGS...)");
		return MP_EXIT_USAGE;
	}
	return (rc = check_output(o)) == MP_EXIT_OK ? CLI_OPT_CONTINUE : rc;
}

/* Run cmd under the preload and wait for it: its pid and wait status, and
 * the run directory the child named in path ("" when it made none). An
 * exit code (MP_EXIT_OK once CMD ended). */
static int run_cmd(const rec_opts_t *o, const char *preload, char **cmd, char *path, size_t size, pid_t *pid,
		   int *status)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO};
	struct sigaction old_int, old_quit, old_term, old_hup;
	int fds[2];
	size_t got = 0;
	ssize_t k;

	if (pipe2(fds, O_CLOEXEC)) {
		mp_cli_error("cannot create a pipe: %s", strerror(errno));
		return MP_EXIT_IO;
	}
	fflush(NULL);
	/* Processes CMD leaves behind (a daemon, a helper that outlives its
	 * parent: multiprocessing's resource tracker) become ours when their
	 * parent ends, so that the summary can wait a moment for them and say
	 * how they ended (mp_cli_run_reap_orphans). */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Like time(1): ^C and ^\ go to the program; we stay to report. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	*pid = fork();
	if (*pid < 0) {
		mp_cli_error("cannot fork: %s", strerror(errno));
		return MP_EXIT_IO;
	}
	if (*pid == 0) {
		close(fds[0]);
		child(o, preload, cmd, fds[1]);
	}
	cmd_pid = *pid;
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	close(fds[1]);
	while (got < size && (k = read(fds[0], path + got, size - got)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		got += (size_t)k;
	}
	close(fds[0]);
	path[got < size ? got : size - 1] = '\0';
	/* CMD, and meanwhile the orphans that became ours (reaped as they end,
	 * not left as zombies until CMD's): each one's end noted in the run,
	 * CMD's too, as a traced parent notes its children's */
	for (;;) {
		pid_t r = waitpid(-1, status, 0);
		if (r > 0 && got)
			mp_cli_run_note_end(path, (long)r, *status);
		if (r == *pid)
			break;
		if (r < 0 && errno != EINTR) {
			mp_cli_error("waitpid: %s", strerror(errno));
			return MP_EXIT_FAILURE;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	cmd_pid = 0;
	return MP_EXIT_OK;
}

/* After CMD (pid) ended with status: the run's end noted, its orphans
 * waited for, --main-only applied, and the closing lines; why CMD got no
 * capture (untraced: a reason we know, in why) said when it got none. */
static void finish_run(const rec_opts_t *o, const char *path, pid_t pid, int status, int untraced, const char *why)
{
	char outcome[96], *main = NULL;
	mp_run_t *run = NULL;
	mp_diag_t diag;
	int rc, root_traced;

	mp_cli_run_ended(path, mp_report_wait_status(status, outcome, sizeof(outcome)));
	mp_cli_run_reap_orphans(path, ORPHAN_GRACE_MS);
	rc = mp_run_open(&run, path, &diag); /* MP_ENOTFOUND: not one capture */
	root_traced = rc == 0 && mp_cli_run_root(run, (long)pid) >= 0; /* (before --main-only) */
	if (rc == 0 && o->main_only && mp_cli_run_keep_main(run, (long)pid)) {
		mp_run_close(run);
		run = NULL;
		rc = mp_run_open(&run, path, &diag);
	}
	if (!root_traced && !(WIFEXITED(status) && WEXITSTATUS(status) >= 126)) {
		const char *who = rc == 0 ? " for CMD itself" : "";
		if (untraced)
			mp_cli_warning("no capture was written%s: %s", who, why);
		else
			mp_cli_warning("no capture was written%s (see the messages above)", who);
	}
	if (rc == 0) {
		mp_cli_run_summary(run, &main);
	} else if (diag.code == MP_ENOTFOUND) { /* nothing at all: no empty run left behind */
		char marker[PATH_MAX + 32];
		snprintf(marker, sizeof(marker), "%s/%s", path, MP_RUN_MARKER);
		unlink(marker);
		rmdir(path);
	} else {
		mp_cli_diag(&diag);
	}
	mp_run_close(run);
	if (main) {
		mp_cli_record_summary(main);
		free(main);
	}
}

int cmd_record(int argc, char **argv)
{
	rec_opts_t o = {0};
	char preload[PATH_MAX], path[PATH_MAX], why[4400], gpu_lib[PATH_MAX];
	int status, untraced, rc;
	pid_t pid;

	if ((rc = parse_args(&o, argc, argv)) != CLI_OPT_CONTINUE)
		return rc;
	if (mp_cli_find_preload(preload, sizeof(preload)))
		return MP_EXIT_IO; /* beside_exe.c said which files it looked for */
	if (o.gpu && mp_cli_record_gpu_prepare(preload, gpu_lib, sizeof(gpu_lib)) == 0)
		o.gpu_lib = gpu_lib;
	/* Why CMD would get no capture, if it is a kind we know (said after
	 * it ran, when there is none): one of another C library is not even
	 * given the preload. */
	untraced = mp_cli_untraced_reason(argv[optind], why, sizeof(why));
	o.no_preload = untraced == MP_UNTRACED_FOREIGN;
	if ((rc = run_cmd(&o, preload, argv + optind, path, sizeof(path), &pid, &status)) != MP_EXIT_OK)
		return rc;
	/* (whether that lost its last events, the summary's "ended abruptly"
	 * says: abort() closes the capture first, a signal's default action
	 * does not) */
	if (WIFSIGNALED(status))
		fprintf(stderr, "memprof: CMD was killed by signal %d (%s)\n", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	if (path[0])
		finish_run(&o, path, pid, status, untraced, why);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return MP_EXIT_FAILURE;
}
