/* run.c - a run directory read as one tree (memprof/run.h).
 *
 * The directory holds "<pid>.memprof" for the first program each traced
 * process ran and "<pid>-<n>.memprof" for the ones it exec'd into (the
 * preload's names, allocator_hooks/preload/session.c), and the marker
 * `memprof record` writes. The tree is rebuilt from the captures' headers:
 * a program's parent is the one its pid ran before (exec), or else the
 * program of its parent pid that was running when it started (fork). Pids
 * the kernel reuses within one run are told apart by those times. */
#include <memprof/capsummary.h>
#include <memprof/format.h>
#include <memprof/format/run_ends.h>
#include <memprof/reader.h>
#include <memprof/run.h>
#include <memprof/vec.h>


#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Below this peak a capture that is not the main one is a helper: a shell,
 * `env`, `uname`, a version manager's script (docs/format.md, "Runs"). */
#define MP_RUN_HELPER_BYTES (1u << 20)

struct mp_run {
	char *path, *command, *outcome;
	size_t n;
	mp_run_proc_t *procs; /* tree order */
	char **names;         /* each capture's strings (path, name, command line,
				 exe, error): one block a capture, owned */
	int main;
	size_t ends_bad_line; /* mp_run_ends_bad_line */
};

int mp_run_is_run(const char *path)
{
	char marker[4096];
	struct stat sb;

	if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return 0;
	snprintf(marker, sizeof(marker), "%s/%s", path, MP_RUN_MARKER);
	return access(marker, R_OK) == 0;
}

/* "1234.memprof" -> pid 1234, n 0; "1234-2.memprof" -> 1234, 2. */
static int parse_name(const char *name, uint64_t *pid, unsigned long *n)
{
	char *end;

	if (name[0] < '0' || name[0] > '9')
		return -1;
	*pid = strtoull(name, &end, 10);
	*n = 0;
	if (*end == '-') {
		if (end[1] < '0' || end[1] > '9')
			return -1;
		*n = strtoul(end + 1, &end, 10);
	}
	return strcmp(end, ".memprof") ? -1 : 0;
}

/* The marker: "memprof-run 1" then key=value lines. */
static void read_marker(mp_run_t *run)
{
	char path[4096], line[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run->path, MP_RUN_MARKER);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');
		line[strcspn(line, "\n")] = '\0';
		if (!eq)
			continue;
		*eq = '\0';
		if (!strcmp(line, "command")) {
			free(run->command);
			run->command = strdup(eq + 1);
		} else if (!strcmp(line, "ended")) {
			free(run->outcome);
			run->outcome = strdup(eq + 1);
		}
	}
	fclose(f);
}

/* One capture's figures, per memory id (names owned), its events, the
 * time of its end, and whether it ended cleanly. */
typedef struct {
	size_t memory_count;
	mp_run_memory_t *memories; /* owned: free(), and each name */
	uint64_t events;
	uint64_t last_time_ns;
	int clean;
	int write_errno;
	uint64_t write_offset, complete_ns;
} figures_t;

typedef struct {
	mp_run_proc_t p;
	unsigned long n; /* the name's exec number */
	int prev;        /* same pid, the program before */
	figures_t fig;
	char *strings;   /* path, name, command line, exe, error: one allocation */
} entry_t;

static char *join5(const char *a, const char *b, const char *c, const char *d, const char *e, const char **out)
{
	const char *in[5] = {a, b, c, d, e};
	size_t len[5], total = 0, i;
	char *s, *p;

	for (i = 0; i < 5; i++)
		total += (len[i] = strlen(in[i])) + 1;
	if (!(s = p = malloc(total)))
		return NULL;
	for (i = 0; i < 5; i++) {
		memcpy(p, in[i], len[i] + 1);
		out[i] = p;
		p += len[i] + 1;
	}
	return s;
}

/* A capture's figures as a run gives them (report's counts: a realloc is
 * a free and an allocation): the ones its writer kept (format 2.1: no
 * event decoded), else its events replayed. Returns 0 or a negative error
 * code (diag set). */
