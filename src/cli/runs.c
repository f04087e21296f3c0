/* runs.c - run directories among a command's inputs (runs.h). */
#include "runs.h"

#include "cli.h"
#include "inputs.h"

#include <memprof/format.h>
#include <memprof/report_doc.h>
#include <memprof/output/units.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int cli_run_parse_process(const char *arg, cli_run_select_t *sel)
{
	if (!strcmp(arg, "all"))
		sel->all = 1;
	else if (!strcmp(arg, "main"))
		sel->all = 0;
	else
		return mp_cli_error("--process expects 'main' or 'all', got '%s'", arg);
	return 0;
}

int cli_run_parse_pid(const char *arg, cli_run_select_t *sel)
{
	uint32_t v;

	if (cli_parse_u32(arg, &v) || v == 0)
		return mp_cli_error("--pid expects a process id, got '%s'", arg);
	sel->pid = v;
	sel->pid_set = 1;
	return 0;
}

static int add_file(cli_runs_t *r, char *file, int owned)
{
	char **f = realloc(r->files, (size_t)(r->nfiles + 1) * sizeof(*f));
	char **o = f ? realloc(r->owned, (size_t)(r->nfiles + 1) * sizeof(*o)) : NULL;
	char **l = o ? realloc(r->labels, (size_t)(r->nfiles + 1) * sizeof(*l)) : NULL;

	if (f)
		r->files = f;
	if (o)
		r->owned = o;
	if (l)
		r->labels = l;
	if (!f || !o || !l || !file) {
		if (owned)
			free(file);
		return mp_cli_error("out of memory");
	}
	r->files[r->nfiles] = file;
	r->labels[r->nfiles] = NULL;
	r->owned[r->nfiles++] = owned ? file : NULL;
	return 0;
}

/* Add capture k of run: its path, and its label "pid N PROGRAM (RUN)". */
static int add_capture(cli_runs_t *r, const mp_run_t *run, size_t k)
{
	const mp_run_proc_t *p = mp_run_proc(run, k);
	const char *cmd = p->command_line, *rb = strrchr(mp_run_path(run), '/');
	size_t n = strcspn(cmd, " ");
	const char *prog = cmd;
	char *label;

	if (add_file(r, strdup(p->path), 1))
		return -1;
	for (size_t i = 0; i < n; i++) /* argv[0]'s last component */
		if (cmd[i] == '/')
			prog = cmd + i + 1;
	rb = rb && rb[1] ? rb + 1 : mp_run_path(run);
	if (asprintf(&label, "pid %" PRIu64 " %.*s (%s)", p->pid, (int)(n - (size_t)(prog - cmd)), prog, rb) < 0)
		return mp_cli_error("out of memory");
	for (char *c = label; *c; c++)
		if (*c == '/') /* titles show a name's last component */
			*c = '_';
	r->labels[r->nfiles - 1] = label;
	return 0;
}

void cli_runs_title_inputs(const cli_runs_t *r, cli_inputs_t *ci)
{
	for (int k = 0; k < ci->n; k++)
		for (int i = 0; ci->paths[k] && i < r->nfiles; i++)
			if (r->labels[i] && !strcmp(r->files[i], ci->paths[k])) {
				ci->titles[k] = r->labels[i];
				break;
			}
}

/* The pids of a run, for the message when --pid names none of them. */
static void list_pids(const mp_run_t *run, char *buf, size_t size)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < mp_run_count(run) && o + 24 < size; i++) {
		const mp_run_proc_t *p = mp_run_proc(run, i);
		if (p->parent >= 0 && mp_run_proc(run, (size_t)p->parent)->pid == p->pid)
			continue; /* the same pid after an exec */
		o += (size_t)snprintf(buf + o, size - o, "%s%" PRIu64, o ? ", " : "", p->pid);
	}
}

