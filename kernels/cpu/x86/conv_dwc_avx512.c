/* Depthwise FP32 Conv with channels in the lanes on AVX-512F: see
 * conv_dwc.h. Compiled for AVX-512F whatever the build flags; only called
 * when the CPU has it (q8_conv_dwc_fits checks). */
#include "conv_dwc.h"

#include <string.h>

#include "conv_fewc.h" /* Q8_FEWC_X86 */
#include "conv_impl.h"
#include "cpu_features.h"

/* A band's padded input within this (16-channel pixels), beside its
 * output, in a thread's L2. */
#define DWC_BAND_BYTES (96 << 10)
/* Output pixels of a row computed together (independent FMA chains). */
#define DWC_IN_FLIGHT 8

/* Bands of output rows: `rows` a band, each reading `in_rows` rows of the
 * padded input, `pw` columns wide (the extent the taps read). */
typedef struct dwc_bands {
    int64_t rows, in_rows, pw, n;
} dwc_bands;

static dwc_bands bands_of(const q8_conv_geom *G) {
    dwc_bands b;
    int64_t reach = (G->k[1] - 1) * G->d[1] + 1;
    b.pw = (G->out[2] - 1) * G->s[2] + (G->k[2] - 1) * G->d[2] + 1;
    int64_t fit = DWC_BAND_BYTES / (b.pw * 16 * (int64_t)sizeof(float));
    b.rows = fit > reach ? (fit - reach) / G->s[1] + 1 : 1;
    if (b.rows > G->out[1]) b.rows = G->out[1];
    b.in_rows = (b.rows - 1) * G->s[1] + reach;
    b.n = (G->out[1] + b.rows - 1) / b.rows;
    return b;
}

bool q8_conv_dwc_fits(const q8_conv_params *p) {
#if Q8_FEWC_X86
    const q8_conv_geom *G = &p->geo;
    if (!q8_cpu()->avx512f) return false;
    if (p->cg != 1 || p->mg != 1 || p->c < 16) return false;
    if (G->in[0] != 1 || G->k[0] != 1 || G->pb[0] != 0 || G->pe[0] != 0) return false;
    /* Rows up to DWC_MAX_OW: wider ones fill the planes loops' vectors. A
     * band of one row whose taps reach far (a large dilation or stride)
     * could still need a large buffer: those too keep the planes loops. */
    if (G->out[2] > DWC_MAX_OW) return false;
    dwc_bands b = bands_of(G);
    return b.in_rows * b.pw * 16 * (int64_t)sizeof(float) <= 4 * DWC_BAND_BYTES;
#else
    (void)p;
    return false;
#endif
}

int64_t q8_conv_dwc_items(const q8_conv_params *p) {
    return p->nb * ((p->c + 15) / 16) * bands_of(&p->geo).n;
}

size_t q8_conv_dwc_per_thread(const q8_conv_params *p) {
    dwc_bands b = bands_of(&p->geo);
    /* a band's padded input and output (whole 16-pixel chunks), weights
     * [taps][16] */
    int64_t out = (b.rows * p->geo.out[2] + 15) / 16 * 16;
    return sizeof(float) * 16 * (size_t)(b.in_rows * b.pw + out + p->kprod);
}

#if Q8_FEWC_X86
#include <immintrin.h>

#include "act_avx512.h"

#include "transpose16_avx512.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* r[i] lane j <- r[j] lane i (transpose16_avx512.h, on float lanes). */
AVX512 static inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i++) t[i] = _mm512_castps_si512(r[i]);
    q8_transpose16(t);
    for (int i = 0; i < 16; i++) r[i] = _mm512_castsi512_ps(t[i]);
}

/* Channels c0 .. c0 + nc of one image into buf: pixel (r0 + r, c) of the
 * padded extent at buf + (r * pw + c) * 16 for r < nr, padding zero. */
