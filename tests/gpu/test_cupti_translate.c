/* test_cupti_translate.c - CUPTI memory records into memprof events
 * (allocator_hooks/cupti/cupti_translate.c), on synthesized buffers walked
 * by memprof's iterator and, where libcupti is installed, by CUPTI's own
 * cuptiActivityGetNextRecord (it needs no GPU). Expected events are written
 * out by hand from the rules in memprof/cupti_translate.h. */
#include "test_common.h"

#include <memprof/cupti_translate.h>
#include <memprof/event.h>

#include "cupti_records.h"

#include <dlfcn.h>

#define MiB (1ull << 20)

/* Every event of a buffer through memprof's iterator. */
static int translate_all(mp_cupti_translator_t *t, const recbuf_t *b, size_t valid, mp_gpu_event_t *out, int max)
{
	size_t pos = 0, len;
	const uint8_t *rec;
	int n = 0;

	while (mp_cupti_next_record(t, b->data, valid, &pos, &rec, &len)) {
		assert_true(n + MP_CUPTI_MAX_OUT <= max);
		n += mp_cupti_translate(t, rec, len, out + n);
	}
	return n;
}

static void check(const mp_gpu_event_t *e, int kind, const char *memory, uint64_t time, uint64_t address,
		  uint64_t bytes)
{
	char name[32];

	assert_int_equal(e->kind, kind);
	assert_string_equal(mp_gpu_memory_name(e, name, sizeof name), memory);
	assert_int_equal(e->time_ns, time);
	assert_int_equal(e->address, address);
	assert_int_equal(e->bytes, bytes);
}

/* cudaMalloc / cudaFree on two devices: segments of GPU:0 and GPU:1, paired
 * by device and address (the same address on both devices stays apart). */
static void test_device_segments(void **state)
{
	mp_cupti_translator_t t;
	recbuf_t b = {0};
	mp_gpu_event_t ev[16];
	int n;

	(void)state;
	mp_cupti_translator_init(&t);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f0000000000, 20 * MiB, 1000);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 1, 2, 0x7f0000000000, 2 * MiB, 1500);
	rec_mem4(&b, MP_CUPTI_OP_RELEASE, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f0000000000, 20 * MiB, 2000);
	n = translate_all(&t, &b, b.len, ev, 16);
	assert_int_equal(n, 3);
	check(&ev[0], MP_EV_REGION_ADD, "GPU:0", 1000, 0x7f0000000000, 20 * MiB);
	assert_int_equal(ev[0].context, 1);
	assert_int_equal(ev[0].correlation, 77);
	check(&ev[1], MP_EV_REGION_ADD, "GPU:1", 1500, 0x7f0000000000, 2 * MiB);
	assert_int_equal(ev[1].context, 2);
	check(&ev[2], MP_EV_REGION_REMOVE, "GPU:0", 2000, 0x7f0000000000, 0);
	assert_int_equal(t.stats.records, 3);
	assert_int_equal(t.stats.events, 3);
	assert_int_equal(t.stats.skipped_kinds + t.stats.invalid + t.stats.truncated_bytes, 0);
}

/* cudaMallocAsync: the pool is a region sized as the records report it
 * (grown: replaced), the allocations are ALLOCs inside it; a trim and the
 * pool's destruction come as MEMORY_POOL records. */
