/* Compressed weight rows expanded with a byte shuffle (pshufb), 16 bytes a
 * step: q8_isp_rows on x86 CPUs without AVX-512 VBMI2's byte expand (AVX2
 * machines; isp_shuffle_tab.h says how). Compiled for AVX2 whatever the
 * build flags; only called on a GEMM path of AVX2 or later. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,popcnt"))), apply_to = function)
#else
#pragma GCC target("avx2,popcnt")
#endif

#include <immintrin.h>

#include "igemv_sparse.h"
#include "isp_shuffle_tab.h"

static inline void isp_store16(uint8_t *d, unsigned m16, const int8_t *p) {
    unsigned lo = m16 & 0xff, hi = m16 >> 8;
    __m128i idx_lo = _mm_loadl_epi64((const __m128i *)q8_isp_shuffle_tab[lo]);
    __m128i idx_hi = _mm_add_epi8(_mm_loadl_epi64((const __m128i *)q8_isp_shuffle_tab[hi]),
                                  _mm_set1_epi8((char)_mm_popcnt_u32(lo)));
    _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p),
                                                    _mm_unpacklo_epi64(idx_lo, idx_hi)));
}

#include "isp_shuffle_rows.h"

void q8_isp_rows_shuffle_x86(const q8_isp *s, const void *blob, int64_t r0, int64_t nr,
                             uint8_t *dst) {
    isp_rows_shuffle(s, blob, r0, nr, dst);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
