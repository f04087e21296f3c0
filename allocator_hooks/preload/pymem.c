/* pymem.c - CPython's small objects as allocations: the memory id
 * "pymalloc", whose regions are pymalloc's arenas and whose allocations
 * are the objects it hands out (docs/hooks.md, "Python's allocator").
 *
 * pymalloc serves every request of 1 to 512 bytes made through
 * PyObject_Malloc and PyMem_Malloc (and calloc, realloc) from 16 KiB pools
 * inside 1 MiB arenas it maps itself (256 KiB arenas and 4 KiB pools
 * before 3.10), and hands larger ones (and 0) to malloc. Without this the
 * malloc hooks saw only the large ones and mmap.c the arenas, as anonymous
 * memory of no owner. PYTHONMALLOC=malloc would send everything to malloc,
 * but that changes the program's memory (other sizes, other heap).
 *
 * So, when the process is a CPython whose runtime is not initialized yet
 * (the preload's session start: before main, no Python thread runs), the
 * MEM and OBJ domains' allocators are wrapped with PyMem_SetAllocator --
 * the mechanism CPython offers for this, which tracemalloc uses too. Each
 * wrapper forwards to the allocator it replaced, without the recursion
 * guard, so that what the call does underneath is seen by the other
 * hooks: a large object is malloc'd (recorded in "host" by hooks.c, which
 * notes the block in mp__pymem; the wrapper then records nothing: never
 * both), an arena is mmapped (mmap.c sends an anonymous mapping made while
 * mp__pymem.inside to mp__pymem_arena_map: a region of "pymalloc", not
 * host_mmap). What nothing underneath recorded is a pymalloc object,
 * recorded after the call with its size class (16-byte steps) as its
 * allocated size. CPython's pre-initialization only sets the MEM and OBJ
 * allocators when told to (PYTHONMALLOC, -X dev, a debug build's debug
 * hooks); then ours are gone, and an arena mapped outside a wrapped call
 * before any wrapped call says so, once, on stderr.
 *
 * Frees are recorded after the real free (the malloc hooks record them
 * before): only then is it known whether pymalloc or malloc had the
 * object. pymalloc runs under the GIL (its state is per interpreter, with
 * disjoint arenas, in 3.12+), so no other thread can be handed the address
 * in between. A free that empties an arena unmaps it inside the call: the
 * object's FREE is recorded there, before the arena's REGION_REMOVE.
 *
 * The live arenas are kept in a table (a spinlock; an arena is mapped or
 * unmapped once per MiB), so that a capture opened later -- a forked
 * child's, a --delay window's -- starts with them declared.
 */
#include "hook_path.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

__thread mp_pymem_tls_t mp__pymem __attribute__((tls_model("initial-exec")));
int mp__pymem_watch;

/* PyMemAllocatorEx (Include/cpython/pymem.h; unchanged since 3.5). */
typedef struct {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t new_size);
	void (*free)(void *ctx, void *ptr);
} py_alloc_t;

typedef void (*py_getset_fn)(int domain, py_alloc_t *allocator);

enum { PY_DOMAIN_MEM = 1, PY_DOMAIN_OBJ = 2 }; /* PyMemAllocatorDomain */
#define PY_SMALL_MAX 512 /* SMALL_REQUEST_THRESHOLD: larger requests go to malloc */
#define PY_POOL_OVERHEAD 48 /* sizeof(struct pool_header), rounded to 16 */
#define PY_POOL_SZIDX 36    /* offset of pool_header.szidx (64-bit) */
#define PY_POOL_CHECKS 16   /* in-place reallocs whose pool is checked against the arena table */
#define MAX_ARENAS 16384    /* arenas known at once (16 GiB of 1 MiB arenas) */

static py_alloc_t orig[3]; /* what the wrappers forward to, by domain */
static py_getset_fn get_alloc;
static int installed;
static uint64_t align_mask = 15;  /* pymalloc's ALIGNMENT - 1: 15 since 3.8, 7 before */
static uintptr_t pool_mask;       /* ~(POOL_SIZE - 1); 0: pool headers are not read */
static _Atomic int pool_checks;   /* pool headers found inside an arena so far */
static _Atomic int mem_id = -1;   /* the memory id "pymalloc" in the open capture; -1: not yet */

