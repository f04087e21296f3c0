/* analyze.c - result generation for one memory colour: run the replay
 * (replay.c), take the peak snapshot (indefinite buffers, live buffers shown
 * by their current sharer, the small aggregate), the series and the totals
 * (docs/hlo.md, "What is computed", steps 4-7). */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

void mp_hlo_options_init(mp_hlo_options_t *opt)
{
	opt->color = 0;
	opt->small_buffer_size = 16 * 1024;
	opt->compat = 0;
}

const char *mp_hlo_category_name(mp_hlo_category_t cat)
{
	static const char *const names[] = {"Parameter", "Output", "Thread-local", "Constant", "Temporary",
					    "Small"};

	return (unsigned)cat < sizeof(names) / sizeof(names[0]) ? names[cat] : "?";
}

/* Saturating sum of byte counts (>= 0): hostile sizes must not overflow. */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b < 0 ? INT64_MIN : INT64_MAX) : r;
}

void mp_hlo_result_free(mp_hlo_result_t *r)
{
	if (!r)
		return;
	free(r->module_name);
	free(r->entry_computation_name);
	free(r->colors);
	free(r->peak_instruction);
	free(r->heap_sizes);
	free(r->unpadded_heap_sizes);
	if (r->point_names)
		for (size_t i = 0; i < r->n_points; i++)
			free(r->point_names[i]);
	free(r->point_names);
	for (size_t i = 0; i < r->n_buffers; i++) {
		mp_hlo_buffer_t *b = &r->buffers[i];

		free(b->instruction_name);
		free(b->label);
		free(b->shape);
		free(b->op_name);
		free(b->opcode);
		free(b->source);
	}
	free(r->buffers);
	free(r->by_size);
	for (size_t i = 0; i < r->n_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r);
}

static char *join3(const char *a, const char *b, const char *c, const char *d, const char *e)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + strlen(e) + 1;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s%s%s%s%s", a, b, c, d, e);
	return s;
}

static int add_buffer(mp_hlo_result_t *res, size_t *cap, const mp_hlo_module_t *m, int32_t li,
		      const replay_t *spans, int compat)
{
	const mp_hlo_lb_t *lb = &m->lbs[li];
	const Xla__HloInstructionProto *in = m->instrs[lb->instr];
	const Xla__LogicalBufferProto__Location *loc = lb->proto->defined_at;
	const Xla__OpMetadata *md = in->metadata;
	const char *iname = in->name ? in->name : "";
	mp_hlo_buffer_t *b;
	char idx[256] = "";

	if (lb->proto->size < res->small_buffer_size) {
		res->small_total_bytes = sat_add(res->small_total_bytes, lb->proto->size);
		return 0;
	}
	if (MP_VEC_RESERVE(res->buffers, *cap, res->n_buffers + 1) < 0)
		return MP_ENOMEM;
	b = &res->buffers[res->n_buffers];
	memset(b, 0, sizeof(*b));
	res->n_buffers++;
	b->logical_buffer_id = lb->proto->id;
	b->allocation_index = m->allocs[lb->alloc].proto->index;
	b->category = mp_hlo_category(m->allocs[lb->alloc].proto);
	b->size = lb->proto->size;
	b->unpadded_size = compat ? lb->unpadded_compat : lb->unpadded_full;
	if (loc && loc->n_shape_index) {
		size_t k = 0;

		for (size_t j = 0; j < loc->n_shape_index && k + 24 < sizeof(idx); j++)
			k += (size_t)snprintf(idx + k, sizeof(idx) - k, "%s%lld", j ? "," : "{",
					      (long long)loc->shape_index[j]);
		snprintf(idx + k, sizeof(idx) - k, "}");
	}
	b->instruction_name = join3(iname, idx, "", "", "");
	b->shape = mp_hlo_shape_string(compat ? lb->shape_compat : lb->shape_full);
	b->op_name = mp_hlo_strdup(md && md->op_name ? md->op_name : "");
	b->opcode = mp_hlo_strdup(in->opcode ? in->opcode : "");
	if (md && md->source_file && *md->source_file) {
		char line[32];

		snprintf(line, sizeof(line), ":%d", md->has_source_line ? md->source_line : 0);
		b->source = join3(md->source_file, line, "", "", "");
	} else {
		b->source = mp_hlo_strdup("");
	}
	if (b->shape && b->op_name)
		b->label = join3(iname, ": ", b->shape, " # ", b->op_name);
	if (spans && spans->has_span[li]) {
		b->has_span = 1;
		b->span_start = spans->span_start[li];
		b->span_limit = spans->span_limit[li];
	}
	if (!b->instruction_name || !b->shape || !b->op_name || !b->opcode || !b->source || !b->label)
		return MP_ENOMEM;
	return 0;
}

