/* test_functions.c - allocations by allocating function (memprof/functions.h)
 * on a capture written with the writer API, whose stacks are made of real
 * return addresses into this program and into libc, so that symbolization,
 * the choice of the allocating frame and the figures can be checked by hand.
 *
 * Stacks (innermost first):
 *   S1 = {malloc, in make_tensor, in main-ish}   -> make_tensor (malloc skipped)
 *   S2 = {in load_weights}                       -> load_weights
 *   S3 = {calloc, realloc}                       -> only entry points: the first frame, calloc
 * Events on "host" (allocated = requested):
 *   alloc 0x1000 100 S1, alloc 0x2000 200 S1, alloc 0x3000 1000 S2,
 *   alloc 0x4000 7 (no stack), free 0x1000,            <- peak was 1307, at alloc 0x4000
 *   alloc 0x5000 50 S3, failed 1 GiB S2, free 0x3000
 * Expected rows, by bytes live at the peak:
 *   load_weights  allocations 1, requested 1000, failed 1, peak 1000/1, end 0/0
 *   make_tensor   2, 300, 0, peak 300/2, end 200/1
 *   (no stack)    1, 7,   0, peak 7/1,   end 7/1
 *   calloc        1, 50,  0, peak 0/0,   end 50/1
 */
#include "test_common.h"

#include "json_check.h"
#include <memprof/capture.h>
#include <memprof/functions.h>
#include <memprof/solver.h>

#include "demangle.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Functions whose addresses the stacks hold (a return address points
 * inside its caller: the start + 4 is inside these). */
__attribute__((noinline, used)) void make_tensor(void);
__attribute__((noinline, used)) void load_weights(void);
__attribute__((noinline, used)) void make_tensor(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}
__attribute__((noinline, used)) void load_weights(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}

/* A name longer than the text table shows (as a demangled C++ template
 * often is): 124 characters. */
__attribute__((noinline, used)) void
make_tensor_with_a_name_far_longer_than_any_column_should_be_in_a_text_table_of_allocating_functions_which_it_cuts_and_marks(
	void);
__attribute__((noinline, used)) void
make_tensor_with_a_name_far_longer_than_any_column_should_be_in_a_text_table_of_allocating_functions_which_it_cuts_and_marks(
	void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}
#define LONG_FN \
	"make_tensor_with_a_name_far_longer_than_any_column_should_be_in_a_text_table_of_allocating_functions_which_it_cuts_and_marks"

#define IN(fn) ((uint64_t)(uintptr_t)(fn) + 4)

static void write_capture(const char *path)
{
	void *(*volatile m)(size_t) = malloc;
	void *(*volatile c)(size_t, size_t) = calloc;
	void *(*volatile r)(void *, size_t) = realloc;
	uint64_t s1[3] = {IN(m), IN(make_tensor), IN(write_capture)}, s2[1] = {IN(load_weights)},
		 s3[2] = {IN(c), IN(r)};
	uint32_t a, b, d;
	mp_writer_t *w;
	mp_diag_t diag;

	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_true(mp_writer_modules(w) > 0);
	assert_int_equal(mp_writer_stack(w, s1, 3, &a), 0);
	assert_int_equal(mp_writer_stack(w, s2, 1, &b), 0);
	assert_int_equal(mp_writer_stack(w, s3, 2, &d), 0);
	mp_writer_next_stack(w, a);
	mp_writer_alloc(w, 0, 0x1000, 100, 100);
	mp_writer_next_stack(w, a);
	mp_writer_alloc(w, 0, 0x2000, 200, 200);
	mp_writer_next_stack(w, b);
	mp_writer_alloc(w, 0, 0x3000, 1000, 1000);
	mp_writer_alloc(w, 0, 0x4000, 7, 7);
	mp_writer_free(w, 0, 0x1000);
	mp_writer_next_stack(w, d);
	mp_writer_alloc(w, 0, 0x5000, 50, 50);
	mp_writer_next_stack(w, b);
	mp_writer_alloc_failed(w, 0, 1u << 30);
	mp_writer_free(w, 0, 0x3000);
	assert_int_equal(mp_writer_close(w), 0);
}

static const mp_func_row_t *row(const mp_functions_t *f, const char *name)
{
	for (size_t i = 0; i < mp_functions_count(f); i++)
		if (!strcmp(mp_functions_row(f, i)->function, name))
			return mp_functions_row(f, i);
	for (size_t i = 0; i < mp_functions_count(f); i++)
		print_message("row %s\n", mp_functions_row(f, i)->function);
	fail_msg("no row '%s'", name);
	return NULL;
}

