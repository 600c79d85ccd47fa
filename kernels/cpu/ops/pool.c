/* MaxPool and AveragePool on the CPU (params: src/core/ops/pool.h), one
 * output row along W per work item. */
#include "clones.h"
#include "cpu_op.h"
#include "ops/pool.h"

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* The taps of output position o along one dim that fall inside the input:
 * kk in [*lo, *hi); *cnt_pad counts the taps inside the padded extent. */
static inline void taps(const q8_pool_params *p, int j, int64_t o, int64_t *lo, int64_t *hi,
                        int64_t *cnt_pad) {
    int64_t start = o * p->s[j] - p->pb[j], d = p->d[j], k = p->k[j], l, h, c;
    if (d == 1) { /* the common case, without divisions */
        l = start >= 0 ? 0 : -start;
        h = p->in[j] - start;
        c = p->in[j] + p->pe[j] - start;
    } else {
        l = start >= 0 ? 0 : ceil_div(-start, d);
        h = ceil_div(p->in[j] - start, d);
        c = ceil_div(p->in[j] + p->pe[j] - start, d);
    }
    if (h > k) h = k;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
    *cnt_pad = c > k ? k : c;
}

typedef struct pool_args {
    const q8_pool_params *p;
    const void *x;
    void *y;
    int64_t *idx;         /* Indices output or NULL */
    bool dil1;            /* no dilation */
    int64_t ow_lo, ow_hi; /* output columns whose window lies inside the input */
} pool_args;

/* One work item: one output row (plane nc, od, oh) along W. */
#define POOL_ROW_PREAMBLE                                               \
    const q8_pool_params *p = a->p;                                        \
    int64_t oh = r % p->out[1], od = (r / p->out[1]) % p->out[0];       \
    int64_t nc = r / (p->out[1] * p->out[0]);                           \
    int64_t dlo, dhi, dcnt, hlo, hhi, hcnt;                             \
    taps(p, 0, od, &dlo, &dhi, &dcnt);                                  \
    taps(p, 1, oh, &hlo, &hhi, &hcnt);                                  \
    int64_t H = p->in[1], W = p->in[2], D = p->in[0];                   \
    int64_t plane = nc * D * H * W;                                     \
    int64_t d0 = od * p->s[0] - p->pb[0], h0 = oh * p->s[1] - p->pb[1]; \
    int64_t yo = r * p->out[2];

#if defined(__GNUC__) && !defined(__clang__)
#define NO_TRAPS __attribute__((optimize("no-trapping-math")))
#else
#define NO_TRAPS
#endif

/* FP32 MaxPool, windows wholly inside the input (no dilation, no Indices):
 * outputs in vector lanes, taps in the outer loop, in the same order as the
 * scalar loop (so each output sees the same comparisons: same result, the
 * sign of a zero included); the scalar form was 5% of ResNet-18's FP32 time. */
NO_TRAPS Q8_CLONES static void maxpool_full_f32(const float *w0p, int64_t ow0, int64_t n,
                                                int64_t sw, const int64_t *k, int64_t H,
                                                int64_t W, float *yr) {
    enum { CH = 64 };
    for (int64_t c0 = 0; c0 < n; c0 += CH) {
        int64_t m = n - c0 < CH ? n - c0 : CH;
        float best[CH];
        int32_t nan[CH];
        const float *q0 = w0p + (ow0 + c0) * sw;
        for (int64_t o = 0; o < m; o++) {
            best[o] = q0[o * sw];
            nan[o] = 0;
        }
        for (int64_t kd = 0; kd < k[0]; kd++)
            for (int64_t kh = 0; kh < k[1]; kh++)
                for (int64_t kw = 0; kw < k[2]; kw++) {
                    const float *b = q0 + (kd * H + kh) * W + kw;
                    if (sw == 1) {
                        for (int64_t o = 0; o < m; o++) {
                            float v = b[o];
                            best[o] = v > best[o] ? v : best[o];
                            nan[o] |= v != v;
                        }
                    } else if (sw == 2) {
                        for (int64_t o = 0; o < m; o++) {
                            float v = b[2 * o];
                            best[o] = v > best[o] ? v : best[o];
                            nan[o] |= v != v;
                        }
                    } else {
                        for (int64_t o = 0; o < m; o++) {
                            float v = b[o * sw];
                            best[o] = v > best[o] ? v : best[o];
                            nan[o] |= v != v;
                        }
                    }
                }
        for (int64_t o = 0; o < m; o++) yr[ow0 + c0 + o] = nan[o] ? __builtin_nanf("") : best[o];
    }
}

