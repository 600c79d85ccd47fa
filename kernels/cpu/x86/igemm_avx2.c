/* AVX2 path: bytes widened to 16 bits and multiplied with vpmaddwd (exact:
 * no pair of products can saturate), tiles of 2 rows x 16 lanes; and the
 * AVX2 epilogue, shared with the AVX-VNNI path. Only called when the CPU
 * has AVX2. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC target("avx2")
/* no-tree-pre: with it GCC 12 copies every accumulator each iteration */
#pragma GCC optimize("fp-contract=off", "no-tree-pre")
#endif

#include <immintrin.h>

#include "igemm.h"
#include "igemm_epi_avx2.h"

typedef int32_t __attribute__((may_alias, aligned(1))) i32u;

/* A lanes chunk holds 16 lanes x 4 k; each 16 bytes widen to 4 lanes x 4 k
 * int16 and vpmaddwd against the row's (k0..k3) x 4 gives per lane the
 * sums of k0k1 and k2k3 in adjacent int32, added at the end with vphaddd.
 * Named accumulators: GCC copies an array of vectors every iteration. U:
 * the row bytes are the unsigned operand. MR is 1 or 2. */
#define WIDEN_ROW(t) (U ? _mm256_cvtepu8_epi16(t) : _mm256_cvtepi8_epi16(t))
#define WIDEN_LANE(t) (U ? _mm256_cvtepi8_epi16(t) : _mm256_cvtepu8_epi16(t))
#define MAC(c, l, b) c = _mm256_add_epi32(c, _mm256_madd_epi16(l, b))

/* FUSED: the epilogue straight from the registers (q8_ig_epi_row16_avx2), else the
 * accumulators go to tile. */
static inline __attribute__((always_inline)) void tile_avx2(const q8_igemm_args *a, int64_t i0,
                                                            int64_t p0, int32_t *tile, int MR,
                                                            bool U, bool FUSED) {
    size_t kp = (size_t)q8_ig_kpad(a->K);
    const uint8_t *L = a->lanes + (size_t)p0 * kp * Q8_IG_LANES, *R = a->rows + (size_t)i0 * kp;
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c02 = c00, c03 = c00;
    __m256i c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    for (size_t k4 = 0; k4 < kp / 4; k4++, L += 64, R += 4) {
        __m256i b0 = WIDEN_ROW(_mm_set1_epi32(*(const i32u *)R));
        __m256i b1 = MR > 1 ? WIDEN_ROW(_mm_set1_epi32(*(const i32u *)(R + kp))) : b0;
        __m256i l = WIDEN_LANE(_mm_loadu_si128((const __m128i *)L));
        MAC(c00, l, b0);
        if (MR > 1) MAC(c10, l, b1);
        l = WIDEN_LANE(_mm_loadu_si128((const __m128i *)(L + 16)));
        MAC(c01, l, b0);
        if (MR > 1) MAC(c11, l, b1);
        l = WIDEN_LANE(_mm_loadu_si128((const __m128i *)(L + 32)));
        MAC(c02, l, b0);
        if (MR > 1) MAC(c12, l, b1);
        l = WIDEN_LANE(_mm_loadu_si128((const __m128i *)(L + 48)));
        MAC(c03, l, b0);
        if (MR > 1) MAC(c13, l, b1);
    }
    /* hadd gives l0 l1 l4 l5 | l2 l3 l6 l7; the permute restores the order */
    __m256i lo = _mm256_hadd_epi32(c00, c01), hi = _mm256_hadd_epi32(c02, c03);
    if (FUSED) {
        int64_t j0 = p0 * Q8_IG_LANES, nj = a->J - j0;
        q8_ig_epi_row16_avx2(a, i0, j0, nj, _mm256_permute4x64_epi64(lo, 0xD8),
                  _mm256_permute4x64_epi64(hi, 0xD8));
        if (MR > 1) {
            lo = _mm256_hadd_epi32(c10, c11);
            hi = _mm256_hadd_epi32(c12, c13);
            q8_ig_epi_row16_avx2(a, i0 + 1, j0, nj, _mm256_permute4x64_epi64(lo, 0xD8),
                      _mm256_permute4x64_epi64(hi, 0xD8));
        }
        return;
    }
    _mm256_store_si256((__m256i *)tile, _mm256_permute4x64_epi64(lo, 0xD8));
    _mm256_store_si256((__m256i *)(tile + 8), _mm256_permute4x64_epi64(hi, 0xD8));
    if (MR > 1) {
        lo = _mm256_hadd_epi32(c10, c11);
        hi = _mm256_hadd_epi32(c12, c13);
        _mm256_store_si256((__m256i *)(tile + 64), _mm256_permute4x64_epi64(lo, 0xD8));
        _mm256_store_si256((__m256i *)(tile + 72), _mm256_permute4x64_epi64(hi, 0xD8));
    }
}

