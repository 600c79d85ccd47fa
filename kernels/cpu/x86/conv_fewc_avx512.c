/* Direct FP32 Conv for few input channels on AVX-512F: see conv_fewc.h.
 * Compiled for AVX-512F whatever the build flags; only called when the CPU
 * has it (q8_conv_fewc_fits checks). */
#include "conv_fewc.h"

#if Q8_FEWC_X86
#include <immintrin.h>

#include "act_avx512.h"
#include "conv_px_avx512.h"
#include "fused_act.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* 16 pixels xr[s + j*sw] (sw 1 or 2) where every one is inside the row:
 * plain loads, no mask arithmetic (that was a third of the kernel's time
 * on antispoof's unpadded 3 -> 64 conv). */
AVX512 static inline __m512 load_px_in(const float *xr, int64_t s, int64_t sw, __m512i evens) {
    if (sw == 2)
        return _mm512_permutex2var_ps(_mm512_loadu_ps(xr + s), evens,
                                      _mm512_loadu_ps(xr + s + 16));
    return _mm512_loadu_ps(xr + s);
}

/* Whether the n pixels from ow0 read only inside the row, for every kw:
 * inputs ow0*sw - pb ... (ow0 + n - 1)*sw - pb + (KW-1)*d, and with sw 2
 * the pair loads' odd lane past the last (read, then dropped). */
static inline bool px_inside(const q8_conv_geom *G, int64_t ow0, int64_t n) {
    int64_t sw = G->s[2], lo = ow0 * sw - G->pb[2];
    int64_t hi = lo + (n - 1) * sw + (G->k[2] - 1) * G->d[2] + (sw == 2 ? 1 : 0);
    return lo >= 0 && hi < G->in[2];
}

/* 16 pixels xr[s + j*sw] (sw 1 or 2), +0 outside [0, iw): the padding.
 * Masked-off lanes are not read. */
AVX512 static inline __m512 load_px(const float *xr, int64_t s, int64_t sw, int64_t iw,
                                    __m512i evens) {
    if (sw == 2) return load_px2(xr, s, in_mask(s, iw, 32), evens);
    uint32_t k = in_mask(s, iw, 16); /* plain where no lane is padding, as load_px2 */
    return k == 0xffffu ? _mm512_loadu_ps(xr + s) : _mm512_maskz_loadu_ps((__mmask16)k, xr + s);
}

/* 16 output pixels (from ow0) of nb (a constant where inlined: 4, 8, 12 or
 * 16) output channels of one block, mc of them stored; Relu, Clip and
 * HardSwish (act: q8v_act_code) applied in registers with the scalar
 * forms' results (act_avx512.h). */
AVX512 static inline __attribute__((always_inline)) void fewc_pixels(
    const q8_conv_params *p, const float *x, const float *wp, const float *bias, float *ym,
    int64_t oh, int64_t ow0, int64_t mc, int act, __m512i evens,
    const int nb) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], OH = G->out[1], OW = G->out[2];
    const int64_t KH = G->k[1], KW = G->k[2], sw = G->s[2];
    __m512 acc[Q8_FEWC_MB];
#pragma GCC unroll 16
    for (int i = 0; i < nb; i++) acc[i] = _mm512_setzero_ps();
    const float *w = wp;
    const bool inside = px_inside(G, ow0, 16);
    for (int64_t ci = 0; ci < p->cg; ci++)
        for (int64_t kh = 0; kh < KH; kh++) {
            int64_t ih = oh * G->s[1] - G->pb[1] + kh * G->d[1];
            bool row = ih >= 0 && ih < IH;
            const float *xr = x + (ci * IH + (row ? ih : 0)) * IW;
            for (int64_t kw = 0; kw < KW; kw++, w += Q8_FEWC_MB) {
                int64_t s0 = ow0 * sw - G->pb[2] + kw * G->d[2];
                __m512 v = !row     ? _mm512_setzero_ps()
                           : inside ? load_px_in(xr, s0, sw, evens)
                                    : load_px(xr, s0, sw, IW, evens);
#pragma GCC unroll 16
                for (int i = 0; i < nb; i++)
                    acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(w[i]), v, acc[i]);
            }
        }
    int64_t nw = OW - ow0 < 16 ? OW - ow0 : 16;
    __mmask16 st = (__mmask16)((1u << nw) - 1);
#pragma GCC unroll 16
    for (int i = 0; i < nb; i++) {
        if (i >= mc) break;
        __m512 r = acc[i];
        if (bias) r = _mm512_add_ps(r, _mm512_set1_ps(bias[i]));
        _mm512_mask_storeu_ps(ym + i * OH * OW + ow0, st,
                              q8v_act(r, act, p->act.p0, p->act.p1));
    }
}

/* 32 output pixels (from ow0: two registers) of 8 output channels (the
 * weights from wp, within each tap's block of Q8_FEWC_MB), mc of them
 * stored: per tap two pixel loads and 8 weight broadcasts feed 16 FMAs,
 * where 16 channels x 16 pixels load 17 for 16, and the mask arithmetic of
 * a pixel load is done for twice the FMAs. Antispoof's 3 -> 64 3x3 on
 * 128x128, 1 thread: 0.325 -> 0.297 ms (with the plain loads inside the
 * row in both; 0.35-0.38 before either). The same chains as fewc_pixels,
 * so the same bits. */
