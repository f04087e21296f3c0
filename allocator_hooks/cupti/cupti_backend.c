/* cupti_backend.c - the CUDA injection library (libmemprof_cupti.so):
 * device memory of unmodified CUDA programs through CUPTI.
 *
 * The CUDA driver loads the library named by CUDA_INJECTION64_PATH (which
 * `memprof record --gpu` sets) while it initialises, before the program's
 * first CUDA call, and calls InitializeInjection(). From there:
 *
 *   1. libcupti is dlopen'ed (MEMPROF_CUPTI_LIB, else libcupti.so.13/.12,
 *      else the toolkit's found at build time): nothing of CUDA is linked,
 *      so this library builds and loads on machines without CUDA.
 *   2. The capture is found (cupti_sink.c: the preload's writer, or our own
 *      on MEMPROF_OUTPUT) and a lane opened on it.
 *   3. CUPTI's timestamps are put on our clock (CLOCK_MONOTONIC, from which
 *      the capture's times are counted), memory records (MEMORY2,
 *      MEMORY_POOL) are enabled, and the allocation calls get callbacks
 *      for their failures, which the records miss.
 *   4. A thread of ours force-flushes CUPTI every MEMPROF_CUPTI_FLUSH_MS
 *      (default 200): every record of a call that returned before the flush
 *      began is then delivered, so the events earlier than that instant
 *      are written, in time order (memprof/gpu_queue.h), and the lane's
 *      hold moves there.
 *   5. At exit: a last forced flush, everything written, a summary of what
 *      was skipped or lost.
 *
 * Any failure on the way (no libcupti, no GPU, another CUPTI client such as
 * Nsight or torch.profiler) prints one warning and leaves the program and
 * its host capture alone.
 */
#include <memprof/cupti_dump.h>
#include <memprof/cupti_translate.h>
#include <memprof/event.h>
#include <memprof/gpu_queue.h>

#include "cupti_api.h"
#include "cupti_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUFFER_BYTES (4u << 20)

static mp_cupti_api_t api;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* the queue, the translator, the sink */
static mp_cupti_translator_t tr;
static mp_gpu_queue_t queue;
static uint64_t origin_ns;
static _Atomic int running;
static pthread_t flusher;
static int flusher_started;
static _Atomic int stop_flusher;
static pthread_mutex_t stop_mu = PTHREAD_MUTEX_INITIALIZER; /* wakes the flusher at exit */
static pthread_cond_t stop_cv = PTHREAD_COND_INITIALIZER;
static uint64_t dropped_records;
static int dump_fd = -1;

/* memory ids by name: the devices, pinned host, managed */
static struct {
	char name[32];
	int id;
} mems[66];
static unsigned mem_count;

