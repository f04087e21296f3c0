/* decode.c - a thread's records decoded lazily from its queued chunks'
 * parts (memprof/format/columns.h, docs/format.md "Columns"): one at a time
 * (mp__decode_next) or in a tight loop into a batch (mp__decode_many). */
#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/format/varint.h>

#include "reader_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Append a to a history (allocated or freed addresses of the chunk). The
 * first allocation takes room for half the chunk's records (its tags are
 * the first part: their count is known), so that a chunk of allocations
 * and frees in about equal numbers grows each history at most once. */
static __attribute__((noinline)) int grow_push(const mp_chunk_t *c, uint64_t **hist, size_t *n, size_t *cap,
					       uint64_t a)
{
	size_t need = *cap ? *n + 1 : (size_t)(c->cend[0] - c->data) / 2 + 16;

	if (MP_VEC_RESERVE(*hist, *cap, need) < 0)
		return -ENOMEM;
	(*hist)[(*n)++] = a;
	return 0;
}

static inline int hist_push(mp_chunk_t *c, uint64_t a)
{
	if (__builtin_expect(c->nhist < c->cap_hist, 1)) {
		c->hist[c->nhist++] = a;
		return 0;
	}
	return grow_push(c, &c->hist, &c->nhist, &c->cap_hist, a);
}

static inline int fhist_push(mp_chunk_t *c, uint64_t a)
{
	if (__builtin_expect(c->nfhist < c->cap_fhist, 1)) {
		c->fhist[c->nfhist++] = a;
		return 0;
	}
	return grow_push(c, &c->fhist, &c->nfhist, &c->cap_fhist, a);
}

static int bad_record(mp_chunk_t *c, mp_diag_t *diag, const char *what)
{
	/* the tag column starts the chunk: its cursor counts records (+1) */
	size_t rec = (size_t)(c->col[MP_COL_TAG] - c->data);

	return mp_diag_set(diag, MP_ECORRUPT, (int64_t)c->block_offset, (int64_t)c->block_index,
			   "block %llu at offset %llu: corrupted event record (%s) in record %zu of a thread chunk",
			   (unsigned long long)c->block_index, (unsigned long long)c->block_offset, what,
			   rec ? rec - 1 : 0);
}

/* The next varint of column k: its head, and when that says so the rest
 * from the column's tails. Parts were checked to hold exactly the varints
 * their records need (mp__chunk_check), but a varint may still be
 * overlong: the bound checks stay. */
static inline __attribute__((always_inline)) int get(mp_chunk_t *c, int k, uint64_t *v)
{
	const uint8_t *q = c->col[MP_HEAD(k)];

	if (__builtin_expect(q < c->cend[MP_HEAD(k)] && *q < 0x80, 1)) { /* one byte */
		*v = *q;
		c->col[MP_HEAD(k)] = q + 1;
		return 0;
	}
	return mp_varint_get2(&c->col[MP_HEAD(k)], c->cend[MP_HEAD(k)], &c->col[MP_TAIL(k)], c->cend[MP_TAIL(k)],
			      v);
}

enum { CT = MP_COL_TIME, CA = MP_COL_ADDR, CI = MP_COL_IDX, CS = MP_COL_SIZE, CM = MP_COL_MISC };

/* Decode the next event of thread t into *ev (t->pending, or straight into
 * the caller's batch). Returns 1, 0 when its queue is empty, or a negative
 * code. Does not touch t->has_pending. */
