/* Data movement for Conv: implicit im2col, stride-phase planes with their
 * row packer and output compaction, and the direct depthwise loops. */
#include <string.h>

#include "clones.h"
#include "conv_impl.h"
#include "cpu_features.h"

/* ---- implicit im2col: B panels straight from X ---- */

/* Write `len` values of one output row into the panel layout at column
 * (*jp) * nr + *jo, and advance (*jp, *jo): value t is xr[iw0 + t*sw] when
 * inside [0, iw), else 0 (xr NULL: the whole row is padding). Inlined into
 * each clone, the column tracked as panel and offset: the call and its two
 * divisions by nr per row were most of a conv's time on 4-wide maps (a
 * speech embedding's 1x3 convs, 2.4x slower than ONNX Runtime). */
static inline __attribute__((always_inline)) void put_row(float *drow, int64_t kc, int nr,
                                                          int64_t *jp, int64_t *jo, int64_t len,
                                                          const float *xr, int64_t iw0,
                                                          int64_t sw, int64_t iw) {
    while (len > 0) {
        int64_t off = *jo, piece = len < nr - off ? len : nr - off;
        float *restrict d = drow + *jp * kc * nr + off;
        if (!xr) {
            for (int64_t t = 0; t < piece; t++) d[t] = 0.0f;
        } else if (sw == 1) {
            int64_t lo = -iw0, hi = iw - iw0;
            lo = lo < 0 ? 0 : lo > piece ? piece : lo;
            hi = hi < lo ? lo : hi > piece ? piece : hi;
            const float *restrict s = xr + iw0;
            for (int64_t t = 0; t < lo; t++) d[t] = 0.0f;
            for (int64_t t = lo; t < hi; t++) d[t] = s[t];
            for (int64_t t = hi; t < piece; t++) d[t] = 0.0f;
        } else {
            for (int64_t t = 0; t < piece; t++) {
                int64_t q = iw0 + t * sw;
                d[t] = q >= 0 && q < iw ? xr[q] : 0.0f;
            }
        }
        if ((*jo += piece) == nr) {
            *jo = 0;
            ++*jp;
        }
        len -= piece;
        iw0 += piece * sw;
    }
}

Q8_CLONES void q8_conv_im2col_pack(const void *vctx, int64_t batch, int64_t k0, int64_t kc,
                                   int64_t n0, int64_t nc, int nr, float *dst) {
    const conv_pack_ctx *cx = vctx;
    const q8_conv_params *p = cx->p;
    const q8_conv_geom *G = &p->geo;
    int64_t img = batch / p->g, grp = batch % p->g;
    const float *x = cx->src + (img * p->c + grp * p->cg) * p->in_sp;
    int64_t kw = k0 % G->k[2], t = k0 / G->k[2];
    int64_t kh = t % G->k[1];
    t /= G->k[1];
    int64_t kd = t % G->k[0], ci = t / G->k[0];
    int64_t ow0 = n0 % G->out[2];
    t = n0 / G->out[2];
    int64_t oh0 = t % G->out[1], od0 = t / G->out[1];
    for (int64_t kk = 0; kk < kc; kk++) {
        const float *xc = x + ci * p->in_sp;
        int64_t ow = ow0, oh = oh0, od = od0, j = 0, jp = 0, jo = 0;
        while (j < nc) {
            int64_t len = G->out[2] - ow < nc - j ? G->out[2] - ow : nc - j;
            int64_t id = od * G->s[0] - G->pb[0] + kd * G->d[0];
            int64_t ih = oh * G->s[1] - G->pb[1] + kh * G->d[1];
            const float *xr = id >= 0 && id < G->in[0] && ih >= 0 && ih < G->in[1]
                                  ? xc + (id * G->in[1] + ih) * G->in[2]
                                  : NULL;
            put_row(dst + kk * nr, kc, nr, &jp, &jo, len, xr,
                    ow * G->s[2] - G->pb[2] + kw * G->d[2], G->s[2], G->in[2]);
            j += len;
            ow += len;
            if (ow == G->out[2]) {
                ow = 0;
                if (++oh == G->out[1]) {
                    oh = 0;
                    od++;
                }
            }
        }
        if (++kw == G->k[2]) {
            kw = 0;
            if (++kh == G->k[1]) {
                kh = 0;
                if (++kd == G->k[0]) {
                    kd = 0;
                    ci++;
                }
            }
        }
    }
    /* Columns past nc in the last panel. */
    int64_t tail = nc % nr;
    if (tail) {
        float *d = dst + (nc / nr) * kc * nr;
        for (int64_t kk = 0; kk < kc; kk++)
            memset(d + kk * nr + tail, 0, sizeof(float) * (size_t)(nr - tail));
    }
}

