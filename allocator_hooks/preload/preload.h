/* preload.h - libmemprof_preload.so internals: the hooked symbol list, the
 * originals we forward to, the recording session.
 *
 * Threading model: every hook runs with the calling thread's recursion
 * guard set (initial-exec TLS, so reading it never allocates). Anything the
 * hook calls -- the writer, glibc internals, dlsym -- that allocates again
 * reaches the original allocator unrecorded. The guard is also how the
 * writer's flusher thread and signal handlers that interrupt a hook stay
 * untraced. There is no lock on the event path.
 */
#ifndef MP_PRELOAD_H
#define MP_PRELOAD_H

#include <memprof/writer.h>

#include "wthread_path.h" /* mp__wthread_tls.no_help (the spinlock's) */

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MP_EXPORT __attribute__((visibility("default")))

/* The allocator functions we interpose and forward, in one list:
 *   X(name, return type, (parameters), required)
 * A required original must resolve or tracing stays off; an optional one
 * is emulated with the required ones when the allocator below lacks it. */
#define MP_REAL_FUNCTIONS(X)                                              \
	X(malloc, void *, (size_t), 1)                                    \
	X(free, void, (void *), 1)                                        \
	X(calloc, void *, (size_t, size_t), 1)                            \
	X(realloc, void *, (void *, size_t), 1)                           \
	X(memalign, void *, (size_t, size_t), 1)                          \
	X(posix_memalign, int, (void **, size_t, size_t), 0)              \
	X(aligned_alloc, void *, (size_t, size_t), 0)                     \
	X(valloc, void *, (size_t), 0)                                    \
	X(pvalloc, void *, (size_t), 0)                                   \
	X(reallocarray, void *, (void *, size_t, size_t), 0)              \
	X(malloc_usable_size, size_t, (void *), 0)

typedef struct mp_real {
#define MP__REAL_FIELD(name, ret, params, req) ret(*name) params;
	MP_REAL_FUNCTIONS(MP__REAL_FIELD)
#undef MP__REAL_FIELD
} mp_real_t;

/* The originals; valid from load time (glibc's __libc_* entry points), and
 * replaced by dlsym(RTLD_NEXT) ones in mp__real_resolve() when another
 * allocator sits below us. */
extern mp_real_t mp__real;
/* 1 when the originals are glibc's ptmalloc (chunk headers readable). */
extern int mp__real_is_glibc;

/* Resolve the originals (once, from the constructor, guard held). Returns 0
 * or -1 when a required one is missing. */
int mp__real_resolve(void);
/* Whether code addresses a and b lie in the same loaded object (dladdr);
 * 0 when either is NULL or unknown. */
int mp__same_object(const void *a, const void *b);
/* The C++ operator new and delete after ours (cxx.c), and whether each is
 * the replacing allocator's own (recorded by ours): once, right after
 * mp__real_resolve. */
void mp__cxx_resolve(void);
/* Bootstrap arena: allocations made while dlsym runs inside the resolution
 * are served from a static buffer that free() must ignore. */
extern _Atomic int mp__bootstrapping;
void *mp__boot_alloc(size_t size, size_t align);
size_t mp__boot_size(const void *p);

#define MP_BOOT_BYTES 16384
extern unsigned char mp__boot_arena[MP_BOOT_BYTES];

/* Whether p came from the bootstrap arena (inline: every free asks). */
static inline int mp__boot_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)mp__boot_arena < MP_BOOT_BYTES;
}

/* ---- the recording session (session.c) ---- */

enum {
	MP_ST_UNINIT = 0, /* before the constructor: forward, record nothing */
	MP_ST_ACTIVE = 1, /* recording */
	MP_ST_OFF = 2,    /* not recording (disabled, window over, closed) */
	MP_ST_WAIT = 3,   /* capture window not open yet (MEMPROF_DELAY_MS) */
	MP_ST_FORKED = 4, /* forked child: open our own capture on first event */
	MP_ST_BUSY = 5,   /* the session is being opened or closed */
};

extern _Atomic int mp__state;
extern mp_writer_t *mp__writer;

