/* hlo_fixture.h - build HloProto messages with protobuf-c for tests and the
 * benchmark generator. Everything allocated belongs to the fixture and is
 * released by fx_free(). */
#ifndef MEMPROF_TEST_HLO_FIXTURE_H
#define MEMPROF_TEST_HLO_FIXTURE_H

#include "hlo_min.pb-c.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fx fx_t;

enum { FX_ALLOC = 0, FX_FREE = 1, FX_SHARE = 2 };
enum { FX_PARAM = 1, FX_OUTPUT = 2, FX_THREAD_LOCAL = 4, FX_CONSTANT = 8, FX_TUPLE = 16, FX_ALIASED = 32 };

fx_t *fx_new(const char *module_name, int64_t module_id);
void fx_free(fx_t *fx);
/* Array shape with a default {n-1..0} layout. */
Xla__ShapeProto *fx_array(fx_t *fx, int type, size_t n, const int64_t *dims);
Xla__ShapeProto *fx_tuple(fx_t *fx, size_t n, Xla__ShapeProto *const *elems);
/* Add a tile to a shape's layout; bits/space set element_size_in_bits / memory_space when > 0. */
void fx_tile(fx_t *fx, Xla__ShapeProto *s, size_t n, const int64_t *dims);
void fx_layout_extra(Xla__ShapeProto *s, int64_t bits, int64_t space);
/* Instruction in the (single) entry computation; returns it. */
Xla__HloInstructionProto *fx_instr(fx_t *fx, int64_t id, const char *name, const char *opcode,
				   Xla__ShapeProto *shape, const char *op_name);
Xla__LogicalBufferProto *fx_lb(fx_t *fx, int64_t id, int64_t size, int64_t instr_id, size_t n_index,
			       const int64_t *index, int64_t color);
Xla__BufferAllocationProto *fx_alloc(fx_t *fx, int64_t index, int64_t size, int64_t color, unsigned flags);
void fx_assign(fx_t *fx, Xla__BufferAllocationProto *a, int64_t lb_id, int64_t offset, int64_t size);
Xla__HeapSimulatorTrace *fx_trace(fx_t *fx);
void fx_event(fx_t *fx, Xla__HeapSimulatorTrace *t, int kind, int64_t buffer, int64_t share_with,
	      const char *instr_name);
/* Serialize. Caller frees the buffer with free(). */
uint8_t *fx_pack(fx_t *fx, size_t *len);
/* Drop the buffer assignment (a before_optimizations dump). */
void fx_drop_buffer_assignment(fx_t *fx);

#endif
