/* q8.QLut's kernel: y[i] = t[x[i] + 128] for int8 x, on the path chosen by
 * q8_qlut_resolve (AVX-512 VBMI: vpermi2b over the table in four zmm;
 * AVX2: vpshufb on the 16 sub-tables of 16 entries, merged by a tree of
 * blends on the index bits; portable C). Every path gives the same bytes. */
#ifndef Q8_KERNELS_CPU_QLUT_H
#define Q8_KERNELS_CPU_QLUT_H

#include <stdint.h>

#include "igemm.h"

typedef enum q8_qlut_path {
    Q8_QLUT_C = 0,
    Q8_QLUT_AVX2,
    Q8_QLUT_AVX512VBMI,
    Q8_QLUT_NEON,           /* aarch64: TBL / TBX over the table in 16 registers */
} q8_qlut_path;

/* The kernel for an igemm path (the op's _igemm_path; AUTO: the best this
 * CPU has): c -> C; avx2, avxvnni -> AVX2; avx512vnni -> AVX-512 VBMI if the
 * CPU has VBMI, else AVX2; neondot, neoni8mm -> NEON. */
q8_qlut_path q8_qlut_resolve(q8_igemm_path p);
void q8_qlut_apply(q8_qlut_path p, const int8_t *x, const int8_t *t, int8_t *y, int64_t n);

#if defined(__x86_64__) || defined(__i386__)
void q8_qlut_avx2(const int8_t *x, const int8_t *t, int8_t *y, int64_t n);
void q8_qlut_avx512vbmi(const int8_t *x, const int8_t *t, int8_t *y, int64_t n);
#endif
#if defined(__aarch64__)
void q8_qlut_neon(const int8_t *x, const int8_t *t, int8_t *y, int64_t n);
#endif

#endif
