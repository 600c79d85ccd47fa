/* MaxPool and AveragePool on the CPU (params: src/core/ops/pool.h), one
 * output row along W per work item. */
#include <string.h>

#include "clones.h"
#include "cpu_op.h"
#include "maxpool_x86.h"
#include "ops/pool.h"
#include "pool_taps.h"

/* A small 2-D plane pooled whole (maxplane_*): its rows padded to wp
 * columns (owr outputs of stride s each: the taps of all rows then form one
 * strided run), the horizontal maxima (owr per row), then the vertical. */
typedef struct q8_plane_geom {
    int64_t owr, wp; /* outputs per padded row (ow and garbage), its width */
    int64_t vw;      /* outputs a row's vertical pass computes: ow, or owr if narrow */
    size_t bytes;    /* per thread: the padded plane, its slack, the maxima */
} q8_plane_geom;

typedef struct pool_args {
    const q8_pool_params *p;
    const void *x;
    void *y;
    int64_t *idx;         /* Indices output or NULL */
    bool rows;            /* no dilation nor Indices: the maxrow_* loops */
    const q8_plane_geom *pg; /* small 2-D planes: the maxplane_* loops, else NULL */
    char *scratch;           /* pg's buffers, pg->bytes per thread */
} pool_args;

/* One work item: one output row (plane nc, od, oh) along W. */
#define POOL_ROW_PREAMBLE                                               \
    const q8_pool_params *p = a->p;                                     \
    int64_t oh = r % p->out[1], od = (r / p->out[1]) % p->out[0];       \
    int64_t nc = r / (p->out[1] * p->out[0]);                           \
    int64_t dlo, dhi, dcnt, hlo, hhi, hcnt;                             \
    q8_pool_taps(p, 0, od, &dlo, &dhi, &dcnt);                          \
    q8_pool_taps(p, 1, oh, &hlo, &hhi, &hcnt);                          \
    int64_t H = p->in[1], W = p->in[2], D = p->in[0];                   \
    int64_t plane = nc * D * H * W;                                     \
    int64_t d0 = od * p->s[0] - p->pb[0], h0 = oh * p->s[1] - p->pb[1]; \
    int64_t yo = r * p->out[2];

#if defined(__GNUC__) && !defined(__clang__)
#define NO_TRAPS __attribute__((optimize("no-trapping-math")))
#else
#define NO_TRAPS
#endif

/* MaxPool without Indices or dilation, one output row per call, up to
 * POOL_CH outputs at a time. The running max of each output (acc) takes the
 * window's input rows in (d, h) order and in each the taps in w order:
 * raster order, the first of equal values staying (strict '>'), so the bits
 * are those of the scalar loop, +0 / -0 ties included. A chunk reads each
 * input row in place where its taps lie inside the row, else a copy padded
 * with the lowest value (which never wins over a tap, and is what a window of
 * only padding gives). Float: a NaN tap sticks; it is written as the
 * canonical NaN. The loops over outputs run to a whole number of 64-byte
 * vectors (lanes past the row are computed and dropped) with a run-time
 * bound, so that GCC vectorizes them in each clone (constant short bounds
 * were unrolled into scalar code first). The per-output loops this replaced
 * ran 3-6x slower than ONNX Runtime (a scalar tail per tap on a
 * mini-Xception's 15-wide rows, a memory round trip per tap on wide ones). */
enum { POOL_CH = 64, POOL_SEG = 4096 };

/* The running max's step, the same in every loop here: v replaces m if
 * greater (the first of equal values stays) or, for float, if NaN (it
 * sticks: nothing is greater than it). Bitwise '|': no branch. */
#define POOL_MAX(IS_F, M, V) ((((V) > (M)) | ((IS_F) ? (V) != (V) : 0)) ? (V) : (M))

#define POOL_TAPS(T, IS_F, ACC, B, NR, S, K)                                                  \
    for (int64_t t_ = 0; t_ < (K); t_++)                                                      \
        for (int64_t o_ = 0; o_ < (NR); o_++) {                                               \
            T v_ = (B)[o_ * (S) + t_], m_ = (ACC)[o_];                                        \
            (ACC)[o_] = POOL_MAX(IS_F, m_, v_);                                               \
        }

