/* exec.c - the process-ending calls: exec*, _exit, _Exit, abort, and a
 * signal a process sends itself that will end it (kill, raise).
 *
 * exec replaces the process image without running exit handlers, and
 * _exit/_Exit/abort end it without them: each would leave the last flush
 * interval of events unwritten and the capture without its trailer. So the
 * capture is closed first (complete and clean). The same for a fatal
 * signal sent to itself: CPython, on Ctrl-C, finalizes, restores SIGINT's
 * default action and kill()s itself with it (so that its parent sees it
 * die of SIGINT), and every interrupted Python program left a capture that
 * ended abruptly, its last ~90 ms missing. If exec fails, recording
 * continues into a new capture. The exec'd program is traced by its own
 * copy of the preload (LD_PRELOAD is inherited) unless --no-children --
 * or unless it is a program of another C library (musl), whose loader
 * would not even start it with our glibc library in LD_PRELOAD: that one
 * is exec'd with our library taken out of its environment's LD_PRELOAD.
 */
#include "preload.h"
#include "arena.h"    /* mp_map_pages: argument arrays too long for the stack */
#include "progfile.h" /* what the program exec'd asks for: its loader */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The originals, looked up once at load time (dlsym later could block on
 * the loader's lock in a forked child), or on first use if that failed. */
typedef void (*any_fn)(void);
static any_fn orig[12];
static const char *const orig_names[12] = {"execve", "execvpe",     "fexecve",      "execveat", "_exit", "_Exit",
					    "abort",  "posix_spawn", "posix_spawnp", "kill",     "raise", NULL};
enum { O_EXECVE, O_EXECVPE, O_FEXECVE, O_EXECVEAT, O_EXIT, O_UEXIT, O_ABORT, O_SPAWN, O_SPAWNP, O_KILL, O_RAISE };

static any_fn lookup(int i)
{
	if (!orig[i])
		*(void **)&orig[i] = dlsym(RTLD_NEXT, orig_names[i]); /* POSIX's idiom */
	return orig[i];
}

static void __attribute__((constructor)) exec_init(void)
{
	int i;

	for (i = 0; orig_names[i]; i++)
		lookup(i);
}

#define REAL(idx, type) ((type)lookup(idx))

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef void (*exit_fn)(int);
typedef void (*abort_fn)(void);
typedef int (*kill_fn)(pid_t, int);
typedef int (*raise_fn)(int);

extern char **environ;

/* Close before the image goes away; 1 if a capture was being written. */
static int before_exec(void)
{
	int st = atomic_load(&mp__state);

	if (mp__guard || (st != MP_ST_ACTIVE && st != MP_ST_OFF) || !mp__session_owned())
		return 0; /* nothing open, inside a hook, or a vfork child */
	mp__guard = 1;
	mp__session_close();
	mp__guard = 0;
	return 1;
}

static void after_failed_exec(int was, int e)
{
	if (was) {
		mp__guard = 1;
		mp__session_reopen();
		mp__guard = 0;
	}
	errno = e;
}

/* --- programs of another C library ------------------------------------- */

#define PRELOAD_VAR "LD_PRELOAD="

/* envp's LD_PRELOAD entry when it names our library, else NULL. */
static const char *our_preload(char *const envp[])
{
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, PRELOAD_VAR, sizeof(PRELOAD_VAR) - 1))
			return strstr(*envp, PRELOAD_NAME) ? *envp : NULL;
	return NULL;
}

/* Whether the program file open at fd (closed here) has another C
 * library's loader, following "#!" interpreters as the kernel does. */
static int fd_foreign(int fd)
{
	char loader[256];
	struct stat sb;

	return mp__prog_follow(fd, "", NULL, 0, loader, sizeof(loader), &sb) == MP_PROG_DYNAMIC &&
	       mp__prog_loader_foreign(loader);
}

static int path_foreign(int dirfd, const char *path, int flags)
{
	if (!*path && (flags & AT_EMPTY_PATH))
		return fd_foreign(dup(dirfd));
	return fd_foreign(openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
						     (flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0)));
}

/* execvpe's file as it would find it along $PATH (glibc searches the
 * caller's PATH, not envp's): whether it is another C library's. */
static int search_foreign(const char *file)
{
	char path[1024]; /* this may run on a thread with a 16 KiB stack */

	return mp__prog_search(file, path, sizeof(path)) == 0 && path_foreign(AT_FDCWD, path, 0);
}

