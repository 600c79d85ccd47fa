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

/* The plane, zero-padded and widened to int16, rows of Wq values (Wq is a
 * multiple of 16, at least pl + W rounded up to 16): each row zeroed by
 * vector stores, then the input row widened 16 bytes at a time over it. A
 * ragged end reads on into the next input rows of the plane (where they
 * are not 16 bytes: one value at a time) and keeps only its own values. */
static void widen_plane(const q8_qdw *d, const int8_t *x, int16_t *P) {
    const q8_qconv_geom *q = &d->geo;
    const __m256i z = _mm256_setzero_si256();
    for (int64_t r = 0; r < d->Hp; r++) {
        int16_t *row = P + r * d->Wq;
        for (int64_t c = 0; c < d->Wq; c += 16) _mm256_storeu_si256((__m256i *)(row + c), z);
        int64_t h = r - q->pt;
        if (h < 0 || h >= q->H) continue;
        const int8_t *s = x + h * q->W;
        int16_t *o = row + q->pl;
        int64_t c = 0;
        for (; c + 16 <= q->W; c += 16)
            _mm256_storeu_si256((__m256i *)(o + c),
                                _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(s + c))));
        if (c < q->W && (h * q->W + c + 16) <= q->H * q->W) {
            const __m256i lane = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                   14, 15);
            __m256i keep = _mm256_cmpgt_epi16(_mm256_set1_epi16((short)(q->W - c)), lane);
            __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(s + c)));
            _mm256_storeu_si256((__m256i *)(o + c), _mm256_and_si256(v, keep));
        } else {
            for (; c < q->W; c++) o[c] = s[c];
        }
    }
}

typedef int32_t __attribute__((may_alias, aligned(1))) i32u;

void q8_qdw_chan_avx2(const q8_qdw *d, const void *packed, const q8_epilogue *e, int64_t m,
                      const int8_t *x, void *y, void *scratch) {
    const q8_qconv_geom *q = &d->geo;
    int16_t *P = scratch;
    int32_t *acc = (int32_t *)((char *)scratch + q8_align_up((size_t)(d->Hp * d->Wq) * 2, 64));
    char *tmp = (char *)(acc + d->OWr);
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
        /* The epilogue on whole vectors (its ragged tail is scalar code): the
         * extra values land at the start of the next rows of this plane,
         * which are written later; the last ones go through tmp. */
        int64_t n8 = (q->OW + 7) / 8 * 8;
        char *yr = (char *)y + (size_t)(oh * q->OW) * es;
        if ((oh * q->OW + n8) <= q->OH * q->OW) {
            q8_ig_epi_avx2(e, acc, n8, m, yr);
        } else {
            q8_ig_epi_avx2(e, acc, n8, m, tmp);
            memcpy(yr, tmp, (size_t)q->OW * es);
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