static struct {
	uint64_t base, len;
} arenas[MAX_ARENAS]; /* the live arenas, unordered */
static uint32_t narenas;
static _Atomic int lock;

static void take(void)
{
	mp__spin_take(&lock);
}

static void give(void)
{
	mp__spin_give(&lock);
}

/* "memprof: warning: ...", one write, no buffer (see session.c's warn). */
static void say(const char *line)
{
	struct iovec v[2] = {{(void *)(uintptr_t) "memprof: warning: ", 18}, {(void *)(uintptr_t)line, strlen(line)}};

	(void)!writev(2, v, 2);
}

/* ---- the records ---------------------------------------------------------- */

/* The memory id, declared with the capture's first pymalloc event (so
 * that a Python whose allocator is not ours -- PYTHONMALLOC=malloc -- has
 * no empty "pymalloc"). Guard held. -1 when it cannot be. */
static int declare_slow(void)
{
	int v = mp_writer_memory(mp__writer, "pymalloc", MP_MEMORY_HOST, 0);

	if (v < 0 || v > MP_RING_MAX_MEMORY)
		return -1;
	atomic_store_explicit(&mem_id, v, memory_order_release);
	return v;
}

static inline int declare(void)
{
	int v = atomic_load_explicit(&mem_id, memory_order_acquire);

	return __builtin_expect(v >= 0, 1) ? v : declare_slow();
}

/* With --stacks, the object's stack: the Python frames alone (pystack.c).
 * An object pymalloc hands out is asked for by the interpreter on behalf of
 * the line running: the native frames between (PyObject_Malloc, the type's
 * constructor, the eval loop) say nothing a user acts on and cost a native
 * unwind each -- about five times the frame walk. A thread without Python
 * frames (the interpreter starting up) gets its native stack. */
static inline void py_stack(void)
{
	if (__builtin_expect(mp__stacks_on, 0))
		mp__stacks_record_python();
}

/* mp__stacks_python_id, with its Python case inline (the one every
 * object of a Python takes): 1 and *id for the Python frames' stack. */
static inline __attribute__((always_inline)) int py_stack_id(uint32_t *id)
{
	if (__builtin_expect(mp__py_on, 1)) {
		int r = mp__py_stack(mp__writer, mp__stacks_depth, id);
		if (__builtin_expect(r > 0, 1))
			return 1;
		if (r < 0)
			return 0;
	}
	return mp__stacks_python_id(id); /* no Python frames: the native stack */
}

static inline uint64_t size_class(size_t n)
{
	return ((uint64_t)n + align_mask) & ~align_mask;
}

/* 1 to 512 bytes: what pymalloc serves itself. */
static inline int small(size_t n)
{
	return n - 1 < PY_SMALL_MAX;
}

/* The objects' records take the serial clock (wthread_path.h): pymalloc's
 * objects are made and freed under the GIL, which orders every record of
 * them across threads, so a record may take the time of the thread's
 * previous one instead of reading the clock (15-20 ns, twice an object: a
 * tenth of what an object costs the program) -- at most MP_SERIAL_REUSE in
 * a row, never across a flush round or another thread's object record,
 * never out of order. (CPython's free-threaded build, which has no GIL,
 * never gets these wrappers: mp__pymem_install.) */
static inline __attribute__((always_inline)) void rec_object(uint32_t id, void *p, size_t n)
{
	mp_writer_t *w;
	mp_wthread_t *t;
	uint32_t stack;
	int stacked = __builtin_expect(mp__stacks_on, 0) && py_stack_id(&stack);

	if ((t = ring(&w))) {
		if (stacked) /* the STACK record and the object's in one commit */
			mp__rec_alloc_serial(w, t, id, (uintptr_t)p, n, size_class(n), &stack);
		else
			mp__rec_alloc_serial(w, t, id, (uintptr_t)p, n, size_class(n), NULL);
	} else if (w)
		mp__wthread_unbound_drop(w, id, 1);
}

static inline __attribute__((always_inline)) void rec_object_free(uint32_t id, uintptr_t p)
{
	mp_writer_t *w;
	mp_wthread_t *t = ring(&w);

	if (t)
		mp__rec_free_serial(w, t, id, p);
	else if (w)
		mp__wthread_unbound_drop(w, id, 1);
}

