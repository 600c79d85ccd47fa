/* Relu, Clip and HardSwish on 16 floats in AVX-512 registers with
 * q8_act_apply's results bit for bit (fused_act.c), NaN and -0 included:
 * the FP32 kernels that apply an activation in their stores (the SGEMM
 * epilogue, the few-channel and depthwise conv loops) share these. Include
 * after <immintrin.h>. */
#ifndef Q8_KERNELS_CPU_X86_ACT_AVX512_H
#define Q8_KERNELS_CPU_X86_ACT_AVX512_H

#include "fused_act.h"

#define Q8_ACT512 __attribute__((target("avx512f"), always_inline)) static inline

/* max(0, x) with x second: maxps returns its second operand for a NaN and
 * for equal zeros, so NaN and -0 stay, as in the Relu op (x < 0 ? 0 : x) */
Q8_ACT512 __m512 q8v_relu(__m512 x) { return _mm512_max_ps(_mm512_setzero_ps(), x); }

/* x > hi ? hi : x, then x < lo ? lo : that (NaN stays NaN): the scalar
 * x < lo ? lo : x > hi ? hi : x for any lo and hi. */
Q8_ACT512 __m512 q8v_clip(__m512 x, float lo, float hi) {
    __m512 vl = _mm512_set1_ps(lo), vh = _mm512_set1_ps(hi);
    __m512 r = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, vh, _CMP_GT_OQ), vh);
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, vl, _CMP_LT_OQ), vl);
}

/* h = al*x + be rounded twice (the empty asm keeps the compiler from
 * contracting it into an FMA), then h <= 0 ? -0 : h >= 1 ? x : x*h (NaN
 * stays NaN). */
Q8_ACT512 __m512 q8v_hswish(__m512 x, float al, float be) {
    __m512 h = _mm512_mul_ps(_mm512_set1_ps(al), x);
    __asm__("" : "+v"(h));
    h = _mm512_add_ps(h, _mm512_set1_ps(be));
    __m512 r = _mm512_mul_ps(x, h);
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(h, _mm512_set1_ps(1.0f), _CMP_GE_OQ), x);
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(h, _mm512_setzero_ps(), _CMP_LE_OQ),
                              _mm512_set1_ps(-0.0f));
}

/* Which of the three an activation is in registers: 0 none of them (the
 * caller applies it as a pass, or there is none), 1 Relu, 2 Clip, 3
 * HardSwish. */
static inline int q8v_act_code(const q8_act *a) {
    return a->kind == Q8_ACT_RELU         ? 1
           : a->kind == Q8_ACT_CLIP       ? 2
           : a->kind == Q8_ACT_HARD_SWISH ? 3
                                          : 0;
}

/* The activation of code c (q8v_act_code) with its parameters. */
Q8_ACT512 __m512 q8v_act(__m512 x, int c, float p0, float p1) {
    return c == 1 ? q8v_relu(x) : c == 2 ? q8v_clip(x, p0, p1) : c == 3 ? q8v_hswish(x, p0, p1) : x;
}

#endif
