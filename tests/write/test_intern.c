/* test_intern.c - string interning in the writer and string resolution in
 * the reader: the same string gets the same id, from any thread, through
 * table growth, and reads back as the same bytes. */
#include "test_common.h"

#include "capture_helpers.h"

#include <pthread.h>

#define NSTR 5000

struct job {
	mp_writer_t *w;
	uint32_t ids[NSTR];
};

static void *intern_all(void *arg)
{
	struct job *j = arg;
	char s[32];
	int i;

	for (i = 0; i < NSTR; i++) {
		snprintf(s, sizeof(s), "op/%d", i);
		j->ids[i] = mp_writer_intern(j->w, s);
	}
	return NULL;
}

static void test_intern_same_id_across_threads(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	static struct job jobs[4];
	pthread_t tid[4];
	mp_writer_t *w;
	mp_diag_t diag;
	mp_capture_t *cap;
	mp_source_t *src;
	mp_event_t ev;
	int i, t, rc;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	for (t = 0; t < 4; t++) {
		jobs[t].w = w;
		pthread_create(&tid[t], NULL, intern_all, &jobs[t]);
	}
	for (t = 0; t < 4; t++)
		pthread_join(tid[t], NULL);
	for (i = 0; i < NSTR; i++) {
		assert_true(jobs[0].ids[i] > 0);
		for (t = 1; t < 4; t++)
			assert_int_equal(jobs[t].ids[i], jobs[0].ids[i]);
		for (t = 0; t < i; t += 997)
			assert_int_not_equal(jobs[0].ids[t], jobs[0].ids[i]);
	}
	/* Ids are 1..NSTR in some order: each exactly once. */
	{
		static unsigned char seen[NSTR + 1];
		for (i = 0; i < NSTR; i++) {
			assert_true(jobs[0].ids[i] >= 1 && jobs[0].ids[i] <= NSTR);
			assert_int_equal(seen[jobs[0].ids[i]], 0);
			seen[jobs[0].ids[i]] = 1;
		}
	}
	assert_int_equal(mp_writer_intern(w, "op/17"), jobs[0].ids[17]);
	assert_int_equal(mp_writer_intern(w, ""), NSTR + 1); /* empty strings are strings too */
	assert_int_equal(mp_writer_intern(w, NULL), 0);
	/* A memory id's name is interned with the rest. */
	assert_int_equal(mp_writer_memory(w, "op/42", MP_MEMORY_OTHER, 0), 0);
	assert_int_equal(mp_writer_memory(w, "op/42", MP_MEMORY_OTHER, 0), 0);
	assert_int_equal(mp_writer_memory(w, "second", MP_MEMORY_HOST, 7), 1);
	assert_int_equal(mp_writer_close(w), 0);

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	src = mp_capture_source(cap);
	while ((rc = mp_source_next(src, &ev, &diag)) == 1)
		;
	assert_int_equal(rc, 0);
	for (i = 0; i < NSTR; i++) {
		char s[32];
		snprintf(s, sizeof(s), "op/%d", i);
		assert_string_equal(mp_source_string(src, jobs[0].ids[i]), s);
	}
	assert_string_equal(mp_source_string(src, 0), "");
	assert_string_equal(mp_source_string(src, 999999), "");
	assert_int_equal(mp_source_memory_count(src), 2);
	assert_string_equal(mp_source_memory(src, 0)->name, "op/42");
	assert_string_equal(mp_source_memory(src, 1)->name, "second");
	assert_int_equal(mp_source_memory(src, 1)->capacity_bytes, 7);
	assert_int_equal(mp_source_memory(src, 1)->kind, MP_MEMORY_HOST);
	assert_null(mp_source_memory(src, 2));
	assert_int_equal(mp_capture_trailer(cap)->strings, NSTR + 2);
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_same_id_across_threads),
	};
	return cmocka_run_group_tests_name("intern", tests, NULL, NULL);
}