void q8_ig_tile_avx2(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                     int32_t *tile) {
    for (int v = 0; v < np; v++) {
        int32_t *t = tile + v * Q8_IG_LANES;
        if (mr == 2) {
            if (a->rows_u8) tile_avx2(a, i0, p0 + v, t, 2, true, false);
            else tile_avx2(a, i0, p0 + v, t, 2, false, false);
        } else {
            if (a->rows_u8) tile_avx2(a, i0, p0 + v, t, 1, true, false);
            else tile_avx2(a, i0, p0 + v, t, 1, false, false);
        }
    }
}

/* The tile with its epilogue (rows are channels, no init_col, R signed). */
void q8_ig_tile_epi_avx2(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np) {
    for (int v = 0; v < np; v++) {
        if (mr == 2) tile_avx2(a, i0, p0 + v, NULL, 2, false, true);
        else tile_avx2(a, i0, p0 + v, NULL, 1, false, true);
    }
}

/* ---- depthwise row ------------------------------------------------------- */

/* 16 outputs at a time, all taps in registers. Two taps per vpmaddwd: the
 * widened inputs of taps t and t+1 interleaved as int16 pairs against
 * (w[t], w[t+1]); unpacklo/hi leave the outputs in 128-bit blocks
 * 0-3 8-11 | 4-7 12-15, put back in order at the store. n is a multiple of
 * 16. */
static inline __m256i dw_wpair(const int8_t *w, int64_t t, int64_t taps) {
    uint32_t hi = t + 1 < taps ? (uint16_t)w[t + 1] : 0;
    return _mm256_set1_epi32((int32_t)((uint16_t)w[t] | hi << 16));
}

void q8_dw_row_avx2(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                    int32_t init, int64_t n, int32_t *out) {
    for (int64_t o = 0; o < n; o += 16) {
        __m256i lo = _mm256_set1_epi32(init), hi = lo;
        for (int64_t t = 0; t < taps; t += 2) {
            __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(x + off[t] + o)));
            __m256i x1 = t + 1 < taps ? _mm256_cvtepi8_epi16(_mm_loadu_si128(
                                            (const __m128i *)(x + off[t + 1] + o)))
                                      : x0;
            __m256i wp = dw_wpair(w, t, taps);
            lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), wp));
            hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), wp));
        }
        _mm256_storeu_si256((__m256i *)(out + o), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(out + o + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
}

/* ---- epilogue ----------------------------------------------------------- */

void q8_ig_epi_avx2(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0, void *out) {
    bool col = e->chan == Q8_CH_COL;
    int64_t c = e->chan == Q8_CH_ONE ? 0 : ch0, j = 0;
    if (e->kind == Q8_EPI_I32) {
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_si256((__m256i *)((int32_t *)out + j),
                                _mm256_loadu_si256((const __m256i *)(acc + j)));
    } else if (e->kind == Q8_EPI_I8) {
        int8_t *o = out;
        if (!col && e->shift[c] >= 33) { /* one channel: the fast requantization */
            q8v8_rq r = q8v8_rq_chan(e->mult[c], e->shift[c], e->lo, e->hi);
            for (; j + 8 <= n; j += 8) {
                __m256i y = q8v8_requant_fast(_mm256_loadu_si256((const __m256i *)(acc + j)),
                                              r.mult, r.mult, r.rnd, r.sh, r.lo, r.hi);
                if (e->leaky_lut) y = q8v8_leaky(y, e->leaky_lut);
                _mm_storel_epi64((__m128i *)(o + j), q8v8_pack_i8(y));
            }
        } else {
            __m256i mult = _mm256_set1_epi32(e->mult[c]), shift = _mm256_set1_epi32(e->shift[c]);
            for (; j + 8 <= n; j += 8) {
                if (col) {
                    mult = _mm256_loadu_si256((const __m256i *)(e->mult + c + j));
                    shift = _mm256_loadu_si256((const __m256i *)(e->shift + c + j));
                }
                __m256i y = q8v8_requant_lanes(_mm256_loadu_si256((const __m256i *)(acc + j)),
                                               mult, shift, e->lo, e->hi);
                if (e->leaky_lut) y = q8v8_leaky(y, e->leaky_lut);
                _mm_storel_epi64((__m128i *)(o + j), q8v8_pack_i8(y));
            }
        }
    } else {
        const __m256 flo = _mm256_set1_ps(e->flo), fhi = _mm256_set1_ps(e->fhi);
        const __m256 alpha = _mm256_set1_ps(e->alpha), zero = _mm256_setzero_ps();
        __m256 scale = _mm256_set1_ps(e->scale[c]);
        for (; j + 8 <= n; j += 8) {
            if (col) scale = _mm256_loadu_ps(e->scale + c + j);
            __m256 y = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(acc + j)));
            y = _mm256_mul_ps(y, scale);
            if (e->clip) y = _mm256_min_ps(_mm256_max_ps(y, flo), fhi);
            if (e->leaky)
                y = _mm256_blendv_ps(y, _mm256_mul_ps(y, alpha),
                                     _mm256_cmp_ps(y, zero, _CMP_LT_OQ));
            _mm256_storeu_ps((float *)out + j, y);
        }
    }
    if (j < n) { /* the tail, by the scalar reference */
        size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
        q8_epilogue_row_c(e, acc + j, n - j, col ? ch0 + j : ch0, (char *)out + (size_t)j * es);
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