/* A block of MP_PROMPT_BYTES or more, allocated or freed, is on disk
 * within about a millisecond, not at the next round (mp__net_moved, below,
 * after its record: mp__prompt_if_large, writer_internal.h).
 *
 * So is the same amount made of small blocks. A process that grows fast
 * grows by many small blocks as often as by large ones (a Python list of
 * objects, a parser's tree, a cache filling), and when the OOM killer
 * takes it, what it made in its last flush interval went with it: a
 * Python process appending 1000-byte objects in a 300 MiB memory cgroup
 * left captures with peaks of 0 B, 6.83 MiB and 76.70 MiB, where it had
 * made about 240 MiB of them when it was killed (docs/hooks.md, "Growth
 * by small blocks"). So each thread keeps its net host memory
 * (the glibc chunk bytes it allocated less those it freed, and its own
 * anonymous mappings mapped less unmapped; hooks.c), and whenever that
 * has moved by a quarter of MP_PROMPT_BYTES since it last said so, it
 * tells the writer (mp__writer_net_moved), which sums the threads' moves
 * and asks for a round each time the process has grown 4 MiB beyond the
 * highest it was (or dropped 16 MiB, or an eighth, below its last top):
 * one that grows gets a round every 4 MiB, at most every
 * MP_PROMPT_GAP_NS; one in a steady state, or whose threads hand their
 * blocks to each other (one's heap grows, the other's shrinks), does not.
 * A thread's own figure on the event path, no shared counter there. Under
 * another allocator the chunk bytes are unknown (0) and only mappings
 * move it. */
extern __thread int64_t mp__net_moved_by __attribute__((tls_model("initial-exec")));

#define MP_NET_REPORT_BYTES (MP_PROMPT_BYTES / 4)

/* After recording an event that moved the calling thread's net host memory
 * by delta bytes, of a block of `block` bytes (a realloc's larger one; 0:
 * the record asked already): both rules above (w NULL: no writer; the
 * figure moves all the same). What is kept is how far the memory moved
 * since the thread last told the writer. */
static inline void mp__net_moved(mp_writer_t *w, int64_t delta, uint64_t block)
{
	int64_t d = mp__net_moved_by + delta;

	mp__prompt_if_large(w, block);

	/* |d| >= MP_NET_REPORT_BYTES, in one compare */
	if (__builtin_expect((uint64_t)(d + MP_NET_REPORT_BYTES) >= 2 * (uint64_t)MP_NET_REPORT_BYTES, 0)) {
		if (w)
			mp__writer_net_moved(w, d);
		d = 0;
	}
	mp__net_moved_by = d;
}

extern uint32_t mp__host;            /* the memory id "host" */

/* Whether the capture window has yet to open (MEMPROF_DELAY_MS), by a
 * clock that costs a few ns (session.c). */
int mp__session_waiting(void);

/* Whether a hook may forward at once, before it even takes the guard: not
 * recording, for good (disabled, the window over, closed) or until the
 * window opens. A state read without the guard is enough: a hook that
 * misses a switch by a call forwards or records one call it would
 * not have, as one that started that call a moment earlier would. So a
 * process that is not recording pays a few instructions a call. */
static inline int mp__session_idle(int st)
{
	return st == MP_ST_OFF || (st == MP_ST_WAIT && mp__session_waiting());
}

/* Our library in LD_PRELOAD: the items of list (an LD_PRELOAD value,
 * split on ':' and ' ' as the loader does) other than ours, ':'-joined
 * into out (n bytes, NUL-terminated; an item that does not fit is left
 * out); returns their length. For --no-children and for programs of
 * another C library (exec.c). */
#define PRELOAD_NAME "libmemprof_preload"
size_t mp__preload_others(const char *list, char *out, size_t n);

/* The recursion guard (initial-exec TLS): 0 outside the hooks, 1 inside
 * one, MP_GUARD_CXX_NEW inside a replacing allocator's throwing operator
 * new (cxx.c), where malloc notes the block it forwards in mp__cxx_noted:
 * libstdc++ allocates the std::bad_alloc it throws with malloc, and the
 * hook records that block as the exception passes, so that its free later
 * is not of a block the capture never saw. */
extern __thread int mp__guard __attribute__((tls_model("initial-exec")));
#define MP_GUARD_CXX_NEW 2
typedef struct {
	void *p;
	size_t n;
} mp_cxx_noted_t;
extern __thread mp_cxx_noted_t mp__cxx_noted __attribute__((tls_model("initial-exec")));

