/* test_hooks_python.c - CPython's small objects as allocations of the
 * memory id "pymalloc", inside its arenas as regions (docs/hooks.md,
 * "Python's allocator"), on each interpreter this machine has (a missing
 * one is skipped with a message).
 *
 * The victim is a Python program: between two marker blocks (bytearrays of
 * sizes nothing else allocates, so malloc'd: host) it keeps 100000 distinct
 * 30-character strings, whose size Python itself gives (sys.getsizeof),
 * and a 1 MiB bytearray (malloc: host, and only there); then it grows
 * 10000 bytearrays of 101 bytes (pymalloc) past 512 bytes, which moves
 * each to malloc (a realloc from one memory to the other), and drops them.
 */
#include "test_common.h"

#include "hooks_run.h"
#include "json_check.h"

#include <memprof/capture.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSTR 100000
#define MARK_A 777778 /* bytearray(n) asks for n + 1 bytes */
#define MARK_B 555556
#define MARK_C 333334
#define BIG 1048577

/* dir/name (into path) holding head (or nothing) then body. */
static void write_script(char *path, size_t size, const char *dir, const char *name, const char *head,
			 const char *body)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	if (head)
		fputs(head, f);
	fputs(body, f);
	fclose(f);
}

static const char victim[] =
	"import sys\n"
	"a = bytearray(777777)\n"
	"s = [('%030d' % i) for i in range(100000)]\n"
	"big = bytearray(1 << 20)\n"
	"b = bytearray(555555)\n"
	"for i in range(10000):\n"
	"    x = bytearray(100)\n"
	"    x.extend(bytes(1000))\n"
	"    del x\n"
	"c = bytearray(333333)\n"
	"with open(sys.argv[1], 'w') as f:\n"
	"    f.write('%d %d\\n' % (sys.getsizeof(s[0]), sum(sys.getsizeof(x) for x in s)))\n"
	"del s, big\n";

/* Live requested bytes of one memory by address (open addressing). */
typedef struct {
	uint64_t *addr, *size, *alloc; /* size: requested + 1 (0: empty); alloc: allocated */
	size_t cap, n;
	uint64_t bytes;
} live_t;

static size_t slot(const live_t *m, uint64_t a)
{
	size_t i = (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull) & (m->cap - 1);

	while (m->size[i] && m->addr[i] != a)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void live_put(live_t *m, uint64_t a, uint64_t n, uint64_t allocated)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		live_t g = {calloc(m->cap * 2, 8), calloc(m->cap * 2, 8), calloc(m->cap * 2, 8), m->cap * 2, 0, 0};
		assert_non_null(g.addr);
		assert_non_null(g.size);
		assert_non_null(g.alloc);
		for (i = 0; i < m->cap; i++)
			if (m->size[i])
				live_put(&g, m->addr[i], m->size[i] - 1, m->alloc[i]);
		free(m->addr);
		free(m->size);
		free(m->alloc);
		g.bytes = m->bytes;
		*m = g;
	}
	i = slot(m, a);
	if (!m->size[i])
		m->n++;
	else
		m->bytes -= m->size[i] - 1;
	m->addr[i] = a;
	m->size[i] = n + 1;
	m->alloc[i] = allocated;
	m->bytes += n;
}

/* Forgets a; returns its allocated bytes (0: not live). */
static uint64_t live_drop(live_t *m, uint64_t a)
{
	size_t i = slot(m, a), j;
	uint64_t allocated = m->alloc[i];

	if (!m->size[i])
		return 0;
	m->bytes -= m->size[i] - 1;
	m->size[i] = 0;
	m->n--;
	for (j = (i + 1) & (m->cap - 1); m->size[j]; j = (j + 1) & (m->cap - 1)) {
		uint64_t a2 = m->addr[j], s2 = m->size[j], al2 = m->alloc[j];
		m->size[j] = 0;
		m->n--;
		m->bytes -= s2 - 1;
		live_put(m, a2, s2 - 1, al2);
	}
	return allocated;
}

