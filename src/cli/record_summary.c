/* record_summary.c - the line `memprof record` ends with (see record.h).
 *
 * The figures are the ones the capture's writer kept while it recorded
 * (memprof/capsummary.h): reading them costs a few block headers and one
 * small block, where reading the capture back cost about as long as the
 * program ran (alloc_bench -t 2: 2 s for 41 M events). A capture without
 * them (written before format 2.1, or by a writer whose tally ran out of
 * memory) is read back and its host heap replayed, as before.
 */
#include "record.h"

#include <memprof/capsummary.h>
#include <memprof/capture.h>

#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The live blocks of one memory id by address (open addressing, linear
 * probing): what a free gives back. */
typedef struct {
	uint64_t addr, size; /* size + 1; 0 = empty slot */
} slot_t;

typedef struct {
	slot_t *s;
	size_t cap, n;
} live_t;

static size_t live_hash(uint64_t a, size_t cap)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

static int live_put(live_t *m, uint64_t a, uint64_t size)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		live_t g = {calloc(m->cap ? m->cap * 2 : 1024, sizeof(slot_t)), m->cap ? m->cap * 2 : 1024, 0};
		if (!g.s)
			return -1;
		for (i = 0; i < m->cap; i++)
			if (m->s[i].size)
				live_put(&g, m->s[i].addr, m->s[i].size - 1);
		free(m->s);
		*m = g;
	}
	for (i = live_hash(a, m->cap); m->s[i].size && m->s[i].addr != a; i = (i + 1) & (m->cap - 1))
		;
	if (!m->s[i].size)
		m->n++;
	m->s[i].addr = a;
	m->s[i].size = size + 1;
	return 0;
}

/* Remove a; returns its size, or -1 when it was not live. */
static int64_t live_take(live_t *m, uint64_t a)
{
	size_t i, j, k;
	int64_t size;

	if (!m->cap)
		return -1;
	for (i = live_hash(a, m->cap); m->s[i].size; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].addr != a)
			continue;
		size = (int64_t)(m->s[i].size - 1);
		/* backward-shift deletion keeps probe chains intact */
		for (j = i, k = (i + 1) & (m->cap - 1); m->s[k].size; k = (k + 1) & (m->cap - 1)) {
			size_t h = live_hash(m->s[k].addr, m->cap);
			if ((j <= k) ? (h <= j || h > k) : (h <= j && h > k)) {
				m->s[j] = m->s[k];
				j = k;
			}
		}
		m->s[j].size = 0;
		m->n--;
		return size;
	}
	return -1;
}

/* One memory id's figures, as the summary gives them: counts, and the
 * peak and end of its requested bytes. */
typedef struct {
	int id; /* its index in the capture, -1: absent */
	uint64_t allocs, frees, failed, dropped, cur, peak;
	live_t live;
} tally_t;

static void tally(tally_t *t, const mp_event_t *ev)
{
	if (ev->kind == MP_EV_DROPPED)
		t->dropped += ev->requested_bytes; /* its count */
	if (ev->kind == MP_EV_ALLOC) {
		int64_t old = live_take(&t->live, ev->address); /* the solver's rule: dropped first */
		if (old >= 0)
			t->cur -= (uint64_t)old;
		t->allocs += !(ev->flags & MP_EVENT_F_REALLOC);
		if (live_put(&t->live, ev->address, ev->requested_bytes) == 0) {
			t->cur += ev->requested_bytes;
			if (t->cur > t->peak)
				t->peak = t->cur;
		}
	} else if (ev->kind == MP_EV_FREE) {
		int64_t n = live_take(&t->live, ev->address);
		t->frees += !(ev->flags & MP_EVENT_F_REALLOC);
		if (n >= 0)
			t->cur -= (uint64_t)n;
	} else if (ev->kind == MP_EV_ALLOC_FAILED) {
		t->failed++;
	}
}