static int figures(const char *path, figures_t *out, mp_diag_t *diag)
{
	mp_capture_summary_t sum;
	size_t i;
	int rc = mp_capture_summary_read(path, &sum, diag);

	memset(out, 0, sizeof(*out));
	/* A capture killed while it closed has its final figures without its
	 * trailer: the same figures, but the time of its last event (the
	 * process's end in the tree) only comes from its events. */
	if (rc < 0 || !sum.available || (!sum.ended_cleanly && sum.horizon_ns == UINT64_MAX)) {
		mp_capture_summary_free(&sum);
		rc = mp_capture_summary_replay(path, &sum, diag);
	}
	if (rc == 0) {
		out->events = sum.events;
		out->last_time_ns = sum.end_time_ns;
		out->clean = sum.ended_cleanly;
		out->write_errno = sum.write_errno;
		out->write_offset = sum.write_offset;
		out->complete_ns = sum.complete_ns;
		out->memory_count = sum.nmemories;
		if (sum.nmemories && !(out->memories = calloc(sum.nmemories, sizeof(*out->memories))))
			rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		for (i = 0; rc == 0 && i < sum.nmemories; i++) {
			const mp_summary_memory_t *m = &sum.memories[i];
			mp_run_memory_t *r = &out->memories[i];
			r->peak_bytes = m->peak_bytes;
			r->peak_time_ns = m->peak_time_ns;
			r->allocations = m->allocations + m->reallocs;
			r->frees = m->frees + m->reallocs;
			r->live_blocks = m->live_blocks;
			r->live_bytes = m->live_bytes;
			if (!(r->name = strdup(m->name ? m->name : "")))
				rc = mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
		}
	}
	mp_capture_summary_free(&sum);
	return rc;
}

/* Header and figures of one capture into e. Never fails the run: what
 * cannot be read is said in e->p.error. Returns 0, or MP_ENOMEM. */
static int read_capture(entry_t *e, const char *dir, const char *name)
{
	char path[4096];
	const char *out[5];
	mp_capture_t *cap = NULL;
	mp_diag_t diag;
	const mp_capture_header_t *h;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	e->p.parent = e->p.exec_next = e->prev = -1;
	if (mp_capture_open(&cap, path, &diag) < 0) {
		e->p.end = MP_PROC_UNREADABLE;
		e->strings = join5(path, name, "", "", diag.text, out);
		goto strings;
	}
	h = mp_capture_header(cap);
	e->p.pid = h->pid;
	e->p.ppid = h->ppid;
	e->p.start_wall_ns = e->p.end_wall_ns = h->start_wall_ns;
	rc = figures(path, &e->fig, &diag);
	if (rc == MP_ENOMEM) {
		mp_capture_close(cap);
		return rc;
	}
	e->p.events = e->fig.events;
	e->p.end_wall_ns = h->start_wall_ns + e->fig.last_time_ns;
	e->p.end = rc < 0		  ? MP_PROC_UNREADABLE
		   : e->fig.clean	  ? MP_PROC_EXITED
		   : e->fig.write_errno ? MP_PROC_WRITE_FAILED
					  : MP_PROC_ABRUPT;
	e->p.write_errno = e->fig.write_errno;
	e->p.write_offset = e->fig.write_offset;
	e->p.complete_ns = e->fig.complete_ns;
	e->strings = join5(path, name, h->command_line, h->exe, rc < 0 ? diag.text : "", out);
	mp_capture_close(cap);
strings:
	if (!e->strings)
		return MP_ENOMEM;
	e->p.path = out[0];
	e->p.name = out[1];
	e->p.command_line = out[2];
	e->p.exe = out[3];
	e->p.error = out[4][0] ? out[4] : NULL;
	return 0;
}

static int by_start(const entry_t *a, const entry_t *b)
{
	if (a->p.start_wall_ns != b->p.start_wall_ns)
		return a->p.start_wall_ns < b->p.start_wall_ns ? -1 : 1;
	if (a->p.pid != b->p.pid)
		return a->p.pid < b->p.pid ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

static int cmp_entries(const void *a, const void *b)
{
	return by_start(a, b);
}

/* Parents and exec chains, by index into e[] (sorted by start). */
static void link_tree(entry_t *e, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		/* exec: the same pid's previous program (names number them) */
		for (j = 0; j < n; j++)
			if (j != i && e[j].p.pid == e[i].p.pid && e[j].n < e[i].n &&
			    (e[i].prev < 0 || e[j].n > e[e[i].prev].n))
				e[i].prev = (int)j;
		if (e[i].prev >= 0) {
			e[i].p.parent = e[i].prev;
			e[i].p.exec_index = e[e[i].prev].p.exec_index + 1; /* (set: it started earlier) */
			e[e[i].prev].p.exec_next = (int)i;
			if (e[e[i].prev].p.end == MP_PROC_EXITED)
				e[e[i].prev].p.end = MP_PROC_EXECED;
			continue;
		}
		/* fork: the parent pid's program that started last before it */
		for (j = 0; j < n; j++)
			if (e[i].p.ppid && e[j].p.pid == e[i].p.ppid && e[j].p.start_wall_ns <= e[i].p.start_wall_ns &&
			    (e[i].p.parent < 0 || by_start(&e[j], &e[e[i].p.parent]) > 0))
				e[i].p.parent = (int)j;
	}
}