typedef struct {
	uint64_t at_a, peak_ab, at_b, at_c; /* pymalloc's live requested bytes */
	uint64_t class_ok, class_bad;       /* ALLOCs of n bytes whose allocated size is n's 16-byte class */
	uint64_t in_place, in_place_bad;    /* reallocs in place: keeping the block's allocated size or not */
	uint64_t in_place_kept;             /* ... of which pymalloc kept a class larger than n's */
} marks_t;

/* pymalloc's live requested bytes at the markers, and its peak between the
 * first two. */
static void scan(const char *cap, marks_t *mk)
{
	live_t py = {calloc(1024, 8), calloc(1024, 8), calloc(1024, 8), 1024, 0, 0};
	uint64_t moved_from = 0, moved_alloc = 0;
	int64_t host = -1, pym = -1;
	int phase = 0;
	mp_source_t *src;
	mp_event_t ev;
	mp_diag_t diag;
	uint32_t i;

	assert_non_null(py.addr);
	assert_int_equal(mp_capture_open_source(&src, cap, &diag), 0);
	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.kind == MP_EV_MEMORY)
			for (i = 0; i < mp_source_memory_count(src); i++) {
				if (!strcmp(mp_source_memory(src, i)->name, "host"))
					host = i;
				if (!strcmp(mp_source_memory(src, i)->name, "pymalloc"))
					pym = i;
			}
		if ((int64_t)ev.memory == host && ev.kind == MP_EV_ALLOC) {
			if (ev.requested_bytes == MARK_A && phase == 0) {
				mk->at_a = py.bytes;
				phase = 1;
			} else if (ev.requested_bytes == MARK_B && phase == 1) {
				mk->at_b = py.bytes;
				phase = 2;
			} else if (ev.requested_bytes == MARK_C && phase == 2) {
				mk->at_c = py.bytes;
				phase = 3;
			}
		}
		if ((int64_t)ev.memory != pym)
			continue;
		if (ev.kind == MP_EV_ALLOC) {
			live_put(&py, ev.address, ev.requested_bytes, ev.allocated_bytes);
			if ((ev.flags & MP_EVENT_F_REALLOC) && ev.address == moved_from) {
				/* in place: pymalloc keeps the block (its pool's class) */
				mk->in_place++;
				mk->in_place_bad += ev.allocated_bytes != moved_alloc;
				mk->in_place_kept += ev.allocated_bytes != ((ev.requested_bytes + 15) & ~15ull);
			} else if (ev.allocated_bytes == ((ev.requested_bytes + 15) & ~15ull)) {
				mk->class_ok++;
			} else {
				mk->class_bad++;
			}
		} else if (ev.kind == MP_EV_FREE) {
			uint64_t allocated = live_drop(&py, ev.address);
			moved_from = ev.flags & MP_EVENT_F_REALLOC ? ev.address : 0;
			moved_alloc = allocated;
		}
		if (phase == 1 && py.bytes > mk->peak_ab)
			mk->peak_ab = py.bytes;
	}
	assert_int_equal(phase, 3);
	mp_source_close(src);
	free(py.addr);
	free(py.size);
	free(py.alloc);
}

/* trace: with tracemalloc started first (its hooks wrap ours, and its raw
 * hooks allocate a trace after each malloc inside our wrapped calls). */
