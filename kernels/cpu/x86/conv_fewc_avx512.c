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

/* Output row oh of one image, every output channel. */
AVX512 static void fewc_row(const q8_conv_params *p, const float *x, const float *wp,
                            const float *bias, float *y, int64_t oh) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], OH = G->out[1], OW = G->out[2];
    const int64_t KH = G->k[1], KW = G->k[2], sw = G->s[2];
    const __m512i evens =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (int64_t m0 = 0; m0 < p->m; m0 += Q8_FEWC_MB, wp += p->kg * Q8_FEWC_MB) {
        int64_t mc = p->m - m0 < Q8_FEWC_MB ? p->m - m0 : Q8_FEWC_MB;
        float *ym = y + (m0 * OH + oh) * OW;
        for (int64_t ow0 = 0; ow0 < OW; ow0 += 16) {
            __m512 acc[Q8_FEWC_MB];
#pragma GCC unroll 16
            for (int i = 0; i < Q8_FEWC_MB; i++) acc[i] = _mm512_setzero_ps();
            const float *w = wp;
            for (int64_t ci = 0; ci < p->cg; ci++)
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * G->s[1] - G->pb[1] + kh * G->d[1];
                    bool row = ih >= 0 && ih < IH;
                    const float *xr = x + (ci * IH + (row ? ih : 0)) * IW;
                    for (int64_t kw = 0; kw < KW; kw++, w += Q8_FEWC_MB) {
                        __m512 v = row ? load_px(xr, ow0 * sw - G->pb[2] + kw * G->d[2], sw, IW,
                                                 evens)
                                       : _mm512_setzero_ps();
#pragma GCC unroll 16
                        for (int i = 0; i < Q8_FEWC_MB; i++)
                            acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(w[i]), v, acc[i]);
                    }
                }
            int64_t nw = OW - ow0 < 16 ? OW - ow0 : 16;
            __mmask16 st = (__mmask16)((1u << nw) - 1);
#pragma GCC unroll 16
            for (int i = 0; i < Q8_FEWC_MB; i++) {
                if (i >= mc) break;
                __m512 r = acc[i];
                if (bias) r = _mm512_add_ps(r, _mm512_set1_ps(bias[m0 + i]));
                _mm512_mask_storeu_ps(ym + i * OH * OW + ow0, st, r);
            }
        }
        if (p->act.kind != Q8_ACT_NONE)
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
