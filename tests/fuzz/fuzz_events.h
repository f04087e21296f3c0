/* fuzz_events.h - the event streams of the solver's and the charts' fuzz
 * targets: 12 input bytes an event (kind, memory id 0-2, flags, region,
 * address slot, size class, step delta, op/dtype/shape/metadata, allocator
 * stats; a mark's label is its op byte's, and its flags byte's bits 2-3
 * make it a phase's begin or end).
 * Addresses come from a small set so that frees, duplicates and overlaps
 * are common; a few sit near the top of the address space. Times are
 * 0, scale, 2 x scale, ... Caller frees the array. */
#ifndef MEMPROF_FUZZ_EVENTS_H
#define MEMPROF_FUZZ_EVENTS_H

#include <memprof/event.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline mp_event_t *fuzz_events(const uint8_t *data, size_t size, uint64_t time_scale, size_t *count)
{
	size_t n = size / 12;
	mp_event_t *ev = calloc(n ? n : 1, sizeof(*ev));
	int64_t step = 0;

	*count = n;
	if (!ev)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *b = data + 12 * i;
		mp_event_t *e = &ev[i];
		uint64_t size_class = (uint64_t)b[5] | (uint64_t)b[6] << 8;
		e->kind = (uint8_t)(1 + b[0] % 9);
		e->memory = b[1] % 3;
		e->flags = b[2] & 3;
		e->region = b[3] % 7;
		e->address = 0x10000 + 256ull * (b[4] % 64);
		if (b[7] == 0xff)
			e->address = UINT64_MAX - b[4]; /* near the top: overflow checks */
		e->requested_bytes = size_class * (b[8] & 0x10 ? 4096 : 16);
		e->allocated_bytes = b[8] & 1 ? 0 : e->requested_bytes + (b[8] >> 5);
		step += b[9] % 3 == 0;
		e->step = b[9] == 0x7f ? -1 : step;
		e->time_ns = i * time_scale;
		e->op = b[10] % 5;
		e->dtype = b[11] % 4;
		e->shape = (b[11] >> 2) % 4;
		e->metadata = (b[11] >> 4) % 4;
		if (e->kind == MP_EV_MARK) {
			e->label = b[10] % 4;
			/* phases: begins and ends, nested, unmatched, out of order */
			e->flags |= (uint16_t)((b[2] >> 2 & 3) << 2);
		}
		if (e->flags & MP_EVENT_F_STATS) {
			e->stats.stack_bytes = b[10];
			e->stats.heap_bytes = size_class * 8;
			e->stats.free_bytes = b[11] * 100u;
			e->stats.peak_bytes = size_class * 9;
			e->stats.fragmentation = b[8] == 0x42 ? NAN : b[8] / 200.0;
		}
	}
	return ev;
}

#endif