static int cmp_by_size_r(const void *a, const void *b, void *ctx)
{
	const mp_hlo_buffer_t *base = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int64_t sx = base[x].size, sy = base[y].size;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x < y ? -1 : (x > y); /* stable: program order breaks ties */
}

/* The result's names and options, before any figure. */
static int result_new(const mp_hlo_module_t *m, const mp_hlo_options_t *opt, mp_hlo_result_t **out)
{
	mp_hlo_result_t *res = calloc(1, sizeof(*res));

	*out = res;
	if (!res)
		return MP_ENOMEM;
	res->module_name = mp_hlo_strdup(m->proto->hlo_module->name);
	res->entry_computation_name = mp_hlo_strdup(m->proto->hlo_module->entry_computation_name);
	res->program_id = m->program_id;
	res->colors = malloc((m->n_colors ? m->n_colors : 1) * sizeof(*res->colors));
	if (res->colors && m->n_colors) {
		memcpy(res->colors, m->colors, m->n_colors * sizeof(*res->colors));
		res->n_colors = m->n_colors;
	}
	res->color = opt->color;
	res->compat = opt->compat;
	res->small_buffer_size = opt->small_buffer_size;
	res->trace_id = mp_hlo_pick_trace(m, opt->color);
	if (!res->module_name || !res->entry_computation_name || !res->colors)
		return MP_ENOMEM;
	return 0;
}

/* Pass 1 over the trace: the series, the peak event and the final spans;
 * pass 2 stops right after the peak event: its live set is the snapshot.
 * *said: diag already says why it failed. */
static int replay_trace(mp_hlo_result_t *res, const mp_hlo_module_t *m, const Xla__HeapSimulatorTrace *tr, int compat,
			replay_t *full, replay_t *at_peak, int *said, mp_diag_t *diag)
{
	int rc;

	res->n_events = tr->n_events;
	if ((rc = mp_hlo_replay_init(full, m, tr, compat, 1)) < 0)
		return rc;
	if ((rc = mp_hlo_replay_run(full, tr->n_events, diag)) < 0) {
		*said = 1;
		return rc;
	}
	if (full->n_unknown)
		mp_hlo_warn(&res->warnings, &res->n_warnings, &(size_t){0},
			    "%zu heap-simulator events name unknown buffers and were skipped (first: event %lld)",
			    full->n_unknown, (long long)full->first_unknown);
	if ((rc = mp_hlo_replay_init(at_peak, m, tr, compat, 0)) < 0)
		return rc;
	if (full->peak > 0 && (rc = mp_hlo_replay_run(at_peak, (size_t)full->peak_pos + 1, diag)) < 0)
		*said = 1;
	return rc < 0 ? rc : 0;
}

