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

/* The op id of label text (interned); 0 when out of memory. */
static uint32_t intern(mp_capture_t *cap, const char *text)
{
	uint64_t k = label_hash(text); /* hashes that collide take the next key */
	uint32_t i;
	char *copy;

	for (; mp_i64map_get(&cap->label_index, k, &i); k++)
		if (!strcmp(cap->labels[i], text))
			return MP_STACK_LABEL_BASE | (i + 1);
	if (MP_VEC_RESERVE(cap->labels, cap->cap_labels, (size_t)cap->nlabels + 1) < 0)
		return 0;
	if (!(copy = strdup(text)))
		return 0;
	if (mp_i64map_put(&cap->label_index, k, cap->nlabels) < 0) {
		free(copy);
		return 0;
	}
	cap->labels[cap->nlabels++] = copy;
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
	mp_i64map_free(&cap->label_index);
	if (cap->labeler_free)
		cap->labeler_free(cap->labeler_ctx);
}
