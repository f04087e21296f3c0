/* hlo_fixture.c - see hlo_fixture.h. */
#include "hlo_fixture.h"

#include <stdlib.h>
#include <string.h>

struct fx {
	void **blocks;
	size_t n_blocks, cap_blocks;
	Xla__HloProto proto;
	Xla__HloModuleProto module;
	Xla__HloComputationProto comp;
	Xla__HloComputationProto *comps[1];
	Xla__BufferAssignmentProto ba;
	size_t cap_instr, cap_lb, cap_alloc, cap_trace;
};

static void *fx_mem(fx_t *fx, size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		abort(); /* test helper: out of memory is fatal */
	if (fx->n_blocks == fx->cap_blocks) {
		fx->cap_blocks = fx->cap_blocks ? fx->cap_blocks * 2 : 256;
		fx->blocks = realloc(fx->blocks, fx->cap_blocks * sizeof(*fx->blocks));
		if (!fx->blocks)
			abort();
	}
	fx->blocks[fx->n_blocks++] = p;
	return p;
}

static char *fx_str(fx_t *fx, const char *s)
{
	char *d = fx_mem(fx, strlen(s) + 1);

	memcpy(d, s, strlen(s) + 1);
	return d;
}

/* Append to a repeated field of pointers, growing by doubling. */
static void **push(fx_t *fx, void **arr, size_t *n, size_t *cap, void *item)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		void **na = fx_mem(fx, nc * sizeof(*na));

		if (*n)
			memcpy(na, arr, *n * sizeof(*na));
		arr = na;
		*cap = nc;
	}
	arr[(*n)++] = item;
	return arr;
}

fx_t *fx_new(const char *module_name, int64_t module_id)
{
	fx_t *fx = calloc(1, sizeof(*fx));

	if (!fx)
		abort();
	xla__hlo_proto__init(&fx->proto);
	xla__hlo_module_proto__init(&fx->module);
	xla__hlo_computation_proto__init(&fx->comp);
	xla__buffer_assignment_proto__init(&fx->ba);
	fx->module.name = fx_str(fx, module_name);
	fx->module.entry_computation_name = fx_str(fx, "main");
	fx->module.has_id = 1;
	fx->module.id = module_id;
	fx->comp.name = fx_str(fx, "main");
	fx->comps[0] = &fx->comp;
	fx->module.n_computations = 1;
	fx->module.computations = fx->comps;
	fx->proto.hlo_module = &fx->module;
	fx->proto.buffer_assignment = &fx->ba;
	return fx;
}

void fx_free(fx_t *fx)
{
	if (!fx)
		return;
	for (size_t i = 0; i < fx->n_blocks; i++)
		free(fx->blocks[i]);
	free(fx->blocks);
	free(fx);
}