static void expect(const mp_func_row_t *r, uint64_t allocs, uint64_t req, uint64_t failed, uint64_t pb, uint64_t pc,
		   uint64_t lb, uint64_t lc)
{
	assert_int_equal(r->memory, 0);
	assert_int_equal(r->allocations, allocs);
	assert_int_equal(r->requested_bytes, req);
	assert_int_equal(r->failed, failed);
	assert_int_equal(r->peak_bytes, pb);
	assert_int_equal(r->peak_count, pc);
	assert_int_equal(r->leak_bytes, lb);
	assert_int_equal(r->leak_count, lc);
}

/* What a test made: freed, and its capture file removed. */
static void release(mp_functions_t *f, mp_solver_t *s, mp_source_t *src, char *path)
{
	mp_functions_free(f);
	mp_solver_free(s);
	mp_source_close(src);
	unlink(path);
	free(path);
}

static void test_functions_by_hand(void **state)
{
	char *path = mp_test_tmpfile("functions.memprof");
	mp_functions_t *f = NULL;
	const mp_func_frame_t *fr;
	mp_solver_t *s;
	mp_source_t *src;
	mp_diag_t diag;
	uint32_t n;
	json_t *j;

	(void)state;
	write_capture(path);
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_solver_find(s, 0)->peak_bytes, 1307);
	assert_int_equal(mp_functions_compute(&f, src, s, &diag), 0);
	assert_int_equal(mp_functions_distinct_stacks(f), 3);
	assert_int_equal(mp_functions_count(f), 4);
	if (strcmp(mp_functions_symbolizer(f), "libdw")) {
		print_message("built without libdw: names not checked\n");
	} else {
		/* sorted by bytes live at the peak */
		assert_string_equal(mp_functions_row(f, 0)->function, "load_weights");
		assert_string_equal(mp_functions_row(f, 1)->function, "make_tensor");
		expect(row(f, "load_weights"), 1, 1000, 1, 1000, 1, 0, 0);
		expect(row(f, "make_tensor"), 2, 300, 0, 300, 2, 200, 1);
		expect(row(f, "(no stack)"), 1, 7, 0, 7, 1, 7, 1);
		expect(row(f, "calloc"), 1, 50, 0, 0, 0, 50, 1);
		assert_int_equal(row(f, "make_tensor")->stacks, 1);
		/* the frames, symbolized: malloc (version dropped), make_tensor */
		assert_int_equal(mp_functions_frames(f, row(f, "make_tensor")->stack, &fr, &n), 0);
		assert_int_equal(n, 3);
		assert_string_equal(fr[0].function, "malloc");
		assert_string_equal(fr[1].function, "make_tensor");
		assert_string_equal(fr[2].function, "write_capture");
		assert_non_null(fr[0].object); /* libc, or this program under ASan (its malloc interceptor) */
		assert_non_null(strstr(fr[1].object, "test_report_functions"));
		j = mp_functions_json(f, src, 0, 0, 0);
		assert_non_null(j);
		mp_test_json_valid(j, "report", "functions");
		assert_int_equal(json_array_size(json_object_get(j, "rows")), 4);
		json_decref(j);
		j = mp_functions_json(f, src, 1, 0, 0); /* --top 1 */
		mp_test_json_valid(j, "report", "functions");
		assert_int_equal(json_array_size(json_object_get(j, "rows")), 1);
		json_decref(j);
	}
	release(f, s, src, path);
}

/* A function name longer than the text table's 120 characters: the text
 * shows its first 117 and "...", JSON the whole name. */
