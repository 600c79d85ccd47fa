/* AVX2 path: bytes widened to 16 bits and multiplied with vpmaddwd (exact:
 * no pair of products can saturate), tiles of 2 rows x 16 lanes; and the
 * AVX2 epilogue, shared with the AVX-VNNI path. Only called when the CPU
 * has AVX2. */
#if defined(__x86_64__) || defined(__i386__)
#pragma GCC target("avx2")
#pragma GCC optimize("fp-contract=off")

#include <immintrin.h>

#include "igemm.h"

typedef int32_t __attribute__((may_alias, aligned(1))) i32u;

/* A lanes chunk holds 16 lanes x 4 k; each 16 bytes widen to 4 lanes x 4 k
 * int16 and vpmaddwd against the row's (k0..k3) x 4 gives per lane the
 * sums of k0k1 and k2k3 in adjacent int32, added at the end with vphaddd. */
static inline __attribute__((always_inline)) void tile_avx2(const q8_igemm_args *a, int64_t i0,
                                                            int64_t p0, int32_t *tile, int MR,
                                                            bool rows_u8) {
    int64_t kp = q8_ig_kpad(a->K), n4 = kp / 4;
    const uint8_t *L = a->lanes + (size_t)p0 * (size_t)kp * Q8_IG_LANES;
    const uint8_t *R = a->rows + (size_t)i0 * (size_t)kp;
    __m256i acc[2][4];
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < 4; v++) acc[r][v] = _mm256_setzero_si256();
    for (int64_t k4 = 0; k4 < n4; k4++, L += 64) {
        __m256i b[2];
        for (int r = 0; r < MR; r++) {
            __m128i t = _mm_set1_epi32(*(const i32u *)(R + (size_t)r * (size_t)kp + 4 * k4));
            b[r] = rows_u8 ? _mm256_cvtepu8_epi16(t) : _mm256_cvtepi8_epi16(t);
        }
        for (int v = 0; v < 4; v++) {
            __m128i t = _mm_loadu_si128((const __m128i *)(L + 16 * v));
            __m256i l = rows_u8 ? _mm256_cvtepi8_epi16(t) : _mm256_cvtepu8_epi16(t);
            for (int r = 0; r < MR; r++)
                acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(l, b[r]));
        }
    }
    for (int r = 0; r < MR; r++) {
        __m256i lo = _mm256_hadd_epi32(acc[r][0], acc[r][1]); /* l0 l1 l4 l5 | l2 l3 l6 l7 */
        __m256i hi = _mm256_hadd_epi32(acc[r][2], acc[r][3]);
        _mm256_store_si256((__m256i *)(tile + r * 64), _mm256_permute4x64_epi64(lo, 0xD8));
        _mm256_store_si256((__m256i *)(tile + r * 64 + 8), _mm256_permute4x64_epi64(hi, 0xD8));
    }
}

void q8_ig_tile_avx2(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                     int32_t *tile) {
    for (int v = 0; v < np; v++) {
        int32_t *t = tile + v * Q8_IG_LANES;
        if (mr == 2) {
            if (a->rows_u8) tile_avx2(a, i0, p0 + v, t, 2, true);
            else tile_avx2(a, i0, p0 + v, t, 2, false);
        } else {
            if (a->rows_u8) tile_avx2(a, i0, p0 + v, t, 1, true);
            else tile_avx2(a, i0, p0 + v, t, 1, false);
        }
    }
}

/* ---- epilogue ----------------------------------------------------------- */

/* q8_requant_raw + clamp on 8 lanes. AVX2 has no 64-bit arithmetic shift:
 * (x + 2^62) >> s (logical) = (x >> s) + 2^(62 - s) for |x| < 2^62. */
static inline __m256i requant8(__m256i acc, __m256i mult, __m256i shift, __m256i lo,
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

/* Low byte of each int32 lane (values already in [-128, 127]) -> 8 bytes. */
static inline void store8_i8(int8_t *out, __m256i y) {
    const __m256i sel = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         -1, -1);
    __m256i t = _mm256_shuffle_epi8(y, sel);
    t = _mm256_permutevar8x32_epi32(t, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
    _mm_storel_epi64((__m128i *)out, _mm256_castsi256_si128(t));
}

void q8_ig_epi_avx2(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0, void *out) {
    bool col = e->chan == Q8_CH_COL;
    int64_t c = e->chan == Q8_CH_ONE ? 0 : ch0, j = 0;
    if (e->kind == Q8_EPI_I32) {
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_si256((__m256i *)((int32_t *)out + j),
                                _mm256_loadu_si256((const __m256i *)(acc + j)));
    } else if (e->kind == Q8_EPI_I8) {
        const __m256i lo = _mm256_set1_epi64x(e->lo), hi = _mm256_set1_epi64x(e->hi);
        __m256i mult = _mm256_set1_epi32(e->mult[c]), shift = _mm256_set1_epi32(e->shift[c]);
        for (; j + 8 <= n; j += 8) {
            if (col) {
                mult = _mm256_loadu_si256((const __m256i *)(e->mult + c + j));
                shift = _mm256_loadu_si256((const __m256i *)(e->shift + c + j));
            }
            __m256i y = requant8(_mm256_loadu_si256((const __m256i *)(acc + j)), mult, shift, lo,
                                 hi);
            if (e->leaky_lut) {
                _Alignas(32) int32_t t[8];
                _mm256_store_si256((__m256i *)t, y);
                for (int l = 0; l < 8; l++)
                    if (t[l] < 0) t[l] = e->leaky_lut[t[l] + 128];
                y = _mm256_load_si256((const __m256i *)t);
            }
            store8_i8((int8_t *)out + j, y);
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

#endif
