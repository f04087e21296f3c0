/* record_why.c - why `memprof record` got no capture from a program that
 * ran.
 *
 * The hooks reach a program only through the dynamic loader's LD_PRELOAD.
 * Two kinds of program never load them, silently, and both are common
 * enough that a bare "no capture was written" leaves the user guessing:
 *   - statically linked programs (most Go binaries, busybox, musl builds)
 *     have no loader at all: no PT_INTERP program header;
 *   - setuid/setgid programs run by another user start in secure mode, and
 *     then the loader ignores LD_PRELOAD paths with slashes (and the hooks
 *     would stay off anyway: docs/hooks.md).
 * (A 32-bit program does start the loader, which prints why it skipped the
 * 64-bit library: the generic warning points at that message.) A script is
 * judged by its interpreter (#!), the program that really runs.
 *
 * A third kind must not even be given the preload: a program linked against
 * another C library (musl: Alpine's builds, musl-gcc) has that library's
 * loader, which fails to start the program at all when a preload library
 * needs glibc. `memprof record` asks first and runs such a program
 * untraced.
 */
#include "cli.h"
#include "progfile.h" /* allocator_hooks/preload: the reader the exec hooks use too */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mp_cli_untraced_reason(const char *cmd, char *why, size_t n)
{
	char file[4096], loader[256];
	struct stat sb;
	int kind;

	if (mp__prog_search(cmd, file, sizeof(file)))
		return 0;
	kind = mp__prog_follow(open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK), file, file, sizeof(file), loader,
			       sizeof(loader), &sb);
	if (kind == MP_PROG_OTHER || kind == MP_PROG_SCRIPT)
		return 0;
	if (((sb.st_mode & S_ISUID) && sb.st_uid != geteuid()) || ((sb.st_mode & S_ISGID) && sb.st_gid != getegid())) {
		snprintf(why, n,
			 "'%s' is set%cid: it starts in secure mode, where the loader ignores LD_PRELOAD "
			 "and memprof never traces",
			 file, (sb.st_mode & S_ISUID) && sb.st_uid != geteuid() ? 'u' : 'g');
		return MP_UNTRACED_NO_LOADER;
	}
	if (kind == MP_PROG_DYNAMIC && mp__prog_loader_foreign(loader)) {
		snprintf(why, n,
			 "'%s' is linked against another C library (its loader is '%s'), which cannot "
			 "load the preload library (built for glibc): memprof ran it untraced",
			 file, loader);
		return MP_UNTRACED_FOREIGN;
	}
	if (kind != MP_PROG_STATIC)
		return 0;
	snprintf(why, n,
		 "'%s' is statically linked: it has no dynamic loader to load the preload library, "
		 "so memprof cannot hook its allocations",
		 file);
	return MP_UNTRACED_NO_LOADER;
}