static void test_async_pool(void **state)
{
	mp_cupti_translator_t t;
	recbuf_t b = {0};
	mp_gpu_event_t ev[16];
	const uint64_t pool = 0x300000000, a = pool + 0x1000, c = pool + 0x200000;
	int n;

	(void)state;
	mp_cupti_translator_init(&t);
	rec_pool3(&b, MP_CUPTI_POOL_CREATED, 0, pool, 32 * MiB, 100);
	rec_mem4_async(&b, MP_CUPTI_OP_ALLOCATION, 0, a, 1 * MiB, 200, pool, 32 * MiB, 1 * MiB);
	rec_mem4_async(&b, MP_CUPTI_OP_ALLOCATION, 0, c, 40 * MiB, 300, pool, 64 * MiB, 41 * MiB);
	rec_mem4_async(&b, MP_CUPTI_OP_RELEASE, 0, c, 40 * MiB, 400, pool, 64 * MiB, 1 * MiB);
	rec_pool3(&b, MP_CUPTI_POOL_TRIMMED, 0, pool, 2 * MiB, 500);
	rec_pool3(&b, MP_CUPTI_POOL_DESTROYED, 0, pool, 0, 600);
	n = translate_all(&t, &b, b.len, ev, 16);
	assert_int_equal(n, 9);
	check(&ev[0], MP_EV_REGION_ADD, "GPU:0", 100, pool, 32 * MiB);
	check(&ev[1], MP_EV_ALLOC, "GPU:0", 200, a, 1 * MiB); /* the pool's size unchanged: no region event */
	check(&ev[2], MP_EV_REGION_REMOVE, "GPU:0", 300, pool, 0);
	check(&ev[3], MP_EV_REGION_ADD, "GPU:0", 300, pool, 64 * MiB);
	check(&ev[4], MP_EV_ALLOC, "GPU:0", 300, c, 40 * MiB);
	check(&ev[5], MP_EV_FREE, "GPU:0", 400, c, 0);
	check(&ev[6], MP_EV_REGION_REMOVE, "GPU:0", 500, pool, 0);
	check(&ev[7], MP_EV_REGION_ADD, "GPU:0", 500, pool, 2 * MiB);
	check(&ev[8], MP_EV_REGION_REMOVE, "GPU:0", 600, pool, 0);
	assert_int_equal(t.pools[0].live, 0);
}

/* Pinned, pageable and managed memory: allocations of their own memory ids. */
static void test_host_kinds(void **state)
{
	mp_cupti_translator_t t;
	recbuf_t b = {0};
	mp_gpu_event_t ev[16];
	int n;

	(void)state;
	mp_cupti_translator_init(&t);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_PINNED, 3, 1, 0x10000, 4096, 10);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_MANAGED, 3, 1, 0x20000, 8192, 20);
	rec_mem4(&b, MP_CUPTI_OP_RELEASE, MP_CUPTI_MEM_PINNED, 3, 1, 0x10000, 4096, 30);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_PAGEABLE, 0, 1, 0x40000, 512, 40);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_MANAGED_STATIC, 0, 1, 0x50000, 256, 50);
	n = translate_all(&t, &b, b.len, ev, 16);
	assert_int_equal(n, 5);
	check(&ev[0], MP_EV_ALLOC, "CUDA:pinned_host", 10, 0x10000, 4096);
	check(&ev[1], MP_EV_ALLOC, "CUDA:managed", 20, 0x20000, 8192);
	check(&ev[2], MP_EV_FREE, "CUDA:pinned_host", 30, 0x10000, 0);
	check(&ev[3], MP_EV_ALLOC, "CUDA:pinned_host", 40, 0x40000, 512);
	check(&ev[4], MP_EV_ALLOC, "CUDA:managed", 50, 0x50000, 256);
}

/* As the H200 (CUDA 13.0) reported them: a cuMemMap'd chunk is a MEMORY2
 * device record with no context (CUPTI_INVALID_CONTEXT_ID), its unmap a
 * release: one region of GPU:0, added and removed once. A module's
 * __device__ variable (DEVICE_STATIC, context 0, never released) is a
 * region of GPU:0:static, out of the program's reserved bytes. */
static void test_vmm_and_static(void **state)
{
	mp_cupti_translator_t t;
	recbuf_t b = {0};
	mp_gpu_event_t ev[8];
	int n;

	(void)state;
	mp_cupti_translator_init(&t);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 0xffffffffu, 0x7f9318800000, 2 * MiB, 10);
	rec_mem4(&b, MP_CUPTI_OP_RELEASE, MP_CUPTI_MEM_DEVICE, 0, 0xffffffffu, 0x7f9318800000, 2 * MiB, 20);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE_STATIC, 0, 0, 0x7f93ae400000, 15, 30);
	n = translate_all(&t, &b, b.len, ev, 8);
	assert_int_equal(n, 3);
	check(&ev[0], MP_EV_REGION_ADD, "GPU:0", 10, 0x7f9318800000, 2 * MiB);
	check(&ev[1], MP_EV_REGION_REMOVE, "GPU:0", 20, 0x7f9318800000, 0);
	check(&ev[2], MP_EV_REGION_ADD, "GPU:0:static", 30, 0x7f93ae400000, 15);
	assert_int_equal(mp_gpu_memory_kind(&ev[2]), MP_MEMORY_DEVICE);
}

