/* Depthwise q8.QConv on AVX-512 (F, BW, VL, VNNI, VBMI): see qconv_dw.h.
 * Compiled for these ISAs whatever the build flags; only called when the
 * CPU has them (q8_qdw_plan checks). */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(                                                                \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))),            \
    apply_to = function)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>

#include "qconv_dw.h"
#include "qsimd_avx512.h"

/* The epilogue of one channel, in registers. */
typedef struct dw_epi {
    int kind;                   /* 0: int8, shift >= 33; 1: int8, any shift; 2: float32 */
    __m512i mult, rnd, sh, lo, hi;      /* kind 0 (kind 1: sh = shift, lo/hi 64-bit) */
    bool leaky;
    __m512i lut0, lut1;                 /* LeakyRelu table, 128 bytes */
    __m512 scale, flo, fhi, alpha;      /* kind 2 */
    bool clip, fleaky;
} dw_epi;

static inline __attribute__((always_inline)) dw_epi epi_setup(const q8_epilogue *e, int64_t m) {
    dw_epi E = {0};
    if (e->kind == Q8_EPI_I8) {
        int32_t s = e->shift[m];
        if (s >= 33) {
            q8v16_rq r = q8v16_rq_chan(e->mult[m], s, e->lo, e->hi);
            E.kind = 0, E.mult = r.mult, E.rnd = r.rnd, E.sh = r.sh, E.lo = r.lo, E.hi = r.hi;
        } else {
            E.kind = 1, E.mult = _mm512_set1_epi32(e->mult[m]), E.sh = _mm512_set1_epi32(s);
            E.lo = _mm512_set1_epi64(e->lo), E.hi = _mm512_set1_epi64(e->hi);
        }
        E.leaky = e->leaky_lut != NULL;
        if (E.leaky) {
            E.lut0 = _mm512_loadu_si512((const void *)e->leaky_lut);
            E.lut1 = _mm512_loadu_si512((const void *)(e->leaky_lut + 64));
        }
    } else {
        E.kind = 2, E.scale = _mm512_set1_ps(e->scale[m]);
        E.flo = _mm512_set1_ps(e->flo), E.fhi = _mm512_set1_ps(e->fhi);
        E.alpha = _mm512_set1_ps(e->alpha), E.clip = e->clip, E.fleaky = e->leaky;
    }
    return E;
}

/* 16 accumulators -> the lanes of m at out (compacted first when cmp). */
static inline __attribute__((always_inline)) void epi_store(const dw_epi *E, __m512i acc,
                                                            void *out, __mmask16 m, bool cmp,
                                                            __m128i cidx) {
    if (E->kind != 2) {
        __m512i y = E->kind == 0
                        ? q8v16_requant_fast(acc, E->mult, E->mult, E->rnd, E->sh, E->lo, E->hi)
                        : q8v16_requant_any(acc, E->mult, E->sh, E->lo, E->hi);
        __m128i b = _mm512_cvtepi32_epi8(y);
        if (E->leaky) { /* negative y -> lut[y + 128]: the low 7 bits of y's byte */
            __m512i t = _mm512_permutex2var_epi8(E->lut0, _mm512_castsi128_si512(b), E->lut1);
            b = _mm_mask_mov_epi8(b, _mm_movepi8_mask(b), _mm512_castsi512_si128(t));
        }
        if (cmp) b = _mm_permutexvar_epi8(cidx, b);
        _mm_mask_storeu_epi8(out, m, b);
    } else {
        __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), E->scale);
        if (E->clip) y = _mm512_min_ps(_mm512_max_ps(y, E->flo), E->fhi);
        if (E->fleaky)
            y = _mm512_mask_mul_ps(y, _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_LT_OQ), y,
                                   E->alpha);
        if (cmp) y = _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(cidx), y);
        _mm512_mask_storeu_ps(out, m, y);
    }
}

/* Bits i < sb of the bytes c0 + i that lie in [0, w). */
static inline uint64_t col_mask(int64_t c0, int64_t w, int sb) {
    int64_t lo = c0 < 0 ? -c0 : 0, hi = w - c0;
    if (hi > sb) hi = sb;
    if (lo >= hi) return 0;
    uint64_t mh = hi >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return mh & ~(((uint64_t)1 << lo) - 1);
}

/* Complete unrolling of the loops over taps and rows keeps the row vectors
 * in registers (GCC needs to be told; Clang does it for constant counts and
 * warns about the loops of the generic version if told). */
#if defined(__clang__)
#define UNROLL
#else
#define UNROLL _Pragma("GCC unroll 32")
#endif

/* One channel. KH_, KW_: compile-time kernel (0: from d, groups from its
 * tables); R: output rows per block (1, 2, 4; L = 16 / R lanes each); NB:
 * blocks of 16 outputs along a row sharing the row vectors (R = 1). */
