/* test_gpu_capture.c - GPU events on their way into a capture: the
 * time-order queue (memprof/gpu_queue.h), writer lanes and their hold
 * (memprof/writer.h), the CUPTI dump format and its replay
 * (memprof/cupti_dump.h). Expected figures are written out by hand. */
#include "test_common.h"

#include <memprof/capture.h>
#include <memprof/cupti_dump.h>
#include <memprof/cupti_translate.h>
#include <memprof/gpu_queue.h>

#include "capture_helpers.h"
#include "cupti_records.h"

#define MiB (1ull << 20)

static mp_gpu_event_t at(uint64_t t, uint64_t address)
{
	mp_gpu_event_t e;

	memset(&e, 0, sizeof e);
	e.kind = MP_EV_ALLOC;
	e.time_ns = t;
	e.address = address;
	return e;
}

/* Buffers out of order: popped by time (ties in arrival order); what
 * arrives behind a released time is moved up to it and counted late. */
static void test_queue_order(void **state)
{
	mp_gpu_queue_t q;
	mp_gpu_event_t e;
	const uint64_t times[] = {30, 10, 20, 10};
	int i;

	(void)state;
	mp_gpu_queue_init(&q);
	for (i = 0; i < 4; i++) {
		e = at(times[i], (uint64_t)i);
		assert_int_equal(mp_gpu_queue_push(&q, &e), 0);
	}
	assert_int_equal(mp_gpu_queue_pop_before(&q, 25, &e), 1);
	assert_int_equal(e.time_ns, 10);
	assert_int_equal(e.address, 1); /* the first of the two at 10 */
	assert_int_equal(mp_gpu_queue_pop_before(&q, 25, &e), 1);
	assert_int_equal(e.address, 3);
	assert_int_equal(mp_gpu_queue_pop_before(&q, 25, &e), 1);
	assert_int_equal(e.time_ns, 20);
	assert_int_equal(mp_gpu_queue_pop_before(&q, 25, &e), 0);
	mp_gpu_queue_release(&q, 25);
	e = at(15, 4);
	mp_gpu_queue_push(&q, &e);
	assert_int_equal(q.late, 1);
	assert_int_equal(mp_gpu_queue_pop_before(&q, UINT64_MAX, &e), 1);
	assert_int_equal(e.time_ns, 25);
	assert_int_equal(e.address, 4);
	assert_int_equal(mp_gpu_queue_pop_before(&q, UINT64_MAX, &e), 1);
	assert_int_equal(e.time_ns, 30);
	assert_int_equal(mp_gpu_queue_pop_before(&q, UINT64_MAX, &e), 0);
	mp_gpu_queue_free(&q);
}

/* A lane's event written after a flush round, timestamped before a thread's
 * event of that round, still comes out first: the lane's hold kept the
 * round's horizon back. */