/* A record's source names the shared object that asked: one of CUDA's
 * libraries (as cuBLAS's own workspace at torch's first matmul on the
 * H200) puts the segment and its release (which carries no source) in
 * GPU:N:libraries; the framework's own (libc10_cuda) stays in GPU:N; with
 * no classifier (a replay, where the pointers are another process's),
 * everything stays in GPU:N. */
static int test_is_library(uint64_t source)
{
	return mp_cupti_source_is_library((const char *)(uintptr_t)source);
}

static void test_library_source(void **state)
{
	static const char cublaslt[] = "/opt/torch/lib/python3.12/site-packages/nvidia/cu13/lib/libcublasLt.so.13";
	static const char c10[] = "/opt/torch/lib/python3.12/site-packages/torch/lib/libc10_cuda.so";
	mp_cupti_translator_t t, replay;
	recbuf_t b = {0};
	mp_gpu_event_t ev[8];
	uint8_t *r;
	int n;

	(void)state;
	assert_int_equal(mp_cupti_source_is_library("libcudnn_ops.so.9"), 1);
	assert_int_equal(mp_cupti_source_is_library("/usr/lib/libnccl.so.2"), 1);
	assert_int_equal(mp_cupti_source_is_library("/usr/lib/libcudart.so.13"), 0);
	assert_int_equal(mp_cupti_source_is_library("/home/u/mylibcublas/app"), 0);
	assert_int_equal(mp_cupti_source_is_library(NULL), 0);
	r = rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f93d8000000, 64 * MiB, 10);
	put64(r, MP_CUPTI_MEM4_SOURCE, (uint64_t)(uintptr_t)cublaslt);
	r = rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f93b2000000, 256 * MiB, 20);
	put64(r, MP_CUPTI_MEM4_SOURCE, (uint64_t)(uintptr_t)c10);
	rec_mem4(&b, MP_CUPTI_OP_RELEASE, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f93d8000000, 64 * MiB, 30);
	rec_mem4(&b, MP_CUPTI_OP_RELEASE, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f93b2000000, 256 * MiB, 40);
	mp_cupti_translator_init(&t);
	t.is_library = test_is_library;
	n = translate_all(&t, &b, b.len, ev, 8);
	assert_int_equal(n, 4);
	check(&ev[0], MP_EV_REGION_ADD, "GPU:0:libraries", 10, 0x7f93d8000000, 64 * MiB);
	assert_int_equal(mp_gpu_memory_kind(&ev[0]), MP_MEMORY_DEVICE);
	check(&ev[1], MP_EV_REGION_ADD, "GPU:0", 20, 0x7f93b2000000, 256 * MiB);
	check(&ev[2], MP_EV_REGION_REMOVE, "GPU:0:libraries", 30, 0x7f93d8000000, 0);
	check(&ev[3], MP_EV_REGION_REMOVE, "GPU:0", 40, 0x7f93b2000000, 0);
	mp_cupti_translator_init(&replay);
	n = translate_all(&replay, &b, b.len, ev, 8);
	assert_int_equal(n, 4);
	check(&ev[0], MP_EV_REGION_ADD, "GPU:0", 10, 0x7f93d8000000, 64 * MiB);
	check(&ev[2], MP_EV_REGION_REMOVE, "GPU:0", 30, 0x7f93d8000000, 0);
}

/* The legacy record: allocation and release in one, at two times; end 0:
 * never freed. */
static void test_legacy_memory(void **state)
{
	mp_cupti_translator_t t;
	recbuf_t b = {0};
	mp_gpu_event_t ev[16];
	int n;

	(void)state;
	mp_cupti_translator_init(&t);
	rec_mem1(&b, MP_CUPTI_MEM_DEVICE, 2, 0xa000000, 6 * MiB, 1000, 5000);
	rec_mem1(&b, MP_CUPTI_MEM_DEVICE, 2, 0xb000000, 3 * MiB, 2000, 0);
	n = translate_all(&t, &b, b.len, ev, 16);
	assert_int_equal(n, 3);
	check(&ev[0], MP_EV_REGION_ADD, "GPU:2", 1000, 0xa000000, 6 * MiB);
	check(&ev[1], MP_EV_REGION_REMOVE, "GPU:2", 5000, 0xa000000, 0);
	check(&ev[2], MP_EV_REGION_ADD, "GPU:2", 2000, 0xb000000, 3 * MiB);
}

