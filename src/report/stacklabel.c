/* stacklabel.c - the breakdown's label of an allocation without an op,
 * from its call stack: the frame `report --by-function` charges the stack
 * to (userframe.c), named as that table names it ("alloc_a",
 * "libfoo.so+0x1234"). Installed on a capture as its stack labeler
 * (mp_capture_set_stack_labeler): the reader asks once per stack, while
 * the solver reads, and hands the label on as the allocation's op. Stacks
 * with a Python frame of the user's never get here (the reader names
 * those itself, "main (train.py:12)").
 *
 * The symbolizer describes the modules the capture had described when it
 * was made; a stack read after a dlopen may hold a later one, so it is
 * made again when the capture's module count has grown.
 */
#include <memprof/functions.h>
#include <memprof/reader.h>

#include "stackframes.h"

#include <stdlib.h>
#include <string.h>

#define MP_STACK_LABEL_FRAMES 256 /* a stack's most frames (docs/format.md, STACK) */

typedef struct labeler {
	mp_symbolizer_t *sym;
	size_t nmodules;       /* the capture's module count when sym was made */
	int all_frames;
	const char *user_code; /* borrowed: the command line's */
	mp_symbol_t syms[MP_STACK_LABEL_FRAMES];
	char name[512];
} labeler_t;

static void labeler_free(void *ctx)
{
	labeler_t *l = ctx;

	if (l)
		mp_symbolizer_free(l->sym);
	free(l);
}

static const char *label_stack(void *ctx, const mp_capture_t *cap, uint32_t stack)
{
	labeler_t *l = ctx;
	const uint64_t *pcs;
	uint32_t n, i;

	if (mp_capture_stack(cap, stack, &pcs, &n) || n == 0)
		return NULL;
	if (n > MP_STACK_LABEL_FRAMES)
		n = MP_STACK_LABEL_FRAMES;
	if (!l->sym || mp_capture_module_count(cap) != l->nmodules) {
		mp_symbolizer_free(l->sym);
		l->nmodules = mp_capture_module_count(cap);
		if (!(l->sym = mp_symbolizer_new(cap)))
			return NULL;
	}
	i = rp_user_frame(cap, l->sym, pcs, n, l->all_frames, l->user_code, l->syms);
	if (i >= n || (pcs[i] & MP_STACK_FRAME_TAG))
		return NULL; /* an interpreter's frame: the reader's to name, or none */
	rp_frame_name(&l->syms[i], pcs[i], l->name, sizeof(l->name));
	return l->name;
}

int mp_functions_label_stacks(mp_capture_t *cap, int all_frames, const char *user_code)
{
	labeler_t *l;

	if (!cap)
		return 0;
	if (!(l = calloc(1, sizeof(*l))))
		return MP_ENOMEM;
	l->all_frames = all_frames;
	l->user_code = user_code;
	mp_capture_set_stack_labeler(cap, label_stack, l, labeler_free);
	return 0;
}
