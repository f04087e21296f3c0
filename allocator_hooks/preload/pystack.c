/* pystack.c - Python frames in `memprof record --stacks` stacks.
 *
 * When the traced program is a CPython 3.11-3.13 interpreter (the main
 * program or a libpython*.so it loaded), each allocation's stack gets the
 * Python functions that were running, at their lines (docs/hooks.md,
 * "Python frames"). Nothing is installed in the interpreter -- no profile
 * or trace function, which would cost on every Python call whether it
 * allocates or not. The hook reads the calling thread's own frame chain,
 * as py-spy and austin read another process's: PyGILState_GetThisThreadState()
 * is this thread's state (with or without the GIL; only this thread
 * changes its own chain, and it is inside the allocator now), the chain is
 * _PyInterpreterFrame -> previous, at the offsets of pyoffsets.c (3.13:
 * _PyRuntime's _Py_DebugOffsets where they cover a field).
 *
 * Detection runs once, from mp__stacks_configure (guard held: dlsym may
 * allocate); after exec the new image's constructor runs it again. A
 * Python this cannot read keeps native stacks and says why, once.
 *
 * Event path: no allocation, no lock, no syscall once a frame has been
 * seen. A (code object, instruction) pair is looked up in a lock-free
 * cache (a seqlock per slot); the first sight computes the line with
 * PyCode_Addr2Line (reads co_linetable; allocates nothing in 3.11-3.13),
 * reads co_qualname and co_filename straight from the str objects (never
 * PyUnicode_AsUTF8, which allocates and caches into the object) and
 * interns them with the writer (mp_writer_intern / mp_writer_frame: no
 * malloc; the first sight of a string or frame takes the defs mutex).
 */
#include "preload.h"
#include "pystack.h"
#include "writer_internal.h"

#include <memprof/source.h>

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int mp__py_on;
uint64_t mp__py_eval_lo, mp__py_eval_hi;

mp_pyoffsets_t mp__py_O;          /* the running Python's layout */
#define O mp__py_O
static void *(*get_tstate)(void); /* PyGILState_GetThisThreadState */
static void *(*attached)(void);   /* 3.12+: the thread's attached state (thread-local), or NULL */
static int (*addr2line)(void *code, int addrq);
static int (*finalizing)(void);
uintptr_t mp__py_code_type; /* &PyCode_Type */
#define code_type mp__py_code_type

/* ---- the frame cache ---- */

#define CACHE_SLOTS 4096 /* a power of two */
typedef struct {
	_Atomic uint32_t seq; /* odd while a thread fills the slot */
	uint32_t gen;         /* the capture the value belongs to */
	uint64_t code;
	int64_t lasti;
	uint64_t name, file; /* the code's co_qualname, co_filename when filled */
	int64_t firstlineno;
	uint64_t value; /* mp_writer_frame's */
} slot_t;
static slot_t cache[CACHE_SLOTS];
/* Frame ids are the capture's: a new capture (fork, exec, a reopened
 * session) starts a new generation, and older slots read as misses. */
_Atomic uint32_t mp__py_gen = 1;

void mp__py_start(void)
{
	atomic_fetch_add(&mp__py_gen, 1);
}

static inline uint64_t rd(uintptr_t a)
{
	return *(const uint64_t *)a;
}
static inline int32_t rd32(uintptr_t a)
{
	return *(const int32_t *)a;
}

static inline slot_t *slot_of(uint64_t code, int64_t lasti)
{
	uint64_t h = (code >> 4) * 0x9E3779B97F4A7C15ull ^ (uint64_t)lasti * 0xC2B2AE3D27D4EB4Full;
	return &cache[(h >> 32) & (CACHE_SLOTS - 1)];
}

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* A hit only when every field matches what the code object holds now: a
 * code object freed and another allocated at its address, with other
 * names or first line, misses. */
static uint64_t cache_get(uint64_t code, int64_t lasti, uint64_t name, uint64_t file, int64_t first, uint32_t g)
{
	slot_t *s = slot_of(code, lasti);
	uint32_t q = atomic_load_explicit(&s->seq, memory_order_acquire);
	uint64_t v;

	if (q & 1)
		return 0;
	if (LD(s->code) != code || LD(s->lasti) != lasti || LD(s->name) != name || LD(s->file) != file ||
	    LD(s->firstlineno) != first || LD(s->gen) != g)
		return 0;
	v = LD(s->value);
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&s->seq, memory_order_relaxed) == q ? v : 0;
}

