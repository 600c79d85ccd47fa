/* Depthwise FP32 Conv with channels in the lanes on AVX-512F: see
 * conv_dwc.h. Compiled for AVX-512F whatever the build flags; only called
 * when the CPU has it (q8_conv_dwc_fits checks). */
#include "conv_dwc.h"

#include <string.h>

#include "conv_fewc.h" /* Q8_FEWC_X86 */
#include "conv_impl.h"
#include "cpu_features.h"

/* Padded input and output buffers of one block beside a thread's cache: a
 * 64x64 map is 256 KiB each. */
#define DWC_MAX_PIXELS (64 * 64)
/* Output pixels of a row computed together (independent FMA chains). */
#define DWC_IN_FLIGHT 8

/* Extent of the padded input that the taps read (rows, columns). */
static void padded_extent(const q8_conv_geom *G, int64_t *ph, int64_t *pw) {
    *ph = (G->out[1] - 1) * G->s[1] + (G->k[1] - 1) * G->d[1] + 1;
    *pw = (G->out[2] - 1) * G->s[2] + (G->k[2] - 1) * G->d[2] + 1;
}

bool q8_conv_dwc_fits(const q8_conv_params *p) {
#if Q8_FEWC_X86
    const q8_conv_geom *G = &p->geo;
    if (!q8_cpu()->avx512f) return false;
    if (p->cg != 1 || p->mg != 1 || p->c < 16) return false;
    if (G->in[0] != 1 || G->k[0] != 1 || G->pb[0] != 0 || G->pe[0] != 0) return false;
    int64_t ph, pw;
    padded_extent(G, &ph, &pw);
    /* Small maps only: wide rows fill the planes loops' vectors. */
    return G->out[2] <= 32 && ph * pw <= DWC_MAX_PIXELS && p->out_sp <= DWC_MAX_PIXELS;
#else
    (void)p;
    return false;
#endif
}

size_t q8_conv_dwc_per_thread(const q8_conv_params *p) {
    int64_t ph, pw;
    padded_extent(&p->geo, &ph, &pw);
    /* padded input, output (whole 16-pixel chunks), weights [taps][16] */
    int64_t out = (p->out_sp + 15) / 16 * 16;
    return sizeof(float) * 16 * (size_t)(ph * pw + out + p->kprod);
}

#if Q8_FEWC_X86
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* r[i] lane j <- r[j] lane i. */
AVX512 static inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
        __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 4; i++) {
            t[h * 8 + i] = _mm512_shuffle_f32x4(r[h * 8 + i], r[h * 8 + 4 + i], 0x88);
            t[h * 8 + 4 + i] = _mm512_shuffle_f32x4(r[h * 8 + i], r[h * 8 + 4 + i], 0xdd);
        }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
        r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
    }
}

/* Channels c0 .. c0 + nc of one image into buf: pixel (r, c) of the
 * padded extent at buf + (r * pw + c) * 16, padding zero. */
AVX512 static void load_block(const q8_conv_params *p, const float *x, int64_t nc, int64_t ph,
                              int64_t pw, float *buf) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], pt = G->pb[1], pl = G->pb[2];
    memset(buf, 0, sizeof(float) * 16 * (size_t)(ph * pw));
    for (int64_t ih = 0; ih < IH; ih++) {
        int64_t r = ih + pt;
        if (r < 0 || r >= ph) continue;
        for (int64_t iw0 = 0; iw0 < IW; iw0 += 16) {
            int64_t n = IW - iw0 < 16 ? IW - iw0 : 16;
            __mmask16 m = (__mmask16)((1u << n) - 1);
            __m512 v[16];
            for (int i = 0; i < 16; i++)
                v[i] = i < nc ? _mm512_maskz_loadu_ps(m, x + i * p->in_sp + ih * IW + iw0)
                              : _mm512_setzero_ps();
            transpose16(v);
            for (int64_t j = 0; j < n; j++) {
                int64_t c = iw0 + j + pl;
                if (c >= 0 && c < pw) _mm512_store_ps(buf + (r * pw + c) * 16, v[j]);
            }
        }
    }
}

