/* The fused GEMM epilogue of one 16-column row segment on AVX2, shared by
 * the AVX2 and AVX-VNNI tiles. Include only from files compiled for avx2
 * (after the target pragma). */
#ifndef Q8_KERNELS_CPU_IGEMM_EPI_AVX2_H
#define Q8_KERNELS_CPU_IGEMM_EPI_AVX2_H

#include <immintrin.h>

#include "igemm.h"
#include "qsimd_avx2.h"

/* The epilogue of one output row segment (row i, columns j0 .., nj valid,
 * at most 16) from its accumulators v0, v1 (columns 0-7, 8-15): the init_row
 * add and the per-row requantization / float scale, without a trip through
 * the tile (rows are channels: Q8_CH_ROW or Q8_CH_ONE). */
static inline __attribute__((always_inline)) void
q8_ig_epi_row16_avx2(const q8_igemm_args *a, int64_t i, int64_t j0, int64_t nj, __m256i v0,
                     __m256i v1) {
    const q8_epilogue *e = a->epi;
    __m256i init = _mm256_set1_epi32(a->init_row ? a->init_row[i] : 0);
    v0 = _mm256_add_epi32(v0, init);
    v1 = _mm256_add_epi32(v1, init);
    int64_t ch = e->chan == Q8_CH_ONE ? 0 : i + a->chan_offset;
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    char *out = (char *)a->out + (size_t)(i * a->ldo + j0) * es;
    if (nj < 16) { /* a ragged end: through the row epilogue */
        _Alignas(32) int32_t t[16];
        _mm256_store_si256((__m256i *)t, v0);
        _mm256_store_si256((__m256i *)(t + 8), v1);
        q8_ig_epi_avx2(e, t, nj, ch, out);
        return;
    }
    if (e->kind == Q8_EPI_I8) {
        int32_t sh = e->shift[ch];
        if (sh >= 33) {
            q8v8_rq r = q8v8_rq_chan(e->mult[ch], sh, e->lo, e->hi);
            v0 = q8v8_requant_fast(v0, r.mult, r.mult, r.rnd, r.sh, r.lo, r.hi);
            v1 = q8v8_requant_fast(v1, r.mult, r.mult, r.rnd, r.sh, r.lo, r.hi);
        } else {
            __m256i mult = _mm256_set1_epi32(e->mult[ch]), shift = _mm256_set1_epi32(sh);
            __m256i lo = _mm256_set1_epi64x(e->lo), hi = _mm256_set1_epi64x(e->hi);
            v0 = q8v8_requant_any(v0, mult, shift, lo, hi);
            v1 = q8v8_requant_any(v1, mult, shift, lo, hi);
        }
        if (e->leaky_lut) {
            v0 = q8v8_leaky(v0, e->leaky_lut);
            v1 = q8v8_leaky(v1, e->leaky_lut);
        }
        _mm_storeu_si128((__m128i *)out,
                         _mm_unpacklo_epi64(q8v8_pack_i8(v0), q8v8_pack_i8(v1)));
    } else if (e->kind == Q8_EPI_F32) {
        const __m256 scale = _mm256_set1_ps(e->scale[ch]);
        __m256 y[2] = {_mm256_mul_ps(_mm256_cvtepi32_ps(v0), scale),
                       _mm256_mul_ps(_mm256_cvtepi32_ps(v1), scale)};
        for (int h = 0; h < 2; h++) {
            if (e->clip)
                y[h] = _mm256_min_ps(_mm256_max_ps(y[h], _mm256_set1_ps(e->flo)),
                                     _mm256_set1_ps(e->fhi));
            if (e->leaky)
                y[h] = _mm256_blendv_ps(y[h], _mm256_mul_ps(y[h], _mm256_set1_ps(e->alpha)),
                                        _mm256_cmp_ps(y[h], _mm256_setzero_ps(), _CMP_LT_OQ));
            _mm256_storeu_ps((float *)out + 8 * h, y[h]);
        }
    } else {
        _mm256_storeu_si256((__m256i *)out, v0);
        _mm256_storeu_si256((__m256i *)((int32_t *)out + 8), v1);
    }
}

#endif
