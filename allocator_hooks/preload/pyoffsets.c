/* pyoffsets.c - the per-version layout table (pyoffsets.h). Figures from
 * offsetof() against CPython 3.11.7, 3.12.1 and 3.13.0's headers
 * (internal/pycore_frame.h, cpython/code.h, cpython/unicodeobject.h, and
 * cpython/pystate.h); they hold across each minor version's patch
 * releases, whose structures CPython keeps stable. test_hooks_pystack
 * compares them with the headers of every installed Python. */
#include "pyoffsets.h"

#include <stddef.h>

static const mp_pyoffsets_t table[] = {
	{.minor = 11, .ts_cframe = 56, .cframe_current_frame = 8, .ts_current_frame = -1,
	 .fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69, .fr_is_entry = 68,
	 .owner_cstack = -1, .owner_generator = 1,
	 .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 72,
	 .co_firsttraceable = 168, .co_code_adaptive = 184, .ob_type = 8,
	 .u_length = 16, .u_state = 32, .u_ascii_size = 48, .u_compact_size = 72,
	 .u_kind_shift = 2, .u_compact_shift = 5, .u_ascii_shift = 6},
	{.minor = 12, .ts_cframe = 56, .cframe_current_frame = 0, .ts_current_frame = -1,
	 .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_is_entry = -1,
	 .owner_cstack = 3, .owner_generator = 1,
	 .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 68,
	 .co_firsttraceable = 176, .co_code_adaptive = 192, .ob_type = 8,
	 .u_length = 16, .u_state = 32, .u_ascii_size = 40, .u_compact_size = 56,
	 .u_kind_shift = 2, .u_compact_shift = 5, .u_ascii_shift = 6},
	{.minor = 13, .ts_cframe = -1, .cframe_current_frame = -1, .ts_current_frame = 72,
	 .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_is_entry = -1,
	 .owner_cstack = 3, .owner_generator = 1,
	 .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 68,
	 .co_firsttraceable = 184, .co_code_adaptive = 200, .ob_type = 8,
	 .u_length = 16, .u_state = 32, .u_ascii_size = 40, .u_compact_size = 56,
	 .u_kind_shift = 2, .u_compact_shift = 5, .u_ascii_shift = 6},
};

const mp_pyoffsets_t *mp__pyoffsets(int minor)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].minor == minor)
			return &table[i];
	return NULL;
}
