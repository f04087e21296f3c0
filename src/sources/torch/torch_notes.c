/* torch_notes.c - what the report says of a snapshot beside its events:
 * PyTorch's own counters as the layout replay found them (the figures a
 * user compares with torch.cuda.max_memory_allocated() and
 * memory_allocated()), the check of the replay against the dump, and what
 * the reading could not use. Each note has a key and a figure for tools
 * and one line for people (memprof/source.h, mp_source_note_t). */
#include "torch_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nb {
	tr_src_t *s;
	mp_vec_t notes; /* mp_source_note_t, text = offset into the arena until the end */
	char *arena;
	size_t alen, acap;
	int oom;
} nb_t;

/* "48760832 B (46.50 MiB)" */
static const char *bytes(char *buf, size_t n, uint64_t b)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, n, "%" PRIu64 " B (%.2f %s)", b, v, unit[u]);
	else
		snprintf(buf, n, "%" PRIu64 " B", b);
	return buf;
}

static void add(nb_t *b, uint32_t memory, const char *key, int kind, uint64_t value, int warning, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static void add(nb_t *b, uint32_t memory, const char *key, int kind, uint64_t value, int warning, const char *fmt, ...)
{
	mp_source_note_t x = {memory, key, NULL, kind, value, warning};
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (b->oom || len < 0)
		return;
	if (MP_VEC_RESERVE(b->arena, b->acap, b->alen + (size_t)len + 1) < 0) {
		b->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->arena + b->alen, (size_t)len + 1, fmt, ap);
	va_end(ap);
	x.text = (const char *)(uintptr_t)b->alen;
	b->alen += (size_t)len + 1;
	if (mp_vec_push(&b->notes, &x, sizeof(x)) < 0)
		b->oom = 1;
}

static void where(char *buf, size_t n, int64_t entry)
{
	if (entry < 0)
		snprintf(buf, n, "at the trace's start");
	else
		snprintf(buf, n, "first at trace entry %" PRId64, entry);
}

static void device_notes(nb_t *b, const tr_dev_t *d)
{
	const tr_counters_t *c = &d->count;
	char x[64], y[64], z[64], at[64];
	int ok;

	where(at, sizeof(at), c->peak_entry);
	if (c->peak_min == c->peak_max) {
		add(b, d->mem, "allocated_peak_bytes", MP_NOTE_BYTES, c->peak_min, 0,
		    "allocated peak    %s %s (torch.cuda.max_memory_allocated: blocks, not requests)",
		    bytes(x, sizeof(x), c->peak_min), at);
	} else {
		add(b, d->mem, "allocated_peak_bytes", MP_NOTE_BYTES, c->peak_min, 0,
		    "allocated peak    between %s and %s: %" PRIu64 " blocks older than the trace have a size the "
		    "allocator's layout leaves open (the lower figure %s)",
		    bytes(x, sizeof(x), c->peak_min), bytes(y, sizeof(y), c->peak_max), c->unpinned, at);
		add(b, d->mem, "allocated_peak_bytes_max", MP_NOTE_BYTES, c->peak_max, 0, "%s", ""); /* said above */
	}
	if (c->peak_entry >= 0) /* for tools: the peak line says it to people */
		add(b, d->mem, "allocated_peak_entry", MP_NOTE_COUNT, (uint64_t)c->peak_entry, 0, "%s", "");
	if (c->start_min == c->start_max)
		add(b, d->mem, "allocated_at_trace_start_bytes", MP_NOTE_BYTES, c->start_min, 0,
		    "allocated start   %s (before the first trace entry)", bytes(x, sizeof(x), c->start_min));
	else
	{
		add(b, d->mem, "allocated_at_trace_start_bytes", MP_NOTE_BYTES, c->start_min, 0,
		    "allocated start   between %s and %s (before the first trace entry)", bytes(x, sizeof(x), c->start_min),
		    bytes(y, sizeof(y), c->start_max));
		add(b, d->mem, "allocated_at_trace_start_bytes_max", MP_NOTE_BYTES, c->start_max, 0, "%s", "");
	}
	add(b, d->mem, "allocated_final_bytes", MP_NOTE_BYTES, c->final, 0, "allocated end     %s (after the last entry)",
	    bytes(x, sizeof(x), c->final));
	add(b, d->mem, "requested_peak_bytes_memory_viz", MP_NOTE_BYTES, c->requested_peak, 0,
	    "memory_viz peak   %s (its Active Memory Timeline: requested bytes, to free_completed)",
	    bytes(x, sizeof(x), c->requested_peak));
	if (c->awaiting_peak)
		add(b, d->mem, "awaiting_peak_bytes", MP_NOTE_BYTES, c->awaiting_peak, 0,
		    "awaiting stream   at most %s freed by the program but not yet by the allocator (another stream's work "
		    "was pending): in the segments, not in allocated bytes", bytes(x, sizeof(x), c->awaiting_peak));
	/* expandable segments: the dump may cut the mapped ranges otherwise than
	 * the trace's runs join them; their bytes must agree all the same */
	ok = !c->blocks_differ && !c->segments_differ && c->end_blocks == c->dump_blocks && c->final == c->dump_allocated &&
	     (c->expandable || c->end_segments == c->dump_segments) && c->end_reserved == c->dump_reserved;
	if (ok) {
		add(b, d->mem, "dump_check", MP_NOTE_FLAG, 1, 0,
		    "dump check        the replay ends at the dump's own state: %" PRIu64 " blocks, %s allocated, %" PRIu64
		    " segments, %s reserved",
		    c->dump_blocks, bytes(x, sizeof(x), c->dump_allocated), c->dump_segments, bytes(y, sizeof(y), c->dump_reserved));
	} else {
		int64_t da = (int64_t)(c->final - c->dump_allocated), dr = (int64_t)(c->end_reserved - c->dump_reserved);
		add(b, d->mem, "dump_check", MP_NOTE_FLAG, 0, 1,
		    "the replay does not end at the dump's own state: allocated %s replayed, %s in the dump (%+" PRId64
		    " B); reserved %s replayed, %s in the dump (%+" PRId64 " B); %" PRIu64 " blocks replayed, %" PRIu64
		    " in the dump, %" PRIu64 " differ; %" PRIu64 " segments replayed, %" PRIu64 " in the dump, %" PRIu64
		    " differ",
		    bytes(x, sizeof(x), c->final), bytes(y, sizeof(y), c->dump_allocated), da, bytes(z, sizeof(z), c->end_reserved),
		    bytes(at, sizeof(at), c->dump_reserved), dr, c->end_blocks, c->dump_blocks, c->blocks_differ,
		    c->end_segments, c->dump_segments, c->segments_differ);
		if (c->blocks_differ)
			add(b, d->mem, "dump_check_first_block", MP_NOTE_COUNT, c->first_differ_addr, 1,
			    "first block that differs: 0x%" PRIx64 ", %s replayed, %s in the dump", c->first_differ_addr,
			    bytes(x, sizeof(x), c->first_differ_replay),
			    c->first_differ_dump ? bytes(y, sizeof(y), c->first_differ_dump) : "none");
	}
	if (c->anomalies)
		add(b, d->mem, "layout_anomalies", MP_NOTE_COUNT, c->anomalies, 1,
		    "%" PRIu64 " trace entries the allocator's layout could not place (a free of a block it did not hold, "
		    "an allocation with less room than its request, a segment freed with blocks in it)",
		    c->anomalies);
}

int tr_make_notes(tr_src_t *s)
{
	nb_t b = {.s = s};
	size_t phases = 0;

	for (uint32_t i = 0; i < s->ndevs; i++) {
		if (s->devs[i].seen)
			device_notes(&b, &s->devs[i]);
		phases += s->devs[i].phases.n;
	}
	if (!s->has_time && s->info.trace_entries)
		add(&b, MP_NOTE_INPUT, "time_axis", MP_NOTE_TEXT, 0, 0,
		    "time: the trace entries carry no time_us, so times are trace entry indexes (as memory_viz draws them)");
	if (!s->has_time && phases)
		add(&b, MP_NOTE_INPUT, "phases_unplaced", MP_NOTE_COUNT, phases, 1,
		    "%zu external annotations (phases) were left out: the trace entries have no time_us to place them by",
		    phases);
	if (!s->settings.known && s->info.trace_entries)
		add(&b, MP_NOTE_INPUT, "allocator_settings", MP_NOTE_TEXT, 0, 0,
		    "block sizes: the snapshot has no allocator_settings; PyTorch's defaults are assumed (no max_split_size, "
		    "no roundup_power2_divisions, no expandable segments)");
	if (s->unknown_lines) /* Python 3.13 writes 2**64-1 for lines it does not know */
		add(&b, MP_NOTE_INPUT, "unknown_lines", MP_NOTE_COUNT, s->unknown_lines, 1,
		    "%" PRIu64 " frames have a line number that does not fit (shown as '?'), e.g. %s", s->unknown_lines,
		    s->unknown_line_example);
	if (s->unknown_actions)
		add(&b, MP_NOTE_INPUT, "unknown_actions", MP_NOTE_COUNT, s->unknown_actions, 1,
		    "%" PRIu64 " trace entries of actions memprof does not know were skipped", s->unknown_actions);
	if (b.oom) {
		free(b.notes.v);
		free(b.arena);
		return MP_ENOMEM;
	}
	s->notes = b.notes.v;
	s->nnotes = b.notes.n;
	s->note_text = b.arena;
	for (size_t i = 0; i < s->nnotes; i++)
		s->notes[i].text = s->note_text + (uintptr_t)s->notes[i].text;
	return 0;
}
