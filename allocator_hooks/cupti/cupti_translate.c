/* cupti_translate.c - CUPTI memory records into memprof events (pure; the
 * rules are in memprof/cupti_translate.h, the layouts in cupti_layout.h).
 */
#include <memprof/cupti_translate.h>
#include <memprof/event.h>

#include "cupti_layout.h"

#include <stdio.h>

void mp_cupti_translator_init(mp_cupti_translator_t *t)
{
	memset(t, 0, sizeof *t);
}

/* The length of a record of this kind, or 0 when memprof does not know it
 * (then nothing after it can be found). */
static size_t record_size(uint32_t kind)
{
	switch (kind) {
	case MP_CUPTI_KIND_MEMORY:
		return MP_CUPTI_MEM1_SIZE;
	case MP_CUPTI_KIND_MEMORY2:
		return MP_CUPTI_MEM4_SIZE;
	case MP_CUPTI_KIND_MEMORY_POOL:
		return MP_CUPTI_POOL3_SIZE;
	case MP_CUPTI_KIND_DRIVER:
	case MP_CUPTI_KIND_RUNTIME:
		return MP_CUPTI_API_SIZE;
	default:
		return 0;
	}
}

int mp_cupti_next_record(mp_cupti_translator_t *t, const uint8_t *buf, size_t valid, size_t *pos,
			 const uint8_t **rec, size_t *len)
{
	size_t at = *pos, n;

	if (at >= valid)
		return 0;
	if (valid - at < 4 || !(n = record_size(mp__cupti_u32(buf + at, MP_CUPTI_OFF_KIND))) || valid - at < n) {
		t->stats.truncated_bytes += valid - at;
		*pos = valid;
		return 0;
	}
	*rec = buf + at;
	*len = n;
	*pos = at + n;
	return 1;
}

/* Which space a CUPTI memory kind lands in; -1 for kinds outside the enum. */
static int space_of(uint32_t memory_kind)
{
	switch (memory_kind) {
	case MP_CUPTI_MEM_DEVICE:
	case MP_CUPTI_MEM_ARRAY:
		return MP_GPU_SPACE_DEVICE;
	case MP_CUPTI_MEM_DEVICE_STATIC:
		return MP_GPU_SPACE_STATIC;
	case MP_CUPTI_MEM_PINNED:
	case MP_CUPTI_MEM_PAGEABLE:
		return MP_GPU_SPACE_PINNED;
	case MP_CUPTI_MEM_MANAGED:
	case MP_CUPTI_MEM_MANAGED_STATIC:
		return MP_GPU_SPACE_MANAGED;
	case MP_CUPTI_MEM_UNKNOWN: /* CUPTI could not tell: the device is the likeliest */
		return MP_GPU_SPACE_DEVICE;
	default:
		return -1;
	}
}

static int on_device(int space)
{
	return space == MP_GPU_SPACE_DEVICE || space == MP_GPU_SPACE_STATIC || space == MP_GPU_SPACE_LIBRARY;
}

static mp_gpu_event_t ev(int kind, int space, uint32_t device, uint32_t context, uint64_t time, uint64_t address,
			 uint64_t bytes)
{
	mp_gpu_event_t e;

	memset(&e, 0, sizeof e);
	e.kind = (uint8_t)kind;
	e.space = (uint8_t)space;
	e.device = device;
	e.context = context;
	e.time_ns = time;
	e.address = address;
	e.bytes = bytes;
	return e;
}

/* A pool's size as last reported, kept per (device, address). When it
 * changes, the pool's region is replaced: out gets REGION_REMOVE (when it
 * was known) and REGION_ADD with the new size. Returns the events written. */
static int pool_resize(mp_cupti_translator_t *t, uint32_t device, uint64_t address, uint64_t size, uint64_t time,
		       mp_gpu_event_t *out)
{
	mp_cupti_pool_t *p = NULL, *slot = NULL;
	int i, n = 0;

	if (!address || !size)
		return 0;
	for (i = 0; i < MP_CUPTI_MAX_POOLS; i++) {
		mp_cupti_pool_t *q = &t->pools[i];
		if (q->live && q->device == device && q->address == address) {
			p = q;
			break;
		}
		if (!q->live && !slot)
			slot = q;
	}
	if (p && p->size == size)
		return 0;
	if (p)
		out[n++] = ev(MP_EV_REGION_REMOVE, MP_GPU_SPACE_DEVICE, device, 0, time, address, 0);
	else if (!(p = slot)) {
		t->stats.pools_full++;
		return 0;
	}
	p->live = 1, p->device = device, p->address = address, p->size = size;
	out[n++] = ev(MP_EV_REGION_ADD, MP_GPU_SPACE_DEVICE, device, 0, time, address, size);
	return n;
}

