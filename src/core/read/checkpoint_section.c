/* checkpoint_section.c - the CHECKPOINT section (format 2.4) parsed and
 * checked by the reader (reader_sections.c), and handed to the caller's
 * callback (memprof/checkpoint.h). A checkpoint is checked against the
 * SUMMARY before it in its block: per memory id the same live blocks,
 * bytes and requested bytes, the same horizon and events. */
#include <memprof/capsummary.h>
#include <memprof/checkpoint.h>
#include <memprof/error.h>
#include <memprof/format.h>
#include <memprof/format/varint.h>

#include "blockio.h"
#include "checkpoint_section.h"
#include "reader_internal.h"
#include "summary_section.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mp_capture_on_checkpoint(mp_capture_t *cap, mp_checkpoint_fn fn, void *ctx)
{
	cap->ckpt_fn = fn;
	cap->ckpt_ctx = ctx;
}

uint64_t mp_capture_checkpoints_seen(const mp_capture_t *cap)
{
	return cap->ncheckpoints;
}

uint64_t mp_capture_checkpoints_bad(const mp_capture_t *cap, mp_diag_t *first)
{
	if (first && cap->ckpt_bad)
		*first = cap->ckpt_bad_diag;
	return cap->ckpt_bad;
}

void mp_checkpoint_free(mp_checkpoint_t *ck)
{
	free(ck->memories);
	free(ck->blocks);
	free(ck->regions);
	free(ck->figures);
	memset(ck, 0, sizeof(*ck));
}

int mp_checkpoint_copy(mp_checkpoint_t *dst, const mp_checkpoint_t *src)
{
	size_t i, at = 0;

	*dst = *src;
	dst->memories = calloc(src->nmemories ? src->nmemories : 1, sizeof(*dst->memories));
	dst->blocks = malloc((src->nblocks ? src->nblocks : 1) * sizeof(*dst->blocks));
	dst->regions = malloc((src->nregions ? src->nregions : 1) * sizeof(*dst->regions));
	dst->figures = malloc((src->nfigures ? src->nfigures : 1) * sizeof(*dst->figures));
	if (!dst->memories || !dst->blocks || !dst->regions || !dst->figures) {
		mp_checkpoint_free(dst);
		return -ENOMEM;
	}
	memcpy(dst->blocks, src->blocks, src->nblocks * sizeof(*dst->blocks));
	memcpy(dst->regions, src->regions, src->nregions * sizeof(*dst->regions));
	memcpy(dst->figures, src->figures, src->nfigures * sizeof(*dst->figures));
	for (i = 0; i < src->nmemories; i++) {
		dst->memories[i] = src->memories[i];
		dst->memories[i].blocks = dst->blocks + at;
		at += src->memories[i].nblocks;
	}
	return 0;
}

typedef struct {
	uint64_t blocks, bytes, req;
} sums_t;

/* (2.5) the blocks' tag ids, then the tags, into ck->blocks[0..n);
 * 0, -ENOMEM, or -1 with *why and *at. */