/* POOL_TAPS with strides 1 and 2 as constants: contiguous and even/odd loads */
#define POOL_TAPS_BY_STRIDE(T, IS_F, ACC, B, NR, S, K)                                        \
    do {                                                                                      \
        if ((S) == 1) {                                                                       \
            POOL_TAPS(T, IS_F, ACC, B, NR, 1, K)                                              \
        } else if ((S) == 2) {                                                                \
            POOL_TAPS(T, IS_F, ACC, B, NR, 2, K)                                              \
        } else {                                                                              \
            POOL_TAPS(T, IS_F, ACC, B, NR, S, K)                                              \
        }                                                                                     \
    } while (0)

#define DEFINE_MAXROW(NAME, T, LOWEST, NANV, IS_F)                                              \
    NO_TRAPS Q8_CLONES static void NAME(const pool_args *a, int64_t r, const T *x, T *y) {      \
        enum { L = 64 / sizeof(T) }; /* lanes of a 64-byte vector */                            \
        POOL_ROW_PREAMBLE                                                                       \
        const int64_t sw = p->s[2], kw = p->k[2], pw = p->pb[2], OW = p->out[2];                \
        T acc[POOL_CH], seg[POOL_SEG];                                                          \
        for (int64_t c0 = 0; c0 < OW; c0 += POOL_CH) {                                          \
            int64_t n = OW - c0 < POOL_CH ? OW - c0 : POOL_CH, w0 = c0 * sw - pw;               \
            int64_t nr = (n + L - 1) / L * L, need = (nr - 1) * sw + kw;                        \
            for (int64_t o = 0; o < nr; o++) acc[o] = LOWEST;                                   \
            for (int64_t kd = dlo; kd < dhi; kd++)                                              \
                for (int64_t kh = hlo; kh < hhi; kh++) {                                        \
                    const T *row = x + plane + ((d0 + kd) * H + h0 + kh) * W;                   \
                    const T *b = row + w0;                                                      \
                    if (w0 < 0 || w0 + need > W) { /* padded copy */                            \
                        int64_t lo = w0 < 0 ? -w0 : 0, hi = W - w0 < need ? W - w0 : need;      \
                        if (hi < lo) hi = lo;                                                   \
                        for (int64_t i = 0; i < lo; i++) seg[i] = LOWEST;                       \
                        memcpy(seg + lo, row + w0 + lo, (size_t)(hi - lo) * sizeof(T));         \
                        for (int64_t i = hi; i < need; i++) seg[i] = LOWEST;                    \
                        b = seg;                                                                \
                    }                                                                           \
                    POOL_TAPS_BY_STRIDE(T, IS_F, acc, b, nr, sw, kw);                           \
                }                                                                               \
            T *yr = y + yo + c0;                                                                \
            for (int64_t o = 0; o < n; o++)                                                     \
                yr[o] = IS_F && acc[o] != acc[o] ? (T)(NANV) : acc[o];                          \
        }                                                                                       \
    }

DEFINE_MAXROW(maxrow_f32, float, -__builtin_inff(), __builtin_nanf(""), 1)
DEFINE_MAXROW(maxrow_i8, int8_t, INT8_MIN, 0, 0)
DEFINE_MAXROW(maxrow_u8, uint8_t, 0, 0, 0)

/* Small 2-D planes (the window rows of one output row can be few and short:
 * a speech embedding's 8-, 4- and 2-wide rows), one plane per call: the row
 * loops' fixed costs per output row were most of their time there. The
 * plane is copied once with the lowest value around each row (wp columns),
 * the maxima along w taken in one strided run over all rows (garbage outputs
 * included), then those down h per output row (a narrow row's in whole
 * vectors, OW of them kept). Along w first, then down h,
 * each output meets its taps in raster order as far as the first of equal
 * values goes: the first row holding the window's max wins, and in it the
 * first tap: the bits of the scalar loop. */
