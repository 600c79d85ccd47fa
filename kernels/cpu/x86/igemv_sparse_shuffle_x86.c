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
#include <string.h>

#include "igemv_sparse.h"
#include "isp_shuffle_tab.h"

/* The 16 weights of mask bits m16 from the stored bytes at p (which may be
 * read 16 bytes on: the form keeps 64 bytes of slack after the last). */
static inline __m128i expand16(unsigned m16, const int8_t *p) {
    unsigned lo = m16 & 0xff, hi = m16 >> 8;
    __m128i idx_lo = _mm_loadl_epi64((const __m128i *)q8_isp_shuffle_tab[lo]);
    __m128i idx_hi = _mm_add_epi8(_mm_loadl_epi64((const __m128i *)q8_isp_shuffle_tab[hi]),
                                  _mm_set1_epi8((char)_mm_popcnt_u32(lo)));
    return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p),
                            _mm_unpacklo_epi64(idx_lo, idx_hi));
}

void q8_isp_rows_shuffle_x86(const q8_isp *s, const void *blob, int64_t r0, int64_t nr,
                             uint8_t *dst) {
    const char *b = blob;
    const uint64_t *mask = (const uint64_t *)(b + s->off_mask);
    const uint64_t *start = (const uint64_t *)(b + s->off_start);
    const int8_t *vals = (const int8_t *)(b + s->off_vals);
    int64_t K = s->K, full = K / 16 * 16;
    for (int64_t r = 0; r < nr; r++) {
        const int8_t *p = vals + start[r0 + r];
        const uint64_t *mk = mask + (r0 + r) * s->KC;
        uint8_t *d = dst + r * K;
        int64_t k = 0;
        for (; k < full; k += 16) {
            unsigned m16 = (unsigned)(mk[k / 64] >> (k % 64)) & 0xffff;
            _mm_storeu_si128((__m128i *)(d + k), expand16(m16, p));
            p += _mm_popcnt_u32(m16);
        }
        if (k < K) { /* the last K % 16 (mask bits past K are 0) */
            uint8_t t[16];
            _mm_storeu_si128((__m128i *)t, expand16((unsigned)(mk[k / 64] >> (k % 64)) & 0xffff, p));
            memcpy(d + k, t, (size_t)(K - k));
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
