/* memprof/run.h - a run: the captures of every process one `memprof
 * record` traced, in one directory, read as one tree (docs/format.md,
 * "Runs").
 *
 * A launch chain -- a pyenv or conda shim, a shell wrapper, a launcher
 * that forks workers -- is many processes, and each writes its own capture
 * (so that a process killed mid-run damages nothing but its own file's
 * end). The run puts them back together: which process started which,
 * which program each pid exec'd into, and which of them is the *main*
 * process that commands analyse by default:
 *
 *   the capture with the largest peak in use (the largest of its memory
 *   ids' peaks, as `report` gives them); on a tie the longest-lived; then
 *   the earliest.
 *
 * A process is a pid; the programs it ran one after the other (exec) are
 * its exec chain, one capture each. Entries here are captures.
 */
#ifndef MEMPROF_RUN_H
#define MEMPROF_RUN_H

#include <memprof/error.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The file that marks a directory as a run, written by `memprof record`. */
#define MP_RUN_MARKER "memprof.run"

/* How a capture's program ended. */
typedef enum {
	MP_PROC_EXITED = 0,  /* closed its capture: exit, or the end of the program */
	MP_PROC_EXECED,      /* closed it to exec another program (the next in its chain) */
	MP_PROC_ABRUPT,      /* no trailer: killed, crashed, or still running; read to its last flush */
	MP_PROC_UNREADABLE,  /* not a capture memprof can read (see error) */
	MP_PROC_WRITE_FAILED, /* its writer stopped (disk full, file size limit: write_errno) and
				 said so; read to its last flush */
} mp_proc_end_t;

/* One memory id's figures in one capture: bytes in use, as report counts
 * them (what the allocator reserved for each block, else what was
 * requested). */
typedef struct mp_run_memory {
	const char *name;         /* "host", "host_mmap", ...; owned by the run */
	uint64_t peak_bytes;
	uint64_t peak_time_ns;    /* the first event at that peak, in the capture's time (report's "at") */
	uint64_t allocations;     /* a realloc is a free and an allocation, as in report */
	uint64_t frees;
	uint64_t live_blocks, live_bytes; /* at the capture's end */
} mp_run_memory_t;

typedef struct mp_run_proc {
	const char *path;         /* the capture file; owned by the run */
	const char *name;         /* its file name within the run, "1234-1.memprof" */
	uint64_t pid, ppid;       /* ppid 0: not recorded (a capture before format 2.1) */
	uint32_t exec_index;      /* 0: the first program of this pid in the run; n: after n execs */
	const char *command_line; /* "" when unreadable */
	const char *exe;          /* the executable's path, "" when not recorded */
	uint64_t start_wall_ns;   /* ns since the Unix epoch */
	uint64_t end_wall_ns;     /* its last event or close (start when unknown) */
	mp_proc_end_t end;
	int reaped;               /* 1: a traced parent reaped it (the last program of its pid) */
	int status;               /* ... with this wait status (<sys/wait.h>'s W* macros read it) */
	const char *error;        /* MP_PROC_UNREADABLE: why; owned by the run */
	int write_errno;          /* MP_PROC_WRITE_FAILED: the errno that stopped the writer, */
	uint64_t write_offset;    /* ... the capture's size then, */
	uint64_t complete_ns;     /* ... its last horizon (ns from its start): later events may be missing */
	uint64_t events;
	int parent;               /* the capture that forked it, or the one it exec'd from; -1: the root */
	int exec_next;            /* the program this one exec'd into, or -1 */
	int depth;                /* 0 for the root; forked children one more than their parent */
	size_t memory_count;
	const mp_run_memory_t *memories;
	uint64_t peak_bytes;      /* the largest of memories[].peak_bytes */
	int helper;               /* 1: only a stepping stone (see mp_run_proc_is_helper) */
} mp_run_proc_t;

typedef struct mp_run mp_run_t;

/* 1 when path is a run directory (a directory holding MP_RUN_MARKER). */
int mp_run_is_run(const char *path);

/* Read a run: every capture's header and figures (not its events, when the
 * capture holds a summary), and the tree. A capture that cannot be read is
 * listed as MP_PROC_UNREADABLE, not an error. On success *out is owned by
 * the caller: mp_run_close(). Errors: the directory or its marker cannot
 * be read, or it holds no capture at all. */
int mp_run_open(mp_run_t **out, const char *path, mp_diag_t *diag);
void mp_run_close(mp_run_t *run);

/* The run's path as given, the command `memprof record` ran (the marker's
 * "command"), and how it ended ("exit 0", "signal 9 (Killed)"; "" when
 * memprof record did not see it end). Borrowed. */
const char *mp_run_path(const mp_run_t *run);
const char *mp_run_command(const mp_run_t *run);
const char *mp_run_outcome(const mp_run_t *run);

/* The number (from 1) of the first line of the run's MP_RUN_ENDS file
 * (<memprof/format.h>) that is not "PID STATUS WALL_NS", skipped; 0 when
 * every line was one, or there is no such file. */
size_t mp_run_ends_bad_line(const mp_run_t *run);

/* The captures in tree order: each after its parent, siblings by start
 * time, a program right after the one that exec'd into it. Borrowed. */
size_t mp_run_count(const mp_run_t *run);
const mp_run_proc_t *mp_run_proc(const mp_run_t *run, size_t i);

/* The main process's capture (the rule at the top), or -1 when no capture
 * is readable. */
int mp_run_main(const mp_run_t *run);

/* The capture of pid with the largest peak (the program that did the
 * work, in a pid that exec'd), or -1 when the run has no such pid. */
int mp_run_find_pid(const mp_run_t *run, uint64_t pid);

#ifdef __cplusplus
}
#endif
#endif
