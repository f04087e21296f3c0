/* hooks_run.c - see hooks_run.h. */
#include "test_common.h"

#include "hooks_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HK_DEADLINE_MS 60000 /* for one `memprof record` run; the slowest takes a few seconds */

#ifndef HK_MEMPROF
#error "HK_MEMPROF (the memprof binary) must be defined"
#endif

int hk_setup_dir(void **state)
{
	tmpdir_t *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/memprof-hooks-XXXXXX");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->cap, sizeof(t->cap), "%s/cap.memprof", t->dir);
	*state = t;
	return 0;
}

/* Remove dir, its files and its subdirectories' (tests make a few). */
static void remove_tree(const char *dir, int depth)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char p[512];

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p))
			continue; /* not one of ours: the tests' names are short */
		if (unlink(p) != 0 && depth < 4)
			remove_tree(p, depth + 1);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int hk_teardown_dir(void **state)
{
	tmpdir_t *t = *state;

	remove_tree(t->dir, 0);
	free(t);
	return 0;
}

/* Run memprof record with opts (NULL-terminated) -o cap -- victim args;
 * extra environment "K=V" in env (NULL-terminated or NULL). Returns the
 * exit status of memprof record. */
int hk_record(const char *cap, const char *const *opts, const char *victim, const char *const *args,
	      const char *const *env)
{
	return hk_record_logged(cap, NULL, opts, victim, args, env);
}

int hk_record_logged(const char *cap, const char *log, const char *const *opts, const char *victim,
		     const char *const *args, const char *const *env)
{
	pid_t pid = hk_record_start(cap, log, opts, victim, args, env);
	int rc = pid < 0 ? -1 : hk_record_wait(pid, victim);

	if (cap && cap[strlen(cap) - 1] != '/') {
		struct stat sb;
		if (lstat(cap, &sb) != 0 || !S_ISDIR(sb.st_mode))
			hk_link_root(cap);
	}
	return rc;
}

void hk_run_path(const char *cap, char *out, size_t size)
{
	snprintf(out, size, "%s.run", cap);
}

int hk_run_root_pid(const char *cap)
{
	char run[600], marker[700], line[256];
	int pid = -1;
	FILE *f;

	hk_run_path(cap, run, sizeof(run));
	snprintf(marker, sizeof(marker), "%s/memprof.run", run);
	if (!(f = fopen(marker, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "pid=", 4))
			pid = atoi(line + 4);
	fclose(f);
	return pid;
}

void hk_link_root(const char *cap)
{
	char run[600], root[700];
	int pid = hk_run_root_pid(cap);

	hk_run_path(cap, run, sizeof(run));
	snprintf(root, sizeof(root), "%s/%d.memprof", run, pid);
	unlink(cap);
	if (pid > 0 && access(root, F_OK) == 0)
		assert_int_equal(symlink(root, cap), 0);
}

pid_t hk_record_start(const char *cap, const char *log, const char *const *opts, const char *victim,
		      const char *const *args, const char *const *env)
{
	char vpath[512];
	const char *argv[32];
	int n = 0;
	pid_t pid;

	if (victim[0] == '/' || victim[0] == '=')
		snprintf(vpath, sizeof(vpath), "%s", victim + (victim[0] == '='));
	else
		snprintf(vpath, sizeof(vpath), "%s/%s", HK_VICTIM_DIR, victim);
	argv[n++] = HK_MEMPROF;
	argv[n++] = "record";
	while (opts && *opts)
		argv[n++] = *opts++;
	if (cap) { /* NULL: memprof record's default name, in the current directory */
		static char run[600];
		struct stat sb;
		if ((stat(cap, &sb) == 0 && S_ISDIR(sb.st_mode)) || cap[strlen(cap) - 1] == '/') {
			snprintf(run, sizeof(run), "%s", cap); /* -o DIR: as given */
		} else {
			hk_run_path(cap, run, sizeof(run));
			remove_tree(run, 1); /* a test's earlier run under this name */
		}
		argv[n++] = "-o";
		argv[n++] = run;
	}
	argv[n++] = "--";
	argv[n++] = vpath;
	while (args && *args)
		argv[n++] = *args++;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
		setpgid(0, 0); /* memprof record and its victims: one group to kill */
		if (log && (fd < 0 || dup2(fd, 2) < 0))
			_exit(125);
		while (env && *env)
			putenv((char *)(uintptr_t)*env++);
		setenv("MEMPROF_PRELOAD", HK_PRELOAD, 1);
		/* The sanitizer runtime of a sanitized driver must not follow the
		 * preload into the victims. */
		unsetenv("LD_PRELOAD");
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(126);
	}
	if (pid > 0)
		setpgid(pid, pid); /* also here: the group exists before we may kill it */
	return pid;
}

int hk_record_wait(pid_t pid, const char *victim)
{
	int status;

	/* A victim that never ends (the bug some tests are about) fails its
	 * test with a message instead of waiting for ctest's timeout and
	 * leaving the process group behind. */
	if ((status = mp_test_wait_deadline(pid, -pid, HK_DEADLINE_MS)) == -2)
		fprintf(stderr, "'%s' did not end in %d s: killed\n", victim, HK_DEADLINE_MS / 1000);
	return status;
}

char *hk_read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

void hk_replay_ok(const char *cap, hk_stats_t *st)
{
	assert_int_equal(hk_replay(cap, st), 0);
}

/* Names of the captures in cap's run, other than its root's, into names. */
int hk_other_captures(const char *cap, char names[][600], int max)
{
	struct dirent *de;
	char dir[512], root[64];
	DIR *d;
	int n = 0;

	hk_run_path(cap, dir, sizeof(dir));
	snprintf(root, sizeof(root), "%d.memprof", hk_run_root_pid(cap));
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || !strcmp(de->d_name, root) || len < 8 ||
		    strcmp(de->d_name + len - 8, ".memprof") != 0)
			continue; /* not a capture (a test's log, a victim's own file) */
		if (n < max && snprintf(names[n], 600, "%s/%s", dir, de->d_name) >= 600)
			fail_msg("capture path too long: %s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}
