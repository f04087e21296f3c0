/* reap.c - how the run's processes ended, as the parents that reaped them
 * saw it: wait, waitpid, wait3, wait4 and waitid.
 *
 * A capture without its trailer says only that its process did not close
 * it: killed, crashed, or stopped by a parent (a multiprocessing pool's
 * terminate(), a launcher tearing its workers down after one failed, the
 * kernel's OOM killer, whose SIGKILL no code of the process sees). The
 * parent that reaps it is told which, by the wait status. So in a run
 * directory every traced process that reaps a child appends a line
 * "PID STATUS WALL_NS" to the run's MP_RUN_ENDS file (docs/format.md,
 * "Runs"): the child's pid, its wait status, and the CLOCK_REALTIME time
 * of the reap, which tells a reused pid's programs apart. One write with
 * O_APPEND: lines from several processes do not mix.
 *
 * The program sees the same calls, with the same results and errno (a
 * NULL status pointer is given a status of ours, then left alone). The
 * line is written with raw system calls: glibc's open and write are
 * cancellation points, and a thread cancelled there would lose the child
 * its wait just reaped. A SIGCHLD handler may call waitpid: nothing here
 * allocates or locks. A parent that is not traced, or that reaps with
 * glibc's internal calls (system(), pclose()), writes no line: the child
 * then reads as before, "abrupt" when its capture has no trailer.
 */
#include "preload.h"

#include <memprof/format/run_ends.h>

#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

typedef pid_t (*wait_fn)(int *);
typedef pid_t (*waitpid_fn)(pid_t, int *, int);
typedef pid_t (*wait3_fn)(int *, int, struct rusage *);
typedef pid_t (*wait4_fn)(pid_t, int *, int, struct rusage *);
typedef int (*waitid_fn)(idtype_t, id_t, siginfo_t *, int);

/* The originals, looked up at load time as exec.c's are (dlsym later
 * could block on the loader's lock in a forked child), else at first use. */
typedef void (*any_fn)(void);
static any_fn orig[5];
static const char *const orig_names[5] = {"wait", "waitpid", "wait3", "wait4", "waitid"};
enum { O_WAIT, O_WAITPID, O_WAIT3, O_WAIT4, O_WAITID };

static any_fn lookup(int i)
{
	if (!orig[i])
		*(void **)&orig[i] = dlsym(RTLD_NEXT, orig_names[i]); /* POSIX's idiom */
	return orig[i];
}

static void __attribute__((constructor)) reap_init(void)
{
	for (int i = 0; i < 5; i++)
		lookup(i);
}

/* Child pid reaped with status: its line, when this process is in a run
 * (mp_run_ends_append: only ends, raw system calls, errno kept). */
static void note(pid_t pid, int status)
{
	const char *path = mp__session_ends();

	if (pid > 0 && path)
		(void)mp_run_ends_append(path, (uint64_t)pid, status);
}

/* After the original returned r with status st into ours (called first,
 * not as an argument beside st: the order in which arguments are
 * evaluated is unspecified): a reaped child's end noted, and the status
 * where the caller asked for it. */
static pid_t reaped(pid_t r, int st, int *status)
{
	if (r > 0) {
		note(r, st);
		if (status)
			*status = st;
	}
	return r;
}

MP_EXPORT pid_t wait(int *status)
{
	int st = 0;
	pid_t r = ((wait_fn)lookup(O_WAIT))(&st);

	return reaped(r, st, status);
}

MP_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	int st = 0;
	pid_t r = ((waitpid_fn)lookup(O_WAITPID))(pid, &st, options);

	return reaped(r, st, status);
}

MP_EXPORT pid_t wait3(int *status, int options, struct rusage *usage)
{
	int st = 0;
	pid_t r = ((wait3_fn)lookup(O_WAIT3))(&st, options, usage);

	return reaped(r, st, status);
}

MP_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
	int st = 0;
	pid_t r = ((wait4_fn)lookup(O_WAIT4))(pid, &st, options, usage);

	return reaped(r, st, status);
}

/* waitid gives the status as a siginfo: made a wait status again. WNOWAIT
 * leaves the child to be reaped (and noted) later. */
MP_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	siginfo_t mine, *in = info ? info : &mine; /* (Linux takes NULL; the reap is the same) */
	int r = ((waitid_fn)lookup(O_WAITID))(idtype, id, in, options);

	/* (WNOHANG with no child ready: Linux gives si_pid 0) */
	if (r == 0 && in->si_signo == SIGCHLD && in->si_pid > 0 && !(options & WNOWAIT)) {
		if (in->si_code == CLD_EXITED)
			note(in->si_pid, (in->si_status & 0xff) << 8);
		else if (in->si_code == CLD_KILLED)
			note(in->si_pid, in->si_status & 0x7f);
		else if (in->si_code == CLD_DUMPED)
			note(in->si_pid, (in->si_status & 0x7f) | 0x80);
	}
	return r;
}