static int pool_destroy(mp_cupti_translator_t *t, uint32_t device, uint64_t address, uint64_t time,
			mp_gpu_event_t *out)
{
	int i;

	for (i = 0; i < MP_CUPTI_MAX_POOLS; i++) {
		mp_cupti_pool_t *q = &t->pools[i];
		if (q->live && q->device == device && q->address == address) {
			q->live = 0;
			out[0] = ev(MP_EV_REGION_REMOVE, MP_GPU_SPACE_DEVICE, device, 0, time, address, 0);
			return 1;
		}
	}
	return 0;
}

/* A device segment's space: LIBRARY when a CUDA library allocated it (its
 * source, through t->is_library) or when it is the release of one that
 * did, else DEVICE. */
static int library_segment(mp_cupti_translator_t *t, const uint8_t *r, uint32_t op, uint32_t device,
			   uint64_t address)
{
	mp_cupti_pool_t *slot = NULL;
	uint64_t source;
	int i;

	for (i = 0; i < MP_CUPTI_MAX_LIBRARY_SEGMENTS; i++) {
		mp_cupti_pool_t *q = &t->library_segments[i];
		if (q->live && q->device == device && q->address == address) {
			if (op == MP_CUPTI_OP_RELEASE)
				q->live = 0;
			return MP_GPU_SPACE_LIBRARY;
		}
		if (!q->live && !slot)
			slot = q;
	}
	source = mp__cupti_u64(r, MP_CUPTI_MEM4_SOURCE);
	if (op != MP_CUPTI_OP_ALLOCATION || !t->is_library || !source || !t->is_library(source))
		return MP_GPU_SPACE_DEVICE;
	if (!slot) { /* its release could not be told: keep the pair in GPU:N */
		t->stats.pools_full++;
		return MP_GPU_SPACE_DEVICE;
	}
	slot->live = 1, slot->device = device, slot->address = address;
	return MP_GPU_SPACE_LIBRARY;
}

/* CUpti_ActivityMemory4: one allocation or release. */
static int memory4(mp_cupti_translator_t *t, const uint8_t *r, mp_gpu_event_t *out)
{
	uint32_t op = mp__cupti_u32(r, MP_CUPTI_MEM4_OPERATION), device = mp__cupti_u32(r, MP_CUPTI_MEM4_DEVICE);
	uint32_t context = mp__cupti_u32(r, MP_CUPTI_MEM4_CONTEXT);
	uint64_t address = mp__cupti_u64(r, MP_CUPTI_MEM4_ADDRESS), bytes = mp__cupti_u64(r, MP_CUPTI_MEM4_BYTES);
	uint64_t time = mp__cupti_u64(r, MP_CUPTI_MEM4_TIMESTAMP);
	int space = space_of(mp__cupti_u32(r, MP_CUPTI_MEM4_MEMORY_KIND)), n = 0, async, kind;

	if (space < 0 || (op != MP_CUPTI_OP_ALLOCATION && op != MP_CUPTI_OP_RELEASE)) {
		t->stats.invalid++;
		return 0;
	}
	async = mp__cupti_u32(r, MP_CUPTI_MEM4_IS_ASYNC) != 0;
	if (async && space == MP_GPU_SPACE_DEVICE)
		/* the pool as it is now, before the allocation placed in it */
		n = pool_resize(t, device, mp__cupti_u64(r, MP_CUPTI_MEM4_POOL_ADDRESS),
				mp__cupti_u64(r, MP_CUPTI_MEM4_POOL_SIZE), time, out);
	if (space == MP_GPU_SPACE_DEVICE && !async)
		space = library_segment(t, r, op, device, address);
	if (on_device(space) && !async)
		kind = op == MP_CUPTI_OP_ALLOCATION ? MP_EV_REGION_ADD : MP_EV_REGION_REMOVE;
	else
		kind = op == MP_CUPTI_OP_ALLOCATION ? MP_EV_ALLOC : MP_EV_FREE;
	out[n] = ev(kind, space, on_device(space) ? device : 0, context, time, address,
		    op == MP_CUPTI_OP_ALLOCATION ? bytes : 0);
	out[n].correlation = mp__cupti_u32(r, MP_CUPTI_MEM4_CORRELATION);
	return n + 1;
}

