/* annotate.c - the <memprof/annotate.h> API over a capture writer.
 *
 * Each call asks the backend (backend.h) where to go; on the common "not
 * recording" path that is one load and a branch. errno is saved and
 * restored around anything that could touch it.
 */
#include "backend.h"

#include <errno.h>
#include <stddef.h>

#define SCOPE_MAX 64

typedef struct frame {
	uint32_t op, dtype, shape;
	int region;
} frame_t;

/* The calling thread's scope stack. initial-exec: no allocation on first use. */
static __thread struct {
	int depth;    /* frames in use */
	int overflow; /* pushes beyond SCOPE_MAX, balanced by pops */
	frame_t frames[SCOPE_MAX];
} scopes __attribute__((tls_model("initial-exec")));

#define GO(target) mp_annotate_target_t target = mp__annotate_target()

MEMPROF_API int memprof_enabled(void)
{
	GO(t);
	if (t.forward)
		return t.forward->enabled();
	return t.writer != NULL;
}

MEMPROF_API int memprof_memory_declare(const char *name, memprof_memory_kind_t kind, uint64_t capacity_bytes)
{
	int saved = errno, id = -1;
	GO(t);

	if (t.forward)
		id = t.forward->memory_declare(name, kind, capacity_bytes);
	else if (t.writer && name)
		id = mp_writer_memory(t.writer, name, (int)kind, capacity_bytes);
	errno = saved;
	return id < 0 ? -1 : id;
}

MEMPROF_API void memprof_region_add(int memory, uint64_t base, uint64_t size_bytes)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->region_add(memory, base, size_bytes);
	else if (t.writer && memory >= 0)
		mp_writer_region_add(t.writer, (uint32_t)memory, base, size_bytes);
	errno = saved;
}

MEMPROF_API void memprof_region_remove(int memory, uint64_t base)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->region_remove(memory, base);
	else if (t.writer && memory >= 0)
		mp_writer_region_remove(t.writer, (uint32_t)memory, base);
	errno = saved;
}

MEMPROF_API void memprof_alloc(int memory, uint64_t address, uint64_t requested_bytes, uint64_t allocated_bytes)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->alloc(memory, address, requested_bytes, allocated_bytes);
	else if (t.writer && memory >= 0)
		mp_writer_alloc(t.writer, (uint32_t)memory, address, requested_bytes, allocated_bytes);
	errno = saved;
}

MEMPROF_API void memprof_free(int memory, uint64_t address)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->free(memory, address);
	else if (t.writer && memory >= 0)
		mp_writer_free(t.writer, (uint32_t)memory, address);
	errno = saved;
}

MEMPROF_API void memprof_alloc_failed(int memory, uint64_t requested_bytes)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->alloc_failed(memory, requested_bytes);
	else if (t.writer && memory >= 0)
		mp_writer_alloc_failed(t.writer, (uint32_t)memory, requested_bytes);
	errno = saved;
}

MEMPROF_API void memprof_step(int64_t step)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->step(step);
	else if (t.writer)
		mp_writer_step(t.writer, step);
	errno = saved;
}

MEMPROF_API void memprof_mark(const char *label)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->mark(label);
	else if (t.writer && label)
		mp_writer_mark(t.writer, mp_writer_intern(t.writer, label));
	errno = saved;
}

static void apply_top(mp_writer_t *w)
{
	frame_t top = {0, 0, 0, 0};

	if (scopes.depth > 0)
		top = scopes.frames[scopes.depth - 1];
	mp_writer_set_context(w, top.op, top.region, top.dtype, top.shape);
}

MEMPROF_API void memprof_push(const char *op, memprof_region_t region, const char *dtype, const char *shape)
{
	int saved = errno;
	frame_t f = {0, 0, 0, 0};
	GO(t);

	if (t.forward) {
		t.forward->push(op, region, dtype, shape);
		goto out;
	}
	if (!t.writer)
		goto out;
	if (scopes.depth >= SCOPE_MAX) {
		scopes.overflow++;
		goto out;
	}
	if (scopes.depth > 0)
		f = scopes.frames[scopes.depth - 1];
	if (op)
		f.op = mp_writer_intern(t.writer, op);
	if (region >= MEMPROF_REGION_UNKNOWN && region <= MEMPROF_REGION_STACK)
		f.region = (int)region;
	if (dtype)
		f.dtype = mp_writer_intern(t.writer, dtype);
	if (shape)
		f.shape = mp_writer_intern(t.writer, shape);
	scopes.frames[scopes.depth++] = f;
	apply_top(t.writer);
out:
	errno = saved;
}

MEMPROF_API void memprof_pop(void)
{
	int saved = errno;
	GO(t);

	if (t.forward) {
		t.forward->pop();
		goto out;
	}
	if (!t.writer)
		goto out;
	if (scopes.overflow > 0) {
		scopes.overflow--;
		goto out;
	}
	if (scopes.depth > 0)
		scopes.depth--;
	apply_top(t.writer);
out:
	errno = saved;
}

MEMPROF_API void memprof_flush(void)
{
	int saved = errno;
	GO(t);

	if (t.forward)
		t.forward->flush();
	else if (t.writer)
		mp_writer_flush(t.writer);
	errno = saved;
}
