/* tally_tags.c - the tags allocations carry (format 2.5: op, region type,
 * dtype, shape, call stack), interned for the checkpoints (tally.h): a
 * live block keeps a 32-bit id in its slot, a checkpoint writes the ids of
 * its blocks and the tags they use. A program has few distinct tags but
 * for its stacks; past MAX_TAGS, or without room, the checkpoints lose
 * their tags (tags_lost: a seek replays from the start) and the capture is
 * whole. Mapped pages, no malloc (the flusher runs inside traced
 * programs); the table grows by mapping one twice larger. */
#include "arena.h"
#include "tally.h"

#include <string.h>

#define MAX_TAGS (1u << 22)

static uint32_t hash(const mp_tally_tag_t *x)
{
	uint64_t h = ((uint64_t)x->op << 32 | x->dtype) * 0x9E3779B97F4A7C15ull;

	h ^= ((uint64_t)x->shape << 32 | x->stack) * 0xC2B2AE3D27D4EB4Full;
	h ^= (uint64_t)x->region * 0x165667B19E3779F9ull;
	return (uint32_t)(h >> 32);
}

/* The hash: 2 * captag slots of tag ids (0 empty), linear probing. */
static void index_tag(uint32_t *slot, uint32_t nslot, const mp_tally_tag_t *tags, uint32_t id)
{
	uint32_t i = hash(&tags[id - 1]) & (nslot - 1);

	while (slot[i])
		i = (i + 1) & (nslot - 1);
	slot[i] = id;
}

static int grow(mp_tally_t *t)
{
	uint32_t cap = t->captag ? 2 * t->captag : 1024;
	mp_tally_tag_t *tags = mp_map_pages((size_t)cap * sizeof(*tags));
	uint32_t *slot = mp_map_pages((size_t)cap * 2 * sizeof(*slot));

	if (!tags || !slot) {
		if (tags)
			mp_unmap_pages(tags, (size_t)cap * sizeof(*tags));
		if (slot)
			mp_unmap_pages(slot, (size_t)cap * 2 * sizeof(*slot));
		return -1;
	}
	if (t->tag) {
		memcpy(tags, t->tag, (size_t)t->ntag * sizeof(*tags));
		mp__tally_tags_release_maps(t);
	}
	for (uint32_t id = 1; id <= t->ntag; id++)
		index_tag(slot, cap * 2, tags, id);
	t->tag = tags;
	t->tag_hash = slot;
	t->captag = cap;
	return 0;
}

uint32_t mp__tally_tag(mp_tally_t *t, const mp_tally_tag_t *x)
{
	uint32_t i, id;

	if (!(x->op | x->region | x->dtype | x->shape | x->stack))
		return 0;
	if (t->tags_lost)
		return 0;
	if (t->captag) {
		for (i = hash(x) & (2 * t->captag - 1); (id = t->tag_hash[i]); i = (i + 1) & (2 * t->captag - 1))
			if (!memcmp(&t->tag[id - 1], x, sizeof(*x)))
				return id;
	}
	if (t->ntag >= MAX_TAGS || (t->ntag == t->captag && grow(t))) {
		t->tags_lost = 1;
		return 0;
	}
	t->tag[t->ntag++] = *x;
	index_tag(t->tag_hash, 2 * t->captag, t->tag, t->ntag);
	return t->ntag;
}

void mp__tally_tags_release_maps(mp_tally_t *t)
{
	if (t->tag)
		mp_unmap_pages(t->tag, (size_t)t->captag * sizeof(*t->tag));
	if (t->tag_hash)
		mp_unmap_pages(t->tag_hash, (size_t)t->captag * 2 * sizeof(*t->tag_hash));
	t->tag = NULL;
	t->tag_hash = NULL;
}

void mp__tally_tags_release(mp_tally_t *t)
{
	mp__tally_tags_release_maps(t);
	t->ntag = t->captag = 0;
}
