/* cxx.c - C++ operator new and delete, for allocators that replace them.
 *
 * On glibc, libstdc++'s operator new calls malloc and its operator delete
 * calls free, so the malloc hooks see every C++ allocation. jemalloc,
 * tcmalloc and mimalloc replace both layers: their operator new goes
 * straight to their own allocation code. A C++ program that preloads one
 * of them (common for PyTorch) would have every new and delete missing
 * from its capture. So the preload defines the operator new and delete
 * family too (the Itanium C++ ABI's mangled names; size_t is unsigned
 * long, "m"). Each goes on to the next definition (RTLD_NEXT):
 *
 *   - when that lives in the allocator that replaced malloc, it is
 *     recorded here, as the malloc hooks record (hook_path.h);
 *   - otherwise (libstdc++) this is a tail call and nothing more: the
 *     malloc hooks record the malloc underneath.
 *
 * The allocator's new may itself call an exported function of the malloc
 * family (jemalloc's aligned new calls aligned_alloc), so the guard is held
 * across the call, as in the malloc hooks, or the block would be recorded
 * twice. The throwing forms may leave by std::bad_alloc instead of
 * returning: this file is built with -fexceptions, and a cleanup on the
 * frame records the failed allocation and leaves the hook as the
 * exception passes (a guard left set would stop recording on the thread
 * for good). The exception object itself was allocated with malloc under
 * our guard; malloc noted it (MP_GUARD_CXX_NEW, preload.h) and the cleanup
 * records it too, so that its free, later and unguarded, is of a known
 * block. (Allocations of a std::new_handler that the allocator calls are
 * not recorded: they happen inside the hook.)
 */
#include "hook_path.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

_Static_assert(sizeof(size_t) == sizeof(unsigned long), "the mangled names below spell size_t as m");

/* What -fexceptions makes our frames call, from libgcc_s: the personality
 * routine and, after the cleanup, _Unwind_Resume. Both referenced weakly:
 * the preload links libgcc_s only when it links libunwind (CMakeLists.txt
 * says why), and without it must still load where libgcc_s is absent
 * (LD_BIND_NOW). An exception can only pass through here from an
 * allocator's operator new, and an allocator with a throwing operator new
 * brings libstdc++, hence libgcc_s, with it (jemalloc and tcmalloc do;
 * mimalloc's aborts instead). */
__asm__(".weak __gcc_personality_v0");
__asm__(".weak _Unwind_Resume");

enum {
	NEW, NEW_A, NEW_NT, NEW_A_NT, NEW_AL, NEW_A_AL, NEW_AL_NT, NEW_A_AL_NT,
	DEL, DEL_A, DEL_SZ, DEL_A_SZ, DEL_NT, DEL_A_NT, DEL_AL, DEL_A_AL, DEL_SZ_AL, DEL_A_SZ_AL,
	DEL_AL_NT, DEL_A_AL_NT, N_OPS
};