/* Outputs (oh, ow0 .. ow0 + nv) into out[(oh * OW + ow) * 16]. */
AVX512 static inline __attribute__((always_inline)) void
px_block(const q8_conv_geom *G, const float *buf, int64_t pw, const float *wt, __m512 init,
         int64_t oh, int64_t ow0, float *out, const int nv) {
    const int64_t KH = G->k[1], KW = G->k[2];
    __m512 acc[DWC_IN_FLIGHT];
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++) acc[j] = init;
    for (int64_t kh = 0; kh < KH; kh++) {
        const float *row = buf + ((oh * G->s[1] + kh * G->d[1]) * pw + ow0 * G->s[2]) * 16;
        for (int64_t kw = 0; kw < KW; kw++) {
            __m512 wv = _mm512_load_ps(wt + (kh * KW + kw) * 16);
            const float *src = row + kw * G->d[2] * 16;
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++)
                acc[j] = _mm512_fmadd_ps(wv, _mm512_load_ps(src + j * G->s[2] * 16), acc[j]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++) _mm512_store_ps(out + (oh * G->out[2] + ow0 + j) * 16, acc[j]);
}

AVX512 void q8_conv_dwc_range(void *arg, int64_t begin, int64_t end, int thread) {
    const conv_dw_args *a = arg;
    const q8_conv_params *p = a->p;
    const q8_conv_geom *G = &p->geo;
    const int64_t OH = G->out[1], OW = G->out[2], taps = p->kprod, nblk = (p->c + 15) / 16;
    int64_t ph, pw;
    padded_extent(G, &ph, &pw);
    float *buf = (float *)((char *)a->scratch + (size_t)thread * a->per_thread);
    float *out = buf + ph * pw * 16;
    float *wt = out + (p->out_sp + 15) / 16 * 16 * 16;
    q8_act_span span = {0};
    for (int64_t it = begin; it < end; it++) {
        int64_t img = it / nblk, c0 = it % nblk * 16;
        int64_t nc = p->c - c0 < 16 ? p->c - c0 : 16;
        for (int64_t t = 0; t < taps; t++)
            for (int64_t i = 0; i < 16; i++)
                wt[t * 16 + i] = i < nc ? a->w[(c0 + i) * taps + t] : 0.0f;
        load_block(p, a->x + (img * p->c + c0) * p->in_sp, nc, ph, pw, buf);
        /* The planes loops start from 0 + bias (+0 where the bias is -0). */
        __mmask16 cm = (__mmask16)((1u << nc) - 1);
        __m512 init = _mm512_add_ps(_mm512_setzero_ps(),
                                    a->bias ? _mm512_maskz_loadu_ps(cm, a->bias + c0)
                                            : _mm512_setzero_ps());
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow0 = 0; ow0 < OW; ow0 += DWC_IN_FLIGHT) {
                switch (OW - ow0 < DWC_IN_FLIGHT ? OW - ow0 : DWC_IN_FLIGHT) {
                case 1: px_block(G, buf, pw, wt, init, oh, ow0, out, 1); break;
                case 2: px_block(G, buf, pw, wt, init, oh, ow0, out, 2); break;
                case 3: px_block(G, buf, pw, wt, init, oh, ow0, out, 3); break;
                case 4: px_block(G, buf, pw, wt, init, oh, ow0, out, 4); break;
                case 5: px_block(G, buf, pw, wt, init, oh, ow0, out, 5); break;
                case 6: px_block(G, buf, pw, wt, init, oh, ow0, out, 6); break;
                case 7: px_block(G, buf, pw, wt, init, oh, ow0, out, 7); break;
                default: px_block(G, buf, pw, wt, init, oh, ow0, out, 8); break;
                }
            }
        /* Back to channel rows: 16 output pixels a transpose. */
        float *y = a->y + (img * p->m + c0) * p->out_sp;
        for (int64_t q0 = 0; q0 < p->out_sp; q0 += 16) {
            int64_t n = p->out_sp - q0 < 16 ? p->out_sp - q0 : 16;
            __mmask16 m = (__mmask16)((1u << n) - 1);
            __m512 v[16];
            for (int j = 0; j < 16; j++)
                v[j] = j < n ? _mm512_load_ps(out + (q0 + j) * 16) : _mm512_setzero_ps();
            transpose16(v);
            for (int64_t i = 0; i < nc; i++) _mm512_mask_storeu_ps(y + i * p->out_sp + q0, m, v[i]);
        }
        q8_conv_act_span(&p->act, &span, y, nc * p->out_sp);
    }
    q8_conv_act_span(&p->act, &span, NULL, 0);
}

#endif
