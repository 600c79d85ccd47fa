#include "quant_simd.h"

#include "cpu_features.h"
#include "requant.h"

static void quantize_scalar(const float *x, void *y, int64_t n, float s, int32_t zp, bool i8) {
    int32_t lo = i8 ? -128 : 0, hi = i8 ? 127 : 255;
    for (int64_t i = 0; i < n; i++) {
        int32_t q = q8_round_sat(x[i] / s, zp, lo, hi);
        if (i8) ((int8_t *)y)[i] = (int8_t)q;
        else ((uint8_t *)y)[i] = (uint8_t)q;
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static int64_t quantize_avx2(const float *x, void *y, int64_t n,
                                                              float s, int32_t zp, bool i8) {
    const __m256 vs = _mm256_set1_ps(s), big = _mm256_set1_ps(4194304.0f),
                 nbig = _mm256_set1_ps(-4194304.0f), magic = _mm256_set1_ps(12582912.0f);
    const __m256i vz = _mm256_set1_epi32(zp), vlo = _mm256_set1_epi32(i8 ? -128 : 0),
                  vhi = _mm256_set1_epi32(i8 ? 127 : 255);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
        v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q)); /* NaN -> 0 */
        v = _mm256_min_ps(_mm256_max_ps(v, nbig), big);
        v = _mm256_sub_ps(_mm256_add_ps(v, magic), magic);
        __m256i q = _mm256_add_epi32(_mm256_cvttps_epi32(v), vz);
        q = _mm256_min_epi32(_mm256_max_epi32(q, vlo), vhi);
        /* 8 x int32 (already in range) -> 8 bytes */
        __m128i lo4 = _mm256_castsi256_si128(q), hi4 = _mm256_extracti128_si256(q, 1);
        __m128i w = _mm_packs_epi32(lo4, hi4);
        __m128i b = i8 ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
        _mm_storel_epi64((__m128i *)((uint8_t *)y + i), b);
    }
    return i;
}
#endif

void q8_quantize_f32(const float *x, void *y, int64_t n, float s, int32_t zp, bool out_i8) {
    int64_t done = 0;
#if defined(__x86_64__)
    if (q8_cpu()->avx2) done = quantize_avx2(x, y, n, s, zp, out_i8);
#endif
    quantize_scalar(x + done, (uint8_t *)y + done, n - done, s, zp, out_i8);
}
