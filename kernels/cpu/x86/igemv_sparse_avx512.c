/* INT8 GEMV on compressed weights, AVX-512 (F, BW, VNNI, VBMI2): see
 * igemv_sparse.h. Compiled for these ISAs whatever the build flags; only
 * called when the CPU has them (q8_isp_gemv_fast and q8_isp_expander_supported check).
 *
 * Per chunk of 64 weights: vpexpandb loads the row's next stored bytes
 * (popcount of the mask of them: its memory form, faster on Zen 5 than a
 * 64-byte load and the register form, 4.8 against 7.2 us on
 * igemv_sparse_bench's default problem) puts them
 * where the mask says, vpdpbusd multiplies by the row's uint8 X. Eight
 * channels at a time keep eight independent accumulator chains, and their
 * sums are reduced four together. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(                                                                \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi2,popcnt"))),    \
    apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi2,popcnt")
#endif

#include <immintrin.h>

#include "igemv_sparse.h"

/* [sum a, sum b, sum c, sum d] */
static inline __m128i reduce4(__m512i a, __m512i b, __m512i c, __m512i d) {
    __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
    __m512i s = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
    __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* Channels [n, n + CB) (CB 1, 4 or 8) on one row; sums at acc[0..CB). */
static inline __attribute__((always_inline)) void channels(int CB, const uint64_t *mask,
                                                           const uint64_t *start,
                                                           const int8_t *vals, int64_t KC,
                                                           const uint8_t *x, int64_t n,
                                                           int32_t *acc) {
    __m512i a[8];
    const int8_t *p[8];
    const uint64_t *mk[8];
    for (int j = 0; j < CB; j++) {
        a[j] = _mm512_setzero_si512();
        p[j] = vals + start[n + j];
        mk[j] = mask + (n + j) * KC;
    }
    for (int64_t c = 0; c < KC; c++) {
        __m512i xv = _mm512_loadu_si512(x + 64 * c);
        for (int j = 0; j < CB; j++) {
            uint64_t m = mk[j][c];
            a[j] = _mm512_dpbusd_epi32(a[j], xv, _mm512_maskz_expandloadu_epi8(m, p[j]));
            p[j] += _mm_popcnt_u64(m);
        }
    }
    for (int j = 0; j + 4 <= CB; j += 4)
        _mm_storeu_si128((__m128i *)(acc + j), reduce4(a[j], a[j + 1], a[j + 2], a[j + 3]));
    if (CB == 1) { /* reduce4's wrapping vector adds (the intrinsic's last add is a
                    * signed int one, undefined on overflow) */
        __m512i z = _mm512_setzero_si512();
        acc[0] = _mm_cvtsi128_si32(reduce4(a[0], z, z, z));
    }
}

void q8_isp_block_avx512(const q8_isp *s, const void *blob, const uint8_t *x, int64_t ldx,
                         int64_t M, int64_t n0, int64_t n1, int32_t *acc) {
    const char *b = blob;
    const uint64_t *mask = (const uint64_t *)(b + s->off_mask);
    const uint64_t *start = (const uint64_t *)(b + s->off_start);
    const int8_t *vals = (const int8_t *)(b + s->off_vals);
    int64_t nb = n1 - n0;
    /* one row at a time: each row expands the weights again (the op uses
     * this form for a few rows at most) */
    for (int64_t r = 0; r < M; r++) {
        const uint8_t *xr = x + r * ldx;
        int32_t *ar = acc + r * nb;
        int64_t n = n0;
        for (; n + 8 <= n1; n += 8) channels(8, mask, start, vals, s->KC, xr, n, ar + n - n0);
        for (; n + 4 <= n1; n += 4) channels(4, mask, start, vals, s->KC, xr, n, ar + n - n0);
        for (; n < n1; n++) channels(1, mask, start, vals, s->KC, xr, n, ar + n - n0);
    }
}

/* Each row's chunks expanded in order; the last one of a row stores only
 * its K % 64 bytes (the next row, or the end of dst, follows). */
void q8_isp_rows_avx512(const q8_isp *s, const void *blob, int64_t r0, int64_t nr,
                        uint8_t *dst) {
    const char *b = blob;
    const uint64_t *mask = (const uint64_t *)(b + s->off_mask);
    const uint64_t *start = (const uint64_t *)(b + s->off_start);
    const int8_t *vals = (const int8_t *)(b + s->off_vals);
    if (s->KC == 0) return;
    int64_t tail = s->K - 64 * (s->KC - 1); /* 1..64 */
    __mmask64 last = tail == 64 ? ~(__mmask64)0 : ((__mmask64)1 << tail) - 1;
    for (int64_t r = 0; r < nr; r++) {
        const int8_t *p = vals + start[r0 + r];
        const uint64_t *mk = mask + (r0 + r) * s->KC;
        uint8_t *d = dst + r * s->K;
        int64_t c = 0;
        for (; c + 1 < s->KC; c++) {
            _mm512_storeu_si512(d + 64 * c, _mm512_maskz_expandloadu_epi8(mk[c], p));
            p += _mm_popcnt_u64(mk[c]);
        }
        _mm512_mask_storeu_epi8(d + 64 * c, last, _mm512_maskz_expandloadu_epi8(mk[c], p));
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
