/* reader_sections.c - a block's sections, checked then applied: strings,
 * memory ids, thread chunks (queued for merge.c), stacks, modules and
 * interpreter frames (reader_stacks.c), horizons. A section that does not parse is corruption
 * of its block (see reader.c for the failure policy).
 */
#include <memprof/format.h>
#include <memprof/format/columns.h>
#include <memprof/format/varint.h>

#include "reader_internal.h"
#include "checkpoint_section.h"
#include "summary_section.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(((mp_chunk_t *)0)->col) == MP_PARTS * sizeof(const uint8_t *), "a cursor per chunk part");

/* "block N at offset X: what" -- the error every corrupted block gets. */
static int block_error(mp_capture_t *cap, mp_diag_t *diag, int code, uint64_t off, const char *what)
{
	return mp__block_diag(diag, code, cap->block_index, off, what);
}

static int corrupt(mp_capture_t *cap, mp_diag_t *diag, uint64_t off, const char *what)
{
	return block_error(cap, diag, MP_ECORRUPT, off, what);
}

/* A tag this reader does not know. In a file of a later version than this
 * reader's, it is a section that version added (a minor version adds
 * sections, and a section's length is not self-describing): say so, rather
 * than call the file corrupt. */
static int unknown_section(mp_capture_t *cap, mp_diag_t *diag, uint64_t off, unsigned tag)
{
	char what[160];

	if (!mp_format_at_least(MP_FORMAT_VERSION_MAJOR, MP_FORMAT_VERSION_MINOR, cap->hdr.version_major,
				cap->hdr.version_minor)) {
		snprintf(what, sizeof(what),
			 "section tag %u is newer than this memprof (the capture is format %u.%u, this memprof "
			 "reads 1.0 to %u.%u)",
			 tag, cap->hdr.version_major, cap->hdr.version_minor, MP_FORMAT_VERSION_MAJOR,
			 MP_FORMAT_VERSION_MINOR);
		return block_error(cap, diag, MP_EVERSION, off, what);
	}
	snprintf(what, sizeof(what), "unknown section (tag %u)", tag);
	return corrupt(cap, diag, off, what);
}

/* --------------------------------------------------------------- tables */

static int add_string(mp_capture_t *cap, uint64_t id, const uint8_t *s, uint64_t len)
{
	char *copy;

	if (id <= cap->nstrings)
		return 0; /* known already (a rewind re-reads definitions) */
	if (id != (uint64_t)cap->nstrings + 1)
		return -1;
	if (MP_VEC_RESERVE(cap->strings, cap->cap_strings, (size_t)cap->nstrings + 1) < 0)
		return -ENOMEM;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	cap->strings[cap->nstrings++] = copy;
	return 0;
}

static int push_synth(mp_capture_t *cap, const mp_event_t *ev)
{
	if (MP_VEC_RESERVE(cap->synth, cap->cap_synth, (size_t)cap->nsynth + 1) < 0)
		return -ENOMEM;
	cap->synth[cap->nsynth++] = *ev;
	return 0;
}

static int add_memory(mp_capture_t *cap, uint64_t id, uint64_t name, uint64_t kind, uint64_t capacity)
{
	mp_event_t ev;

	if (name == 0 || name > cap->nstrings || kind > MP_MEMORY_KIND_MAX)
		return -1;
	if (id > cap->nmemories)
		return -1;
	if (id == cap->nmemories) {
		if (MP_VEC_RESERVE(cap->memories, cap->cap_memories, (size_t)cap->nmemories + 1) < 0)
			return -ENOMEM;
		memset(&cap->memories[cap->nmemories], 0, sizeof(cap->memories[0])); /* in_use_name: NULL, memprof's words */
		cap->memories[cap->nmemories].name = cap->strings[name - 1];
		cap->memories[cap->nmemories].kind = (int)kind;
		cap->memories[cap->nmemories].capacity_bytes = capacity;
		cap->nmemories++;
	} else {
		return 0; /* declared again (a kept run's segment re-defines every id): nothing new */
	}
	memset(&ev, 0, sizeof(ev));
	ev.kind = MP_EV_MEMORY;
	ev.memory = (uint32_t)id;
	ev.requested_bytes = capacity;
	return push_synth(cap, &ev);
}

/* ------------------------------------------------------------- sections */

/* thread, the delta state (71 varints, MP_ST_* order), length, the
 * column (1.x: 5) or part (2.0: 11) lengths, then those */
enum { NST = 7 + MP_REUSE_SLOTS, LEN = 1 + NST, COLS = LEN + 1, NV = COLS + MP_PARTS };

