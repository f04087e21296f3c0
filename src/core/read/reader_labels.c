/* reader_labels.c - the op of an allocation without one, from its stack,
 * for a stack that holds no Python frame of the user's (or a package's):
 * what the report's rule charges it to (a function of a C program, an
 * extension's, libc's), named by a labeler the caller installs
 * (mp_capture_set_stack_labeler). The reader cannot name native frames
 * itself -- symbols are the report's (libdw) -- but it is the reader that
 * hands the solver each allocation's op, so the breakdown, the leaks and
 * the charts' labels read "alloc_a" where they read "-".
 *
 * The labeler is asked once per stack, at its first allocation (the
 * answer is kept per stack id, so a rewind asks nothing again); labels are
 * interned, so the stacks charged to one function share one op id and
 * make one row. Ids: MP_STACK_LABEL_BASE | label index + 1.
 */
#include "reader_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mp_capture_set_stack_labeler(mp_capture_t *cap, mp_stack_labeler_t fn, void *ctx, void (*free_ctx)(void *))
{
	if (!cap) {
		if (free_ctx)
			free_ctx(ctx);
		return;
	}
	if (cap->labeler_free)
		cap->labeler_free(cap->labeler_ctx);
	cap->labeler = fn;
	cap->labeler_ctx = ctx;
	cap->labeler_free = free_ctx;
}

static uint64_t label_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* Double the interning table (64 slots the first time); 0 or -ENOMEM. */
static int slots_grow(mp_capture_t *cap)
{
	uint32_t cap_n = cap->label_mask ? (cap->label_mask + 1) * 2 : 64, i;
	uint32_t *s = calloc(cap_n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < cap->nlabels; i++) {
		uint32_t k = (uint32_t)label_hash(cap->labels[i]) & (cap_n - 1);
		while (s[k])
			k = (k + 1) & (cap_n - 1);
		s[k] = i + 1;
	}
	free(cap->label_slots);
	cap->label_slots = s;
	cap->label_mask = cap_n - 1;
	return 0;
}

/* The op id of label text (interned); 0 when out of memory. */
static uint32_t intern(mp_capture_t *cap, const char *text)
{
	uint32_t k;
	char *copy;

	if ((cap->nlabels + 1) * 2 > cap->label_mask + 1 && slots_grow(cap))
		return 0;
	for (k = (uint32_t)label_hash(text) & cap->label_mask; cap->label_slots[k];
	     k = (k + 1) & cap->label_mask)
		if (!strcmp(cap->labels[cap->label_slots[k] - 1], text))
			return MP_STACK_LABEL_BASE | cap->label_slots[k];
	if (cap->nlabels >= cap->cap_labels) {
		uint32_t n = cap->cap_labels ? cap->cap_labels * 2 : 64;
		char **l = realloc(cap->labels, n * sizeof(*l));
		if (!l)
			return 0;
		cap->labels = l;
		cap->cap_labels = n;
	}
	if (!(copy = strdup(text)))
		return 0;
	cap->labels[cap->nlabels++] = copy;
	cap->label_slots[k] = cap->nlabels;
	return MP_STACK_LABEL_BASE | cap->nlabels;
}

uint32_t mp__stack_label_op(mp_capture_t *cap, uint32_t stack)
{
	const char *text;

	if (!cap->labeler || cap->nlabels >= MP_STACK_LABEL_BASE - 1)
		return 0;
	text = cap->labeler(cap->labeler_ctx, cap, stack);
	return text && text[0] ? intern(cap, text) : 0;
}

const char *mp__stack_label(const mp_capture_t *cap, uint32_t id)
{
	uint32_t i = id & ~MP_STACK_LABEL_BASE;

	return i && i <= cap->nlabels ? cap->labels[i - 1] : "";
}

void mp__labels_release(mp_capture_t *cap)
{
	for (uint32_t i = 0; i < cap->nlabels; i++)
		free(cap->labels[i]);
	free(cap->labels);
	free(cap->label_slots);
	if (cap->labeler_free)
		cap->labeler_free(cap->labeler_ctx);
}
