/* test_torch_metadata.c - PyTorch's user_metadata as the report's metadata
 * column, and annotate entries as the mark the peak came after.
 *
 * gen_snapshots.py's 'metadata' scenario tags its allocations (none, then
 * "forward", "backward", then a value CSV must quote), puts two annotate
 * marks in its trace and keeps a pending free whose block stays charged to
 * its allocation's metadata. Its model computes the bytes live at the peak
 * and at the end per metadata value, and the last mark before the peak;
 * here the solver's rows, and the text, JSON and CSV reports, are summed
 * per metadata value and compared with those figures. */
#include "test_common.h"

#include "json_check.h"

#include <memprof/solver.h>
#include <memprof/torch.h>

#include <jansson.h>

#define MEMPROF MEMPROF_BINARY_DIR "/src/cli/memprof"
#define OUT MEMPROF_BINARY_DIR "/tests/torch/fixtures-meta"
#define SNAP OUT "/metadata.pickle"

static json_t *expected; /* expected.json's metadata scenario, device 0 */
static json_t *root;

static int setup(void **state)
{
	json_error_t err;

	(void)state;
	if (system("python3 " MEMPROF_SOURCE_DIR "/tests/torch/gen_snapshots.py " OUT) != 0)
		return -1;
	root = json_load_file(OUT "/expected.json", 0, &err);
	expected = root ? json_array_get(json_object_get(root, "metadata"), 0) : NULL;
	return expected ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(root);
	return 0;
}

/* Per metadata value ("" = none): bytes, summed from rows. */
typedef struct sums {
	char key[8][128];
	uint64_t bytes[8];
	size_t n;
} sums_t;

static void add(sums_t *s, const char *key, uint64_t bytes)
{
	size_t i;

	for (i = 0; i < s->n && strcmp(s->key[i], key); i++)
		;
	if (i == s->n) {
		assert_true(s->n < 8 && strlen(key) < sizeof(s->key[0]));
		memcpy(s->key[s->n++], key, strlen(key) + 1);
	}
	s->bytes[i] += bytes;
}

/* sums equal the generator's object {metadata: bytes} */
static void same(const sums_t *s, const char *what)
{
	json_t *want = json_object_get(expected, what), *v;
	const char *k;

	assert_non_null(want);
	assert_int_equal(s->n, json_object_size(want));
	json_object_foreach(want, k, v) {
		size_t i;
		for (i = 0; i < s->n && strcmp(s->key[i], k); i++)
			;
		if (i == s->n)
			fail_msg("%s: no row with metadata '%s'", what, k);
		assert_int_equal(s->bytes[i], json_integer_value(v));
	}
}

static void test_solver(void **state)
{
	mp_source_t *src;
	mp_solver_t *solver;
	mp_solver_options_t so;
	mp_diag_t diag;
	const mp_solver_device_t *d = NULL;
	sums_t peak = {0}, end = {0};

	(void)state;
	mp_diag_clear(&diag);
	assert_int_equal(mp_torch_open_source(&src, SNAP, NULL, &diag), 0);
	mp_solver_options_init(&so);
	so.top = 50;
	solver = mp_solver_new(&so);
	assert_int_equal(mp_solver_run(solver, src, &diag), 0);
	for (size_t i = 0; i < mp_solver_device_count(solver); i++)
		if (!strcmp(mp_source_memory(src, mp_solver_device(solver, i)->id)->name, "cuda:0"))
			d = mp_solver_device(solver, i);
	assert_non_null(d);
	assert_int_equal(d->peak_bytes, json_integer_value(json_object_get(expected, "peak_allocated")));
	for (size_t i = 0; i < d->breakdown_count; i++)
		add(&peak, mp_source_string(src, d->breakdown[i].metadata), d->breakdown[i].total_bytes);
	for (size_t i = 0; i < d->leak_count; i++)
		add(&end, mp_source_string(src, d->leaks[i].metadata), d->leaks[i].total_bytes);
	same(&peak, "peak_by_metadata");
	same(&end, "end_by_metadata");
	assert_string_equal(mp_source_string(src, d->peak_mark),
			    json_string_value(json_object_get(expected, "mark_before_peak")));
	mp_solver_free(solver);
	mp_source_close(src);
}

