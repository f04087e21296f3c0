/* progfile.c - a program file's loader or interpreter (progfile.h). */
#include "progfile.h"

#include <elf.h>
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
