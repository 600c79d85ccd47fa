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

/* As quantize_avx2, 16 at a time: vdivps on 512 bits has twice the
 * throughput (the division is the bound: x / s must stay a division to
 * round as the scalar formula does). Values are clamped to the output's
 * range first, so vpmovdb's truncation is exact for int8 and uint8. */
__attribute__((target("avx512f"))) static int64_t quantize_avx512(const float *x, void *y,
                                                                  int64_t n, float s, int32_t zp,
                                                                  bool i8) {
    const __m512 vs = _mm512_set1_ps(s), big = _mm512_set1_ps(4194304.0f),
                 nbig = _mm512_set1_ps(-4194304.0f), magic = _mm512_set1_ps(12582912.0f);
    const __m512i vz = _mm512_set1_epi32(zp), vlo = _mm512_set1_epi32(i8 ? -128 : 0),
                  vhi = _mm512_set1_epi32(i8 ? 127 : 255);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + i), vs);
        v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v); /* NaN -> 0 */
        v = _mm512_min_ps(_mm512_max_ps(v, nbig), big);
        v = _mm512_sub_ps(_mm512_add_ps(v, magic), magic);
        __m512i q = _mm512_add_epi32(_mm512_cvttps_epi32(v), vz);
        q = _mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi);
        _mm_storeu_si128((__m128i *)((uint8_t *)y + i), _mm512_cvtepi32_epi8(q));
    }
    return i;
}
#endif

void q8_quantize_f32(const float *x, void *y, int64_t n, float s, int32_t zp, bool out_i8) {
    int64_t done = 0;
#if defined(__x86_64__)
    /* each kernel takes what its vectors can, the next one the rest */
    if (q8_cpu()->avx512f) done = quantize_avx512(x, y, n, s, zp, out_i8);
    if (q8_cpu()->avx2)
        done += quantize_avx2(x + done, (uint8_t *)y + done, n - done, s, zp, out_i8);
#endif
    quantize_scalar(x + done, (uint8_t *)y + done, n - done, s, zp, out_i8);
}
