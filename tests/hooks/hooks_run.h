/* hooks_run.h - shared by the hooks tests: a temporary directory per
 * test, running `memprof record` on a victim, replaying its capture. */
#ifndef MP_HOOKS_RUN_H
#define MP_HOOKS_RUN_H

#include "hooks_check.h"

#include <sys/types.h>

typedef struct {
	char dir[64];
	char cap[128];
} tmpdir_t;

/* cmocka setup/teardown: *state is a fresh tmpdir_t (removed with its files). */
int hk_setup_dir(void **state);
int hk_teardown_dir(void **state);

/* Run `memprof record OPTS -o cap.run -- VICTIM ARGS` (victim: a name in
 * the victims' build directory, an absolute path, or "=CMD" for CMD as
 * given, looked up in PATH as memprof record does; cap NULL: no -o), with
 * extra environment "K=V" strings (all lists NULL-terminated or NULL).
 * Returns the exit status of memprof record (128 + N when it was killed by
 * signal N). The run is the directory cap.run (an earlier one of that name
 * is removed first); cap itself becomes a symbolic link to the capture of
 * CMD's own first program in it (none when it wrote none), which is what
 * most tests read. */
int hk_record(const char *cap, const char *const *opts, const char *victim, const char *const *args,
	      const char *const *env);
/* The same, with memprof record's standard error (where it reports) in the
 * file log. */
int hk_record_logged(const char *cap, const char *log, const char *const *opts, const char *victim,
		     const char *const *args, const char *const *env);

/* hk_record_logged in two steps: start memprof record (its own process
 * group, led by the pid returned; -1 when fork failed), then wait for it
 * (its exit status as hk_record's; the victim's name for the message when
 * the deadline kills it). */
pid_t hk_record_start(const char *cap, const char *log, const char *const *opts, const char *victim,
		      const char *const *args, const char *const *env);
int hk_record_wait(pid_t pid, const char *victim);

/* The text of the file at path (up to 64 KiB), NUL-terminated, failing the
 * test if it cannot be read. Owned by the caller (free). */
char *hk_read_text(const char *path);

/* Replay cap into st, failing the test if it cannot be read. */
void hk_replay_ok(const char *cap, hk_stats_t *st);

/* Paths of the captures in cap's run other than its root's (at most max);
 * returns how many there are. */
int hk_other_captures(const char *cap, char names[][600], int max);

/* cap's run directory ("cap.run"), the pid of CMD in it (its marker; -1:
 * none), and cap linked to that pid's first capture (hk_record does it). */
void hk_run_path(const char *cap, char *out, size_t size);
int hk_run_root_pid(const char *cap);
void hk_link_root(const char *cap);

#endif