static void check_python(const char *dir, const char *cap, const char *python, int trace)
{
	char script[200], expect[200], log[200], *text;
	const char *args[4];
	hk_stats_t py = {0}, host = {0};
	unsigned long long size = 0, total = 0;
	marks_t mk = {0};

	write_script(script, sizeof(script), dir, "victim.py", trace ? "import tracemalloc\ntracemalloc.start()\n" : NULL,
		     victim);
	snprintf(expect, sizeof(expect), "%s/expect.txt", dir);
	args[0] = script;
	args[1] = expect;
	args[2] = NULL;
	fprintf(stderr, "%s%s\n", python, trace ? ", tracemalloc started" : "");
	snprintf(log, sizeof(log), "%s/record.log", dir);
	assert_int_equal(hk_record_logged(cap, log, NULL, python, args, NULL), 0);
	text = hk_read_text(log); /* memprof record's closing line names the objects' peak */
	assert_non_null(strstr(text, "; Python objects (pymalloc): peak "));
	assert_null(strstr(text, "warning"));
	free(text);
	text = hk_read_text(expect);
	assert_int_equal(sscanf(text, "%llu %llu", &size, &total), 2);
	free(text);
	assert_int_equal(total, size * NSTR); /* (distinct strings of one length) */

	/* the strings' bytes, live at pymalloc's peak, within 3% of Python's figure */
	scan(cap, &mk);
	fprintf(stderr, "  pymalloc live %llu B before the strings, peak %llu B: +%llu B, Python: %llu B\n",
		(unsigned long long)mk.at_a, (unsigned long long)mk.peak_ab,
		(unsigned long long)(mk.peak_ab - mk.at_a), total);
	assert_true(mk.peak_ab - mk.at_a >= total);
	assert_true(mk.peak_ab - mk.at_a <= total + total * 3 / 100);
	assert_true(mk.class_ok >= NSTR);
	assert_int_equal(mk.class_bad, 0);
	fprintf(stderr, "  %llu reallocs in place (%llu in a class larger than the new size's)\n",
		(unsigned long long)mk.in_place, (unsigned long long)mk.in_place_kept);
	assert_int_equal(mk.in_place_bad, 0);
	/* 10000 objects moved from pymalloc to malloc and freed there: none
	 * left behind in pymalloc (each would be 101 bytes) */
	fprintf(stderr, "  pymalloc live %llu B before the moves, %llu B after\n", (unsigned long long)mk.at_b,
		(unsigned long long)mk.at_c);
	assert_true(mk.at_c < mk.at_b + 65536);

	py.memory = "pymalloc";
	py.nwatch = 3;
	py.watch[0].size = size;
	py.watch[1].size = BIG;
	py.watch[2].size = 101;
	hk_replay_ok(cap, &py);
	assert_true(py.watch[0].allocs >= NSTR);
	assert_true(py.watch[0].allocs <= NSTR + NSTR / 100);
	assert_true(py.watch[0].frees >= NSTR); /* del s */
	assert_int_equal(py.watch[0].allocated, (size + 15) & ~15ull);
	assert_int_equal(py.watch[1].allocs, 0); /* the 1 MiB bytearray is malloc's */
	assert_true(py.watch[2].allocs >= 10000);
	assert_true(py.watch[2].frees >= 10000); /* each left pymalloc for malloc */
	/* the arenas are the regions, and every object lies in one */
	assert_true(py.regions_added >= total / (1 << 20));
	assert_int_equal(py.outside_regions, 0);
	assert_int_equal(py.unknown_frees, 0);
	assert_int_equal(py.double_allocs, 0);
	assert_int_equal(py.dropped, 0);

	host.nwatch = 3;
	host.watch[0].size = size;
	host.watch[1].size = BIG;
	host.watch[2].size = MARK_A;
	hk_replay_ok(cap, &host);
	assert_int_equal(host.watch[1].allocs, 1); /* once, in the host heap */
	assert_int_equal(host.watch[2].allocs, 1);
	if (!trace)
		assert_true(host.watch[0].allocs < 100); /* the strings are not malloc's */
	assert_int_equal(host.unknown_frees, 0);
	assert_int_equal(host.double_allocs, 0);
}