/* Called when mp__state is not ACTIVE or the window may have ended: opens
 * the capture if it is time to (window start, forked child). Returns 1 when
 * the event should be recorded. Guard held by the caller. */
int mp__session_slow(void);

/* Whether this process opened the capture being written: not so in a
 * vfork child, which shares the parent's memory but runs no atfork
 * handlers, and must leave the parent's writer alone. */
int mp__session_owned(void);
/* Close the capture cleanly now (exec, _exit, abort, exit). Guard held. */
void mp__session_close(void);
/* After a failed exec: continue recording into a new capture. */
void mp__session_reopen(void);
/* --no-children / MEMPROF_CHILDREN=0: whether exec'd programs are traced. */
int mp__children_traced(void);
/* In a run directory, the path of its file of reaped children's ends
 * (reap.c, docs/format.md "Runs"); else NULL. */
const char *mp__session_ends(void);

/* ---- the spinlock of the rare paths (host regions, the mapping table) ---- */

/* No futex and nothing to allocate, so it is safe anywhere in the hooks;
 * the paths it guards are short and rare. A waiter spins on a plain load
 * (the line stays shared), with a pause, and after a while yields its CPU:
 * on an oversubscribed machine the holder may have been preempted, and
 * spinning through whole time slices then only delays it. (2000 threads
 * on 2 CPUs spent 67% of their time in a bare exchange loop here, 2.9 s
 * against 0.08 s untraced.) A thread holding it runs no flush round of its
 * own (help.c): the records it makes under the lock would hold the lock
 * through the round, and a round may not wait on the preload's locks. */
#define MP_SPIN_BEFORE_YIELD 128

static inline void mp__spin_take(_Atomic int *l)
{
	unsigned spins = 0;

	while (atomic_exchange_explicit(l, 1, memory_order_acquire)) {
		while (atomic_load_explicit(l, memory_order_relaxed)) {
			if (++spins < MP_SPIN_BEFORE_YIELD) {
#if defined(__x86_64__) || defined(__i386__)
				__builtin_ia32_pause();
#elif defined(__aarch64__)
				__asm__ volatile("yield");
#endif
			} else {
				sched_yield();
				spins = 0;
			}
		}
	}
	mp__wthread_tls.no_help++;
}

static inline void mp__spin_give(_Atomic int *l)
{
	mp__wthread_tls.no_help--;
	atomic_store_explicit(l, 0, memory_order_release);
}

/* ---- the library's own threads (threads.c) ---- */

/* The writer's on_orphaned: the main thread left by pthread_exit() and
 * every other thread of the program has ended, so glibc would now end the
 * process with exit(0), but the flusher is still alive. Starts a thread,
 * traced like the program's, that calls exit(0): the program's exit
 * handlers run and are recorded, and the capture closes as on any exit.
 * 0 on success. */
int mp__end_orphaned_process(void *unused);

/* ---- quiescence (quiesce.c) ---- */

/* The calling thread's busy mark, NULL until its first hook. */
extern __thread _Atomic int *mp__busy __attribute__((tls_model("initial-exec")));
extern int mp__busy_fence;
extern _Atomic int mp__busy_overflow; /* shared by threads beyond the table */
_Atomic int *mp__busy_claim(void);

/* Mark the calling thread as inside a hook; must come before the state is
 * read (see quiesce.c for the ordering argument). */
static inline void mp__busy_begin(void)
{
	_Atomic int *b = mp__busy;

	if (__builtin_expect(b == NULL, 0))
		b = mp__busy_claim();
	if (__builtin_expect(b == &mp__busy_overflow, 0))
		atomic_fetch_add_explicit(b, 1, memory_order_relaxed);
	else
		atomic_store_explicit(b, 1, memory_order_relaxed);
	if (mp__busy_fence)
		atomic_thread_fence(memory_order_seq_cst);
	else
		atomic_signal_fence(memory_order_seq_cst);
}

static inline void mp__busy_end(void)
{
	_Atomic int *b = mp__busy;

	if (__builtin_expect(b == &mp__busy_overflow, 0))
		atomic_fetch_sub_explicit(b, 1, memory_order_release);
	else
		atomic_store_explicit(b, 0, memory_order_release);
}