#define DEFINE_MAXPLANE(NAME, T, LOWEST, NANV, IS_F)                                            \
    NO_TRAPS Q8_CLONES static void NAME(void *arg, int64_t b, int64_t e, int t) {               \
        const pool_args *a = arg;                                                               \
        const q8_pool_params *p = a->p;                                                         \
        const T *x = a->x;                                                                      \
        T *y = a->y;                                                                            \
        const int64_t H = p->in[1], W = p->in[2], OH = p->out[1], OW = p->out[2];               \
        const int64_t sw = p->s[2], kw = p->k[2], pw = p->pb[2], owr = a->pg->owr;              \
        const int64_t wp = a->pg->wp, n = H * owr, vw = a->pg->vw;                              \
        T *pp = (T *)(a->scratch + (size_t)t * a->pg->bytes), *hm = pp + H * wp + kw;           \
        for (int64_t pl = b; pl < e; pl++) {                                                    \
            const T *xp = x + pl * H * W;                                                       \
            for (int64_t h = 0; h < H; h++) {                                                   \
                T *d = pp + h * wp;                                                             \
                for (int64_t j = 0; j < pw; j++) d[j] = LOWEST;                                 \
                for (int64_t j = 0; j < W; j++) d[pw + j] = xp[h * W + j];                      \
                for (int64_t j = pw + W; j < wp; j++) d[j] = LOWEST;                            \
            }                                                                                   \
            for (int64_t j = 0; j < kw; j++) pp[H * wp + j] = LOWEST;                           \
            for (int64_t g = 0; g < n; g++) hm[g] = LOWEST;                                     \
            POOL_TAPS_BY_STRIDE(T, IS_F, hm, pp, n, sw, kw);                                    \
            T *yp = y + pl * OH * OW, *rb = hm + n;                                             \
            for (int64_t oh = 0; oh < OH; oh++) {                                               \
                int64_t hlo, hhi, hcnt, h0 = oh * p->s[1] - p->pb[1];                           \
                q8_pool_taps(p, 1, oh, &hlo, &hhi, &hcnt);                                      \
                /* narrow rows: all owr lanes (whole vectors), then OW of them */               \
                T *yr = yp + oh * OW, *acc = vw == OW ? yr : rb;                                \
                for (int64_t o = 0; o < vw; o++) acc[o] = LOWEST;                               \
                for (int64_t kh = hlo; kh < hhi; kh++) {                                        \
                    const T *hr = hm + (h0 + kh) * owr;                                         \
                    for (int64_t o = 0; o < vw; o++) {                                          \
                        T v = hr[o], m = acc[o];                                                \
                        acc[o] = POOL_MAX(IS_F, m, v);                                          \
                    }                                                                           \
                }                                                                               \
                if (!IS_F && acc != yr) memcpy(yr, rb, (size_t)OW * sizeof(T));                 \
                else if (IS_F)                                                                  \
                    for (int64_t o = 0; o < OW; o++)                                            \
                        yr[o] = acc[o] != acc[o] ? (T)(NANV) : acc[o];                          \
            }                                                                                   \
        }                                                                                       \
    }

DEFINE_MAXPLANE(maxplane_f32, float, -__builtin_inff(), __builtin_nanf(""), 1)
DEFINE_MAXPLANE(maxplane_i8, int8_t, INT8_MIN, 0, 0)
DEFINE_MAXPLANE(maxplane_u8, uint8_t, 0, 0, 0)

/* Without Indices: a branch-free running max (maxss for float); a NaN in
 * the window makes the result NaN (as in numpy and PyTorch). With Indices:
 * the first maximum wins (strict '>'), a NaN wins and stays. */