static void test_functions_long_name(void **state)
{
	char *path = mp_test_tmpfile("longname.memprof"), *text = NULL, want[200];
	uint64_t st[1] = {
		IN(make_tensor_with_a_name_far_longer_than_any_column_should_be_in_a_text_table_of_allocating_functions_which_it_cuts_and_marks)};
	size_t len = 0;
	mp_functions_t *f = NULL;
	mp_writer_t *w;
	mp_solver_t *s;
	mp_source_t *src;
	mp_diag_t diag;
	uint32_t id;
	FILE *out;
	json_t *j;

	(void)state;
	assert_int_equal(strlen(LONG_FN), 124);
	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	assert_int_equal(mp_writer_memory(w, "host", MP_MEMORY_HOST, 0), 0);
	assert_true(mp_writer_modules(w) > 0);
	assert_int_equal(mp_writer_stack(w, st, 1, &id), 0);
	mp_writer_next_stack(w, id);
	mp_writer_alloc(w, 0, 0x1000, 64, 64);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_functions_compute(&f, src, s, &diag), 0);
	if (strcmp(mp_functions_symbolizer(f), "libdw")) {
		print_message("built without libdw: names not checked\n");
	} else {
		assert_string_equal(mp_functions_row(f, 0)->function, LONG_FN);
		out = open_memstream(&text, &len);
		assert_non_null(out);
		assert_int_equal(mp_functions_text(out, f, src, 0, 0, 0), 0);
		fclose(out);
		snprintf(want, sizeof(want), "  %.117s...  ", LONG_FN);
		assert_non_null(strstr(text, want));
		assert_null(strstr(text, LONG_FN));
		free(text);
		j = mp_functions_json(f, src, 0, 0, 0);
		mp_test_json_valid(j, "report", "functions");
		assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "rows"), 0),
								      "function")),
				    LONG_FN);
		json_decref(j);
	}
	release(f, s, src, path);
}

/* A capture without stacks: MP_ENODATA, nothing allocated. */
static void test_functions_none(void **state)
{
	char *path = mp_test_tmpfile("nostacks.memprof");
	mp_functions_t *f = (mp_functions_t *)1;
	mp_writer_t *w;
	mp_solver_t *s;
	mp_source_t *src;
	mp_diag_t diag;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	mp_writer_alloc(w, 0, 0x1000, 10, 10);
	assert_int_equal(mp_writer_close(w), 0);
	assert_int_equal(mp_capture_open_source(&src, path, &diag), 0);
	s = mp_solver_new(NULL);
	assert_int_equal(mp_solver_run(s, src, &diag), 0);
	assert_int_equal(mp_functions_compute(&f, src, s, &diag), MP_ENODATA);
	assert_null(f);
	mp_solver_free(s);
	mp_source_close(src);
	unlink(path);
	free(path);
}

/* Mangled names and what the report shows for them. The readable forms
 * are binutils' c++filt's (GNU c++filt 2.40) -- without, for Rust, what it
 * adds in its verbose mode: legacy names' hash, v0 crate disambiguators.
 * The Rust names come from a `rustc -O` program's own frames (std 1.9x). */
static const struct {
	const char *mangled, *readable; /* NULL: left as it is */
} demangle_cases[] = {
	{"_ZN3foo3barEm", "foo::bar(unsigned long)"},
	{"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)"},
	{"_ZN3std3sys9backtrace28__rust_begin_short_backtrace17h61b9b1fbf7cc30c3E",
	 "std::sys::backtrace::__rust_begin_short_backtrace"},
	{"_RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner11finish_growCsjrHSEGnQ3l9_3std",
	 "<alloc::raw_vec::RawVecInner>::finish_grow"},
	{"_RINvNtCs1234_4core3ptr13drop_in_placeNtNtCs5678_5alloc6string6StringEB6_",
	 "core::ptr::drop_in_place::<alloc::string::String>"},
	{"main", NULL},
	{"_Znot_a_name", NULL},
	{"_Rxyz", NULL},
	{"", NULL},
};

static void test_demangle_names(void **state)
{
	char buf[256], versioned[300];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(demangle_cases) / sizeof(demangle_cases[0]); i++) {
		const char *m = demangle_cases[i].mangled;
		strcpy(buf, "untouched");
		if (demangle_cases[i].readable) {
			assert_int_equal(mp_demangle(m, strlen(m), buf, sizeof(buf)), 1);
			assert_string_equal(buf, demangle_cases[i].readable);
			/* one byte short of the result and its NUL: not shown cut */
			assert_int_equal(mp_demangle(m, strlen(m), buf, strlen(demangle_cases[i].readable)), 0);
			/* a symbol's name ends at its length (a version may follow) */
			snprintf(versioned, sizeof(versioned), "%s@@V_1", m);
			assert_int_equal(mp_demangle(versioned, strlen(m), buf, sizeof(buf)), 1);
			assert_string_equal(buf, demangle_cases[i].readable);
		} else {
			assert_int_equal(mp_demangle(m, strlen(m), buf, sizeof(buf)), 0);
			assert_string_equal(buf, "untouched");
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_functions_by_hand),
		cmocka_unit_test(test_functions_long_name),
		cmocka_unit_test(test_demangle_names),
		cmocka_unit_test(test_functions_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
