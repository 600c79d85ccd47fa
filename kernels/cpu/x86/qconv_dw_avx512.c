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

/* The weights [M][G] x 4: in place in the file's rows4 layout, or packed. */
static inline const int32_t *dw_weights(const q8_qdw *d, const void *packed) {
    return (const int32_t *)(d->w ? (const void *)d->w : (const char *)packed + d->off_w);
}

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

/* 16 accumulators -> the lanes of m at out (compacted first when cmp).
 * EK 1: the epilogue is known at compile time to be int8 with shift >= 33
 * and no LeakyRelu (the common one, chosen per channel: no test per
 * block); EK 0: any, tested here. */
static inline __attribute__((always_inline)) void epi_store(const dw_epi *E, __m512i acc,
                                                            void *out, __mmask16 m, bool cmp,
                                                            __m128i cidx, const int EK) {
    if (EK == 1 || E->kind != 2) {
        __m512i y = EK == 1 || E->kind == 0
                        ? q8v16_requant_fast(acc, E->mult, E->mult, E->rnd, E->sh, E->lo, E->hi)
                        : q8v16_requant_any(acc, E->mult, E->sh, E->lo, E->hi);
        __m128i b = _mm512_cvtepi32_epi8(y);
        if (EK != 1 && E->leaky) { /* negative y -> lut[y + 128]: the low 7 bits of y's byte */
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

/* Input row ih (column c0 at address at) xor 0x80; a row outside the plane
 * reads as 0 (nothing is loaded). */
static inline __attribute__((always_inline)) __m512i load_row(uintptr_t at, int64_t ih,
                                                              int64_t H, int64_t W,
                                                              uint64_t cm) {
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    if (ih < 0 || ih >= H) return x80;
    return _mm512_xor_si512(
        _mm512_maskz_loadu_epi8(cm, (const void *)(at + (uintptr_t)(ih * W))), x80);
}

/* R segments of 64 / R bytes: input rows ih, ih + sh, ... (column c0 at
 * byte j * 64 / R of segment j), xor 0x80. */
static inline __attribute__((always_inline)) __m512i load_vec(uintptr_t at, int64_t ih,
                                                              int64_t sh, int64_t H, int64_t W,
                                                              uint64_t cm, const int R) {
    const int SB = 64 / R;
    __m512i v = _mm512_setzero_si512();
    UNROLL for (int j = 0; j < R; j++, ih += sh) {
        uint64_t mk = ih >= 0 && ih < H ? cm << (j * SB) : 0;
        const void *p = (const void *)(at + (uintptr_t)(ih * W - j * SB));
        v = j == 0 ? _mm512_maskz_loadu_epi8(mk, p) : _mm512_mask_loadu_epi8(v, mk, p);
    }
    return _mm512_xor_si512(v, _mm512_set1_epi8((char)0x80));
}

/* R > 1 (short rows, OW <= L = 16 / R): a block holds output rows
 * oh .. oh + R - 1, L lanes each; segment j (bytes j * SB ..) of the vector
 * of kernel row kh holds the input row of output row oh + j. One column
 * block, so one column mask; with S = R * sh < KH (dh = 1; 0: reload) the
 * next block's vectors are these moved up by S, plus S new ones. */
static inline __attribute__((always_inline)) void chan_multi(const q8_qdw *d,
                                                             const void *packed,
                                                             const q8_epilogue *e, int64_t m,
                                                             const int8_t *x, void *y,
                                                             const int KH_, const int KW_,
                                                             const int R, const int S,
                                                             const int EK) {
    const q8_qconv_geom *q = &d->geo;
    const int KH = KH_ ? KH_ : (int)q->KH, G = KH_ ? (KH_ * KW_ + 3) / 4 : d->G;
    const int SB = 64 / R;
    const uint8_t *tab = (const uint8_t *)packed + d->off_tab;
    const int32_t *wq = dw_weights(d, packed) + m * G;
    const int32_t *init = (const int32_t *)((const char *)packed + d->off_init);
    const __m128i cidx = _mm_loadu_si128((const __m128i *)(tab + d->NB * G * 64));
    const __m512i vinit = _mm512_set1_epi32(init[m]);
    __m512i wv[Q8_QDW_MAX_GROUPS];
    for (int g = 0; g < G; g++) wv[g] = _mm512_set1_epi32(wq[g]);
    const dw_epi E = epi_setup(e, m);
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    const int64_t H = q->H, W = q->W, OH = q->OH, OW = q->OW, sh = q->sh, dh = q->dh;
    const int64_t c0 = -q->pl;
    const uint64_t cm = col_mask(c0, W, SB);
    /* column c0 of input row 0 (an integer: it may lie outside the plane) */
    const uintptr_t at = (uintptr_t)x + (uintptr_t)c0;
#define LOAD_VEC(oh, kh) load_vec(at, ((oh) * sh - q->pt + (kh) * dh), sh, H, W, cm, R)
    __m512i V[Q8_QDW_MAX_KH];
    UNROLL for (int kh = 0; kh < KH; kh++) V[kh] = LOAD_VEC(0, kh);
    for (int64_t oh = 0;; oh += R) {
        __m512i acc = vinit;
        UNROLL for (int g = 0; g < G; g++) {
            int ra = KH_ ? 4 * g / KW_ : d->ra[g];
            int rb = KH_ ? (4 * g + 3 < KH_ * KW_ ? 4 * g + 3 : KH_ * KW_ - 1) / KW_ : d->rb[g];
            __m512i idx = _mm512_loadu_si512((const void *)(tab + g * 64));
            acc = _mm512_dpbusd_epi32(acc, _mm512_permutex2var_epi8(V[ra], idx, V[rb]), wv[g]);
        }
        int64_t rows = OH - oh < R ? OH - oh : R, n = rows * OW;
        epi_store(&E, acc, (char *)y + (size_t)(oh * OW) * es, (__mmask16)((1u << n) - 1), true,
                  cidx, EK);
        if (oh + R >= OH) break;
        if (S) {
            UNROLL for (int kh = 0; kh < KH - S; kh++) V[kh] = V[kh + S];
            UNROLL for (int kh = KH - S; kh < KH; kh++) V[kh] = LOAD_VEC(oh + R, kh);
        } else {
            UNROLL for (int kh = 0; kh < KH; kh++) V[kh] = LOAD_VEC(oh + R, kh);
        }
    }
#undef LOAD_VEC
}

/* R = 1: the output rows of one column block of nb x 16 outputs (nb <= NB
 * a constant here, so the accumulators stay in registers and no block is
 * tested for). The loop runs down the output rows, so the column mask is
 * computed once and, with vertical stride S (1 or 2; 0: reload every row),
 * the row vectors of the next output row are those of this one moved up by
 * S, plus S new loads. EK 1: the int8 epilogue with shift >= 33 and no
 * LeakyRelu, chosen per channel (no test per block). */
static inline __attribute__((always_inline)) void
cols_block(const q8_qdw *d, const uint8_t *tab, const __m512i *wv, __m512i vinit,
           const dw_epi *E, size_t es, const int8_t *x, void *y, int64_t o0, const int KH,
           const int KW_, const int G, const int nb, const int S, const int EK) {
    const q8_qconv_geom *q = &d->geo;
    const int64_t H = q->H, W = q->W, OH = q->OH, OW = q->OW;
    const __m128i cidx = _mm_setzero_si128();
    int64_t c0 = o0 * q->sw - q->pl;
    uint64_t cm = col_mask(c0, W, 64);
    int64_t nlast = OW - (o0 + 16 * (nb - 1));
    __mmask16 mlast = (__mmask16)((1u << (nlast < 16 ? nlast : 16)) - 1);
    /* column c0 of input row 0, as an integer: it may lie outside the
     * plane (then only masked loads use it) */
    uintptr_t at = (uintptr_t)x + (uintptr_t)c0;
#define LOAD_ROW(ih) load_row(at, ih, H, W, cm)
    __m512i V[Q8_QDW_MAX_KH];
    UNROLL for (int kh = 0; kh < KH; kh++) V[kh] = LOAD_ROW(kh * q->dh - q->pt);
    char *yo = (char *)y + (size_t)o0 * es;
    for (int64_t oh = 0;; oh++) {
        __m512i acc[3];
        UNROLL for (int b = 0; b < nb; b++) acc[b] = vinit;
        UNROLL for (int g = 0; g < G; g++) {
            int ra = KW_ ? 4 * g / KW_ : d->ra[g];
            int rb = KW_ ? (4 * g + 3 < KH * KW_ ? 4 * g + 3 : KH * KW_ - 1) / KW_ : d->rb[g];
            UNROLL for (int b = 0; b < nb; b++) {
                __m512i idx = _mm512_loadu_si512((const void *)(tab + (b * G + g) * 64));
                acc[b] = _mm512_dpbusd_epi32(acc[b], _mm512_permutex2var_epi8(V[ra], idx, V[rb]),
                                             wv[g]);
            }
        }
        UNROLL for (int b = 0; b < nb; b++) {
            void *out = yo + (size_t)(oh * OW + 16 * b) * es;
            __mmask16 mk = b == nb - 1 ? mlast : (__mmask16)0xFFFF;
            epi_store(E, acc[b], out, mk, false, cidx, EK);
        }
        if (oh + 1 == OH) break;
        int64_t ih0 = (oh + 1) * q->sh - q->pt; /* kernel row 0 of the next output row */
        if (S) {
            UNROLL for (int kh = 0; kh < KH - S; kh++) V[kh] = V[kh + S];
            UNROLL for (int kh = KH - S; kh < KH; kh++) V[kh] = LOAD_ROW(ih0 + kh);
        } else {
            UNROLL for (int kh = 0; kh < KH; kh++) V[kh] = LOAD_ROW(ih0 + kh * q->dh);
        }
    }
#undef LOAD_ROW
}

/* R = 1: blocks of NB x 16 outputs along a row (cols_block per column
 * block). */
static inline __attribute__((always_inline)) void chan_cols(const q8_qdw *d, const void *packed,
                                                            const q8_epilogue *e, int64_t m,
                                                            const int8_t *x, void *y,
                                                            const int KH_, const int KW_,
                                                            const int NB, const int S,
                                                            const int EK) {
    const q8_qconv_geom *q = &d->geo;
    const int KH = KH_ ? KH_ : (int)q->KH, G = KH_ ? (KH_ * KW_ + 3) / 4 : d->G;
    const uint8_t *tab = (const uint8_t *)packed + d->off_tab;
    const int32_t *wq = dw_weights(d, packed) + m * G;
    const int32_t *init = (const int32_t *)((const char *)packed + d->off_init);
    const __m512i vinit = _mm512_set1_epi32(init[m]);
    __m512i wv[Q8_QDW_MAX_GROUPS];
    for (int g = 0; g < G; g++) wv[g] = _mm512_set1_epi32(wq[g]);
    const dw_epi E = epi_setup(e, m);
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    const int64_t OW = q->OW;
    for (int64_t o0 = 0; o0 < OW; o0 += NB * 16) {
        int64_t left = (OW - o0 + 15) / 16;
        if (NB == 1 || left == 1)
            cols_block(d, tab, wv, vinit, &E, es, x, y, o0, KH, KW_, G, 1, S, EK);
        else if (left == 2)
            cols_block(d, tab, wv, vinit, &E, es, x, y, o0, KH, KW_, G, 2, S, EK);
        else
            cols_block(d, tab, wv, vinit, &E, es, x, y, o0, KH, KW_, G, 3, S, EK);
    }
}

#define CHAN_NB(A, B, EK)                                                                         \
    do {                                                                                          \
        int64_t S = d->geo.dh == 1 && d->geo.sh < d->geo.KH ? d->geo.sh : 0;                      \
        int64_t SM = d->geo.dh == 1 && d->R * d->geo.sh < d->geo.KH ? d->R * d->geo.sh : 0;       \
        if (d->R == 4 && SM == 4) chan_multi(d, packed, e, m, x, y, A, B, 4, 4, EK);              \
        else if (d->R == 4) chan_multi(d, packed, e, m, x, y, A, B, 4, 0, EK);                    \
        else if (d->R == 2 && SM == 2) chan_multi(d, packed, e, m, x, y, A, B, 2, 2, EK);         \
        else if (d->R == 2 && SM == 4) chan_multi(d, packed, e, m, x, y, A, B, 2, 4, EK);         \
        else if (d->R == 2) chan_multi(d, packed, e, m, x, y, A, B, 2, 0, EK);                    \
        else if (d->NB == 3 && S == 1) chan_cols(d, packed, e, m, x, y, A, B, 3, 1, EK);          \
        else if (d->NB == 3) chan_cols(d, packed, e, m, x, y, A, B, 3, 0, EK);                    \
        else if (S == 1) chan_cols(d, packed, e, m, x, y, A, B, 1, 1, EK);                        \
        else if (S == 2) chan_cols(d, packed, e, m, x, y, A, B, 1, 2, EK);                        \
        else chan_cols(d, packed, e, m, x, y, A, B, 1, 0, EK);                                    \
    } while (0)

void q8_qdw_chan_avx512(const q8_qdw *d, const void *packed, const q8_epilogue *e, int64_t m,
                        const int8_t *x, void *y) {
    int64_t KH = d->geo.KH, KW = d->geo.KW;
    /* the common epilogue without a test per block */
    bool fast = e->kind == Q8_EPI_I8 && e->shift[m] >= 33 && !e->leaky_lut;
    if (KH == 3 && KW == 3 && fast) CHAN_NB(3, 3, 1);
    else if (KH == 3 && KW == 3) CHAN_NB(3, 3, 0);
    else if (KH == 5 && KW == 5 && fast) CHAN_NB(5, 5, 1);
    else if (KH == 5 && KW == 5) CHAN_NB(5, 5, 0);
    else if (KH == 7 && KW == 7) CHAN_NB(7, 7, 0);
    else CHAN_NB(0, 0, 0);
}

/* d->global: out[m] = init[m] + sum_t w[m][t] x[m][t] over the T = H W
 * taps of channel m (the kernel is the plane), 16 channels in the lanes:
 * per group of four taps one dword gather of x (byte offset m T + 4 g, xor
 * 0x80 as everywhere here), one of the weights ([M][G] x 4, zero past the
 * last tap) and one vpdpbusd. The last group reaches into the next channel
 * (times those zero weights); past the image's end it reads the image's
 * last four bytes instead, shifted down to the same place. The epilogue is
 * the GEMM's with the channels along the row (Q8_CH_COL). */
void q8_qdw_global_avx512(const q8_qdw *d, const void *packed, const q8_epilogue *e,
                          const int8_t *x, void *y, int64_t m0, int64_t m1) {
    const q8_qconv_geom *q = &d->geo;
    const int32_t T = (int32_t)(q->H * q->W), G = d->G, last = (int32_t)(q->C * T) - 4;
    const int32_t *wq = dw_weights(d, packed);
    const int32_t *init = (const int32_t *)((const char *)packed + d->off_init);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    _Alignas(64) int32_t acc[Q8_QDW_GLOBAL_CH];
    q8_epilogue ec = *e;
    if (ec.chan != Q8_CH_ONE) ec.chan = Q8_CH_COL;
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    Q8_ASSERT(m1 - m0 <= Q8_QDW_GLOBAL_CH);
    for (int64_t m = m0; m < m1; m += 16) {
        __mmask16 k = m1 - m >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (m1 - m)) - 1);
        __m512i mv = _mm512_add_epi32(_mm512_set1_epi32((int32_t)m), lane);
        __m512i xo = _mm512_mullo_epi32(mv, _mm512_set1_epi32(T));
        __m512i wo = _mm512_mullo_epi32(mv, _mm512_set1_epi32(G));
        __m512i a = _mm512_maskz_loadu_epi32(k, init + m);
        for (int32_t g = 0; g < G; g++) {
            __m512i off = _mm512_add_epi32(xo, _mm512_set1_epi32(4 * g));
            __m512i sh = _mm512_setzero_si512();
            if (4 * g + 4 > T) { /* may end past the image: clamp, then shift down */
                __m512i in = _mm512_min_epi32(off, _mm512_set1_epi32(last));
                sh = _mm512_slli_epi32(_mm512_sub_epi32(off, in), 3);
                off = in;
            }
            __m512i xv = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), k, off, x, 1);
            xv = _mm512_xor_si512(_mm512_srlv_epi32(xv, sh), x80);
            __m512i wv = _mm512_mask_i32gather_epi32(
                _mm512_setzero_si512(), k, _mm512_add_epi32(wo, _mm512_set1_epi32(g)), wq, 4);
            a = _mm512_dpbusd_epi32(a, xv, wv);
        }
        _mm512_store_si512((void *)(acc + (m - m0)), a);
    }
    q8_ig_epi_avx512(&ec, acc, m1 - m0, m0, (char *)y + (size_t)m0 * es);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