static int parse_tags(const uint8_t **pp, const uint8_t *bend, mp_checkpoint_t *ck, uint64_t n, const char **why,
		      const uint8_t **at)
{
	const uint8_t *p = *pp;
	uint64_t *id = NULL, t, prev = 0, v[6];
	uint32_t (*tup)[5] = NULL;
	int rc = -1;

	*why = "bad block tag";
	if (n && !(id = malloc(n * sizeof(*id))))
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		*at = p;
		if (mp_varint_get(&p, bend, &id[i]))
			goto out;
	}
	*at = p;
	*why = "bad tag count";
	if (mp_varint_get(&p, bend, &t) || t > (uint64_t)(bend - p) / 6 || t > UINT32_MAX)
		goto out;
	if (!(tup = malloc((t ? t : 1) * sizeof(*tup)))) {
		rc = -ENOMEM;
		goto out;
	}
	{
		uint64_t *ids = malloc((t ? t : 1) * sizeof(*ids));
		if (!ids) {
			rc = -ENOMEM;
			goto out;
		}
		for (uint64_t k = 0; k < t; k++) {
			*at = p;
			*why = "bad tag";
			for (int f = 0; f < 6; f++)
				if (mp_varint_get(&p, bend, &v[f])) {
					free(ids);
					goto out;
				}
			*why = "tag out of range";
			if (v[0] == 0 || prev + v[0] < prev || v[1] > UINT32_MAX || v[2] > MP_REGION_TYPE_MAX ||
			    v[3] > UINT32_MAX || v[4] > UINT32_MAX || v[5] > UINT32_MAX) {
				free(ids);
				goto out;
			}
			ids[k] = prev += v[0];
			tup[k][0] = (uint32_t)v[1], tup[k][1] = (uint32_t)v[2], tup[k][2] = (uint32_t)v[3];
			tup[k][3] = (uint32_t)v[4], tup[k][4] = (uint32_t)v[5];
		}
		/* each block's tag: a binary search of the ids (increasing) */
		*why = "a block's tag is not defined";
		for (uint64_t i = 0; i < n; i++) {
			uint64_t lo = 0, hi = t;
			mp_checkpoint_block_t *b = &ck->blocks[i];
			if (!id[i])
				continue;
			while (lo < hi) {
				uint64_t mid = lo + (hi - lo) / 2;
				if (ids[mid] < id[i])
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == t || ids[lo] != id[i]) {
				free(ids);
				goto out;
			}
			b->op = tup[lo][0], b->region = (uint8_t)tup[lo][1], b->dtype = tup[lo][2];
			b->shape = tup[lo][3], b->stack = tup[lo][4];
		}
		free(ids);
	}
	*pp = p;
	rc = 0;
out:
	free(id);
	free(tup);
	return rc;
}

/* The body [p, bend) into ck (its arrays allocated here) and sums (per
 * memory id); 0, -ENOMEM, or -1 with *why and *at (the field's place). */
static int parse(const uint8_t *p, const uint8_t *bend, mp_checkpoint_t *ck, sums_t *sums, const char **why,
		 const uint8_t **at)
{
	uint64_t flags, n, m, i, k, id = 0, seen = 0;

#define FIELD(v, what)                                                                                                 \
	do {                                                                                                           \
		*at = p;                                                                                               \
		*why = what;                                                                                           \
		if (mp_varint_get(&p, bend, &(v)))                                                                     \
			return -1;                                                                                     \
	} while (0)
	FIELD(flags, "bad flags");
	FIELD(ck->horizon_ns, "bad horizon");
	FIELD(ck->events, "bad events");
	FIELD(n, "bad block count");
	/* a block is at least 3 bytes: a count past that is damage, not a
	 * reason to allocate */
	if (n > (uint64_t)(bend - p) / 3)
		return -1;
	FIELD(m, "bad memory count");
	*why = "memory count out of range";
	if (m > MP_CKPT_MEMORIES_MAX || m > n || (n && !m) || flags > UINT32_MAX)
		return -1;
	ck->flags = (uint32_t)flags;
	ck->memories = calloc(m ? m : 1, sizeof(*ck->memories));
	ck->blocks = malloc((n ? n : 1) * sizeof(*ck->blocks));
	if (!ck->memories || !ck->blocks)
		return -ENOMEM;
	for (i = 0; i < m; i++) {
		uint64_t gap, c, addr = 0;
		mp_checkpoint_memory_t *mm = &ck->memories[i];
		FIELD(gap, "bad memory id");
		id = i == 0 ? gap : id + 1 + gap;
		*why = "memory id out of range";
		if (gap >= MP_CKPT_MEMORIES_MAX || id >= MP_CKPT_MEMORIES_MAX)
			return -1;
		FIELD(c, "bad block count of a memory id");
		*why = "block counts of the memory ids do not add up";
		if (c == 0 || c > n - seen)
			return -1;
		mm->id = (uint32_t)id;
		mm->nblocks = (size_t)c;
		mm->blocks = ck->blocks + seen;
		for (k = 0; k < c; k++) {
			mp_checkpoint_block_t *b = &ck->blocks[seen + k];
			uint64_t ga, fp, dz, d;
			FIELD(ga, "bad address");
			*why = "addresses do not increase";
			if ((k && ga == 0) || addr + ga < addr)
				return -1;
			addr += ga;
			FIELD(fp, "bad size");
			FIELD(dz, "bad requested size");
			d = (dz >> 1) ^ -(dz & 1); /* fp - req */
			memset(b, 0, sizeof(*b));
			b->address = addr;
			b->bytes = fp;
			b->requested = fp - d;
			sums[id].blocks++;
			sums[id].bytes += fp;
			sums[id].req += b->requested;
		}
		seen += c;
	}
	*at = p;
	*why = "block counts of the memory ids do not add up";
	if (seen != n)
		return -1;
	{
		uint64_t zs, r, mem = 0, prev_end = 0;
		FIELD(zs, "bad step");
		ck->step = (int64_t)(zs >> 1) ^ -(int64_t)(zs & 1);
		FIELD(r, "bad region count");
		/* a region is at least 3 bytes */
		*why = "region count out of range";
		if (r > (uint64_t)(bend - p) / 3)
			return -1;
		if (!(ck->regions = malloc((r ? r : 1) * sizeof(*ck->regions))))
			return -ENOMEM;
		for (i = 0; i < r; i++) {
			uint64_t gap, bg, size, base;
			FIELD(gap, "bad region memory id");
			*why = "region memory id out of range";
			if (gap >= MP_CKPT_MEMORIES_MAX || mem + gap >= MP_CKPT_MEMORIES_MAX)
				return -1;
			mem += gap;
			FIELD(bg, "bad region base");
			FIELD(size, "bad region size");
			base = i && !gap ? prev_end + bg : bg;
			*why = "region out of range";
			if (size == 0 || base < bg || base + size < base || (base + size) >> 62)
				return -1;
			ck->regions[i] = (mp_checkpoint_region_t){(uint32_t)mem, base, base + size};
			prev_end = base + size;
		}
		ck->nregions = (size_t)r;
	}
	/* figures[id] for every id a SUMMARY may name (against_summary) */
	if (!(ck->figures = calloc(MP_CKPT_MEMORIES_MAX, sizeof(*ck->figures))))
		return -ENOMEM;
	ck->nfigures = MP_CKPT_MEMORIES_MAX;
	if (flags & MP_CKPT_F_LAST_MARK) { /* (2.5) */
		uint64_t mark;
		FIELD(mark, "bad last mark");
		*why = "last mark out of range";
		if (mark > UINT32_MAX)
			return -1;
		ck->last_mark = (uint32_t)mark;
	}
	if ((flags & MP_CKPT_F_TAGS) && (i = parse_tags(&p, bend, ck, n, why, at)) != 0)
		return (int)i;
	if (flags & MP_CKPT_F_BACK) { /* (3.0) where a seek decodes from */
		FIELD(ck->back, "bad back");
	}
#undef FIELD
	ck->nmemories = (size_t)m;
	ck->nblocks = (size_t)n;
	return 0;
}

