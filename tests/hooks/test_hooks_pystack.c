/* test_hooks_pystack.c - Python frames in `memprof record --stacks`.
 *
 * 1. The layout table (allocator_hooks/preload/pyoffsets.c) against the
 *    structures themselves: pyoffsets_dump.c is compiled against each
 *    installed CPython's headers (internal ones included) and prints
 *    offsetof() of every field memprof reads; each must equal the table's.
 *    A Python whose headers are absent is skipped with a message.
 * 2. victim_py.py under `memprof record --stacks` with CPython 3.11, 3.12
 *    and 3.13 (pyenv's) and Debian's 3.11: the stack of each of its three big bytearrays (a malloc of
 *    N + 1 bytes) holds native frames first (the allocator's callers), then
 *    the Python function at the allocating line, then its caller at the
 *    calling line -- lines counted by hand in victim_py.py --; the second
 *    thread's allocation has its own frames (worker, never main).
 * 3. MEMPROF_STACKS=fp (3.12): the walk stops in libpython, built without
 *    frame pointers, and the three Python frames follow.
 * 4. Python 3.10: one warning, native stacks only; MEMPROF_PYTHON=0: no
 *    Python frame either.
 */
#include "test_common.h"

#include "hooks_run.h"
#include "pyoffsets.h"

#include <memprof/capture.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PYENV "/root/.pyenv/versions/"
#define SCRIPT HK_SRC_DIR "/victim_py.py"

/* Golden lines, counted in victim_py.py. */
#define LINE_GROW 9
#define LINE_MAKE_BUFFER 13
#define LINE_WORKER 21
#define LINE_MAIN_CALLS_BUFFER 26
#define LINE_MAIN_CALLS_GROW 27
#define LINE_MODULE_CALLS_MAIN 34

static const struct {
	const char *name;
	size_t at;
} fields[] = {
#define F(x) {#x, offsetof(mp_pyoffsets_t, x)}
	F(minor),          F(ts_cframe),       F(cframe_current_frame), F(ts_current_frame), F(fr_code),
	F(fr_previous),    F(fr_instr),        F(fr_owner),             F(fr_is_entry),      F(owner_cstack),
	F(owner_generator), F(co_filename),    F(co_name),              F(co_qualname),      F(co_firstlineno),
	F(co_firsttraceable), F(co_code_adaptive), F(ob_type),          F(u_length),         F(u_state),
	F(u_ascii_size),   F(u_compact_size),  F(u_kind_shift),         F(u_compact_shift),  F(u_ascii_shift),
#undef F
};

static const struct {
	const char *name;
	long index;
} dbg[] = {
	{"dbg_version", MP_DBG_VERSION},         {"dbg_free_threaded", MP_DBG_FREE_THREADED},
	{"dbg_ts_current_frame", MP_DBG_TS_CURRENT_FRAME}, {"dbg_fr_previous", MP_DBG_FR_PREVIOUS},
	{"dbg_fr_executable", MP_DBG_FR_EXECUTABLE}, {"dbg_fr_instr_ptr", MP_DBG_FR_INSTR_PTR},
	{"dbg_fr_owner", MP_DBG_FR_OWNER},       {"dbg_co_filename", MP_DBG_CO_FILENAME},
	{"dbg_co_name", MP_DBG_CO_NAME},         {"dbg_co_qualname", MP_DBG_CO_QUALNAME},
	{"dbg_co_firstlineno", MP_DBG_CO_FIRSTLINENO}, {"dbg_co_code_adaptive", MP_DBG_CO_CODE_ADAPTIVE},
	{"dbg_ob_type", MP_DBG_OB_TYPE},         {"dbg_u_state", MP_DBG_U_STATE},
	{"dbg_u_length", MP_DBG_U_LENGTH},       {"dbg_u_ascii_size", MP_DBG_U_ASCII_SIZE},
};

/* Compile the dump against one Python's headers and compare; returns the
 * number of figures compared (0: headers absent, skipped). */
