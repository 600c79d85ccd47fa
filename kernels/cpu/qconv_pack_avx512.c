/* im2col straight into the packed lanes of the INT8 GEMM on AVX-512 VBMI
 * (see qconv_geom.h): the same bytes as q8_qconv_im2col followed by
 * q8_ig_pack_lanes_kj(..., to_u8 = true), without the K x P intermediate.
 * A packed chunk holds, for 16 output pixels, four consecutive k = (c, kh,
 * kw) each; with KW >= 3 they come from at most two input rows (c, kh).
 * For each run of the 16 pixels on one output row, each input row is one
 * masked 64-byte load (columns outside the plane and rows outside it read
 * as 0) and each chunk one vpermi2b of the two rows' vectors, with an
 * index table chosen by the chunk's first kw. Only called when the CPU has
 * these ISAs. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vbmi"))), \
                             apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vbmi")
#endif

#include <immintrin.h>

#include "igemm.h"
#include "qconv_geom.h"

/* Bits i < 64 of the bytes c0 + i in [0, w). */
static inline uint64_t cols_mask(int64_t c0, int64_t w) {
    int64_t lo = c0 < 0 ? -c0 : 0, hi = w - c0;
    if (hi > 64) hi = 64;
    if (lo >= hi) return 0;
    uint64_t mh = hi >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return mh & ~(((uint64_t)1 << lo) - 1);
}

typedef struct lanes_args {
    const q8_qconv_geom *q;
    int64_t Cg;
    const int8_t *x;
    const uint8_t *tab;
    uint8_t *lanes;
} lanes_args;

/* Row r = (c, kh) of output row oh at column c0 (masked by cm), zeros in
 * the padding. */
static inline __m512i load_row(const lanes_args *a, int64_t r, int64_t oh, int64_t c0,
                               uint64_t cm) {
    const q8_qconv_geom *q = a->q;
    int64_t c = r / q->KH, ih = oh * q->sh - q->pt + r % q->KH * q->dh;
    if (ih < 0 || ih >= q->H) return _mm512_setzero_si512();
    uintptr_t at = (uintptr_t)a->x + (uintptr_t)((c * q->H + ih) * q->W + c0);
    return _mm512_maskz_loadu_epi8(cm, (const void *)at);
}

static void lanes_range(void *arg, int64_t pb, int64_t pe, int t) {
    const lanes_args *a = arg;
    const q8_qconv_geom *q = a->q;
    const int64_t KW = q->KW, K = a->Cg * q->KH * KW, G = q8_ig_kpad(K) / 4;
    const int64_t J = q->OH * q->OW;
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    /* the slots k < K of the last chunk, in every lane */
    const uint64_t last = (((uint64_t)1 << (K - 4 * (G - 1))) - 1) * 0x1111111111111111ull;
    for (int64_t p = pb; p < pe; p++) {
        uint8_t *dst = a->lanes + (size_t)(p * G) * 64;
        int64_t j0 = p * Q8_IG_LANES, nl = J - j0 < 16 ? J - j0 : 16;
        for (int64_t l = 0; l < nl;) { /* lanes [l, l + len): one output row */
            int64_t oh = (j0 + l) / q->OW, ow = (j0 + l) % q->OW;
            int64_t len = nl - l < q->OW - ow ? nl - l : q->OW - ow;
            int64_t c0 = (ow - l) * q->sw - q->pl; /* lane 0's column */
            uint64_t cm = cols_mask(c0, q->W);
            uint64_t lm = (len == 16 ? ~(uint64_t)0 : ((uint64_t)1 << (4 * len)) - 1) << (4 * l);
            bool first = l == 0;
            /* va: input row ra of the (c, kh) rows, vb: row ra + 1 once a
             * chunk reaches it */
            int64_t ra = -1, kw0 = 0, nrows = a->Cg * q->KH;
            __m512i va = _mm512_setzero_si512(), vb = va;
            bool have_b = false;
            for (int64_t g = 0, r = 0; g < G; g++) { /* chunk g starts at row r, column kw0 */
                if (r != ra) {
                    if (have_b && r == ra + 1) va = vb;
                    else va = load_row(a, r, oh, c0, cm);
                    ra = r;
                    have_b = false;
                }
                if (kw0 + 3 >= KW && !have_b && ra + 1 < nrows) {
                    vb = load_row(a, ra + 1, oh, c0, cm);
                    have_b = true;
                }
                uint64_t km = g == G - 1 ? lm & last : lm;
                __m512i idx = _mm512_loadu_si512((const void *)(a->tab + kw0 * 64));
                __m512i v = _mm512_xor_si512(_mm512_maskz_permutex2var_epi8(km, va, idx, vb), x80);
                if (first) _mm512_storeu_si512((void *)(dst + g * 64), v);
                else _mm512_mask_storeu_epi8(dst + g * 64, lm, v);
                kw0 += 4;
                while (kw0 >= KW) kw0 -= KW, r++;
            }
            l += len;
        }
    }
}

void q8_qconv_lanes_vbmi(const q8_qconv_geom *q, int64_t Cg, const int8_t *x,
                         const uint8_t *tab, uint8_t *lanes, q8_pool *pool) {
    lanes_args a = {q, Cg, x, tab, lanes};
    int64_t G = q8_ig_kpad(Cg * q->KH * q->KW) / 4;
    q8_parallel_for(pool, q8_ig_panels(q->OH * q->OW), 1 + 2048 / (G + 1), lanes_range, &a);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
