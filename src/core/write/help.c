/* help.c - flush rounds on the program's own threads, when the flusher
 * cannot get a CPU of its own.
 *
 * The flusher is one more thread. Where the machine has a CPU to spare it
 * runs there, beside the program, and the program's wall time does not see
 * it. Where the program keeps every CPU busy (two allocating threads on
 * two CPUs: alloc_bench, docs/hooks.md "Cost"), its time is taken from the
 * program's threads, and three threads on two CPUs cost more than their
 * work: the scheduler slices them, each switch cools the caches of both
 * sides, and while the flusher sleeps between rounds the two program
 * threads are often left on one CPU and the other idles. The same work,
 * done by the program's threads themselves, takes about 3% less of the
 * whole command's time (docs/hooks.md, "Cost").
 *
 * So the flusher watches for that. /proc/thread-self/schedstat says how
 * long it ran and how long it waited for a CPU while it could have run:
 * with a CPU to spare it waits a few percent of its run time (alloc_bench
 * with one thread: 15 ms for 1.87 s), with every CPU busy most of it (two
 * threads: 1.33 s for 1.89 s). While it waits a quarter of its run time or
 * more, help is on: a thread whose ring passes half full runs the round
 * itself (mp__help_round), and a thread that finds its ring full does too,
 * rather than wake the flusher; the flusher keeps the rounds nobody ran
 * for a flush interval. Once in a while (after 2 s, then up to 16 s while
 * the answer stays the same) help goes off so that the flusher runs the
 * rounds for a window and looks again; at once if the machine's CPUs
 * idle meanwhile (/proc/stat: half a CPU on average over 0.5 s), or if a
 * thread about to run a round finds a CPU idle right then (/proc/loadavg:
 * fewer tasks runnable than CPUs; below).
 *
 * A round needs more stack than a program's thread may have (writer_internal.h,
 * flush_asked), and must not be left half done by a signal handler that
 * never returns: it runs on a stack of the writer's, with every signal
 * blocked (as the flusher does). Only x86-64 switches stacks here; on other
 * machines help stays off and the flusher runs every round.
 */
#include "procfs.h"
#include "writer_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#define ASAN_FIBERS 1
#else
#define ASAN_FIBERS 0
#endif

/* The round's stack: a round needs ~13 KiB; pages are resident only as far
 * as it reaches. Its lowest page is a guard. */
#define HELP_STACK (1u << 20)
#define HELP_GUARD 4096u

/* The judgement: windows of this much of the flusher's run time (the run
 * time may lag by a scheduler tick, 4 ms at most: the two cases differ far
 * more); help on when it waited a quarter of that or more; looked at again
 * after 2 s of help, then twice as long each time it is still needed, up
 * to 16 s (a window of the flusher's rounds costs a few percent more than
 * the same work helped). */
#define HELP_WINDOW_NS (20 * 1000000ull)
#define HELP_PROBE_NS (2000 * 1000000ull)
#define HELP_PROBE_MAX_NS (16000 * 1000000ull)
/* While help is on, the machine's idle time over windows of this many
 * clock ticks a CPU (/proc/stat: 0.5 s at USER_HZ 100): half a CPU idle on
 * average or more, and the flusher looks again at once. */
#define HELP_IDLE_TICKS 50

#if defined(__x86_64__) && defined(__GNUC__)
#define HELP_STACKS 1
/* fn(arg) with the stack pointer at top (16-byte aligned): the return
 * address pushed there, as a call does. Nothing of the caller is live
 * across the call but what the callee saves (rbx keeps the old stack). */
static __attribute__((noinline)) void call_on_stack(void *top, void (*fn)(void *), void *arg)
{
	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "mov %[top], %%rsp\n\t"
			 "call *%[fn]\n\t"
			 "mov %%rbx, %%rsp"
			 : "+D"(arg)
			 : [top] "r"(top), [fn] "r"(fn)
			 : "rax", "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0", "xmm1",
			   "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
			   "xmm13", "xmm14", "xmm15"
#ifdef __AVX512F__
			   ,
			   "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25",
			   "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7"
#endif
	);
}
#else
#define HELP_STACKS 0
#endif

/* (the flusher turns AUTO off while the recording threads read it) */
static int policy_of(const mp_help_t *h)
{
	return atomic_load_explicit(&h->policy, memory_order_relaxed);
}

int mp__help_policy(int asked)
{
	if (!HELP_STACKS || asked < MP_WRITER_HELP_AUTO || asked > MP_WRITER_HELP_ALWAYS)
		return MP_WRITER_HELP_OFF;
	return asked;
}