/* After switching the state away from ACTIVE: wait (at most max_ms) until
 * no thread is inside a hook. Returns 0, or -1 on timeout. */
int mp__quiesce(unsigned max_ms);
/* In a forked child: forget the parent's threads. */
void mp__quiesce_reset_child(void);

/* ---- mmap (mmap.c) ---- */

extern int mp__mmap_on;   /* MEMPROF_MMAP != 0 */
/* A new capture was opened: forget the recorded mappings and memory id. */
void mp__mmap_reset(void);
/* In a forked child: release the table's lock (see mp__regions_reset_child). */
void mp__mmap_reset_child(void);

/* ---- Python's object allocator (pymem.c; docs/hooks.md, "Python's allocator") ---- */

/* What a thread inside a wrapped CPython allocator call (PyObject_Malloc,
 * PyMem_Malloc and their calloc, realloc, free) needs the other hooks to
 * tell it. pymalloc serves requests up to 512 bytes from its arenas and
 * hands larger ones (and 0) to malloc, which the malloc hooks record in
 * "host"; the wrapper records an object in "pymalloc" only where they did
 * not. The wrapper clears alloc and alloc_last and sets freeing before it
 * forwards; the malloc hooks note the first and the last block they record
 * allocating, and clear freeing when they record its free. The object is
 * one of the two: what a wrapped call allocates besides it comes after it
 * (tracemalloc's raw hooks add a trace once malloc returned) or before it
 * (pymalloc growing its arena list, then, out of memory for an arena,
 * handing the request to malloc).
 * An anonymous mmap made while inside is one of pymalloc's arenas (mmap.c
 * sends it to mp__pymem_arena_map), its munmap the arena's end.
 * Initial-exec TLS. */
typedef struct {
	uint32_t inside;   /* wrapped calls this thread is in (0: none) */
	uintptr_t alloc;      /* the first block the malloc hooks recorded allocating; 1: a failure */
	uintptr_t alloc_last; /* ... and the last */
	uintptr_t freeing; /* the object a wrapped free or realloc gives back, until its FREE is recorded */
} mp_pymem_tls_t;
extern __thread mp_pymem_tls_t mp__pymem __attribute__((tls_model("initial-exec")));

/* Wrap CPython's MEM and OBJ allocators when this process is a CPython
 * whose runtime is not initialized yet (session start, guard held). */
void mp__pymem_install(void);
/* A capture was opened: declare the memory id "pymalloc" and the arenas
 * already mapped (a fork child's, or those of a --delay window). */
void mp__pymem_start(mp_writer_t *w);
/* In a forked child: release the arena table's lock. */
void mp__pymem_reset_child(void);
/* An anonymous mapping made inside a wrapped call (an arena): mapped,
 * recorded as a region of "pymalloc". Same contract as mmap. */
void *mp__pymem_arena_map(void *a, size_t n, int prot, int flags, int fd, off_t off);
/* munmap inside a wrapped call: when [a, a + n) is an arena, its removal
 * is recorded (and the object whose free emptied it, first), it is
 * unmapped, *rc is munmap's result and 1 is returned; else 0. */
int mp__pymem_arena_unmap(void *a, size_t n, int *rc);
/* Installed, and no wrapped call seen yet: an anonymous mmap outside one
 * asks mp__pymem_check_replaced whether Python replaced our allocator. */
extern int mp__pymem_watch;
void mp__pymem_check_replaced(size_t n);
/* The real mmap and munmap (mmap.c), for pymem.c. */
void *mp__mmap_real(void *a, size_t n, int prot, int flags, int fd, off_t off);
int mp__munmap_real(void *a, size_t n);

/* ---- call stacks (stacks.c; MEMPROF_STACKS, `memprof record --stacks`) ---- */

