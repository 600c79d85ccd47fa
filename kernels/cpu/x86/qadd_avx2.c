/* q8.QAdd on AVX2 (qadd_kern.h). Only called when the CPU has AVX2. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif

#include <immintrin.h>
#include <string.h>

#include "qadd_kern.h"

/* 16 sums as int16: (a, b) pairs interleaved, vpmaddwd by (ma, mb), the
 * rounding and the arithmetic shift in int32; unpack and packs both work
 * within 128-bit lanes, so the packed int16 come out in order. */
static inline __m256i sum16(__m128i a, __m128i b, __m256i m, __m256i rnd, __m128i sh) {
    __m256i a16 = _mm256_cvtepi8_epi16(a), b16 = _mm256_cvtepi8_epi16(b);
    __m256i lo = _mm256_madd_epi16(_mm256_unpacklo_epi16(a16, b16), m);
    __m256i hi = _mm256_madd_epi16(_mm256_unpackhi_epi16(a16, b16), m);
    lo = _mm256_sra_epi32(_mm256_add_epi32(lo, rnd), sh);
    hi = _mm256_sra_epi32(_mm256_add_epi32(hi, rnd), sh);
    return _mm256_packs_epi32(lo, hi); /* saturation keeps the clamp's result */
}

static inline __m256i add32(const int8_t *a, const int8_t *b, __m256i m, __m256i rnd,
                            __m128i sh, __m256i lo) {
    __m256i va = _mm256_loadu_si256((const __m256i *)a);
    __m256i vb = _mm256_loadu_si256((const __m256i *)b);
    __m256i w0 = sum16(_mm256_castsi256_si128(va), _mm256_castsi256_si128(vb), m, rnd, sh);
    __m256i w1 = sum16(_mm256_extracti128_si256(va, 1), _mm256_extracti128_si256(vb, 1), m, rnd,
                       sh);
    /* packs interleaves the lanes: 0-7, 16-23, 8-15, 24-31 */
    __m256i y = _mm256_permute4x64_epi64(_mm256_packs_epi16(w0, w1), 0xd8);
    return _mm256_max_epi8(y, lo); /* -128 (nothing) or 0: a fused Relu */
}

void q8_qadd_avx2(const q8_qadd_params *p, const int8_t *a, const int8_t *b, int8_t *y,
                  int64_t n) {
    const __m256i m = _mm256_set1_epi32((int32_t)(((uint32_t)p->mb << 16) | (uint32_t)p->ma));
    const __m256i rnd = _mm256_set1_epi32(1 << (p->shift - 1));
    const __m128i sh = _mm_cvtsi32_si128(p->shift);
    const __m256i lo = _mm256_set1_epi8((char)p->lo);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        _mm256_storeu_si256((__m256i *)(y + i), add32(a + i, b + i, m, rnd, sh, lo));
    if (i < n) { /* the tail through buffers */
        int8_t ba[32] = {0}, bb[32] = {0}, by[32];
        memcpy(ba, a + i, (size_t)(n - i));
        memcpy(bb, b + i, (size_t)(n - i));
        _mm256_storeu_si256((__m256i *)by, add32(ba, bb, m, rnd, sh, lo));
        memcpy(y + i, by, (size_t)(n - i));
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
