/* Depthwise FP32 Conv, stride 1 or 2, input rows shared in registers, on
 * AVX-512F: see conv_dwr.h. Compiled for AVX-512F whatever the build
 * flags; only called when the CPU has it (q8_conv_dwr_fits checks). */
#include "conv_dwr.h"

#include "cpu_features.h"

/* Stride 2: outputs a row at least, 3x3 and 5x5; narrower rows take the
 * loops with channels in the lanes, faster there (1 thread, against them:
 * 3x3 160x32x32 0.041 -> 0.020 ms, 144x48x48 0.104 -> 0.055, 96x96x96
 * 0.272 -> 0.171; but 128x26x26 0.026 -> 0.030, 576x12x12 0.025 -> 0.082;
 * 5x5 160x48x48 0.154 -> 0.118, 96x56x56 0.116 -> 0.085; 160x40x40 as
 * fast, 240x28x28 0.074 -> 0.085). */
#define DWR_S2_MIN_OW3 16
#define DWR_S2_MIN_OW5 24

bool q8_conv_dwr_fits(const q8_conv_params *p) {
#if Q8_FEWC_X86
    const q8_conv_geom *G = &p->geo;
    if (!q8_cpu()->avx512f || p->cg != 1 || p->mg != 1) return false;
    if (G->in[0] != 1 || G->k[0] != 1 || G->pb[0] != 0 || G->pe[0] != 0) return false;
    int64_t K = G->k[2], S = G->s[2];
    if (G->k[1] != K || G->s[1] != S || G->d[1] != 1 || G->d[2] != 1) return false;
    /* pads along H below the kernel: every output row reads an input row */
    if (G->pb[1] >= K || G->pe[1] >= K || G->out[1] < 1) return false;
    if (S == 2) /* any pads below the kernel (TensorFlow's: at the end only) */
        return (K == 3 || K == 5) && G->pb[2] < K && G->pe[2] < K &&
               G->out[2] >= (K == 3 ? DWR_S2_MIN_OW3 : DWR_S2_MIN_OW5) && G->out[2] <= 64;
    if (S != 1 || (K != 3 && K != 5 && K != 7)) return false;
    if (G->pb[2] != (K - 1) / 2 || G->pe[2] != (K - 1) / 2) return false;
    /* Narrower rows fill few lanes of a vector: the loops with channels in
     * the lanes were faster there (1 thread: 5x5 on 576x7x7 0.037 against
     * 0.049 ms, on 192x12x12 0.028 / 0.032; 3x3 on 96x4x4 0.002 / 0.003;
     * 3x3 from 7x7 up and 5x5 from 14x14 up, these won) */
    int64_t min_w = K == 3 ? 7 : 14;
    /* wider than 64: chunks of 64 columns (3x3 and 5x5) */
    return G->in[2] >= min_w && (G->in[2] <= 64 || K < 7) && G->out[2] == G->in[2];
#else
    (void)p;
    return false;
#endif
}

#if Q8_FEWC_X86
#include <immintrin.h>

#include "act_avx512.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))
#define DWR_INLINE AVX512 static inline __attribute__((always_inline))

/* valignd by n (1-15, a constant once inlined). Clang wants the immediate
 * a literal in the call: a switch there; GCC takes the constant as it is
 * (with the switch it unrolled the 5x5 loops worse: 120x28x28 0.061 ->
 * 0.101 ms). */
DWR_INLINE __m512i alignr(__m512i hi, __m512i lo, const int n) {
#if defined(__clang__)
    switch (n) {
    case 1: return _mm512_alignr_epi32(hi, lo, 1);
    case 2: return _mm512_alignr_epi32(hi, lo, 2);
    case 3: return _mm512_alignr_epi32(hi, lo, 3);
    case 13: return _mm512_alignr_epi32(hi, lo, 13);
    case 14: return _mm512_alignr_epi32(hi, lo, 14);
    default: return _mm512_alignr_epi32(hi, lo, 15);
    }
#else
    return _mm512_alignr_epi32(hi, lo, n & 15);
#endif
}

/* Lane i of the result: chunk element 16 v + i + D; c[] are the chunk's
 * vectors, hl and hr the vectors left and right of it (zero outside the
 * row, and past its end within c). */
DWR_INLINE __m512 shifted(const __m512 *c, __m512 hl, __m512 hr, int v, const int NV,
                          const int D) {
    if (D == 0) return c[v];
    __m512i cur = _mm512_castps_si512(c[v]);
    if (D > 0) {
        __m512i next = _mm512_castps_si512(v + 1 < NV ? c[v + 1] : hr);
        return _mm512_castsi512_ps(alignr(next, cur, D));
    }
    __m512i prev = _mm512_castps_si512(v > 0 ? c[v - 1] : hl);
    return _mm512_castsi512_ps(alignr(cur, prev, 16 + D));
}