/* The row of the buffers under small_buffer_size, all in one. */
static int add_small(mp_hlo_result_t *res, size_t *cap, int64_t small_buffer_size)
{
	mp_hlo_buffer_t *b;
	char label[64];

	if (res->n_buffers == *cap) {
		mp_hlo_buffer_t *nb = realloc(res->buffers, (*cap + 1) * sizeof(*nb));

		if (!nb)
			return MP_ENOMEM;
		res->buffers = nb;
		++*cap;
	}
	b = &res->buffers[res->n_buffers++];
	memset(b, 0, sizeof(*b));
	snprintf(label, sizeof(label), "small (<%lld bytes)", (long long)small_buffer_size);
	b->logical_buffer_id = -1;
	b->allocation_index = -1;
	b->category = MP_HLO_CAT_SMALL;
	b->size = res->small_total_bytes;
	b->instruction_name = mp_hlo_strdup(label);
	b->label = mp_hlo_strdup(label);
	b->shape = mp_hlo_strdup("");
	b->op_name = mp_hlo_strdup("");
	b->opcode = mp_hlo_strdup("");
	b->source = mp_hlo_strdup("");
	if (!b->instruction_name || !b->label || !b->shape || !b->op_name || !b->opcode || !b->source)
		return MP_ENOMEM;
	return 0;
}

/* The buffers shown: the indefinite ones (§1.6.1), in allocation index
 * order; the temporaries live at the peak, in (re)allocation order, shown
 * by their current sharer; the small ones in one row; and their order by
 * size. full and at_peak: NULL without a trace. */
static int add_buffers(mp_hlo_result_t *res, const mp_hlo_module_t *m, const mp_hlo_options_t *opt, const replay_t *full,
		       const replay_t *at_peak)
{
	size_t cap = 0;
	int rc;

	for (size_t i = 0; i < m->n_allocs; i++) {
		const mp_hlo_alloc_t *a = &m->allocs[i];
		int32_t best = -1;

		if (a->proto->color != opt->color || !mp_hlo_is_indefinite(a->proto))
			continue;
		for (size_t j = 0; j < a->n_lbs; j++)
			if (best < 0 || m->lbs[a->lbs[j]].proto->size > m->lbs[best].proto->size)
				best = a->lbs[j];
		if (best < 0)
			continue;
		res->indefinite_bytes = sat_add(res->indefinite_bytes, a->proto->size);
		if ((opt->color == 0 || !opt->compat) && (rc = add_buffer(res, &cap, m, best, full, opt->compat)) < 0)
			return rc;
	}
	if (at_peak && full->peak > 0) {
		for (size_t k = 0; k < at_peak->n_live; k++) {
			int32_t li = at_peak->live[k].lb, shown;

			if (at_peak->live[k].epoch != at_peak->epoch[li])
				continue;
			shown = at_peak->display[li] >= 0 ? at_peak->display[li] : li;
			if ((rc = add_buffer(res, &cap, m, shown, full, opt->compat)) < 0)
				return rc;
		}
	}
	if (res->small_total_bytes > 0 && (rc = add_small(res, &cap, opt->small_buffer_size)) < 0)
		return rc;
	res->by_size = malloc((res->n_buffers ? res->n_buffers : 1) * sizeof(*res->by_size));
	if (!res->by_size)
		return MP_ENOMEM;
	for (size_t i = 0; i < res->n_buffers; i++)
		res->by_size[i] = i;
	qsort_r(res->by_size, res->n_buffers, sizeof(*res->by_size), cmp_by_size_r, res->buffers);
	return 0;
}

/* Peak and series (§1.8): indefinite bytes are added to every point. full:
 * NULL without a trace. */
