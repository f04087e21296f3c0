/* test_hooks_run.c - runs: one `memprof record` of a launch chain is one
 * run directory that report reads as one capture, with its process tree
 * and the main process (docs/format.md, "Runs").
 *
 * The figures come from victim_launch.c's annotated memory id "pool"
 * (exact, hand-computed there): worker "work K" peaks at K MiB and leaks
 * 1 MiB. The JSON is validated against docs/schema before any figure of
 * it is read. */
#include "test_common.h"

#include "hooks_run.h"
#include "json_check.h"

#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB 1048576

/* `memprof report ARGS --json RUN`, validated; owned by the caller. */
static json_t *report_json(const char *args, const char *run)
{
	char cmd[1200];
	json_error_t err;
	json_t *root;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' report %s --json '%s' 2>/dev/null", HK_MEMPROF, args, run);
	assert_non_null(p = popen(cmd, "r"));
	root = mp_test_json_loadf(p, 0, "report", &err);
	assert_int_equal(pclose(p), 0);
	if (!root)
		fail_msg("`%s` gave no JSON: %s", cmd, err.text);
	return root;
}

/* `memprof report --process all RUN` as text (the process tree first);
 * owned by the caller. */
static char *tree_text(const tmpdir_t *t, const char *run)
{
	char cmd[1400];

	snprintf(cmd, sizeof(cmd), "'%s' report --process all '%s' > '%s/tree.txt' 2>&1", HK_MEMPROF, run, t->dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/tree.txt", t->dir);
	return hk_read_text(cmd);
}

/* A shell script named name in t's directory, its body formatted from fmt
 * after "#!/bin/sh"; its path into path (n bytes). */
static void __attribute__((format(printf, 5, 6)))
write_script(const tmpdir_t *t, const char *name, char *path, size_t n, const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	snprintf(path, n, "%s/%s", t->dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\n", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

/* The device named name in one report object. */
static json_t *device(json_t *report, const char *name)
{
	size_t i;
	json_t *d;

	json_array_foreach(json_object_get(report, "devices"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "name")), name))
			return d;
	fail_msg("no device '%s' in the report", name);
	return NULL;
}

static json_int_t get_int(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* The process whose command line ends with tail in the run object. */
static json_t *process(json_t *run, const char *tail)
{
	size_t i, n = strlen(tail);
	json_t *p;

	json_array_foreach(json_object_get(run, "processes"), i, p) {
		const char *c = json_string_value(json_object_get(p, "command_line"));
		if (strlen(c) >= n && !strcmp(c + strlen(c) - n, tail))
			return p;
	}
	fail_msg("no process '...%s' in the run", tail);
	return NULL;
}

/* A wrapper script (as a pyenv shim or a conda activation is) that runs 52
 * short helper processes -- command substitutions, env, uname, subshells
 * -- then execs the program meant. One run; report analyses the program
 * (the largest peak), exactly; the tree lists every helper. */
static void test_hooks_run_wrapper(void **state)
{
	tmpdir_t *t = *state;
	char script[300], run[600];
	json_t *root, *r, *main_p, *pool;
	size_t i, helpers = 0;
	json_t *p;

	write_script(t, "wrap.sh", script, sizeof(script),
		     "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do\n"
		     "  x=$(uname); env true; (exit 0); /bin/true\n"
		     "done\n"
		     "exec %s/victim_launch work 6\n",
		     HK_VICTIM_DIR);
	assert_int_equal(hk_record(t->cap, NULL, script, NULL, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));

	root = report_json("--peak", run);
	r = json_array_get(json_object_get(root, "runs"), 0);
	assert_non_null(r);
	main_p = json_array_get(json_object_get(r, "processes"), (size_t)get_int(r, "main"));
	assert_ptr_equal(main_p, process(r, "victim_launch work 6"));
	/* the report is the program's: peak 6 MiB in its pool */
	pool = device(root, "pool");
	assert_int_equal(get_int(json_object_get(pool, "peak"), "bytes"), 6 * MIB);
	assert_string_equal(json_string_value(json_object_get(root, "file")),
			    json_string_value(json_object_get(main_p, "capture")));
	/* it is the script's own process, after its exec */
	assert_int_equal(get_int(main_p, "pid"), hk_run_root_pid(t->cap));
	assert_true(get_int(main_p, "exec_index") >= 1);
	/* every helper is in the tree: 13 x (uname, env -> true, a subshell,
	 * /bin/true) = 52 processes besides the script's, all helpers */
	json_array_foreach(json_object_get(r, "processes"), i, p)
		if (get_int(p, "pid") != hk_run_root_pid(t->cap)) {
			assert_true(json_is_true(json_object_get(p, "helper")));
			helpers++;
		}
	assert_true(helpers >= 52);
	json_decref(root);

	/* the leaks of the default report are the program's too: 1 MiB */
	root = report_json("--leaks", run);
	assert_int_equal(get_int(device(root, "pool"), "leak_bytes"), MIB);
	json_decref(root);
}

/* A launcher that forks and execs 4 workers (peaks 4, 8, 12, 16 MiB):
 * --process all reports each worker; the default reports the largest. */
static void test_hooks_run_workers(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"launch", "4", NULL};
	char run[600], want[64];
	json_t *root, *files, *one;
	unsigned seen = 0;
	size_t i;

	assert_int_equal(hk_record(t->cap, NULL, "victim_launch", args, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	root = report_json("", run);
	assert_int_equal(get_int(json_object_get(device(root, "pool"), "peak"), "bytes"), 16 * MIB);
	json_decref(root);

	root = report_json("--process all", run);
	files = json_object_get(root, "files");
	assert_int_equal(json_array_size(files), 4); /* the launcher is a helper: only in the tree */
	for (i = 0; i < 4; i++) {
		json_int_t peak;
		one = json_array_get(files, i);
		/* main first (16 MiB), then the tree's order (by start: the
		 * workers' order as they happened to start) */
		peak = get_int(json_object_get(device(one, "pool"), "peak"), "bytes");
		if (i == 0)
			assert_int_equal(peak, 16 * MIB);
		assert_true(peak % (4 * MIB) == 0 && peak >= 4 * MIB && peak <= 16 * MIB);
		assert_false(seen & (1u << (peak / MIB / 4)));
		seen |= 1u << (peak / MIB / 4);
		assert_int_equal(get_int(device(one, "pool"), "allocations"), peak / MIB);
	}
	assert_int_equal(seen, 0x1e); /* 4, 8, 12 and 16 MiB, each once */
	/* plot takes the run as report does: one panel set per worker */
	{
		char cmd[1400], svg[300];
		struct stat sb;
		snprintf(svg, sizeof(svg), "%s/workers.svg", t->dir);
		snprintf(cmd, sizeof(cmd), "'%s' plot --process all --device pool '%s' -o '%s' 2>/dev/null", HK_MEMPROF,
			 run, svg);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(stat(svg, &sb), 0);
		assert_true(sb.st_size > 1000);
	}
	snprintf(want, sizeof(want), "victim_launch work %d", 16);
	assert_true(json_is_false(json_object_get(process(json_array_get(json_object_get(root, "runs"), 0), want),
						  "helper")));
	json_decref(root);
}

/* One worker (the second, 8 MiB) SIGKILLed mid-run, after a flush: the
 * other three are exact, the killed one reads to its last flush (its peak,
 * not the allocation after it) and is marked abrupt. */
static void test_hooks_run_killed_worker(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"launch", "4", "2", NULL};
	char run[600], pid[32];
	json_t *root, *r, *killed, *one;
	int i;

	assert_int_equal(hk_record(t->cap, NULL, "victim_launch", args, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	root = report_json("--process all", run);
	r = json_array_get(json_object_get(root, "runs"), 0);
	killed = json_array_get(json_object_get(r, "processes"), 0);
	for (i = 0; i < (int)json_array_size(json_object_get(r, "processes")); i++) {
		json_t *p = json_array_get(json_object_get(r, "processes"), (size_t)i);
		if (strstr(json_string_value(json_object_get(p, "command_line")), "victim_launch work 8 "))
			killed = p; /* "work 8 FD" */
	}
	assert_non_null(strstr(json_string_value(json_object_get(killed, "command_line")), "work 8 "));
	assert_string_equal(json_string_value(json_object_get(killed, "ended")), "abrupt");
	assert_string_equal(json_string_value(json_object_get(process(r, "victim_launch work 12"), "ended")), "exited");
	/* how each ended, as the launcher's wait() saw it (the preload's
	 * memprof.ends); the launcher, CMD, as memprof record saw it */
	assert_string_equal(json_string_value(json_object_get(killed, "status")), "signal 9 (Killed)");
	assert_string_equal(json_string_value(json_object_get(process(r, "victim_launch work 12"), "status")), "exit 0");
	assert_string_equal(json_string_value(json_object_get(process(r, "victim_launch launch 4 2"), "status")), "exit 0");
	for (i = 0; i < 4; i++) {
		one = json_array_get(json_object_get(root, "files"), (size_t)i);
		json_int_t peak = get_int(json_object_get(device(one, "pool"), "peak"), "bytes");
		const char *end = json_string_value(json_object_get(one, "end"));
		assert_true(peak == 4 * MIB || peak == 8 * MIB || peak == 12 * MIB || peak == 16 * MIB);
		assert_string_equal(end, peak == 8 * MIB ? "abrupt" : "clean");
		if (peak == 8 * MIB) /* (+ 1 when a flush took the block after the kill's sign) */
			assert_in_range(get_int(device(one, "pool"), "allocations"), 8, 9);
		else
			assert_int_equal(get_int(device(one, "pool"), "allocations"), peak / MIB);
	}
	/* --pid picks it alone */
	snprintf(pid, sizeof(pid), "--pid %lld", (long long)get_int(killed, "pid"));
	json_decref(root);
	root = report_json(pid, run);
	assert_int_equal(get_int(json_object_get(device(root, "pool"), "peak"), "bytes"), 8 * MIB);
	assert_string_equal(json_string_value(json_object_get(root, "end")), "abrupt");
	json_decref(root);
	/* the tree as text says it too; a line of memprof.ends that does not
	 * parse is skipped and named */
	{
		char ends[700], *text;
		FILE *f;
		snprintf(ends, sizeof(ends), "%s/memprof.ends", run);
		assert_non_null(f = fopen(ends, "a"));
		fputs("12 x 34\n", f);
		assert_int_equal(fclose(f), 0);
		text = tree_text(t, run);
		assert_non_null(strstr(text, " abrupt: SIGKILL "));
		assert_non_null(strstr(text, "(memprof.ends line 6 is not \"PID STATUS WALL_NS\": skipped)"));
		free(text);
	}
}

/* Cut path's file where its trailer starts (the last "MPTR" in it). */
static void cut_trailer(const char *path)
{
	struct stat sb;
	char *data;
	off_t at;
	FILE *f;

	assert_int_equal(stat(path, &sb), 0);
	assert_non_null(data = malloc((size_t)sb.st_size));
	assert_non_null(f = fopen(path, "rb"));
	assert_int_equal(fread(data, 1, (size_t)sb.st_size, f), (size_t)sb.st_size);
	fclose(f);
	for (at = sb.st_size - 4; at > 0 && memcmp(data + at, "MPTR", 4); at--)
		;
	assert_true(at > 0);
	free(data);
	assert_int_equal(truncate(path, at), 0);
}

/* A worker killed while it closed (its final round written, its trailer
 * not: a pool's terminate() racing the worker's own exit) has its final
 * figures and is marked abrupt; it ends at its last event in the tree, not
 * 2^64 - 1 ns after its start. */
static void test_hooks_run_killed_closing(void **state)
{
	tmpdir_t *t = *state;
	const char *args[] = {"launch", "4", NULL};
	char run[600], *text;
	json_t *root, *p;
	json_int_t start, end_clean, end_cut;
	char *path;
	int i;

	assert_int_equal(hk_record(t->cap, NULL, "victim_launch", args, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	root = report_json("--process all", run);
	p = process(json_array_get(json_object_get(root, "runs"), 0), "victim_launch work 12");
	assert_string_equal(json_string_value(json_object_get(p, "ended")), "exited");
	start = get_int(p, "start_wall_ns");
	end_clean = get_int(p, "end_wall_ns");
	assert_true(end_clean > start);
	assert_non_null(path = strdup(json_string_value(json_object_get(p, "capture"))));
	json_decref(root);

	cut_trailer(path);
	root = report_json("--process all", run);
	p = process(json_array_get(json_object_get(root, "runs"), 0), "victim_launch work 12");
	assert_string_equal(json_string_value(json_object_get(p, "ended")), "abrupt");
	assert_int_equal(get_int(p, "start_wall_ns"), start);
	end_cut = get_int(p, "end_wall_ns");
	/* its last event: after its start, at or before the close the trailer said */
	assert_true(end_cut > start && end_cut <= end_clean);
	assert_true(end_clean - end_cut < 1000000000);
	for (i = 0; i < 4; i++) { /* the figures are the final ones */
		json_t *one = json_array_get(json_object_get(root, "files"), (size_t)i);
		if (get_int(json_object_get(device(one, "pool"), "peak"), "bytes") == 12 * MIB) {
			assert_string_equal(json_string_value(json_object_get(one, "end")), "abrupt");
			assert_int_equal(get_int(device(one, "pool"), "allocations"), 12);
		}
	}
	json_decref(root);
	/* and the tree as text: no duration of 18446744073 s */
	text = tree_text(t, run);
	assert_non_null(strstr(text, "victim_launch work 12"));
	assert_null(strstr(text, "18446744"));
	free(text);
	free(path);
}

/* Processes CMD leaves running (a daemon, multiprocessing's resource
 * tracker): memprof record, their reaper once CMD ended, waits a moment for
 * them and notes how each ended. One that ends within the wait is complete
 * (exited, exit 0); one that outlives it is "still running", not "ended
 * abruptly". */
static void test_hooks_run_orphans(void **state)
{
	tmpdir_t *t = *state;
	char script[300], run[600], log[300], pidfile[300], *out;
	json_t *root, *p;
	long sleeper = 0;
	FILE *f;

	snprintf(pidfile, sizeof(pidfile), "%s/sleeper.pid", t->dir);
	write_script(t, "daemons.sh", script, sizeof(script),
		     "(sleep 0.3; exec %s/victim_launch work 4) &\nsleep 30 &\necho $! > '%s'\nexit 0\n", HK_VICTIM_DIR,
		     pidfile);
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, script, NULL, NULL), 0);
	assert_non_null(f = fopen(pidfile, "r"));
	assert_int_equal(fscanf(f, "%ld", &sleeper), 1);
	fclose(f);
	out = hk_read_text(log);
	assert_null(strstr(out, "ended abruptly"));
	assert_non_null(strstr(out, "memprof: 1 process CMD started still runs"));
	free(out);
	hk_run_path(t->cap, run, sizeof(run));
	root = report_json("--process all", run);
	p = process(json_array_get(json_object_get(root, "runs"), 0), "victim_launch work 4");
	assert_string_equal(json_string_value(json_object_get(p, "ended")), "exited");
	assert_string_equal(json_string_value(json_object_get(p, "status")), "exit 0");
	assert_int_equal(get_int(json_object_get(device(root, "pool"), "peak"), "bytes"), 4 * MIB);
	json_decref(root);
	assert_true(sleeper > 0);
	kill((pid_t)sleeper, SIGKILL);
}

/* A worker killed while it waits (a pool's terminate(), a launcher's
 * teardown) after its work: with rounds due only every second (--flush
 * 1000), what it made before it went idle is written once it stops making
 * events (flusher.c), so its capture holds all of it: the peak and the
 * frees. It is marked abrupt, by SIGTERM. */
static void test_hooks_run_killed_idle(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--flush", "1000", NULL};
	char script[300], run[600];
	json_t *root, *one;

	write_script(t, "pool.sh", script, sizeof(script),
		     "%s/victim_launch idle 4 &\nw=$!\nsleep 0.5\nkill -TERM $w\nwait $w\nexit 0\n", HK_VICTIM_DIR);
	assert_int_equal(hk_record(t->cap, opts, script, NULL, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	root = report_json("", run);
	one = device(root, "pool");
	assert_int_equal(get_int(json_object_get(one, "peak"), "bytes"), 4 * MIB);
	assert_int_equal(get_int(one, "allocations"), 4);
	assert_int_equal(get_int(one, "deallocations"), 3);
	assert_string_equal(json_string_value(json_object_get(root, "end")), "abrupt");
	assert_string_equal(json_string_value(json_object_get(
				    process(json_array_get(json_object_get(root, "runs"), 0), "victim_launch idle 4"),
				    "status")),
			    "signal 15 (Terminated)");
	json_decref(root);
}

/* `victim_launch killbig MODE` recorded with rounds due every 5 s only, so
 * that what its worker's capture holds was written by rounds it asked for;
 * the report of the main process (the worker, by its peak), which ended
 * abruptly, owned by the caller; *host its host device. */
static json_t *killed_worker_report(tmpdir_t *t, const char *mode, json_t **host)
{
	const char *opts[] = {"--flush", "5000", NULL};
	const char *args[] = {"killbig", mode, NULL};
	char run[600];
	json_t *root;

	assert_int_equal(hk_record(t->cap, opts, "victim_launch", args, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	root = report_json("", run);
	assert_string_equal(json_string_value(json_object_get(root, "end")), "abrupt");
	*host = device(root, "host");
	return root;
}

/* A worker SIGKILLed right after it freed a large block, while it still
 * makes small events: neither the interval (--flush 5000) nor a quiet
 * round wrote them, but the large block asked for a round of its own
 * (mp__writer_prompt): the capture holds its 8 MiB peak and its free.
 * (Without that, the worker's capture held no event at all.) */
static void test_hooks_run_killed_after_big(void **state)
{
	json_t *host, *root = killed_worker_report(*state, "big", &host), *p, *worker = NULL;
	json_int_t peak, allocs, frees;
	size_t i;

	peak = get_int(json_object_get(host, "peak"), "bytes");
	allocs = get_int(host, "allocations");
	frees = get_int(host, "deallocations");
	assert_in_range(peak, 8 * MIB, 8 * MIB + 65536);
	assert_true(frees >= 1);
	assert_in_range(allocs - frees, 0, 1); /* (a round may fall between a small malloc and its free) */
	/* how the worker ("big FD", FD whichever the pipe got) ended */
	json_array_foreach(json_object_get(json_array_get(json_object_get(root, "runs"), 0), "processes"), i, p)
		if (strstr(json_string_value(json_object_get(p, "command_line")), "victim_launch big "))
			worker = p;
	assert_non_null(worker);
	assert_string_equal(json_string_value(json_object_get(worker, "status")), "signal 9 (Killed)");
	json_decref(root);
}

/* The same with 16 MiB made of 16384 blocks of 1 KiB, kept, as a process
 * the OOM killer takes while it grows by small blocks: the worker tells the
 * writer each MiB its heap moved, and the writer asks for a round each 4
 * MiB the process moved since the last (mp__net_moved,
 * mp__writer_net_moved). What a kill takes along is at most 4 MiB of the
 * process's growth and 1 MiB of the thread's. (Without the asks, its
 * capture held no event.) */
static void test_hooks_run_killed_after_growth(void **state)
{
	json_t *host, *root = killed_worker_report(*state, "grow", &host);

	/* all but 5 MiB at most: 11343 of the 16384 chunks of 1040 bytes
	 * (1032 bytes each in the figures: glibc's chunk less its header) */
	assert_in_range(get_int(json_object_get(host, "peak"), "bytes"), 11343 * 1032, 16384 * 1032 + 65536);
	assert_true(get_int(host, "allocations") >= 11343);
	json_decref(root);
}

/* The same after 32 MiB of such blocks, then all freed but the last, as a
 * pool's worker freeing its task's objects before it is terminated: the
 * process's level fell 16 MiB below its highest, and asked for a round
 * (mp__writer_net_moved). What the kill takes along is at most about 18
 * MiB of the drop. (Without the drop's rule, 10-24 frees were there: 32
 * MiB looked leaked.) */
static void test_hooks_run_killed_after_drop(void **state)
{
	json_t *host, *root = killed_worker_report(*state, "shrink", &host);

	assert_in_range(get_int(json_object_get(host, "peak"), "bytes"), 32768 * 1032 - 5 * MIB, 32768 * 1032 + 65536);
	/* 14 MiB of the drop at least (16 MiB below the highest level, less
	 * what the level's 1 MiB reports hold back at either end): 14115 of
	 * the 32767 frees of 1040-byte chunks */
	assert_true(get_int(host, "deallocations") >= 14115);
	json_decref(root);
}

/* The same with a framework's pool (the annotation API): the worker
 * allocates an 8 MiB block and fails a 16 MiB allocation in its memory id
 * "pool" (poolbig), or only fails it (poolfail), then makes small host
 * events until it is SIGKILLed. Each asks for a round of its own
 * (mp_writer_alloc, mp_writer_alloc_failed): without that the pool's
 * events were lost with the process. */
static void killed_after_pool(tmpdir_t *t, const char *mode, json_int_t peak)
{
	const char *opts[] = {"--flush", "5000", NULL};
	const char *args[] = {"killbig", mode, NULL};
	char run[600], want[64], pid[40];
	json_t *root, *pool, *p, *worker = NULL;
	size_t i;

	assert_int_equal(hk_record(t->cap, opts, "victim_launch", args, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	/* the worker ("MODE FD", FD whichever the pipe got), picked by pid:
	 * with only a failed allocation its peaks are small */
	root = report_json("", run);
	snprintf(want, sizeof(want), "victim_launch %s ", mode);
	json_array_foreach(json_object_get(json_array_get(json_object_get(root, "runs"), 0), "processes"), i, p)
		if (strstr(json_string_value(json_object_get(p, "command_line")), want))
			worker = p;
	assert_non_null(worker);
	assert_string_equal(json_string_value(json_object_get(worker, "status")), "signal 9 (Killed)");
	snprintf(pid, sizeof(pid), "--pid %lld", (long long)get_int(worker, "pid"));
	json_decref(root);
	root = report_json(pid, run);
	assert_string_equal(json_string_value(json_object_get(root, "end")), "abrupt");
	pool = device(root, "pool");
	assert_int_equal(get_int(json_object_get(pool, "peak"), "bytes"), peak);
	assert_int_equal(get_int(pool, "allocations"), peak ? 1 : 0);
	assert_int_equal(get_int(pool, "deallocations"), 0);
	assert_int_equal(get_int(pool, "failed_allocations"), 1);
	json_decref(root);
}

static void test_hooks_run_killed_after_pool_big(void **state)
{
	killed_after_pool(*state, "poolbig", 8 * MIB);
	hk_teardown_dir(state);
	assert_int_equal(hk_setup_dir(state), 0);
	killed_after_pool(*state, "poolfail", 0);
}

/* --main-only: the wrapper's exec chain cut to its last program and what
 * it started (here: the launcher and its 4 workers). */
static void test_hooks_run_main_only(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--main-only", NULL};
	char script[300], run[600], names[16][600], log[300], *out;

	write_script(t, "wrap.sh", script, sizeof(script), "x=$(uname); env true\nexec %s/victim_launch launch 4\n",
		     HK_VICTIM_DIR);
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, opts, script, NULL, NULL), 0);
	hk_run_path(t->cap, run, sizeof(run));
	out = hk_read_text(log);
	assert_null(strstr(out, "warning")); /* CMD's process was traced: its first program's capture is gone */
	assert_non_null(strstr(out, "memprof: run written to"));
	assert_non_null(strstr(out, ": 5 captures ("));
	free(out);
	/* the root's first program (the shell) is gone, so the symbolic link
	 * cap has nothing to point to: the 5 captures left are the launcher
	 * (<pid>-1: after the shell's exec) and its 4 workers */
	assert_int_equal(hk_other_captures(t->cap, names, 16), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks_run_wrapper, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_workers, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_killed_worker, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_killed_closing, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_orphans, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_killed_idle, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_killed_after_big, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_killed_after_growth, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_killed_after_drop, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_killed_after_pool_big, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_run_main_only, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