/* Bits i < 16 of the columns c0 + i inside [0, W). */
static inline __mmask16 cols_in(int64_t c0, int64_t W) {
    int64_t lo = c0 < 0 ? -c0 : 0, hi = W - c0 < 16 ? W - c0 : 16;
    if (lo >= hi) return 0;
    return (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
}

/* Stride 1, one channel, the columns col0 .. col0 + 16 NV - 1 of the rows
 * (HALO: with the vectors either side, for rows wider than 64; else col0
 * is 0 and the chunk the whole row): output rows in blocks of B, kernel
 * K x K. For a block, input rows t = 0 .. B + K - 2 (row o0 - pt + t) are loaded
 * once and shifted K ways; output row b of the block takes row t as its
 * tap row kh = t - b. Rows increase with t, so each output's taps go in
 * (kh, kw) order. Rows outside the input are zeros (their taps are w * +0,
 * as in the planes loops); rows past the output's end are computed from
 * whatever rows the block reads and not stored. */
DWR_INLINE void dwr_channel_s1(const float *x, const float *w, __m512 init, float *y, int64_t IH,
                               int64_t W, int64_t OH, int64_t pt, int64_t col0, int act, float a0,
                               float a1, const int K, const int NV, const int B, const int HALO) {
    __mmask16 lm[4];
    for (int v = 0; v < NV; v++) lm[v] = cols_in(col0 + 16 * v, W);
    const __mmask16 ml = HALO ? cols_in(col0 - 16, W) : 0, mr = HALO ? cols_in(col0 + 16 * NV, W) : 0;
    /* 3x3: the taps' weights broadcast once, in registers (a broadcast
     * from a register per FMA took the FMAs' second port) */
    __m512 wk[9];
#pragma GCC unroll 9
    for (int i = 0; i < 9; i++) wk[i] = _mm512_set1_ps(K == 3 ? w[i] : 0.0f);
    for (int64_t o0 = 0; o0 < OH; o0 += B) {
        __m512 acc[8][4];
#pragma GCC unroll 8
        for (int b = 0; b < B; b++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[b][v] = init;
#pragma GCC unroll 14
        for (int t = 0; t < B + K - 1; t++) {
            int64_t ih = o0 - pt + t;
            bool in = ih >= 0 && ih < IH;
            const float *row = x + (in ? ih : 0) * W + col0;
            __m512 c[4], hl = _mm512_setzero_ps(), hr = hl;
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                c[v] = _mm512_maskz_loadu_ps(in ? lm[v] : 0, row + 16 * v);
            if (HALO) { /* the address as an integer: left of the row at col0 = 0 */
                hl = _mm512_maskz_loadu_ps(in ? ml : 0, (const void *)((uintptr_t)row - 64));
                hr = _mm512_maskz_loadu_ps(in ? mr : 0, row + 16 * NV);
            }
#pragma GCC unroll 7
            for (int kw = 0; kw < K; kw++) {
                __m512 s[4];
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++) s[v] = shifted(c, hl, hr, v, NV, kw - (K - 1) / 2);
#pragma GCC unroll 8
                for (int b = 0; b < B; b++) {
                    int kh = t - b;
                    if (kh < 0 || kh >= K) continue;
                    __m512 wv = K == 3 ? wk[kh * K + kw] : _mm512_set1_ps(w[kh * K + kw]);
#pragma GCC unroll 4
                    for (int v = 0; v < NV; v++) acc[b][v] = _mm512_fmadd_ps(wv, s[v], acc[b][v]);
                }
            }
        }
#pragma GCC unroll 8
        for (int b = 0; b < B; b++) {
            if (o0 + b >= OH) break;
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                _mm512_mask_storeu_ps(y + (o0 + b) * W + col0 + 16 * v, lm[v],
                                      q8v_act(acc[b][v], act, a0, a1));
        }
    }
}

/* Stride 2: input row `row` (NULL: outside the input, all zeros) split
 * into e and o, the inputs 32 v - pl + 2 i and the next (v <= NV); mk: the
 * columns of each of its 2 (NV + 1) 16-float pieces from column -pl that
 * lie inside the row (cols_in). */
DWR_INLINE void dwr_load2(__m512 *e, __m512 *o, const float *row, const __mmask16 *mk, int64_t pl,
                          const int NV) {
    const __m512i evens =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
    for (int v = 0; v <= NV; v++) {
        __m512 h[2];
        for (int j = 0; j < 2; j++) {
            /* columns 32 v + 16 j - pl ..., as an integer address: it may
             * lie before the row (only lanes inside it are read) */
            int64_t c0 = 32 * v + 16 * j - pl;
            h[j] = _mm512_maskz_loadu_ps(row ? mk[2 * v + j] : 0,
                                         (const void *)((uintptr_t)row + (uintptr_t)(c0 * 4)));
        }
        e[v] = _mm512_permutex2var_ps(h[0], evens, h[1]);
        o[v] = _mm512_permutex2var_ps(h[0], odds, h[1]);
    }
}

/* Stride 2: tap kw of output vector v, the inputs 2 (16 v + i) + kw - pl. */
DWR_INLINE __m512 dwr_tap2(const __m512 *e, const __m512 *o, int v, int kw) {
    const __m512 *b = kw & 1 ? o : e;
    const int q = kw / 2;
    if (q == 0) return b[v];
    return _mm512_castsi512_ps(alignr(_mm512_castps_si512(b[v + 1]), _mm512_castps_si512(b[v]), q));
}

/* Stride 2, one channel: as dwr_channel_s1, each input row split into its
 * even and odd columns once, a tap one of them or one of them moved by
 * kw / 2 lanes; output row b of a block takes input row t (row
 * 2 o0 - pt + t) as its tap row kh = t - 2 b. */
DWR_INLINE void dwr_channel_s2(const float *x, const float *w, __m512 init, float *y, int64_t IH,
                            int64_t W, int64_t OH, int64_t OW, int64_t pt, int64_t pl, int act,
                            float a0, float a1, const int K, const int NV, const int B) {
    const int S = 2;
    __mmask16 lm[4], mk[10];
    for (int v = 0; v < NV; v++) lm[v] = cols_in(16 * v, OW);
    for (int i = 0; i < 2 * NV + 2; i++) mk[i] = cols_in(16 * i - pl, W);
    /* 3x3: the taps' weights broadcast once, in registers (a broadcast
     * from a register per FMA took the FMAs' second port) */
    __m512 wk[9];
#pragma GCC unroll 9
    for (int i = 0; i < 9; i++) wk[i] = _mm512_set1_ps(K == 3 ? w[i] : 0.0f);
    for (int64_t o0 = 0; o0 < OH; o0 += B) {
        __m512 acc[8][4];
#pragma GCC unroll 8
        for (int b = 0; b < B; b++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[b][v] = init;
#pragma GCC unroll 16
        for (int t = 0; t < S * (B - 1) + K; t++) {
            int64_t ih = S * o0 - pt + t;
            __m512 e[5], o[5];
            dwr_load2(e, o, ih >= 0 && ih < IH ? x + ih * W : NULL, mk, pl, NV);
#pragma GCC unroll 7
            for (int kw = 0; kw < K; kw++) {
                __m512 s[4];
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++) s[v] = dwr_tap2(e, o, v, kw);
#pragma GCC unroll 8
                for (int b = 0; b < B; b++) {
                    int kh = t - S * b;
                    if (kh < 0 || kh >= K) continue;
                    __m512 wv = K == 3 ? wk[kh * K + kw] : _mm512_set1_ps(w[kh * K + kw]);
#pragma GCC unroll 4
                    for (int v = 0; v < NV; v++) acc[b][v] = _mm512_fmadd_ps(wv, s[v], acc[b][v]);
                }
            }
        }
#pragma GCC unroll 8
        for (int b = 0; b < B; b++) {
            if (o0 + b >= OH) break;
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                _mm512_mask_storeu_ps(y + (o0 + b) * OW + 16 * v, lm[v],
                                      q8v_act(acc[b][v], act, a0, a1));
        }
    }
}

/* One function per shape of the loops (kernel, vectors a row, rows a
 * block, stride, halo), out of line: in one dispatcher GCC spilled their
 * accumulators and masks (3x3 on 128x29x29: 0.028 -> 0.037 ms). Rows of
 * NV vectors in blocks of B: about 8 accumulators (a 4-cycle FMA on two
 * pipes), fewer where the kernel's rows need the registers. */
typedef struct dwr_call {
    const q8_conv_geom *G;
    const float *x, *w;
    float bias, a0, a1;
    float *y;
    int act;
    int64_t col0;
} dwr_call;

#define DWR_FN(K, NV, B, S, H)                                                                  \
    AVX512 __attribute__((noinline)) static void dwr_##K##_##NV##_##S##_##H(const dwr_call *c) { \
        const q8_conv_geom *G = c->G;                                                           \
        __m512 init = _mm512_set1_ps(c->bias);                                                  \
        if (S == 1)                                                                             \
            dwr_channel_s1(c->x, c->w, init, c->y, G->in[1], G->in[2], G->out[1], G->pb[1],     \
                           c->col0, c->act, c->a0, c->a1, K, NV, B, H);                         \
        else                                                                                    \
            dwr_channel_s2(c->x, c->w, init, c->y, G->in[1], G->in[2], G->out[1], G->out[2],    \
                           G->pb[1], G->pb[2], c->act, c->a0, c->a1, K, NV, B);                 \
    }

