/* q8.QLut on AVX-512 VBMI (qlut.h). Only called when the CPU has it. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vbmi"))), \
                             apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vbmi")
#endif

#include <immintrin.h>

#include "qlut.h"

/* Index x + 128: for x < 0 entry (x & 127) of t[0..127], for x >= 0 entry
 * x of t[128..255]. vpermi2b reads the low 7 bits of each index byte. */
static inline __m512i lut64(__m512i x, __m512i t0, __m512i t1, __m512i t2, __m512i t3) {
    __m512i neg = _mm512_permutex2var_epi8(t0, x, t1);
    __m512i pos = _mm512_permutex2var_epi8(t2, x, t3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), pos, neg);
}

void q8_qlut_avx512vbmi(const int8_t *x, const int8_t *t, int8_t *y, int64_t n) {
    const __m512i t0 = _mm512_loadu_si512((const void *)t);
    const __m512i t1 = _mm512_loadu_si512((const void *)(t + 64));
    const __m512i t2 = _mm512_loadu_si512((const void *)(t + 128));
    const __m512i t3 = _mm512_loadu_si512((const void *)(t + 192));
    int64_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m512i a = _mm512_loadu_si512((const void *)(x + i));
        __m512i b = _mm512_loadu_si512((const void *)(x + i + 64));
        _mm512_storeu_si512((void *)(y + i), lut64(a, t0, t1, t2, t3));
        _mm512_storeu_si512((void *)(y + i + 64), lut64(b, t0, t1, t2, t3));
    }
    for (; i < n; i += 64) {
        __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - i)) - 1;
        __m512i a = _mm512_maskz_loadu_epi8(m, x + i);
        _mm512_mask_storeu_epi8(y + i, m, lut64(a, t0, t1, t2, t3));
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