static void rec_object_failed(uint32_t id, size_t n)
{
	py_stack();
	mp_writer_alloc_failed(mp__writer, id, n);
}

/* Whether [a, a + n) lies inside a live arena. */
static int in_arena(uint64_t a, uint64_t n)
{
	int found = 0;
	uint32_t i;

	take();
	for (i = 0; i < narenas && !found; i++)
		found = a >= arenas[i].base && a + n <= arenas[i].base + arenas[i].len;
	give();
	return found;
}

/* The size of the block p that pymalloc resized in place to n bytes: its
 * pool's size class (pool_header.szidx), which pymalloc keeps while n
 * stays above three quarters of it. The first reads are checked to lie
 * inside an arena (the pool size is the version's: a build with other
 * pools would read elsewhere); a header that does not fit p gives n's own
 * class. */
static uint64_t in_place_size(uintptr_t p, size_t n)
{
	uintptr_t pool = p & pool_mask;
	uint64_t s;

	if (!pool_mask)
		return size_class(n);
	if (atomic_load_explicit(&pool_checks, memory_order_relaxed) < PY_POOL_CHECKS && !in_arena(pool, PY_POOL_OVERHEAD)) {
		pool_mask = 0;
		return size_class(n);
	}
	s = ((uint64_t) * (const uint32_t *)(pool + PY_POOL_SZIDX) + 1) * (align_mask + 1);
	/* pymalloc kept p in place: n <= s < 4n/3, and p is a block of s bytes */
	if (s > PY_SMALL_MAX || s < n || 4 * (uint64_t)n <= 3 * s || (p - pool - PY_POOL_OVERHEAD) % s) {
		if (atomic_load_explicit(&pool_checks, memory_order_relaxed) < PY_POOL_CHECKS)
			pool_mask = 0; /* not pymalloc's pools as we know them: never read them */
		return size_class(n);
	}
	if (atomic_load_explicit(&pool_checks, memory_order_relaxed) < PY_POOL_CHECKS)
		atomic_fetch_add_explicit(&pool_checks, 1, memory_order_relaxed);
	return s;
}

/* ---- the wrappers -------------------------------------------------------- */

/* Whether the malloc hooks recorded p (NULL: the failure) during the call. */
static inline int hooked(void *p)
{
	uintptr_t v = p ? (uintptr_t)p : 1;

	return v == mp__pymem.alloc || v == mp__pymem.alloc_last;
}

/* Before forwarding an allocation. */
static inline void enter_call(void)
{
	if (__builtin_expect(mp__pymem_watch, 0))
		mp__pymem_watch = 0; /* ours are in place */
	mp__pymem.inside++;
	mp__pymem.alloc = 0;
	mp__pymem.alloc_last = 0;
}

/* After the original returned p for n bytes: record p as an object unless
 * a malloc hook recorded it (or its failure). errno as the call left it. */
static inline __attribute__((always_inline)) void after_alloc(void *p, size_t n)
{
	int e;

	if (hooked(p) || !small(n))
		return;
	e = errno;
	if (enter()) {
		int id = declare();
		if (id >= 0 && p)
			rec_object((uint32_t)id, p, n);
		else if (id >= 0)
			rec_object_failed((uint32_t)id, n);
		leave(e);
	} else {
		errno = e;
	}
}

static void *py_malloc(void *ctx, size_t n)
{
	const py_alloc_t *o = ctx;
	void *p;

	if (__builtin_expect(mp__guard, 0))
		return o->malloc(o->ctx, n);
	enter_call();
	p = o->malloc(o->ctx, n);
	mp__pymem.inside--;
	after_alloc(p, n);
	return p;
}

static void *py_calloc(void *ctx, size_t nelem, size_t elsize)
{
	const py_alloc_t *o = ctx;
	void *p;

	if (__builtin_expect(mp__guard, 0))
		return o->calloc(o->ctx, nelem, elsize);
	enter_call();
	p = o->calloc(o->ctx, nelem, elsize);
	mp__pymem.inside--;
	/* (CPython checked nelem * elsize for overflow before the call) */
	after_alloc(p, nelem * elsize);
	return p;
}

