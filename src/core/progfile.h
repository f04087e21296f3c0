/* progfile.h - what a program file asks for when it is exec'd (internal):
 * the dynamic loader named by its PT_INTERP, or the interpreter of its "#!"
 * line. Read with pread from an open file, into the caller's buffers,
 * nothing allocated: `memprof record` asks before it runs CMD
 * (src/cli/record_why.c), and the preload's exec hooks before they exec
 * (allocator_hooks/preload/exec.c). */
#ifndef MP_PROGFILE_H
#define MP_PROGFILE_H

#include <stddef.h>

enum {
	MP_PROG_OTHER,   /* neither a 64-bit ELF file we can judge nor "#!" */
	MP_PROG_STATIC,  /* ELF without PT_INTERP: no loader, nothing preloads */
	MP_PROG_DYNAMIC, /* ELF with a loader: its path in the buffer */
	MP_PROG_SCRIPT,  /* "#!": the interpreter's path in the buffer */
};

/* Which of MP_PROG_* the file open at fd is; the loader's or the
 * interpreter's path into path (NUL-terminated, cut to n - 1 bytes). */
int mp__prog_kind(int fd, char *path, size_t n);

/* Whether the loader at path is another C library's -- musl's
 * (ld-musl-<arch>.so.1), Android's (linker, linker64) -- whose programs
 * fail to start when a preload library needs glibc. */
int mp__prog_loader_foreign(const char *path);

#endif