/* The SUMMARY at summary (its tag byte's next) against the sums; NULL, or
 * what disagrees. */
static const char *against_summary(const uint8_t *summary, const uint8_t *end, mp_checkpoint_t *ck,
				   const sums_t *sums, int *enomem)
{
	mp_capture_summary_t s;
	const char *why = NULL;
	uint64_t total = 0;
	size_t i;
	int rc;

	if (!summary)
		return "no summary before it in its block";
	memset(&s, 0, sizeof(s));
	if ((rc = mp__summary_section_parse(&summary, end, &s))) {
		*enomem = rc == -ENOMEM;
		return "its summary does not parse";
	}
	if (!s.available)
		why = "its summary is unavailable";
	else if (s.horizon_ns != ck->horizon_ns)
		why = "horizon disagrees with the summary";
	else if (s.events != ck->events)
		why = "events disagree with the summary";
	for (i = 0; !why && i < s.nmemories; i++) {
		const mp_summary_memory_t *m = &s.memories[i];
		if (m->id >= MP_CKPT_MEMORIES_MAX)
			continue;
		total += m->live_blocks;
		ck->figures[m->id].in_summary = 1;
		ck->figures[m->id].allocations = m->allocations;
		ck->figures[m->id].frees = m->frees;
		ck->figures[m->id].reallocs = m->reallocs;
		ck->figures[m->id].failed = m->failed;
		ck->figures[m->id].dropped = m->dropped;
		ck->figures[m->id].has_peak = m->has_peak;
		ck->figures[m->id].peak_bytes = m->peak_bytes;
		ck->figures[m->id].peak_ns = m->peak_time_ns;
		ck->figures[m->id].has_figures = m->has_seek_figures;
		ck->figures[m->id].region_events = m->region_events;
		ck->figures[m->id].unknown_frees = m->unknown_frees;
		ck->figures[m->id].rejected_regions = m->rejected_regions;
		ck->figures[m->id].regions_seen = m->regions_seen;
		ck->figures[m->id].has_reserved_peak = m->has_reserved_peak;
		ck->figures[m->id].reserved_peak_bytes = m->reserved_peak_bytes;
		ck->figures[m->id].reserved_peak_ns = m->reserved_peak_ns;
		if (m->live_blocks != sums[m->id].blocks)
			why = "live blocks of a memory id disagree with the summary";
		else if (m->live_bytes != sums[m->id].bytes)
			why = "live bytes of a memory id disagree with the summary";
		else if (m->live_requested != sums[m->id].req)
			why = "live requested bytes of a memory id disagree with the summary";
	}
	if (!why && total != ck->nblocks)
		why = "live blocks disagree with the summary";
	mp__summary_clear_figures(&s);
	return why;
}