/* CUpti_ActivityMemory (legacy): the allocation and, unless it was never
 * freed (end 0), its release: two events at two times. */
static int memory1(mp_cupti_translator_t *t, const uint8_t *r, mp_gpu_event_t *out)
{
	int space = space_of(mp__cupti_u32(r, MP_CUPTI_MEM1_MEMORY_KIND));
	uint32_t device, context = mp__cupti_u32(r, MP_CUPTI_MEM1_CONTEXT);
	uint64_t address = mp__cupti_u64(r, MP_CUPTI_MEM1_ADDRESS), end = mp__cupti_u64(r, MP_CUPTI_MEM1_END);
	int add = MP_EV_REGION_ADD, rm = MP_EV_REGION_REMOVE;

	if (space < 0) {
		t->stats.invalid++;
		return 0;
	}
	device = on_device(space) ? mp__cupti_u32(r, MP_CUPTI_MEM1_DEVICE) : 0;
	if (!on_device(space))
		add = MP_EV_ALLOC, rm = MP_EV_FREE;
	out[0] = ev(add, space, device, context, mp__cupti_u64(r, MP_CUPTI_MEM1_START), address,
		    mp__cupti_u64(r, MP_CUPTI_MEM1_BYTES));
	if (!end)
		return 1;
	out[1] = ev(rm, space, device, context, end, address, 0);
	return 2;
}

/* CUpti_ActivityMemoryPool3: a stream-ordered pool created, trimmed or
 * destroyed. */
static int pool3(mp_cupti_translator_t *t, const uint8_t *r, mp_gpu_event_t *out)
{
	uint32_t op = mp__cupti_u32(r, MP_CUPTI_POOL3_OPERATION), device = mp__cupti_u32(r, MP_CUPTI_POOL3_DEVICE);
	uint64_t address = mp__cupti_u64(r, MP_CUPTI_POOL3_ADDRESS), time = mp__cupti_u64(r, MP_CUPTI_POOL3_TIMESTAMP);

	switch (op) {
	case MP_CUPTI_POOL_CREATED:
	case MP_CUPTI_POOL_TRIMMED:
		return pool_resize(t, device, address, mp__cupti_u64(r, MP_CUPTI_POOL3_BYTES), time, out);
	case MP_CUPTI_POOL_DESTROYED:
		return pool_destroy(t, device, address, time, out);
	default:
		t->stats.invalid++;
		return 0;
	}
}

int mp_cupti_translate(mp_cupti_translator_t *t, const void *rec, size_t len, mp_gpu_event_t *out)
{
	const uint8_t *r = rec;
	uint32_t kind;
	size_t need;
	int n;

	t->stats.records++;
	if (len < 4) {
		t->stats.truncated_bytes += len;
		return 0;
	}
	kind = mp__cupti_u32(r, MP_CUPTI_OFF_KIND);
	need = record_size(kind);
	if (kind != MP_CUPTI_KIND_MEMORY && kind != MP_CUPTI_KIND_MEMORY2 && kind != MP_CUPTI_KIND_MEMORY_POOL) {
		t->stats.skipped_kinds++;
		return 0;
	}
	if (len < need) {
		t->stats.truncated_bytes += len;
		return 0;
	}
	if (kind == MP_CUPTI_KIND_MEMORY2)
		n = memory4(t, r, out);
	else if (kind == MP_CUPTI_KIND_MEMORY)
		n = memory1(t, r, out);
	else
		n = pool3(t, r, out);
	t->stats.events += (uint64_t)n;
	return n;
}