static void test_lane_hold(void **state)
{
	char *path = mp_test_tmpfile(".memprof");
	mp_writer_t *w;
	mp_writer_lane_t *lane;
	mp_event_t *ev;
	mp_diag_t diag;
	uint64_t t0, t1;
	size_t n;
	int rc, mem;

	(void)state;
	assert_int_equal(mp_writer_open(&w, path, 0, NULL, &diag), 0);
	mem = mp_writer_memory(w, "GPU:0", MP_MEMORY_DEVICE, 80ull << 30);
	assert_true(mem >= 0);
	assert_int_equal(mp_writer_lane_open(w, &lane), 0);
	t0 = mp_writer_now(w);
	usleep(2000);
	assert_int_equal(mp_writer_region_add(w, (uint32_t)mem, 0x1000000, 4 * MiB), 0); /* this thread, now */
	t1 = mp_writer_now(w);
	assert_true(t1 > t0 + 1000000);
	assert_int_equal(mp_writer_flush(w), 0);
	/* late news from before the thread's event */
	assert_int_equal(mp_writer_lane_event(lane, MP_EV_REGION_ADD, (uint32_t)mem, t0 + 500, 0x9000000, 2 * MiB), 0);
	assert_int_equal(mp_writer_lane_event(lane, MP_EV_ALLOC_FAILED, (uint32_t)mem, t0 + 700, 0, 64 * MiB), 0);
	mp_writer_lane_hold(lane, t1);
	assert_int_equal(mp_writer_lane_event(lane, MP_EV_REGION_REMOVE, (uint32_t)mem, t1 + 10, 0x9000000, 0), 0);
	mp_writer_lane_dropped(lane, (uint32_t)mem, 3);
	assert_int_equal(mp_writer_close(w), 0);

	n = read_all(path, &ev, &rc, &diag, NULL);
	assert_int_equal(rc, 0);
	/* besides the memory declaration and the dropped count: the lane's
	 * two, the thread's, the lane's removal (after t1) */
	{
		size_t i, k = 0;
		uint64_t dropped = 0;
		mp_event_t got[8];
		for (i = 0; i < n; i++)
			if (ev[i].kind == MP_EV_DROPPED)
				dropped += ev[i].requested_bytes;
			else if (ev[i].kind != MP_EV_MEMORY && k < 8)
				got[k++] = ev[i];
		assert_int_equal(dropped, 3);
		assert_int_equal(k, 4);
		assert_int_equal(got[0].kind, MP_EV_REGION_ADD);
		assert_int_equal(got[0].time_ns, t0 + 500);
		assert_int_equal(got[0].address, 0x9000000);
		assert_int_equal(got[0].requested_bytes, 2 * MiB);
		assert_int_equal(got[1].kind, MP_EV_ALLOC_FAILED);
		assert_int_equal(got[1].time_ns, t0 + 700);
		assert_int_equal(got[1].requested_bytes, 64 * MiB);
		assert_int_equal(got[2].kind, MP_EV_REGION_ADD);
		assert_int_equal(got[2].address, 0x1000000);
		assert_true(got[2].time_ns > t0 && got[2].time_ns <= t1);
		assert_int_equal(got[3].kind, MP_EV_REGION_REMOVE);
		assert_int_equal(got[3].time_ns, t1 + 10);
	}
	free(ev);
	unlink(path);
	free(path);
}

/* A dump of two buffers, as the backend writes it. */
static size_t make_dump(uint8_t *out, uint64_t origin)
{
	recbuf_t b1 = {0}, b2 = {0};
	size_t at = MP_CUPTI_DUMP_HEADER;
	uint64_t n;

	mp_cupti_dump_header(out, 130001, origin);
	/* thread 1's buffer: a segment, its release; thread 2's: a pinned
	 * allocation made in between (out of order across buffers) */
	rec_mem4(&b1, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f0000000000, 20 * MiB, origin + 1000);
	rec_api(&b1);
	rec_mem4(&b1, MP_CUPTI_OP_RELEASE, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f0000000000, 0, origin + 3000);
	rec_mem4(&b2, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_PINNED, 0, 1, 0x50000, 4096, origin + 2000);
	n = b1.len;
	memcpy(out + at, &n, 8);
	memcpy(out + at + 8, b1.data, b1.len);
	at += 8 + b1.len;
	n = b2.len;
	memcpy(out + at, &n, 8);
	memcpy(out + at + 8, b2.data, b2.len);
	return at + 8 + b2.len;
}

static int count_buffers(void *arg, const uint8_t *buf, size_t valid)
{
	size_t *sizes = arg;

	(void)buf;
	sizes[sizes[0] + 1] = valid;
	sizes[0]++;
	return 0;
}