static int expand_run(cli_runs_t *r, const char *path, const cli_run_select_t *sel)
{
	mp_run_t *run, **g;
	mp_diag_t diag;
	int k;

	if (mp_run_open(&run, path, &diag) < 0)
		return mp_cli_diag(&diag);
	if (!(g = realloc(r->runs, (size_t)(r->nruns + 1) * sizeof(*g)))) {
		mp_run_close(run);
		return mp_cli_error("out of memory");
	}
	r->runs = g;
	r->runs[r->nruns++] = run;
	if (sel->pid_set) {
		if ((k = mp_run_find_pid(run, sel->pid)) < 0) {
			char pids[1024];
			list_pids(run, pids, sizeof(pids));
			mp_cli_error("'%s': no readable capture of pid %" PRIu64 " in this run (its pids: %s)", path,
				     sel->pid, pids);
			return MP_EXIT_USAGE;
		}
		return add_capture(r, run, (size_t)k) ? MP_EXIT_FAILURE : MP_EXIT_OK;
	}
	if ((k = mp_run_main(run)) < 0) {
		mp_cli_error("'%s': no capture of this run can be read", path);
		return MP_EXIT_FORMAT;
	}
	if (!sel->all)
		return add_capture(r, run, (size_t)k) ? MP_EXIT_FAILURE : MP_EXIT_OK;
	/* every process that did work, main first, then in tree order */
	if (add_capture(r, run, (size_t)k))
		return MP_EXIT_FAILURE;
	for (size_t i = 0; i < mp_run_count(run); i++)
		if ((int)i != k && !mp_run_proc(run, i)->helper && add_capture(r, run, i))
			return MP_EXIT_FAILURE;
	return MP_EXIT_OK;
}

int cli_runs_expand(cli_runs_t *r, char *const *files, int nfiles, const cli_run_select_t *sel)
{
	int rc;

	memset(r, 0, sizeof(*r));
	for (int f = 0; f < nfiles; f++) {
		if (!mp_run_is_run(files[f])) {
			if (add_file(r, files[f], 0))
				return MP_EXIT_FAILURE;
			continue;
		}
		if ((rc = expand_run(r, files[f], sel)) != MP_EXIT_OK)
			return rc;
	}
	if (!r->nruns && (sel->all || sel->pid_set)) {
		mp_cli_error("%s applies to runs ('memprof record' directories), and no input is one",
			     sel->pid_set ? "--pid" : "--process");
		return MP_EXIT_USAGE;
	}
	return MP_EXIT_OK;
}

void cli_runs_free(cli_runs_t *r)
{
	for (int i = 0; i < r->nruns; i++)
		mp_run_close(r->runs[i]);
	for (int i = 0; i < r->nfiles; i++) {
		free(r->owned[i]);
		free(r->labels[i]);
	}
	free(r->runs);
	free(r->files);
	free(r->owned);
	free(r->labels);
	memset(r, 0, sizeof(*r));
}

const char *cli_write_failed_text(int err, uint64_t offset, uint64_t complete_ns, char *buf, size_t n)
{
	const char *why = err == ENOSPC ? "the disk was full (ENOSPC)"
			  : err == EDQUOT ? "the disk quota was reached (EDQUOT)"
			  : err == EFBIG  ? "the file size limit was reached (EFBIG)"
					  : strerror(err);
	char b[32];

	snprintf(buf, n, "cut short: %s at %s; events after %.1f s are not all in it", why,
		 mp_bytes_exact(b, sizeof(b), offset), (double)complete_ns / 1e9);
	return buf;
}

/* The tree's "ended" column: how the capture ended (mp_report_proc_end_word), with what
 * the parent that reaped the process saw where that says more: "exit 3",
 * "SIGABRT" (abort() closes the capture first), "abrupt: SIGTERM" (read
 * to its last flush). */