AVX512 static void load_block(const q8_conv_params *p, const float *x, int64_t nc, int64_t r0,
                              int64_t nr, int64_t pw, float *buf) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], pt = G->pb[1], pl = G->pb[2];
    int64_t lo = r0 - pt < 0 ? 0 : r0 - pt, hi = r0 + nr - pt < IH ? r0 + nr - pt : IH;
    /* zeros where no input lands: rows outside the plane, columns left and
     * right of it (the whole buffer was 9% of a 29x29 layer's time) */
    const size_t px = sizeof(float) * 16;
    int64_t rlo = lo + pt - r0 < nr ? lo + pt - r0 : nr, rhi = hi > lo ? hi + pt - r0 : rlo;
    memset(buf, 0, px * (size_t)(rlo * pw));
    memset(buf + rhi * pw * 16, 0, px * (size_t)((nr - rhi) * pw));
    int64_t cl = pl < pw ? pl : pw, cr = pl + IW < pw ? pl + IW : pw; /* [cl, cr) written below */
    for (int64_t r = rlo; r < rhi; r++) {
        memset(buf + r * pw * 16, 0, px * (size_t)cl);
        memset(buf + (r * pw + cr) * 16, 0, px * (size_t)(pw - cr));
    }
    for (int64_t ih = lo; ih < hi; ih++) {
        int64_t r = ih + pt - r0;
        for (int64_t iw0 = 0; iw0 < IW; iw0 += 16) {
            int64_t n = IW - iw0 < 16 ? IW - iw0 : 16;
            __mmask16 m = (__mmask16)((1u << n) - 1);
            __m512 v[16];
            const float *xs = x + ih * IW + iw0;
            if (nc == 16) /* no per-channel test in the common case */
                for (int i = 0; i < 16; i++) v[i] = _mm512_maskz_loadu_ps(m, xs + i * p->in_sp);
            else
                for (int i = 0; i < 16; i++)
                    v[i] = i < nc ? _mm512_maskz_loadu_ps(m, xs + i * p->in_sp)
                                  : _mm512_setzero_ps();
            transpose16(v);
            for (int64_t j = 0; j < n; j++) {
                int64_t c = iw0 + j + pl;
                if (c >= 0 && c < pw) _mm512_store_ps(buf + (r * pw + c) * 16, v[j]);
            }
        }
    }
}

/* Outputs (oh, ow0 .. ow0 + nv) of a band (oh from its first row) into
 * out[(oh * OW + ow) * 16]. KH, KW, SW (stride along W) and DW (dilation
 * along W) are G's, passed as constants where a caller knows them. */