static void warn(const char *what, const char *why)
{
	fprintf(stderr, "memprof: warning: --gpu: %s%s%s; GPU memory is not recorded, host memory is\n", what,
		why ? ": " : "", why ? why : "");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CUPTI's clock: ours (the timestamp callback). */
static uint64_t CUPTIAPI timestamp(void)
{
	return mono_ns();
}

/* The memory id of an event's memory (mu held). */
static int memory_of(const mp_gpu_event_t *e)
{
	char name[32];
	uint64_t cap = 0;
	unsigned i;
	int kind = mp_gpu_memory_kind(e);

	mp_gpu_memory_name(e, name, sizeof name);
	for (i = 0; i < mem_count; i++)
		if (!strcmp(mems[i].name, name))
			return mems[i].id;
	if (e->space == MP_GPU_SPACE_DEVICE)
		cap = mp__cupti_device_memory(&api, e->device);
	if (mem_count == sizeof(mems) / sizeof(mems[0]))
		return mp__sink_memory(name, kind, cap);
	snprintf(mems[mem_count].name, sizeof mems[mem_count].name, "%s", name);
	mems[mem_count].id = mp__sink_memory(name, kind, cap);
	return mems[mem_count++].id;
}

/* An allocation's source (MEMORY2's const char *, valid in this process:
 * CUPTI keeps the string) names one of CUDA's libraries. */
static int source_is_library(uint64_t source)
{
	return mp_cupti_source_is_library((const char *)(uintptr_t)source);
}

/* Write the queued events earlier than cut, then hold there (mu held). */
static void drain(uint64_t cut)
{
	mp_gpu_event_t e;

	while (mp_gpu_queue_pop_before(&queue, cut, &e)) {
		uint64_t t = e.time_ns > origin_ns ? e.time_ns - origin_ns : 0;
		mp__sink_event(e.kind, memory_of(&e), t, e.address, e.bytes);
	}
	mp_gpu_queue_release(&queue, cut);
	if (dropped_records) {
		mp_gpu_event_t d = {0};
		mp__sink_dropped(memory_of(&d), dropped_records); /* on GPU:0: CUPTI does not say whose */
		dropped_records = 0;
	}
	mp__sink_hold(cut == UINT64_MAX ? UINT64_MAX : cut > origin_ns ? cut - origin_ns : 0);
}

/* A record stamped on CUPTI's default clock (CLOCK_REALTIME: a record made
 * before our timestamp callback took effect) would land decades ahead:
 * brought back onto CLOCK_MONOTONIC. */
static void on_our_clock(mp_gpu_event_t *e)
{
	struct timespec rt;
	uint64_t mono = mono_ns(), real;

	if (e->time_ns <= mono + 3600ull * 1000000000u)
		return;
	clock_gettime(CLOCK_REALTIME, &rt);
	real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	e->time_ns = e->time_ns - real + mono;
}

static void push(mp_gpu_event_t *ev, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		on_our_clock(&ev[i]);
		mp_gpu_queue_push(&queue, &ev[i]);
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUFFER_BYTES);
	*size = *buf ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void dump_buffer(const uint8_t *buf, size_t valid)
{
	static const uint8_t pad[8];
	uint64_t n = valid;

	if (dump_fd < 0)
		return;
	if (write(dump_fd, &n, 8) != 8 || write(dump_fd, buf, valid) != (ssize_t)valid ||
	    write(dump_fd, pad, (8 - (valid & 7)) & 7) < 0) {
		close(dump_fd);
		dump_fd = -1;
		warn("could not write the CUPTI dump", strerror(errno));
	}
}

static void CUPTIAPI buffer_completed(void *ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	void *rec = NULL;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&mu);
	dump_buffer(buf, valid);
	while (api.get_next_record(buf, valid, &rec) == MP_CUPTI_SUCCESS) {
		mp_gpu_event_t ev[MP_CUPTI_MAX_OUT];
		/* the real iterator does not say a record's length; the
		 * translation knows the kinds it reads */
		push(ev, mp_cupti_translate(&tr, rec, (size_t)(buf + valid - (uint8_t *)rec), ev));
	}
	if (api.get_num_dropped(ctx, stream, &dropped) == MP_CUPTI_SUCCESS)
		dropped_records += dropped;
	pthread_mutex_unlock(&mu);
	free(buf);
}

/* The watched runtime calls this thread is inside: the driver calls they
 * make (cudaMalloc's cuMemAlloc) are not the program's, and their failure
 * is counted once, at the runtime call's exit. Initial-exec: no allocation
 * on first use in a thread. */
static __thread unsigned runtime_depth __attribute__((tls_model("initial-exec")));

/* Runtime and driver callbacks: failed allocations. */
static void CUPTIAPI on_callback(void *ud, uint32_t domain, uint32_t cbid, const void *data)
{
	mp_gpu_event_t ev[1];
	int n;

	(void)ud;
	if (!mp_cupti_callback_is_own(domain, data, &runtime_depth))
		return;
	if (!atomic_load_explicit(&running, memory_order_relaxed))
		return;
	pthread_mutex_lock(&mu);
	n = mp_cupti_translate_callback(&tr, domain, cbid, data, 0, mono_ns(), ev);
	pthread_mutex_unlock(&mu);
	if (!n)
		return; /* nearly every call: a success, whose record comes from the activity API */
	/* the device: asked of the driver only now, outside our lock */
	if (ev[0].space == MP_GPU_SPACE_DEVICE)
		ev[0].device = mp__cupti_current_device(&api);
	pthread_mutex_lock(&mu);
	push(ev, n);
	pthread_mutex_unlock(&mu);
}

/* Declare GPU:0 .. GPU:n-1 with their capacities as soon as the driver can
 * count them: a framework that declares "GPU:N" itself (to annotate its
 * tensors) gets the same memory id, and the first declaration sets the
 * capacity. Returns 1 once done. */
static int declare_devices(void)
{
	int n = mp__cupti_device_count(&api), i;

	if (n < 0)
		return 0;
	pthread_mutex_lock(&mu);
	for (i = 0; i < n && i < 64; i++) {
		mp_gpu_event_t e = {0};
		e.device = (uint32_t)i;
		memory_of(&e);
	}
	pthread_mutex_unlock(&mu);
	return 1;
}

