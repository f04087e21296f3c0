/* test_stacks.c - call stacks and the module map in a capture (format 1.1):
 * interning and deduplication, a stack carried across a flush round, the
 * module map of this very process, 1.0 files, and damaged STACK / MODULE
 * sections (a clear error, never a crash), 2.1 files. */
#include "test_common.h"

#include "capture_damage.h"
#include "capture_helpers.h"

#include <memprof/capture.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const uint64_t A[3] = {0x1111, 0x2222, 0x3333};
static const uint64_t B[2] = {0x1111, 0x4444};

/* A capture: 3 allocations with stack A, 2 with B, 1 without, one failed
 * allocation with A; the STACK record of the last allocation is split
 * from it by a flush round. */
static void write_capture(const char *path, int stacks)
{
	mp_writer_t *w;
	mp_diag_t diag;
	uint32_t a = 0, b = 0, again = 0;
	int host, i;

	assert_int_equal(mp_writer_open(&w, path, 1, NULL, &diag), 0);
	host = mp_writer_memory(w, "host", MP_MEMORY_HOST, 0);
	assert_true(host >= 0);
	if (stacks) {
		assert_true(mp_writer_modules(w) > 0);
		assert_int_equal(mp_writer_stack(w, A, 3, &a), 0);
		assert_int_equal(mp_writer_stack(w, B, 2, &b), 0);
		assert_int_equal(mp_writer_stack(w, A, 3, &again), 0);
		assert_int_equal(a, 1);
		assert_int_equal(b, 2);
		assert_int_equal(again, a); /* deduplicated */
		assert_int_equal(mp_writer_stack(w, A, 0, &again), -EINVAL);
		assert_int_equal(mp_writer_stack(w, A, MP_WRITER_STACK_MAX + 1, &again), -EINVAL);
	}
	for (i = 0; i < 5; i++) {
		if (stacks)
			mp_writer_next_stack(w, i < 3 ? a : b);
		mp_writer_alloc(w, (uint32_t)host, 0x10000 + (uint64_t)i * 0x100, 1000, 1000);
	}
	mp_writer_alloc(w, (uint32_t)host, 0x20000, 7, 7); /* no stack */
	if (stacks)
		mp_writer_next_stack(w, a);
	mp_writer_alloc_failed(w, (uint32_t)host, 1u << 30);
	if (stacks) {
		mp_writer_next_stack(w, b);
		mp_writer_flush(w); /* the STACK record ends this round's chunk */
	}
	mp_writer_alloc(w, (uint32_t)host, 0x30000, 64, 64);
	assert_int_equal(mp_writer_close(w), 0);
}