int mp_cupti_translate_callback(mp_cupti_translator_t *t, uint32_t domain, uint32_t cbid, const void *cbdata,
				uint32_t device, uint64_t now_ns, mp_gpu_event_t *out)
{
	const uint8_t *d = cbdata;
	const void *params, *retp;
	const uint8_t *p;
	int space = MP_GPU_SPACE_DEVICE, failed;
	int32_t result;

	if (!d || mp__cupti_u32(d, MP_CUPTI_CB_SITE) != MP_CUPTI_API_EXIT)
		return 0;
	memcpy(&params, d + MP_CUPTI_CB_PARAMS, sizeof params);
	memcpy(&retp, d + MP_CUPTI_CB_RETURN, sizeof retp);
	if (!params || !retp)
		return 0;
	p = params;
	memcpy(&result, retp, sizeof result); /* cudaError_t and CUresult: an int, 0 = success */
	failed = result != 0;
	/* cuMemMap / cuMemUnmap: their MEMORY2 records are the mappings
	 * (one source: a callback's region too would count each chunk twice) */
	if (domain == MP_CUPTI_DOMAIN_DRIVER && (cbid == MP_CUPTI_DRV_cuMemMap || cbid == MP_CUPTI_DRV_cuMemUnmap))
		return 0;
	if (domain == MP_CUPTI_DOMAIN_RUNTIME) {
		switch (cbid) {
		case MP_CUPTI_RT_cudaMallocHost:
			space = MP_GPU_SPACE_PINNED;
			break;
		case MP_CUPTI_RT_cudaMallocManaged:
			space = MP_GPU_SPACE_MANAGED;
			break;
		case MP_CUPTI_RT_cudaMalloc:
		case MP_CUPTI_RT_cudaMallocPitch:
		case MP_CUPTI_RT_cudaMallocAsync:
		case MP_CUPTI_RT_cudaMallocAsync_ptsz:
			break;
		default:
			return 0;
		}
	} else if (domain == MP_CUPTI_DOMAIN_DRIVER) {
		if (cbid == MP_CUPTI_DRV_cuMemAllocManaged)
			space = MP_GPU_SPACE_MANAGED;
		else if (cbid != MP_CUPTI_DRV_cuMemAlloc_v2 && cbid != MP_CUPTI_DRV_cuMemAllocAsync)
			return 0;
	} else {
		return 0;
	}
	/* successes arrive as activity records, with the driver's own
	 * timestamps; only the failures are news here */
	if (!failed)
		return 0;
	/* cudaMallocPitch's second parameter is the pitch pointer: its
	 * request is not a size we can read */
	if (domain == MP_CUPTI_DOMAIN_RUNTIME && cbid == MP_CUPTI_RT_cudaMallocPitch)
		return 0;
	out[0] = ev(MP_EV_ALLOC_FAILED, space, space == MP_GPU_SPACE_DEVICE ? device : 0, 0, now_ns, 0,
		    mp__cupti_u64(p, MP_CUPTI_PARAM_SIZE));
	out[0].correlation = mp__cupti_u32(d, MP_CUPTI_CB_CORRELATION);
	t->stats.events++;
	return 1;
}

int mp_cupti_callback_is_own(uint32_t domain, const void *cbdata, unsigned *depth)
{
	const uint8_t *d = cbdata;
	uint32_t site;

	if (!d)
		return 0;
	site = mp__cupti_u32(d, MP_CUPTI_CB_SITE);
	if (domain == MP_CUPTI_DOMAIN_RUNTIME) {
		if (site == MP_CUPTI_API_ENTER) {
			++*depth;
			return 1;
		}
		if (*depth) /* an EXIT without its ENTER (callbacks enabled in between): no count to undo */
			--*depth;
		return 1;
	}
	return *depth == 0;
}

int mp_cupti_source_is_library(const char *path)
{
	static const char *const libs[] = {"libcublas", "libcudnn", "libcufft", "libcusparse", "libcusolver",
					   "libcurand", "libnccl", "libcutensor"};
	const char *base;
	size_t i;

	if (!path)
		return 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (i = 0; i < sizeof libs / sizeof libs[0]; i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

int mp_gpu_memory_kind(const mp_gpu_event_t *e)
{
	if (e->space == MP_GPU_SPACE_PINNED)
		return MP_MEMORY_PINNED_HOST;
	return e->space == MP_GPU_SPACE_MANAGED ? MP_MEMORY_MANAGED : MP_MEMORY_DEVICE;
}

const char *mp_gpu_memory_name(const mp_gpu_event_t *e, char *buf, size_t size)
{
	if (e->space == MP_GPU_SPACE_PINNED)
		snprintf(buf, size, "CUDA:pinned_host");
	else if (e->space == MP_GPU_SPACE_MANAGED)
		snprintf(buf, size, "CUDA:managed");
	else if (e->space == MP_GPU_SPACE_STATIC)
		snprintf(buf, size, "GPU:%u:static", e->device);
	else if (e->space == MP_GPU_SPACE_LIBRARY)
		snprintf(buf, size, "GPU:%u:libraries", e->device);
	else
		snprintf(buf, size, "GPU:%u", e->device);
	return buf;
}