static const char *end_text(const mp_run_proc_t *p, char *buf, size_t n)
{
	const char *how = mp_report_proc_end_word(p->end), *abbrev;
	char status[32];

	if (!p->reaped || (p->end != MP_PROC_EXITED && p->end != MP_PROC_ABRUPT && p->end != MP_PROC_WRITE_FAILED))
		return how;
	if (WIFSIGNALED(p->status)) {
		abbrev = sigabbrev_np(WTERMSIG(p->status));
		if (abbrev)
			snprintf(status, sizeof(status), "SIG%s", abbrev);
		else
			snprintf(status, sizeof(status), "signal %d", WTERMSIG(p->status));
	} else if (WIFEXITED(p->status) && WEXITSTATUS(p->status)) {
		snprintf(status, sizeof(status), "exit %d", WEXITSTATUS(p->status));
	} else {
		return how;
	}
	if (p->end == MP_PROC_ABRUPT || p->end == MP_PROC_WRITE_FAILED)
		snprintf(buf, n, "%s: %s", how, status);
	else
		snprintf(buf, n, "%s", status);
	return buf;
}

/* "1.234 s" from ns */
static void seconds(char *buf, size_t size, uint64_t ns)
{
	snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " s", ns / 1000000000u, ns / 1000000u % 1000u);
}

/* argv[0]'s last component of a process (its name when it has no command
 * line): pointer and length into *len. */
static const char *prog_name(const mp_run_proc_t *p, size_t *len)
{
	const char *cmd = *p->command_line ? p->command_line : p->name, *prog = cmd;
	size_t n = strcspn(cmd, " ");

	for (size_t i = 0; i < n; i++)
		if (cmd[i] == '/')
			prog = cmd + i + 1;
	*len = n - (size_t)(prog - cmd);
	return prog;
}

const char *cli_run_short_command(const char *cmd, size_t width, char *buf, size_t n)
{
	size_t len = strlen(cmd), pn = strcspn(cmd, " "), tail;
	const char *prog = cmd, *end;

	if (len <= width || width < 40 || n <= width) {
		snprintf(buf, n, "%s", cmd);
		return buf;
	}
	for (size_t i = 0; i < pn; i++)
		if (cmd[i] == '/')
			prog = cmd + i + 1;
	pn -= (size_t)(prog - cmd);
	if (pn > width / 3) /* (a program name that long is cut too) */
		pn = width / 3;
	tail = width - pn - 5;
	end = cmd + len - tail;
	while (*end && ((unsigned char)*end & 0xc0) == 0x80) /* not inside a UTF-8 character */
		end++;
	for (size_t k = 0; k < 20 && end[k]; k++) /* nor inside a word, when one starts near */
		if (end[k] == ' ' && end[-1] != ' ') {
			end += k + 1;
			break;
		}
	snprintf(buf, n, "%.*s ... %s", (int)pn, prog, end);
	return buf;
}

size_t cli_run_largest_others(const mp_run_t *run, size_t *idx, size_t max, size_t *shown)
{
	int main = mp_run_main(run);
	size_t i, j, n = 0, total = 0;

	for (i = 0; i < mp_run_count(run); i++) {
		const mp_run_proc_t *p = mp_run_proc(run, i);
		if ((int)i == main || p->helper)
			continue;
		total++;
		/* keep idx[0..n) the largest peaks seen, largest first */
		for (j = n; j > 0 && mp_run_proc(run, idx[j - 1])->peak_bytes < p->peak_bytes; j--)
			if (j < max)
				idx[j] = idx[j - 1];
		if (j < max) {
			idx[j] = i;
			if (n < max)
				n++;
		}
	}
	/* back to tree order */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
			size_t x = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = x;
		}
	*shown = n;
	return total;
}

uint64_t cli_run_rest_peak(const mp_run_t *run, const size_t *idx, size_t shown)
{
	int main = mp_run_main(run);
	uint64_t top = 0;

	for (size_t i = 0; i < mp_run_count(run); i++) {
		const mp_run_proc_t *p = mp_run_proc(run, i);
		int listed = (int)i == main || p->helper;
		for (size_t s = 0; !listed && s < shown; s++)
			listed = idx[s] == i;
		if (!listed && p->peak_bytes > top)
			top = p->peak_bytes;
	}
	return top;
}