int mp__decode_next(mp_capture_t *cap, uint32_t ti, mp_event_t *ev, mp_diag_t *diag)
{
	mp_rthread_t *t = &cap->merge.threads[ti];

	if (t->realloc_half) {
		/* Second half of a realloc: the ALLOC at the new address. */
		t->realloc_half = 0;
		*ev = t->realloc_ev;
		ev->kind = MP_EV_ALLOC;
		ev->address = t->realloc_new;
		ev->requested_bytes = t->realloc_req;
		ev->allocated_bytes = t->realloc_alloc;
		return 1;
	}
	for (;;) {
		mp_chunk_t *c = t->head;
		uint64_t dt, v, a, b;
		uint8_t tag;
		int kind;

		if (!c)
			return 0;
		if (c->col[MP_COL_TAG] >= c->cend[MP_COL_TAG]) {
			/* A STACK record may end a chunk: a flush round fell between
			 * it and its allocation, which opens the thread's next one. */
			if (c->stack) {
				if (c->next)
					c->next->stack = c->stack;
				else
					t->carry_stack = c->stack;
			}
			t->head = c->next;
			if (!t->head)
				t->tail = NULL;
			cap->merge.buffered_bytes -= c->len;
			mp__chunk_release(&cap->merge, c);
			continue;
		}
		tag = *c->col[MP_COL_TAG]++;
		kind = tag & MP_REC_KIND_MASK;
		if (tag & MP_RECF_MEMORY) {
			if (get(c, CM, &v) || v >= cap->nmemories)
				return bad_record(c, diag, "memory id");
			c->memory = (uint32_t)v;
		}
		if (kind == MP_REC_CONTEXT) {
			uint64_t op, region, dtype, shape;
			if (get(c, CM, &op) || get(c, CM, &region) || get(c, CM, &dtype) || get(c, CM, &shape) ||
			    region > MP_REGION_TYPE_MAX || op > UINT32_MAX || dtype > UINT32_MAX || shape > UINT32_MAX)
				return bad_record(c, diag, "context");
			c->op = (uint32_t)op;
			c->region = (uint32_t)region;
			c->dtype = (uint32_t)dtype;
			c->shape = (uint32_t)shape;
			continue;
		}
		if (kind == MP_REC_STACK) {
			if (get(c, CM, &v) || v > cap->nstacks)
				return bad_record(c, diag, "stack id not defined");
			c->stack = (uint32_t)v;
			continue;
		}
		if (get(c, CT, &dt) || dt > UINT64_MAX - c->time)
			return bad_record(c, diag, "time");
		/* Every field but the stats (valid only with MP_EVENT_F_STATS,
		 * which captures never set): a memset here cost a sixth of the
		 * reader's time. */
		ev->address = ev->requested_bytes = ev->allocated_bytes = 0;
		ev->step = -1;
		ev->label = ev->stack = ev->metadata = 0;
		ev->flags = 0;
		ev->time_ns = c->time + dt;
		ev->memory = c->memory;
		ev->thread = ti;
		ev->op = c->op;
		ev->dtype = c->dtype;
		ev->shape = c->shape;
		ev->region = (uint8_t)c->region;
		switch (kind) {
		case MP_REC_ALLOC:
		case MP_REC_ALLOC_REUSED:
		case MP_REC_ALLOC_REFREED:
		case MP_REC_REGION_ADD:
		case MP_REC_FREE:
		case MP_REC_FREE_AGED:
		case MP_REC_REGION_REMOVE:
		case MP_REC_REALLOC: {
			uint64_t req = 0, alloc = 0, extra = 0;
			int64_t d;

			if (c->memory >= cap->nmemories)
				return bad_record(c, diag, "event before any memory id");
			if (kind == MP_REC_ALLOC_REUSED) {
				if (get(c, CI, &v) || v >= MP_REUSE_SLOTS)
					return bad_record(c, diag, "freed-address slot");
				a = c->reuse[v];
			} else if (kind == MP_REC_FREE_AGED) {
				if (get(c, CI, &v) || v == 0 || v > c->nhist)
					return bad_record(c, diag, "allocation age");
				a = c->hist[c->nhist - v];
			} else if (kind == MP_REC_ALLOC_REFREED) {
				if (get(c, CI, &v) || v == 0 || v > c->nfhist)
					return bad_record(c, diag, "freed-address age");
				a = c->fhist[c->nfhist - v];
			} else {
				if (get(c, CA, &v))
					return bad_record(c, diag, "address");
				d = mp_unzigzag(v);
				a = c->addr + (tag & MP_RECF_ALIGN16 ? (uint64_t)d * 16 : (uint64_t)d);
			}
			b = a;
			if (kind == MP_REC_REALLOC) {
				if (get(c, CA, &v))
					return bad_record(c, diag, "new address");
				d = mp_unzigzag(v);
				b = a + (tag & MP_RECF_ALIGN16 ? (uint64_t)d * 16 : (uint64_t)d);
			}
			int is_alloc = kind == MP_REC_ALLOC || kind == MP_REC_ALLOC_REUSED ||
				       kind == MP_REC_ALLOC_REFREED || kind == MP_REC_REALLOC;
			if (is_alloc || kind == MP_REC_REGION_ADD) {
				if (get(c, CS, &req))
					return bad_record(c, diag, "size");
				if (kind != MP_REC_REGION_ADD) {
					if (tag & MP_RECF_EXACT)
						alloc = req;
					else if (tag & MP_RECF_USABLE16)
						alloc = mp_usable16(req);
					else if (get(c, CS, &extra))
						return bad_record(c, diag, "allocated size");
					else
						alloc = req + (uint64_t)mp_unzigzag(extra);
				}
			}
			c->addr = b;
			ev->address = a;
			if (is_alloc) {
				ev->stack = c->stack; /* a STACK record names the next allocation only */
				if (hist_push(c, b))
					return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
			}
			switch (kind) {
			case MP_REC_ALLOC:
			case MP_REC_ALLOC_REUSED:
			case MP_REC_ALLOC_REFREED:
				ev->kind = MP_EV_ALLOC;
				ev->requested_bytes = req;
				ev->allocated_bytes = alloc;
				c->stack = 0;
				break;
			case MP_REC_REGION_ADD:
				ev->kind = MP_EV_REGION_ADD;
				ev->requested_bytes = req;
				break;
			case MP_REC_FREE:
			case MP_REC_FREE_AGED:
				ev->kind = MP_EV_FREE;
				c->reuse[mp_reuse_slot(a)] = a;
				if (fhist_push(c, a))
					return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
				break;
			case MP_REC_REGION_REMOVE:
				ev->kind = MP_EV_REGION_REMOVE;
				break;
			default: /* realloc: a FREE of the old block now, the ALLOC next */
				ev->kind = MP_EV_FREE;
				ev->flags = MP_EVENT_F_REALLOC;
				t->realloc_half = 1;
				t->realloc_new = b;
				t->realloc_req = req;
				t->realloc_alloc = alloc;
				c->stack = 0;
				break;
			}
			break;
		}
		case MP_REC_ALLOC_FAILED:
			if (c->memory >= cap->nmemories)
				return bad_record(c, diag, "event before any memory id");
			if (get(c, CS, &v))
				return bad_record(c, diag, "size");
			ev->kind = MP_EV_ALLOC_FAILED;
			ev->requested_bytes = v;
			ev->stack = c->stack;
			c->stack = 0;
			break;
		case MP_REC_STEP:
			if (get(c, CM, &v))
				return bad_record(c, diag, "step");
			ev->kind = MP_EV_STEP;
			ev->step = mp_unzigzag(v);
			break;
		case MP_REC_MARK:
			if (get(c, CM, &v) || v > UINT32_MAX)
				return bad_record(c, diag, "label");
			ev->kind = MP_EV_MARK;
			ev->label = (uint32_t)v;
			break;
		default:
			return bad_record(c, diag, "unknown record kind");
		}
		c->time = ev->time_ns;
		cap->records++;
		if (ev->flags & MP_EVENT_F_REALLOC) {
			cap->records++;
			t->realloc_ev = *ev; /* the ALLOC half shares its fields */
		}
		return 1;
	}
}