void mp__help_start(mp_help_t *h, int policy, unsigned ncpu)
{
	policy = mp__help_policy(policy);
	atomic_store_explicit(&h->policy, policy, memory_order_relaxed);
	h->ncpu = ncpu ? ncpu : 1;
	atomic_store_explicit(&h->on, policy == MP_WRITER_HELP_ALWAYS, memory_order_relaxed);
}

/* --- the flusher's judgement --------------------------------------------- */

/* The next reading starts the judgement over, as the first one did. */
static void judge_afresh(mp_help_t *h)
{
	h->started = 0;
	h->probing = 0;
}

void mp__help_judge_at(mp_help_t *h, uint64_t run, uint64_t wait, uint64_t now)
{
	int busy;

	if (policy_of(h) != MP_WRITER_HELP_AUTO)
		return;
	if (atomic_exchange_explicit(&h->spare, 0, memory_order_relaxed)) {
		/* a thread found a CPU idle and turned help off: the waits
		 * counted while help was on say nothing of now */
		judge_afresh(h);
	}
	if (atomic_load_explicit(&h->on, memory_order_relaxed)) {
		if (now < h->probe_at)
			return;
		/* look again: the flusher runs the rounds for a window */
		atomic_store_explicit(&h->on, 0, memory_order_relaxed);
		h->probing = 1;
		h->run0 = run;
		h->wait0 = wait;
		return;
	}
	if (!h->started || run < h->run0 || wait < h->wait0) { /* the first reading */
		h->started = 1;
		h->run0 = run;
		h->wait0 = wait;
		return;
	}
	if (run - h->run0 < HELP_WINDOW_NS)
		return;
	busy = (wait - h->wait0) * 4 >= run - h->run0;
	h->run0 = run;
	h->wait0 = wait;
	if (busy) {
		h->probe_gap = !h->probing ? HELP_PROBE_NS
			       : 2 * h->probe_gap < HELP_PROBE_MAX_NS ? 2 * h->probe_gap
								      : HELP_PROBE_MAX_NS;
		h->probe_at = now + h->probe_gap;
		h->idle_started = 0;
		atomic_store_explicit(&h->on, 1, memory_order_relaxed);
	}
	h->probing = 0;
}

/* Help on while CPUs idle would be the wrong way round: a thread that
 * holds a lock of the program's (a mutex around its allocations, say)
 * through a round keeps the others waiting, and their CPUs idle, while the
 * flusher could have run there. */
void mp__help_idle_at(mp_help_t *h, uint64_t idle, uint64_t total)
{
	int spare;

	if (policy_of(h) != MP_WRITER_HELP_AUTO || !atomic_load_explicit(&h->on, memory_order_relaxed))
		return;
	if (!h->idle_started || idle < h->idle0 || total < h->total0) {
		h->idle_started = 1;
		h->idle0 = idle;
		h->total0 = total;
		return;
	}
	if (total - h->total0 < (uint64_t)HELP_IDLE_TICKS * h->ncpu)
		return;
	spare = (idle - h->idle0) * h->ncpu * 2 >= total - h->total0; /* idle CPUs >= 1/2 */
	h->idle0 = idle;
	h->total0 = total;
	if (spare) { /* a window of the flusher's decides again */
		atomic_store_explicit(&h->on, 0, memory_order_relaxed);
		judge_afresh(h);
	}
}

uint64_t mp__help_due(const mp_help_t *h, uint64_t due)
{
	if (policy_of(h) == MP_WRITER_HELP_AUTO && atomic_load_explicit(&h->on, memory_order_relaxed) &&
	    h->probe_at < due)
		return h->probe_at;
	return due;
}

int mp__help_schedstat_in(const char *schedstat, uint64_t *run, uint64_t *wait)
{
	char *end, *end2;

	/* "run_time wait_time timeslices", ns */
	*run = strtoull(schedstat, &end, 10);
	*wait = strtoull(end, &end2, 10);
	return end == schedstat || end2 == end ? -1 : 0;
}

int mp__help_stat_in(const char *stat, uint64_t *idle, uint64_t *total)
{
	/* "cpu  user nice system idle iowait irq softirq steal guest
	 * guest_nice" (ticks; guest time is in user's already) */
	uint64_t v[8];
	const char *p = stat + 4;
	char *end;
	int i;

	if (strncmp(stat, "cpu ", 4))
		return -1;
	*total = 0;
	for (i = 0; i < 8; i++) {
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
		*total += v[i];
	}
	*idle = v[3] + v[4];
	return 0;
}