#define MP_STACK_DEPTH 64   /* frames kept per allocation (the innermost) */
extern int mp__stacks_on;   /* MEMPROF_STACKS set: a stack per allocation */
extern int mp__stacks_depth; /* MEMPROF_STACK_DEPTH: frames kept, 1 to MP_STACK_DEPTH */
/* Read MEMPROF_STACKS / MEMPROF_STACK_DEPTH (session start, guard held). */
void mp__stacks_configure(void);
/* A capture was opened: describe the loaded objects (module map). */
void mp__stacks_start(mp_writer_t *w);
/* Unwind the calling thread and write a STACK record for its next
 * allocation record. Guard held; allocates nothing, takes no lock once
 * the stack has been seen. */
void mp__stacks_record(void);
/* The same stack as an id, for a record written later (an mmap's, after
 * its lock is taken): 1 and *id, 0 when none could be. Guard held. */
int mp__stacks_id(uint32_t *id);
/* The calling thread's Python frames only (no native unwind: the cheap
 * path for an allocation made through Python's own allocator, as
 * PyMem_Malloc), as the STACK record of its next allocation record; a
 * thread without Python frames (or a program that is not a Python
 * mp__py_on can read) gets mp__stacks_record's native stack. Guard held;
 * call it only when mp__stacks_on. */
void mp__stacks_record_python(void);
/* The same, for a caller that writes the allocation's record with its
 * stack's id (mp__rec_alloc_serial's stack): 1 and *id for Python frames;
 * 0 when the native stack's record was written instead, or none could be. */
int mp__stacks_python_id(uint32_t *id);

/* ---- Python frames (pystack.c, pyoffsets.c; docs/hooks.md, "Python frames") ---- */

extern int mp__py_on; /* a CPython 3.11-3.13 whose frames can be read (MEMPROF_PYTHON != 0) */
/* _PyEval_EvalFrameDefault's code: a native pc in [lo, hi) is one C call
 * of the interpreter loop, replaced by the Python frames it runs. */
extern uint64_t mp__py_eval_lo, mp__py_eval_hi;
/* Find the interpreter (dlsym; guard held, from mp__stacks_configure);
 * prints why once when it is a Python that cannot be read. */
void mp__py_configure(void);
/* A capture was opened: frame values cached for the last one are void. */
void mp__py_start(void);
/* The calling thread's Python frames, innermost first: at most max values
 * (mp_writer_frame's) into out; groups[0..*ngroups) the number of them
 * each C call of _PyEval_EvalFrameDefault runs, innermost call first (0:
 * a call none of whose frames has started). Returns how many frames (0:
 * no Python thread state, or finalizing). No allocation, no lock once the
 * frames have been seen. */
int mp__py_walk(mp_writer_t *w, uint64_t *out, int max, uint8_t *groups, int *ngroups);
/* The id of the calling thread's Python stack (mp__py_walk's values, at
 * most max, interned by mp_writer_stack), from the thread's cache of its
 * last stacks when the frames are the same: 1 and *id; 0: no Python
 * frames; -1: the writer failed. */
int mp__py_stack(mp_writer_t *w, int max, uint32_t *id);
/* In a forked child: the other threads' stack caches are free again. */
void mp__py_reset_child(void);

/* The thread's cache of stack ids by unwind start (stackcache.c; with
 * libunwind). hit: 1 and *id when the hook's caller's state (start: pc,
 * sp, rbp at the call into this library [lo, hi), found from its own
 * frame-pointer chain; start[0] = 0 when not found) and every stack cell
 * the unwind read last time are as they were. walk: on a miss, unwind
 * into pcs (at most max, innermost first, this library's frames
 * included); *fill = 1 when the walk can be cached: then
 * mp__stackcache_put(w, start, 1, id) with the stack's id. */
int mp__stackcache_hit(mp_writer_t *w, uint64_t lo, uint64_t hi, uint32_t *id, uint64_t start[3]);
int mp__stackcache_walk(const uint64_t start[3], uint64_t *pcs, int max, int *fill);
void mp__stackcache_put(mp_writer_t *w, const uint64_t start[3], int fill, uint32_t id);
/* unw_backtrace into pcs (at most max), in a frame of its own. */
int mp__stackcache_backtrace(uint64_t *pcs, int max);

/* ---- host regions (regions.c) ---- */

