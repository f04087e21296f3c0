/* model.c - index building for a decoded HloProto (the reference's wrapper
 * initialisation): instructions by id, logical buffers by id with their
 * allocation, resolved shapes and unpadded sizes, allocations in index order
 * and the trace each one is simulated by. Where the reference aborts (unknown
 * instruction id) we skip the logical buffer and record a warning. */
#include "internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MP_HLO_MAX_WARNINGS 100

void mp_hlo_warn(char ***list, size_t *n, size_t *dropped, const char *fmt, ...)
{
	char buf[512], **nl;
	va_list ap;

	if (*n >= MP_HLO_MAX_WARNINGS) {
		(*dropped)++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nl = realloc(*list, (*n + 1) * sizeof(**list));
	if (!nl)
		return;
	*list = nl;
	if ((nl[*n] = mp_hlo_strdup(buf)) != NULL)
		(*n)++;
}

#define WARN(m, ...) mp_hlo_warn(&(m)->warnings, &(m)->n_warnings, &(m)->n_warnings_dropped, __VA_ARGS__)

void mp_hlo_module_free(mp_hlo_module_t *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_allocs; i++)
		free(m->allocs[i].lbs);
	free(m->allocs);
	free(m->lbs);
	free(m->instrs);
	free(m->colors);
	mp_i64map_free(&m->lb_by_id);
	for (size_t i = 0; i < m->n_warnings; i++)
		free(m->warnings[i]);
	free(m->warnings);
	mp_hlo_arena_free(m->arena);
	free(m);
}

const int64_t *mp_hlo_module_colors(const mp_hlo_module_t *m, size_t *count)
{
	*count = m->n_colors;
	return m->colors;
}

size_t mp_hlo_module_warning_count(const mp_hlo_module_t *m)
{
	return m->n_warnings;
}

const char *mp_hlo_module_warning(const mp_hlo_module_t *m, size_t i)
{
	return i < m->n_warnings ? m->warnings[i] : NULL;
}

/* ---- legacy lookup by instruction name (old protos without instruction_id) ---- */

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const mp_hlo_module_t *m = ctx;
	const char *x = m->instrs[*(const int32_t *)a]->name;
	const char *y = m->instrs[*(const int32_t *)b]->name;

	return strcmp(x ? x : "", y ? y : "");
}

