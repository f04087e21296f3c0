/* wframe.c - interpreter frames for the writer (format 2.2): a Python
 * function at a line, interned to a frame id like a stack or a string.
 *
 * The preload walks the interpreter's frame chain on every allocation and
 * puts each frame in the stack as MP_STACK_FRAME_TAG | id, so the lookup
 * is on the event path: lock-free, an open-addressing table whose slots
 * are published with a release store of the id (wstack.c's scheme). The
 * first sight of a frame takes defs_mu (mp__defs_lock: given up after
 * 20 ms), appends the FRAME section to the pending defs and only then
 * publishes the slot; the caller then defines the stack holding the value
 * (mp_writer_stack, which appends to the same defs later), so a frame is
 * always written before the first stack that holds it. Old tables stay in
 * the arena until close; nothing here calls malloc.
 */
#include <memprof/format.h>
#include <memprof/format/varint.h>
#include <memprof/source.h>

#include "writer_internal.h"

#include <errno.h>

static uint64_t frame_hash(uint32_t function, uint32_t file, uint32_t line, int kind)
{
	uint64_t h = ((uint64_t)function << 32 | file) * 0x9E3779B97F4A7C15ull;

	h ^= ((uint64_t)line << 8 | (uint8_t)kind) * 0xff51afd7ed558ccdull;
	h ^= h >> 31;
	return h | 1;
}

static uint32_t frame_lookup(mp_writer_t *w, uint32_t function, uint32_t file, uint32_t line, int kind,
			     uint64_t hash)
{
	mp_frame_table_t *t = atomic_load_explicit(&w->frames, memory_order_acquire);
	uint32_t i;

	if (!t)
		return 0;
	for (i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
		mp_frame_slot_t *slot = &t->slots[i];
		uint32_t id = atomic_load_explicit(&slot->id, memory_order_acquire);
		if (!id)
			return 0;
		if (slot->hash == hash && slot->function == function && slot->file == file && slot->line == line &&
		    slot->kind == kind)
			return id;
	}
}

static void table_put(mp_frame_table_t *t, const mp_frame_slot_t *from, uint32_t id)
{
	uint32_t i = (uint32_t)from->hash & t->mask;

	while (atomic_load_explicit(&t->slots[i].id, memory_order_relaxed))
		i = (i + 1) & t->mask;
	t->slots[i].hash = from->hash;
	t->slots[i].function = from->function;
	t->slots[i].file = from->file;
	t->slots[i].line = from->line;
	t->slots[i].kind = from->kind;
	atomic_store_explicit(&t->slots[i].id, id, memory_order_release);
}

/* Caller holds defs_mu. */
static int insert_locked(mp_writer_t *w, const mp_frame_slot_t *f, uint32_t *id)
{
	mp_frame_table_t *t = atomic_load_explicit(&w->frames, memory_order_relaxed);
	uint8_t sec[1 + 5 * MP_VARINT_MAX], *p;
	uint32_t i, found;

	if ((found = frame_lookup(w, f->function, f->file, f->line, f->kind, f->hash))) {
		*id = found;
		return 0;
	}
	if (f->function > w->string_count || f->file > w->string_count)
		return -EINVAL; /* not an interned string: a reader would call the file corrupt */
	if (w->frame_count >= UINT32_MAX / 2)
		return -ENOMEM;
	if (!t || (w->frame_count + 1) * 2 > t->mask + 1) {
		uint32_t cap = t ? (t->mask + 1) * 2 : 1024;
		mp_frame_table_t *bigger = mp_arena_alloc(&w->arena, sizeof(*bigger) + (size_t)cap * sizeof(mp_frame_slot_t));
		if (!bigger)
			return -ENOMEM;
		bigger->mask = cap - 1;
		if (t)
			for (i = 0; i <= t->mask; i++) {
				uint32_t old = atomic_load_explicit(&t->slots[i].id, memory_order_relaxed);
				if (old)
					table_put(bigger, &t->slots[i], old);
			}
		atomic_store_explicit(&w->frames, bigger, memory_order_release);
		t = bigger;
	}
	/* FRAME section: id, function, file, line, kind. */
	p = sec;
	*p++ = MP_SEC_FRAME;
	p = mp_varint_put(p, w->frame_count + 1);
	p = mp_varint_put(p, f->function);
	p = mp_varint_put(p, f->file);
	p = mp_varint_put(p, f->line);
	p = mp_varint_put(p, (uint64_t)f->kind);
	if (mp_mbuf_reserve(&w->defs, (size_t)(p - sec)))
		return -ENOMEM;
	mp_mbuf_append(&w->defs, sec, (size_t)(p - sec));
	*id = ++w->frame_count;
	table_put(t, f, *id);
	return 0;
}

uint64_t mp_writer_frame(mp_writer_t *w, uint32_t function, uint32_t file, uint32_t line, int kind)
{
	mp_frame_slot_t f;
	uint32_t id;
	int rc;

	if (!w || kind < 0 || kind > MP_FRAME_KIND_MAX)
		return 0;
	f.function = function;
	f.file = file;
	f.line = line;
	f.kind = kind;
	f.hash = frame_hash(function, file, line, kind);
	if ((id = frame_lookup(w, function, file, line, kind, f.hash)))
		return MP_STACK_FRAME_TAG | id;
	if (mp__defs_lock(w))
		return 0;
	rc = insert_locked(w, &f, &id);
	pthread_mutex_unlock(&w->defs_mu);
	return rc ? 0 : MP_STACK_FRAME_TAG | id;
}