/* Kinds memprof does not translate are skipped and counted; records it
 * cannot read (an operation or memory kind outside the enums) too. */
static void test_skipped_and_invalid(void **state)
{
	mp_cupti_translator_t t;
	recbuf_t b = {0};
	mp_gpu_event_t ev[16];
	uint8_t *r;
	int n;

	(void)state;
	mp_cupti_translator_init(&t);
	rec_api(&b);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x1000, 64, 1);
	rec_mem4(&b, 7, MP_CUPTI_MEM_DEVICE, 0, 1, 0x2000, 64, 2);
	r = rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x3000, 64, 3);
	put32(r, MP_CUPTI_MEM4_MEMORY_KIND, 99);
	rec_pool3(&b, 9, 0, 0x4000, 64, 4);
	rec_api(&b);
	n = translate_all(&t, &b, b.len, ev, 16);
	assert_int_equal(n, 1);
	check(&ev[0], MP_EV_REGION_ADD, "GPU:0", 1, 0x1000, 64);
	assert_int_equal(t.stats.records, 6);
	assert_int_equal(t.stats.skipped_kinds, 2);
	assert_int_equal(t.stats.invalid, 3);
	assert_int_equal(t.stats.truncated_bytes, 0);
}

/* A buffer whose valid size ends inside a record, and one with a kind
 * whose length memprof does not know: the walk stops there, counting the
 * bytes it could not read. */
static void test_truncated(void **state)
{
	mp_cupti_translator_t t;
	recbuf_t b = {0};
	mp_gpu_event_t ev[16];
	int n;

	(void)state;
	mp_cupti_translator_init(&t);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x1000, 64, 1);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x2000, 64, 2);
	n = translate_all(&t, &b, MP_CUPTI_MEM4_SIZE + 60, ev, 16);
	assert_int_equal(n, 1);
	assert_int_equal(t.stats.truncated_bytes, 60);

	mp_cupti_translator_init(&t);
	b.len = 0;
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x1000, 64, 1);
	rec_new(&b, 1 /* CUPTI_ACTIVITY_KIND_MEMCPY */, 64);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x2000, 64, 2);
	n = translate_all(&t, &b, b.len, ev, 16);
	assert_int_equal(n, 1);
	assert_int_equal(t.stats.truncated_bytes, 64 + MP_CUPTI_MEM4_SIZE);
	/* a record handed over shorter than its kind */
	assert_int_equal(mp_cupti_translate(&t, b.data, 100, ev), 0);
	assert_int_equal(t.stats.truncated_bytes, 64 + MP_CUPTI_MEM4_SIZE + 100);
}

/* The same buffer through CUPTI's own iterator (libcupti, no GPU needed):
 * the same records, so the same events. */
typedef int (*next_record_fn)(uint8_t *buffer, size_t valid, void **record);