/* Depth-first from the roots, children in start order (exec'd program
 * first: it is the same process going on). */
static void place(entry_t *e, size_t n, int at, int depth, int *order, size_t *k, char *placed)
{
	size_t j;

	placed[at] = 1;
	order[(*k)++] = at;
	e[at].p.depth = depth;
	if (e[at].p.exec_next >= 0 && !placed[e[at].p.exec_next])
		place(e, n, e[at].p.exec_next, depth, order, k, placed);
	for (j = 0; j < n; j++)
		if (!placed[j] && e[j].p.parent == at && e[j].prev < 0)
			place(e, n, (int)j, depth + 1, order, k, placed);
}

typedef struct {
	entry_t *e;
	size_t n;
} ends_t;

/* A reaped child's status onto its capture: the last program of its pid
 * (what ran when it ended) that started before the reap, the latest such
 * (a pid the kernel reused is another process, started after). */
static void put_end(void *ctx, uint64_t pid, int status, uint64_t wall_ns)
{
	ends_t *x = ctx;
	size_t i;
	int at = -1;

	for (i = 0; i < x->n; i++) {
		const mp_run_proc_t *p = &x->e[i].p;
		if (p->pid == pid && p->exec_next < 0 && p->start_wall_ns <= wall_ns &&
		    (at < 0 || p->start_wall_ns >= x->e[at].p.start_wall_ns))
			at = (int)i;
	}
	if (at >= 0) {
		x->e[at].p.reaped = 1;
		x->e[at].p.status = status;
	}
}

/* How the run's processes ended, from its MP_RUN_ENDS file (when the
 * preload's reap.c wrote one): e linked (exec chains known). */
static int read_ends(mp_run_t *run, entry_t *e, size_t n)
{
	char path[4096];
	ends_t x = {e, n};
	char *text = NULL;
	size_t len = 0, cap = 0, got;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run->path, MP_RUN_ENDS);
	if (!(f = fopen(path, "rb")))
		return 0; /* none: no traced parent reaped a child */
	do {
		if (len == cap && MP_VEC_RESERVE(text, cap, len + 4096) < 0) {
			free(text);
			fclose(f);
			return MP_ENOMEM;
		}
		len += got = fread(text + len, 1, cap - len, f);
	} while (got);
	fclose(f);
	run->ends_bad_line = mp_run_ends_parse(text, len, put_end, &x);
	free(text);
	return 0;
}

static int better_main(const mp_run_proc_t *a, const mp_run_proc_t *b)
{
	if (a->peak_bytes != b->peak_bytes)
		return a->peak_bytes > b->peak_bytes;
	if (a->end_wall_ns - a->start_wall_ns != b->end_wall_ns - b->start_wall_ns)
		return a->end_wall_ns - a->start_wall_ns > b->end_wall_ns - b->start_wall_ns;
	return a->start_wall_ns < b->start_wall_ns;
}