/* The same for int8 (no NaN): the INT8 shortcut pools of BlazeFace-style
 * blocks; the per-output scalar loop below ran at a few ns per output. */
Q8_CLONES static void maxpool_full_i8(const int8_t *w0p, int64_t ow0, int64_t n, int64_t sw,
                                      const int64_t *k, int64_t H, int64_t W, int8_t *yr) {
    enum { CH = 128 };
    for (int64_t c0 = 0; c0 < n; c0 += CH) {
        int64_t m = n - c0 < CH ? n - c0 : CH;
        int8_t best[CH];
        const int8_t *q0 = w0p + (ow0 + c0) * sw;
        for (int64_t o = 0; o < m; o++) best[o] = INT8_MIN;
        for (int64_t kd = 0; kd < k[0]; kd++)
            for (int64_t kh = 0; kh < k[1]; kh++) {
                const int8_t *b = q0 + (kd * H + kh) * W;
                if (sw == 2 && k[2] == 2) {
                    for (int64_t o = 0; o < m; o++) {
                        int8_t v = b[2 * o] > b[2 * o + 1] ? b[2 * o] : b[2 * o + 1];
                        best[o] = v > best[o] ? v : best[o];
                    }
                    continue;
                }
                for (int64_t kw = 0; kw < k[2]; kw++) {
                    const int8_t *bk = b + kw;
                    if (sw == 1) {
                        for (int64_t o = 0; o < m; o++) best[o] = bk[o] > best[o] ? bk[o] : best[o];
                    } else if (sw == 2) {
                        for (int64_t o = 0; o < m; o++)
                            best[o] = bk[2 * o] > best[o] ? bk[2 * o] : best[o];
                    } else {
                        for (int64_t o = 0; o < m; o++)
                            best[o] = bk[o * sw] > best[o] ? bk[o * sw] : best[o];
                    }
                }
            }
        for (int64_t o = 0; o < m; o++) yr[ow0 + c0 + o] = best[o];
    }
}

/* Without Indices: a branch-free running max (maxss for float); a NaN in
 * the window makes the result NaN (as in numpy and PyTorch). With Indices:
 * the first maximum wins (strict '>'), a NaN wins and stays. */