DWR_FN(3, 1, 8, 1, 0)
DWR_FN(3, 2, 4, 1, 0)
DWR_FN(3, 3, 3, 1, 0)
DWR_FN(3, 4, 2, 1, 0)
DWR_FN(5, 1, 8, 1, 0)
DWR_FN(5, 2, 4, 1, 0)
DWR_FN(5, 3, 2, 1, 0)
DWR_FN(5, 4, 2, 1, 0)
DWR_FN(7, 1, 6, 1, 0)
DWR_FN(7, 2, 3, 1, 0)
DWR_FN(7, 3, 2, 1, 0)
DWR_FN(7, 4, 1, 1, 0)
/* rows wider than 64: chunks of 64 columns (the last 16-64) with halos */
DWR_FN(3, 1, 7, 1, 1)
DWR_FN(3, 2, 3, 1, 1)
DWR_FN(3, 3, 2, 1, 1)
DWR_FN(3, 4, 2, 1, 1)
DWR_FN(5, 1, 7, 1, 1)
DWR_FN(5, 2, 3, 1, 1)
DWR_FN(5, 3, 2, 1, 1)
DWR_FN(5, 4, 2, 1, 1)
DWR_FN(3, 1, 4, 2, 0)
DWR_FN(3, 2, 3, 2, 0)
DWR_FN(3, 3, 2, 2, 0)
DWR_FN(3, 4, 1, 2, 0)
DWR_FN(5, 1, 4, 2, 0)
DWR_FN(5, 2, 2, 2, 0)
DWR_FN(5, 3, 2, 2, 0)
DWR_FN(5, 4, 1, 2, 0)

