/* q8.QAdd's kernels (the op: src/core/ops/qadd.h): the portable C loop and
 * AVX2 (bytes widened to int16, each (a, b) pair times (ma, mb) by one
 * vpmaddwd, exact int32). Every path gives the same bytes. */
#ifndef Q8_KERNELS_CPU_QADD_KERN_H
#define Q8_KERNELS_CPU_QADD_KERN_H

#include <stdint.h>

#include "igemm.h"
#include "ops/qadd.h"

typedef enum q8_qadd_path { Q8_QADD_C = 0, Q8_QADD_AVX2 } q8_qadd_path;

/* The kernel for an igemm path (the op's _igemm_path; AUTO: the best this
 * CPU has): every x86 SIMD path -> AVX2, else C. */
q8_qadd_path q8_qadd_resolve(q8_igemm_path p);
void q8_qadd_apply(q8_qadd_path path, const q8_qadd_params *p, const int8_t *a, const int8_t *b,
                   int8_t *y, int64_t n);

#if defined(__x86_64__) || defined(__i386__)
void q8_qadd_avx2(const q8_qadd_params *p, const int8_t *a, const int8_t *b, int8_t *y,
                  int64_t n);
#endif

#endif
