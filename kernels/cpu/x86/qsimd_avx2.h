/* Inline AVX2 helpers shared by the INT8 kernels: the requantization of
 * docs/int8-ops.md on 8 int32 lanes, exact (the same integers as
 * q8_requant_raw + clamp). Include only from files compiled for avx2
 * (after the target pragma). */
#ifndef Q8_KERNELS_CPU_QSIMD_AVX2_H
#define Q8_KERNELS_CPU_QSIMD_AVX2_H

#include <immintrin.h>
#include <stdint.h>

/* Any shift in [1, 62], lo/hi as 64-bit lanes. AVX2 has no 64-bit
 * arithmetic shift: (x + 2^62) >> s (logical) = (x >> s) + 2^(62 - s) for
 * |x| < 2^62. */
static inline __m256i q8v8_requant_any(__m256i acc, __m256i mult, __m256i shift, __m256i lo,
                                       __m256i hi) {
    const __m256i one = _mm256_set1_epi64x(1), low32 = _mm256_set1_epi64x(0xffffffff);
    const __m256i b62 = _mm256_set1_epi64x((int64_t)1 << 62), c62 = _mm256_set1_epi64x(62);
    __m256i s[2] = {_mm256_and_si256(shift, low32), _mm256_srli_epi64(shift, 32)};
    __m256i p[2] = {_mm256_mul_epi32(acc, mult),
                    _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), _mm256_srli_epi64(mult, 32))};
    for (int h = 0; h < 2; h++) {
        __m256i add = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(s[h], one)), b62);
        __m256i y = _mm256_srlv_epi64(_mm256_add_epi64(p[h], add), s[h]);
        y = _mm256_sub_epi64(y, _mm256_sllv_epi64(one, _mm256_sub_epi64(c62, s[h])));
        y = _mm256_blendv_epi8(y, lo, _mm256_cmpgt_epi64(lo, y));
        p[h] = _mm256_blendv_epi8(y, hi, _mm256_cmpgt_epi64(y, hi));
    }
    return _mm256_blend_epi32(p[0], _mm256_slli_epi64(p[1], 32), 0xAA);
}

/* Shifts >= 33: see q8v16_requant_fast in qsimd_avx512.h. */
static inline __m256i q8v8_requant_fast(__m256i acc, __m256i mult, __m256i mult_odd,
                                        __m256i rnd, __m256i sh, __m256i lo, __m256i hi) {
    __m256i pe = _mm256_mul_epi32(acc, mult);
    __m256i po = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), mult_odd);
    __m256i z = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
    z = _mm256_srav_epi32(_mm256_add_epi32(z, rnd), sh);
    return _mm256_min_epi32(_mm256_max_epi32(z, lo), hi);
}

typedef struct q8v8_rq {
    __m256i mult, rnd, sh, lo, hi;
} q8v8_rq;

static inline q8v8_rq q8v8_rq_chan(int32_t mult, int32_t shift, int32_t lo, int32_t hi) {
    return (q8v8_rq){_mm256_set1_epi32(mult), _mm256_set1_epi32(1 << (shift - 33)),
                     _mm256_set1_epi32(shift - 32), _mm256_set1_epi32(lo),
                     _mm256_set1_epi32(hi)};
}

/* Per-lane multipliers and shifts: fast when all 8 shifts are >= 33. */
static inline __m256i q8v8_requant_lanes(__m256i acc, __m256i mult, __m256i shift, int32_t lo,
                                         int32_t hi) {
    __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(33), shift);
    if (_mm256_testz_si256(small, small)) {
        __m256i rnd = _mm256_sllv_epi32(_mm256_set1_epi32(1),
                                        _mm256_sub_epi32(shift, _mm256_set1_epi32(33)));
        return q8v8_requant_fast(acc, mult, _mm256_srli_epi64(mult, 32), rnd,
                                 _mm256_sub_epi32(shift, _mm256_set1_epi32(32)),
                                 _mm256_set1_epi32(lo), _mm256_set1_epi32(hi));
    }
    return q8v8_requant_any(acc, mult, shift, _mm256_set1_epi64x(lo), _mm256_set1_epi64x(hi));
}

/* Low byte of each int32 lane (values already in [-128, 127]) -> 8 bytes in
 * the low half of an xmm. */
static inline __m128i q8v8_pack_i8(__m256i y) {
    __m128i a = _mm256_castsi256_si128(y), b = _mm256_extracti128_si256(y, 1);
    __m128i w = _mm_packs_epi32(a, b); /* exact: values fit in int16 */
    return _mm_packs_epi16(w, w);
}

/* y < 0 becomes lut[y + 128] (LeakyRelu) on int32 lanes clamped to int8;
 * a select, not a branch on the sign (which mispredicts on real data). */
static inline __m256i q8v8_leaky(__m256i y, const int8_t *lut) {
    _Alignas(32) int32_t t[8];
    _mm256_store_si256((__m256i *)t, y);
    for (int l = 0; l < 8; l++) {
        int32_t v = t[l], neg = -(int32_t)(v < 0), w = lut[(v + 128) & 127];
        t[l] = (w & neg) | (v & ~neg);
    }
    return _mm256_load_si256((const __m256i *)t);
}

#endif
