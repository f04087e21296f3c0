/* cpufeat.h - which optional x86-64 instructions the CPU runs well, asked
 * once (internal). The writer's encoder (chunkenc.c) and Huffman coder
 * (deflate_huff.c) have variants built with target attributes and pick
 * them at run time from this. */
#ifndef MP_CPUFEAT_H
#define MP_CPUFEAT_H

/* x86-64 with a compiler that takes target attributes and inline asm:
 * the variants exist at all. */
#if defined(__x86_64__) && defined(__GNUC__)
#define MP_HAVE_X86_VARIANTS 1
#endif

enum {
	MP_CPU_BMI2 = 1u << 0,      /* shlx/shrx/pdep (CPUID 7: EBX bit 8) */
	MP_CPU_LZCNT = 1u << 1,     /* lzcnt (CPUID 0x80000001: ECX bit 5) */
	MP_CPU_FAST_PDEP = 1u << 2, /* pdep not in microcode (all but AMD before Zen 3) */
};

/* The MP_CPU_* bits of this CPU; 0 where MP_HAVE_X86_VARIANTS is not set. */
unsigned mp__cpu_features(void);

/* For tests and benchmarks: from now on, answer as if the CPU had only the
 * features in mask as well (~0u: all it has; 0: the portable variants
 * everywhere, which non-x86 builds run). Process-wide: not while a writer
 * runs in another thread. */
void mp__cpu_features_limit(unsigned mask);

#endif
