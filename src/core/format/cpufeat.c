/* cpufeat.c - mp__cpu_features (cpufeat.h). CPUID directly: compilers'
 * __builtin_cpu_supports do not all know LZCNT. */
#include <memprof/format/cpufeat.h>

#include <stdatomic.h>

#ifdef MP_HAVE_X86_VARIANTS
#include <cpuid.h>

/* AMD before Zen 3 (family 19h) runs pdep in microcode, some hundred
 * cycles an instruction. */
static int slow_pdep(void)
{
	unsigned a, b, c, d, family;

	if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u) /* "Auth"enticAMD */
		return 0;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 1;
	family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	return family < 0x19;
}

static unsigned probe(void)
{
	unsigned a, b, c, d, f = 0;

	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 8)))
		f |= MP_CPU_BMI2;
	if (__get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 5)))
		f |= MP_CPU_LZCNT;
	if (!slow_pdep())
		f |= MP_CPU_FAST_PDEP;
	return f;
}
#else
static unsigned probe(void)
{
	return 0;
}
#endif

static _Atomic unsigned limit = ~0u;

unsigned mp__cpu_features(void)
{
	static _Atomic unsigned known; /* the bits, with bit 31 set once asked */
	unsigned k = atomic_load_explicit(&known, memory_order_relaxed);

	if (!k) {
		k = probe() | 1u << 31;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k & ~(1u << 31) & atomic_load_explicit(&limit, memory_order_relaxed);
}

void mp__cpu_features_limit(unsigned mask)
{
	atomic_store_explicit(&limit, mask, memory_order_relaxed);
}
