/* replay_tags.h - the tags (op, dtype, shape, call stack, region type)
 * of the blocks a test's replay keeps, interned: test_checkpoint.c
 * compares them with the checkpoints' (format 2.5). */
#ifndef MP_TEST_REPLAY_TAGS_H
#define MP_TEST_REPLAY_TAGS_H

#include <memprof/event.h>

#include <stdint.h>
#include <string.h>

/* (2.5) the tags the replay's blocks carry, interned: a block's live-map
 * group is its index (a hash of 2^16 slots: past that, tags are not
 * compared) */
typedef struct {
	uint32_t op, dtype, shape, stack, region;
} rtag_t;
#define RTAGS (1u << 16)
static rtag_t rtag[RTAGS];
static uint32_t rtag_slot[2 * RTAGS], nrtag;
static int rtag_full;

static uint32_t rtag_of(const mp_event_t *ev)
{
	rtag_t x = {ev->op, ev->dtype, ev->shape, ev->stack, ev->region};
	uint32_t h = (uint32_t)(((uint64_t)x.op * 0x9E3779B9u ^ x.dtype * 0x85EBCA6Bu ^ x.shape * 0xC2B2AE35u ^
				 x.stack * 0x27D4EB2Fu ^ x.region) * 0x9E3779B97F4A7C15ull >> 47);

	for (;; h = (h + 1) & (2 * RTAGS - 1)) {
		uint32_t i = rtag_slot[h];
		if (!i)
			break;
		if (!memcmp(&rtag[i - 1], &x, sizeof(x)))
			return i - 1;
	}
	if (nrtag == RTAGS) {
		rtag_full = 1;
		return 0;
	}
	rtag[nrtag] = x;
	rtag_slot[h] = ++nrtag;
	return nrtag - 1;
}

#endif