/* Objects made on one Python thread and freed on another, the GIL handed
 * over every few microseconds: each free comes after its object's
 * allocation in the capture (the serial clock reads the clock when another
 * thread's object record came last: wthread_path.h), so none is a free of
 * an unknown block and none is made twice. The watched size is the 31-
 * character strings' (other objects of that size count too: 61,000 to
 * 116,000 of them, by the Python). */
#define NHAND 60000

static const char handoff[] =
	"import collections, sys, threading\n"
	"sys.setswitchinterval(1e-6)\n"
	"q = collections.deque()\n"
	"def make():\n"
	"    for i in range(60000):\n"
	"        q.append('%031d' % i)\n"
	"t = threading.Thread(target=make)\n"
	"t.start()\n"
	"n = 0\n"
	"while n < 60000:\n"
	"    try:\n"
	"        q.popleft()\n"
	"        n += 1\n"
	"    except IndexError:\n"
	"        pass\n"
	"t.join()\n"
	"with open(sys.argv[1], 'w') as f:\n"
	"    f.write('%d\\n' % sys.getsizeof('%031d' % 0))\n";

static void check_handoff(const char *dir, const char *cap, const char *python)
{
	char script[200], expect[200], *text;
	const char *args[3];
	hk_stats_t py = {0};
	unsigned long long size = 0;

	write_script(script, sizeof(script), dir, "handoff.py", NULL, handoff);
	snprintf(expect, sizeof(expect), "%s/handoff.txt", dir);
	args[0] = script;
	args[1] = expect;
	args[2] = NULL;
	assert_int_equal(hk_record(cap, NULL, python, args, NULL), 0);
	text = hk_read_text(expect);
	assert_int_equal(sscanf(text, "%llu", &size), 1);
	free(text);
	py.memory = "pymalloc";
	py.nwatch = 1;
	py.watch[0].size = size;
	hk_replay_ok(cap, &py);
	fprintf(stderr, "  handed over: %llu objects of %llu B made, %llu freed\n",
		(unsigned long long)py.watch[0].allocs, size, (unsigned long long)py.watch[0].frees);
	assert_true(py.watch[0].allocs >= NHAND);
	assert_true(py.watch[0].frees >= NHAND);
	assert_int_equal(py.unknown_frees, 0);
	assert_int_equal(py.double_allocs, 0);
	assert_int_equal(py.outside_regions, 0);
}

/* PYTHONMALLOC=pymalloc makes CPython set its allocators itself at start,
 * replacing ours: memprof says so, once, and the arenas are anonymous
 * memory (host_mmap) as before; no "pymalloc" memory id. */
static void test_hooks_python_replaced(void **state)
{
	tmpdir_t *t = *state;
	const char *python = "/root/.pyenv/versions/3.12.1/bin/python3";
	const char *args[] = {"-c", "s = [str(i) * 3 for i in range(100000)]", NULL};
	const char *env[] = {"PYTHONMALLOC=pymalloc", NULL};
	hk_stats_t mapped = {0}, py = {0};
	char log[200], *text, *w;

	if (access(python, X_OK)) {
		fprintf(stderr, "skip: %s not installed\n", python);
		skip();
	}
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, NULL, python, args, env), 0);
	text = hk_read_text(log);
	w = strstr(text, "memprof: warning: Python replaced memprof's allocator wrappers");
	assert_non_null(w);
	assert_null(strstr(w + 1, "memprof: warning: Python replaced")); /* once */
	assert_null(strstr(text, "Python objects (pymalloc)"));
	free(text);
	mapped.memory = "host_mmap";
	hk_replay_ok(t->cap, &mapped);
	assert_true(mapped.peak >= 2u << 20); /* the arenas of 100000 strings */
	py.memory = "pymalloc";
	hk_replay_ok(t->cap, &py);
	assert_int_equal(py.allocs + py.regions_added, 0);
}