/* Run cmd; its stdout into a malloc'd string. */
static char *sh(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);

	assert_non_null(f);
	assert_non_null(buf);
	while ((n += fread(buf + n, 1, cap - 1 - n, f)) == cap - 1) {
		cap *= 2;
		buf = realloc(buf, cap);
		assert_non_null(buf);
	}
	buf[n] = '\0';
	assert_int_equal(pclose(f), 0);
	return buf;
}

static void json_rows(const json_t *rows, sums_t *s)
{
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row) {
		const json_t *m = json_object_get(row, "metadata");
		add(s, json_is_null(m) ? "" : json_string_value(m), (uint64_t)json_integer_value(json_object_get(row, "total_bytes")));
	}
}

static void test_json(void **state)
{
	char *out = sh(MEMPROF " report --peak --leaks --device cuda:0 --json " SNAP);
	json_t *doc = mp_test_json_loads(out, "report"), *dev; /* the schema holds */
	sums_t peak = {0}, end = {0};

	(void)state;
	dev = json_array_get(json_object_get(doc, "devices"), 0);
	json_rows(json_object_get(dev, "breakdown"), &peak);
	json_rows(json_object_get(dev, "leaks"), &end);
	same(&peak, "peak_by_metadata");
	same(&end, "end_by_metadata");
	assert_string_equal(json_string_value(json_object_get(json_object_get(dev, "peak"), "after_mark")),
			    json_string_value(json_object_get(expected, "mark_before_peak")));
	json_decref(doc);
	free(out);
	/* the reserved level has no mark before its peak, and no metadata */
	out = sh(MEMPROF " report --peak --device 'cuda:0 reserved' --json " SNAP);
	doc = mp_test_json_loads(out, "report");
	dev = json_array_get(json_object_get(doc, "devices"), 0);
	assert_true(json_is_null(json_object_get(json_object_get(dev, "peak"), "after_mark")));
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(dev, "breakdown"), 0), "metadata")));
	json_decref(doc);
	free(out);
}

/* One CSV field from *p (RFC 4180 quotes undone) into buf; *p past it. */
static void csv_field(const char **p, char *buf, size_t size)
{
	size_t n = 0;
	const char *s = *p;

	if (*s == '"') {
		for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
			if (*s == '"')
				s++;
			if (n + 1 < size)
				buf[n++] = *s;
		}
		s++;
	} else {
		for (; *s && *s != ',' && *s != '\n'; s++)
			if (n + 1 < size)
				buf[n++] = *s;
	}
	buf[n] = '\0';
	*p = *s == ',' ? s + 1 : s;
}

/* The breakdown and leaks rows of a CSV report: total_bytes is the 11th
 * field, metadata the 13th (the last). */
static void csv_rows(const char *csv, sums_t *peak, sums_t *end)
{
	assert_non_null(strstr(csv, "section,file,device,op,region,dtype,shape,requested_bytes,allocated_bytes,"
				    "occurrences,total_bytes,unknown_origin,metadata\n"));
	for (const char *line = csv; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char f[13][128];
		const char *p = line;
		for (int i = 0; i < 13; i++)
			csv_field(&p, f[i], sizeof(f[i]));
		if (!strcmp(f[0], "breakdown"))
			add(peak, f[12], strtoull(f[10], NULL, 10));
		else if (!strcmp(f[0], "leaks"))
			add(end, f[12], strtoull(f[10], NULL, 10));
	}
}