static void test_dump_parse(void **state)
{
	static uint8_t d[8192];
	mp_cupti_dump_header_t h;
	mp_diag_t diag;
	size_t sizes[4] = {0}, n = make_dump(d, 5000);

	(void)state;
	assert_int_equal(mp_cupti_dump_parse(d, n, "x.bin", &h, count_buffers, sizes, &diag), 0);
	assert_int_equal(h.cupti_version, 130001);
	assert_int_equal(h.origin_ns, 5000);
	assert_int_equal(sizes[0], 2);
	assert_int_equal(sizes[1], 2 * MP_CUPTI_MEM4_SIZE + MP_CUPTI_API_SIZE);
	assert_int_equal(sizes[2], MP_CUPTI_MEM4_SIZE);
	/* cut inside the second buffer: named, with its offset */
	assert_int_equal(mp_cupti_dump_parse(d, n - 5, "x.bin", &h, NULL, NULL, &diag), MP_ETRUNCATED);
	assert_int_equal(diag.offset, (int64_t)(n - MP_CUPTI_MEM4_SIZE));
	assert_string_equal(diag.file, "x.bin");
	assert_non_null(strstr(diag.text, "buffer 1"));
	/* another record layout */
	d[20] = 120;
	assert_int_equal(mp_cupti_dump_parse(d, n, "x.bin", &h, NULL, NULL, &diag), MP_EVERSION);
	assert_int_equal(diag.offset, 20);
	memcpy(d, "NOTADUMP", 8);
	assert_int_equal(mp_cupti_dump_parse(d, n, "x.bin", &h, NULL, NULL, &diag), MP_EFORMAT);
}

/* The dump into a capture: events in time order, times from the dump's
 * origin, memory ids named as the backend names them. */
static void test_replay(void **state)
{
	static uint8_t d[8192];
	char *dump = mp_test_tmpfile(".bin"), *out = mp_test_tmpfile(".memprof");
	size_t n = make_dump(d, 1000000), k = 0, i;
	mp_cupti_stats_t st;
	mp_source_t *src;
	mp_event_t ev;
	mp_diag_t diag;
	FILE *f = fopen(dump, "wb");
	struct {
		int kind;
		const char *mem;
		uint64_t time, address, bytes;
	} want[] = {
		{MP_EV_REGION_ADD, "GPU:0", 1000, 0x7f0000000000, 20 * MiB},
		{MP_EV_ALLOC, "CUDA:pinned_host", 2000, 0x50000, 4096},
		{MP_EV_REGION_REMOVE, "GPU:0", 3000, 0x7f0000000000, 0},
	};

	(void)state;
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	fclose(f);
	assert_int_equal(mp_cupti_replay(dump, out, &st, &diag), 0);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.skipped_kinds, 1);
	assert_int_equal(mp_capture_open_source(&src, out, &diag), 0);
	while (mp_source_next(src, &ev, &diag) == 1) {
		if (ev.kind == MP_EV_MEMORY)
			continue;
		assert_true(k < 3);
		assert_int_equal(ev.kind, want[k].kind);
		assert_string_equal(mp_source_memory(src, ev.memory)->name, want[k].mem);
		assert_int_equal(ev.time_ns, want[k].time);
		assert_int_equal(ev.address, want[k].address);
		if (ev.kind == MP_EV_ALLOC)
			assert_int_equal(ev.requested_bytes, want[k].bytes);
		if (ev.kind == MP_EV_REGION_ADD)
			assert_int_equal(ev.requested_bytes, want[k].bytes);
		k++;
	}
	assert_int_equal(k, 3);
	for (i = 0; i < mp_source_memory_count(src); i++)
		if (!strcmp(mp_source_memory(src, (uint32_t)i)->name, "GPU:0"))
			assert_int_equal(mp_source_memory(src, (uint32_t)i)->kind, MP_MEMORY_DEVICE);
	mp_source_close(src);
	/* a replay never overwrites */
	assert_int_not_equal(mp_cupti_replay(dump, out, NULL, &diag), 0);
	unlink(dump);
	unlink(out);
	free(dump);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_order),
		cmocka_unit_test(test_lane_hold),
		cmocka_unit_test(test_dump_parse),
		cmocka_unit_test(test_replay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