#define DEFINE_MAXPOOL(NAME, T, LOWEST, NANV, IS_I8)                                               \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                                     \
        const pool_args *a = arg;                                                                  \
        const T *x = a->x;                                                                         \
        T *y = a->y;                                                                               \
        for (int64_t r = b; r < e; r++) {                                                          \
            POOL_ROW_PREAMBLE                                                                      \
            int64_t dw = p->d[2];                                                                  \
            /* Windows wholly inside the input, without dilation or Indices: \
             * a tight loop (the usual 2x2 / 3x3 pooling spends its time here) */                  \
            bool full = !a->idx && a->dil1 && dlo == 0 && dhi == p->k[0] && hlo == 0 &&            \
                        hhi == p->k[1];                                                            \
            if (full) {                                                                            \
                const T *w0p = x + plane + (d0 * H + h0) * W - p->pb[2];                           \
                T *yr = y + yo;                                                                    \
                int64_t sw = p->s[2];                                                              \
                if (IS_I8) {                                                                       \
                    maxpool_full_i8((const int8_t *)w0p, a->ow_lo, a->ow_hi - a->ow_lo, sw, p->k,  \
                                    H, W, (int8_t *)yr);                                           \
                } else if (p->k[0] == 1 && p->k[1] == 2 && p->k[2] == 2) { /* 2x2: unrolled */     \
                    for (int64_t ow = a->ow_lo; ow < a->ow_hi; ow++) {                             \
                        const T *q = w0p + ow * sw;                                                \
                        T m0 = q[0] > q[1] ? q[0] : q[1], m1 = q[W] > q[W + 1] ? q[W] : q[W + 1];  \
                        T m = m0 > m1 ? m0 : m1;                                                   \
                        bool nan = q[0] != q[0] || q[1] != q[1] || q[W] != q[W] ||                 \
                                   q[W + 1] != q[W + 1];                                           \
                        yr[ow] = nan ? (T)(NANV) : m;                                              \
                    }                                                                              \
                } else if (sizeof(T) == 4 && (T)0.5 != 0) { /* float */                            \
                    maxpool_full_f32((const float *)w0p, a->ow_lo, a->ow_hi - a->ow_lo, sw,        \
                                     p->k, H, W, (float *)yr);                                     \
                } else {                                                                           \
                    for (int64_t ow = a->ow_lo; ow < a->ow_hi; ow++) {                             \
                        const T *q = w0p + ow * sw;                                                \
                        T best = q[0];                                                             \
                        bool nan = false;                                                          \
                        for (int64_t kd = 0; kd < p->k[0]; kd++)                                   \
                            for (int64_t kh = 0; kh < p->k[1]; kh++) {                             \
                                const T *row = q + (kd * H + kh) * W;                              \
                                for (int64_t kw = 0; kw < p->k[2]; kw++) {                         \
                                    T v = row[kw];                                                 \
                                    best = v > best ? v : best;                                    \
                                    nan |= v != v;                                                 \
                                }                                                                  \
                            }                                                                      \
                        yr[ow] = nan ? (T)(NANV) : best;                                           \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            for (int64_t ow = 0; ow < p->out[2]; ow++) {                                           \
                if (full && ow == a->ow_lo) ow = a->ow_hi; /* done above */                        \
                if (ow >= p->out[2]) break;                                                        \
                int64_t wlo, whi, wcnt;                                                            \
                taps(p, 2, ow, &wlo, &whi, &wcnt);                                                 \
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

DEFINE_MAXPOOL(maxpool_f32, float, -__builtin_inff(), __builtin_nanf(""), 0)
DEFINE_MAXPOOL(maxpool_i8, int8_t, INT8_MIN, 0, 1)
DEFINE_MAXPOOL(maxpool_u8, uint8_t, 0, 0, 0)

static void avgpool_f32(void *arg, int64_t b, int64_t e, int t) {
    const pool_args *a = arg;
    const float *x = a->x;
    float *y = a->y;
    for (int64_t r = b; r < e; r++) {
        POOL_ROW_PREAMBLE
        for (int64_t ow = 0; ow < p->out[2]; ow++) {
            int64_t wlo, whi, wcnt;
            taps(p, 2, ow, &wlo, &whi, &wcnt);
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

static void pool_run(const q8_exec *x, const q8_node *n) {
    const q8_pool_params *p = n->params;
    pool_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), NULL, false, 0, 0};
    a.dil1 = p->d[0] == 1 && p->d[1] == 1 && p->d[2] == 1;
    /* columns ow with 0 <= ow*s - pb and ow*s - pb + k <= in (no dilation) */
    a.ow_lo = (p->pb[2] + p->s[2] - 1) / p->s[2];
    a.ow_hi = p->in[2] + p->pb[2] >= p->k[2] ? (p->in[2] + p->pb[2] - p->k[2]) / p->s[2] + 1 : 0;
    if (a.ow_hi > p->out[2]) a.ow_hi = p->out[2];
    if (a.ow_lo > a.ow_hi) a.ow_lo = a.ow_hi;
    if (n->n_outputs > 1 && n->outputs[1] >= 0) a.idx = Q8_OUT_PTR(x, n, 1);
    q8_range_fn fn = p->avg              ? avgpool_f32
                     : p->dtype == Q8_I8 ? maxpool_i8
                     : p->dtype == Q8_U8 ? maxpool_u8
                                         : maxpool_f32;
    int64_t rows = p->nc * p->out[0] * p->out[1];
    int64_t work = p->out[2] * p->k[0] * p->k[1] * p->k[2];
    q8_parallel_for(x->pool, rows, work >= 8192 ? 1 : 8192 / (work ? work : 1), fn, &a);
}

const q8_cpu_op q8_cpu_max_pool = {.run = pool_run};
const q8_cpu_op q8_cpu_average_pool = {.run = pool_run};
