/* progfile.h - what a program file asks for when it is exec'd (internal):
 * the dynamic loader named by its PT_INTERP, or the interpreter of its "#!"
 * line. Read with pread from an open file, into the caller's buffers,
 * nothing allocated: `memprof record` asks before it runs CMD
 * (src/cli/record_why.c), and the preload's exec hooks before they exec
 * (allocator_hooks/preload/exec.c). */
#ifndef MP_PROGFILE_H
#define MP_PROGFILE_H

#include <stddef.h>
#include <sys/stat.h>

enum {
	MP_PROG_OTHER,   /* neither a 64-bit ELF file we can judge nor "#!" */
	MP_PROG_STATIC,  /* ELF without PT_INTERP: no loader, nothing preloads */
	MP_PROG_DYNAMIC, /* ELF with a loader: its path in the buffer */
	MP_PROG_SCRIPT,  /* "#!": the interpreter's path in the buffer */
};

/* Which of MP_PROG_* the file open at fd is; the loader's or the
 * interpreter's path into path (NUL-terminated, cut to n - 1 bytes). */
int mp__prog_kind(int fd, char *path, size_t n);

/* The file execvp would run for file: file itself when it has a slash,
 * else the first executable regular file of that name along $PATH
 * (glibc's default path when PATH is unset; an empty entry is the current
 * directory), into out. 0, or -1 when there is none or it does not fit in
 * n bytes. No stdio: this may run on a thread with a 16 KiB stack. */
int mp__prog_search(const char *file, char *out, size_t n);

/* What exec'ing the program open at fd (named name; fd is closed here, and
 * may be -1) runs in the end, following "#!" interpreters as Linux does (at
 * most 4 files): the MP_PROG_* of the last file -- MP_PROG_OTHER when one
 * of them cannot be opened or is not a regular file, MP_PROG_SCRIPT when
 * the chain is deeper -- with its path in file (fn bytes; file may be NULL,
 * or name itself), its loader's path in loader (ln bytes) and its stat in
 * *sb (setuid and setgid bits count there only: Linux ignores them on
 * scripts). */
int mp__prog_follow(int fd, const char *name, char *file, size_t fn, char *loader, size_t ln, struct stat *sb);

/* Whether the loader at path is another C library's -- musl's
 * (ld-musl-<arch>.so.1), Android's (linker, linker64) -- whose programs
 * fail to start when a preload library needs glibc. */
int mp__prog_loader_foreign(const char *path);

#endif