/* Called after a successful allocation / before and after a free of p on
 * the host memory id: keeps the regions (brk heap, thread heaps, mmapped
 * chunks) in step with what glibc holds. Only while mp__regions_on. The
 * common case -- the region already declared at its current size -- is
 * decided here, inline, from the chunk header: an mmapped chunk always
 * takes the slow path (its mapping is a region of its own); a chunk of a
 * thread arena's heap when the heap is not found declared at its current
 * size at its own slot; a main-arena chunk when the break moved. */
extern int mp__regions_on;
void mp__regions_start(mp_writer_t *w, uint32_t host);
/* In a forked child: regions off, and the lock that another thread of the
 * parent may have held at fork released. */
void mp__regions_reset_child(void);
void mp__regions_alloc_slow(const void *p);
void mp__regions_free_slow(uint64_t info);

#define MP_CHUNK_IS_MMAPPED 0x2u
#define MP_CHUNK_NON_MAIN_ARENA 0x4u
#define MP_HEAP_MAX (64u << 20) /* glibc HEAP_MAX_SIZE on 64-bit: thread heaps are aligned to it */
enum { MP_REGION_TAG_MMAP = 1, MP_REGION_TAG_HEAP = 2, MP_REGION_TAG_MAIN = 3 };

/* glibc's break pointer when the main arena's region was last checked,
 * and the thread heaps declared (base, size; open addressing by base, the
 * first probe at the heap's own slot). */
#define MP_REGION_HEAPS 1024
extern _Atomic uint64_t mp__regions_brk_seen;
extern struct mp_heap_slot {
	_Atomic uint64_t base, size;
} mp__regions_heaps[MP_REGION_HEAPS];
extern void *__curbrk; /* glibc's current break (what sbrk(0) returns once set) */

/* The thread heap a chunk of a thread arena lies in (heaps are aligned to
 * their maximum size), and that heap's own slot in the table. */
static inline uint64_t mp__regions_heap_of(const void *p)
{
	return ((uint64_t)(uintptr_t)p - 16) & ~(uint64_t)(MP_HEAP_MAX - 1);
}

static inline unsigned mp__regions_heap_home(uint64_t base)
{
	return (unsigned)(base / MP_HEAP_MAX) & (MP_REGION_HEAPS - 1);
}

static inline int mp__regions_brk_moved(void)
{
	return (uint64_t)(uintptr_t)__curbrk != atomic_load_explicit(&mp__regions_brk_seen, memory_order_relaxed);
}

static inline void mp__regions_alloc(const void *p)
{
	uint64_t sz = ((const uint64_t *)p)[-1];

	if (sz & MP_CHUNK_IS_MMAPPED) {
		mp__regions_alloc_slow(p);
	} else if (sz & MP_CHUNK_NON_MAIN_ARENA) {
		uint64_t base = mp__regions_heap_of(p);
		struct mp_heap_slot *h = &mp__regions_heaps[mp__regions_heap_home(base)];
		/* heap_info.size, the heap's third word: declared at that size? */
		if (atomic_load_explicit(&h->base, memory_order_acquire) != base ||
		    atomic_load_explicit(&h->size, memory_order_relaxed) != ((const uint64_t *)(uintptr_t)base)[2])
			mp__regions_alloc_slow(p);
	} else if (mp__regions_brk_moved()) {
		mp__regions_alloc_slow(p);
	}
}

/* What mp__regions_free_after needs to know of p's chunk, read before
 * the free: its kind, with the mapping's base for an mmapped chunk. */
static inline uint64_t mp__regions_free_before(const void *p)
{
	uint64_t sz = ((const uint64_t *)p)[-1], chunk = (uint64_t)(uintptr_t)p - 16;

	if (sz & MP_CHUNK_IS_MMAPPED)
		return (chunk - ((const uint64_t *)p)[-2]) | MP_REGION_TAG_MMAP;
	return sz & MP_CHUNK_NON_MAIN_ARENA ? MP_REGION_TAG_HEAP : MP_REGION_TAG_MAIN;
}

/* A free can unmap a thread heap entirely: its size is refreshed by the
 * next allocation in it, not here. */
static inline void mp__regions_free_after(uint64_t info)
{
	if ((info & 0xfff) == MP_REGION_TAG_MMAP || ((info & 0xfff) == MP_REGION_TAG_MAIN && mp__regions_brk_moved()))
		mp__regions_free_slow(info);
}

#endif