typedef void (*dwr_fn)(const dwr_call *c);

/* [stride 1 no halo, stride 1 halo, stride 2][kernel 3, 5, 7][vectors - 1] */
static const dwr_fn dwr_fns[3][3][4] = {
    {{dwr_3_1_1_0, dwr_3_2_1_0, dwr_3_3_1_0, dwr_3_4_1_0},
     {dwr_5_1_1_0, dwr_5_2_1_0, dwr_5_3_1_0, dwr_5_4_1_0},
     {dwr_7_1_1_0, dwr_7_2_1_0, dwr_7_3_1_0, dwr_7_4_1_0}},
    {{dwr_3_1_1_1, dwr_3_2_1_1, dwr_3_3_1_1, dwr_3_4_1_1},
     {dwr_5_1_1_1, dwr_5_2_1_1, dwr_5_3_1_1, dwr_5_4_1_1},
     {NULL, NULL, NULL, NULL}},
    {{dwr_3_1_2_0, dwr_3_2_2_0, dwr_3_3_2_0, dwr_3_4_2_0},
     {dwr_5_1_2_0, dwr_5_2_2_0, dwr_5_3_2_0, dwr_5_4_2_0},
     {NULL, NULL, NULL, NULL}},
};

/* One channel: the whole row, or chunks of 64 columns of a wider one. */
static void dwr_run(dwr_call *c) {
    const q8_conv_geom *G = c->G;
    int k = (int)(G->k[2] - 3) / 2;
    int64_t ow = G->out[2];
    if (G->s[2] == 2 || ow <= 64) {
        dwr_fns[G->s[2] == 2 ? 2 : 0][k][(ow + 15) / 16 - 1](c);
        return;
    }
    for (c->col0 = 0; c->col0 < ow; c->col0 += 64) {
        int64_t left = ow - c->col0;
        dwr_fns[1][k][left >= 64 ? 3 : (left + 15) / 16 - 1](c);
    }
    c->col0 = 0;
}

void q8_conv_dwr_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const conv_dw_args *a = arg;
    const q8_conv_params *p = a->p;
    const int act = q8v_act_code(&p->act);
    q8_act_span span = {0};
    for (int64_t it = begin; it < end; it++) {
        int64_t img = it / p->c, ch = it % p->c; /* one output per channel */
        float *y = a->y + (img * p->m + ch) * p->out_sp;
        /* The planes loops start from 0 + bias (+0 where the bias is -0). */
        dwr_call c = {.G = &p->geo, .x = a->x + (img * p->c + ch) * p->in_sp,
                      .w = a->w + ch * p->kprod, .bias = 0.0f + (a->bias ? a->bias[ch] : 0.0f),
                      .a0 = p->act.p0, .a1 = p->act.p1, .y = y, .act = act};
        dwr_run(&c);
        if (!act) q8_conv_act_span(&p->act, &span, y, p->out_sp);
    }
    q8_conv_act_span(&p->act, &span, NULL, 0);
}

#endif