void q8_conv_col1(const q8_conv_params *p, const float *x, float *col) {
    const q8_conv_geom *G = &p->geo;
    for (int64_t c = 0; c < p->cg; c++)
        for (int64_t kd = 0; kd < G->k[0]; kd++) {
            int64_t id = kd * G->d[0] - G->pb[0];
            for (int64_t kh = 0; kh < G->k[1]; kh++) {
                int64_t ih = kh * G->d[1] - G->pb[1];
                bool row = id >= 0 && id < G->in[0] && ih >= 0 && ih < G->in[1];
                const float *xr = row ? x + ((c * G->in[0] + id) * G->in[1] + ih) * G->in[2] : x;
                for (int64_t kw = 0; kw < G->k[2]; kw++) {
                    int64_t iw = kw * G->d[2] - G->pb[2];
                    *col++ = row && iw >= 0 && iw < G->in[2] ? xr[iw] : 0.0f;
                }
            }
        }
}

/* ---- shift mode ----
 * Padded input split by stride phase: plane (c, phase) element (a, b, j) is
 * the padded input at (a*sd + fd, b*sh + fh, j*sw + fw). A kernel tap then
 * reads one plane at a fixed offset, so row k of B is contiguous there. */

/* n floats from s to d (not overlapping): the rows here are often 7-28
 * floats, where a memcpy call costs more than the copy (a 14x14 depthwise
 * channel made 28 of them, a third of its time). Overlapping vector moves
 * for the ends instead of a scalar tail. */
typedef float v16c __attribute__((vector_size(64), aligned(4), may_alias));
typedef float v8c __attribute__((vector_size(32), aligned(4), may_alias));
typedef float v4c __attribute__((vector_size(16), aligned(4), may_alias));
static inline __attribute__((always_inline)) void copy_floats(float *d, const float *s,
                                                              int64_t n) {
    if (n >= 16) {
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) *(v16c *)(d + j) = *(const v16c *)(s + j);
        if (j < n) *(v16c *)(d + n - 16) = *(const v16c *)(s + n - 16);
    } else if (n >= 8) {
        v8c a = *(const v8c *)s, b = *(const v8c *)(s + n - 8);
        *(v8c *)d = a;
        *(v8c *)(d + n - 8) = b;
    } else if (n >= 4) {
        v4c a = *(const v4c *)s, b = *(const v4c *)(s + n - 4);
        *(v4c *)d = a;
        *(v4c *)(d + n - 4) = b;
    } else {
        if (n > 0) d[0] = s[0];
        if (n > 1) d[1] = s[1];
        if (n > 2) d[2] = s[2];
    }
}

/* Rows [b0, b1) of every (a, b) grid of phase (fd, fh, fw) of one channel:
 * row (ai, bi) at dst + (ai * (b1 - b0) + bi - b0) * ph[2]. `zeroed`: dst
 * is already zero, so padding is skipped. */
static inline void phase_rows(const q8_conv_params *p, const conv_prep *cp, const float *xc,
                              int64_t fd, int64_t fh, int64_t fw, int64_t b0, int64_t b1,
                              bool zeroed, float *dst) {
    const q8_conv_geom *G = &p->geo;
    const int64_t *P = cp->ph;
    const int64_t sw = G->s[2], iw = G->in[2];
    /* row[j] = src[j*sw + off] where 0 <= j*sw + off < IW: the same
     * columns [lo, hi) in every row of the phase, so the divisions are
     * done once here (per row they were a tenth of the depthwise loops'
     * time). */
    int64_t off = fw - G->pb[2];
    int64_t lo = off < 0 ? (-off + sw - 1) / sw : 0;
    int64_t hi = iw - off <= 0 ? 0 : (iw - off - 1) / sw + 1;
    if (lo > P[2]) lo = P[2];
    if (hi > P[2]) hi = P[2];
    if (hi < lo) hi = lo;
    for (int64_t ai = 0; ai < P[0]; ai++)
        for (int64_t bi = b0; bi < b1; bi++) {
            float *restrict row = dst + (ai * (b1 - b0) + bi - b0) * P[2];
            int64_t id = ai * G->s[0] + fd - G->pb[0];
            int64_t ih = bi * G->s[1] + fh - G->pb[1];
            if (id < 0 || id >= G->in[0] || ih < 0 || ih >= G->in[1]) {
                if (!zeroed) memset(row, 0, sizeof(float) * (size_t)P[2]);
                continue;
            }
            const float *restrict src = xc + (id * G->in[1] + ih) * iw;
            if (!zeroed) memset(row, 0, sizeof(float) * (size_t)lo);
            if (sw == 1)
                copy_floats(row + lo, src + lo + off, hi - lo);
            else if (sw == 2) /* constant stride: vectorizes */
                for (int64_t j = lo; j < hi; j++) row[j] = src[2 * j + off];
            else
                for (int64_t j = lo; j < hi; j++) row[j] = src[j * sw + off];
            if (!zeroed) memset(row + hi, 0, sizeof(float) * (size_t)(P[2] - hi));
        }
}