static const char *const op_names[N_OPS] = {
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
	"_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
	"_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
	"_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
	"_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* The definitions after ours, found on first use (libstdc++ may come with
 * a library dlopen'ed later) or by mp__cxx_resolve; and whether each is
 * the replacing allocator's own, recorded here. */
static void *_Atomic next_op[N_OPS];
static _Atomic unsigned char direct[N_OPS];

static void *next_of(int i)
{
	void *f = atomic_load_explicit(&next_op[i], memory_order_acquire);

	if (__builtin_expect(!f, 0)) {
		int guard = mp__guard;
		mp__guard = 1; /* what dlsym allocates is not the program's */
		f = dlsym(RTLD_NEXT, op_names[i]);
		mp__guard = guard;
		atomic_store_explicit(&next_op[i], f, memory_order_release);
	}
	return f;
}

static int is_direct(int i)
{
	return atomic_load_explicit(&direct[i], memory_order_relaxed);
}

void mp__cxx_resolve(void)
{
	int i;

	atomic_store(&mp__bootstrapping, 1); /* dlsym's allocations: the static arena */
	for (i = 0; i < N_OPS; i++) {
		void *f = dlsym(RTLD_NEXT, op_names[i]);
		if (f)
			atomic_store_explicit(&next_op[i], f, memory_order_release);
		atomic_store_explicit(&direct[i],
				      !mp__real_is_glibc && mp__same_object(f, (void *)(uintptr_t)mp__real.malloc),
				      memory_order_relaxed);
	}
	atomic_store(&mp__bootstrapping, 0);
}

/* A throwing new's call in flight, hook entered: if std::bad_alloc leaves
 * through the frame (armed still set), record the failure and leave the
 * hook. The cleanup also runs, disarmed, when the call returns. */
typedef struct {
	size_t n;
	int armed;
} new_call_t;

static void new_unwinding(new_call_t *c)
{
	if (c->armed) {
		int e = errno;
		mp__guard = 1;
		rec_alloc(NULL, c->n);
		if (mp__cxx_noted.p)
			rec_alloc(mp__cxx_noted.p, mp__cxx_noted.n); /* the exception's own block */
		leave(e);
	}
}

/* The forms, by parameters. THROWS: the form may leave by std::bad_alloc
 * (a constant: the other branch goes). FALLBACK: with no definition after
 * ours at all (no libstdc++ loaded, yet someone called operator new: not
 * expected), the malloc family through our own hooks. */
#define NEW_FORM(name, i, THROWS, PARAMS, ARGS, n, FALLBACK)                              \
	MP_EXPORT void *name PARAMS                                                       \
	{                                                                                 \
		void *(*f) PARAMS = (void *(*) PARAMS)(uintptr_t)next_of(i);              \
		void *p;                                                                  \
		int e;                                                                    \
		if (__builtin_expect(!f, 0))                                              \
			return FALLBACK;                                                  \
		if (!is_direct(i) || !enter())                                            \
			return f ARGS;                                                    \
		if (THROWS) {                                                             \
			mp__cxx_noted.p = NULL;                                           \
			mp__guard = MP_GUARD_CXX_NEW;                                     \
			{                                                                 \
				new_call_t call __attribute__((cleanup(new_unwinding))) = \
					{n, 1};                                           \
				p = f ARGS;                                               \
				call.armed = 0;                                           \
			}                                                                 \
			mp__guard = 1;                                                    \
		} else {                                                                  \
			p = f ARGS;                                                       \
		}                                                                         \
		e = errno;                                                                \
		rec_alloc(p, n);                                                          \
		leave(e);                                                                 \
		return p;                                                                 \
	}

#define DELETE_FORM(name, i, PARAMS, ARGS)                                                \
	MP_EXPORT void name PARAMS                                                        \
	{                                                                                 \
		void (*f) PARAMS = (void (*) PARAMS)(uintptr_t)next_of(i);                \
		int e;                                                                    \
		if (__builtin_expect(!f, 0)) {                                            \
			free(p);                                                          \
			return;                                                           \
		}                                                                         \
		if (!is_direct(i) || !p || !enter()) {                                    \
			f ARGS;                                                           \
			return;                                                           \
		}                                                                         \
		e = errno;                                                                \
		rec_free(p);                                                              \
		f ARGS;                                                                   \
		leave(e);                                                                 \
	}

/* Declared here (no header declares the mangled names in C); defined by
 * the macros below. */
#define N(name, params) MP_EXPORT void *name params;
#define D(name, params) MP_EXPORT void name params;
N(_Znwm, (size_t)) N(_Znam, (size_t)) N(_ZnwmRKSt9nothrow_t, (size_t, const void *))
N(_ZnamRKSt9nothrow_t, (size_t, const void *)) N(_ZnwmSt11align_val_t, (size_t, size_t))
N(_ZnamSt11align_val_t, (size_t, size_t)) N(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t, size_t, const void *))
N(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t, size_t, const void *))
D(_ZdlPv, (void *)) D(_ZdaPv, (void *)) D(_ZdlPvm, (void *, size_t)) D(_ZdaPvm, (void *, size_t))
D(_ZdlPvRKSt9nothrow_t, (void *, const void *)) D(_ZdaPvRKSt9nothrow_t, (void *, const void *))
D(_ZdlPvSt11align_val_t, (void *, size_t)) D(_ZdaPvSt11align_val_t, (void *, size_t))
D(_ZdlPvmSt11align_val_t, (void *, size_t, size_t)) D(_ZdaPvmSt11align_val_t, (void *, size_t, size_t))
D(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *, size_t, const void *))
D(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *, size_t, const void *))
#undef N
#undef D

NEW_FORM(_Znwm, NEW, 1, (size_t n), (n), n, malloc(n))
NEW_FORM(_Znam, NEW_A, 1, (size_t n), (n), n, malloc(n))
NEW_FORM(_ZnwmSt11align_val_t, NEW_AL, 1, (size_t n, size_t al), (n, al), n, memalign(al, n))
NEW_FORM(_ZnamSt11align_val_t, NEW_A_AL, 1, (size_t n, size_t al), (n, al), n, memalign(al, n))
NEW_FORM(_ZnwmRKSt9nothrow_t, NEW_NT, 0, (size_t n, const void *nt), (n, nt), n, malloc(n))
NEW_FORM(_ZnamRKSt9nothrow_t, NEW_A_NT, 0, (size_t n, const void *nt), (n, nt), n, malloc(n))
NEW_FORM(_ZnwmSt11align_val_tRKSt9nothrow_t, NEW_AL_NT, 0, (size_t n, size_t al, const void *nt), (n, al, nt), n,
	    memalign(al, n))
NEW_FORM(_ZnamSt11align_val_tRKSt9nothrow_t, NEW_A_AL_NT, 0, (size_t n, size_t al, const void *nt), (n, al, nt), n,
	    memalign(al, n))
DELETE_FORM(_ZdlPv, DEL, (void *p), (p))
DELETE_FORM(_ZdaPv, DEL_A, (void *p), (p))
DELETE_FORM(_ZdlPvm, DEL_SZ, (void *p, size_t sz), (p, sz))
DELETE_FORM(_ZdaPvm, DEL_A_SZ, (void *p, size_t sz), (p, sz))
DELETE_FORM(_ZdlPvRKSt9nothrow_t, DEL_NT, (void *p, const void *nt), (p, nt))
DELETE_FORM(_ZdaPvRKSt9nothrow_t, DEL_A_NT, (void *p, const void *nt), (p, nt))
DELETE_FORM(_ZdlPvSt11align_val_t, DEL_AL, (void *p, size_t al), (p, al))
DELETE_FORM(_ZdaPvSt11align_val_t, DEL_A_AL, (void *p, size_t al), (p, al))
DELETE_FORM(_ZdlPvmSt11align_val_t, DEL_SZ_AL, (void *p, size_t sz, size_t al), (p, sz, al))
DELETE_FORM(_ZdaPvmSt11align_val_t, DEL_A_SZ_AL, (void *p, size_t sz, size_t al), (p, sz, al))
DELETE_FORM(_ZdlPvSt11align_val_tRKSt9nothrow_t, DEL_AL_NT, (void *p, size_t al, const void *nt), (p, al, nt))
DELETE_FORM(_ZdaPvSt11align_val_tRKSt9nothrow_t, DEL_A_AL_NT, (void *p, size_t al, const void *nt), (p, al, nt))