Xla__ShapeProto *fx_array(fx_t *fx, int type, size_t n, const int64_t *dims)
{
	Xla__ShapeProto *s = fx_mem(fx, sizeof(*s));
	Xla__LayoutProto *l = fx_mem(fx, sizeof(*l));

	xla__shape_proto__init(s);
	xla__layout_proto__init(l);
	s->has_element_type = 1;
	s->element_type = type;
	s->n_dimensions = n;
	s->dimensions = fx_mem(fx, n * sizeof(int64_t));
	if (n)
		memcpy(s->dimensions, dims, n * sizeof(int64_t));
	l->n_minor_to_major = n;
	l->minor_to_major = fx_mem(fx, n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		l->minor_to_major[i] = (int64_t)(n - 1 - i);
	s->layout = l;
	return s;
}

Xla__ShapeProto *fx_tuple(fx_t *fx, size_t n, Xla__ShapeProto *const *elems)
{
	Xla__ShapeProto *s = fx_mem(fx, sizeof(*s));

	xla__shape_proto__init(s);
	s->has_element_type = 1;
	s->element_type = 13;
	s->n_tuple_shapes = n;
	s->tuple_shapes = fx_mem(fx, n * sizeof(*s->tuple_shapes));
	for (size_t i = 0; i < n; i++)
		s->tuple_shapes[i] = elems[i];
	return s;
}

void fx_tile(fx_t *fx, Xla__ShapeProto *s, size_t n, const int64_t *dims)
{
	Xla__TileProto *t = fx_mem(fx, sizeof(*t));
	Xla__LayoutProto *l = s->layout;
	Xla__TileProto **nt = fx_mem(fx, (l->n_tiles + 1) * sizeof(*nt));

	xla__tile_proto__init(t);
	t->n_dimensions = n;
	t->dimensions = fx_mem(fx, n * sizeof(int64_t));
	memcpy(t->dimensions, dims, n * sizeof(int64_t));
	if (l->n_tiles)
		memcpy(nt, l->tiles, l->n_tiles * sizeof(*nt));
	nt[l->n_tiles++] = t;
	l->tiles = nt;
}

void fx_layout_extra(Xla__ShapeProto *s, int64_t bits, int64_t space)
{
	if (bits > 0) {
		s->layout->has_element_size_in_bits = 1;
		s->layout->element_size_in_bits = bits;
	}
	if (space > 0) {
		s->layout->has_memory_space = 1;
		s->layout->memory_space = space;
	}
}

Xla__HloInstructionProto *fx_instr(fx_t *fx, int64_t id, const char *name, const char *opcode,
				   Xla__ShapeProto *shape, const char *op_name)
{
	Xla__HloInstructionProto *in = fx_mem(fx, sizeof(*in));

	xla__hlo_instruction_proto__init(in);
	in->name = fx_str(fx, name);
	in->opcode = fx_str(fx, opcode);
	in->shape = shape;
	in->has_id = 1;
	in->id = id;
	if (op_name) {
		Xla__OpMetadata *md = fx_mem(fx, sizeof(*md));

		xla__op_metadata__init(md);
		md->op_name = fx_str(fx, op_name);
		md->source_file = fx_str(fx, "model.py");
		md->has_source_line = 1;
		md->source_line = (int32_t)(id % 1000);
		in->metadata = md;
	}
	fx->comp.instructions = (Xla__HloInstructionProto **)push(
		fx, (void **)fx->comp.instructions, &fx->comp.n_instructions, &fx->cap_instr, in);
	return in;
}

Xla__LogicalBufferProto *fx_lb(fx_t *fx, int64_t id, int64_t size, int64_t instr_id, size_t n_index,
			       const int64_t *index, int64_t color)
{
	Xla__LogicalBufferProto *lb = fx_mem(fx, sizeof(*lb));
	Xla__LogicalBufferProto__Location *loc = fx_mem(fx, sizeof(*loc));

	xla__logical_buffer_proto__init(lb);
	xla__logical_buffer_proto__location__init(loc);
	lb->has_id = 1;
	lb->id = id;
	lb->has_size = 1;
	lb->size = size;
	lb->has_color = color != 0;
	lb->color = color;
	/* proto3 writers omit zero values: an id of 0 is simply absent. */
	loc->has_instruction_id = instr_id != 0;
	loc->instruction_id = instr_id;
	loc->n_shape_index = n_index;
	loc->shape_index = fx_mem(fx, n_index * sizeof(int64_t));
	if (n_index)
		memcpy(loc->shape_index, index, n_index * sizeof(int64_t));
	lb->defined_at = loc;
	fx->ba.logical_buffers = (Xla__LogicalBufferProto **)push(
		fx, (void **)fx->ba.logical_buffers, &fx->ba.n_logical_buffers, &fx->cap_lb, lb);
	return lb;
}

Xla__BufferAllocationProto *fx_alloc(fx_t *fx, int64_t index, int64_t size, int64_t color, unsigned flags)
{
	Xla__BufferAllocationProto *a = fx_mem(fx, sizeof(*a));

	xla__buffer_allocation_proto__init(a);
	a->has_index = index != 0;
	a->index = index;
	a->has_size = 1;
	a->size = size;
	a->has_color = color != 0;
	a->color = color;
	a->has_is_entry_computation_parameter = a->is_entry_computation_parameter = !!(flags & FX_PARAM);
	a->has_maybe_live_out = a->maybe_live_out = !!(flags & FX_OUTPUT);
	a->has_is_thread_local = a->is_thread_local = !!(flags & FX_THREAD_LOCAL);
	a->has_is_constant = a->is_constant = !!(flags & FX_CONSTANT);
	a->has_is_tuple = a->is_tuple = !!(flags & FX_TUPLE);
	a->has_is_parameter_aliased_with_output = a->is_parameter_aliased_with_output = !!(flags & FX_ALIASED);
	fx->ba.buffer_allocations = (Xla__BufferAllocationProto **)push(
		fx, (void **)fx->ba.buffer_allocations, &fx->ba.n_buffer_allocations, &fx->cap_alloc, a);
	return a;
}

void fx_assign(fx_t *fx, Xla__BufferAllocationProto *a, int64_t lb_id, int64_t offset, int64_t size)
{
	Xla__BufferAllocationProto__Assigned *as = fx_mem(fx, sizeof(*as));
	size_t n = a->n_assigned;

	xla__buffer_allocation_proto__assigned__init(as);
	as->has_logical_buffer_id = 1;
	as->logical_buffer_id = lb_id;
	as->has_offset = offset != 0;
	as->offset = offset;
	as->has_size = 1;
	as->size = size;
	if ((n & (n - 1)) == 0) { /* grow at powers of two: generated modules assign 100k+ buffers */
		Xla__BufferAllocationProto__Assigned **na = fx_mem(fx, (n ? n * 2 : 1) * sizeof(*na));

		if (n)
			memcpy(na, a->assigned, n * sizeof(*na));
		a->assigned = na;
	}
	a->assigned[a->n_assigned++] = as;
}

Xla__HeapSimulatorTrace *fx_trace(fx_t *fx)
{
	Xla__HeapSimulatorTrace *t = fx_mem(fx, sizeof(*t));

	xla__heap_simulator_trace__init(t);
	t->has_whole_module_simulation = t->whole_module_simulation = 1;
	fx->ba.heap_simulator_traces = (Xla__HeapSimulatorTrace **)push(
		fx, (void **)fx->ba.heap_simulator_traces, &fx->ba.n_heap_simulator_traces, &fx->cap_trace, t);
	return t;
}

void fx_event(fx_t *fx, Xla__HeapSimulatorTrace *t, int kind, int64_t buffer, int64_t share_with,
	      const char *instr_name)
{
	Xla__HeapSimulatorTrace__Event *e = fx_mem(fx, sizeof(*e));

	xla__heap_simulator_trace__event__init(e);
	e->has_kind = kind != 0;
	e->kind = kind;
	e->has_buffer_id = 1;
	e->buffer_id = buffer;
	e->has_share_with_canonical_id = kind == FX_SHARE;
	e->share_with_canonical_id = share_with;
	e->instruction_name = fx_str(fx, instr_name ? instr_name : "");
	e->computation_name = fx_str(fx, "main");
	/* the trace's own array: reallocate at powers of two (fixture sizes are small or built in bulk) */
	{
		size_t n = t->n_events;

		if ((n & (n - 1)) == 0) {
			Xla__HeapSimulatorTrace__Event **ne = fx_mem(fx, (n ? n * 2 : 1) * sizeof(*ne));

			if (n)
				memcpy(ne, t->events, n * sizeof(*ne));
			t->events = ne;
		}
		t->events[t->n_events++] = e;
	}
}

uint8_t *fx_pack(fx_t *fx, size_t *len)
{
	size_t n = xla__hlo_proto__get_packed_size(&fx->proto);
	uint8_t *buf = malloc(n ? n : 1);

	if (!buf)
		abort();
	*len = xla__hlo_proto__pack(&fx->proto, buf);
	return buf;
}

void fx_drop_buffer_assignment(fx_t *fx)
{
	fx->proto.buffer_assignment = NULL;
}
