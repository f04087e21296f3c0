/* fuzz_reader.c - libFuzzer target for the .memprof reader: any bytes must
 * give events or a clean error, never a crash, a leak or undefined
 * behaviour. Reads every event, touching the strings and memory ids a
 * consumer would, then reads them again in batches (the fast path), for
 * half the inputs with blocks fetched by the read-ahead thread, and checks
 * that the same events come back. Then the writer's summary (format 2.1,
 * memprof/capsummary.h) through its own walk of the blocks: where both
 * readers take the whole capture, its final summary counts the trailer's
 * events. Checkpoints (2.4) that the reader passes are copied and their
 * invariants checked: ids and addresses increasing, counts adding up. */
#include <memprof/capsummary.h>
#include <memprof/capture.h>
#include <memprof/checkpoint.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One number per event, for comparing the two read paths. */
static uint64_t ev_hash(const mp_event_t *e)
{
	const uint64_t f[] = {e->time_ns, e->index, e->kind, e->address, e->requested_bytes, e->allocated_bytes,
			      (uint64_t)e->step, e->memory, e->thread, e->op, e->dtype, e->shape, e->label,
			      e->stack, e->flags, e->region};
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		h = (h ^ f[i]) * 0x100000001b3ull;
	return h;
}

#define MAXH 65536

static int walk_checkpoint(void *ctx, const mp_checkpoint_t *ck)
{
	mp_checkpoint_t c;
	size_t i, k, n = 0;

	if (mp_checkpoint_copy(&c, ck))
		return 0;
	for (i = 0; i < c.nmemories; i++) {
		const mp_checkpoint_memory_t *m = &c.memories[i];
		if ((i && m->id <= c.memories[i - 1].id) || !m->nblocks || m->blocks != c.blocks + n)
			__builtin_trap();
		for (k = 1; k < m->nblocks; k++)
			if (m->blocks[k].address <= m->blocks[k - 1].address)
				__builtin_trap();
		n += m->nblocks;
	}
	if (n != c.nblocks)
		__builtin_trap();
	*(size_t *)ctx += n + c.events;
	mp_checkpoint_free(&c);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t hash[MAXH];
	static mp_event_t batch[64];
	mp_capture_t *cap;
	mp_source_t *src;
	mp_diag_t diag, diag1;
	mp_event_t ev;
	size_t sink = 0, n1 = 0, n2 = 0, got, bs;
	int rc, rc1 = 0;

	if (mp_capture_open_memory(&cap, data, size, "fuzz.memprof", &diag))
		return 0;
	src = mp_capture_source(cap);
	mp_capture_on_checkpoint(cap, walk_checkpoint, &sink);
	/* half the inputs: ops from the stacks' Python frames (format 2.2) */
	if (size & 1)
		mp_capture_set_frame_ops(cap, (size & 2) != 0, (size & 4) ? "packages,/home/" : NULL);
	sink += strlen(mp_capture_header(cap)->command_line);
	/* Pass 1: one event at a time. */
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		const mp_memory_info_t *m = mp_source_memory(src, ev.memory);
		sink += strlen(mp_source_string(src, ev.op)) + strlen(mp_source_string(src, ev.shape));
		if (m)
			sink += strlen(m->name);
		if (ev.stack) {
			/* every stack id an event carries is defined */
			const uint64_t *pcs;
			uint32_t n, i;
			if (mp_capture_stack(cap, ev.stack, &pcs, &n))
				__builtin_trap();
			for (i = 0; i < n; i++) {
				const mp_capture_module_t *mod;
				const char *fn, *file;
				uint32_t line;
				int kind;
				if (pcs[i] & MP_STACK_FRAME_TAG) { /* an interpreter frame (2.2) */
					if (mp_capture_frame(cap, pcs[i], &fn, &file, &line, &kind) == 0)
						sink += strlen(fn) + strlen(file) + line + (uint64_t)kind;
					continue;
				}
				mod = mp_capture_module_at(cap, pcs[i]);
				sink += pcs[i] + (mod ? strlen(mod->path) + mod->build_id_len : 0);
			}
		}
		if (n1 < MAXH)
			hash[n1] = ev_hash(&ev);
		n1++;
	}
	rc1 = rc;
	diag1 = diag;
	/* Pass 2, after a rewind (tables kept): in batches (the reader's fast
	 * path), of a size the input picks. The same events must come back;
	 * on a corrupted record the batch path may return one more good event
	 * (the one-at-a-time path drops the event before the bad record). */
	bs = 1 + (size ? data[size - 1] % 64 : 0);
	/* Half the inputs read pass 2 with the read-ahead thread: blocks
	 * fetched ahead must give the same events and the same error. */
	if (size && (data[size - 1] & 64) && mp_capture_set_readahead(cap, MP_READAHEAD_THREAD))
		__builtin_trap();
	if (mp_source_rewind(src, &diag) == 0) {
		do {
			rc = mp_source_next_batch(src, batch, bs, &got, &diag);
			for (size_t i = 0; i < got; i++, n2++)
				if (n2 < n1 && n2 < MAXH && ev_hash(&batch[i]) != hash[n2])
					__builtin_trap();
		} while (rc == 1);
		if (rc1 == 0 && (rc != 0 || n2 != n1))
			__builtin_trap();
		if (rc1 < 0 && (rc >= 0 || n2 < n1 || n2 > n1 + 1))
			__builtin_trap();
		/* the same error, at the same place */
		if (rc1 < 0 && (rc != rc1 || diag.offset != diag1.offset || strcmp(diag.text, diag1.text)))
			__builtin_trap();
	}
	{
		mp_capture_summary_t sum;
		const mp_capture_trailer_t *tr = mp_capture_trailer(cap);
		int src2 = mp_capture_summary_read_memory(data, size, "fuzz.memprof", &sum, &diag);
		for (size_t i = 0; src2 == 0 && i < sum.nmemories; i++)
			sink += strlen(sum.memories[i].name) + sum.memories[i].peak_bytes;
		if (src2 == 0 && rc1 == 0 && tr && sum.available && sum.ended_cleanly &&
		    sum.horizon_ns == UINT64_MAX && sum.events != tr->events)
			__builtin_trap();
		mp_capture_summary_free(&sum);
	}
	mp_capture_close(cap);
	return sink == (size_t)-1;
}
