/* Direct FP32 Conv for few input channels on AVX-512F: see conv_fewc.h.
 * Compiled for AVX-512F whatever the build flags; only called when the CPU
 * has it (q8_conv_fewc_fits checks). */
#include "conv_fewc.h"

#if Q8_FEWC_X86
#include <immintrin.h>

#include "conv_px_avx512.h"
#include "fused_act.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* 16 pixels xr[s + j*sw] (sw 1 or 2), +0 outside [0, iw): the padding.
 * Masked-off lanes are not read. */
AVX512 static inline __m512 load_px(const float *xr, int64_t s, int64_t sw, int64_t iw,
                                    __m512i evens) {
    if (sw == 2) return load_px2(xr, s, in_mask(s, iw, 32), evens);
    uint32_t k = in_mask(s, iw, 16); /* plain where no lane is padding, as load_px2 */
    return k == 0xffffu ? _mm512_loadu_ps(xr + s) : _mm512_maskz_loadu_ps((__mmask16)k, xr + s);
}

/* 16 output pixels (from ow0) of nb (a constant where inlined: 4, 8, 12 or
 * 16) output channels of one block, mc of them stored; Relu (act 1) and
 * Clip with lo <= hi (act 2) applied in registers with the scalar forms'
 * results (fused_act.c): max(r, 0) is r > 0 ? r : 0 (NaN and -0 give +0);
 * max(lo, r) is r < lo ? lo : r and min(hi, .) is . > hi ? hi : . (NaN
 * and ties keep r). */
AVX512 static inline __attribute__((always_inline)) void fewc_pixels(
    const q8_conv_params *p, const float *x, const float *wp, const float *bias, float *ym,
    int64_t oh, int64_t ow0, int64_t mc, int act, __m512 lo, __m512 hi, __m512i evens,
    const int nb) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], OH = G->out[1], OW = G->out[2];
    const int64_t KH = G->k[1], KW = G->k[2], sw = G->s[2];
    __m512 acc[Q8_FEWC_MB];
#pragma GCC unroll 16
    for (int i = 0; i < nb; i++) acc[i] = _mm512_setzero_ps();
    const float *w = wp;
    for (int64_t ci = 0; ci < p->cg; ci++)
        for (int64_t kh = 0; kh < KH; kh++) {
            int64_t ih = oh * G->s[1] - G->pb[1] + kh * G->d[1];
            bool row = ih >= 0 && ih < IH;
            const float *xr = x + (ci * IH + (row ? ih : 0)) * IW;
            for (int64_t kw = 0; kw < KW; kw++, w += Q8_FEWC_MB) {
                __m512 v = row ? load_px(xr, ow0 * sw - G->pb[2] + kw * G->d[2], sw, IW, evens)
                               : _mm512_setzero_ps();
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
        if (act == 1) r = _mm512_max_ps(r, _mm512_setzero_ps());
        else if (act == 2) r = _mm512_min_ps(hi, _mm512_max_ps(lo, r));
        _mm512_mask_storeu_ps(ym + i * OH * OW + ow0, st, r);
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
    int act = p->act.kind == Q8_ACT_RELU                               ? 1
              : p->act.kind == Q8_ACT_CLIP && p->act.p0 <= p->act.p1 ? 2
                                                                      : 0;
    __m512 lo = _mm512_set1_ps(p->act.p0), hi = _mm512_set1_ps(p->act.p1);
    for (int64_t m0 = 0; m0 < p->m; m0 += Q8_FEWC_MB, wp += p->kg * Q8_FEWC_MB) {
        int64_t mc = p->m - m0 < Q8_FEWC_MB ? p->m - m0 : Q8_FEWC_MB;
        float *ym = y + (m0 * OH + oh) * OW;
        const float *bm = bias ? bias + m0 : NULL;
        for (int64_t ow0 = 0; ow0 < OW; ow0 += 16) {
            if (mc > 12)
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, lo, hi, evens, 16);
            else if (mc > 8)
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, lo, hi, evens, 12);
            else if (mc > 4)
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, lo, hi, evens, 8);
            else
                fewc_pixels(p, x, wp, bm, ym, oh, ow0, mc, act, lo, hi, evens, 4);
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
