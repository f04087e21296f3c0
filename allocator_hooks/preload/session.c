/* session.c - the recording session of one process: when the capture is
 * opened (constructor, capture window, forked child), where it goes, and
 * how it is closed (exit, exec, _exit, abort).
 *
 * Naming: `memprof record` sets MEMPROF_OUTPUT to the capture of the
 * program it starts and MEMPROF_OUTPUT_PID to that program's pid. Any
 * other process that inherits the environment -- a forked child, a program
 * exec'd by a child, the same process after a failed exec -- derives its
 * own name from it: "<base>.<pid>.memprof" (then "<base>.<pid>-<n>.memprof"
 * if that exists), where <base> is MEMPROF_OUTPUT without ".memprof".
 * Captures are created with O_EXCL: an existing file is never overwritten,
 * and no two processes ever share a file.
 *
 * In a run directory (MEMPROF_RUN=DIR, what `memprof record` sets), every
 * process of the run, CMD's included, names its capture the same way:
 * "DIR/<pid>.memprof", then "DIR/<pid>-<n>.memprof" after its n-th exec.
 * The directory is the run (docs/format.md, "Runs"); each process writes
 * only its own file, so a process killed mid-run damages nothing but the
 * end of its own capture.
 */
#include "preload.h"
#include "../annotate/backend.h"
#include "gpu_lane.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

_Atomic int mp__state = MP_ST_UNINIT;
mp_writer_t *mp__writer;
uint32_t mp__host;
int mp__regions_on;

static struct {
	int resolved;
	int fork_traced;     /* MEMPROF_FORK != off and MEMPROF_CHILDREN != 0 */
	int children_traced; /* MEMPROF_CHILDREN != 0: exec'd programs inherit the preload */
	int regions;         /* MEMPROF_REGIONS != 0 */
	uint64_t start_ns;   /* capture window start (MEMPROF_DELAY_MS) */
	mp_writer_options_t opts;
	pid_t owner;         /* the process that opened mp__writer */
	char base[4096];     /* name base for derived captures */
	const char *sep;     /* between base and pid: "." or, in a run directory, "" */
	int in_run;          /* MEMPROF_RUN names a run directory */
	char ends[4096 + 16]; /* in a run directory: its MP_RUN_ENDS file (reap.c); else "" */
	char path[4096];     /* the capture being written */
} S;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return dflt;
	return x;
}

static int env_off(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no"));
}

/* "memprof: error: <what> '<path>': <why>", straight to fd 2 (no stdio
 * buffers inside the hooks). */
static void warn(const char *what, const char *path, const char *why)
{
	/* pieces, not a formatted line: no buffer on a stack that may be
	 * PTHREAD_STACK_MIN */
	struct iovec v[8] = {
		{(void *)(uintptr_t) "memprof: error: ", 16}, {(void *)(uintptr_t)what, strlen(what)},
		{(void *)(uintptr_t) " '", 2},               {(void *)(uintptr_t)path, strlen(path)},
		{(void *)(uintptr_t) "'", 1},                {(void *)(uintptr_t) ": ", why && *why ? 2 : 0},
		{(void *)(uintptr_t)(why ? why : ""), why ? strlen(why) : 0},
		{(void *)(uintptr_t) "\n", 1},
	};

	(void)!writev(2, v, 8); /* one write: the line is not split by others' output */
}

size_t mp__preload_others(const char *list, char *out, size_t n)
{
	size_t o = 0;

	while (*list) { /* the items, split on ':' and ' ' as the loader does */
		size_t k = strcspn(list, ": ");
		if (k && !memmem(list, k, PRELOAD_NAME, sizeof(PRELOAD_NAME) - 1) && o + k + 2 <= n) {
			if (o)
				out[o++] = ':';
			memcpy(out + o, list, k);
			o += k;
		}
		list += k;
		list += strspn(list, ": ");
	}
	if (n)
		out[o] = '\0';
	return o;
}

