/* procfs.h - small reads of /proc for the writer and the preload (internal):
 * plain system calls into the caller's buffer, nothing allocated, so they
 * are safe inside the hooks and on the flusher. */
#ifndef MP_PROCFS_H
#define MP_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* The first size - 1 bytes (at most) of the file at path into buf,
 * NUL-terminated; how many were read, or -1 (buf is then ""). */
ssize_t mp__read_head(const char *path, char *buf, size_t size);

/* In the text of /proc/<pid>/stat, "PID (COMM) STATE ...": the state, the
 * third field (the fields after it follow, one space apart). COMM may hold
 * spaces and parentheses, so it is found after the last ')'. NULL when
 * stat is not of that form. */
const char *mp__stat_state(const char *stat);

#endif
