/* Depthwise q8.QConv on AVX2: see qconv_dw.h. Only called when the CPU
 * has AVX2. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif

#include <immintrin.h>
#include <string.h>

#include "common.h"
#include "qconv_dw.h"

/* The plane, zero-padded and widened to int16, rows of Wq values. */
static void widen_plane(const q8_qdw *d, const int8_t *x, int16_t *P) {
    const q8_qconv_geom *q = &d->geo;
    size_t rowb = (size_t)d->Wq * 2;
    memset(P, 0, rowb * (size_t)q->pt);
    memset(P + (q->pt + q->H) * d->Wq, 0, rowb * (size_t)(d->Hp - q->pt - q->H));
    for (int64_t h = 0; h < q->H; h++) {
        int16_t *r = P + (q->pt + h) * d->Wq;
        const int8_t *s = x + h * q->W;
        memset(r, 0, (size_t)q->pl * 2);
        int64_t c = 0;
        for (; c + 16 <= q->W; c += 16)
            _mm256_storeu_si256((__m256i *)(r + q->pl + c),
                                _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(s + c))));
        for (; c < q->W; c++) r[q->pl + c] = s[c];
        memset(r + q->pl + q->W, 0, (size_t)(d->Wq - q->pl - q->W) * 2);
    }
}

typedef int32_t __attribute__((may_alias, aligned(1))) i32u;

void q8_qdw_chan_avx2(const q8_qdw *d, const void *packed, const q8_epilogue *e, int64_t m,
                      const int8_t *x, void *y, void *scratch) {
    const q8_qconv_geom *q = &d->geo;
    int16_t *P = scratch;
    int32_t *acc = (int32_t *)((char *)scratch + q8_align_up((size_t)(d->Hp * d->Wq) * 2, 64));
    widen_plane(d, x, P);
    const int32_t *wp = (const int32_t *)((const char *)packed + d->off_w) + m * q->KH * d->NP;
    const __m256i init = _mm256_set1_epi32(((const int32_t *)((const char *)packed +
                                                               d->off_init))[m]);
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    const int NP = d->NP;
    for (int64_t oh = 0; oh < q->OH; oh++) {
        const int16_t *base = P + oh * q->sh * d->Wq;
        for (int64_t o0 = 0; o0 < d->OWr; o0 += 16) {
            __m256i a0 = init, a1 = init;
            if (q->sw == 1) {
                /* a0: outputs o0 + 2j, a1: o0 + 2j + 1 */
                for (int64_t kh = 0; kh < q->KH; kh++) {
                    const int16_t *r = base + kh * q->dh * d->Wq + o0;
                    for (int p = 0; p < NP; p++) {
                        __m256i w = _mm256_set1_epi32(wp[kh * NP + p]);
                        __m256i ev = _mm256_loadu_si256((const __m256i *)(r + 2 * p));
                        __m256i od = _mm256_loadu_si256((const __m256i *)(r + 2 * p + 1));
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(ev, w));
                        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(od, w));
                    }
                }
                __m256i lo = _mm256_unpacklo_epi32(a0, a1), hi = _mm256_unpackhi_epi32(a0, a1);
                a0 = _mm256_permute2x128_si256(lo, hi, 0x20);
                a1 = _mm256_permute2x128_si256(lo, hi, 0x31);
            } else {
                /* a0: outputs o0 .. o0 + 7, a1: o0 + 8 .. o0 + 15 */
                for (int64_t kh = 0; kh < q->KH; kh++) {
                    const int16_t *r = base + kh * q->dh * d->Wq + 2 * o0;
                    for (int p = 0; p < NP; p++) {
                        __m256i w = _mm256_set1_epi32(wp[kh * NP + p]);
                        __m256i v0 = _mm256_loadu_si256((const __m256i *)(r + 2 * p));
                        __m256i v1 = _mm256_loadu_si256((const __m256i *)(r + 16 + 2 * p));
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(v0, w));
                        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(v1, w));
                    }
                }
            }
            _mm256_store_si256((__m256i *)(acc + o0), a0);
            _mm256_store_si256((__m256i *)(acc + o0 + 8), a1);
        }
        q8_ig_epi_avx2(e, acc, q->OW, m, (char *)y + (size_t)(oh * q->OW) * es);
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