static inline __attribute__((always_inline)) void chan(const q8_qdw *d, const void *packed,
                                                       const q8_epilogue *e, int64_t m,
                                                       const int8_t *x, void *y, const int KH_,
                                                       const int KW_, const int R,
                                                       const int NB) {
    const q8_qconv_geom *q = &d->geo;
    const int KH = KH_ ? KH_ : (int)q->KH, G = KH_ ? (KH_ * KW_ + 3) / 4 : d->G;
    const bool MULTI = R > 1;
    const int L = 16 / R, SB = 64 / R;
    const uint8_t *tab = (const uint8_t *)packed + d->off_tab;
    const int32_t *wq = (const int32_t *)((const char *)packed + d->off_w) + m * G;
    const int32_t *init = (const int32_t *)((const char *)packed + d->off_init);
    const __m128i cidx = _mm_loadu_si128((const __m128i *)(tab + d->NB * G * 64));
    const __m512i x80 = _mm512_set1_epi8((char)0x80), vinit = _mm512_set1_epi32(init[m]);
    __m512i wv[Q8_QDW_MAX_GROUPS];
    for (int g = 0; g < G; g++) wv[g] = _mm512_set1_epi32(wq[g]);
    const dw_epi E = epi_setup(e, m);
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    const int64_t H = q->H, W = q->W, OH = q->OH, OW = q->OW, sw = q->sw, pl = q->pl;
    const int64_t dhW = q->dh * W, shW = q->sh * W;
    for (int64_t oh = 0; oh < OH; oh += R) {
        /* bit kh * R + j: kernel row kh of output row oh + j reads a real
         * input row (else a padding row: zeros, nothing is read) */
        uint32_t valid = 0;
        UNROLL for (int kh = 0; kh < KH; kh++)
            UNROLL for (int j = 0; j < R; j++) {
                int64_t ih = (oh + j) * q->sh - q->pt + kh * q->dh;
                valid |= (uint32_t)(ih >= 0 && ih < H) << (kh * R + j);
            }
        bool all_rows = valid == (uint32_t)(((uint64_t)1 << (KH * R)) - 1);
        /* input row of kernel row 0, output row oh; as an integer, because
         * it may lie outside the plane (then only masked loads use it) */
        uintptr_t base = (uintptr_t)x + (uintptr_t)((oh * q->sh - q->pt) * W);
        for (int64_t o0 = 0; o0 < OW; o0 += NB * L) {
            int64_t c0 = o0 * sw - pl;
            int nb = NB == 1 ? 1 : (int)((OW - o0 + 15) / 16 < NB ? (OW - o0 + 15) / 16 : NB);
            uintptr_t at = base + (uintptr_t)c0;
            __m512i V[Q8_QDW_MAX_KH];
            if (!MULTI && all_rows && c0 >= 0 && c0 + 64 <= W) { /* the interior */
                UNROLL for (int kh = 0; kh < KH; kh++)
                    V[kh] = _mm512_xor_si512(
                        _mm512_loadu_si512((const void *)(at + (uintptr_t)(kh * dhW))), x80);
            } else {
                uint64_t cm = col_mask(c0, W, SB);
                UNROLL for (int kh = 0; kh < KH; kh++) {
                    __m512i v = _mm512_setzero_si512();
                    UNROLL for (int j = 0; j < R; j++) { /* byte j * SB: column c0 */
                        uint64_t mk = valid >> (kh * R + j) & 1 ? cm << (j * SB) : 0;
                        const int8_t *p = (const int8_t *)(at + (uintptr_t)(kh * dhW + j * shW -
                                                                            j * SB));
                        v = j == 0 ? _mm512_maskz_loadu_epi8(mk, p)
                                   : _mm512_mask_loadu_epi8(v, mk, p);
                    }
                    V[kh] = _mm512_xor_si512(v, x80);
                }
            }
            __m512i acc[3] = {vinit, vinit, vinit};
            UNROLL for (int g = 0; g < G; g++) {
                int ra = KH_ ? 4 * g / KW_ : d->ra[g];
                int rb = KH_ ? (4 * g + 3 < KH_ * KW_ ? 4 * g + 3 : KH_ * KW_ - 1) / KW_ : d->rb[g];
                UNROLL for (int b = 0; b < NB; b++) {
                    if (b >= nb) break;
                    __m512i idx = _mm512_loadu_si512((const void *)(tab + (b * G + g) * 64));
                    acc[b] = _mm512_dpbusd_epi32(acc[b],
                                                 _mm512_permutex2var_epi8(V[ra], idx, V[rb]),
                                                 wv[g]);
                }
            }
            if (!MULTI) {
                for (int b = 0; b < NB; b++) {
                    if (b >= nb) break;
                    int64_t ob = o0 + 16 * b, n = OW - ob < 16 ? OW - ob : 16;
                    epi_store(&E, acc[b], (char *)y + (size_t)(oh * OW + ob) * es,
                              (__mmask16)((1u << n) - 1), false, cidx);
                }
            } else {
                int64_t rows = OH - oh < R ? OH - oh : R, n = rows * OW;
                epi_store(&E, acc[0], (char *)y + (size_t)(oh * OW) * es,
                          (__mmask16)((1u << n) - 1), true, cidx);
            }
        }
    }
}

#define CHAN_NB(KH, KW)                                                                     \
    do {                                                                                    \
        if (d->R == 4) chan(d, packed, e, m, x, y, KH, KW, 4, 1);                           \
        else if (d->R == 2) chan(d, packed, e, m, x, y, KH, KW, 2, 1);                      \
        else if (d->NB == 3) chan(d, packed, e, m, x, y, KH, KW, 1, 3);                     \
        else chan(d, packed, e, m, x, y, KH, KW, 1, 1);                                     \
    } while (0)

void q8_qdw_chan_avx512(const q8_qdw *d, const void *packed, const q8_epilogue *e, int64_t m,
                        const int8_t *x, void *y) {
    int64_t KH = d->geo.KH, KW = d->geo.KW;
    if (KH == 3 && KW == 3) CHAN_NB(3, 3);
    else if (KH == 5 && KW == 5) CHAN_NB(5, 5);
    else if (KH == 7 && KW == 7) CHAN_NB(7, 7);
    else CHAN_NB(0, 0);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