static void test_real_iterator(void **state)
{
	mp_cupti_translator_t t1, t2;
	recbuf_t b = {0};
	mp_gpu_event_t ev1[32], ev2[32];
	void *lib = NULL, *rec = NULL;
	next_record_fn next;
	int n1, n2 = 0, i;

	(void)state;
#ifdef MEMPROF_CUPTI_LIB_PATH
	lib = dlopen(MEMPROF_CUPTI_LIB_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
	if (!lib) {
		fprintf(stderr, "skipped: libcupti is not installed here (the CUDA toolkit was not found at build "
				"time)\n");
		skip();
	}
	*(void **)(void *)&next = dlsym(lib, "cuptiActivityGetNextRecord");
	assert_non_null(next);
	rec_mem4(&b, MP_CUPTI_OP_ALLOCATION, MP_CUPTI_MEM_DEVICE, 0, 1, 0x7f0000000000, 20 * MiB, 1000);
	rec_api(&b);
	rec_pool3(&b, MP_CUPTI_POOL_CREATED, 1, 0x300000000, 32 * MiB, 1100);
	rec_mem4_async(&b, MP_CUPTI_OP_ALLOCATION, 1, 0x300001000, 4096, 1200, 0x300000000, 32 * MiB, 4096);
	rec_mem1(&b, MP_CUPTI_MEM_DEVICE, 0, 0xa000000, 6 * MiB, 1300, 1400);
	rec_mem4(&b, MP_CUPTI_OP_RELEASE, MP_CUPTI_MEM_PINNED, 0, 1, 0x10000, 4096, 1500);
	mp_cupti_translator_init(&t1);
	mp_cupti_translator_init(&t2);
	n1 = translate_all(&t1, &b, b.len, ev1, 32);
	while (next(b.data, b.len, &rec) == 0)
		n2 += mp_cupti_translate(&t2, rec, (size_t)(b.data + b.len - (uint8_t *)rec), ev2 + n2);
	assert_int_equal(n1, 6);
	assert_int_equal(n2, n1);
	assert_int_equal(t2.stats.records, 6);
	assert_int_equal(t2.stats.skipped_kinds, 1);
	for (i = 0; i < n1; i++)
		assert_memory_equal(&ev1[i], &ev2[i], sizeof ev1[i]);
	check(&ev2[0], MP_EV_REGION_ADD, "GPU:0", 1000, 0x7f0000000000, 20 * MiB);
	check(&ev2[1], MP_EV_REGION_ADD, "GPU:1", 1100, 0x300000000, 32 * MiB);
	check(&ev2[2], MP_EV_ALLOC, "GPU:1", 1200, 0x300001000, 4096);
	check(&ev2[3], MP_EV_REGION_ADD, "GPU:0", 1300, 0xa000000, 6 * MiB);
	check(&ev2[4], MP_EV_REGION_REMOVE, "GPU:0", 1400, 0xa000000, 0);
	check(&ev2[5], MP_EV_FREE, "CUDA:pinned_host", 1500, 0x10000, 0);
	/* not dlclose'd: libcupti keeps memory in its globals, which a leak
	 * checker finds unreachable once the library is unmapped */
}

/* Callbacks, faked as CUpti_CallbackData: a failed cudaMalloc is an
 * ALLOC_FAILED of its size on the current device; successes and ENTER
 * sites give nothing; cuMemMap / cuMemUnmap are a segment of the device. */
typedef struct {
	_Alignas(8) uint8_t data[MP_CUPTI_CB_SIZE];
	uint64_t params[5];
	int32_t result;
} fake_cb_t;

static const void *fake(fake_cb_t *f, uint32_t site, int32_t result, uint64_t p0, uint64_t p1)
{
	const void *pp = f->params, *rp = &f->result;

	memset(f, 0, sizeof *f);
	put32(f->data, MP_CUPTI_CB_SITE, site);
	memcpy(f->data + MP_CUPTI_CB_PARAMS, &pp, sizeof pp);
	memcpy(f->data + MP_CUPTI_CB_RETURN, &rp, sizeof rp);
	put32(f->data, MP_CUPTI_CB_CORRELATION, 42);
	f->params[0] = p0;
	f->params[1] = p1;
	f->result = result;
	return f->data;
}

static void test_callbacks(void **state)
{
	mp_cupti_translator_t t;
	mp_gpu_event_t ev[1];
	fake_cb_t f;
	uint64_t slot = 0;

	(void)state;
	mp_cupti_translator_init(&t);
	/* cudaMalloc(&p, 80 GiB) -> cudaErrorMemoryAllocation (2) */
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc,
						     fake(&f, MP_CUPTI_API_EXIT, 2, (uint64_t)(uintptr_t)&slot,
							  80ull << 30),
						     3, 777, ev),
			 1);
	check(&ev[0], MP_EV_ALLOC_FAILED, "GPU:3", 777, 0, 80ull << 30);
	assert_int_equal(ev[0].correlation, 42);
	/* the same call at ENTER, and a success: nothing */
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc,
						     fake(&f, MP_CUPTI_API_ENTER, 2, 0, 1 << 20), 0, 1, ev),
			 0);
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc,
						     fake(&f, MP_CUPTI_API_EXIT, 0, 0, 1 << 20), 0, 1, ev),
			 0);
	/* cuMemAllocManaged failing: managed memory */
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAllocManaged,
						     fake(&f, MP_CUPTI_API_EXIT, 2, 0, 12345), 1, 900, ev),
			 1);
	check(&ev[0], MP_EV_ALLOC_FAILED, "CUDA:managed", 900, 0, 12345);
	/* cuMemMap(ptr, 2 MiB, ...) and cuMemUnmap(ptr, 2 MiB): nothing, their
	 * MEMORY2 records are the mapping (test_vmm_records) */
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemMap,
						     fake(&f, MP_CUPTI_API_EXIT, 0, 0x7e0000000000, 2 * MiB), 1, 1000,
						     ev),
			 0);
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemUnmap,
						     fake(&f, MP_CUPTI_API_EXIT, 0, 0x7e0000000000, 2 * MiB), 1, 2000,
						     ev),
			 0);
	/* a failed map maps nothing; an unwatched call gives nothing */
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemMap,
						     fake(&f, MP_CUPTI_API_EXIT, 1, 0x7e0000000000, 2 * MiB), 1, 3000,
						     ev),
			 0);
	assert_int_equal(mp_cupti_translate_callback(&t, MP_CUPTI_DOMAIN_RUNTIME, 1,
						     fake(&f, MP_CUPTI_API_EXIT, 2, 0, 64), 1, 3000, ev),
			 0);
	assert_int_equal(t.stats.events, 2);
}

