/* progfile.c - a program file's loader or interpreter (progfile.h). */
#include "progfile.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "#!/bin/sh -e" -> "/bin/sh"; -1 when the file does not start with "#!"
 * or names nothing that fits. */
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

int mp__prog_kind(int fd, char *path, size_t n)
{
	unsigned char id[EI_NIDENT];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	if (!n)
		return MP_PROG_OTHER;
	path[0] = '\0';
	/* only our own class: the loader reports another one itself */
	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG) != 0)
		return interpreter(fd, path, n) == 0 ? MP_PROG_SCRIPT : MP_PROG_OTHER;
	if (id[EI_CLASS] != ELFCLASS64 || sizeof(void *) != 8)
		return MP_PROG_OTHER;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || eh.e_phentsize != sizeof(ph))
		return MP_PROG_OTHER;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) != (ssize_t)sizeof(ph))
			return MP_PROG_OTHER;
		if (ph.p_type == PT_INTERP) {
			size_t len = ph.p_filesz < n ? (size_t)ph.p_filesz : n - 1;
			ssize_t got = pread(fd, path, len, (off_t)ph.p_offset);
			path[got > 0 ? (size_t)got : 0] = '\0';
			return MP_PROG_DYNAMIC;
		}
	}
	return MP_PROG_STATIC;
}

int mp__prog_loader_foreign(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	return !strncmp(base, "ld-musl-", 8) || !strcmp(base, "linker") || !strcmp(base, "linker64");
}

/* src into out (n bytes), or -1 when it does not fit */
static int copy(char *out, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		return -1;
	memcpy(out, src, len + 1);
	return 0;
}

int mp__prog_search(const char *file, char *out, size_t n)
{
	const char *path = getenv("PATH"), *p, *end;
	size_t fl = strlen(file);
	struct stat sb;

	if (strchr(file, '/'))
		return copy(out, n, file);
	for (p = path ? path : "/bin:/usr/bin"; *p; p = *end ? end + 1 : end) {
		size_t len;
		end = strchrnul(p, ':');
		len = (size_t)(end - p);
		if (len + fl + 2 > n)
			continue;
		memcpy(out, p, len);
		out[len] = '/';
		memcpy(out + (len ? len + 1 : 0), file, fl + 1); /* an empty entry: this directory */
		if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

int mp__prog_follow(int fd, const char *name, char *file, size_t fn, char *loader, size_t ln, struct stat *sb)
{
	int depth, kind = MP_PROG_OTHER;

	if (file && file != name && copy(file, fn, name))
		file[0] = '\0', file = NULL;
	for (depth = 0; depth < 4; depth++) {
		/* (opened with O_NONBLOCK by whoever opens: a FIFO named as an
		 * interpreter must not hang; only a regular file is judged) */
		if (fd < 0)
			return MP_PROG_OTHER;
		if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
			close(fd);
			return MP_PROG_OTHER;
		}
		kind = mp__prog_kind(fd, loader, ln);
		close(fd);
		if (kind != MP_PROG_SCRIPT)
			return kind;
		if (file && copy(file, fn, loader))
			file[0] = '\0', file = NULL;
		fd = open(loader, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd >= 0)
		close(fd);
	return kind;
}
