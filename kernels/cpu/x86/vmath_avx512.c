/* Sigmoid and SiLU (x * sigmoid(x)) on AVX-512F: the same bits as vmath.h's
 * q8_vsigmoid and ewchain_eval.h's q8_ew_swish, in about half the
 * instructions of the compiler's vectorization of them (YOLOv5s's 57 SiLU
 * steps were twice ONNX Runtime's time). Only the argument e^-|v| is ever
 * taken, so q8_vexp's upper clamp never applies, and its scaling by 2^n in
 * two exact halves, which rounds once into the subnormals, is vscalefps
 * (one rounding of p x 2^n: the same number). Every other step is the C
 * form's operation on the same operands in the same order; tests/
 * test_ops_math.c compares the two on a dense sample of all floats. Built
 * without FMA contraction (CMakeLists.txt); only called when the CPU has
 * AVX-512F. */
#include "vmath_x86.h"

#include "cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC target("avx512f")
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>

bool q8_vmath_x86_ok(void) { return q8_cpu()->avx512f; }

/* q8_vsigmoid(v) on 16 lanes. */
static inline __m512 sigmoid16(__m512 v) {
    const __m512 magic = _mm512_set1_ps(12582912.0f), one = _mm512_set1_ps(1.0f);
    const __m512i sign = _mm512_set1_epi32(INT32_MIN);
    /* x = -|v|; x == x except for NaN, which q8_vexp returns as it is */
    __m512 x = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), sign));
    __mmask16 num = _mm512_cmp_ps_mask(x, x, _CMP_EQ_OQ);
    /* xc = max(x, -104), 0 for NaN */
    __m512 xc = _mm512_maskz_max_ps(num, x, _mm512_set1_ps(-104.0f));
    __m512 t = _mm512_add_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)), magic);
    __m512 nf = _mm512_sub_ps(t, magic);
    __m512 r = _mm512_sub_ps(xc, _mm512_mul_ps(nf, _mm512_set1_ps(0.693145751953125f)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(nf, _mm512_set1_ps(1.428606765330187045e-06f)));
    __m512 p = _mm512_set1_ps(1.0f / 5040);
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 720));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 120));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 24));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 6));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(0.5f));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), one);
    p = _mm512_add_ps(_mm512_mul_ps(p, r), one);
    /* e = p 2^n (nf is n exactly), x itself for NaN */
    __m512 e = _mm512_mask_scalef_ps(x, num, p, nf);
    /* (v >= 0 ? 1 : e) / (1 + e) */
    __mmask16 pos = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ);
    __m512 num_v = _mm512_mask_mov_ps(e, pos, one);
    return _mm512_div_ps(num_v, _mm512_add_ps(one, e));
}

void q8_sigmoid_x86(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, sigmoid16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, sigmoid16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

/* q8_ew_swish(v, c0): v * s, or for a NaN v the Mul's first operand (s
 * when c0 != 0, else v quieted). */
static inline __m512 swish16(__m512 v, bool s_first) {
    __m512 s = sigmoid16(v);
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    __m512 y = _mm512_mul_ps(v, s);
    if (!nan) return y;
    __m512 qv = _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x00400000)));
    return _mm512_mask_mov_ps(y, nan, s_first ? s : qv);
}

void q8_swish_x86(const float *x, float *y, int64_t n, float c0) {
    bool s_first = c0 != 0.0f;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, swish16(_mm512_loadu_ps(x + i), s_first));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, swish16(_mm512_maskz_loadu_ps(m, x + i), s_first));
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif

#else

bool q8_vmath_x86_ok(void) { return false; }

void q8_sigmoid_x86(const float *x, float *y, int64_t n) { (void)x, (void)y, (void)n; }

void q8_swish_x86(const float *x, float *y, int64_t n, float c0) {
    (void)x, (void)y, (void)n, (void)c0;
}

#endif