/* The line itself, from either source. */
static void print_line(uint64_t events, const tally_t *host, uint64_t live_blocks, const tally_t *mapped,
		       uint64_t stacks, int abrupt)
{
	char b1[64], b2[64], b3[64], maps[128], stack_text[64];

	maps[0] = stack_text[0] = '\0';
	if (mapped->allocs)
		snprintf(maps, sizeof(maps), "; mapped by the program (host_mmap): peak %s",
			 mp_cli_bytes(b3, sizeof(b3), mapped->peak));
	if (stacks)
		snprintf(stack_text, sizeof(stack_text), "; %" PRIu64 " distinct call stacks", stacks);
	fprintf(stderr,
		"memprof: %" PRIu64 " events; host heap: %" PRIu64 " allocations, %" PRIu64 " frees, %" PRIu64
		" failed, peak %s requested; live at the end: %" PRIu64 " blocks, %s%s%s%s\n",
		events, host->allocs, host->frees, host->failed, mp_cli_bytes(b1, sizeof(b1), host->peak), live_blocks,
		mp_cli_bytes(b2, sizeof(b2), host->cur), maps, stack_text, abrupt ? " (the capture ended abruptly)" : "");
	if (host->dropped)
		mp_cli_warning("%" PRIu64 " host heap events were not recorded (dropped), so the figures above "
			       "are incomplete; docs/hooks.md says when this happens",
			       host->dropped);
}

/* One memory id's figures from the writer's summary (zero when absent). */
static void from_summary(tally_t *t, const mp_summary_memory_t *m)
{
	if (!m)
		return;
	t->allocs = m->allocations;
	t->frees = m->frees;
	t->failed = m->failed;
	t->dropped = m->dropped;
	t->peak = m->peak_requested;
	t->cur = m->live_requested;
}

/* The figures the writer kept. Returns 0 when it printed them, -1 when the
 * capture has none (or they cannot be read: the replay says why). */
static int summary_from_writer(const char *path)
{
	tally_t host = {-1, 0, 0, 0, 0, 0, 0, {NULL, 0, 0}}, mapped = host;
	const mp_summary_memory_t *h;
	mp_capture_summary_t s;
	mp_diag_t diag;

	if (mp_capture_summary_read(path, &s, &diag) != 0 || !s.available) {
		mp_capture_summary_free(&s);
		return -1;
	}
	h = mp_capture_summary_find(&s, "host");
	from_summary(&host, h);
	from_summary(&mapped, mp_capture_summary_find(&s, "host_mmap"));
	print_line(s.events, &host, h ? h->live_blocks : 0, &mapped, s.stacks, !s.ended_cleanly);
	mp_capture_summary_free(&s);
	return 0;
}

void mp_cli_record_summary(const char *path)
{
	tally_t host = {-1, 0, 0, 0, 0, 0, 0, {NULL, 0, 0}}, mapped = host;
	uint64_t events = 0;
	mp_source_t *src;
	mp_event_t ev;
	mp_diag_t diag;
	int rc;
	uint32_t i;

	if (summary_from_writer(path) == 0)
		return;
	/* No figures from the writer: the capture read back, its heap replayed */
	if (mp_capture_open_source(&src, path, &diag)) {
		mp_cli_diag(&diag);
		return;
	}
	while ((rc = mp_source_next(src, &ev, &diag)) == 1) {
		events++;
		if (ev.kind == MP_EV_MEMORY) { /* ids are declared before they are used */
			for (i = 0; i < mp_source_memory_count(src); i++) {
				if (!strcmp(mp_source_memory(src, i)->name, "host"))
					host.id = (int)i;
				if (!strcmp(mp_source_memory(src, i)->name, "host_mmap"))
					mapped.id = (int)i;
			}
			continue;
		}
		if ((int)ev.memory == host.id)
			tally(&host, &ev);
		else if ((int)ev.memory == mapped.id)
			tally(&mapped, &ev);
	}
	if (rc < 0)
		mp_cli_diag(&diag);
	print_line(events, &host, host.live.n, &mapped, mp_capture_stack_count(mp_capture_from_source(src)),
		   mp_source_end_status(src) == MP_END_ABRUPT);
	free(host.live.s);
	free(mapped.live.s);
	mp_source_close(src);
}