#define DEFINE_MAXPOOL(NAME, T, LOWEST, NANV, ROW)                                                 \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                                     \
        const pool_args *a = arg;                                                                  \
        const T *x = a->x;                                                                         \
        T *y = a->y;                                                                               \
        for (int64_t r = b; r < e; r++) {                                                          \
            if (a->rows) {                                                                         \
                ROW(a, r, x, y);                                                                   \
                continue;                                                                          \
            }                                                                                      \
            POOL_ROW_PREAMBLE                                                                      \
            int64_t dw = p->d[2];                                                                  \
            for (int64_t ow = 0; ow < p->out[2]; ow++) {                                           \
                int64_t wlo, whi, wcnt;                                                            \
                q8_pool_taps(p, 2, ow, &wlo, &whi, &wcnt);                                         \
                int64_t w0 = ow * p->s[2] - p->pb[2];                                              \
                T best = LOWEST;                                                                   \
                if (!a->idx) {                                                                     \
                    bool nan = false;                                                              \
                    for (int64_t kd = dlo; kd < dhi; kd++)                                         \
                        for (int64_t kh = hlo; kh < hhi; kh++) {                                   \
                            const T *row = x + plane +                                             \
                                           ((d0 + kd * p->d[0]) * H + h0 + kh * p->d[1]) * W + w0; \
                            for (int64_t kw = wlo; kw < whi; kw++) {                               \
                                T v = row[kw * dw];                                                \
                                best = v > best ? v : best;                                        \
                                nan |= v != v;                                                     \
                            }                                                                      \
                        }                                                                          \
                    y[yo + ow] = nan ? (T)(NANV) : best;                                           \
                    continue;                                                                      \
                }                                                                                  \
                int64_t bi = -1;                                                                   \
                for (int64_t kd = dlo; kd < dhi; kd++) {                                           \
                    int64_t id = d0 + kd * p->d[0];                                                \
                    for (int64_t kh = hlo; kh < hhi; kh++) {                                       \
                        int64_t ih = h0 + kh * p->d[1];                                            \
                        const T *row = x + plane + (id * H + ih) * W;                              \
                        for (int64_t kw = wlo; kw < whi; kw++) {                                   \
                            int64_t iw = w0 + kw * dw;                                             \
                            T v = row[iw];                                                         \
                            if (bi < 0 || v > best || (v != v && best == best)) {                  \
                                best = v;                                                          \
                                bi = (id * H + ih) * W + iw;                                       \
                            }                                                                      \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
                y[yo + ow] = best;                                                                 \
                int64_t v = -1;                                                                    \
                if (bi >= 0) {                                                                     \
                    int64_t iw = bi % W, ih = (bi / W) % H, id = bi / (W * H);                     \
                    v = plane + (p->col_major ? id + D * (ih + H * iw) : bi);                      \
                }                                                                                  \
                a->idx[yo + ow] = v;                                                               \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_MAXPOOL(maxpool_f32, float, -__builtin_inff(), __builtin_nanf(""), maxrow_f32)
DEFINE_MAXPOOL(maxpool_i8, int8_t, INT8_MIN, 0, maxrow_i8)
DEFINE_MAXPOOL(maxpool_u8, uint8_t, 0, 0, maxrow_u8)

static void avgpool_f32(void *arg, int64_t b, int64_t e, int t) {
    const pool_args *a = arg;
    const float *x = a->x;
    float *y = a->y;
    for (int64_t r = b; r < e; r++) {
        POOL_ROW_PREAMBLE
        for (int64_t ow = 0; ow < p->out[2]; ow++) {
            int64_t wlo, whi, wcnt;
            q8_pool_taps(p, 2, ow, &wlo, &whi, &wcnt);
            int64_t w0 = ow * p->s[2] - p->pb[2];
            float sum = 0.0f;
            for (int64_t kd = dlo; kd < dhi; kd++) {
                int64_t id = d0 + kd * p->d[0];
                for (int64_t kh = hlo; kh < hhi; kh++) {
                    int64_t ih = h0 + kh * p->d[1];
                    const float *row = x + plane + (id * H + ih) * W;
                    for (int64_t kw = wlo; kw < whi; kw++) sum += row[w0 + kw * p->d[2]];
                }
            }
            int64_t cnt =
                p->include_pad ? dcnt * hcnt * wcnt : (dhi - dlo) * (hhi - hlo) * (whi - wlo);
            y[yo + ow] = cnt > 0 ? sum / (float)cnt : 0.0f;
        }
    }
}

/* Planes pooled whole (maxplane_*) when their buffers stay within this:
 * L1/L2-sized, and the per-thread scratch small. */
enum { POOL_PLANE_BYTES = 48 * 1024 };

/* The whole-plane geometry of a MaxPool without Indices or dilation on a
 * 2-D (or 1-D) input; false if its planes are too large for it. */
static bool plane_geom_of(const q8_pool_params *p, q8_plane_geom *g) {
    if (p->avg || p->in[0] != 1 || p->k[0] != 1 || p->s[0] != 1 || p->d[0] != 1 ||
        p->d[1] != 1 || p->d[2] != 1)
        return false;
    int64_t sw = p->s[2], kw = p->k[2], ow = p->out[2];
    /* owr outputs a padded row, stride sw: their taps end within wp = owr sw;
     * under 32, a multiple of 16: the loops over a narrow row then run in
     * whole vectors, not in a scalar tail (wider, the extra lanes cost more) */
    g->owr = ow + (kw > sw ? (kw - sw + sw - 1) / sw : 0);
    g->vw = ow;
    if (g->owr < 32) g->vw = g->owr = (g->owr + 15) / 16 * 16;
    g->wp = g->owr * sw;
    if (g->wp < p->pb[2] + p->in[2]) return false; /* ceil_mode past the row: rows */
    size_t elem = p->dtype == Q8_F32 ? 4 : 1;
    size_t n = (size_t)(p->in[1] * g->wp + kw + (p->in[1] + 1) * g->owr); /* + a row's max */
    g->bytes = (n * elem + 63) / 64 * 64;
    return g->bytes <= POOL_PLANE_BYTES;
}

/* The internal attribute _pool_impl, for tests: "portable" keeps the loops
 * here where the AVX-512 ones would run (maxpool_x86.h). */
static bool portable_only(const q8_node *n) {
    return strcmp(q8_attr_str(n, "_pool_impl", "auto"), "portable") == 0;
}

static size_t pool_scratch(const q8_graph *gr, const q8_node *n, const void *prep,
                           int n_threads) {
    const q8_pool_params *p = n->params;
    q8_plane_geom g;
    bool idx = n->n_outputs > 1 && n->outputs[1] >= 0;
    if (idx || (q8_maxpool_x86_fits(p) && !portable_only(n))) return 0;
    return plane_geom_of(p, &g) ? g.bytes * (size_t)n_threads : 0;
}

static q8_status pool_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                              void **prep, size_t *bytes, q8_error *err) {
    (void)g;
    *prep = NULL;
    *bytes = 0;
    const char *impl = q8_attr_str(n, "_pool_impl", "auto");
    if (strcmp(impl, "auto") != 0 && strcmp(impl, "portable") != 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "_pool_impl '%s' is not auto or portable",
                            impl);
    return Q8_OK;
}

static void pool_run(const q8_exec *x, const q8_node *n) {
    const q8_pool_params *p = n->params;
    pool_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), NULL, false, NULL, x->scratch};
    if (n->n_outputs > 1 && n->outputs[1] >= 0) a.idx = Q8_OUT_PTR(x, n, 1);
    int64_t win = p->out[2] * p->k[0] * p->k[1] * p->k[2]; /* a row's taps */
    if (!a.idx && q8_maxpool_x86_fits(p) && !portable_only(n)) {
        q8_maxpool_x86_args xa = {p, a.x, a.y};
        q8_parallel_for(x->pool, p->nc * p->out[1], win >= 8192 ? 1 : 8192 / (win ? win : 1),
                        q8_maxpool_x86_range, &xa);
        return;
    }
    q8_plane_geom pg;
    if (!a.idx && plane_geom_of(p, &pg)) {
        a.pg = &pg;
        q8_range_fn fn = p->dtype == Q8_I8 ? maxplane_i8 : p->dtype == Q8_U8 ? maxplane_u8
                                                                             : maxplane_f32;
        int64_t work = p->out[1] * p->out[2] * p->k[1] * p->k[2] + p->in[1] * pg.wp;
        q8_parallel_for(x->pool, p->nc, work >= 8192 ? 1 : 8192 / (work ? work : 1), fn, &a);
        return;
    }
    /* the maxrow_* loops: a chunk's columns fit their copy */
    a.rows = !a.idx && p->d[0] == 1 && p->d[1] == 1 && p->d[2] == 1 &&
             (POOL_CH - 1) * p->s[2] + p->k[2] <= POOL_SEG;
    q8_range_fn fn = p->avg              ? avgpool_f32
                     : p->dtype == Q8_I8 ? maxpool_i8
                     : p->dtype == Q8_U8 ? maxpool_u8
                                         : maxpool_f32;
    int64_t rows = p->nc * p->out[0] * p->out[1];
    q8_parallel_for(x->pool, rows, win >= 8192 ? 1 : 8192 / (win ? win : 1), fn, &a);
}

const q8_cpu_op q8_cpu_max_pool = {
    .prepare = pool_prepare, .run = pool_run, .scratch = pool_scratch};
const q8_cpu_op q8_cpu_average_pool = {.prepare = pool_prepare, .run = pool_run};