void mp__help_judge(mp_writer_t *w, uint64_t now)
{
	char buf[256]; /* (/proc/stat's first line: 10 numbers of up to 20 digits) */
	uint64_t run, wait, idle, total;

	if (policy_of(&w->help) != MP_WRITER_HELP_AUTO)
		return;
	/* (CONFIG_SCHED_INFO): without it, help stays off */
	if (mp__read_head("/proc/thread-self/schedstat", buf, sizeof(buf)) <= 0 ||
	    mp__help_schedstat_in(buf, &run, &wait)) {
		atomic_store_explicit(&w->help.policy, MP_WRITER_HELP_OFF, memory_order_relaxed);
		atomic_store_explicit(&w->help.on, 0, memory_order_relaxed);
		return;
	}
	if (atomic_load_explicit(&w->help.on, memory_order_relaxed) && mp__read_head("/proc/stat", buf, sizeof(buf)) > 0 &&
	    !mp__help_stat_in(buf, &idle, &total))
		mp__help_idle_at(&w->help, idle, total);
	mp__help_judge_at(&w->help, run, wait, now);
}

/* --- a CPU idle now ------------------------------------------------------
 * The flusher's judgement and its idle guard look back over windows; a
 * program whose threads stop one by one (workers that end at different
 * times: alloc_bench's two end about 0.1 s apart) leaves a CPU idle at
 * once, and the threads still running would go on running every round
 * while the flusher could run them there. So a thread about to run a round
 * looks at how many tasks the machine has runnable right now (itself among
 * them): fewer than its CPUs, and the flusher takes the round. One look is
 * three system calls, a few microseconds a round. A look that catches a
 * thread between two blocking calls costs a window of the flusher's
 * judgement (20 ms of its run time), after which help is on again. */

int mp__help_spare_in(const char *loadavg, unsigned ncpu)
{
	const char *p = loadavg;
	char *end;
	unsigned long long running;
	int field;

	for (field = 0; field < 3; field++) { /* the three load averages */
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	running = strtoull(p, &end, 10);
	if (end == p || *end != '/')
		return 0;
	return running < ncpu;
}

int mp__help_spare(mp_writer_t *w)
{
	char buf[128];
	int saved = errno, spare;

	if (policy_of(&w->help) != MP_WRITER_HELP_AUTO)
		return 0;
	spare = mp__read_head("/proc/loadavg", buf, sizeof(buf)) > 0 && mp__help_spare_in(buf, w->help.ncpu);
	errno = saved;
	if (spare) {
		atomic_store_explicit(&w->help.spare, 1, memory_order_relaxed);
		atomic_store_explicit(&w->help.on, 0, memory_order_relaxed);
	}
	return spare;
}

/* --- a round on the calling thread --------------------------------------- */

typedef struct {
	mp_writer_t *w;
#if ASAN_FIBERS
	const void *old_bottom;
	size_t old_size;
#endif
} help_call_t;

static void help_entry(void *arg)
{
	help_call_t *c = arg;

#if ASAN_FIBERS
	__sanitizer_finish_switch_fiber(NULL, &c->old_bottom, &c->old_size);
#endif
	(void)mp__writer_round_locked(c->w, 0); /* (an error is the writer's, sticky) */
#if ASAN_FIBERS
	__sanitizer_start_switch_fiber(NULL, c->old_bottom, c->old_size); /* this stack's turn is over */
#endif
}

int mp__help_round(mp_writer_t *w)
{
#if HELP_STACKS
	help_call_t c;
	sigset_t all, old;
	int saved = errno;
#if ASAN_FIBERS
	void *fake = NULL;
#endif

	memset(&c, 0, sizeof(c));
	c.w = w;
	if (pthread_mutex_trylock(&w->flush_mu))
		return -EBUSY;
	if (atomic_load_explicit(&w->closing, memory_order_acquire)) {
		pthread_mutex_unlock(&w->flush_mu);
		return -EAGAIN; /* the flusher's final round is next */
	}
	if (!w->help.stack) {
		uint8_t *s = mp_map_pages(HELP_STACK);
		if (!s || mprotect(s, HELP_GUARD, PROT_NONE)) {
			if (s)
				mp_unmap_pages(s, HELP_STACK);
			/* the flusher's rounds; its judgement may try again later */
			atomic_store_explicit(&w->help.on, 0, memory_order_relaxed);
			pthread_mutex_unlock(&w->flush_mu);
			errno = saved;
			return -ENOMEM;
		}
		w->help.stack = s;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
#if ASAN_FIBERS
	__sanitizer_start_switch_fiber(&fake, (uint8_t *)w->help.stack + HELP_GUARD, HELP_STACK - HELP_GUARD);
#endif
	call_on_stack((uint8_t *)w->help.stack + HELP_STACK, help_entry, &c);
#if ASAN_FIBERS
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w->help.rounds++;
	pthread_mutex_unlock(&w->flush_mu);
	errno = saved;
	return 0;
#else
	(void)w;
	return -ENOTSUP;
#endif
}

void mp__help_release(mp_help_t *h)
{
	if (h->stack)
		mp_unmap_pages(h->stack, HELP_STACK);
	h->stack = NULL;
}