/* Narrow rows (a 7x7 map): one memset of every plane costs less than the
 * per-row calls for the padding (they were a sixth of a 7x7 5x5 depthwise
 * layer's time). */
static inline bool zero_whole(const conv_prep *cp) { return cp->ph[2] <= 32; }

/* Whether a kernel tap reads phase f of dim i: a phase no tap reads is not
 * built (a 1x1 stride-2 conv reads one plane of four: building all four
 * was most of its time, 0.040 ms against 0.018 for its GEMM). */
static inline bool phase_read(const q8_conv_geom *G, int i, int64_t f) {
    for (int64_t kk = 0; kk < G->k[i] && kk < G->s[i]; kk++)
        if (kk * G->d[i] % G->s[i] == f) return true;
    return false;
}

static inline bool phase_used(const q8_conv_geom *G, int64_t fd, int64_t fh, int64_t fw) {
    return phase_read(G, 0, fd) && phase_read(G, 1, fh) && phase_read(G, 2, fw);
}

int64_t q8_conv_phases_read(const q8_conv_geom *G) {
    int64_t n = 1;
    for (int i = 0; i < 3; i++) {
        int64_t c = 0;
        for (int64_t f = 0; f < G->s[i]; f++) c += phase_read(G, i, f);
        n *= c;
    }
    return n;
}

/* The stride-phase planes of one channel (nph planes of cp->plane floats).
 * Always inlined: into the callers' clones (Q8_CLONES), so its copies use
 * their vectors. Called out of line it was baseline x86-64 code, a third
 * of a depthwise layer's time (96 x 97x97 3x3: 0.364 -> 0.316 ms). */
static inline __attribute__((always_inline)) void
build_planes(const q8_conv_params *p, const conv_prep *cp, const float *xc, float *pl) {
    const q8_conv_geom *G = &p->geo;
    const bool zeroed = zero_whole(cp);
    for (int64_t fd = 0; fd < G->s[0]; fd++)
        for (int64_t fh = 0; fh < G->s[1]; fh++)
            for (int64_t fw = 0; fw < G->s[2]; fw++, pl += cp->plane) {
                if (!phase_used(G, fd, fh, fw)) continue;
                if (zeroed) memset(pl, 0, sizeof(float) * (size_t)cp->plane);
                phase_rows(p, cp, xc, fd, fh, fw, 0, cp->ph[1], zeroed, pl);
            }
}

Q8_CLONES void q8_conv_band_planes(const q8_conv_params *p, const conv_prep *cp, const float *x,
                                   int64_t b0, int64_t b1, int64_t band_plane, float *dst) {
    const q8_conv_geom *G = &p->geo;
    const bool zeroed = zero_whole(cp);
    size_t used = sizeof(float) * (size_t)((b1 - b0) * cp->ph[2]);
    for (int64_t c = 0; c < p->cg; c++) {
        const float *xc = x + c * p->in_sp;
        for (int64_t fh = 0; fh < G->s[1]; fh++)
            for (int64_t fw = 0; fw < G->s[2]; fw++, dst += band_plane) {
                if (!phase_used(G, 0, fh, fw)) continue;
                if (zeroed) memset(dst, 0, used);
                phase_rows(p, cp, xc, 0, fh, fw, b0, b1, zeroed, dst);
            }
    }
}

Q8_CLONES void q8_conv_planes_range(void *arg, int64_t begin, int64_t end, int thread) {
    const conv_planes_args *a = arg;
    const q8_conv_params *p = a->p;
    const conv_prep *cp = a->cp;
    for (int64_t c = begin; c < end; c++)
        build_planes(p, cp, a->x + c * p->in_sp, a->planes + c * cp->nph * cp->plane);
}

Q8_CLONES void q8_conv_shift_pack(const void *vctx, int64_t batch, int64_t k0, int64_t kc,
                                  int64_t n0, int64_t nc, int nr, float *dst) {
    const conv_pack_ctx *cx = vctx;
    const conv_prep *cp = cx->cp;
    const float *base = cx->src + batch * cx->p->cg * cp->nph * cp->plane + n0;
    const int64_t *offk = (cx->offk ? cx->offk : conv_offk(cp)) + k0;
    int64_t full = nc / nr * nr, tail = nc - full;
    for (int64_t kk = 0; kk < kc; kk++) {
        const float *src = base + offk[kk];
        float *d = dst + kk * nr;
        int64_t j = 0;
        /* Constant-size copies so they compile to plain vector moves. */
        if (nr == 32)
            for (; j < full; j += 32, d += kc * 32) memcpy(d, src + j, 32 * sizeof(float));
        else if (nr == 16)
            for (; j < full; j += 16, d += kc * 16) memcpy(d, src + j, 16 * sizeof(float));
        else
            for (; j < full; j += nr, d += kc * nr) memcpy(d, src + j, sizeof(float) * (size_t)nr);
        if (tail) {
            memcpy(d, src + j, sizeof(float) * (size_t)tail);
            memset(d + tail, 0, sizeof(float) * (size_t)(nr - tail));
        }
    }
}

