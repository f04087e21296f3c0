/* memprof/torch.h - PyTorch CUDA memory snapshots (the pickles of
 * torch.cuda.memory._dump_snapshot) as an event source.
 *
 * Each device N of the snapshot gives two memory ids: "cuda:N" (the
 * allocated blocks, in block bytes as torch.cuda.memory_allocated() counts
 * them, inside the regions that are the caching allocator's segments -- so
 * fragmentation is exact inside them) and "cuda:N reserved" (the segments
 * themselves, as allocations: the reserved bytes and their peak); a third,
 * "cuda:N awaiting another stream", when some free waited on another
 * stream. The state before the first trace entry is rebuilt from the
 * segments at dump time and the trace (see docs/torch.md); allocations
 * older than the trace are at its start, named by the dump's frames where
 * they have them. The source's notes (mp_source_notes) give PyTorch's own
 * counters and the check of the replay against the dump.
 *
 * Reading is one streaming pass over the file (raw or gzip) with the
 * reader of memprof/pickle.h: trace entries become 32-byte records (and
 * the 4-byte id of their stack) as they are read and their dicts are
 * freed; frames are interned per distinct stack. Memory: 36 bytes per
 * trace entry, the segments at dump time, the distinct frames, stacks (4
 * bytes per frame of each) and strings -- never the pickle's object tree.
 *
 * Stacks: an event made from a trace entry or a block with frames carries
 * a stack id (mp_event_t.stack, one per distinct frames list, from 1), and
 * mp_source_stack_frames() gives its frames, innermost first, with their
 * kind (MP_FRAME_PYTHON for a .py file or <frozen ...>/<string> code,
 * MP_FRAME_NATIVE for the others).
 */
#ifndef MEMPROF_TORCH_H
#define MEMPROF_TORCH_H

#include <memprof/error.h>
#include <memprof/source.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mp_torch_options {
	/* The op of an allocation is the innermost frame of its stack in the
	 * user's code: frames in torch/, the Python standard library,
	 * installed packages (site-packages, dist-packages), C/C++ frames and
	 * <frozen ...> are skipped; without one, a package's frame, else the
	 * autograd node and ATen operator of the C++ frames (docs/torch.md
	 * "Attribution"). 1: the innermost frame, whichever it is. */
	int all_frames;
	/* Python files that count as the user's code too, comma-separated:
	 * "packages" (every installed package but torch), a package's name
	 * ("transformers": its files under site-packages or dist-packages) or
	 * a path prefix (an item with a '/'). NULL: none. Read only while
	 * mp_torch_open_source() runs. */
	const char *user_code;
} mp_torch_options_t;

/* Open a snapshot (raw or gzip) as an event source. opts may be NULL. On
 * success *out is owned by the caller (free with mp_source_close()); on
 * failure *out is NULL and diag names the file, the byte offset in the
 * (decompressed) pickle and what was wrong. */
int mp_torch_open_source(mp_source_t **out, const char *path, const mp_torch_options_t *opts, mp_diag_t *diag);

/* 1 if src was opened by mp_torch_open_source(). */
int mp_torch_is_source(const mp_source_t *src);

/* What the snapshot held (0s for another source). */
typedef struct mp_torch_info {
	uint32_t devices;
	uint64_t segments;        /* at dump time */
	uint64_t blocks;          /* allocated (or awaiting free) at dump time */
	uint64_t trace_entries;   /* all devices */
	uint64_t before_trace;    /* allocations live before the first trace entry */
	uint64_t pending_frees;   /* free_requested not directly completed (another stream) */
	uint32_t stacks;          /* distinct frame lists */
} mp_torch_info_t;
void mp_torch_info(const mp_source_t *src, mp_torch_info_t *info);

/* 1 when path looks like a snapshot: named *.pickle, *.pickle.gz, *.pkl,
 * *.pkl.gz, or its (decompressed) first bytes are a pickle's PROTO 2..5
 * opcode; 0 otherwise (a .memprof capture, an xplane file). */
int mp_torch_path_is_candidate(const char *path);

#ifdef __cplusplus
}
#endif
#endif