/* Append a to the chunk c's history `field` (hist or fhist) held in the
 * locals buf, cnt, lim: 0, or -ENOMEM. Growing goes through the chunk's
 * fields, and the locals are reloaded from them. */
#define PUSH_LOCAL(buf, cnt, lim, field, a)                                                          \
	(__builtin_expect((cnt) < (lim), 1)                                                           \
		 ? ((buf)[(cnt)++] = (a), 0)                                                          \
		 : (c->n##field = (cnt), grow_push(c, &c->field, &c->n##field, &c->cap_##field, (a))) \
			   ? -ENOMEM                                                                  \
			   : ((buf) = c->field, (cnt) = c->n##field, (lim) = c->cap_##field, 0))

/* The kinds mp__decode_many decodes itself (CONTEXT aside), as bit masks. */
#define FAST_ALLOCS (1u << MP_REC_ALLOC | 1u << MP_REC_ALLOC_REUSED | 1u << MP_REC_ALLOC_REFREED)
#define FAST_FREES (1u << MP_REC_FREE | 1u << MP_REC_FREE_AGED)

/* The records of thread ti's head chunk decoded in a tight loop straight
 * into ev[]: the common kinds (ALLOC, ALLOC_REUSED, ALLOC_REFREED, FREE,
 * FREE_AGED, CONTEXT) with the cursors (a head and a tail cursor per
 * column) and delta state in locals; any other record or a memory id
 * change leaves the loop before it is consumed and goes through
 * mp__decode_next. A record that does not decode is reported here, with
 * mp__decode_next's words. Stops after max events, or with 2 when the event
 * in ev[*got] is not earlier than limit. Same results as calling
 * mp__decode_next() in a loop. */
int mp__decode_many(mp_capture_t *cap, uint32_t ti, mp_event_t *ev, size_t max, uint64_t limit, size_t *got,
		    mp_diag_t *diag)
{
	mp_rthread_t *t = &cap->merge.threads[ti];
	static const char oom[] = "out of memory";
	size_t k = 0;
	int rc;

	while (k < max) {
		mp_chunk_t *c = t->head;
		const uint8_t *tp, *te;
		const uint8_t *th, *the, *tt, *tte, *ah, *ahe, *at, *ate, *ih, *ihe, *it, *ite;
		const uint8_t *sh, *she, *sx, *sxe, *mh, *mhe, *mt, *mte;
		uint64_t time, addr, nrec = 0, *hist, *fhist;
		size_t nh, ch, nfh, cfh;
		mp_event_t tpl; /* memory .. region: what the chunk's context gives every event */
		size_t k0 = k;
		int late = 0;
		const char *bad = NULL;

		if (!t->realloc_half && c && c->col[0] < c->cend[0] && c->memory < cap->nmemories) {
			tp = c->col[0], te = c->cend[0];
#define LOAD(h, he, x, xe, k)                                                                  \
	(h = c->col[MP_HEAD(k)], he = c->cend[MP_HEAD(k)], x = c->col[MP_TAIL(k)], xe = c->cend[MP_TAIL(k)])
			LOAD(th, the, tt, tte, CT);
			LOAD(ah, ahe, at, ate, CA);
			LOAD(ih, ihe, it, ite, CI);
			LOAD(sh, she, sx, sxe, CS);
			LOAD(mh, mhe, mt, mte, CM);
#undef LOAD
			time = c->time, addr = c->addr;
			/* the histories in locals too: the event stores may alias *c */
			hist = c->hist, fhist = c->fhist;
			nh = c->nhist, ch = c->cap_hist, nfh = c->nfhist, cfh = c->cap_fhist;
			memset(&tpl, 0, sizeof(tpl));
			tpl.memory = c->memory, tpl.thread = ti, tpl.op = c->op, tpl.dtype = c->dtype;
			tpl.shape = c->shape, tpl.stack = c->stack, tpl.region = (uint8_t)c->region;
/* one load and a compare for a one-byte varint; the rest from the tails */
#define RD(h, he, x, xe, v) ((h) < (he) && *(h) < 0x80 ? ((v) = *(h)++, 0) : mp_varint_get2(&(h), (he), &(x), (xe), &(v)))
			while (k < max && tp < te) {
				uint8_t tag = *tp;
				int kind = tag & MP_REC_KIND_MASK;
				mp_event_t *e = &ev[k];
				uint64_t dt, v, req, alloc, a;

				if (tag & MP_RECF_MEMORY)
					break;
				if (kind == MP_REC_CONTEXT) {
					uint64_t o, r, dy, sp;
					if (RD(mh, mhe, mt, mte, o) || RD(mh, mhe, mt, mte, r) || RD(mh, mhe, mt, mte, dy) ||
					    RD(mh, mhe, mt, mte, sp) || r > MP_REGION_TYPE_MAX || o > UINT32_MAX ||
					    dy > UINT32_MAX || sp > UINT32_MAX) {
						bad = "context";
						break;
					}
					tpl.op = (uint32_t)o, tpl.region = (uint8_t)r, tpl.dtype = (uint32_t)dy, tpl.shape = (uint32_t)sp;
					tp++;
					continue;
				}
				if (!((FAST_ALLOCS | FAST_FREES) >> kind & 1))
					break;
				if (RD(th, the, tt, tte, dt) || dt > UINT64_MAX - time) {
					bad = "time";
					break;
				}
				if ((1u << MP_REC_ALLOC | 1u << MP_REC_FREE) >> kind & 1) {
					int64_t d;
					if (RD(ah, ahe, at, ate, v)) {
						bad = "address";
						break;
					}
					d = mp_unzigzag(v);
					a = addr + (tag & MP_RECF_ALIGN16 ? (uint64_t)d * 16 : (uint64_t)d);
				} else if (RD(ih, ihe, it, ite, v)) {
					bad = kind == MP_REC_ALLOC_REUSED ? "freed-address slot"
					      : kind == MP_REC_FREE_AGED  ? "allocation age"
									  : "freed-address age";
					break;
				} else if (kind == MP_REC_ALLOC_REUSED) {
					if (v >= MP_REUSE_SLOTS) {
						bad = "freed-address slot";
						break;
					}
					a = c->reuse[v];
				} else if (kind == MP_REC_FREE_AGED) {
					if (v == 0 || v > nh) {
						bad = "allocation age";
						break;
					}
					a = hist[nh - v];
				} else {
					if (v == 0 || v > nfh) {
						bad = "freed-address age";
						break;
					}
					a = fhist[nfh - v];
				}
				e->address = a;
				e->step = -1;
				/* memory, thread, op, dtype, shape, label 0, stack, flags 0,
				 * kind (set below), region: one 32-byte copy, few registers */
				memcpy(&e->memory, &tpl.memory, offsetof(mp_event_t, stats) - offsetof(mp_event_t, memory));
				if (FAST_ALLOCS >> kind & 1) {
					if (RD(sh, she, sx, sxe, req)) {
						bad = "size";
						break;
					}
					if (tag & MP_RECF_EXACT) {
						alloc = req;
					} else if (tag & MP_RECF_USABLE16) {
						alloc = mp_usable16(req);
					} else {
						if (RD(sh, she, sx, sxe, v)) {
							bad = "allocated size";
							break;
						}
						alloc = req + (uint64_t)mp_unzigzag(v);
					}
					if (PUSH_LOCAL(hist, nh, ch, hist, a)) {
						bad = oom;
						break;
					}
					e->kind = MP_EV_ALLOC;
					e->requested_bytes = req;
					e->allocated_bytes = alloc;
					tpl.stack = 0;
				} else {
					e->kind = MP_EV_FREE;
					e->requested_bytes = e->allocated_bytes = 0;
					c->reuse[mp_reuse_slot(a)] = a;
					if (PUSH_LOCAL(fhist, nfh, cfh, fhist, a)) {
						bad = oom;
						break;
					}
				}
				addr = a;
				time += dt;
				e->time_ns = time;
				tp++;
				nrec++;
				if (time >= limit) {
					late = 1;
					break;
				}
				k++;
			}
#undef RD
#undef PUSH_LOCAL
			c->col[0] = tp;
#define STORE(h, x, k) (c->col[MP_HEAD(k)] = h, c->col[MP_TAIL(k)] = x)
			STORE(th, tt, CT);
			STORE(ah, at, CA);
			STORE(ih, it, CI);
			STORE(sh, sx, CS);
			STORE(mh, mt, CM);
#undef STORE
			c->time = time, c->addr = addr;
			c->nhist = nh, c->nfhist = nfh;
			c->op = tpl.op, c->dtype = tpl.dtype, c->shape = tpl.shape, c->region = tpl.region, c->stack = tpl.stack;
			cap->records += nrec;
			if (bad) {
				*got = k;
				if (bad == oom)
					return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
				c->col[0] = tp + 1; /* the record's number, as decode_next has it */
				return bad_record(c, diag, bad);
			}
			if (late) {
				*got = k;
				return 2;
			}
			if (k == max)
				break;
			if (k > k0 || tp >= te)
				continue; /* the next chunk, or more of this one */
		}
		/* Anything else: one record the general way. */
		rc = mp__decode_next(cap, ti, &ev[k], diag);
		if (rc <= 0) {
			*got = k;
			return rc;
		}
		if (ev[k].time_ns >= limit) {
			*got = k;
			return 2;
		}
		k++;
	}
	*got = k;
	return 1;
}