static int check_layout(const tmpdir_t *t, const char *label, const char *inc, int minor)
{
	char path[512], cmd[2048], name[64];
	const mp_pyoffsets_t *o = mp__pyoffsets(minor);
	long value;
	int n = 0, lines = 0;
	size_t i;
	FILE *p;

	snprintf(path, sizeof(path), "%s/internal/pycore_frame.h", inc);
	if (access(path, R_OK) != 0) {
		print_message("skip %s: no internal headers in %s\n", label, inc);
		return 0;
	}
	assert_non_null(o);
	snprintf(path, sizeof(path), "%s/dump%d", t->dir, minor);
	snprintf(cmd, sizeof(cmd), "'%s' -I'%s' -I'%s/internal' '%s/pyoffsets_dump.c' -o '%s'", HK_CC, inc, inc,
		 HK_SRC_DIR, path);
	assert_int_equal(system(cmd), 0);
	p = popen(path, "r");
	assert_non_null(p);
	while (fscanf(p, "%63s %ld", name, &value) == 2) {
		int found = 0;
		lines++;
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if (strcmp(fields[i].name, name))
				continue;
			found = 1;
			if (*(const int *)((const char *)o + fields[i].at) != value)
				fail_msg("%s: %s is %ld in its headers, %d in memprof's table", label, name, value,
					 *(const int *)((const char *)o + fields[i].at));
		}
		for (i = 0; i < sizeof(dbg) / sizeof(dbg[0]); i++) {
			if (strcmp(dbg[i].name, name))
				continue;
			found = 1;
			if (dbg[i].index != value)
				fail_msg("%s: _Py_DebugOffsets %s is field %ld, memprof reads %ld", label, name, value,
					 dbg[i].index);
		}
		if (!found)
			fail_msg("%s: %s not checked", label, name);
		n++;
	}
	assert_int_equal(pclose(p), 0);
	assert_true(lines >= 20);
	print_message("%s: %d figures agree with its headers\n", label, n);
	return n;
}

static void test_pystack_offsets(void **state)
{
	int n = 0;

	n += check_layout(*state, "3.11.7", PYENV "3.11.7/include/python3.11", 11);
	n += check_layout(*state, "3.12.1", PYENV "3.12.1/include/python3.12", 12);
	n += check_layout(*state, "3.13.0", PYENV "3.13.0/include/python3.13", 13);
	n += check_layout(*state, "Debian 3.11", "/usr/include/python3.11", 11);
	if (!n)
		skip();
}

typedef struct {
	const char *function, *file;
	uint32_t line;
} pyframe_t;

/* The stack of the next ALLOC of `requested` bytes in memory id memory
 * (-1: any): how many of its values are native pcs before the first Python
 * frame, and its Python frames in order (at most max). Returns the number
 * of Python frames; -1 when no more such allocation is in the capture. */
static int stack_in(mp_capture_t *cap, int memory, uint64_t requested, int *native_first, pyframe_t *py, int max)
{
	mp_source_t *src = mp_capture_source(cap);
	mp_diag_t diag;
	mp_event_t ev;
	const uint64_t *v;
	uint32_t n, i;
	int k = 0, kind;

	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.kind != MP_EV_ALLOC || ev.requested_bytes != requested ||
		    (memory >= 0 && ev.memory != (uint32_t)memory))
			continue;
		assert_true(ev.stack != 0);
		assert_int_equal(mp_capture_stack(cap, ev.stack, &v, &n), 0);
		*native_first = 0;
		for (i = 0; i < n; i++) {
			if (!(v[i] & MP_STACK_FRAME_TAG)) {
				if (!k)
					++*native_first;
				continue;
			}
			if (k < max) {
				assert_int_equal(mp_capture_frame(cap, v[i], &py[k].function, &py[k].file, &py[k].line,
								  &kind),
						 0);
				assert_int_equal(kind, MP_FRAME_PYTHON);
			}
			k++;
		}
		return k;
	}
	return -1;
}

/* The first host ALLOC of `requested` bytes (stack_in). */
static int stack_of(mp_capture_t *cap, uint64_t requested, int *native_first, pyframe_t *py, int max)
{
	return stack_in(cap, 0, requested, native_first, py, max);
}

static void expect_frame(const pyframe_t *f, const char *function, uint32_t line)
{
	assert_string_equal(f->function, function);
	assert_string_equal(f->file, SCRIPT);
	assert_int_equal(f->line, line);
}