static void test_stacks_roundtrip(void **state)
{
	char *path = mp_test_tmpfile("stacks.memprof");
	uint32_t want[8] = {1, 1, 1, 2, 2, 0, 1, 2}, n, k = 0;
	mp_capture_t *cap;
	mp_source_t *src;
	const uint64_t *pcs;
	mp_diag_t diag;
	mp_event_t ev;
	char self[4096];
	ssize_t len;
	size_t i;
	int found = 0;

	(void)state;
	write_capture(path, 1);
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(mp_capture_header(cap)->version_major, MP_FORMAT_VERSION_MAJOR);
	assert_int_equal(mp_capture_header(cap)->version_minor, MP_FORMAT_VERSION_MINOR);
	src = mp_capture_source(cap);
	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.kind != MP_EV_ALLOC && ev.kind != MP_EV_ALLOC_FAILED)
			continue;
		assert_true(k < 8);
		assert_int_equal(ev.stack, want[k]);
		k++;
	}
	assert_int_equal(k, 8);
	assert_int_equal(mp_capture_stack_count(cap), 2);
	assert_int_equal(mp_capture_stack(cap, 1, &pcs, &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(pcs, A, sizeof(A));
	assert_int_equal(mp_capture_stack(cap, 2, &pcs, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(pcs, B, sizeof(B));
	assert_int_equal(mp_capture_stack(cap, 3, &pcs, &n), MP_ENOTFOUND);
	assert_int_equal(mp_capture_stack(cap, 0, &pcs, &n), MP_ENOTFOUND);

	/* The module map holds this test program, at the address its code ran. */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = '\0';
	for (i = 0; i < mp_capture_module_count(cap); i++) {
		const mp_capture_module_t *m = mp_capture_module(cap, i);
		if (strcmp(m->path, self))
			continue;
		found = 1;
		assert_true(m->build_id_len >= 8); /* the toolchain's default --build-id */
		assert_true(m->segment_count >= 1);
	}
	assert_true(found);
	assert_non_null(mp_capture_module_at(cap, (uint64_t)(uintptr_t)&test_stacks_roundtrip));
	assert_string_equal(mp_capture_module_at(cap, (uint64_t)(uintptr_t)&test_stacks_roundtrip)->path, self);
	assert_null(mp_capture_module_at(cap, 16));

	/* A rewind keeps the tables and reads the same ids. */
	assert_int_equal(mp_source_rewind(src, &diag), 0);
	k = 0;
	while (mp_source_next(src, &ev, &diag) == 1)
		if (ev.kind == MP_EV_ALLOC || ev.kind == MP_EV_ALLOC_FAILED)
			assert_int_equal(ev.stack, want[k++]);
	assert_int_equal(k, 8);
	assert_int_equal(mp_capture_stack_count(cap), 2);
	assert_int_equal(mp_capture_module_count(cap), i);
	mp_capture_close(cap);
	unlink(path);
	free(path);
}

/* --- damaged files ----------------------------------------------------- */

static void test_stacks_damaged(void **state)
{
	char *path = mp_test_tmpfile("stacks_ok.memprof"), *bad = mp_test_tmpfile("stacks_bad.memprof");
	/* STACK id 1, 3 frames 0x1111 0x2222 0x3333 */
	static const uint8_t stack1[] = {7, 1, 3, 0x91, 0x22, 0xa2, 0x44, 0xb3, 0x66};
	char self[4096];
	ssize_t len;
	file_t f;
	uint8_t *p, save;

	(void)state;
	write_capture(path, 1);
	load(path, &f);
	p = find(&f, stack1, sizeof(stack1));
	assert_non_null(p);

	/* the untouched block, re-deflated, reads fine */
	store(&f, bad);
	{
		mp_event_t *ev;
		mp_diag_t diag;
		int rc;
		size_t n = read_all(bad, &ev, &rc, &diag, NULL);
		free(ev);
		assert_int_equal(rc, 0);
		assert_int_equal(n, 9); /* the memory id, 7 allocations, 1 failed (write_capture) */
	}

	p[2] = 0; /* a stack of no frame */
	store(&f, bad);
	expect_error(bad, "bad call-stack definition");
	p[2] = 3;

	p[1] = 5; /* ids out of sequence */
	store(&f, bad);
	expect_error(bad, "bad call-stack definition");
	p[1] = 1;

	/* MODULE of this program: its build id said to be 127 bytes long */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0 && len < 4095);
	self[len] = '\0';
	p = find(&f, (const uint8_t *)self, (size_t)len);
	assert_non_null(p);
	if (len < 128) { /* the path length varint: one byte, or two (a long checkout path) */
		assert_int_equal(p[-1], (uint8_t)len);
		assert_int_equal(p[-2], 8); /* MP_SEC_MODULE */
	} else {
		assert_int_equal(p[-2], (uint8_t)(0x80 | (len & 0x7f)));
		assert_int_equal(p[-1], (uint8_t)(len >> 7));
		assert_int_equal(p[-3], 8);
	}
	p += len;
	while (*p & 0x80) /* the load bias */
		p++;
	p++;
	save = *p;
	*p = 127;
	store(&f, bad);
	expect_error(bad, "bad loaded-object (module) definition");
	*p = save;
	free(f.raw);
	free(f.data);
	unlink(path);
	unlink(bad);
	free(path);
	free(bad);
}

/* A 2.0 capture relabelled 1.0 (stacks and all) is not misread as one:
 * its chunks are in the 2.0 layout, which 1.x files never hold. (1.x
 * captures themselves are read by test_roundtrip's hand-built files.) */
static void test_stacks_version_1_0(void **state)
{
	char *path = mp_test_tmpfile("v10.memprof");
	mp_event_t *ev, *ev10;
	mp_diag_t diag;
	uint32_t hlen, crc;
	size_t n, n10;
	file_t f;
	FILE *fp;
	int rc;

	(void)state;
	write_capture(path, 0);
	n = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	assert_true(n > 0);
	load(path, &f);
	f.data[8] = 1; /* version 1.0, header checksum made right */
	f.data[9] = 0;
	f.data[10] = 0;
	f.data[11] = 0;
	memcpy(&hlen, f.data + 12, 4);
	crc = (uint32_t)crc32(0, f.data, 16 + hlen);
	memcpy(f.data + 16 + hlen, &crc, 4);
	fp = fopen(path, "wb");
	fwrite(f.data, 1, f.size, fp);
	fclose(fp);
	n10 = read_all(path, &ev10, &rc, &diag, NULL);
	assert_int_equal(rc, MP_ECORRUPT);
	assert_int_equal(n10, 0);
	assert_non_null(strstr(diag.text, "a 2.x chunk section in a 1.x capture"));
	free(ev);
	free(ev10);
	free(f.raw);
	free(f.data);
	unlink(path);
	free(path);
}

/* A 2.1 capture reads as before: a 2.2 writer's file without FRAME
 * sections is, byte for byte, what a 2.1 writer wrote (only the version
 * differs), relabelled 2.1 it reads back the same events and stacks. */
static void test_stacks_version_2_1(void **state)
{
	char *path = mp_test_tmpfile("v21.memprof");
	mp_event_t *ev, *ev21;
	const uint64_t *pcs;
	mp_capture_t *cap;
	mp_diag_t diag;
	uint32_t hlen, crc, n32;
	size_t n, n21;
	file_t f;
	FILE *fp;
	int rc;

	(void)state;
	write_capture(path, 1);
	n = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 9);
	load(path, &f);
	assert_int_equal(f.data[10], MP_FORMAT_VERSION_MINOR);
	f.data[8] = 2; /* version 2.1, header checksum made right */
	f.data[9] = 0;
	f.data[10] = 1;
	memcpy(&hlen, f.data + 12, 4);
	crc = (uint32_t)crc32(0, f.data, 16 + hlen);
	memcpy(f.data + 16 + hlen, &crc, 4);
	fp = fopen(path, "wb");
	fwrite(f.data, 1, f.size, fp);
	fclose(fp);
	n21 = read_all(path, &ev21, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	assert_int_equal(n21, n);
	assert_memory_equal(ev21, ev, n * sizeof(*ev));
	assert_int_equal(mp_capture_open(&cap, path, &diag), 0);
	assert_int_equal(mp_capture_header(cap)->version_minor, 1);
	while (mp_source_next(mp_capture_source(cap), ev21, &diag) == 1)
		;
	assert_int_equal(mp_capture_stack(cap, 1, &pcs, &n32), 0);
	assert_int_equal(n32, 3);
	assert_memory_equal(pcs, A, sizeof(A));
	mp_capture_close(cap);
	free(ev);
	free(ev21);
	free(f.raw);
	free(f.data);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacks_roundtrip),
		cmocka_unit_test(test_stacks_damaged),
		cmocka_unit_test(test_stacks_version_1_0),
		cmocka_unit_test(test_stacks_version_2_1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
