/* Depthwise FP32 Conv straight from X on AVX-512F: see conv_dwx.h.
 * Compiled for AVX-512F whatever the build flags; only called when the CPU
 * has it (q8_conv_dwx_fits checks). */
#include "conv_dwx.h"

#if Q8_FEWC_X86
#include <immintrin.h>

#include "conv_px_avx512.h"
#include "fused_act.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* Output vectors computed together: independent FMA chains hide latency. */
#define DWX_IN_FLIGHT 4

/* One channel: items (oh, 16-pixel chunk c) in row order, DWX_IN_FLIGHT at
 * a time; masks[c*KW + kw] are the chunk's valid input lanes for tap kw. */
AVX512 static void dwx_channel(const q8_conv_params *p, const float *x, const float *w,
                               float bv, float *y, const uint32_t *masks, int64_t nch) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], OH = G->out[1], OW = G->out[2];
    const int64_t KH = G->k[1], KW = G->k[2], sh = G->s[1];
    const int64_t pt = G->pb[1], pl = G->pb[2], nitems = OH * nch;
    const __m512i evens =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    /* The portable loops start from 0 + bias (+0 where the bias is -0). */
    const __m512 init = _mm512_set1_ps(0.0f + bv);
    for (int64_t it0 = 0; it0 < nitems; it0 += DWX_IN_FLIGHT) {
        int64_t n = nitems - it0 < DWX_IN_FLIGHT ? nitems - it0 : DWX_IN_FLIGHT;
        int64_t oh[DWX_IN_FLIGHT], c[DWX_IN_FLIGHT];
        __m512 acc[DWX_IN_FLIGHT];
        /* Every j loop unrolled: acc stays in registers. */
#pragma GCC unroll 4
        for (int j = 0; j < DWX_IN_FLIGHT; j++) {
            int64_t it = it0 + (j < n ? j : 0); /* spare slots redo item it0, unstored */
            oh[j] = it / nch;
            c[j] = it % nch;
            acc[j] = init;
        }
        for (int64_t kh = 0; kh < KH; kh++) {
            const float *xr[DWX_IN_FLIGHT];
            const uint32_t *mk[DWX_IN_FLIGHT];
            uint32_t rowm[DWX_IN_FLIGHT];
            int64_t s0[DWX_IN_FLIGHT];
#pragma GCC unroll 4
            for (int j = 0; j < DWX_IN_FLIGHT; j++) {
                int64_t ih = oh[j] * sh - pt + kh;
                bool ok = ih >= 0 && ih < IH;
                xr[j] = x + (ok ? ih : 0) * IW;   /* a padding row: nothing is read */
                rowm[j] = ok ? ~0u : 0u;
                mk[j] = masks + c[j] * KW;
                s0[j] = c[j] * 32 - pl;
            }
            for (int64_t kw = 0; kw < KW; kw++) {
                __m512 wv = _mm512_set1_ps(w[kh * KW + kw]);
#pragma GCC unroll 4
                for (int j = 0; j < DWX_IN_FLIGHT; j++) {
                    __m512 v = load_px2(xr[j], s0[j] + kw, mk[j][kw] & rowm[j], evens);
                    acc[j] = _mm512_fmadd_ps(wv, v, acc[j]);
                }
            }
        }
#pragma GCC unroll 4
        for (int j = 0; j < DWX_IN_FLIGHT; j++) {
            if (j >= n) break;
            int64_t nw = OW - c[j] * 16 < 16 ? OW - c[j] * 16 : 16;
            _mm512_mask_storeu_ps(y + oh[j] * OW + c[j] * 16, (__mmask16)((1u << nw) - 1),
                                  acc[j]);
        }
    }
}

void q8_conv_dwx_range(void *arg, int64_t begin, int64_t end, int thread) {
    const conv_dw_args *a = arg;
    const q8_conv_params *p = a->p;
    const q8_conv_geom *G = &p->geo;
    int64_t KW = G->k[2], nch = (G->out[2] + 15) / 16;
    uint32_t masks[Q8_DWX_MAX_MASKS];
    for (int64_t c = 0; c < nch; c++)
        for (int64_t kw = 0; kw < KW; kw++)
            masks[c * KW + kw] = in_mask(c * 32 - G->pb[2] + kw, G->in[2], 32);
    q8_act_span span = {0};
    for (int64_t it = begin; it < end; it++) {
        int64_t img = it / p->c, ch = it % p->c; /* one output per channel */
        float *y = a->y + (img * p->m + ch) * p->out_sp;
        dwx_channel(p, a->x + (img * p->c + ch) * p->in_sp, a->w + ch * p->kprod,
                    a->bias ? a->bias[ch] : 0.0f, y, masks, nch);
        q8_conv_act_span(&p->act, &span, y, p->out_sp);
    }
    q8_conv_act_span(&p->act, &span, NULL, 0);
}

#endif
