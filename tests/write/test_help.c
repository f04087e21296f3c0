/* test_help.c - flush rounds on the program's own threads
 * (src/core/write/help.c): when the flusher turns help on and off, and
 * captures written with every round run by the threads that record,
 * against the reader's replay. */
#include "test_common.h"

#include "tally_test.h"
#include "procfs.h"
#include "writer_internal.h"

#include <memprof/capture.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>

#define MS 1000000ull

/* --- the judgement, on hand-made schedstat readings ----------------------- */

static mp_help_t auto_help(void)
{
	mp_help_t h = {0};

	mp__help_start(&h, MP_WRITER_HELP_AUTO, 4);
	return h;
}

/* A window is 20 ms of the flusher's run time; help goes on when it waited
 * a quarter of that or more (5 ms), and looks again 2 s later. */
static void test_help_judge_window(void **state)
{
	mp_help_t h = auto_help();

	(void)state;
	if (h.policy != MP_WRITER_HELP_AUTO)
		skip(); /* (a machine without the stack switch: help is off) */
	mp__help_judge_at(&h, 100 * MS, 7 * MS, 1000 * MS); /* the first reading */
	assert_int_equal(h.on, 0);
	mp__help_judge_at(&h, 119 * MS, 9 * MS, 1010 * MS); /* 19 ms: no window yet */
	assert_int_equal(h.on, 0);
	mp__help_judge_at(&h, 120 * MS, 11 * MS + MS / 2, 1020 * MS); /* 20 ms, waited 4.5 ms */
	assert_int_equal(h.on, 0);
	mp__help_judge_at(&h, 140 * MS, 16 * MS + MS / 2, 1040 * MS); /* 20 ms, waited 5 ms */
	assert_int_equal(h.on, 1);
	assert_true(h.probe_at == 3040 * MS);
	assert_true(mp__help_due(&h, 5000 * MS) == 3040 * MS);
	assert_true(mp__help_due(&h, 3000 * MS) == 3000 * MS);
	/* on until the look, whatever the readings */
	mp__help_judge_at(&h, 141 * MS, 16 * MS, 3039 * MS);
	assert_int_equal(h.on, 1);
	mp__help_judge_at(&h, 150 * MS, 20 * MS, 3040 * MS); /* the look: off, a window from here */
	assert_int_equal(h.on, 0);
	assert_true(mp__help_due(&h, 5000 * MS) == 5000 * MS);
}

/* Each look that finds every CPU busy again doubles the wait before the
 * next, up to 16 s; one that does not starts over at 2 s. */
static void test_help_judge_probes(void **state)
{
	static const uint64_t gaps[] = {2000, 4000, 8000, 16000, 16000};
	mp_help_t h = auto_help();
	uint64_t run = 0, wait = 0, now = 0;
	size_t i;

	(void)state;
	if (h.policy != MP_WRITER_HELP_AUTO)
		skip();
	mp__help_judge_at(&h, run, wait, now);
	for (i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++) {
		run += 20 * MS, wait += 14 * MS, now += 30 * MS; /* waited 70% */
		mp__help_judge_at(&h, run, wait, now);
		assert_int_equal(h.on, 1);
		assert_true(h.probe_at == now + gaps[i] * MS);
		now = h.probe_at;
		mp__help_judge_at(&h, run, wait, now); /* the look */
		assert_int_equal(h.on, 0);
	}
	run += 20 * MS, wait += 1 * MS, now += 25 * MS; /* a CPU to spare now */
	mp__help_judge_at(&h, run, wait, now);
	assert_int_equal(h.on, 0);
	run += 20 * MS, wait += 10 * MS, now += 30 * MS; /* busy again */
	mp__help_judge_at(&h, run, wait, now);
	assert_int_equal(h.on, 1);
	assert_true(h.probe_at == now + 2000 * MS);
}

/* While help is on, the machine's idle ticks over windows of 50 ticks a
 * CPU (200 for 4 CPUs): 24 idle ticks (0.48 CPUs on average) keep it on,
 * 25 (half a CPU) turn it off, and the flusher's next reading starts a
 * window of its own. Off, idle ticks change nothing. */
static void test_help_judge_idle(void **state)
{
	mp_help_t h = auto_help();

	(void)state;
	if (h.policy != MP_WRITER_HELP_AUTO)
		skip();
	mp__help_idle_at(&h, 1000, 10000); /* off: nothing */
	assert_int_equal(h.idle_started, 0);
	mp__help_judge_at(&h, 0, 0, 0);
	mp__help_judge_at(&h, 20 * MS, 10 * MS, 30 * MS); /* busy: on */
	assert_int_equal(h.on, 1);
	mp__help_idle_at(&h, 1000, 10000); /* the first reading */
	mp__help_idle_at(&h, 1030, 10199); /* 199 ticks: no window yet */
	assert_int_equal(h.on, 1);
	mp__help_idle_at(&h, 1024, 10200); /* 24 idle of 200 */
	assert_int_equal(h.on, 1);
	mp__help_idle_at(&h, 1049, 10400); /* 25 of 200 */
	assert_int_equal(h.on, 0);
	assert_int_equal(h.started, 0);
	mp__help_judge_at(&h, 40 * MS, 20 * MS, 2000 * MS); /* the flusher's first reading again */
	assert_int_equal(h.on, 0);
	mp__help_judge_at(&h, 60 * MS, 21 * MS, 2030 * MS); /* 1 ms of 20: a CPU to spare */
	assert_int_equal(h.on, 0);
}