/* The sequence a failed cudaMalloc(1 PiB) made on the H200 (CUDA 13.0):
 * the runtime's ENTER, the driver's cuMemAlloc_v2 ENTER and EXIT (failed)
 * inside it, the runtime's EXIT (failed). Only the runtime call is the
 * program's: one failure, not two. A cuMemAlloc the program calls itself
 * (outside any runtime call) is its own. */
static void test_nested_failure(void **state)
{
	mp_cupti_translator_t t;
	mp_gpu_event_t ev[1];
	fake_cb_t f;
	unsigned depth = 0;
	int failures = 0, i;
	struct {
		uint32_t domain, cbid, site;
		int own;
	} seq[] = {
		{MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc, MP_CUPTI_API_ENTER, 1},
		{MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAlloc_v2, MP_CUPTI_API_ENTER, 0},
		{MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAlloc_v2, MP_CUPTI_API_EXIT, 0},
		{MP_CUPTI_DOMAIN_RUNTIME, MP_CUPTI_RT_cudaMalloc, MP_CUPTI_API_EXIT, 1},
		{MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAlloc_v2, MP_CUPTI_API_ENTER, 1},
		{MP_CUPTI_DOMAIN_DRIVER, MP_CUPTI_DRV_cuMemAlloc_v2, MP_CUPTI_API_EXIT, 1},
	};

	(void)state;
	mp_cupti_translator_init(&t);
	for (i = 0; i < 6; i++) {
		const void *d = fake(&f, seq[i].site, 2, 0, 1ull << 50);
		int own = mp_cupti_callback_is_own(seq[i].domain, d, &depth);
		assert_int_equal(own, seq[i].own);
		if (own)
			failures += mp_cupti_translate_callback(&t, seq[i].domain, seq[i].cbid, d, 0, 100 + i, ev);
		if (i == 3) {
			assert_int_equal(failures, 1);
			check(&ev[0], MP_EV_ALLOC_FAILED, "GPU:0", 103, 0, 1ull << 50);
		}
	}
	assert_int_equal(failures, 2); /* the runtime call's, and the program's own cuMemAlloc */
	assert_int_equal(depth, 0);
	/* an EXIT whose ENTER came before the callbacks were on: depth stays 0 */
	assert_int_equal(mp_cupti_callback_is_own(MP_CUPTI_DOMAIN_RUNTIME, fake(&f, MP_CUPTI_API_EXIT, 2, 0, 1), &depth),
			 1);
	assert_int_equal(depth, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_segments), cmocka_unit_test(test_async_pool),
		cmocka_unit_test(test_host_kinds),      cmocka_unit_test(test_legacy_memory),
		cmocka_unit_test(test_skipped_and_invalid), cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_real_iterator),   cmocka_unit_test(test_callbacks),
		cmocka_unit_test(test_nested_failure),  cmocka_unit_test(test_vmm_and_static),
		cmocka_unit_test(test_library_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
