/* flusher.c - the flusher thread: when flush rounds run (flush.c runs
 * them), the wake-ups that start one early, and mp_writer_flush's wait
 * for one. The ordering protocol is described in writer_internal.h. */
#include "clock.h"
#include "writer_internal.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void mp__futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void mp__futex_wait(_Atomic uint32_t *word, uint32_t val, uint32_t timeout_ms)
{
	struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};

	syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

void mp__flusher_wake(mp_writer_t *w)
{
	atomic_fetch_add_explicit(&w->wake, 1, memory_order_release);
	mp__futex_wake(&w->wake);
}

void mp__writer_prompt(mp_writer_t *w)
{
	/* One already waits for its round (which the round clears as it
	 * starts): that round takes this block too. So a program making such
	 * blocks in a loop pays a load for most of them, not a clock read. */
	if (atomic_load_explicit(&w->prompt_pending, memory_order_relaxed))
		return;
	atomic_store_explicit(&w->prompt_pending, 1, memory_order_release);
	if (mp_clock_ns() >= atomic_load_explicit(&w->round_ns, memory_order_relaxed) + MP_PROMPT_GAP_NS)
		mp__flusher_wake(w);
}

void mp__writer_net_moved(mp_writer_t *w, int64_t bytes)
{
	int64_t level = atomic_fetch_add_explicit(&w->net_level, bytes, memory_order_relaxed) + bytes;
	int64_t top = atomic_load_explicit(&w->net_top, memory_order_relaxed);

	/* (Threads racing here may both prompt, the second finding the first's
	 * prompt pending, or leave top a report behind: it is a hint.) */
	if (level - atomic_load_explicit(&w->net_high, memory_order_relaxed) >= (int64_t)MP_PROMPT_BYTES) {
		atomic_store_explicit(&w->net_high, level, memory_order_relaxed);
	} else if (level > top) {
		atomic_store_explicit(&w->net_top, level, memory_order_relaxed);
		return;
	} else if (top - level < (int64_t)MP_PROMPT_DROP_BYTES || top - level < top / 8) {
		return;
	}
	atomic_store_explicit(&w->net_top, level, memory_order_relaxed);
	mp__writer_prompt(w);
}

/* A prompt (mp__writer_prompt) is due: 1, or 0, the time it is due
 * lowered into *due. */
static int prompt_due(mp_writer_t *w, uint64_t now, uint64_t *due)
{
	uint64_t at;

	if (!atomic_load_explicit(&w->prompt_pending, memory_order_acquire))
		return 0;
	at = atomic_load_explicit(&w->round_ns, memory_order_relaxed) + MP_PROMPT_GAP_NS;
	if (now >= at)
		return 1;
	if (at < *due)
		*due = at;
	return 0;
}

/* Tell the threads waiting in mp_writer_flush that a round covering their
 * request `asked` (read before it started) is on disk. */
static void flush_answer(mp_writer_t *w, uint32_t asked)
{
	if (atomic_load_explicit(&w->flush_done, memory_order_relaxed) != asked) {
		atomic_store_explicit(&w->flush_done, asked, memory_order_release);
		mp__futex_wake(&w->flush_done);
	}
}

static int flush_pending(mp_writer_t *w)
{
	return atomic_load_explicit(&w->flush_asked, memory_order_acquire) !=
	       atomic_load_explicit(&w->flush_done, memory_order_relaxed);
}

int mp__writer_flush_on_flusher(mp_writer_t *w)
{
	uint32_t want = atomic_fetch_add_explicit(&w->flush_asked, 1, memory_order_acq_rel) + 1;

	mp__flusher_wake(w);
	for (;;) {
		uint32_t done = atomic_load_explicit(&w->flush_done, memory_order_acquire);
		if ((int32_t)(done - want) >= 0)
			break;
		if (atomic_load_explicit(&w->flusher_gone, memory_order_acquire))
			return -EAGAIN; /* it stopped before taking this request */
		mp__futex_wait(&w->flush_done, done, 10);
	}
	return atomic_load_explicit(&w->error, memory_order_relaxed);
}

/* How often the flusher looks whether the program stopped making events,
 * while it makes them (QUIET_MS, then twice as long each look that finds
 * nothing new and nothing to write, up to the interval), and the least
 * time from one round's start to a round started because it stopped. */
#define QUIET_MS 5u
#define QUIET_GAP_NS (5u * 1000000u)

/* Bytes ever written to the rings of all threads: it moves while the
 * program records, and is past the last round's round_heads while some
 * are not on disk. */
static uint64_t heads_sum(mp_writer_t *w)
{
	uint64_t sum = 0;
	mp_wthread_t *t;

	pthread_mutex_lock(&w->reg_mu);
	for (t = atomic_load_explicit(&w->threads, memory_order_acquire); t; t = t->next)
		if (atomic_load_explicit(&t->exited, memory_order_acquire) != 2)
			sum += atomic_load_explicit(&t->head, memory_order_relaxed);
	pthread_mutex_unlock(&w->reg_mu);
	return sum;
}

/* A look between rounds (see below): 1 when the program stopped making
 * events since the last look (*looked) with some not written, and a quiet
 * round may start; else 0, the time to the next look (*look_ms) set. */
static int stopped_unwritten(mp_writer_t *w, uint64_t *looked, uint32_t *look_ms)
{
	uint64_t sum = heads_sum(w);
	int moved = sum != *looked, unwritten = sum != atomic_load_explicit(&w->round_heads, memory_order_relaxed);

	*looked = sum;
	if (moved)
		*look_ms = QUIET_MS;
	else if (!unwritten && *look_ms < w->flush_interval_ms) /* idle: look less often */
		*look_ms = *look_ms * 2 < w->flush_interval_ms ? *look_ms * 2 : w->flush_interval_ms;
	return !moved && unwritten &&
	       mp_clock_ns() >= atomic_load_explicit(&w->round_ns, memory_order_relaxed) + QUIET_GAP_NS;
}