/* OFF never helps, ALWAYS always does: neither reads the clock's say. */
static void test_help_judge_fixed(void **state)
{
	mp_help_t off = {0}, always = {0};

	(void)state;
	mp__help_start(&off, MP_WRITER_HELP_OFF, 4);
	mp__help_start(&always, MP_WRITER_HELP_ALWAYS, 4);
	mp__help_judge_at(&off, 0, 0, 0);
	mp__help_judge_at(&off, 100 * MS, 100 * MS, 10 * MS);
	assert_int_equal(off.on, 0);
	if (always.policy != MP_WRITER_HELP_ALWAYS)
		skip();
	mp__help_judge_at(&always, 0, 0, 0);
	mp__help_judge_at(&always, 100 * MS, 0, 10 * MS);
	assert_int_equal(always.on, 1);
	assert_true(mp__help_due(&always, 77) == 77);
	assert_int_equal(mp__help_policy(7), MP_WRITER_HELP_OFF);
}

/* The /proc texts the judgement reads: schedstat's run and wait time,
 * /proc/stat's first line's idle (idle + iowait) and all ticks (the
 * first 8 numbers: guest time is counted in user's already). */
static void test_help_texts(void **state)
{
	uint64_t run = 1, wait = 1, idle = 1, total = 1;

	(void)state;
	assert_int_equal(mp__help_schedstat_in("1890000000 1330000000 12345\n", &run, &wait), 0);
	assert_true(run == 1890000000ull && wait == 1330000000ull);
	assert_int_equal(mp__help_schedstat_in("1890000000\n", &run, &wait), -1);
	assert_int_equal(mp__help_schedstat_in("", &run, &wait), -1);
	assert_int_equal(mp__help_stat_in("cpu  10 20 30 400 5 6 7 8 900 1000\ncpu0 1 1 1 1 1 1 1 1 1 1\n", &idle, &total),
			 0);
	assert_true(idle == 405 && total == 486);
	assert_int_equal(mp__help_stat_in("cpu0 10 20 30 400 5 6 7 8 0 0\n", &idle, &total), -1);
	assert_int_equal(mp__help_stat_in("cpu  10 20 30 400 5 6 7\n", &idle, &total), -1);
	assert_int_equal(mp__help_stat_in("", &idle, &total), -1);
}

/* A CPU idle now (/proc/loadavg's runnable tasks, the caller among them,
 * fewer than the CPUs) turns help off from the thread about to run a
 * round; the flusher's next reading then starts its judgement afresh, so
 * the waits it counted while help was on do not turn help on again. */
static void test_help_spare(void **state)
{
	static mp_writer_t w; /* (zeroed: only its help is read) */
	mp_help_t h = auto_help();
	char buf[64];

	(void)state;
	assert_int_equal(mp__help_spare_in("0.55 1.72 1.99 1/345 12345\n", 2), 1);
	assert_int_equal(mp__help_spare_in("0.55 1.72 1.99 2/345 12345\n", 2), 0);
	assert_int_equal(mp__help_spare_in("3.01 2.00 1.00 3/345 12345\n", 4), 1);
	assert_int_equal(mp__help_spare_in("0.55 1.72 1/345", 2), 0); /* a field short */
	assert_int_equal(mp__help_spare_in("0.55 1.72 1.99 x/345 1", 2), 0);
	assert_int_equal(mp__help_spare_in("0.55 1.72 1.99 1 345", 2), 0);
	assert_int_equal(mp__help_spare_in("", 2), 0);

	if (h.policy != MP_WRITER_HELP_AUTO)
		skip();
	mp__help_judge_at(&h, 0, 0, 0);
	mp__help_judge_at(&h, 20 * MS, 10 * MS, 30 * MS); /* busy: on */
	assert_int_equal(h.on, 1);
	/* while on, the flusher waits for a CPU at each of its wake-ups
	 * (25 ms waited for 5 ms run); then a thread finds a CPU idle.
	 * Judged on from the last window instead, 25 ms run and 26 ms
	 * waited would turn help on again. */
	atomic_store(&h.spare, 1);
	atomic_store(&h.on, 0);
	mp__help_judge_at(&h, 25 * MS, 35 * MS, 500 * MS); /* afresh: the first reading */
	assert_int_equal(h.on, 0);
	assert_int_equal(h.spare, 0);
	mp__help_judge_at(&h, 45 * MS, 36 * MS, 520 * MS); /* 1 ms of 20: a CPU to spare */
	assert_int_equal(h.on, 0);

	/* the look itself, on this machine: a task runnable at least (this
	 * one) is never fewer than 1 CPU, and always fewer than 2^30 */
	if (mp__read_head("/proc/loadavg", buf, sizeof(buf)) <= 0)
		skip();
	mp__help_start(&w.help, MP_WRITER_HELP_AUTO, 1);
	atomic_store(&w.help.on, 1);
	errno = 4242;
	assert_int_equal(mp__help_spare(&w), 0);
	assert_int_equal(w.help.on, 1);
	assert_int_equal(w.help.spare, 0);
	w.help.ncpu = 1u << 30;
	assert_int_equal(mp__help_spare(&w), 1);
	assert_int_equal(errno, 4242);
	assert_int_equal(w.help.on, 0);
	assert_int_equal(w.help.spare, 1);
	/* ALWAYS never looks */
	mp__help_start(&w.help, MP_WRITER_HELP_ALWAYS, 1u << 30);
	atomic_store(&w.help.spare, 0);
	if (w.help.policy == MP_WRITER_HELP_ALWAYS) {
		assert_int_equal(mp__help_spare(&w), 0);
		assert_int_equal(w.help.on, 1);
	}
}