/* envp with our library taken out of its LD_PRELOAD (the entry dropped
 * when nothing else is left), built in a mapping of *size bytes (only for
 * a program of another C library, which is rare; a vfork child that execs
 * one leaves that page in its parent); NULL when none can be made. */
static char **env_without_us(char *const envp[], const char *entry, size_t *size)
{
	size_t n = 0, i, j = 0, o = sizeof(PRELOAD_VAR) - 1, len = strlen(entry);
	char **out, *s;

	while (envp[n])
		n++;
	*size = (n + 1) * sizeof(char *) + len + 1;
	if (!(out = mp_map_pages(*size)))
		return NULL;
	s = (char *)(out + n + 1);
	memcpy(s, PRELOAD_VAR, o);
	o += mp__preload_others(entry + o, s + o, len + 1 - o);
	for (i = 0; i < n; i++)
		if (envp[i] != entry)
			out[j++] = envp[i];
		else if (o > sizeof(PRELOAD_VAR) - 1)
			out[j++] = s;
	out[j] = NULL;
	return out;
}

/* The environment to exec with: envp, or (foreign: the callers check
 * our_preload(envp) first, so that no program file is read when our
 * library is not being passed on) a mapping made by env_without_us, to
 * unmap if exec returns. */
typedef struct {
	char **envp;
	size_t mapped;
} exec_env_t;

static void env_for(exec_env_t *x, char *const envp[], int foreign, int saved_errno)
{
	const char *entry;
	char **out;

	x->envp = (char **)(uintptr_t)envp;
	x->mapped = 0;
	if (foreign && (entry = our_preload(envp)) && (out = env_without_us(envp, entry, &x->mapped)))
		x->envp = out;
	errno = saved_errno; /* what looking at the program's file set */
}

static void env_done(exec_env_t *x)
{
	int e = errno;

	if (x->mapped)
		mp_unmap_pages(x->envp, x->mapped);
	errno = e;
}

MP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn real = REAL(O_EXECVE, execve_fn);
	int was = before_exec(), rc, e = errno;
	exec_env_t x;

	env_for(&x, envp, our_preload(envp) && path_foreign(AT_FDCWD, path, 0), e);
	rc = real(path, argv, x.envp);
	env_done(&x);
	after_failed_exec(was, errno);
	return rc;
}

MP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn real = REAL(O_EXECVPE, execvpe_fn);
	int was = before_exec(), rc, e = errno;
	exec_env_t x;

	env_for(&x, envp, our_preload(envp) && search_foreign(file), e);
	rc = real(file, argv, x.envp);
	env_done(&x);
	after_failed_exec(was, errno);
	return rc;
}

MP_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

MP_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

MP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn real = REAL(O_FEXECVE, fexecve_fn);
	int was = before_exec(), rc, e = errno;
	exec_env_t x;

	env_for(&x, envp, our_preload(envp) && path_foreign(fd, "", AT_EMPTY_PATH), e);
	rc = real(fd, argv, x.envp);
	env_done(&x);
	after_failed_exec(was, errno);
	return rc;
}

MP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	execveat_fn real = REAL(O_EXECVEAT, execveat_fn);
	int was = before_exec(), rc, e = errno;
	exec_env_t x;

	env_for(&x, envp, our_preload(envp) && path_foreign(dirfd, path, flags), e);
	rc = real(dirfd, path, argv, x.envp, flags);
	env_done(&x);
	after_failed_exec(was, errno);
	return rc;
}

/* posix_spawn and posix_spawnp: nothing to close (this process goes on),
 * but a program of another C library gets an environment without our
 * library, as with exec. glibc returns once the child has exec'd or failed
 * (it spawns with CLONE_VFORK), so the changed environment can go at once.
 * (system and popen spawn a shell inside glibc, out of our reach; but the
 * shell is traced, and its own exec of the program comes here.) */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			char *const[], char *const[]);

static int spawn(int which, int foreign, pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[], int saved_errno)
{
	spawn_fn real = REAL(which, spawn_fn);
	exec_env_t x;
	int rc;

	env_for(&x, envp, foreign, saved_errno);
	rc = real(pid, file, fa, attr, argv, x.envp);
	env_done(&x);
	return rc;
}

MP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	int e = errno;

	return spawn(O_SPAWN, our_preload(envp) && path_foreign(AT_FDCWD, path, 0), pid, path, fa, attr, argv, envp,
		     e);
}

MP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	int e = errno;

	return spawn(O_SPAWNP, our_preload(envp) && search_foreign(file), pid, file, fa, attr, argv, envp, e);
}