AVX512 static inline __attribute__((always_inline)) void
px_block(const q8_conv_geom *G, const float *buf, int64_t pw, const float *wt, __m512 init,
         int64_t oh, int64_t ow0, float *out, const int nv, const int64_t KH, const int64_t KW,
         const int64_t SW, const int64_t DW) {
    __m512 acc[DWC_IN_FLIGHT];
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++) acc[j] = init;
    for (int64_t kh = 0; kh < KH; kh++) {
        const float *row = buf + ((oh * G->s[1] + kh * G->d[1]) * pw + ow0 * SW) * 16;
        for (int64_t kw = 0; kw < KW; kw++) {
            __m512 wv = _mm512_load_ps(wt + (kh * KW + kw) * 16);
            const float *src = row + kw * DW * 16;
#pragma GCC unroll 8
            for (int j = 0; j < nv; j++)
                acc[j] = _mm512_fmadd_ps(wv, _mm512_load_ps(src + j * SW * 16), acc[j]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++) _mm512_store_ps(out + (oh * G->out[2] + ow0 + j) * 16, acc[j]);
}

/* px_block for nv = 1 .. 8 outputs, each a constant. */
#define PX_BLOCKS(NV, KH, KW, SW, DW)                                                           \
    switch (NV) {                                                                               \
    case 1: px_block(G, buf, pw, wt, init, oh, ow0, out, 1, KH, KW, SW, DW); break;             \
    case 2: px_block(G, buf, pw, wt, init, oh, ow0, out, 2, KH, KW, SW, DW); break;             \
    case 3: px_block(G, buf, pw, wt, init, oh, ow0, out, 3, KH, KW, SW, DW); break;             \
    case 4: px_block(G, buf, pw, wt, init, oh, ow0, out, 4, KH, KW, SW, DW); break;             \
    case 5: px_block(G, buf, pw, wt, init, oh, ow0, out, 5, KH, KW, SW, DW); break;             \
    case 6: px_block(G, buf, pw, wt, init, oh, ow0, out, 6, KH, KW, SW, DW); break;             \
    case 7: px_block(G, buf, pw, wt, init, oh, ow0, out, 7, KH, KW, SW, DW); break;             \
    default: px_block(G, buf, pw, wt, init, oh, ow0, out, 8, KH, KW, SW, DW); break;            \
    }

AVX512 void q8_conv_dwc_range(void *arg, int64_t begin, int64_t end, int thread) {
    const conv_dw_args *a = arg;
    const q8_conv_params *p = a->p;
    const q8_conv_geom *G = &p->geo;
    const int64_t OH = G->out[1], OW = G->out[2], taps = p->kprod, nblk = (p->c + 15) / 16;
    const dwc_bands b = bands_of(G);
    float *buf = (float *)((char *)a->scratch + (size_t)thread * a->per_thread);
    float *out = buf + b.in_rows * b.pw * 16;
    float *wt = out + (b.rows * OW + 15) / 16 * 16 * 16;
    q8_act_span span = {0};
    const int act = q8v_act_code(&p->act);
    int64_t wt_for = -1; /* the channel block whose weights wt holds */
    for (int64_t it = begin; it < end; it++) {
        int64_t band = it % b.n, blk = it / b.n % nblk, img = it / b.n / nblk;
        int64_t c0 = blk * 16, nc = p->c - c0 < 16 ? p->c - c0 : 16;
        int64_t oh0 = band * b.rows, rows = OH - oh0 < b.rows ? OH - oh0 : b.rows;
        if (wt_for != blk) {
            for (int64_t t = 0; t < taps; t++)
                for (int64_t i = 0; i < 16; i++)
                    wt[t * 16 + i] = i < nc ? a->w[(c0 + i) * taps + t] : 0.0f;
            wt_for = blk;
        }
        load_block(p, a->x + (img * p->c + c0) * p->in_sp, nc, oh0 * G->s[1],
                   (rows - 1) * G->s[1] + (G->k[1] - 1) * G->d[1] + 1, b.pw, buf);
        /* The planes loops start from 0 + bias (+0 where the bias is -0). */
        __mmask16 cm = (__mmask16)((1u << nc) - 1);
        __m512 init = _mm512_add_ps(_mm512_setzero_ps(),
                                    a->bias ? _mm512_maskz_loadu_ps(cm, a->bias + c0)
                                            : _mm512_setzero_ps());
        const int64_t pw = b.pw;
        const bool k3s1 = G->k[1] == 3 && G->k[2] == 3 && G->s[2] == 1 && G->d[2] == 1;
        for (int64_t oh = 0; oh < rows; oh++)
            for (int64_t ow0 = 0; ow0 < OW; ow0 += DWC_IN_FLIGHT) {
                int nv = OW - ow0 < DWC_IN_FLIGHT ? (int)(OW - ow0) : DWC_IN_FLIGHT;
                if (k3s1) { /* 3x3 stride 1, the common depthwise: unrolled */
                    PX_BLOCKS(nv, 3, 3, 1, 1);
                } else {
                    PX_BLOCKS(nv, G->k[1], G->k[2], G->s[2], G->d[2]);
                }
            }
        /* Back to channel rows: 16 output pixels a transpose; Relu, Clip
         * and HardSwish on the way, in registers (act_avx512.h:
         * q8_act_apply's results), where a pass over Y after was 4% of the
         * hand landmarks' time. */
        const int64_t npx = rows * OW;
        float *y = a->y + (img * p->m + c0) * p->out_sp + oh0 * OW;
        for (int64_t q0 = 0; q0 < npx; q0 += 16) {
            int64_t n = npx - q0 < 16 ? npx - q0 : 16;
            __mmask16 m = (__mmask16)((1u << n) - 1);
            __m512 v[16];
            for (int j = 0; j < 16; j++)
                v[j] = j < n ? _mm512_load_ps(out + (q0 + j) * 16) : _mm512_setzero_ps();
            transpose16(v);
            for (int64_t i = 0; i < nc; i++)
                _mm512_mask_storeu_ps(y + i * p->out_sp + q0, m,
                                      q8v_act(v[i], act, p->act.p0, p->act.p1));
        }
        /* A band's channels are not adjacent in Y: one run each, unless
         * the band is the whole map. */
        if (act) continue;
        if (b.n == 1) q8_conv_act_span(&p->act, &span, y, nc * p->out_sp);
        else
            for (int64_t i = 0; i < nc; i++) q8_conv_act_span(&p->act, &span, y + i * p->out_sp, npx);
    }
    q8_conv_act_span(&p->act, &span, NULL, 0);
}

#endif
