/* stacks.c - `memprof record --stacks`: a call stack per host allocation.
 *
 * MEMPROF_STACKS selects the unwinder (docs/hooks.md):
 *   1 / unwind  libunwind's unw_backtrace (DWARF CFI, with libunwind's
 *               per-thread cache of unwind info per address): correct through
 *               code built without frame pointers -- glibc, libstdc++'s
 *               operator new, most distribution binaries. The default when
 *               the library was built with libunwind.
 *   fp          a frame-pointer walk: cheaper, but a chain stops (or goes
 *               astray, bounded by the thread's stack) at the first frame
 *               built without frame pointers. The fallback without libunwind.
 * At most MP_STACK_DEPTH frames are kept (the innermost), after dropping
 * the frames inside this library. In a CPython 3.11-3.13 (pystack.c), the
 * interpreter loop's native frames are replaced by the Python frames they
 * run (merge_python).
 *
 * On the event path nothing here allocates or locks: unwinding reads the
 * stack and libunwind's caches, and mp_writer_stack is a lock-free lookup
 * once a stack has been seen (the first sight takes the writer's defs
 * mutex; see src/core/write/wstack.c). errno is restored by the hook (leave()),
 * which runs after us. Recursion: we run with the thread's guard held, so
 * whatever libunwind allocates reaches the original allocator unrecorded.
 */
#include "preload.h"

#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MEMPROF_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

int mp__stacks_on;
static int use_fp;
static int use_cache = 1; /* MEMPROF_STACKS_CACHE=0: unwind every time (stackcache.c) */
int mp__stacks_depth = MP_STACK_DEPTH;
static uint64_t self_lo, self_hi; /* this library's segments: frames to drop */

/* The thread's stack top, for the frame-pointer walk (0: not known yet). */
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));
extern void *__libc_stack_end;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t me = (uint64_t)(uintptr_t)arg, lo = UINT64_MAX, hi = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (me >= lo && me < hi) {
		self_lo = lo;
		self_hi = hi;
		return 1;
	}
	return 0;
}

void mp__stacks_configure(void)
{
	const char *v = getenv("MEMPROF_STACKS"), *d = getenv("MEMPROF_STACK_DEPTH");

	mp__stacks_on = 0;
	if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no"))
		return;
	mp__stacks_on = 1;
#ifdef MEMPROF_HAVE_LIBUNWIND
	use_fp = !strcmp(v, "fp");
#else
	use_fp = 1;
#endif
	v = getenv("MEMPROF_STACKS_CACHE");
	use_cache = !(v && !strcmp(v, "0"));
	if (d && *d) {
		long n = strtol(d, NULL, 10);
		if (n >= 1 && n <= MP_STACK_DEPTH)
			mp__stacks_depth = (int)n;
	}
	mp__py_configure();
	if (!self_hi)
		dl_iterate_phdr(find_self, (void *)(uintptr_t)&mp__stacks_configure);
#ifdef MEMPROF_HAVE_LIBUNWIND
	if (!use_fp)
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
#endif
}

void mp__stacks_start(mp_writer_t *w)
{
	if (mp__stacks_on)
		mp_writer_modules(w);
	mp__py_start();
}

static uintptr_t thread_stack_hi(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0), top = (uintptr_t)__libc_stack_end;
	uintptr_t self = (uintptr_t)pthread_self();

	/* The initial thread: every frame is below where the process started
	 * (thread stacks are mappings at least 128 MiB below that). */
	if (here < top && top - here < (64u << 20))
		return top;
	/* Any other thread (or a child forked from one): glibc puts the
	 * thread's descriptor, which the thread pointer names, at the top of
	 * its stack block -- also of a stack the program gave it -- above its
	 * static TLS and every frame. Read, not asked: pthread_getattr_np()
	 * allocates while it holds the thread's lock, and asking it from a
	 * hook inside it (the JVM's new threads call it first thing) waited
	 * on that lock for ever. */
	if (self > here && self - here < (1u << 30))
		return self;
	return 1; /* unknown: no frames rather than a guess */
}

/* Walk the rbp chain: each frame holds the caller's frame pointer and the
 * return address above it. Stops at anything that does not look like the
 * next frame of this thread's stack, so a frame without a frame pointer
 * ends the walk instead of faulting. */
static __attribute__((noinline)) int walk_fp(uint64_t *pcs, int max)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0), lo = fp, hi = stack_hi;
	int n = 0;

	if (__builtin_expect(!hi, 0))
		hi = stack_hi = thread_stack_hi();
	while (n < max && fp >= lo && fp + 16 <= hi && (fp & 7) == 0) {
		const uintptr_t *f = (const uintptr_t *)fp;
		if (f[1] < 4096)
			break;
		pcs[n++] = f[1];
		if (f[0] <= fp)
			break;
		fp = f[0];
	}
	return n;
}