AVX512 static inline __attribute__((always_inline)) void fewc_pixels32(
    const q8_conv_params *p, const float *x, const float *wp, const float *bias, float *ym,
    int64_t oh, int64_t ow0, int64_t mc, int act, __m512i evens,
    const int kw3) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], OH = G->out[1], OW = G->out[2];
    const int64_t KH = G->k[1], KW = kw3 ? 3 : G->k[2], sw = G->s[2];
    __m512 a0[8], a1[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) a0[i] = a1[i] = _mm512_setzero_ps();
    const float *w = wp;
    const bool inside = px_inside(G, ow0, 32);
    for (int64_t ci = 0; ci < p->cg; ci++)
        for (int64_t kh = 0; kh < KH; kh++) {
            int64_t ih = oh * G->s[1] - G->pb[1] + kh * G->d[1];
            bool row = ih >= 0 && ih < IH;
            const float *xr = x + (ci * IH + (row ? ih : 0)) * IW;
#pragma GCC unroll 3
            for (int64_t kw = 0; kw < KW; kw++, w += Q8_FEWC_MB) {
                int64_t s0 = ow0 * sw - G->pb[2] + kw * G->d[2];
                __m512 v0, v1;
                if (!row) {
                    v0 = v1 = _mm512_setzero_ps();
                } else if (inside) {
                    v0 = load_px_in(xr, s0, sw, evens);
                    v1 = load_px_in(xr, s0 + 16 * sw, sw, evens);
                } else {
                    v0 = load_px(xr, s0, sw, IW, evens);
                    v1 = load_px(xr, s0 + 16 * sw, sw, IW, evens);
                }
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++) {
                    __m512 wi = _mm512_set1_ps(w[i]);
                    a0[i] = _mm512_fmadd_ps(wi, v0, a0[i]);
                    a1[i] = _mm512_fmadd_ps(wi, v1, a1[i]);
                }
            }
        }
    int64_t nw = OW - ow0 - 16 < 16 ? OW - ow0 - 16 : 16;
    __mmask16 st = (__mmask16)((1u << nw) - 1);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        if (i >= mc) break;
        __m512 r0 = a0[i], r1 = a1[i];
        if (bias) {
            r0 = _mm512_add_ps(r0, _mm512_set1_ps(bias[i]));
            r1 = _mm512_add_ps(r1, _mm512_set1_ps(bias[i]));
        }
        _mm512_storeu_ps(ym + i * OH * OW + ow0, q8v_act(r0, act, p->act.p0, p->act.p1));
        _mm512_mask_storeu_ps(ym + i * OH * OW + ow0 + 16, st,
                              q8v_act(r1, act, p->act.p0, p->act.p1));
    }
}

/* Output row oh of one image, every output channel, in blocks of up to
 * Q8_FEWC_MB channels; a last block of fewer runs only as many FMA chains
 * as it needs, rounded up to 4 (PoseNet's 24 channels ran 32 before). */
AVX512 static void fewc_row(const q8_conv_params *p, const float *x, const float *wp,
                            const float *bias, float *y, int64_t oh) {
    const q8_conv_geom *G = &p->geo;
    const int64_t OH = G->out[1], OW = G->out[2];
    const __m512i evens =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const int act = q8v_act_code(&p->act);
    for (int64_t m0 = 0; m0 < p->m; m0 += Q8_FEWC_MB, wp += p->kg * Q8_FEWC_MB) {
        int64_t mc = p->m - m0 < Q8_FEWC_MB ? p->m - m0 : Q8_FEWC_MB;
        float *ym = y + (m0 * OH + oh) * OW;
        const float *bm = bias ? bias + m0 : NULL;
        int64_t ow0 = 0;
        /* stride 1: runs of 32 pixels, 8 channels at a time
         * (fewc_pixels32); with stride 2 each register of pixels is two
         * loads and a permute, and the 16-pixel form measured as fast */
        for (; G->s[2] == 1 && OW - ow0 > 16; ow0 += 32)
            for (int64_t h = 0; h < mc; h += 8)
                if (G->k[2] == 3)
                    fewc_pixels32(p, x, wp + h, bm ? bm + h : NULL, ym + h * OH * OW, oh, ow0,
                                  mc - h < 8 ? mc - h : 8, act, evens, 1);
                else
                    fewc_pixels32(p, x, wp + h, bm ? bm + h : NULL, ym + h * OH * OW, oh, ow0,
                                  mc - h < 8 ? mc - h : 8, act, evens, 0);
        for (; ow0 < OW; ow0 += 16) {
            if (mc > 12)
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, evens, 16);
            else if (mc > 8)
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, evens, 12);
            else if (mc > 4)
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, evens, 8);
            else
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, evens, 4);
        }
        if (p->act.kind != Q8_ACT_NONE && !act)
            for (int64_t i = 0; i < mc; i++) q8_act_apply(&p->act, ym + i * OH * OW, OW);
    }
}

void q8_conv_fewc_range(void *arg, int64_t begin, int64_t end, int thread) {
    const conv_fewc_args *a = arg;
    const q8_conv_params *p = a->p;
    int64_t OH = p->geo.out[1];
    for (int64_t it = begin; it < end; it++) {
        int64_t img = it / OH, oh = it % OH;
        fewc_row(p, a->x + img * p->c * p->in_sp, a->wp, a->bias, a->y + img * p->m * p->out_sp,
                 oh);
    }
}

#endif
