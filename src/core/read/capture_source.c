/* capture_source.c - a .memprof capture seen as an mp_source_t. */
#include "reader_internal.h"

#include <stddef.h>


#define CAP(p) ((mp_capture_t *)((char *)(p) - offsetof(mp_capture_t, src)))
#define CCAP(p) ((const mp_capture_t *)((const char *)(p) - offsetof(mp_capture_t, src)))

static int src_next(mp_source_t *s, mp_event_t *ev, mp_diag_t *diag)
{
	mp_capture_t *cap = CAP(s);
	size_t n;
	int rc;

	if (!cap->seeked && !cap->stop_set)
		return mp__capture_next(cap, ev, diag);
	do { /* a seek: what is earlier than its checkpoint, or past its stop, goes */
		if (cap->stopped)
			return 0;
		if ((rc = mp__capture_next(cap, ev, diag)) <= 0)
			return rc;
		n = 1;
		mp__seek_filter(cap, ev, &n);
	} while (!n && !cap->stopped);
	if (!n)
		return 0;
	return 1;
}

static int src_next_batch(mp_source_t *s, mp_event_t *ev, size_t max, size_t *n, mp_diag_t *diag)
{
	mp_capture_t *cap = CAP(s);
	int rc;

	if (!cap->seeked && !cap->stop_set)
		return mp__capture_next_batch(cap, ev, max, n, diag);
	/* a batch the filter emptied is read again; one of max 0 is full
	 * as it is (it would come back empty for ever) */
	do {
		if (cap->stopped) {
			*n = 0;
			return 0;
		}
		rc = mp__capture_next_batch(cap, ev, max, n, diag);
		mp__seek_filter(cap, ev, n);
	} while (!*n && rc > 0 && max);
	return cap->stopped && !*n ? 0 : rc;
}

static int src_help(mp_source_t *s)
{
	return mp__capture_help(CAP(s));
}

static int src_rewind(mp_source_t *s, mp_diag_t *diag)
{
	return mp__capture_rewind(CAP(s), diag);
}

static const char *src_string(const mp_source_t *s, uint32_t id)
{
	const mp_capture_t *cap = CCAP(s);

	if (id & MP_FRAME_OP_BASE)
		return mp__frame_op_label(cap, id); /* mp_capture_set_frame_ops */
	if (id & MP_STACK_LABEL_BASE)
		return mp__stack_label(cap, id); /* mp_capture_set_stack_labeler */
	return id && id <= cap->nstrings ? cap->strings[id - 1] : "";
}

static const mp_memory_info_t *src_memory(const mp_source_t *s, uint32_t id)
{
	const mp_capture_t *cap = CCAP(s);

	return id < cap->nmemories ? &cap->memories[id] : NULL;
}

static uint32_t src_memory_count(const mp_source_t *s)
{
	return CCAP(s)->nmemories;
}

static mp_end_status_t src_end_status(const mp_source_t *s)
{
	return CCAP(s)->stopped ? CCAP(s)->stop_end : CCAP(s)->end;
}

static void src_close_owned(mp_source_t *s)
{
	mp_capture_close(CAP(s));
}

static void src_close_view(mp_source_t *s)
{
	(void)s; /* the capture owns itself */
}

static const mp_source_ops_t owned_ops = {
	src_next, src_rewind, src_string, src_memory, src_memory_count, src_end_status, src_close_owned, src_next_batch, src_help, NULL, NULL, NULL, NULL, NULL,
};

static const mp_source_ops_t view_ops = {
	src_next, src_rewind, src_string, src_memory, src_memory_count, src_end_status, src_close_view, src_next_batch, src_help, NULL, NULL, NULL, NULL, NULL,
};

mp_source_t *mp_capture_source(mp_capture_t *cap)
{
	cap->src.ops = &view_ops;
	cap->src.path = cap->path;
	return &cap->src;
}

int mp_capture_open_source(mp_source_t **out, const char *path, mp_diag_t *diag)
{
	mp_capture_t *cap;
	int rc = mp_capture_open(&cap, path, diag);

	*out = NULL;
	if (rc)
		return rc;
	cap->src.ops = &owned_ops;
	cap->src.path = cap->path;
	*out = &cap->src;
	return 0;
}

/* The capture behind a source opened with mp_capture_open_source() or
 * mp_capture_source(), for header/trailer queries; NULL for other sources. */
mp_capture_t *mp_capture_from_source(mp_source_t *src)
{
	if (!src || (src->ops != &owned_ops && src->ops != &view_ops))
		return NULL;
	return CAP(src);
}

uint32_t mp_capture_stack_op(mp_capture_t *cap, uint32_t stack)
{
	return cap && cap->frame_ops && stack ? mp__stack_op(cap, stack) : 0;
}

mp_capture_t *mp_capture_stacks_of(mp_source_t *src)
{
	mp_capture_t *cap = mp_capture_from_source(src);

	return cap ? cap : src && src->ops->capture ? src->ops->capture(src) : NULL;
}