/* Checking the block: check the chunk's parts now and keep a copy for the
 * apply pass (records are decoded from the parts in place; 1.x columns
 * are rewritten as 2.0 parts here). */
static int chunk_keep(mp_capture_t *cap, const uint8_t *p, const uint64_t *st, int v1, uint64_t boff, mp_diag_t *diag)
{
	uint64_t off = 0, lens[MP_PARTS];
	mp_chunk_t *c = mp__chunk_new(&cap->merge, st[LEN]);
	int i, rc;

	if (!c)
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	rc = v1 ? mp__chunk_upgrade(p, st + COLS, st[LEN], c->data, lens)
		: mp__chunk_check(p, st + COLS, st[LEN]);
	if (rc) {
		mp__chunk_release(&cap->merge, c);
		return rc == -2 ? mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory")
				: corrupt(cap, diag, boff, "chunk columns are inconsistent");
	}
	if (!v1) {
		memcpy(c->data, p, st[LEN]);
		memcpy(lens, st + COLS, sizeof(lens));
	}
	for (i = 0; i < MP_PARTS; i++) {
		c->col[i] = c->data + off;
		off += lens[i];
		c->cend[i] = c->data + off;
	}
	if (MP_VEC_RESERVE(cap->pend, cap->cap_pend, cap->npend + 1) < 0) {
		mp__chunk_release(&cap->merge, c);
		return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
	}
	cap->pend[cap->npend++] = c;
	return 0;
}

/* Applying the block: the chunk kept by the check, with its header, to
 * its thread's merge queue. */
static int chunk_apply(mp_capture_t *cap, const uint64_t *st, uint64_t boff, mp_diag_t *diag)
{
	mp_chunk_t *c = cap->pend[cap->pend_pos];

	cap->pend[cap->pend_pos++] = NULL;
	c->block_index = cap->block_index;
	c->block_offset = boff;
	c->len = st[LEN];
	c->time = st[1];
	c->addr = st[2];
	c->memory = (uint32_t)st[3];
	c->op = (uint32_t)st[4];
	c->region = (uint32_t)st[5];
	c->dtype = (uint32_t)st[6];
	c->shape = (uint32_t)st[7];
	c->stack = 0;
	memcpy(c->reuse, st + 8, sizeof(c->reuse));
	return mp__merge_add_chunk(cap, (uint32_t)st[0], c, diag);
}

/* A chunk section (tag MP_SEC_CHUNK or MP_SEC_CHUNK2): its header, then
 * kept (checking pass) or applied. */
static int chunk_section(mp_capture_t *cap, uint8_t tag, const uint8_t **pp, const uint8_t *end, uint64_t boff,
			 int apply, mp_diag_t *diag)
{
	const uint8_t *p = *pp;
	int v1 = tag == MP_SEC_CHUNK, nv = v1 ? COLS + MP_COLS1 : NV;
	uint64_t st[NV];
	int i, rc;

	if (v1 != (cap->hdr.version_major == 1))
		return corrupt(cap, diag, boff,
			       v1 ? "a 1.x chunk section in a 2.x capture" : "a 2.x chunk section in a 1.x capture");
	for (i = 0; i < nv; i++)
		if (mp_varint_get(&p, end, &st[i]))
			return corrupt(cap, diag, boff, "bad chunk header");
	if (st[LEN] > (uint64_t)(end - p) || st[0] >= (1u << 24) || st[5] > MP_REGION_TYPE_MAX ||
	    st[3] > UINT32_MAX || st[4] > UINT32_MAX || st[6] > UINT32_MAX || st[7] > UINT32_MAX)
		return corrupt(cap, diag, boff, "chunk header out of range");
	if (cap->block_index < cap->seek_block) { /* before a seek: its events are in the checkpoint */
		*pp = p + st[LEN];
		return 0;
	}
	if ((rc = apply ? chunk_apply(cap, st, boff, diag) : chunk_keep(cap, p, st, v1, boff, diag)))
		return rc;
	*pp = p + st[LEN];
	return 0;
}

/* Two passes over a block's sections: the first only checks that they
 * parse, so that a corrupted block contributes nothing; the second applies
 * them. */
