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

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* CMD's file as execvp finds it: as given when it has a slash, else the
 * first executable regular file of that name along $PATH. */
static int resolve(const char *cmd, char *out, size_t n)
{
	const char *path = getenv("PATH"), *p, *end;
	struct stat sb;

	if (strchr(cmd, '/'))
		return (size_t)snprintf(out, n, "%s", cmd) < n ? 0 : -1;
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		int len;
		end = strchrnul(p, ':');
		len = (int)(end - p);
		/* an empty PATH entry is the current directory */
		if ((size_t)snprintf(out, n, "%.*s%s%s", len, p, len ? "/" : "", cmd) >= n)
			continue;
		if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* The ELF facts that decide whether the loader can preload into it. */
enum { ELF_NOT, ELF_DYNAMIC, ELF_STATIC, ELF_FOREIGN };

/* Whether the loader at path is another C library's: musl's
 * (ld-musl-<arch>.so.1) or Android's (linker, linker64). */
static int foreign_loader(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	return !strncmp(base, "ld-musl-", 8) || !strcmp(base, "linker") || !strcmp(base, "linker64");
}

/* ELF_* of the file at fd; a dynamic one's loader path into loader. */
static int elf_kind(int fd, char *loader, size_t n)
{
	unsigned char id[EI_NIDENT];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	/* only our own class: another one is reported by the loader itself */
	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG) != 0 ||
	    id[EI_CLASS] != ELFCLASS64 || sizeof(void *) != 8)
		return ELF_NOT;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || eh.e_phentsize != sizeof(ph))
		return ELF_NOT; /* not a file we can judge: say nothing */
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) != (ssize_t)sizeof(ph))
			return ELF_NOT;
		if (ph.p_type == PT_INTERP) {
			size_t len = ph.p_filesz < n ? (size_t)ph.p_filesz : n - 1;
			ssize_t got = pread(fd, loader, len, (off_t)ph.p_offset);
			loader[got > 0 ? (size_t)got : 0] = '\0';
			loader[strnlen(loader, len)] = '\0';
			return foreign_loader(loader) ? ELF_FOREIGN : ELF_DYNAMIC;
		}
	}
	return ELF_STATIC;
}

/* A script's interpreter path into out ("#!/bin/sh -e" -> "/bin/sh"); -1
 * when the file does not start with "#!". */
static int interpreter(int fd, char *out, size_t n)
{
	char line[256];
	ssize_t got = pread(fd, line, sizeof(line) - 1, 0);
	size_t len;
	char *p;

	if (got < 3 || line[0] != '#' || line[1] != '!')
		return -1;
	line[got] = '\0';
	p = line + 2 + strspn(line + 2, " \t");
	len = strcspn(p, " \t\n");
	if (!len || len >= n)
		return -1;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

int mp_cli_untraced_reason(const char *cmd, char *why, size_t n)
{
	char file[4096], interp[256], loader[256];
	int depth, kind, fd;
	struct stat sb;

	if (resolve(cmd, file, sizeof(file)))
		return 0;
	for (depth = 0; depth < 4; depth++) { /* a script's interpreter may be a script (Linux allows 4) */
		/* O_NONBLOCK: a FIFO named as an interpreter must not hang us
		 * (only a regular file is judged) */
		if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
			return 0;
		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			close(fd);
			return 0;
		}
		if (((sb.st_mode & S_ISUID) && sb.st_uid != geteuid()) ||
		    ((sb.st_mode & S_ISGID) && sb.st_gid != getegid())) {
			close(fd);
			snprintf(why, n,
				 "'%s' is set%cid: it starts in secure mode, where the loader ignores LD_PRELOAD "
				 "and memprof never traces",
				 file, (sb.st_mode & S_ISUID) && sb.st_uid != geteuid() ? 'u' : 'g');
			return MP_UNTRACED_NO_LOADER;
		}
		kind = elf_kind(fd, loader, sizeof(loader));
		if (kind == ELF_NOT && interpreter(fd, interp, sizeof(interp)) == 0) {
			close(fd);
			snprintf(file, sizeof(file), "%s", interp);
			continue;
		}
		close(fd);
		if (kind == ELF_FOREIGN) {
			snprintf(why, n,
				 "'%s' is linked against another C library (its loader is '%s'), which cannot "
				 "load the preload library (built for glibc): memprof ran it untraced",
				 file, loader);
			return MP_UNTRACED_FOREIGN;
		}
		if (kind != ELF_STATIC)
			return 0;
		snprintf(why, n,
			 "'%s' is statically linked: it has no dynamic loader to load the preload library, "
			 "so memprof cannot hook its allocations",
			 file);
		return MP_UNTRACED_NO_LOADER;
	}
	return 0;
}