static void py_free(void *ctx, void *p)
{
	const py_alloc_t *o = ctx;
	uintptr_t was;
	int e;

	if (__builtin_expect(mp__guard, 0) || !p) {
		o->free(o->ctx, p);
		return;
	}
	was = mp__pymem.freeing;
	mp__pymem.inside++;
	mp__pymem.freeing = (uintptr_t)p;
	o->free(o->ctx, p);
	mp__pymem.inside--;
	/* not malloc's (the free hook cleared it), not recorded with its arena */
	if (mp__pymem.freeing) {
		e = errno;
		if (enter()) {
			int id = declare();
			if (id >= 0)
				rec_object_free((uint32_t)id, (uintptr_t)p);
			leave(e);
		} else {
			errno = e;
		}
	}
	mp__pymem.freeing = was;
}

/* realloc: the old block and the new one may each be pymalloc's or
 * malloc's (an object grown past 512 bytes moves to malloc; a malloc'd
 * one stays there whatever its new size): what the malloc hooks did not
 * record of the two is recorded here, as one REALLOC when it is both. */
static void *py_realloc(void *ctx, void *p, size_t n)
{
	const py_alloc_t *o = ctx;
	uintptr_t was;
	void *q;
	int e, id, old_ours, new_ours;

	if (__builtin_expect(mp__guard, 0))
		return o->realloc(o->ctx, p, n);
	was = mp__pymem.freeing;
	enter_call();
	mp__pymem.freeing = (uintptr_t)p;
	q = o->realloc(o->ctx, p, n);
	mp__pymem.inside--;
	new_ours = !hooked(q) && small(n);
	/* p was given back (q set) by pymalloc and its FREE is not recorded yet */
	old_ours = q && p && mp__pymem.freeing;
	mp__pymem.freeing = was;
	if (!(new_ours || old_ours))
		return q;
	e = errno;
	if (!enter()) {
		errno = e;
		return q;
	}
	id = declare();
	if (id < 0) {
		/* no memory id: nothing to record */
	} else if (!q) {
		rec_object_failed((uint32_t)id, n); /* p is still live */
	} else if (new_ours && old_ours) {
		mp_writer_t *w;
		mp_wthread_t *t;
		uint64_t allocated = q == p ? in_place_size((uintptr_t)q, n) : size_class(n);
		uint32_t stack;
		int stacked = __builtin_expect(mp__stacks_on, 0) && py_stack_id(&stack);
		if ((t = ring(&w)) && stacked) /* the STACK record and the REALLOC in one commit */
			mp__rec_realloc_serial(w, t, (uint32_t)id, (uintptr_t)p, (uintptr_t)q, n, allocated, &stack);
		else if (t)
			mp__rec_realloc_serial(w, t, (uint32_t)id, (uintptr_t)p, (uintptr_t)q, n, allocated, NULL);
		else if (w)
			mp__wthread_unbound_drop(w, (uint32_t)id, 2);
	} else {
		if (old_ours)
			rec_object_free((uint32_t)id, (uintptr_t)p);
		if (new_ours)
			rec_object((uint32_t)id, q, n);
	}
	leave(e);
	return q;
}

/* ---- arenas (from mmap.c's hooks, inside a wrapped call) ----------------- */

static uint64_t page_up(uint64_t n)
{
	static uint64_t ps;

	if (!ps)
		ps = (uint64_t)sysconf(_SC_PAGESIZE);
	return (n + ps - 1) & ~(ps - 1);
}

void *mp__pymem_arena_map(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	void *p = mp__mmap_real(a, n, prot, flags, fd, off);
	uint64_t len = page_up(n);
	int e = errno;

	if (p == MAP_FAILED || prot == PROT_NONE)
		return p;
	take();
	if (narenas < MAX_ARENAS) {
		arenas[narenas].base = (uintptr_t)p;
		arenas[narenas++].len = len;
	}
	give();
	if (enter()) {
		mp_writer_t *w = mp__writer;
		int id = declare();
		if (id >= 0)
			mp_writer_region_add(w, (uint32_t)id, (uintptr_t)p, len);
		mp__net_moved(w, (int64_t)len, 0); /* the process grew (preload.h) */
		leave(e);
	} else {
		errno = e;
	}
	return p;
}