/* execl, execlp, execle: the variadic arguments as an array, as many as
 * the caller passed (glibc's own have no limit but the kernel's ARG_MAX).
 * Up to SMALL_ARGS on the stack -- this may run on a thread whose stack is
 * PTHREAD_STACK_MIN -- and more in a mapping (no malloc inside the hooks). */
#define SMALL_ARGS 64

typedef struct {
	char **argv;
	size_t mapped; /* bytes, when argv is a mapping */
	char *small[SMALL_ARGS];
} args_t;

static int args_take(args_t *a, const char *arg0, va_list ap, char ***envp)
{
	size_t n = 0, i;
	va_list c;

	va_copy(c, ap);
	if (arg0)
		for (n = 1; va_arg(c, const char *); n++)
			;
	va_end(c);
	a->mapped = 0;
	a->argv = a->small;
	if (n + 1 > SMALL_ARGS) {
		a->mapped = (n + 1) * sizeof(char *);
		if (!(a->argv = mp_map_pages(a->mapped)))
			return -1;
	}
	for (i = 0; i < n; i++)
		a->argv[i] = (char *)(uintptr_t)(i ? va_arg(ap, const char *) : arg0);
	if (n)
		(void)va_arg(ap, const char *); /* the NULL that ends them */
	a->argv[n] = NULL;
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

/* After a failed exec: free the mapping, keep exec's errno. */
static int args_done(args_t *a, int rc)
{
	int e = errno;

	if (a->mapped)
		mp_unmap_pages(a->argv, a->mapped);
	errno = e;
	return rc;
}

MP_EXPORT int execl(const char *path, const char *arg, ...)
{
	args_t a;
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = args_take(&a, arg, ap, NULL);
	va_end(ap);
	if (rc)
		return -1; /* ENOMEM, from mmap */
	return args_done(&a, execve(path, a.argv, environ));
}

MP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	args_t a;
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = args_take(&a, arg, ap, NULL);
	va_end(ap);
	if (rc)
		return -1;
	return args_done(&a, execvpe(file, a.argv, environ));
}

MP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **envp = NULL;
	args_t a;
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = args_take(&a, arg, ap, &envp);
	va_end(ap);
	if (rc)
		return -1;
	return args_done(&a, execve(path, a.argv, envp));
}

MP_EXPORT void _exit(int status)
{
	exit_fn real = REAL(O_EXIT, exit_fn);

	before_exec();
	real(status);
	__builtin_unreachable();
}

MP_EXPORT void _Exit(int status)
{
	exit_fn real = REAL(O_UEXIT, exit_fn);

	before_exec();
	real(status);
	__builtin_unreachable();
}

MP_EXPORT void abort(void)
{
	abort_fn real = REAL(O_ABORT, abort_fn);

	before_exec();
	real();
	__builtin_unreachable();
}

/* --- a fatal signal sent to oneself ------------------------------------- */

/* Whether sig, sent to this process by this thread now, ends it: its
 * action is the default one and that is to terminate (with or without a
 * core), and this thread does not block it (the kernel then hands it to
 * this thread, on the way back from the call). Anything else -- a handler,
 * SIG_IGN, a blocked signal, a stop -- lets the process go on recording. */
static int ends_us(int sig)
{
	struct sigaction sa;
	sigset_t mask;

	switch (sig) {
	case SIGKILL:
		return 1;
	case SIGCHLD: case SIGCONT: case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU: case SIGURG:
	case SIGWINCH:
		return 0; /* ignored or stopping by default */
	default:
		break;
	}
	if (sig <= 0 || sig >= NSIG || sigaction(sig, NULL, &sa) || sa.sa_handler != SIG_DFL)
		return 0;
	return pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0 && !sigismember(&mask, sig);
}

/* kill(getpid(), sig) or kill(0, sig) (the process group: this process
 * too). Should the process live on after all (another thread changed the
 * action meanwhile), recording goes on into a new capture, as after a
 * failed exec. */
MP_EXPORT int kill(pid_t pid, int sig)
{
	kill_fn real = REAL(O_KILL, kill_fn);
	int was = (pid == 0 || pid == getpid()) && ends_us(sig) ? before_exec() : 0, rc;

	rc = real(pid, sig);
	after_failed_exec(was, errno);
	return rc;
}

MP_EXPORT int raise(int sig)
{
	raise_fn real = REAL(O_RAISE, raise_fn);
	int was = ends_us(sig) ? before_exec() : 0, rc;

	rc = real(sig);
	after_failed_exec(was, errno);
	return rc;
}
