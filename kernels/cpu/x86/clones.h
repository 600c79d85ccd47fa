/* Q8_CLONES: compile a plain-C loop kernel for AVX-512, AVX2 and baseline
 * x86-64, picked once at load time (GCC function multiversioning), so its
 * loops use the widest vectors the CPU has. The AVX-512 clone may contract
 * a*b+c into FMA, so clones can differ in rounding (a machine always runs
 * the same clone). Empty elsewhere. */
#ifndef Q8_CLONES_H
#define Q8_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define Q8_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define Q8_CLONES
#endif

#endif