int mp__pymem_arena_unmap(void *a, size_t n, int *rc)
{
	uint64_t base = (uintptr_t)a, len = 0;
	uint32_t i;
	int e = errno;

	take();
	for (i = 0; i < narenas; i++) {
		if (arenas[i].base == base) {
			len = arenas[i].len;
			arenas[i] = arenas[--narenas];
			break;
		}
	}
	give();
	if (!len)
		return 0; /* not an arena: mmap.c's ordinary path */
	if (enter()) {
		mp_writer_t *w = mp__writer;
		uintptr_t f = mp__pymem.freeing;
		int id = declare();
		/* the object whose free emptied the arena goes first: no object
		 * outlives its region */
		if (id >= 0) {
			if (f && f - base < len) {
				rec_object_free((uint32_t)id, f); /* (every object record takes the serial clock) */
				mp__pymem.freeing = 0;
			}
			mp_writer_region_remove(w, (uint32_t)id, base);
		}
		mp__net_moved(w, -(int64_t)len, len);
		leave(e);
	}
	(void)n;
	*rc = mp__munmap_real(a, n);
	return 1;
}

/* ---- installing, captures, fork ------------------------------------------ */

void mp__pymem_check_replaced(size_t n)
{
	py_alloc_t cur;

	/* only an arena-sized mapping (1 MiB; 256 KiB before 3.10) asks */
	if (n != (1u << 20) && n != (1u << 18))
		return;
	get_alloc(PY_DOMAIN_OBJ, &cur);
	if (cur.malloc == py_malloc)
		return; /* some other mapping, before Python ran: still ours */
	mp__pymem_watch = 0;
	say("Python replaced memprof's allocator wrappers (PYTHONMALLOC, -X dev or a debug build): "
	    "its small objects are not recorded, and pymalloc's arenas count as host_mmap\n");
}

static int env_off(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no"));
}

void mp__pymem_install(void)
{
	py_getset_fn set;
	int (*is_init)(void);
	const char *(*version)(void);
	const char *v;
	int d, minor;

	if (installed || env_off("MEMPROF_PYMALLOC"))
		return;
	*(void **)&set = dlsym(RTLD_DEFAULT, "PyMem_SetAllocator");
	if (!set) {
		/* Not a CPython (the common case). The failed lookup left its
		 * message in blocks glibc allocated here (guarded: unrecorded) and
		 * would free at the program's next dl call (recorded: frees of
		 * unknown blocks); the second dlerror() frees them now. */
		(void)dlerror();
		(void)dlerror();
		return;
	}
	*(void **)&get_alloc = dlsym(RTLD_DEFAULT, "PyMem_GetAllocator");
	*(void **)&is_init = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
	*(void **)&version = dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (!get_alloc || !is_init || !version || is_init())
		return; /* too late to change allocators safely */
	v = version();
	/* (the free-threaded build allocates with mimalloc, without a GIL) */
	if (!v || v[0] != '3' || v[1] != '.' || strstr(v, "free-threading"))
		return;
	minor = atoi(v + 2);
	if (minor < 5) /* PyMemAllocatorEx */
		return;
	align_mask = minor >= 8 ? 15 : 7;
	/* 16 KiB pools with 3.10's radix tree (64-bit), 4 KiB before */
	pool_mask = sizeof(void *) == 8 && minor >= 8 ? ~(uintptr_t)((minor >= 10 ? 16384 : 4096) - 1) : 0;
	for (d = PY_DOMAIN_MEM; d <= PY_DOMAIN_OBJ; d++) {
		get_alloc(d, &orig[d]);
		if (!orig[d].malloc || !orig[d].calloc || !orig[d].realloc || !orig[d].free)
			return;
	}
	for (d = PY_DOMAIN_MEM; d <= PY_DOMAIN_OBJ; d++) {
		py_alloc_t mine = {&orig[d], py_malloc, py_calloc, py_realloc, py_free};
		set(d, &mine);
	}
	installed = 1;
	mp__pymem_watch = 1;
}

void mp__pymem_start(mp_writer_t *w)
{
	uint32_t i;
	int id;

	atomic_store(&mem_id, -1);
	if (!installed)
		return;
	take();
	if (narenas && (id = declare()) >= 0)
		for (i = 0; i < narenas; i++)
			mp_writer_region_add(w, (uint32_t)id, arenas[i].base, arenas[i].len);
	give();
}

void mp__pymem_reset_child(void)
{
	atomic_store(&lock, 0);
}