/* Rounds start at least every flush interval (start to start), whoever
 * runs them, so the time a round takes does not stretch the interval: a
 * block is on disk at least every interval, and a kill loses at most about
 * one interval. Between rounds the flusher sleeps until the next is due, a
 * thread wakes it (a ring half full, a flush asked for), or help looks
 * again (help.c: judged after every wake-up).
 *
 * A process is often killed while it waits, not while it works: a pool's
 * worker that returned its result, a launcher's worker torn down, a server
 * between requests. Its last events, made up to an interval before, were
 * lost with it (a multiprocessing pool's workers lost the frees of their
 * task). So while events come the flusher looks every QUIET_MS whether
 * they stopped coming; once they have, what they left is written at once
 * (a "quiet" round), not at the interval's end. A busy program makes
 * events at every look, and gets no extra round; an idle one is looked at
 * less and less often. */
void *mp__flusher_main(void *arg)
{
	mp_writer_t *w = arg;
	uint64_t interval = (uint64_t)w->flush_interval_ms * 1000000u;
	/* Wake-ups this round answers: those before it started. One that comes
	 * while it runs (a thread's ring filled up meanwhile) starts the next
	 * round at once instead of being slept through. */
	uint32_t seen = atomic_load_explicit(&w->wake, memory_order_acquire);
	int orphan_seen = 0, orphaned = 0;
	/* the rings' bytes at the last look, and the time to the next */
	uint64_t looked = 0;
	uint32_t look_ms = QUIET_MS;

	mp__flusher_enter();
	/* Named, so that top -H, perf and gdb show whose CPU time it is (else
	 * it has the program's name) */
	prctl(PR_SET_NAME, MP_FLUSHER_NAME, 0, 0, 0);
	atomic_store_explicit(&w->round_ns, mp_clock_ns(), memory_order_relaxed); /* (the open) */
	mp__help_judge(w, mp_clock_ns());
	while (!atomic_load_explicit(&w->closing, memory_order_acquire)) {
		uint64_t now = mp_clock_ns();
		/* the next round: an interval after the last one started */
		uint64_t next = atomic_load_explicit(&w->round_ns, memory_order_relaxed) + interval;
		/* ... or the recording window's end, or help's next look, if sooner */
		uint64_t due = mp__help_due(&w->help, w->stop_at_ns && w->stop_at_ns < next ? w->stop_at_ns : next);
		uint32_t woken, asked;
		int stop = 0, quiet = 0, prompt = prompt_due(w, now, &due);

		/* A flush asked for is a reason to run at once, whatever the
		 * wake-ups said: one asked before this thread read `seen` at its
		 * start would be slept through. (One asked later bumps wake after
		 * flush_asked, so the futex wait below returns.) */
		if (!prompt && now < due && atomic_load_explicit(&w->wake, memory_order_acquire) == seen &&
		    !flush_pending(w)) {
			uint64_t wait_ms = (due - now + 999999u) / 1000000u;
			mp__futex_wait(&w->wake, seen, (uint32_t)(wait_ms < look_ms ? wait_ms : look_ms));
			if (atomic_load_explicit(&w->closing, memory_order_acquire))
				break;
			/* nothing woke it and nothing is due: a look (or a
			 * spurious wake-up) */
			if (atomic_load_explicit(&w->wake, memory_order_acquire) == seen && mp_clock_ns() < due &&
			    !flush_pending(w) && !(quiet = stopped_unwritten(w, &looked, &look_ms)))
				continue;
		}
		/* The window's end: the caller stops recording, and the round
		 * below writes what it recorded up to there. */
		if (w->stop_at_ns && mp_clock_ns() >= w->stop_at_ns) {
			w->stop_at_ns = 0;
			w->on_stop(w->stop_arg);
			stop = 1;
		}
		woken = atomic_load_explicit(&w->wake, memory_order_acquire);
		now = mp_clock_ns();
		prompt = prompt || prompt_due(w, now, &due);
		if (woken == seen && !stop && !quiet && !prompt && !flush_pending(w) &&
		    now < atomic_load_explicit(&w->round_ns, memory_order_relaxed) + interval) {
			mp__help_judge(w, now); /* woken for help's look, or a round ran meanwhile */
			continue;
		}
		/* A round the interval started, not a full ring: is the process
		 * waiting on us alone (orphan.c)? */
		if (woken == seen && !quiet && !prompt && !orphan_seen && mp__process_orphaned()) {
			orphan_seen = 1;
			if (!w->on_orphaned || w->on_orphaned(w->orphaned_arg) != 0) {
				orphaned = 1;
				break; /* glibc ends the process as this thread ends */
			}
		}
		seen = woken;
		asked = atomic_load_explicit(&w->flush_asked, memory_order_acquire);
		look_ms = QUIET_MS;
		mp__writer_round(w, 0);
		flush_answer(w, asked);
		mp__help_judge(w, mp_clock_ns());
	}
	/* Closing: the final round, here (see flush_asked). Orphaned: a round
	 * as usual; exit() closes the capture on this same thread. */
	{
		uint32_t asked = atomic_load_explicit(&w->flush_asked, memory_order_acquire);
		mp__writer_round(w, !orphaned);
		w->final_done = !orphaned;
		atomic_store_explicit(&w->flusher_gone, 1, memory_order_release);
		flush_answer(w, asked);
	}
	mp__flusher_leave();
	return NULL;
}