static void test_pystack_frames(void **state)
{
	/* pyenv's builds load libpython3.X.so; Debian's python3.11 is one
	 * static binary (the interpreter's symbols in the program itself) */
	static const char *const versions[] = {"3.11.7", "3.12.1", "3.13.0", "Debian 3.11"};
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL}, *args[] = {SCRIPT, NULL};
	int done = 0;
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		char py[256], log[128], *text;
		pyframe_t f[64];
		mp_capture_t *cap;
		mp_diag_t diag;
		int native, n, j;

		if (!strcmp(versions[i], "Debian 3.11"))
			snprintf(py, sizeof(py), "/usr/bin/python3.11");
		else
			snprintf(py, sizeof(py), PYENV "%s/bin/python%.4s", versions[i], versions[i]);
		if (access(py, X_OK) != 0) {
			print_message("skip Python %s: %s absent\n", versions[i], py);
			continue;
		}
		snprintf(log, sizeof(log), "%s/log%zu", t->dir, i);
		unlink(t->cap);
		assert_int_equal(hk_record_logged(t->cap, log, opts, py, args, NULL), 0);
		text = hk_read_text(log);
		assert_null(strstr(text, "frames not supported"));
		free(text);
		assert_int_equal(mp_capture_open(&cap, t->cap, &diag), 0);

		/* make_buffer's 1 MiB, called by main, called by the module */
		n = stack_of(cap, (1u << 20) + 1, &native, f, 64);
		print_message("Python %s: bytearray(1 << 20): %d native frames, then %d Python frames\n", versions[i],
			      native, n);
		assert_true(n >= 3);
		assert_true(native >= 1); /* malloc's callers in the interpreter's C code */
		expect_frame(&f[0], "make_buffer", LINE_MAKE_BUFFER);
		expect_frame(&f[1], "main", LINE_MAIN_CALLS_BUFFER);
		expect_frame(&f[2], "<module>", LINE_MODULE_CALLS_MAIN);
		mp_capture_close(cap);

		/* a method: its qualified name */
		assert_int_equal(mp_capture_open(&cap, t->cap, &diag), 0);
		n = stack_of(cap, (3u << 20) + 1, &native, f, 64);
		assert_true(n >= 3);
		expect_frame(&f[0], "Holder.grow", LINE_GROW);
		expect_frame(&f[1], "main", LINE_MAIN_CALLS_GROW);
		mp_capture_close(cap);

		/* the second thread: its own frames, none of the main thread's */
		assert_int_equal(mp_capture_open(&cap, t->cap, &diag), 0);
		n = stack_of(cap, (2u << 20) + 1, &native, f, 64);
		assert_true(n >= 2);
		expect_frame(&f[0], "worker", LINE_WORKER);
		assert_string_equal(f[1].function, "Thread.run");
		assert_non_null(strstr(f[1].file, "threading.py"));
		for (j = 0; j < n && j < 64; j++)
			assert_string_not_equal(f[j].function, "main");
		mp_capture_close(cap);
		done++;
	}
	if (!done)
		skip();
}

/* victim_pycode.py: 100 functions f_k made and dropped in turn, each
 * making a 301 + k byte pymalloc object at <pycode>:2. Each new code object
 * (and its names) is likely made where the last one was, and run by a
 * frame at the same address and instruction, so the thread's stack cache
 * (pystack_cache.c) would name a dead function were a code object's death
 * missed: every allocation of those sizes made at <pycode> must name its
 * own f_k. */
static void test_pystack_code_reuse(void **state)
{
	static const char *const versions[] = {"3.11.7", "3.12.1", "3.13.0", "Debian 3.11"};
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL}, *args[] = {HK_SRC_DIR "/victim_pycode.py", NULL};
	int done = 0;
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		char py[256], want[16];
		pyframe_t f[8];
		mp_capture_t *cap;
		mp_diag_t diag;
		int native, n, k, seen, checked = 0;

		if (!strcmp(versions[i], "Debian 3.11"))
			snprintf(py, sizeof(py), "/usr/bin/python3.11");
		else
			snprintf(py, sizeof(py), PYENV "%s/bin/python%.4s", versions[i], versions[i]);
		if (access(py, X_OK) != 0) {
			print_message("skip Python %s: %s absent\n", versions[i], py);
			continue;
		}
		unlink(t->cap);
		assert_int_equal(hk_record(t->cap, opts, py, args, NULL), 0);
		for (k = 0; k < 100; k++) {
			snprintf(want, sizeof(want), "f_%d", k);
			assert_int_equal(mp_capture_open(&cap, t->cap, &diag), 0);
			seen = 0;
			while ((n = stack_in(cap, -1, 301 + (uint64_t)k, &native, f, 8)) >= 0) {
				if (n < 1 || strcmp(f[0].file, "<pycode>"))
					continue; /* another allocation of that size */
				if (strcmp(f[0].function, want))
					fail_msg("Python %s: the object of %d bytes names %s, not %s", versions[i],
						 301 + k, f[0].function, want);
				assert_int_equal(f[0].line, 2);
				seen++;
			}
			mp_capture_close(cap);
			assert_true(seen >= 1);
			checked += seen;
		}
		print_message("Python %s: %d objects made by 100 short-lived functions name their own\n", versions[i],
			      checked);
		done++;
	}
	if (!done)
		skip();
}