/* Native pcs (innermost first) with the Python frames of the calling
 * thread merged in: a pc in _PyEval_EvalFrameDefault is one C call of the
 * interpreter, replaced by the frames that call runs (the next group of
 * the chain; an empty group keeps the pc); frames left when the natives
 * end (the depth cut them, or an unwind that stopped early) follow. At
 * most max values, the innermost. */
static int merge_python(const uint64_t *pcs, int n, uint64_t *out, int max)
{
	uint64_t py[MP_STACK_DEPTH];
	uint8_t groups[MP_STACK_DEPTH];
	int np, ng, g = 0, at = 0, k = 0, i, j;

	np = mp__py_walk(mp__writer, py, max, groups, &ng);
	for (i = 0; i < n && k < max; i++) {
		if (pcs[i] - mp__py_eval_lo < mp__py_eval_hi - mp__py_eval_lo && g < ng) {
			if (groups[g] == 0) {
				out[k++] = pcs[i];
			} else {
				for (j = 0; j < groups[g] && k < max; j++)
					out[k++] = py[at + j];
			}
			at += groups[g++];
		} else {
			out[k++] = pcs[i];
		}
	}
	while (at < np && k < max)
		out[k++] = py[at++];
	return k;
}

/* Out of line: a program that is not a Python keeps
 * mp__stacks_id's frame as it was (no merge buffer), one branch more. */
static __attribute__((noinline)) int id_merged(const uint64_t *pcs, int n, uint32_t *id)
{
	uint64_t merged[MP_STACK_DEPTH];

	n = merge_python(pcs, n, merged, mp__stacks_depth);
	return n > 0 && mp_writer_stack(mp__writer, merged, (uint32_t)n, id) == 0;
}

/* The calling thread's stack's id (mp__stacks_id), inline in both of its
 * callers: every allocation of a program with --stacks goes through
 * mp__stacks_record, which stays one call. */
static inline __attribute__((always_inline)) int stack_id(uint32_t *out)
{
	uint64_t raw[MP_STACK_DEPTH + 16];
	int n, skip = 0, max = mp__stacks_depth + 16;
	uint32_t id;
#ifdef MEMPROF_HAVE_LIBUNWIND
	uint64_t start[3] = {0, 0, 0};
	int fill = 0;
#endif

#ifdef MEMPROF_HAVE_LIBUNWIND
	/* The cache knows native frames only. In a Python (mp__py_on) one C
	 * stack runs many Python stacks -- the eval loop calls Python
	 * functions without a C call -- so the same native frames under other
	 * Python frames would take the wrong id: no cache there. */
	if (!use_fp && use_cache && !mp__py_on) {
		/* The id of the whole stack as unwound. */
		if (mp__stackcache_hit(mp__writer, self_lo, self_hi, &id, start)) {
			*out = id; /* the same stack as last time here */
			return 1;
		}
		n = mp__stackcache_walk(start, raw, max, &fill);
	} else if (!use_fp) {
		n = mp__stackcache_backtrace(raw, max);
	} else
#endif
		n = walk_fp(raw, max);
	while (skip < n && raw[skip] >= self_lo && raw[skip] < self_hi)
		skip++; /* our own frames: the hook, this function */
	n -= skip;
	if (__builtin_expect(mp__py_on, 0))
		return id_merged(raw + skip, n, out);
	if (n > mp__stacks_depth)
		n = mp__stacks_depth;
	if (n <= 0 || mp_writer_stack(mp__writer, raw + skip, (uint32_t)n, &id) != 0)
		return 0;
#ifdef MEMPROF_HAVE_LIBUNWIND
	mp__stackcache_put(mp__writer, start, fill, id);
#endif
	*out = id;
	return 1;
}

void mp__stacks_record(void)
{
	uint32_t id;

	if (stack_id(&id))
		mp_writer_next_stack(mp__writer, id);
}

int mp__stacks_id(uint32_t *id)
{
	return stack_id(id);
}

int mp__stacks_python_id(uint32_t *id)
{
	int r = 0;

	if (mp__py_on)
		r = mp__py_stack(mp__writer, mp__stacks_depth, id);
	if (r == 0)
		mp__stacks_record();
	return r > 0;
}

void mp__stacks_record_python(void)
{
	uint32_t id;

	if (mp__stacks_python_id(&id))
		mp_writer_next_stack(mp__writer, id);
}
