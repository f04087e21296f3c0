/* record_run.c - the run directory of a `memprof record` (see record.h):
 * created for CMD before it starts, told how CMD ended, summarised, and
 * with --main-only cut down to the program the launch chain ended in. */
#include "record.h"

#include <memprof/format.h>
#include <memprof/format/run_ends.h>
#include <memprof/report_doc.h>
#include <memprof/output/units.h>
#include <memprof/run.h>

#include "cli.h"
#include "runs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int mp_cli_run_create(const char *path, char *const *cmd, long pid)
{
	char marker[PATH_MAX + 32];
	struct timespec ts;
	FILE *f;
	int i;

	if (mkdir(path, 0777) != 0)
		return -errno;
	snprintf(marker, sizeof(marker), "%s/%s", path, MP_RUN_MARKER);
	if (!(f = fopen(marker, "wx"))) {
		int e = errno;
		rmdir(path);
		return -e;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(f, "memprof-run 1\ncommand=");
	for (i = 0; cmd[i]; i++) {
		const char *c;
		if (i)
			fputc(' ', f);
		for (c = cmd[i]; *c; c++) /* one line: a newline in an argument is shown as a space */
			fputc(*c == '\n' ? ' ' : *c, f);
	}
	fprintf(f, "\npid=%ld\nstarted=%" PRIu64 "\n", pid,
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	return fclose(f) == 0 ? 0 : -EIO;
}

void mp_cli_run_ended(const char *path, const char *outcome)
{
	char marker[PATH_MAX + 32];
	FILE *f;

	snprintf(marker, sizeof(marker), "%s/%s", path, MP_RUN_MARKER);
	if ((f = fopen(marker, "a"))) {
		fprintf(f, "ended=%s\n", outcome);
		fclose(f);
	}
}

void mp_cli_run_note_end(const char *path, long pid, int status)
{
	char ends[PATH_MAX + 32];

	snprintf(ends, sizeof(ends), "%s/%s", path, MP_RUN_ENDS);
	(void)mp_run_ends_append(ends, (uint64_t)pid, status); /* as the preload's lines (reap.c) */
}

void mp_cli_run_reap_orphans(const char *path, unsigned grace_ms)
{
	const struct timespec tick = {0, 5000000}; /* 5 ms */
	unsigned waited = 0;
	int status;
	pid_t r;

	for (;;) {
		if ((r = waitpid(-1, &status, WNOHANG)) > 0) {
			mp_cli_run_note_end(path, (long)r, status);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || waited >= grace_ms) /* ECHILD: none left */
			return;
		nanosleep(&tick, NULL);
		waited += 5;
	}
}

/* Whether pid is a live process (not a zombie), now: a capture without its
 * trailer may be one that is still being written. */
static int running(uint64_t pid)
{
	char path[64], buf[512], *close_paren;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu64 "/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	close_paren = strrchr(buf, ')'); /* "PID (COMM) STATE ...": COMM may hold anything */
	return close_paren && close_paren[1] == ' ' && close_paren[2] && !strchr("ZXx", close_paren[2]);
}

/* A capture without its trailer that is still being written: the last
 * program of a pid nobody reaped, and that pid running. */
static int still_running(const mp_run_proc_t *p)
{
	return p->end == MP_PROC_ABRUPT && !p->reaped && p->exec_next < 0 && running(p->pid);
}

/* Whether capture i descends from capture top (by fork or exec). */
static int descends(const mp_run_t *run, int i, int top)
{
	while (i >= 0 && i != top)
		i = mp_run_proc(run, (size_t)i)->parent;
	return i == top;
}

int mp_cli_run_root(const mp_run_t *run, long pid)
{
	for (size_t i = 0; i < mp_run_count(run); i++)
		if (mp_run_proc(run, i)->pid == (uint64_t)pid && mp_run_proc(run, i)->parent < 0)
			return (int)i;
	return -1;
}

int mp_cli_run_keep_main(const mp_run_t *run, long pid)
{
	int end = mp_cli_run_root(run, pid), removed = 0;
	size_t i;

	/* CMD's first program, then along its exec chain to the last */
	while (end >= 0 && mp_run_proc(run, (size_t)end)->exec_next >= 0)
		end = mp_run_proc(run, (size_t)end)->exec_next;
	for (i = 0; end >= 0 && i < mp_run_count(run); i++)
		if (!descends(run, (int)i, end) && unlink(mp_run_proc(run, i)->path) == 0)
			removed++;
	return removed;
}

/* How p ended, for its line (buf: n bytes): with what the parent that
 * reaped it saw, when a traced parent did (reap.c's lines). */
static const char *ended_how(const mp_run_proc_t *p, char *buf, size_t n)
{
	char st[160];
	int sig = p->reaped && WIFSIGNALED(p->status), code = p->reaped && WIFEXITED(p->status) ? WEXITSTATUS(p->status) : 0;

	switch (p->end) {
	case MP_PROC_EXITED:
		if (!sig && !code)
			return "";
		snprintf(buf, n, ", %s%s", sig ? "ended by " : "", mp_report_wait_status(p->status, st, sizeof(st)));
		return buf;
	case MP_PROC_EXECED:
		return ", then exec'd";
	case MP_PROC_ABRUPT:
		if (still_running(p))
			return ", still running (its capture is complete once it ends)";
		if (!p->reaped)
			return ", ended abruptly (killed or crashed: read to its last flush)";
		snprintf(buf, n, ", ended abruptly (%s%s: read to its last flush)", sig ? "killed by " : "",
			 mp_report_wait_status(p->status, st, sizeof(st)));
		return buf;
	case MP_PROC_WRITE_FAILED:
		snprintf(buf, n, ", %s", cli_write_failed_text(p->write_errno, p->write_offset, p->complete_ns, st, sizeof(st)));
		return buf;
	default:
		return ", unreadable";
	}
}

void mp_cli_run_summary(const mp_run_t *run, char **main_path)
{
	char b[64], c[64], how[200], cmd[CLI_RUN_COMMAND_WIDTH + 8];
	const mp_run_proc_t *m;
	size_t i, helpers = 0, abrupt = 0, live = 0, idx[CLI_RUN_SHOWN_OTHERS], shown, others;
	int k;

	*main_path = NULL;
	for (i = 0; i < mp_run_count(run); i++) {
		const mp_run_proc_t *p = mp_run_proc(run, i);
		helpers += p->helper != 0;
		if (still_running(p))
			live++;
		else
			abrupt += p->end == MP_PROC_ABRUPT;
	}
	fprintf(stderr, "memprof: run written to '%s': %zu capture%s", mp_run_path(run), mp_run_count(run),
		mp_run_count(run) > 1 ? "s" : "");
	if (mp_run_count(run) > 1)
		fprintf(stderr, " (%zu of helpers: shells, launchers, exec'd wrappers)", helpers);
	fputc('\n', stderr);
	if ((k = mp_run_main(run)) < 0)
		return;
	m = mp_run_proc(run, (size_t)k);
	fprintf(stderr, "memprof: main process: pid %" PRIu64 " '%s', peak %s%s\n", m->pid,
		cli_run_short_command(m->command_line, CLI_RUN_COMMAND_WIDTH, cmd, sizeof(cmd)),
		mp_bytes_exact(b, sizeof(b), m->peak_bytes), ended_how(m, how, sizeof(how)));
	/* the largest others, one short line each, and how many more */
	others = cli_run_largest_others(run, idx, CLI_RUN_SHOWN_OTHERS, &shown);
	for (i = 0; i < shown; i++) {
		const mp_run_proc_t *p = mp_run_proc(run, idx[i]);
		fprintf(stderr, "memprof:   also pid %" PRIu64 " '%s', peak %s%s\n", p->pid,
			cli_run_short_command(p->command_line, CLI_RUN_COMMAND_WIDTH, cmd, sizeof(cmd)),
			mp_bytes_exact(c, sizeof(c), p->peak_bytes), ended_how(p, how, sizeof(how)));
	}
	if (others > shown)
		fprintf(stderr,
			"memprof:   and %zu other process%s, peaks up to %s ('memprof report --all-processes' "
			"lists them)\n",
			others - shown, others - shown == 1 ? "" : "es",
			mp_bytes_exact(c, sizeof(c), cli_run_rest_peak(run, idx, shown)));
	if (abrupt)
		fprintf(stderr, "memprof: %zu capture%s ended abruptly\n", abrupt, abrupt > 1 ? "s" : "");
	if (live)
		fprintf(stderr, "memprof: %zu process%s CMD started still run%s: report the run again once they end\n",
			live, live > 1 ? "es" : "", live > 1 ? "" : "s");
	*main_path = strdup(m->path);
}