int mp__checkpoint_section(mp_capture_t *cap, const uint8_t **pp, const uint8_t *end, const uint8_t *raw,
			   const uint8_t *summary, uint64_t boff, int apply, mp_diag_t *diag)
{
	const uint8_t *p = *pp, *at = p;
	const char *why = "bad body length";
	mp_checkpoint_t ck;
	sums_t *sums = NULL;
	uint64_t blen = UINT64_MAX; /* (until read: a bad length) */
	int rc = -1, enomem = 0;

	memset(&ck, 0, sizeof(ck));
	if (mp_varint_get(&p, end, &blen) || blen > (uint64_t)(end - p))
		goto bad;
	if (apply && !cap->ckpt_fn) { /* checked by the first pass; nobody wants it */
		cap->ncheckpoints++;
		*pp = p + blen;
		return 0;
	}
	if (!(sums = calloc(MP_CKPT_MEMORIES_MAX, sizeof(*sums))))
		goto oom;
	if ((rc = parse(p, p + blen, &ck, sums, &why, &at)))
		goto bad;
	at = *pp;
	if ((why = against_summary(summary, end, &ck, sums, &enomem))) {
		rc = -1;
		if (enomem)
			goto oom;
		goto bad;
	}
	rc = 0;
	if (apply) {
		cap->ncheckpoints++;
		ck.block_index = cap->block_index;
		ck.block_offset = boff;
		if (cap->ckpt_fn && (rc = cap->ckpt_fn(cap->ckpt_ctx, &ck)))
			rc = mp_diag_set(diag, rc, -1, -1, "block %llu at offset %llu: checkpoint refused by its reader",
					 (unsigned long long)cap->block_index, (unsigned long long)boff);
	}
	*pp = p + blen;
	free(sums);
	mp_checkpoint_free(&ck);
	return rc;
bad:
	free(sums);
	mp_checkpoint_free(&ck);
	if (rc == -ENOMEM)
		goto oom2;
	if (blen > (uint64_t)(end - p)) /* the section's own length is wrong: the block is */
		return mp_diag_set(diag, MP_ECORRUPT, (int64_t)boff, (int64_t)cap->block_index,
				   "block %llu at offset %llu: bad checkpoint: %s (byte %llu of the block's data)",
				   (unsigned long long)cap->block_index, (unsigned long long)boff, why,
				   (unsigned long long)(at - raw));
	/* A checkpoint is a shortcut, never the data: one that does not parse
	 * or disagrees with its round's summary is skipped (the events around
	 * it read as they are; whoever would seek from it replays instead) and
	 * said once, with where it is. The checking pass counts it. */
	if (!apply && !cap->ckpt_bad++)
		mp_diag_set(&cap->ckpt_bad_diag, MP_ECORRUPT, (int64_t)boff, (int64_t)cap->block_index,
			    "block %llu at offset %llu: bad checkpoint: %s (byte %llu of the block's data); skipped",
			    (unsigned long long)cap->block_index, (unsigned long long)boff, why,
			    (unsigned long long)(at - raw));
	*pp = p + blen;
	return 0;
oom:
	free(sums);
	mp_checkpoint_free(&ck);
oom2:
	return mp_diag_set(diag, -ENOMEM, -1, -1, "out of memory");
}
