/* Sigmoid and SiLU on AVX-512F (kernels/cpu/x86/vmath_avx512.c): the bits
 * of vmath.h's q8_vsigmoid and ewchain_eval.h's q8_ew_swish, element for
 * element, with fewer instructions than their compiled loops. */
#ifndef Q8_KERNELS_CPU_VMATH_X86_H
#define Q8_KERNELS_CPU_VMATH_X86_H

#include <stdbool.h>
#include <stdint.h>

#include "vmath.h"

/* Whether the CPU runs the functions below. */
bool q8_vmath_x86_ok(void);

/* y[i] = q8_vsigmoid(x[i]) for i < n (y may be x). */
void q8_sigmoid_x86(const float *x, float *y, int64_t n);
/* y[i] = q8_ew_swish(x[i], c0) for i < n (y may be x). */
void q8_swish_x86(const float *x, float *y, int64_t n, float c0);

/* y[i] = q8_vsigmoid(x[i]) for i < n (y may be x): the AVX-512 loop where
 * the CPU has it, else the plain one (inlined, so it vectorizes in the
 * caller's clone). The Sigmoid op, fused Sigmoid and RNN gates. */
static inline void q8_sigmoid_f32(const float *x, float *y, int64_t n) {
    if (q8_vmath_x86_ok()) q8_sigmoid_x86(x, y, n);
    else
        for (int64_t i = 0; i < n; i++) y[i] = q8_vsigmoid(x[i]);
}

#endif