/* The frame-pointer walk stops at the first frame built without frame
 * pointers (pyenv's libpython: at once); the Python frames follow what it
 * found, all of them. */
static void test_pystack_fp(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL}, *args[] = {SCRIPT, NULL};
	const char *env[] = {"MEMPROF_STACKS=fp", NULL};
	const char *py = PYENV "3.12.1/bin/python3.12";
	mp_capture_t *cap;
	mp_diag_t diag;
	pyframe_t f[64];
	int native, n;

	if (access(py, X_OK) != 0) {
		print_message("skip: %s absent\n", py);
		skip();
	}
	assert_int_equal(hk_record(t->cap, opts, py, args, env), 0);
	assert_int_equal(mp_capture_open(&cap, t->cap, &diag), 0);
	n = stack_of(cap, (1u << 20) + 1, &native, f, 64);
	assert_int_equal(n, 3);
	assert_true(native >= 1);
	expect_frame(&f[0], "make_buffer", LINE_MAKE_BUFFER);
	expect_frame(&f[1], "main", LINE_MAIN_CALLS_BUFFER);
	expect_frame(&f[2], "<module>", LINE_MODULE_CALLS_MAIN);
	mp_capture_close(cap);
}

/* No Python frame anywhere in the capture; the 1 MiB allocation has a
 * (native) stack. */
static void expect_native_only(const char *path)
{
	mp_capture_t *cap;
	mp_diag_t diag;
	pyframe_t f[4];
	int native;

	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(stack_of(cap, (1u << 20) + 1, &native, f, 4), 0);
	assert_true(native >= 3);
	mp_capture_close(cap);
}

static void test_pystack_unsupported(void **state)
{
	tmpdir_t *t = *state;
	const char *opts[] = {"--stacks", NULL}, *args[] = {SCRIPT, NULL};
	const char *off[] = {"MEMPROF_PYTHON=0", NULL};
	const char *want = "memprof: Python 3.10 frames not supported (3.11-3.13); native stacks only\n";
	char log[128], *text, *at;
	int ran = 0;

	snprintf(log, sizeof(log), "%s/log", t->dir);
	if (access(PYENV "3.10.13/bin/python3.10", X_OK) == 0) {
		assert_int_equal(hk_record_logged(t->cap, log, opts, PYENV "3.10.13/bin/python3.10", args, NULL), 0);
		text = hk_read_text(log);
		at = strstr(text, want);
		assert_non_null(at);
		assert_null(strstr(at + strlen(want), "frames not supported")); /* once */
		free(text);
		expect_native_only(t->cap);
		ran++;
	} else {
		print_message("skip Python 3.10: absent\n");
	}
	if (access(PYENV "3.12.1/bin/python3.12", X_OK) == 0) {
		unlink(t->cap);
		assert_int_equal(hk_record_logged(t->cap, log, opts, PYENV "3.12.1/bin/python3.12", args, off), 0);
		text = hk_read_text(log);
		assert_null(strstr(text, "frames not supported"));
		free(text);
		expect_native_only(t->cap);
		ran++;
	}
	if (!ran)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pystack_offsets, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_pystack_frames, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_pystack_code_reuse, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_pystack_fp, hk_setup_dir, hk_teardown_dir),
		cmocka_unit_test_setup_teardown(test_pystack_unsupported, hk_setup_dir, hk_teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
