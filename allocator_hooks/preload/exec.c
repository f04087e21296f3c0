/* exec.c - the process-ending calls: exec*, _exit, _Exit, abort.
 *
 * exec replaces the process image without running exit handlers, and
 * _exit/_Exit/abort end it without them: each would leave the last flush
 * interval of events unwritten and the capture without its trailer. So the
 * capture is closed first (complete and clean). If exec fails, recording
 * continues into a new capture. The exec'd program is traced by its own
 * copy of the preload (LD_PRELOAD is inherited) unless --no-children.
 */
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

/* The originals, looked up once at load time (dlsym later could block on
 * the loader's lock in a forked child), or on first use if that failed. */
typedef void (*any_fn)(void);
static any_fn orig[8];
static const char *const orig_names[8] = {"execve", "execvpe", "fexecve", "execveat",
					   "_exit", "_Exit", "abort", NULL};
enum { O_EXECVE, O_EXECVPE, O_FEXECVE, O_EXECVEAT, O_EXIT, O_UEXIT, O_ABORT };

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

MP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn real = REAL(O_EXECVE, execve_fn);
	int was = before_exec(), rc;

	rc = real(path, argv, envp);
	after_failed_exec(was, errno);
	return rc;
}

MP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn real = REAL(O_EXECVPE, execvpe_fn);
	int was = before_exec(), rc;

	rc = real(file, argv, envp);
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
	int was = before_exec(), rc;

	rc = real(fd, argv, envp);
	after_failed_exec(was, errno);
	return rc;
}

MP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	execveat_fn real = REAL(O_EXECVEAT, execveat_fn);
	int was = before_exec(), rc;

	rc = real(dirfd, path, argv, envp, flags);
	after_failed_exec(was, errno);
	return rc;
}

/* execl, execlp, execle: collect the variadic arguments into an array. */
#define MAX_ARGS 4096

static int collect(const char *arg0, va_list ap, char **argv, char ***envp)
{
	int n = 0;
	const char *a = arg0;

	while (a) {
		if (n >= MAX_ARGS - 1)
			return -1;
		argv[n++] = (char *)(uintptr_t)a;
		a = va_arg(ap, const char *);
	}
	argv[n] = NULL;
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

MP_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_ARGS];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect(arg, ap, argv, NULL);
	va_end(ap);
	if (rc) {
		errno = E2BIG;
		return -1;
	}
	return execve(path, argv, environ);
}

MP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_ARGS];
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect(arg, ap, argv, NULL);
	va_end(ap);
	if (rc) {
		errno = E2BIG;
		return -1;
	}
	return execvpe(file, argv, environ);
}

MP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_ARGS];
	char **envp = NULL;
	va_list ap;
	int rc;

	va_start(ap, arg);
	rc = collect(arg, ap, argv, &envp);
	va_end(ap);
	if (rc) {
		errno = E2BIG;
		return -1;
	}
	return execve(path, argv, envp);
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