Q8_CLONES void q8_conv_compact_block(const void *ctx, int64_t grp, int64_t m0, int64_t m1,
                                     int64_t n0, int64_t n1) {
    const conv_compact_args *a = ctx;
    const q8_conv_params *p = a->p;
    const conv_prep *cp = a->cp;
    const q8_conv_geom *G = &p->geo;
    int64_t OH = G->out[1], OW = G->out[2], P1 = cp->ph[1], P2 = cp->ph[2];
    for (int64_t mi = m0; mi < m1; mi++) {
        int64_t m = grp * p->mg + mi;
        const float *src = a->cbuf + m * cp->nprime;
        float *y = a->y + m * p->out_sp;
        /* Grid rows r = od*P1 + oh overlapping [n0, n1); columns ow < OW. */
        for (int64_t r = n0 / P2; r * P2 < n1; r++) {
            int64_t od = r / P1, oh = r % P1;
            if (oh >= OH) continue;
            int64_t lo = n0 - r * P2, hi = n1 - r * P2;
            if (lo < 0) lo = 0;
            if (hi > OW) hi = OW;
            if (lo >= hi) continue;
            float *yr = y + (od * OH + oh) * OW;
            const float *sr = src + r * P2;
            copy_floats(yr + lo, sr + lo, hi - lo);
        }
    }
}

/* ---- depthwise: per channel, the planes of the shift mode and a direct
 * multiply-add over the plane grid, all taps accumulated in registers ---- */

/* Always inlined into each instance of the range function: GCC kept the
 * block function out of line, compiled for baseline x86-64, where a
 * 16-float vector is four SSE registers spilled to the stack (half of
 * MobileNetV3's FP32 time). */
#define DW_INLINE static inline __attribute__((always_inline))

/* Four units of 16 outputs per step: independent add chains hide the FP
 * latency. */
#define DW_BLOCK 64
/* With AVX-512's 32 registers, eight: a 4-cycle FMA on two pipes needs 8
 * chains in flight, and four left MobileNetV3's 14x14 and 7x7 depthwise
 * layers latency-bound (AVX2 and NEON would spill 8 units). */
#define DW_BLOCK_WIDE 128
/* Rows at least this wide are computed row by row (they have a long
 * block); narrower ones as one grid, garbage columns included: in long
 * blocks rather than a row's 1 to 3 vectors (a 28-wide row took two
 * single-vector chains). */
#define DW_ROWS_MIN 64
/* A narrow grid's last outputs, computed as one block of up to 5 units:
 * 5 chains fill the AVX-512 FMA pipes; more would spill on AVX2 / NEON
 * (5 units are 10 ymm or 20 q registers). */
#define DW_TAIL_MAX 80

/* 16-float vectors: AVX-512, NEON (4 q registers each) and baseline x86 */
#define DW_VL 16
#define DW_SFX(n) n##_v16
#define DW_RANGE conv_dw_range_v16
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
/* (Q8_CLONES less its AVX2 clone, which the 8-float instance replaces) */
#define DW_RANGE_ATTR static __attribute__((target_clones("avx512f", "default")))
#else
#define DW_RANGE_ATTR static Q8_CLONES
#endif
#define DW_WIDE q8_cpu()->avx512f
#include "conv_dw_loops.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* 8-float vectors for AVX2, without FMA: the bits of the AVX2 clone it
 * replaces (with FMA, 4 units of chains ran 20% slower on Zen 3: latency) */
#define Q8_DW_AVX2 1
#define DW_VL 8
#define DW_SFX(n) n##_v8
#define DW_RANGE conv_dw_range_v8
#define DW_RANGE_ATTR static __attribute__((target("avx2")))
#define DW_WIDE false
#include "conv_dw_loops.h"
#endif

int q8_conv_dw_lanes = 0;

void q8_conv_dw_range(void *arg, int64_t begin, int64_t end, int thread) {
#ifdef Q8_DW_AVX2
    int lanes = q8_conv_dw_lanes ? q8_conv_dw_lanes : q8_cpu()->avx512f ? 16 : 8;
    if (lanes == 8 && q8_cpu()->avx2) {
        conv_dw_range_v8(arg, begin, end, thread);
        return;
    }
#endif
    conv_dw_range_v16(arg, begin, end, thread);
}