/* record --no-python-objects (MEMPROF_PYMALLOC=0) --stacks: no
 * "pymalloc" memory id; pymalloc's arenas are the program's own mappings
 * (host_mmap), 1 MiB each, and each is charged to the Python line whose
 * objects needed it (--by-function: the strings' line holds the arenas of
 * its 100000 strings, 2 MiB or more). */
static void test_hooks_python_no_objects(void **state)
{
	tmpdir_t *t = *state;
	const char *python = "/root/.pyenv/versions/3.12.1/bin/python3";
	const char *opts[] = {"--no-python-objects", "--stacks", NULL};
	char script[200], log[200], cmd[1200], *text;
	const char *args[] = {script, NULL};
	hk_stats_t mapped = {0}, py = {0};
	uint64_t at_line = 0;
	json_error_t err;
	json_t *rep, *r;
	size_t i;
	FILE *p;

	if (access(python, X_OK)) {
		fprintf(stderr, "skip: %s not installed\n", python);
		skip();
	}
	write_script(script, sizeof(script), t->dir, "arenas.py", NULL,
		     "def build():\n    return [str(i) * 3 for i in range(100000)]\n\n\ns = build()\n");
	snprintf(log, sizeof(log), "%s/record.log", t->dir);
	assert_int_equal(hk_record_logged(t->cap, log, opts, python, args, NULL), 0);
	text = hk_read_text(log);
	assert_null(strstr(text, "Python objects (pymalloc)"));
	free(text);
	mapped.memory = "host_mmap";
	hk_replay_ok(t->cap, &mapped);
	assert_true(mapped.peak >= 2u << 20);
	py.memory = "pymalloc";
	hk_replay_ok(t->cap, &py);
	assert_int_equal(py.allocs + py.regions_added, 0);
	/* the arenas' line: host_mmap's by-function rows at arenas.py:2 */
	snprintf(cmd, sizeof(cmd), "'%s' report --by-function --json '%s'", HK_MEMPROF, t->cap);
	assert_non_null(p = popen(cmd, "r"));
	rep = mp_test_json_loadf(p, 0, "report", &err);
	assert_int_equal(pclose(p), 0);
	assert_non_null(rep);
	json_array_foreach(json_object_get(json_object_get(rep, "functions"), "rows"), i, r) {
		const char *file = json_string_value(json_object_get(r, "file"));
		if (!strcmp(json_string_value(json_object_get(r, "memory")), "host_mmap") && file &&
		    !strcmp(file, script) && json_integer_value(json_object_get(r, "line")) == 2)
			at_line += (uint64_t)json_integer_value(json_object_get(r, "peak_bytes"));
	}
	json_decref(rep);
	fprintf(stderr, "  --no-python-objects: host_mmap peak %llu B, at arenas.py:2 %llu B\n",
		(unsigned long long)mapped.peak, (unsigned long long)at_line);
	assert_true(at_line >= 2u << 20);
}

static const char *const pythons[] = {
	"/root/.pyenv/versions/3.10.13/bin/python3", "/root/.pyenv/versions/3.11.7/bin/python3",
	"/root/.pyenv/versions/3.12.1/bin/python3", "/root/.pyenv/versions/3.13.0/bin/python3",
	"/usr/bin/python3.11",
};

static void test_hooks_python(void **state)
{
	tmpdir_t *t = *state;
	size_t i;
	int ran = 0;

	for (i = 0; i < sizeof(pythons) / sizeof(pythons[0]); i++) {
		if (access(pythons[i], X_OK)) {
			fprintf(stderr, "skip: %s not installed\n", pythons[i]);
			continue;
		}
		check_python(t->dir, t->cap, pythons[i], 0);
		if (strstr(pythons[i], "3.12"))
			check_python(t->dir, t->cap, pythons[i], 1);
		check_handoff(t->dir, t->cap, pythons[i]);
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "skip: none of the Pythons is installed\n");
		skip();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hooks_python, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_python_replaced, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_hooks_python_no_objects, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests_name("hooks_python", tests, NULL, NULL);
}