static void cache_put(uint64_t code, int64_t lasti, uint64_t name, uint64_t file, int64_t first, uint32_t g,
		      uint64_t value)
{
	slot_t *s = slot_of(code, lasti);
	uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);

	/* another thread filling it: leave it (the next miss fills it) */
	if ((q & 1) || !atomic_compare_exchange_strong_explicit(&s->seq, &q, q + 1, memory_order_acquire,
								memory_order_relaxed))
		return;
	atomic_thread_fence(memory_order_release);
	ST(s->code, code);
	ST(s->lasti, lasti);
	ST(s->name, name);
	ST(s->file, file);
	ST(s->firstlineno, first);
	ST(s->gen, g);
	ST(s->value, value);
	atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

/* ---- str objects, read in place ---- */

static size_t put_utf8(char *b, size_t at, size_t size, uint32_t c)
{
	unsigned char u[4];
	size_t n, i;

	if (c < 0x80) {
		u[0] = (unsigned char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (unsigned char)(0xC0 | c >> 6);
		u[1] = (unsigned char)(0x80 | (c & 0x3F));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (unsigned char)(0xE0 | c >> 12);
		u[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
		u[2] = (unsigned char)(0x80 | (c & 0x3F));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xF0 | (c >> 18 & 0x07));
		u[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
		u[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
		u[3] = (unsigned char)(0x80 | (c & 0x3F));
		n = 4;
	}
	if (at + n >= size)
		return 0;
	for (i = 0; i < n; i++)
		b[at + i] = (char)u[i];
	return n;
}

/* The UTF-8 text of a compact str (every identifier and file name is one),
 * truncated to fit buf; "?" for anything else. */
static const char *str_of(uintptr_t o, char *buf, size_t size)
{
	uint32_t st, kind;
	int64_t len;
	size_t at = 0, k;
	uintptr_t d;

	if (!o)
		return "?";
	st = *(const uint32_t *)(o + (uintptr_t)O.u_state);
	len = *(const int64_t *)(o + (uintptr_t)O.u_length);
	if (!(st >> O.u_compact_shift & 1) || len < 0)
		return "?";
	if (st >> O.u_ascii_shift & 1) {
		at = (uint64_t)len < size ? (size_t)len : size - 1;
		memcpy(buf, (const void *)(o + (uintptr_t)O.u_ascii_size), at);
		buf[at] = '\0';
		return buf;
	}
	kind = st >> O.u_kind_shift & 7;
	d = o + (uintptr_t)O.u_compact_size;
	for (k = 0; k < (uint64_t)len; k++) {
		uint32_t c = kind == 1 ? ((const uint8_t *)d)[k]
			     : kind == 2 ? ((const uint16_t *)d)[k]
					 : ((const uint32_t *)d)[k];
		size_t n = put_utf8(buf, at, size, c);
		if (!n)
			break;
		at += n;
	}
	buf[at] = '\0';
	return buf;
}

/* The frame value of code at byte offset lasti (first sight). */
static uint64_t frame_new(mp_writer_t *w, uintptr_t code, int64_t lasti, uintptr_t name, uintptr_t file)
{
	char fn[256], fl[512];
	uint32_t f, p;
	int line;

	f = mp_writer_intern(w, str_of(name, fn, sizeof(fn)));
	p = mp_writer_intern(w, str_of(file, fl, sizeof(fl)));
	line = addr2line((void *)code, (int)lasti);
	return mp_writer_frame(w, f, p, line > 0 ? (uint32_t)line : 0, MP_FRAME_PYTHON);
}

/* ---- the thread's attached state, read in place (3.12, 3.13) ---- */

/* attached() is `return _Py_tss_tstate;`, a thread-local of libpython
 * (not exported), which a shared library reads through the x86-64 ABI's
 * general-dynamic sequence: `lea tls_index(%rip), %rdi` then `call
 * __tls_get_addr` (padded with the prefixes the ABI fixes), then `mov
 * (%rax), %rax`. Where attached() is exactly that, its tls_index is taken
 * from the lea, and each thread asks __tls_get_addr once for its own
 * address of the variable (libpython is loaded with the program: static
 * TLS, nothing allocated), then reads it in place: about 25 instructions
 * a read fewer than the call, its __tls_get_addr and its return. Any other
 * code (a static build's relaxed sequence, another compiler's) keeps the
 * call. */
static void *tss_index;
#if defined(__x86_64__)
extern void *__tls_get_addr(void *);
__thread uintptr_t *mp__py_tss_at __attribute__((tls_model("initial-exec")));

static void *gd_index(const unsigned char *p)
{
	static const unsigned char sub8[] = {0x48, 0x83, 0xec, 0x08}, lea[] = {0x66, 0x48, 0x8d, 0x3d},
				   call[] = {0x66, 0x66, 0x48, 0xe8}, load[] = {0x48, 0x8b, 0x00};
	const unsigned char *idx;
	uintptr_t *at, tp;
	int32_t rel;

	if (!p)
		return NULL;
	if (!memcmp(p, sub8, sizeof(sub8)))
		p += sizeof(sub8); /* (the call's stack alignment) */
	if (memcmp(p, lea, sizeof(lea)) || memcmp(p + 8, call, sizeof(call)) || memcmp(p + 16, load, sizeof(load)))
		return NULL;
	memcpy(&rel, p + 4, sizeof(rel));
	idx = p + 8 + rel;
	/* the address this thread gets must lie in its static TLS, just below
	 * the thread pointer, and hold what attached() returns */
	at = __tls_get_addr((void *)(uintptr_t)idx);
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	if (!at || (uintptr_t)at >= tp || tp - (uintptr_t)at > (1u << 20) || *at != (uintptr_t)attached())
		return NULL;
	return (void *)(uintptr_t)idx;
}
#endif

static inline uintptr_t attached_state(void)
{
#if defined(__x86_64__)
	uintptr_t *at;

	if (tss_index) {
		at = mp__py_tss_at;
		if (__builtin_expect(!at, 0))
			at = mp__py_tss_at = __tls_get_addr(tss_index);
		return *at;
	}
#endif
	return attached ? (uintptr_t)attached() : 0;
}

/* ---- the walk ---- */

uintptr_t mp__py_top_frame(void)
{
	uintptr_t ts;

	/* the state this thread runs Python with (3.12+: a thread-local read,
	 * cheaper than PyGILState's pthread key; an attached state is live,
	 * finalizing or not: CPython detaches it before freeing it), else the
	 * one PyGILState knows (a thread that released the GIL), which
	 * finalization may free */
	ts = attached_state();
	if (!ts) {
		if (finalizing && finalizing())
			return 0;
		ts = (uintptr_t)get_tstate();
	}
	return ts ? mp__py_frame_of(ts) : 0;
}


int mp__py_walk(mp_writer_t *w, uint64_t *out, int max, uint8_t *groups, int *ngroups)
{
	uintptr_t f = mp__py_top_frame();
	uint32_t g = atomic_load_explicit(&mp__py_gen, memory_order_relaxed);
	int n = 0, ng = 0, in_group = 0, hops = 0;

	*ngroups = 0;
	for (; f && n < max && ng < max && hops < 4096; f = (uintptr_t)rd(f + (uintptr_t)O.fr_previous), hops++) {
		int owner = *(const signed char *)(f + (uintptr_t)O.fr_owner);
		uintptr_t code, first, instr;
		int64_t lasti, firstlineno;
		uint64_t name, file, v;

		if (owner == O.owner_cstack) {
			/* 3.12+: the shim _PyEval_EvalFrameDefault pushes on entry;
			 * the frames since the last one ran in that C call */
			groups[ng++] = (uint8_t)in_group;
			in_group = 0;
			continue;
		}
		code = (uintptr_t)rd(f + (uintptr_t)O.fr_code);
		if (!code || (uintptr_t)rd(code + (uintptr_t)O.ob_type) != code_type)
			goto next; /* 3.13: f_executable that is not code */
		first = code + (uintptr_t)O.co_code_adaptive;
		instr = (uintptr_t)rd(f + (uintptr_t)O.fr_instr);
		if (owner != O.owner_generator && instr < first + 2 * (uintptr_t)rd32(code + (uintptr_t)O.co_firsttraceable))
			goto next; /* incomplete: not started yet, as CPython's own _PyFrame_IsIncomplete */
		lasti = (int64_t)instr - (int64_t)first;
		name = rd(code + (uintptr_t)O.co_qualname);
		file = rd(code + (uintptr_t)O.co_filename);
		firstlineno = rd32(code + (uintptr_t)O.co_firstlineno);
		v = cache_get(code, lasti, name, file, firstlineno, g);
		if (!v) {
			v = frame_new(w, code, lasti, (uintptr_t)name, (uintptr_t)file);
			if (v)
				cache_put(code, lasti, name, file, firstlineno, g, v);
		}
		if (v) {
			out[n++] = v;
			in_group++;
		}
	next:
		/* 3.11: the first frame of a _PyEval_EvalFrameDefault call */
		if (O.fr_is_entry >= 0 && *(const unsigned char *)(f + (uintptr_t)O.fr_is_entry)) {
			groups[ng++] = (uint8_t)in_group;
			in_group = 0;
		}
	}
	if (in_group && ng < max)
		groups[ng++] = (uint8_t)in_group;
	*ngroups = ng;
	return n;
}

/* ---- detection ---- */

/* One line on stderr, once per process (detection runs once per image). */
static void say(const char *a, const char *b, const char *c)
{
	struct iovec v[4] = {
		{(void *)(uintptr_t) "memprof: ", 9},
		{(void *)(uintptr_t)a, strlen(a)},
		{(void *)(uintptr_t)b, strlen(b)},
		{(void *)(uintptr_t)c, strlen(c)},
	};
	ssize_t r = writev(2, v, 4);
	(void)r;
}

/* A failed dlsym leaves glibc's error state allocated (the thread's
 * dl_action_result and its message, made here with the guard held, so
 * not recorded); the program's next dl* call or its thread's exit would
 * free them -- a recorded free of a block never seen allocated, in every
 * program that is not a Python. Two dlerror() calls, here, free them
 * unrecorded (the first formats the message, the second frees it all). */
static int failed;

static void *sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	failed |= !p;
	return p;
}

static void forget_errors(void)
{
	if (failed) {
		(void)dlerror();
		(void)dlerror();
		failed = 0;
	}
}

/* 3.13: the debug offsets at the start of _PyRuntime, for the fields they
 * give (a patch release that moved one is still read right). Returns 0, or
 * -1 for a free-threaded build (another frame layout, no GIL). */
static int use_debug_offsets(const unsigned char *rt, unsigned long hex)
{
	uint64_t d[MP_DBG_COUNT];

	if (!rt || memcmp(rt, "xdebugpy", 8))
		return 0;
	memcpy(d, rt + 8, sizeof(d));
	if ((d[MP_DBG_VERSION] >> 16) != (hex >> 16))
		return 0;
	if (d[MP_DBG_FREE_THREADED])
		return -1;
	O.ts_current_frame = (int)d[MP_DBG_TS_CURRENT_FRAME];
	O.fr_previous = (int)d[MP_DBG_FR_PREVIOUS];
	O.fr_code = (int)d[MP_DBG_FR_EXECUTABLE];
	O.fr_instr = (int)d[MP_DBG_FR_INSTR_PTR];
	O.fr_owner = (int)d[MP_DBG_FR_OWNER];
	O.co_filename = (int)d[MP_DBG_CO_FILENAME];
	O.co_name = (int)d[MP_DBG_CO_NAME];
	O.co_qualname = (int)d[MP_DBG_CO_QUALNAME];
	O.co_firstlineno = (int)d[MP_DBG_CO_FIRSTLINENO];
	O.co_code_adaptive = (int)d[MP_DBG_CO_CODE_ADAPTIVE];
	O.ob_type = (int)d[MP_DBG_OB_TYPE];
	O.u_state = (int)d[MP_DBG_U_STATE];
	O.u_length = (int)d[MP_DBG_U_LENGTH];
	O.u_ascii_size = (int)d[MP_DBG_U_ASCII_SIZE];
	return 0;
}

/* ---- code objects' deaths (pystack_cache.c's hits) ---- */

/* Bumped before each code object is deallocated. A thread's cached stack
 * filled (or last checked in full) while the count was what it is now has
 * seen no code object die since: each code object it names is the same
 * live object (frames hold strong references to their code), whose
 * co_qualname, co_filename and co_firstlineno are read-only, so a hit
 * needs not read them again. */
_Atomic uint64_t mp__py_code_frees;
int mp__py_code_watched;
static void (*code_dealloc)(void *);
#define TP_DEALLOC 48 /* offsetof(PyTypeObject, tp_dealloc), 64-bit, 3.0 to 3.13 */

static void counted_dealloc(void *op)
{
	atomic_fetch_add_explicit(&mp__py_code_frees, 1, memory_order_relaxed);
	code_dealloc(op);
}

/* Every code object dies through PyCode_Type's tp_dealloc (_Py_Dealloc;
 * the type cannot be subclassed), whichever allocator frees it: ours
 * counts, then calls CPython's. Set before mp__py_on: a code object
 * whose dealloc read the old slot on another thread (a --delay capture
 * opening) was already dead, so no cached stack can name it. Nothing the
 * program sees changes (a type's tp_dealloc is not visible from Python). */
static void watch_code_frees(void)
{
	void (**slot)(void *) = (void (**)(void *))(code_type + TP_DEALLOC);

	if (sizeof(void *) != 8 || mp__py_code_watched)
		return;
	if (*slot != counted_dealloc) {
		if (!*slot)
			return;
		code_dealloc = *slot;
		__atomic_store_n(slot, counted_dealloc, __ATOMIC_RELEASE);
	}
	mp__py_code_watched = 1;
}

static void configure(void);

void mp__py_configure(void)
{
	configure();
	forget_errors();
}

static void configure(void)
{
	const char *off = getenv("MEMPROF_PYTHON");
	const unsigned long *ver;
	const mp_pyoffsets_t *t;
	const char *(*getver)(void);
	const char *missing = NULL;
	unsigned long hex = 0;
	char v[64];
	void *eval;
	Dl_info info;
	ElfW(Sym) *es = NULL;

	mp__py_on = 0;
	if (off && (!strcmp(off, "0") || !strcmp(off, "off") || !strcmp(off, "no")))
		return;
	ver = sym("Py_Version");
	if (ver) {
		hex = *ver;
	} else if ((*(void **)&getver = sym("Py_GetVersion")) != NULL) {
		const char *s = getver();
		unsigned maj = 0, min = 0;
		if (s && sscanf(s, "%u.%u", &maj, &min) == 2)
			hex = (unsigned long)maj << 24 | (unsigned long)min << 16;
	}
	if (!hex)
		return; /* not a Python */
	snprintf(v, sizeof(v), "Python %lu.%lu", hex >> 24, hex >> 16 & 0xff);
	t = (hex >> 24) == 3 ? mp__pyoffsets((int)(hex >> 16 & 0xff)) : NULL;
	if (!t) {
		say(v, " frames not supported (3.11-3.13); native stacks only\n", "");
		return;
	}
	O = *t;
	*(void **)&get_tstate = sym("PyGILState_GetThisThreadState");
	/* (3.11's reads the GIL holder's, which may be another thread's) */
	if (O.minor >= 12)
		*(void **)&attached = sym(O.minor >= 13 ? "PyThreadState_GetUnchecked" : "_PyThreadState_UncheckedGet");
	*(void **)&addr2line = sym("PyCode_Addr2Line");
	code_type = (uintptr_t)sym("PyCode_Type");
	*(void **)&finalizing = sym("Py_IsFinalizing");
	if (!finalizing)
		*(void **)&finalizing = sym("_Py_IsFinalizing");
	eval = sym("_PyEval_EvalFrameDefault");
	if (!get_tstate)
		missing = "no PyGILState_GetThisThreadState";
	else if (!addr2line)
		missing = "no PyCode_Addr2Line";
	else if (!code_type)
		missing = "no PyCode_Type";
	else if (!eval || !dladdr1(eval, &info, (void **)&es, RTLD_DL_SYMENT) || !es || !es->st_size)
		missing = "no _PyEval_EvalFrameDefault";
	else if (O.minor >= 13 && use_debug_offsets(sym("_PyRuntime"), hex) < 0)
		missing = "a free-threaded build";
	if (missing) {
		say(v, " frames not supported: ", missing);
		say("", "", "; native stacks only\n");
		return;
	}
#if defined(__x86_64__)
	tss_index = attached ? gd_index((const unsigned char *)(uintptr_t)attached) : NULL;
#endif
	mp__py_eval_lo = (uint64_t)(uintptr_t)eval;
	mp__py_eval_hi = mp__py_eval_lo + es->st_size;
	watch_code_frees();
	mp__py_on = 1;
}
