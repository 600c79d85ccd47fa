/* Inline AVX-512 helpers shared by the INT8 kernels: the requantization of
 * docs/int8-ops.md on 16 int32 lanes, exact (the same integers as
 * q8_requant_raw + clamp). Include only from files compiled for
 * avx512f,avx512bw,avx512vl (after the target pragma). */
#ifndef Q8_KERNELS_CPU_QSIMD_AVX512_H
#define Q8_KERNELS_CPU_QSIMD_AVX512_H

#include <immintrin.h>
#include <stdint.h>

/* Any shift in [1, 62]: 64-bit products, rounding and arithmetic shifts,
 * clamped to [lo, hi] (64-bit lanes), back to 16 int32 lanes. */
static inline __m512i q8v16_requant_any(__m512i acc, __m512i mult, __m512i shift, __m512i lo,
                                        __m512i hi) {
    const __m512i one = _mm512_set1_epi64(1), low32 = _mm512_set1_epi64(0xffffffff);
    __m512i se = _mm512_and_si512(shift, low32), so = _mm512_srli_epi64(shift, 32);
    __m512i pe = _mm512_mul_epi32(acc, mult);
    __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), _mm512_srli_epi64(mult, 32));
    pe = _mm512_add_epi64(pe, _mm512_sllv_epi64(one, _mm512_sub_epi64(se, one)));
    po = _mm512_add_epi64(po, _mm512_sllv_epi64(one, _mm512_sub_epi64(so, one)));
    pe = _mm512_min_epi64(_mm512_max_epi64(_mm512_srav_epi64(pe, se), lo), hi);
    po = _mm512_min_epi64(_mm512_max_epi64(_mm512_srav_epi64(po, so), lo), hi);
    return _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
}

/* Shifts >= 33 (multipliers below 1/4, the usual case): with p = acc * mult,
 * floor((p + 2^(s-1)) / 2^s) = (hi32(p) + 2^(s-33)) >> (s - 32), because
 * 2^(s-1) is a multiple of 2^32; hi32(p) = floor(p / 2^32) fits in int32
 * (|p| < 2^62) and so does the sum. So only the products are 64-bit.
 * mult_odd: mult's odd lanes moved to the even ones (mult itself when
 * broadcast); rnd = 2^(s-33), sh = s - 32, lo/hi: int32 lanes. */
static inline __m512i q8v16_requant_fast_raw(__m512i acc, __m512i mult, __m512i mult_odd,
                                             __m512i rnd, __m512i sh) {
    __m512i pe = _mm512_mul_epi32(acc, mult);
    __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), mult_odd);
    __m512i z = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
    return _mm512_srav_epi32(_mm512_add_epi32(z, rnd), sh); /* not clamped */
}

static inline __m512i q8v16_requant_fast(__m512i acc, __m512i mult, __m512i mult_odd,
                                         __m512i rnd, __m512i sh, __m512i lo, __m512i hi) {
    __m512i z = q8v16_requant_fast_raw(acc, mult, mult_odd, rnd, sh);
    return _mm512_min_epi32(_mm512_max_epi32(z, lo), hi);
}

/* Four vectors of int32 -> 64 int8 in order, saturating (so a clamp to
 * [-128, 127] comes free): two packs work within 128-bit lanes, giving in
 * lane L the dwords y0[4L..], y1[4L..], y2[4L..], y3[4L..]; a vpermd puts
 * them back in order. */
static inline __m512i q8v16_pack4_sat(__m512i y0, __m512i y1, __m512i y2, __m512i y3) {
    __m512i b = _mm512_packs_epi16(_mm512_packs_epi32(y0, y1), _mm512_packs_epi32(y2, y3));
    return _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
}

/* The constants of q8v16_requant_fast for one channel (shift >= 33). */
typedef struct q8v16_rq {
    __m512i mult, rnd, sh, lo, hi;
} q8v16_rq;

static inline q8v16_rq q8v16_rq_chan(int32_t mult, int32_t shift, int32_t lo, int32_t hi) {
    return (q8v16_rq){_mm512_set1_epi32(mult), _mm512_set1_epi32(1 << (shift - 33)),
                      _mm512_set1_epi32(shift - 32), _mm512_set1_epi32(lo),
                      _mm512_set1_epi32(hi)};
}

/* Per-lane multipliers and shifts (the Q8_CH_COL epilogue): fast when every
 * lane of m has a shift >= 33. */
static inline __m512i q8v16_requant_lanes(__m512i acc, __m512i mult, __m512i shift, __mmask16 m,
                                          int32_t lo, int32_t hi) {
    if (_mm512_mask_cmplt_epi32_mask(m, shift, _mm512_set1_epi32(33)) == 0) {
        __m512i rnd = _mm512_sllv_epi32(_mm512_set1_epi32(1),
                                        _mm512_sub_epi32(shift, _mm512_set1_epi32(33)));
        return q8v16_requant_fast(acc, mult, _mm512_srli_epi64(mult, 32), rnd,
                                  _mm512_sub_epi32(shift, _mm512_set1_epi32(32)),
                                  _mm512_set1_epi32(lo), _mm512_set1_epi32(hi));
    }
    return q8v16_requant_any(acc, mult, shift, _mm512_set1_epi64(lo), _mm512_set1_epi64(hi));
}

/* y < 0 becomes lut[y + 128] (LeakyRelu) on int32 lanes already clamped to
 * int8. The 128 entries as int32 in eight vectors, looked up 32 at a time
 * by vpermt2d on the index's low 5 bits, then chosen by bits 5 and 6 (a
 * lane-by-lane branch on the sign mispredicts on real data). */
static inline __m512i q8v16_leaky(__m512i y, const int8_t *lut) {
    __mmask16 neg = _mm512_cmplt_epi32_mask(y, _mm512_setzero_si512());
    if (!neg) return y;
    __m512i t[8];
    for (int k = 0; k < 8; k++)
        t[k] = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(lut + 16 * k)));
    __m512i idx = _mm512_add_epi32(y, _mm512_set1_epi32(128)); /* 0..127 where neg */
    __m512i r0 = _mm512_permutex2var_epi32(t[0], idx, t[1]);
    __m512i r1 = _mm512_permutex2var_epi32(t[2], idx, t[3]);
    __m512i r2 = _mm512_permutex2var_epi32(t[4], idx, t[5]);
    __m512i r3 = _mm512_permutex2var_epi32(t[6], idx, t[7]);
    __mmask16 b5 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(32));
    __mmask16 b6 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(64));
    __m512i lo = _mm512_mask_blend_epi32(b5, r0, r1), hi = _mm512_mask_blend_epi32(b5, r2, r3);
    return _mm512_mask_mov_epi32(y, neg, _mm512_mask_blend_epi32(b6, lo, hi));
}

#endif