static void test_csv(void **state)
{
	char *out = sh(MEMPROF " report --peak --leaks --device cuda:0 --csv " SNAP);
	sums_t peak = {0}, end = {0};

	(void)state;
	csv_rows(out, &peak, &end);
	same(&peak, "peak_by_metadata");
	same(&end, "end_by_metadata");
	/* the summary's last field */
	assert_non_null(strstr(out, ",fragmentation,after_mark\n"));
	assert_non_null(strstr(out, ",stage: backward\n"));
	/* a value with a comma and quotes, quoted */
	assert_non_null(strstr(out, ",\"optimizer, \"\"step\"\"\"\n"));
	free(out);
}

/* The text tables: each row's total (its first field) summed by the text
 * under the header's "metadata", up to where "op" starts ("-" = none). */
static void text_rows(const char *text, const char *title, sums_t *s)
{
	const char *t = strstr(text, title), *head, *line;
	size_t meta_at, op_at;

	assert_non_null(t);
	head = strchr(t, '\n') + 1;
	line = strchr(head, '\n') + 1;
	assert_non_null(strstr(head, "metadata"));
	meta_at = (size_t)(strstr(head, "metadata") - head);
	op_at = (size_t)(strstr(head, "  op\n") + 2 - head);
	for (; strncmp(line, "    ", 4) == 0 && line[4] != '.'; line = strchr(line, '\n') + 1) {
		char key[64];
		size_t n = op_at - meta_at;
		memcpy(key, line + meta_at, n);
		while (n && key[n - 1] == ' ')
			n--;
		key[n] = '\0';
		add(s, strcmp(key, "-") ? key : "", strtoull(line, NULL, 10));
	}
}

static void test_text(void **state)
{
	char *out = sh(MEMPROF " report --peak --leaks --device cuda:0 " SNAP);
	sums_t peak = {0}, end = {0};

	(void)state;
	text_rows(out, "live at the peak:", &peak);
	text_rows(out, "live at the end:", &end);
	same(&peak, "peak_by_metadata");
	same(&end, "end_by_metadata");
	assert_non_null(strstr(out, "    after mark      stage: backward\n"));
	free(out);
	/* no metadata anywhere: no column, no mark */
	out = sh(MEMPROF " report --peak --leaks " OUT "/blocks.pickle");
	assert_null(strstr(out, "metadata"));
	assert_null(strstr(out, "after mark"));
	assert_non_null(strstr(out, "shape  op\n"));
	free(out);
}

/* memprof dump of a snapshot: the events, their metadata, stacks and the
 * marks (times: time_us from the first entry, 10 us, in ns) */
static void test_dump(void **state)
{
	char *out = sh(MEMPROF " dump " SNAP);

	(void)state;
	assert_non_null(strstr(out, "holds     1 devices, 1 segments and 4 blocks at dump time, 13 trace entries\n"));
	assert_non_null(strstr(out, "rebuilt   0 allocations before the trace, 1 frees awaiting another stream\n"));
	assert_non_null(strstr(out, " t=35000 thread=0 step=-1 mark label=\"stage: backward\"\n"));
	assert_non_null(strstr(out, " t=90000 thread=0 step=-1 mark label=\"stage: end\"\n"));
	assert_non_null(strstr(out, " t=10000 thread=0 step=-1 alloc memory=cuda:0 addr=0x7f0000000000 requested=1048576 "
				    "allocated=1048576 op=\"forward (/home/u/train.py:42)\" stack=1\n"));
	/* a pending free leaves allocated bytes (cuda:0) for the awaiting memory id */
	assert_non_null(strstr(out, " t=50000 thread=0 step=-1 free memory=cuda:0 addr=0x7f0000100000\n"));
	assert_non_null(strstr(out, " t=50000 thread=0 step=-1 alloc memory=cuda:0 awaiting another stream "
				    "addr=0x7f0000100000 requested=4194304 allocated=4194304 "
				    "op=\"awaiting another stream: forward (/home/u/train.py:42)\" metadata=\"forward\" "
				    "stack=1\n")); /* its allocation's stack (the shared 'fwd' list, the first read) */
	assert_non_null(strstr(out, "\n17 events\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_solver),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_dump),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