static int is_shell(const char *s, size_t n)
{
	static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"};

	for (size_t i = 0; i < sizeof(shells) / sizeof(*shells); i++)
		if (strlen(shells[i]) == n && !memcmp(s, shells[i], n))
			return 1;
	return 0;
}

typedef struct {
	const char *name;
	size_t len, count;
} helper_group_t;

size_t cli_run_helpers_text(const mp_run_t *run, char *buf, size_t size)
{
	helper_group_t *g;
	size_t i, j, ng = 0, nh = 0, o;
	int main = mp_run_main(run);

	buf[0] = '\0';
	if (!(g = calloc(mp_run_count(run) + 1, sizeof(*g))))
		return 0;
	for (i = 0; i < mp_run_count(run); i++) {
		const mp_run_proc_t *p = mp_run_proc(run, i);
		size_t n;
		const char *s;

		if (!p->helper || (int)i == main)
			continue;
		nh++;
		s = prog_name(p, &n);
		if (is_shell(s, n)) { /* a script's name: "bash /x/pyenv-exec ARGS" is pyenv-exec */
			const char *arg = s + n + strspn(s + n, " "), *b = arg;
			size_t an = strcspn(arg, " ");
			for (size_t c = 0; c < an; c++)
				if (arg[c] == '/')
					b = arg + c + 1;
			if (an && *arg != '-' && b < arg + an) {
				s = b;
				n = an - (size_t)(b - arg);
			} else {
				s = "shells";
				n = 6;
			}
		}
		for (j = 0; j < ng && (g[j].len != n || memcmp(g[j].name, s, n)); j++)
			;
		if (j == ng)
			g[ng++] = (helper_group_t){s, n, 0};
		g[j].count++;
	}
	/* "pyenv-exec" counts as "pyenv" when "pyenv" is among them */
	for (i = 0; i < ng; i++) {
		const char *dash = memchr(g[i].name, '-', g[i].len);
		if (!dash || !g[i].count)
			continue;
		for (j = 0; j < ng; j++)
			if (j != i && g[j].count && g[j].len == (size_t)(dash - g[i].name) &&
			    !memcmp(g[j].name, g[i].name, g[j].len)) {
				g[j].count += g[i].count;
				g[i].count = 0;
				break;
			}
	}
	/* most common first */
	for (i = 1; i < ng; i++)
		for (j = i; j > 0 && g[j - 1].count < g[j].count; j--) {
			helper_group_t x = g[j];
			g[j] = g[j - 1];
			g[j - 1] = x;
		}
	while (ng && !g[ng - 1].count)
		ng--;
	if (nh) {
		o = (size_t)snprintf(buf, size, "%zu helper%s: ", nh, nh == 1 ? "" : "s");
		for (i = 0; i < ng && i < 3 && o < size; i++)
			o += (size_t)snprintf(buf + o, size - o, "%s%.*s", i ? ", " : "",
					      (int)(g[i].len > 40 ? 40 : g[i].len), g[i].name);
		if (ng > 3 && o < size) {
			size_t rest = 0;
			for (i = 3; i < ng; i++)
				rest += g[i].count;
			snprintf(buf + o, size - o, " and %zu other%s", rest, rest == 1 ? "" : "s");
		}
	}
	free(g);
	return nh;
}