int mp__capture_sections(mp_capture_t *cap, const uint8_t *raw, size_t len, uint64_t boff, int apply,
			  mp_diag_t *diag)
{
	const uint8_t *p = raw, *end = raw + len, *summary = NULL;

	while (p < end) {
		uint8_t tag = *p++;
		uint64_t v[9];
		int i, rc = 0;

		switch (tag) {
		case MP_SEC_STRING:
			if (mp_varint_get(&p, end, &v[0]) || mp_varint_get(&p, end, &v[1]) ||
			    v[1] > (uint64_t)(end - p) || v[0] == 0 || v[0] > UINT32_MAX)
				return corrupt(cap, diag, boff, "bad string definition");
			if (apply && (rc = add_string(cap, v[0], p, v[1])))
				return rc == -1 ? corrupt(cap, diag, boff, "string id out of sequence")
						: mp_diag_set(diag, rc, -1, -1, "out of memory");
			p += v[1];
			break;
		case MP_SEC_MEMORY:
			for (i = 0; i < 4; i++)
				if (mp_varint_get(&p, end, &v[i]))
					return corrupt(cap, diag, boff, "bad memory definition");
			if (apply && (rc = add_memory(cap, v[0], v[1], v[2], v[3])))
				return rc == -1 ? corrupt(cap, diag, boff, "memory id out of sequence or unnamed")
						: mp_diag_set(diag, rc, -1, -1, "out of memory");
			break;
		case MP_SEC_THREAD:
			if (mp_varint_get(&p, end, &v[0]) || mp_varint_get(&p, end, &v[1]) || v[0] >= (1u << 24))
				return corrupt(cap, diag, boff, "bad thread definition");
			if (apply) {
				if ((rc = mp__merge_ensure_thread(&cap->merge, (uint32_t)v[0])))
					return rc == MP_ELIMIT ? corrupt(cap, diag, boff, "thread index out of sequence")
							       : mp_diag_set(diag, rc, -1, -1, "out of memory");
				cap->merge.threads[v[0]].tid = v[1];
				cap->merge.announced++;
			}
			break;
		case MP_SEC_DROPPED:
			for (i = 0; i < 3; i++)
				if (mp_varint_get(&p, end, &v[i]))
					return corrupt(cap, diag, boff, "bad dropped-events count");
			if (apply) {
				mp_event_t ev;
				memset(&ev, 0, sizeof(ev));
				ev.kind = MP_EV_DROPPED;
				ev.thread = (uint32_t)v[0];
				ev.memory = v[1] < cap->nmemories ? (uint32_t)v[1] : 0;
				ev.requested_bytes = v[2];
				if (push_synth(cap, &ev))
					return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
			}
			break;
		case MP_SEC_STACK:
			if ((rc = mp__read_stack_section(cap, &p, end, apply)))
				return rc == -1 ? corrupt(cap, diag, boff, "bad call-stack definition")
						: mp_diag_set(diag, rc, -1, -1, "out of memory");
			break;
		case MP_SEC_MODULE:
			if ((rc = mp__read_module_section(cap, &p, end, apply)))
				return rc == -1 ? corrupt(cap, diag, boff, "bad loaded-object (module) definition")
						: mp_diag_set(diag, rc, -1, -1, "out of memory");
			break;
		case MP_SEC_FRAME: {
			const char *why = NULL;
			if ((rc = mp__read_frame_section(cap, &p, end, apply, &why)))
				return rc == -1 ? corrupt(cap, diag, boff, why) : mp_diag_set(diag, rc, -1, -1, "out of memory");
			break;
		}
		case MP_SEC_SUMMARY:
			/* (2.1) the writer's own figures (capsummary.c reads them):
			 * checked, not needed for the events */
			summary = p;
			if ((rc = mp__summary_section_parse(&p, end, NULL)))
				return rc == -1 ? corrupt(cap, diag, boff, "bad summary section")
						: mp_diag_set(diag, rc, -1, -1, "out of memory");
			break;
		case MP_SEC_CHECKPOINT:
			/* (2.4) the live blocks at the horizon: checked against
			 * the summary before it, handed to who asked */
			if ((rc = mp__checkpoint_section(cap, &p, end, raw, summary, boff, apply, diag)))
				return rc;
			break;
		case MP_SEC_ROUND:
			/* (2.5) a round's timeline figures (memprof/rounds.h reads
			 * them): not needed for the events */
			if (mp_varint_get(&p, end, &v[0]) || v[0] > (uint64_t)(end - p))
				return corrupt(cap, diag, boff, "bad round section");
			p += v[0];
			break;
		case MP_SEC_HORIZON:
			if (mp_varint_get(&p, end, &v[0]))
				return corrupt(cap, diag, boff, "bad horizon");
			if (apply && v[0] > cap->horizon)
				cap->horizon = v[0];
			break;
		case MP_SEC_CHUNK:
		case MP_SEC_CHUNK2:
			if ((rc = chunk_section(cap, tag, &p, end, boff, apply, diag)))
				return rc;
			break;
		default:
			return unknown_section(cap, diag, boff, tag);
		}
	}
	return 0;
}
