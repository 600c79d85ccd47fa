/* Direct FP32 Conv with the output channels in the lanes, AVX-512F: see
 * conv_ocl.h. Compiled for AVX-512F whatever the build flags; only called
 * when the CPU has it (q8_conv_ocl_fits checks). */
#include "conv_ocl.h"

#if Q8_OCL_X86
#include <immintrin.h>

#include "act_avx512.h"
#include "fused_act.h"
#include "sgemm.h"
#include "transpose16_avx512.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* Taps [k0, k1) of np pixels (from rows[k] + col, sw apart) by nv vectors
 * of channels, each output's chain from +0 (np, nv, sw: constants where
 * inlined). Each pixel's broadcast feeds nv FMAs; per tap nv weight loads
 * and np broadcasts feed np * nv FMAs. */
AVX512 static inline __attribute__((always_inline)) void ocl_chain(
    const float *const *rows, int64_t col, int64_t k0, int64_t k1, const float *wp,
    __m512 acc[Q8_OCL_NP][2], const int np, const int nv, const int sw) {
#pragma GCC unroll 12
    for (int i = 0; i < np; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; k++) {
        const float *b = rows[k] + col;
        const float *w = wp + k * Q8_OCL_MB;
        __m512 w0 = _mm512_loadu_ps(w), w1 = nv > 1 ? _mm512_loadu_ps(w + 16) : w0;
        /* the next tile's inputs: a tile reads 96 rows of X a few lines
         * each, too many streams for the hardware prefetchers (YOLOv5s's
         * 32 -> 64 conv at 322x322, 1 thread: 14.1 -> 10.6 ms) */
        const float *nx = b + Q8_OCL_NP * sw;
        _mm_prefetch((const char *)nx, _MM_HINT_T0);
        _mm_prefetch((const char *)(nx + 16), _MM_HINT_T0);
#pragma GCC unroll 12
        for (int i = 0; i < np; i++) {
            __m512 a = _mm512_set1_ps(b[i * sw]);
            acc[i][0] = _mm512_fmadd_ps(a, w0, acc[i][0]);
            if (nv > 1) acc[i][1] = _mm512_fmadd_ps(a, w1, acc[i][1]);
        }
    }
}

typedef struct ocl_tile_ctx {
    const float *wp;        /* this channel block's weights */
    const float *bias;      /* this block's, or NULL */
    int64_t kg, mc, ldy;    /* taps; channels stored; floats between channels of Y */
    int act;                /* q8v_act_code */
    float p0, p1;
} ocl_tile_ctx;

/* np pixels of mc channels into y (channel j at y + j * ldy, pixels
 * consecutive): every K block, the sums, bias and activation in
 * registers, then a 16 x 16 transpose per vector of channels. */
AVX512 static inline __attribute__((always_inline)) void ocl_tile(
    const ocl_tile_ctx *t, const float *const *rows, int64_t col, float *y, const int np,
    const int nv, const int sw) {
    __m512 acc[Q8_OCL_NP][2], tot[Q8_OCL_NP][2];
    int64_t nblk = q8_sgemm_kblock_count(t->kg), k0, kc;
    q8_sgemm_kblock(t->kg, 0, &k0, &kc);
    ocl_chain(rows, col, k0, k0 + kc, t->wp, tot, np, nv, sw);
    for (int64_t b = 1; b < nblk; b++) {
        q8_sgemm_kblock(t->kg, b, &k0, &kc);
        ocl_chain(rows, col, k0, k0 + kc, t->wp, acc, np, nv, sw);
#pragma GCC unroll 12
        for (int i = 0; i < np; i++)
            for (int v = 0; v < nv; v++) tot[i][v] = _mm512_add_ps(tot[i][v], acc[i][v]);
    }
    __mmask16 st = (__mmask16)((1u << np) - 1);
    for (int v = 0; v < nv; v++) {
        int64_t left = t->mc - 16 * v;
        __mmask16 lanes = (__mmask16)(left >= 16 ? 0xffffu : (1u << left) - 1);
        __m512 bv = t->bias ? _mm512_maskz_loadu_ps(lanes, t->bias + 16 * v) : _mm512_setzero_ps();
        __m512i r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) {
            __m512 x = i < np ? tot[i][v] : _mm512_setzero_ps();
            if (t->bias) x = _mm512_add_ps(x, bv);
            r[i] = _mm512_castps_si512(t->act ? q8v_act(x, t->act, t->p0, t->p1) : x);
        }
        q8_transpose16(r);
        for (int j = 0; j < 16 && j < left; j++)
            _mm512_mask_storeu_ps(y + (16 * v + j) * t->ldy, st, _mm512_castsi512_ps(r[j]));
    }
}

