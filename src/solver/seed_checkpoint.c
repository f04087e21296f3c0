/* seed_checkpoint.c - a solver seed from a capture's checkpoint
 * (memprof/seed_checkpoint.h): its blocks, regions and last mark, and the
 * figures of the events before it from its round's SUMMARY. */
#include <memprof/seed_checkpoint.h>

#include <stdlib.h>
#include <string.h>

void mp_checkpoint_seed_free(mp_checkpoint_seed_t *b)
{
	free(b->mem);
	free(b->blocks);
	free(b->regions);
}

int mp_checkpoint_seed(const mp_checkpoint_t *ck, const uint64_t *rindex, mp_checkpoint_seed_t *b)
{
	size_t nm = 0, nb = 0, nr = 0, mi = 0, ri = 0;

	memset(b, 0, sizeof(*b));
	b->mem = calloc(ck->nfigures ? ck->nfigures : 1, sizeof(*b->mem));
	b->blocks = malloc((ck->nblocks ? ck->nblocks : 1) * sizeof(*b->blocks));
	b->regions = malloc((ck->nregions ? ck->nregions : 1) * sizeof(*b->regions));
	if (!b->mem || !b->blocks || !b->regions)
		return MP_ENOMEM;
	for (uint32_t id = 0; id < ck->nfigures; id++) {
		const mp_checkpoint_figures_t *f = &ck->figures[id];
		const mp_checkpoint_memory_t *cm = mi < ck->nmemories && ck->memories[mi].id == id ? &ck->memories[mi++] : NULL;
		mp_solver_seed_memory_t *m = &b->mem[nm];
		uint64_t live = cm ? cm->nblocks : 0, a = f->allocations + f->reallocs, d = f->frees + f->reallocs;

		if (!f->in_summary && !cm && !(ri < ck->nregions && ck->regions[ri].memory == id))
			continue;
		m->id = id;
		m->blocks = b->blocks + nb;
		for (size_t k = 0; cm && k < cm->nblocks; k++)
			b->blocks[nb++] = (mp_solver_seed_block_t){.address = cm->blocks[k].address,
								    .requested_bytes = cm->blocks[k].requested,
								    .allocated_bytes = cm->blocks[k].bytes,
								    .op = cm->blocks[k].op,
								    .dtype = cm->blocks[k].dtype,
								    .shape = cm->blocks[k].shape,
								    .region = cm->blocks[k].region,
								    .stack = cm->blocks[k].stack};
		m->nblocks = (size_t)(b->blocks + nb - m->blocks);
		m->regions = b->regions + nr;
		for (; ri < ck->nregions && ck->regions[ri].memory == id; ri++)
			b->regions[nr++] = (mp_solver_seed_region_t){ck->regions[ri].base,
								     ck->regions[ri].end - ck->regions[ri].base};
		m->nregions = (size_t)(b->regions + nr - m->regions);
		/* the solver's counts: a realloc is a free and an allocation,
		 * a region change an event; the declaration's event comes
		 * with the seek (memprof/checkpoint.h) */
		m->events = a + d + f->failed + f->region_events;
		m->allocations = a;
		m->deallocations = d;
		m->failed_allocations = f->failed;
		m->unknown_frees = f->unknown_frees;
		/* what is live: the allocations, less those that replaced a
		 * live block, less the frees of a live block */
		m->duplicate_allocations = a - (d - f->unknown_frees) - live;
		m->rejected_regions = f->rejected_regions;
		m->regions_seen = f->regions_seen;
		m->has_peak = f->has_peak;
		m->peak_bytes = m->lifetime_peak_bytes = f->peak_bytes;
		m->has_reserved_peak = f->has_reserved_peak;
		m->reserved_peak_bytes = f->reserved_peak_bytes;
		m->reserved_peak_time_ns = f->reserved_peak_ns;
		m->reserved_peak_event = rindex ? rindex[id] : UINT64_MAX; /* unknown: it must come after the seed */
		nm++;
	}
	b->seed = (mp_solver_seed_t){.events = ck->events, .last_mark = ck->last_mark, .memories = b->mem,
				     .nmemories = nm};
	return 0;
}
