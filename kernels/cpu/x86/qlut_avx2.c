/* q8.QLut on AVX2 (qlut.h). Only called when the CPU has AVX2. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif

#include <immintrin.h>
#include <string.h>

#include "qlut.h"

/* 32 lookups. Index i = x + 128; each half of the table (bit 7 of i) is
 * looked up with vpshufb from eight 16-entry tables D[k], k = 0..7, by the
 * low nibble. vpshufb gives 0 where bit 7 of its index is set, and
 * adds_epu8(i & 127, 0x70 - 16 k) has bit 7 clear exactly when
 * (i & 127) >> 4 <= k, so the XOR of the eight lookups is the XOR of D[k]
 * for k >= that nibble h; with D[k] = T[k] ^ T[k + 1] (D[7] = T[7]; T[k]:
 * the half's entries 16 k .. 16 k + 15) it telescopes to T[h]. A blend by
 * bit 7 of i (the sign bit of x, inverted) picks the half. */
static inline __m256i lut32(__m256i x, const __m256i dlo[8], const __m256i dhi[8]) {
    const __m256i a = _mm256_and_si256(x, _mm256_set1_epi8(0x7f));
    __m256i lo = _mm256_setzero_si256(), hi = lo;
    for (int k = 0; k < 8; k++) {
        __m256i b = _mm256_adds_epu8(a, _mm256_set1_epi8((char)(0x70 - 16 * k)));
        lo = _mm256_xor_si256(lo, _mm256_shuffle_epi8(dlo[k], b));
        hi = _mm256_xor_si256(hi, _mm256_shuffle_epi8(dhi[k], b));
    }
    return _mm256_blendv_epi8(hi, lo, x); /* x < 0: i < 128 */
}

static void diff_tables(const int8_t *t, __m256i d[8]) {
    for (int k = 0; k < 8; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(t + 16 * k));
        if (k < 7) v = _mm_xor_si128(v, _mm_loadu_si128((const __m128i *)(t + 16 * k + 16)));
        d[k] = _mm256_broadcastsi128_si256(v);
    }
}

void q8_qlut_avx2(const int8_t *x, const int8_t *t, int8_t *y, int64_t n) {
    __m256i dlo[8], dhi[8];
    diff_tables(t, dlo);
    diff_tables(t + 128, dhi);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        _mm256_storeu_si256((__m256i *)(y + i),
                            lut32(_mm256_loadu_si256((const __m256i *)(x + i)), dlo, dhi));
    if (i < n) { /* the tail through a buffer */
        int8_t buf[32] = {0};
        memcpy(buf, x + i, (size_t)(n - i));
        _mm256_storeu_si256((__m256i *)buf,
                            lut32(_mm256_loadu_si256((const __m256i *)buf), dlo, dhi));
        memcpy(y + i, buf, (size_t)(n - i));
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