static int peak_and_series(mp_hlo_result_t *res, const Xla__HeapSimulatorTrace *tr, const replay_t *full)
{
	res->peak_heap_bytes = sat_add(res->indefinite_bytes, full ? full->peak : 0);
	res->peak_unpadded_heap_bytes = sat_add(res->indefinite_bytes, full ? full->peak_unpadded : 0);
	res->peak_position = full ? full->peak_pos : 0;
	res->peak_instruction = mp_hlo_strdup(tr && tr->n_events && tr->events[res->peak_position]->instruction_name
						      ? tr->events[res->peak_position]->instruction_name : "");
	if (!res->peak_instruction)
		return MP_ENOMEM;
	if (full) {
		size_t n = tr->n_events + 1;

		res->heap_sizes = malloc(n * sizeof(*res->heap_sizes));
		res->unpadded_heap_sizes = malloc(n * sizeof(*res->unpadded_heap_sizes));
		res->point_names = calloc(n, sizeof(*res->point_names));
		if (!res->heap_sizes || !res->unpadded_heap_sizes || !res->point_names)
			return MP_ENOMEM;
		res->n_points = n;
		for (size_t i = 0; i < n; i++) {
			const char *nm = i < tr->n_events ? tr->events[i]->instruction_name : NULL;

			res->heap_sizes[i] = sat_add(full->heap_tl[i], res->indefinite_bytes);
			res->unpadded_heap_sizes[i] = sat_add(full->unpadded_tl[i], res->indefinite_bytes);
			if (!(res->point_names[i] = mp_hlo_strdup(nm ? nm : "")))
				return MP_ENOMEM;
		}
	}
	return 0;
}

/* Allocation totals of the colour (NoteSpecialAllocations) and the
 * fragmentation they give. */
static void allocation_totals(mp_hlo_result_t *res, const mp_hlo_module_t *m, int64_t color)
{
	for (size_t i = 0; i < m->n_allocs; i++) {
		const Xla__BufferAllocationProto *a = m->allocs[i].proto;

		if (a->color != color)
			continue;
		res->total_allocation_bytes = sat_add(res->total_allocation_bytes, a->size);
		if (mp_hlo_is_indefinite(a))
			res->indefinite_allocation_bytes = sat_add(res->indefinite_allocation_bytes, a->size);
		if (a->is_entry_computation_parameter)
			res->entry_parameter_bytes = sat_add(res->entry_parameter_bytes, a->size);
		if (a->maybe_live_out)
			res->maybe_live_out_bytes = sat_add(res->maybe_live_out_bytes, a->size);
		if (a->is_thread_local || a->is_tuple)
			res->non_reusable_bytes = sat_add(res->non_reusable_bytes, a->size);
	}
	if (res->total_allocation_bytes > res->indefinite_allocation_bytes)
		res->fragmentation_percent = ((double)res->total_allocation_bytes - (double)res->peak_heap_bytes) /
					     ((double)res->total_allocation_bytes - (double)res->indefinite_allocation_bytes) *
					     100.0;
}

int mp_hlo_analyze(const mp_hlo_module_t *m, const mp_hlo_options_t *opt, mp_hlo_result_t **out, mp_diag_t *diag)
{
	mp_hlo_options_t defaults;
	mp_hlo_result_t *res = NULL;
	replay_t full = {0}, at_peak = {0};
	const Xla__HeapSimulatorTrace *tr = NULL;
	int rc, said = 0;

	*out = NULL;
	if (!opt) {
		mp_hlo_options_init(&defaults);
		opt = &defaults;
	}
	if ((rc = result_new(m, opt, &res)) < 0 && !res)
		return rc;
	if (rc == 0 && res->trace_id >= 0) {
		tr = m->ba->heap_simulator_traces[res->trace_id];
		rc = replay_trace(res, m, tr, opt->compat, &full, &at_peak, &said, diag);
	}
	if (rc == 0)
		rc = add_buffers(res, m, opt, tr ? &full : NULL, tr ? &at_peak : NULL);
	if (rc == 0)
		rc = peak_and_series(res, tr, tr ? &full : NULL);
	if (rc == 0)
		allocation_totals(res, m, opt->color);
	mp_hlo_replay_free(&full);
	mp_hlo_replay_free(&at_peak);
	if (rc < 0) {
		if (rc == MP_ENOMEM && !said)
			mp_diag_set(diag, rc, -1, -1, "out of memory during the analysis");
		mp_hlo_result_free(res);
		return rc;
	}
	*out = res;
	return 0;
}