/* The instances: [sw - 1][nv - 1][np - 1]. */
typedef void (*ocl_tile_fn)(const ocl_tile_ctx *t, const float *const *rows, int64_t col,
                            float *y);
#define OCL_FN(NP, NV, SW)                                                                   \
    AVX512 static void ocl_tile_##NP##_##NV##_##SW(const ocl_tile_ctx *t,                     \
                                                  const float *const *rows, int64_t col,      \
                                                  float *y) {                                 \
        ocl_tile(t, rows, col, y, NP, NV, SW);                                               \
    }
#define OCL_FNS(NV, SW)                                                                      \
    OCL_FN(1, NV, SW) OCL_FN(2, NV, SW) OCL_FN(3, NV, SW) OCL_FN(4, NV, SW) OCL_FN(5, NV, SW) \
    OCL_FN(6, NV, SW) OCL_FN(7, NV, SW) OCL_FN(8, NV, SW) OCL_FN(9, NV, SW)                  \
    OCL_FN(10, NV, SW) OCL_FN(11, NV, SW) OCL_FN(12, NV, SW)
OCL_FNS(1, 1)
OCL_FNS(2, 1)
OCL_FNS(1, 2)
OCL_FNS(2, 2)
#define OCL_ROW(NV, SW)                                                                      \
    {ocl_tile_1_##NV##_##SW,  ocl_tile_2_##NV##_##SW,  ocl_tile_3_##NV##_##SW,                \
     ocl_tile_4_##NV##_##SW,  ocl_tile_5_##NV##_##SW,  ocl_tile_6_##NV##_##SW,                \
     ocl_tile_7_##NV##_##SW,  ocl_tile_8_##NV##_##SW,  ocl_tile_9_##NV##_##SW,                \
     ocl_tile_10_##NV##_##SW, ocl_tile_11_##NV##_##SW, ocl_tile_12_##NV##_##SW}
static const ocl_tile_fn ocl_tiles[2][2][Q8_OCL_NP] = {
    {OCL_ROW(1, 1), OCL_ROW(2, 1)},
    {OCL_ROW(1, 2), OCL_ROW(2, 2)},
};

/* The edge pixels of a row (0 <= e < ne): those before lo, then those
 * from hi (all of them when no pixel is inside). */
static int64_t edge_px(int64_t e, int64_t lo, int64_t hi) { return e < lo ? e : hi + (e - lo); }

/* Edge pixels [e0, e0 + n) of output row rows' taps gathered as cbuf[k][n]
 * (+0 outside X): a tile of n pixels one float apart. */
static void gather_edges(const q8_conv_params *p, const float *const *rows, int64_t e0,
                         int64_t n, int64_t lo, int64_t hi, float *cbuf) {
    const q8_conv_geom *G = &p->geo;
    const int64_t IW = G->in[2], KW = G->k[2], sw = G->s[2], dw = G->d[2];
    for (int64_t i = 0; i < n; i++) {
        int64_t ow = edge_px(e0 + i, lo, hi), k = 0;
        for (int64_t r = 0; r < p->kg / KW; r++)
            for (int64_t kw = 0; kw < KW; kw++, k++) {
                int64_t iw = ow * sw - G->pb[2] + kw * dw;
                cbuf[k * n + i] = iw >= 0 && iw < IW ? rows[k][iw - kw * dw] : 0.0f;
            }
    }
}

void q8_conv_ocl_range(void *arg, int64_t begin, int64_t end, int thread) {
    const conv_ocl_args *a = arg;
    const q8_conv_params *p = a->p;
    const q8_conv_geom *G = &p->geo;
    const int64_t IH = G->in[1], IW = G->in[2], OH = G->out[1], OW = G->out[2];
    const int64_t KH = G->k[1], KW = G->k[2], K = p->kg;
    const int64_t nmb = (p->m + Q8_OCL_MB - 1) / Q8_OCL_MB, sw = G->s[2];
    q8_conv_ocl_scratch sc;
    q8_conv_ocl_scratch_at(p, a->scratch + (size_t)thread * q8_conv_ocl_per_thread(p), &sc);
    for (int64_t i = 0; i < IW; i++) sc.zero[i] = 0.0f;
    int64_t lo, hi;
    q8_conv_ocl_inside(G, &lo, &hi);
    /* the inside pixels in tiles of (almost) equal size: no tile of one or
     * two pixels, whose FMA chains would wait on each other */
    int64_t ntile = (hi - lo + Q8_OCL_NP - 1) / Q8_OCL_NP, ne = OW - (hi - lo);
    const int act = q8v_act_code(&p->act);
    int64_t row_at = -1;
    for (int64_t it = begin; it < end; it++) {
        int64_t img = it / (OH * nmb), oh = it / nmb % OH, mb = it % nmb;
        const float *xi = a->x + img * p->c * p->in_sp;
        bool new_row = row_at != it / nmb;
        if (new_row) { /* the taps' rows of X for this output row */
            row_at = it / nmb;
            int64_t k = 0;
            for (int64_t ci = 0; ci < p->cg; ci++)
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * G->s[1] - G->pb[1] + kh * G->d[1];
                    const float *r = ih >= 0 && ih < IH ? xi + (ci * IH + ih) * IW : sc.zero;
                    for (int64_t kw = 0; kw < KW; kw++) sc.rows[k++] = r + kw * G->d[2];
                }
        }
        int64_t m0 = mb * Q8_OCL_MB, mc = p->m - m0 < Q8_OCL_MB ? p->m - m0 : Q8_OCL_MB;
        ocl_tile_ctx t = {.wp = a->wp + mb * K * Q8_OCL_MB,
                          .bias = a->bias ? a->bias + m0 : NULL,
                          .kg = K, .mc = mc, .ldy = p->out_sp, .act = act,
                          .p0 = p->act.p0, .p1 = p->act.p1};
        const ocl_tile_fn *fns = ocl_tiles[sw - 1][mc > 16];
        float *y = a->y + img * p->m * p->out_sp + m0 * p->out_sp + oh * OW;
        for (int64_t i = 0, ow = lo; i < ntile; i++) {
            int64_t np = (hi - lo) / ntile + (i < (hi - lo) % ntile);
            fns[np - 1](&t, sc.rows, ow * sw - G->pb[2], y + ow);
            ow += np;
        }
        /* the edge pixels, Q8_OCL_NP at a time: columns gathered, outputs
         * through a small block */
        for (int64_t e0 = 0; e0 < ne; e0 += Q8_OCL_NP) {
            int64_t n = ne - e0 < Q8_OCL_NP ? ne - e0 : Q8_OCL_NP;
            float *cb = sc.cbuf + e0 * K; /* gathered once per row, for every block */
            if (new_row) gather_edges(p, sc.rows, e0, n, lo, hi, cb);
            for (int64_t k = 0; k < K; k++) sc.cptr[k] = cb + k * n;
            ocl_tile_ctx te = t;
            te.ldy = n;
            ocl_tiles[0][mc > 16][n - 1](&te, sc.cptr, 0, sc.yblk);
            for (int64_t j = 0; j < mc; j++)
                for (int64_t i = 0; i < n; i++)
                    y[j * p->out_sp + edge_px(e0 + i, lo, hi)] = sc.yblk[j * n + i];
        }
        if (p->act.kind != Q8_ACT_NONE && !act)
            for (int64_t j = 0; j < mc; j++) q8_act_apply(&p->act, y + j * p->out_sp, OW);
    }
}

#endif