static int32_t find_by_name(const mp_hlo_module_t *m, const int32_t *sorted, const char *name)
{
	size_t lo = 0, hi = m->n_instrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *n = m->instrs[sorted[mid]]->name;
		int c = strcmp(n ? n : "", name);

		if (c == 0)
			return sorted[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int cmp_alloc(const void *a, const void *b)
{
	const mp_hlo_alloc_t *x = a, *y = b;

	if (x->proto->index != y->proto->index)
		return x->proto->index < y->proto->index ? -1 : 1;
	return x->proto < y->proto ? -1 : (x->proto > y->proto); /* stable: proto order */
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int add_color(mp_hlo_module_t *m, int64_t c, size_t *cap)
{
	for (size_t i = 0; i < m->n_colors; i++)
		if (m->colors[i] == c)
			return 0;
	if (MP_VEC_RESERVE(m->colors, *cap, m->n_colors + 1) < 0)
		return MP_ENOMEM;
	m->colors[m->n_colors++] = c;
	return 0;
}

static int index_instructions(mp_hlo_module_t *m, mp_i64map_t *by_id)
{
	const Xla__HloModuleProto *hm = m->proto->hlo_module;
	size_t n = 0, k = 0;
	int rc;

	for (size_t c = 0; c < hm->n_computations; c++)
		n += hm->computations[c]->n_instructions;
	if (n > INT32_MAX)
		return MP_ELIMIT;
	m->instrs = malloc((n ? n : 1) * sizeof(*m->instrs));
	if (!m->instrs || (rc = mp_i64map_reserve(by_id, n)) < 0)
		return MP_ENOMEM;
	for (size_t c = 0; c < hm->n_computations; c++) {
		const Xla__HloComputationProto *comp = hm->computations[c];

		for (size_t i = 0; i < comp->n_instructions; i++) {
			const Xla__HloInstructionProto *in = comp->instructions[i];

			m->instrs[k] = in;
			rc = mp_i64map_add(by_id, in->id, (int32_t)k);
			if (rc < 0)
				return rc;
			if (rc == 0)
				WARN(m, "instruction id %lld is used twice ('%s'); the first one is kept",
				     (long long)in->id, in->name ? in->name : "");
			k++;
		}
	}
	m->n_instrs = k;
	return 0;
}

/* Logical buffer protos by id (first wins); sizes made non-negative. */
static int index_logical_buffers(mp_hlo_module_t *m, mp_i64map_t *lbproto_by_id, size_t *color_cap)
{
	const Xla__BufferAssignmentProto *ba = m->ba;
	int rc;

	m->n_lbs = ba->n_logical_buffers;
	m->lbs = calloc(m->n_lbs ? m->n_lbs : 1, sizeof(*m->lbs));
	if (!m->lbs || (rc = mp_i64map_reserve(lbproto_by_id, m->n_lbs)) < 0 ||
	    (rc = mp_i64map_reserve(&m->lb_by_id, m->n_lbs)) < 0)
		return MP_ENOMEM;
	for (size_t i = 0; i < m->n_lbs; i++) {
		Xla__LogicalBufferProto *lb = m->proto->buffer_assignment->logical_buffers[i];

		if (lb->size < 0) { /* sizes are byte counts: keep the arithmetic away from negatives */
			WARN(m, "logical buffer %lld has a negative size; counted as 0", (long long)lb->id);
			lb->size = 0;
		}

		m->lbs[i].proto = lb;
		m->lbs[i].instr = -1;
		m->lbs[i].alloc = -1;
		if ((rc = mp_i64map_add(lbproto_by_id, lb->id, (int32_t)i)) < 0)
			return rc;
		if (rc == 0)
			WARN(m, "logical buffer id %lld appears twice; the first one is kept", (long long)lb->id);
		if ((rc = add_color(m, lb->color, color_cap)) < 0)
			return rc;
	}
	return 0;
}

/* Allocations in ascending index order (the reference iterates a hash
 * map); orig_to_sorted[i]: where the proto's allocation i went. */
static int index_allocations(mp_hlo_module_t *m, int32_t *orig_to_sorted, size_t *color_cap)
{
	const Xla__BufferAssignmentProto *ba = m->ba;
	mp_i64map_t pos = MP_I64MAP_INIT;
	int rc;

	for (size_t i = 0; i < m->n_allocs; i++) {
		if (ba->buffer_allocations[i]->size < 0) {
			WARN(m, "allocation %lld has a negative size; counted as 0",
			     (long long)ba->buffer_allocations[i]->index);
			m->proto->buffer_assignment->buffer_allocations[i]->size = 0;
		}
		m->allocs[i].proto = ba->buffer_allocations[i];
		m->allocs[i].trace_id = -1;
		if ((rc = add_color(m, ba->buffer_allocations[i]->color, color_cap)) < 0)
			return rc;
	}
	qsort(m->allocs, m->n_allocs, sizeof(*m->allocs), cmp_alloc);
	if ((rc = mp_i64map_reserve(&pos, m->n_allocs)) < 0)
		return rc;
	for (size_t i = 0; i < m->n_allocs; i++)
		if ((rc = mp_i64map_put(&pos, (int64_t)(uintptr_t)m->allocs[i].proto, (int32_t)i)) < 0) {
			mp_i64map_free(&pos);
			return rc;
		}
	for (size_t i = 0; i < m->n_allocs; i++)
		orig_to_sorted[i] = hlo_index(&pos, (int64_t)(uintptr_t)ba->buffer_allocations[i]);
	mp_i64map_free(&pos);
	for (size_t i = 1; i < m->n_allocs; i++)
		if (m->allocs[i].proto->index == m->allocs[i - 1].proto->index)
			WARN(m, "allocation index %lld appears twice", (long long)m->allocs[i].proto->index);
	return 0;
}

/* The instruction a logical buffer is defined at: by id, or by name in a
 * legacy proto whose defined_at names it (*by_name: the instructions
 * sorted by name, made at the first such buffer). < 0: none (or
 * MP_ENOMEM in *rc). */
static int32_t defining_instruction(mp_hlo_module_t *m, const Xla__LogicalBufferProto__Location *loc,
				    const mp_i64map_t *instr_by_id, int32_t **by_name, int *rc)
{
	if (loc && !loc->has_instruction_id && loc->instruction_name) {
		/* legacy proto: defined_at names the instruction */
		if (!*by_name) {
			*by_name = malloc((m->n_instrs ? m->n_instrs : 1) * sizeof(**by_name));
			if (!*by_name) {
				*rc = MP_ENOMEM;
				return -1;
			}
			for (size_t k = 0; k < m->n_instrs; k++)
				(*by_name)[k] = (int32_t)k;
			qsort_r(*by_name, m->n_instrs, sizeof(**by_name), cmp_name, m);
		}
		return find_by_name(m, *by_name, loc->instruction_name);
	}
	return hlo_index(instr_by_id, loc ? loc->instruction_id : 0);
}

/* Assigned logical buffers, in proto order (a later allocation
 * overwrites): their allocation, instruction, offset and shapes. */
static int assign_buffers(mp_hlo_module_t *m, const int32_t *orig_to_sorted, const mp_i64map_t *lbproto_by_id,
			  const mp_i64map_t *instr_by_id, int32_t **by_name)
{
	int rc = 0;

	for (size_t oi = 0; oi < m->n_allocs; oi++) {
		int32_t ai = orig_to_sorted[oi];
		mp_hlo_alloc_t *a = &m->allocs[ai];
		const Xla__BufferAllocationProto *ap = a->proto;

		a->lbs = malloc((ap->n_assigned ? ap->n_assigned : 1) * sizeof(*a->lbs));
		if (!a->lbs)
			return MP_ENOMEM;
		for (size_t j = 0; j < ap->n_assigned; j++) {
			const Xla__BufferAllocationProto__Assigned *as = ap->assigned[j];
			int32_t li = hlo_index(lbproto_by_id, as->logical_buffer_id), ii;
			const Xla__LogicalBufferProto__Location *loc;
			const Xla__ShapeProto *shape;
			mp_hlo_lb_t *lb;

			if (li < 0) {
				WARN(m, "allocation %lld assigns unknown logical buffer %lld (skipped)",
				     (long long)ap->index, (long long)as->logical_buffer_id);
				continue;
			}
			lb = &m->lbs[li];
			loc = lb->proto->defined_at;
			ii = defining_instruction(m, loc, instr_by_id, by_name, &rc);
			if (rc < 0)
				return rc;
			if (ii < 0) {
				WARN(m, "logical buffer %lld is defined at unknown instruction %lld (skipped)",
				     (long long)lb->proto->id, loc ? (long long)loc->instruction_id : 0LL);
				continue;
			}
			lb->instr = ii;
			lb->alloc = ai;
			lb->offset = as->offset;
			shape = m->instrs[ii]->shape;
			lb->shape_compat = mp_hlo_shape_resolve(shape, loc ? loc->shape_index : NULL,
								loc ? loc->n_shape_index : 0, true);
			lb->shape_full = mp_hlo_shape_resolve(shape, loc ? loc->shape_index : NULL,
							      loc ? loc->n_shape_index : 0, false);
			lb->unpadded_compat = mp_hlo_shape_unpadded_bytes(lb->shape_compat);
			lb->unpadded_full = mp_hlo_shape_unpadded_bytes(lb->shape_full);
			if ((rc = mp_i64map_put(&m->lb_by_id, lb->proto->id, li)) < 0)
				return rc;
			a->lbs[a->n_lbs++] = li;
		}
	}
	return 0;
}

/* Trace -> allocation: by the first event's buffer (the trace's own
 * buffer_allocation_index is not trustworthy). Later traces overwrite. */
static void link_traces(mp_hlo_module_t *m)
{
	const Xla__BufferAssignmentProto *ba = m->ba;

	for (size_t t = 0; t < ba->n_heap_simulator_traces; t++) {
		const Xla__HeapSimulatorTrace *tr = ba->heap_simulator_traces[t];
		int32_t li;

		if (!tr->n_events)
			continue;
		li = hlo_index(&m->lb_by_id, tr->events[0]->buffer_id);
		if (li >= 0 && m->lbs[li].alloc >= 0)
			m->allocs[m->lbs[li].alloc].trace_id = (int64_t)t;
	}
}

int mp_hlo_model_build(mp_hlo_arena_t *arena, Xla__HloProto *proto, mp_hlo_module_t **out, mp_diag_t *diag)
{
	mp_hlo_module_t *m = calloc(1, sizeof(*m));
	mp_i64map_t instr_by_id = {0}, lbproto_by_id = {0};
	int32_t *by_name = NULL, *orig_to_sorted = NULL;
	const Xla__BufferAssignmentProto *ba;
	size_t color_cap = 0;
	int rc;

	*out = NULL;
	if (!m) {
		mp_hlo_arena_free(arena);
		return MP_ENOMEM;
	}
	m->arena = arena;
	m->proto = proto;
	m->ba = ba = proto->buffer_assignment;
	if (ba->n_logical_buffers > INT32_MAX || ba->n_buffer_allocations > INT32_MAX) {
		rc = mp_diag_set(diag, MP_ELIMIT, -1, -1, "too many logical buffers or allocations");
		goto fail;
	}
	if ((rc = index_instructions(m, &instr_by_id)) < 0 || (rc = index_logical_buffers(m, &lbproto_by_id, &color_cap)) < 0)
		goto fail;
	m->n_allocs = ba->n_buffer_allocations;
	m->allocs = calloc(m->n_allocs ? m->n_allocs : 1, sizeof(*m->allocs));
	orig_to_sorted = malloc((m->n_allocs ? m->n_allocs : 1) * sizeof(*orig_to_sorted));
	if (!m->allocs || !orig_to_sorted) {
		rc = MP_ENOMEM;
		goto fail;
	}
	if ((rc = index_allocations(m, orig_to_sorted, &color_cap)) < 0 ||
	    (rc = assign_buffers(m, orig_to_sorted, &lbproto_by_id, &instr_by_id, &by_name)) < 0)
		goto fail;
	link_traces(m);
	if (m->n_colors)
		qsort(m->colors, m->n_colors, sizeof(*m->colors), cmp_i64);
	if (m->n_warnings_dropped) {
		size_t dropped = m->n_warnings_dropped;

		m->n_warnings--; /* make room for the summary in the capped list */
		free(m->warnings[m->n_warnings]);
		WARN(m, "%zu more warnings like these were not listed", dropped + 1);
	}
	mp_i64map_free(&instr_by_id);
	mp_i64map_free(&lbproto_by_id);
	free(by_name);
	free(orig_to_sorted);
	*out = m;
	return 0;
fail:
	if (rc == MP_ENOMEM)
		mp_diag_set(diag, rc, -1, -1, "out of memory while indexing the module");
	mp_i64map_free(&instr_by_id);
	mp_i64map_free(&lbproto_by_id);
	free(by_name);
	free(orig_to_sorted);
	mp_hlo_module_free(m);
	return rc;
}