static void print_proc(FILE *out, const mp_run_t *run, size_t i, uint64_t t0, int main, int shorten)
{
	const mp_run_proc_t *p = mp_run_proc(run, i);
	char start[32], dur[32], peak[64], parent[24] = "-", ended[48], cmd[CLI_RUN_COMMAND_WIDTH + 8];
	const char *prog = *p->command_line ? p->command_line : p->name;

	if (shorten)
		prog = cli_run_short_command(prog, CLI_RUN_COMMAND_WIDTH, cmd, sizeof(cmd));
	if (p->parent >= 0) /* (an exec'd program's is its pid's: the same process) */
		snprintf(parent, sizeof(parent), "%" PRIu64, p->ppid);
	seconds(start, sizeof(start), p->start_wall_ns - t0);
	seconds(dur, sizeof(dur), p->end_wall_ns - p->start_wall_ns);
	mp_bytes_exact(peak, sizeof(peak), p->peak_bytes);
	fprintf(out, "%c %-8" PRIu64 " %-8s %10s %10s %10" PRIu64 " %-16s %24s  %*s%s%s%s\n",
		(int)i == main ? '*' : p->helper ? '-' : ' ', p->pid, parent, start, dur, p->events,
		end_text(p, ended, sizeof(ended)), peak, 2 * p->depth, "",
		p->parent >= 0 && mp_run_proc(run, (size_t)p->parent)->pid == p->pid ? "exec: " : "", prog,
		p->error ? " -- " : "");
	if (p->error)
		fprintf(out, "      %s\n", p->error);
}

static void print_run(FILE *out, const mp_run_t *run, int all)
{
	const mp_run_proc_t *first = mp_run_proc(run, 0);
	uint64_t t0 = first ? first->start_wall_ns : 0;
	int main = mp_run_main(run);
	size_t i, idx[CLI_RUN_SHOWN_OTHERS], nshown = 0, nothers, s = 0;
	char helpers[256], cmd[CLI_RUN_COMMAND_WIDTH + 8], peak[64];

	fprintf(out, "Run %s: %zu capture%s; command: %s%s%s\n", mp_run_path(run), mp_run_count(run),
		mp_run_count(run) == 1 ? "" : "s",
		all ? mp_run_command(run)
		    : cli_run_short_command(mp_run_command(run), CLI_RUN_COMMAND_WIDTH, cmd, sizeof(cmd)),
		*mp_run_outcome(run) ? "; ended: " : "", mp_run_outcome(run));
	fprintf(out, "  (* the main process, the largest peak, analysed below; - a helper: shell, launcher, "
		     "exec'd wrapper)\n");
	fprintf(out, "  %-8s %-8s %10s %10s %10s %-16s %24s  %s\n", "pid", "parent", "start", "duration", "events",
		"ended", "peak", "program");
	if (all) {
		for (i = 0; i < mp_run_count(run); i++)
			print_proc(out, run, i, t0, main, 0);
	} else {
		/* the main process and the largest others, in tree order */
		nothers = cli_run_largest_others(run, idx, CLI_RUN_SHOWN_OTHERS, &nshown);
		for (i = 0; i < mp_run_count(run); i++) {
			if ((int)i == main)
				print_proc(out, run, i, t0, main, 1);
			else if (s < nshown && idx[s] == i) {
				print_proc(out, run, i, t0, main, 1);
				s++;
			}
		}
		if (nothers > nshown)
			fprintf(out, "  %zu other process%s, peaks up to %s (--all-processes lists them)\n",
				nothers - nshown, nothers - nshown == 1 ? "" : "es",
				mp_bytes_exact(peak, sizeof(peak), cli_run_rest_peak(run, idx, nshown)));
		if (cli_run_helpers_text(run, helpers, sizeof(helpers)))
			fprintf(out, "- %s (--all-processes lists them)\n", helpers);
	}
	if (mp_run_ends_bad_line(run))
		fprintf(out, "  (%s line %zu is not \"PID STATUS WALL_NS\": skipped)\n", MP_RUN_ENDS,
			mp_run_ends_bad_line(run));
	fputc('\n', out);
}

void cli_runs_print(FILE *out, const cli_runs_t *r, int all_processes)
{
	for (int i = 0; i < r->nruns; i++)
		print_run(out, r->runs[i], all_processes);
}

int cli_ranks_want(const cli_runs_t *runs, int nargs, const cli_run_select_t *sel)
{
	/* each argument a run, each run one capture: its main process */
	return nargs >= 2 && runs->nruns == nargs && runs->nfiles == nargs && !sel->all && !sel->pid_set;
}