static void *flush_main(void *arg)
{
	const char *env = getenv("MEMPROF_CUPTI_FLUSH_MS");
	unsigned ms = 200;
	int declared = 0;

	(void)arg;
	if (env && atoi(env) > 0)
		ms = (unsigned)atoi(env);
	while (!atomic_load(&stop_flusher)) {
		struct timespec until;
		uint64_t cut;
		if (!declared)
			declared = declare_devices();
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(ms / 1000);
		until.tv_nsec += (long)(ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
		pthread_mutex_lock(&stop_mu);
		while (!atomic_load(&stop_flusher) && pthread_cond_timedwait(&stop_cv, &stop_mu, &until) == 0)
			;
		pthread_mutex_unlock(&stop_mu);
		if (atomic_load(&stop_flusher))
			break;
		cut = mono_ns();
		api.flush_all(MP_CUPTI_FLUSH_FORCED);
		pthread_mutex_lock(&mu);
		drain(cut);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void at_exit(void)
{
	if (!atomic_exchange(&running, 0))
		return;
	pthread_mutex_lock(&stop_mu);
	atomic_store(&stop_flusher, 1);
	pthread_cond_signal(&stop_cv);
	pthread_mutex_unlock(&stop_mu);
	if (flusher_started)
		pthread_join(flusher, NULL);
	api.flush_all(MP_CUPTI_FLUSH_FORCED);
	pthread_mutex_lock(&mu);
	drain(UINT64_MAX);
	pthread_mutex_unlock(&mu);
	if (tr.stats.skipped_kinds || tr.stats.invalid || tr.stats.truncated_bytes || queue.late || queue.lost)
		fprintf(stderr,
			"memprof: --gpu: %llu CUPTI records, %llu of other kinds skipped, %llu invalid, %llu bytes "
			"truncated, %llu late, %llu lost\n",
			(unsigned long long)tr.stats.records, (unsigned long long)tr.stats.skipped_kinds,
			(unsigned long long)tr.stats.invalid, (unsigned long long)tr.stats.truncated_bytes,
			(unsigned long long)queue.late, (unsigned long long)queue.lost);
	if (dump_fd >= 0)
		close(dump_fd);
	mp__sink_close();
}

static void in_child(void)
{
	atomic_store(&running, 0); /* our thread and CUPTI's did not survive fork */
}

static void open_dump(uint32_t version)
{
	const char *dir = getenv("MEMPROF_CUPTI_DUMP");
	uint8_t h[MP_CUPTI_DUMP_HEADER];
	char path[4096];

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof path, "%s/cupti.%d.bin", dir, (int)getpid());
	if ((dump_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		warn("cannot create the CUPTI dump", path);
		return;
	}
	mp_cupti_dump_header(h, version, origin_ns);
	if (write(dump_fd, h, sizeof h) != (ssize_t)sizeof h) {
		close(dump_fd);
		dump_fd = -1;
	}
}

/* 0 when CUPTI is recording, else -1 after one warning. */
static int start(void)
{
	const char *why = NULL;
	char msg[256];
	uint32_t version = 0;
	int rc;

	if (mp__cupti_load(&api, msg, sizeof msg)) {
		warn(msg, NULL);
		return -1;
	}
	if (mp__sink_open(&why)) {
		warn("no capture", why);
		return -1;
	}
	origin_ns = mp__sink_origin_ns();
	mp_cupti_translator_init(&tr);
	tr.is_library = source_is_library;
	mp_gpu_queue_init(&queue);
	mp_gpu_queue_release(&queue, mono_ns());
	api.get_version(&version);
	if ((rc = mp__cupti_enable(&api, timestamp, buffer_requested, buffer_completed, on_callback, msg,
				   sizeof msg))) {
		warn(msg, NULL);
		mp__sink_hold(UINT64_MAX);
		mp__sink_close();
		return -1;
	}
	open_dump(version);
	atomic_store(&running, 1);
	pthread_atfork(NULL, NULL, in_child);
	atexit(at_exit);
	flusher_started = pthread_create(&flusher, NULL, flush_main, NULL) == 0;
	return 0;
}

static void init_once(void)
{
	start();
}

/* Called by the CUDA driver (CUDA_INJECTION64_PATH); also by tests. 1: the
 * library is loaded (the driver goes on either way; so does the program,
 * recording or not). */
__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, init_once);
	return 1;
}