static int finish(mp_run_t *run, entry_t *e, size_t n)
{
	int *order = calloc(n, sizeof(*order)), *where = calloc(n, sizeof(*where));
	char *placed = calloc(n, 1);
	size_t i, k = 0, m;

	if (!order || !where || !placed || !(run->procs = calloc(n, sizeof(*run->procs))) ||
	    !(run->names = calloc(n, sizeof(*run->names)))) {
		free(order);
		free(where);
		free(placed);
		return MP_ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (e[i].p.parent < 0)
			place(e, n, (int)i, 0, order, &k, placed);
	for (i = 0; i < n; i++) /* (a cycle cannot happen; be safe anyway) */
		if (!placed[i])
			place(e, n, (int)i, 0, order, &k, placed);
	for (i = 0; i < n; i++)
		where[order[i]] = (int)i;
	run->main = -1;
	for (i = 0; i < n; i++) {
		entry_t *s = &e[order[i]];
		mp_run_proc_t *p = &run->procs[i];

		*p = s->p;
		p->parent = s->p.parent < 0 ? -1 : where[s->p.parent];
		p->exec_next = s->p.exec_next < 0 ? -1 : where[s->p.exec_next];
		p->memory_count = s->fig.memory_count;
		p->memories = s->fig.memories;
		run->names[i] = s->strings;
		s->strings = NULL;
		s->fig.memories = NULL;
		for (m = 0; m < p->memory_count; m++)
			if (p->memories[m].peak_bytes > p->peak_bytes)
				p->peak_bytes = p->memories[m].peak_bytes;
		if (p->end != MP_PROC_UNREADABLE && (run->main < 0 || better_main(p, &run->procs[run->main])))
			run->main = (int)i;
	}
	for (i = 0; i < n; i++) {
		mp_run_proc_t *p = &run->procs[i];
		p->helper = (int)i != run->main &&
			    (p->end == MP_PROC_EXECED || p->end == MP_PROC_UNREADABLE || p->peak_bytes < MP_RUN_HELPER_BYTES);
	}
	run->n = n;
	free(order);
	free(where);
	free(placed);
	return 0;
}

int mp_run_open(mp_run_t **out, const char *path, mp_diag_t *diag)
{
	mp_run_t *run;
	entry_t *e = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	*out = NULL;
	mp_diag_clear(diag);
	mp_diag_set_file(diag, path);
	if (!mp_run_is_run(path))
		return mp_diag_set(diag, MP_ENOTFOUND, -1, -1, "not a run directory (no %s in it)", MP_RUN_MARKER);
	if (!(d = opendir(path)))
		return mp_diag_set(diag, -errno, -1, -1, "cannot read the run directory: %s", strerror(errno));
	if (!(run = calloc(1, sizeof(*run))) || !(run->path = strdup(path))) {
		free(run);
		closedir(d);
		return mp_diag_set(diag, MP_ENOMEM, -1, -1, "out of memory");
	}
	read_marker(run);
	while (rc == 0 && (de = readdir(d))) {
		uint64_t pid;
		unsigned long num;

		if (parse_name(de->d_name, &pid, &num))
			continue;
		if (MP_VEC_RESERVE(e, cap, n + 1) < 0) {
			rc = MP_ENOMEM;
			break;
		}
		memset(&e[n], 0, sizeof(e[n]));
		e[n].n = num;
		if (!(rc = read_capture(&e[n], path, de->d_name))) {
			if (!e[n].p.pid && e[n].p.end == MP_PROC_UNREADABLE)
				e[n].p.pid = pid; /* from its name */
			n++;
		}
	}
	closedir(d);
	if (rc == 0 && n == 0)
		rc = mp_diag_set(diag, MP_ENOTFOUND, -1, -1, "the run holds no capture (the program may not have started)");
	if (rc == 0) {
		qsort(e, n, sizeof(*e), cmp_entries);
		link_tree(e, n);
		if (!(rc = read_ends(run, e, n)))
			rc = finish(run, e, n);
	}
	for (i = 0; i < n; i++) {
		if (e[i].fig.memories)
			for (size_t m = 0; m < e[i].fig.memory_count; m++)
				free((char *)(uintptr_t)e[i].fig.memories[m].name);
		free(e[i].fig.memories);
		free(e[i].strings);
	}
	free(e);
	if (rc < 0) {
		if (rc == MP_ENOMEM)
			mp_diag_set(diag, rc, -1, -1, "out of memory");
		mp_run_close(run);
		return rc;
	}
	*out = run;
	return 0;
}

void mp_run_close(mp_run_t *run)
{
	size_t i, m;

	if (!run)
		return;
	for (i = 0; i < run->n; i++) {
		for (m = 0; m < run->procs[i].memory_count; m++)
			free((char *)(uintptr_t)run->procs[i].memories[m].name);
		free((void *)(uintptr_t)run->procs[i].memories);
		free(run->names[i]);
	}
	free(run->procs);
	free(run->names);
	free(run->path);
	free(run->command);
	free(run->outcome);
	free(run);
}

const char *mp_run_path(const mp_run_t *run) { return run->path; }
const char *mp_run_command(const mp_run_t *run) { return run->command ? run->command : ""; }
const char *mp_run_outcome(const mp_run_t *run) { return run->outcome ? run->outcome : ""; }
size_t mp_run_count(const mp_run_t *run) { return run->n; }
size_t mp_run_ends_bad_line(const mp_run_t *run) { return run->ends_bad_line; }
const mp_run_proc_t *mp_run_proc(const mp_run_t *run, size_t i) { return i < run->n ? &run->procs[i] : NULL; }
int mp_run_main(const mp_run_t *run) { return run->main; }

int mp_run_find_pid(const mp_run_t *run, uint64_t pid)
{
	int best = -1;

	for (size_t i = 0; i < run->n; i++)
		if (run->procs[i].pid == pid && run->procs[i].end != MP_PROC_UNREADABLE &&
		    (best < 0 || run->procs[i].peak_bytes >= run->procs[best].peak_bytes))
			best = (int)i;
	return best;
}