/* Remove our library from LD_PRELOAD so exec'd programs run untraced. */
static void strip_preload(void)
{
	const char *v = getenv("LD_PRELOAD");
	char out[4096];

	if (!v)
		return;
	if (mp__preload_others(v, out, sizeof(out)))
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* Open a capture: the given path when pid_match, else a derived name. */
static int open_writer(int try_given)
{
	mp_diag_t diag;
	const char *given = getenv("MEMPROF_OUTPUT");
	int n, rc;

	mp__writer = NULL;
	if (try_given && given && *given && !S.in_run) { /* a run directory names every capture alike */
		snprintf(S.path, sizeof(S.path), "%s", given);
		rc = mp_writer_open(&mp__writer, S.path, 0, &S.opts, &diag);
		if (rc == 0)
			goto opened;
		if (rc != -EEXIST) {
			warn("cannot record into", S.path, diag.text);
			return -1;
		}
	}
	for (n = 0; n < 1000; n++) {
		if (n == 0)
			snprintf(S.path, sizeof(S.path), "%s%s%ld.memprof", S.base, S.sep, (long)getpid());
		else
			snprintf(S.path, sizeof(S.path), "%s%s%ld-%d.memprof", S.base, S.sep, (long)getpid(), n);
		rc = mp_writer_open(&mp__writer, S.path, 0, &S.opts, &diag);
		if (rc == 0)
			goto opened;
		if (rc != -EEXIST) {
			warn("cannot record into", S.path, diag.text);
			return -1;
		}
	}
	warn("no free capture name for", S.base, NULL);
	return -1;
opened:
	S.owner = getpid();
	mp__mmap_reset();
	rc = mp_writer_memory(mp__writer, "host", MP_MEMORY_HOST, 0);
	mp__host = rc < 0 ? 0 : (uint32_t)rc;
	if (S.regions && mp__real_is_glibc)
		mp__regions_start(mp__writer, mp__host);
	mp__pymem_start(mp__writer);
	mp__stacks_start(mp__writer);
	return 0;
}

static void in_child(void)
{
	/* The writer's flusher did not survive fork and its file belongs to the
	 * parent: abandon it (never close it here) and start afresh. */
	int st = atomic_load(&mp__state);

	mp__writer = NULL;
	/* Only the forking thread lives on: a lock that another thread held
	 * at fork stays held, so each of the preload's locks is released. What
	 * they guard may have been left half changed; it is rebuilt when the
	 * child opens its own capture (mp__mmap_reset, mp__regions_start) and
	 * unused if it never does. */
	mp__regions_reset_child();
	mp__mmap_reset_child();
	mp__pymem_reset_child();
	mp__quiesce_reset_child();
	mp__py_reset_child();
	if (st == MP_ST_OFF || st == MP_ST_UNINIT || !S.fork_traced)
		atomic_store(&mp__state, MP_ST_OFF);
	else if (st == MP_ST_WAIT)
		atomic_store(&mp__state, MP_ST_WAIT);
	else
		atomic_store(&mp__state, MP_ST_FORKED);
}

static void derive_base(void)
{
	const char *given = getenv("MEMPROF_OUTPUT"), *run = getenv("MEMPROF_RUN");
	size_t n;

	S.sep = ".";
	if (run && *run) {
		n = strlen(run);
		while (n > 1 && run[n - 1] == '/')
			n--;
		snprintf(S.base, sizeof(S.base), "%.*s/", (int)n, run);
		S.sep = "";
		S.in_run = 1;
		snprintf(S.ends, sizeof(S.ends), "%s%s", S.base, MP_RUN_ENDS);
	} else if (given && *given) {
		snprintf(S.base, sizeof(S.base), "%s", given);
		n = strlen(S.base);
		if (n > 8 && !strcmp(S.base + n - 8, ".memprof"))
			S.base[n - 8] = '\0';
	} else {
		snprintf(S.base, sizeof(S.base), "memprof.%s", program_invocation_short_name);
	}
}

/* Start the session: from the first hooked call (as heaptrack does, so
 * allocations made by other libraries' constructors are seen too) or from
 * our constructor, whichever comes first. Guard held by the caller. */
static void session_fini(void);

/* The capture window's end (MEMPROF_DURATION_MS after the capture opened),
 * on the writer's flusher: from here on the hooks forward without
 * recording (the flusher writes what they recorded up to here); the
 * capture is closed at exit. A timer, so that no hook reads a clock. */
static void window_over(void *arg)
{
	int expect = MP_ST_ACTIVE;

	(void)arg;
	atomic_compare_exchange_strong(&mp__state, &expect, MP_ST_OFF);
}

static void session_start(void)
{
	const char *pidv, *help;
	uint64_t delay, duration;
	int given, expect = MP_ST_UNINIT;

	if (!atomic_compare_exchange_strong(&mp__state, &expect, MP_ST_BUSY))
		return;
	if (!S.resolved) {
		S.resolved = 1;
		if (mp__real_resolve() != 0) {
			atomic_store(&mp__state, MP_ST_OFF);
			return;
		}
		mp__cxx_resolve();
	}
	pidv = getenv("MEMPROF_OUTPUT_PID");
	if (getauxval(AT_SECURE) || env_off("MEMPROF_ENABLE")) {
		/* setuid/setgid programs are never traced. */
		atomic_store(&mp__state, MP_ST_OFF);
		return;
	}
	S.children_traced = !env_off("MEMPROF_CHILDREN");
	S.fork_traced = S.children_traced && !env_off("MEMPROF_FORK");
	S.regions = !env_off("MEMPROF_REGIONS");
	mp__mmap_on = !env_off("MEMPROF_MMAP");
	mp__stacks_configure();
	mp__pymem_install(); /* before any capture opens: it declares "pymalloc" */
	if (!S.children_traced)
		strip_preload();
	S.opts.flush_interval_ms = (uint32_t)env_u64("MEMPROF_FLUSH_MS", 0);
	S.opts.ring_bytes = (uint32_t)env_u64("MEMPROF_RING_KB", 0) * 1024u;
	S.opts.full_policy = env_u64("MEMPROF_DROP", 0) ? MP_WRITER_DROP : MP_WRITER_WAIT;
	S.opts.shed = env_u64("MEMPROF_SHED", 0) != 0;
	/* the program's threads run the flush rounds while every CPU is busy
	 * (docs/hooks.md, "Cost"); MEMPROF_HELP=0: the flusher always */
	help = getenv("MEMPROF_HELP");
	S.opts.help = help && !strcmp(help, "always") ? MP_WRITER_HELP_ALWAYS /* (tests) */
		      : env_off("MEMPROF_HELP")        ? MP_WRITER_HELP_OFF
							 : MP_WRITER_HELP_AUTO;
	S.opts.on_orphaned = mp__end_orphaned_process;
	/* the window's end: the writer's flusher tells window_over */
	duration = env_u64("MEMPROF_DURATION_MS", 0);
	S.opts.stop_after_ms = duration > UINT32_MAX ? UINT32_MAX : (uint32_t)duration;
	S.opts.on_stop = window_over;
	delay = env_u64("MEMPROF_DELAY_MS", 0) * 1000000u;
	derive_base();
	pthread_atfork(NULL, NULL, in_child);
	/* quick_exit() runs neither atexit handlers nor destructors, and ends
	 * in glibc's internal _exit (not our hook): session_fini, the
	 * destructor that closes the capture at exit(), is registered for it
	 * too, before any of the program's handlers, so it runs after them. */
	at_quick_exit(session_fini);
	given = !pidv || (pid_t)strtol(pidv, NULL, 10) == getpid();
	if (delay) {
		S.start_ns = now_ns() + delay;
		atomic_store(&mp__state, MP_ST_WAIT);
		return;
	}
	if (open_writer(given) == 0)
		atomic_store(&mp__state, MP_ST_ACTIVE);
	else
		atomic_store(&mp__state, MP_ST_OFF);
}

static void __attribute__((constructor)) session_init(void)
{
	if (atomic_load(&mp__state) != MP_ST_UNINIT)
		return;
	mp__guard = 1;
	session_start();
	mp__guard = 0;
}

/* The capture window opens, or a forked child records its first event. */
static int open_pending(int st)
{
	const char *pidv = getenv("MEMPROF_OUTPUT_PID");
	int given = st == MP_ST_WAIT && (!pidv || (pid_t)strtol(pidv, NULL, 10) == getpid());

	if (!atomic_compare_exchange_strong(&mp__state, &st, MP_ST_BUSY))
		return 0;
	if (open_writer(given) == 0) {
		atomic_store(&mp__state, MP_ST_ACTIVE);
		return 1;
	}
	atomic_store(&mp__state, MP_ST_OFF);
	return 0;
}

/* CLOCK_MONOTONIC_COARSE: a read of the vDSO's page, where the precise
 * clock costs a TSC read and its scaling; the window opens at most a
 * clock tick (1 to 4 ms) late. */
int mp__session_waiting(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec < S.start_ns;
}

int mp__session_slow(void)
{
	int st = atomic_load_explicit(&mp__state, memory_order_acquire);

	switch (st) {
	case MP_ST_ACTIVE:
		return 1;
	case MP_ST_WAIT:
		if (mp__session_waiting())
			return 0;
		return open_pending(st);
	case MP_ST_FORKED:
		return open_pending(st);
	case MP_ST_UNINIT:
		/* The first hooked call of the process (the resolution of the
		 * originals it starts with is served by the bootstrap arena). */
		session_start();
		return atomic_load_explicit(&mp__state, memory_order_acquire) == MP_ST_ACTIVE;
	default:
		return 0;
	}
}

int mp__session_owned(void)
{
	return mp__writer && S.owner == getpid();
}

void mp__session_close(void)
{
	int st = atomic_exchange(&mp__state, MP_ST_BUSY);
	mp_writer_t *w = mp__writer;
	int rc;

	if (st == MP_ST_BUSY) { /* someone else is closing */
		atomic_store(&mp__state, MP_ST_BUSY);
		return;
	}
	mp__writer = NULL;
	mp__regions_on = 0;
	if (w && (st == MP_ST_ACTIVE || st == MP_ST_OFF)) {
		/* Other threads may still be inside a hook (exit() does not stop
		 * them). From now on they forward without recording; wait for those
		 * already inside to finish their record before the final flush. */
		if (mp__quiesce(2000))
			warn("a thread stayed inside the allocator for 2 s; closing anyway:", S.path, NULL);
		rc = mp_writer_close(w);
		if (rc)
			warn("could not complete the capture", S.path, mp_strerror(rc));
	}
	atomic_store(&mp__state, MP_ST_OFF);
}

void mp__session_reopen(void)
{
	int expect = MP_ST_OFF;

	if (!atomic_compare_exchange_strong(&mp__state, &expect, MP_ST_BUSY))
		return;
	atomic_store(&mp__state, open_writer(0) == 0 ? MP_ST_ACTIVE : MP_ST_OFF);
}

int mp__children_traced(void)
{
	return S.children_traced;
}

const char *mp__session_ends(void)
{
	return S.ends[0] ? S.ends : NULL;
}

static void __attribute__((destructor)) session_fini(void)
{
	mp__guard = 1;
	if (mp__session_owned() || !mp__writer)
		mp__session_close(); /* not in a vfork child that called exit() */
	/* Stay guarded: whatever this thread frees from here on is not ours. */
}

/* --- the annotation API's backend --------------------------------------- */

mp_annotate_target_t mp__annotate_target(void)
{
	mp_annotate_target_t t = {NULL, NULL};
	int st = atomic_load_explicit(&mp__state, memory_order_acquire);

	if (mp__guard)
		return t; /* a signal handler interrupted a hook: not re-entrant */
	if (st == MP_ST_FORKED) {
		mp__guard = 1;
		if (mp__session_slow())
			t.writer = mp__writer;
		mp__guard = 0;
		return t;
	}
	if (st == MP_ST_ACTIVE)
		t.writer = mp__writer;
	return t;
}

/* A statically linked libmemprof finds this and forwards every call here. */
MP_EXPORT const memprof_api_table_t memprof_api_table_v1 = {
	.version = 2,
	.enabled = memprof_enabled,
	.memory_declare = memprof_memory_declare,
	.region_add = memprof_region_add,
	.region_remove = memprof_region_remove,
	.alloc = memprof_alloc,
	.free = memprof_free,
	.alloc_failed = memprof_alloc_failed,
	.step = memprof_step,
	.mark = memprof_mark,
	.push = memprof_push,
	.pop = memprof_pop,
	.flush = memprof_flush,
	.lane_open = mp__gpu_lane_open,
	.lane_event = mp__gpu_lane_event,
	.lane_hold = mp__gpu_lane_hold,
	.lane_dropped = mp__gpu_lane_dropped,
	.origin_ns = mp__gpu_origin_ns,
};