/* --- rounds on the recording threads -------------------------------------- */

static mp_writer_t *open_helped(const char *path, uint32_t ring_bytes)
{
	mp_writer_options_t o = {0};
	mp_writer_t *w;
	mp_diag_t diag;

	o.flush_interval_ms = 60000; /* the flusher's own rounds: none but the last (and those asked) */
	o.ring_bytes = ring_bytes;
	o.help = MP_WRITER_HELP_ALWAYS;
	assert_int_equal(mp_writer_open(&w, path, 0, &o, &diag), 0);
	return w;
}

/* 1 and 4 threads of random events with 16 KiB rings: every round but the
 * last runs on a recording thread, inside its mp_writer_* call. The
 * capture's figures are the reader's, event for event. */
static void test_help_round_trip(void **state)
{
	static const int threads[] = {1, 4};
	size_t k;

	(void)state;
	if (mp__help_policy(MP_WRITER_HELP_ALWAYS) != MP_WRITER_HELP_ALWAYS)
		skip();
	for (k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
		char *path = mp_test_tmpfile(".memprof");
		mp_writer_t *w = open_helped(path, 16384);
		mp_capture_summary_t s;

		rnd_run(w, threads[k], 0x2545F4914F6CDD1Dull, 0);
		/* about 1 MB of records a thread (40000 draws of 26 bytes on
		 * average) and no round asked of the flusher: every round but
		 * the last ran on a recording thread, and a round takes at most
		 * a whole ring (16 KiB) of each: at least 63 of them */
		assert_true(w->help.rounds >= 63);
		assert_non_null(w->help.stack);
		assert_int_equal(mp_writer_close(w), 0);
		check_against_replay(path, &s);
		assert_true(s.memories[0].allocations > 1000 * (uint64_t)threads[k]);
		mp_capture_summary_free(&s);
		unlink(path);
		free(path);
	}
}

/* A round run by mp__help_round keeps the caller's errno and signal mask;
 * it does not run while another holds the rounds' lock, nor once the
 * writer is closing. */
static void test_help_round_contract(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w;
	sigset_t mask, after;
	int rounds;

	(void)state;
	if (mp__help_policy(MP_WRITER_HELP_ALWAYS) != MP_WRITER_HELP_ALWAYS)
		skip();
	w = open_helped(path, 4096);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_int_equal(mp_writer_alloc(w, 0, 0x1000, 64, 64), 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &mask, NULL), 0);
	rounds = (int)w->help.rounds;
	errno = 4242;
	assert_int_equal(mp__help_round(w), 0);
	assert_int_equal(errno, 4242);
	assert_int_equal((int)w->help.rounds, rounds + 1);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &after), 0);
	assert_true(sigismember(&after, SIGUSR2) && !sigismember(&after, SIGUSR1));
	sigemptyset(&mask);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &mask, NULL), 0);

	pthread_mutex_lock(&w->flush_mu); /* (a normal mutex: trylock fails on its holder too) */
	assert_int_equal(mp__help_round(w), -EBUSY);
	pthread_mutex_unlock(&w->flush_mu);

	atomic_store(&w->closing, 1);
	assert_int_equal(mp__help_round(w), -EAGAIN);
	atomic_store(&w->closing, 0);
	assert_int_equal((int)w->help.rounds, rounds + 1);
	assert_int_equal(mp_writer_close(w), 0);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_judge_window),  cmocka_unit_test(test_help_judge_probes),
		cmocka_unit_test(test_help_judge_idle),    cmocka_unit_test(test_help_judge_fixed),
		cmocka_unit_test(test_help_texts),         cmocka_unit_test(test_help_spare),
		cmocka_unit_test(test_help_round_trip),    cmocka_unit_test(test_help_round_contract),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
