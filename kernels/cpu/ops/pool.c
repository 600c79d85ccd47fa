/* MaxPool and AveragePool over 1 to 3 spatial dims (N x C x D1 [x D2 [x D3]]),
 * with strides, pads, dilations, auto_pad and ceil_mode. Internally every
 * input is 3D (leading spatial dims of size 1). MaxPool takes float32, int8
 * and uint8 and can produce Indices (int64, flattened over the whole input,
 * row- or column-major per storage_order). A window that holds no input
 * element (possible with large dilations) gives the lowest value and index -1
 * for MaxPool, 0 for AveragePool. */
#include <string.h>

#include "cpu_op.h"

typedef struct pool_params {
    int64_t nc;            /* N * C */
    int64_t in[3], out[3]; /* spatial dims, D, H, W order */
    int64_t k[3], s[3], d[3], pb[3], pe[3];
    bool avg, include_pad, col_major;
    q8_dtype dtype;
    bool dil1;             /* no dilation */
    int64_t ow_lo, ow_hi;  /* output columns whose window lies inside the input */
} pool_params;

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* Parse a list attribute of nsp (or 2*nsp for pads) values, each in
 * [lo, INT32_MAX] (the cap keeps every size computation far from overflow). */
static q8_status ints_attr(const q8_node *n, const char *name, int want, int64_t lo, int64_t def,
                           int64_t *out, q8_error *err) {
    int cnt;
    const int64_t *v = q8_attr_ints(n, name, &cnt);
    if (!v) {
        for (int i = 0; i < want; i++) out[i] = def;
        return Q8_OK;
    }
    if (cnt != want)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s has %d values, expected %d", name, cnt,
                            want);
    for (int i = 0; i < want; i++) {
        if (v[i] < lo || v[i] > INT32_MAX)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s[%d] is %lld, must be >= %lld%s", name, i,
                                (long long)v[i], (long long)lo,
                                v[i] > INT32_MAX ? " and < 2^31" : "");
        out[i] = v[i];
    }
    return Q8_OK;
}

static q8_status pool_infer(q8_graph *g, q8_node *n, q8_error *err, bool avg) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, avg ? 1 : 2, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && (avg || (x->dtype != Q8_I8 && x->dtype != Q8_U8)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, supported: float32%s",
                            q8_dtype_name(x->dtype), avg ? "" : ", int8, uint8");
    int nsp = x->ndim - 2;
    if (nsp < 1 || nsp > 3)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input has rank %d; pooling needs N x C x 1 to 3 spatial dims",
                            x->ndim);
    int kcnt;
    if (!q8_attr_ints(n, "kernel_shape", &kcnt))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "kernel_shape is required");
    int64_t k[3], s[3], d[3], pads[6];
    Q8_TRY(ints_attr(n, "kernel_shape", nsp, 1, 1, k, err));
    Q8_TRY(ints_attr(n, "strides", nsp, 1, 1, s, err));
    Q8_TRY(ints_attr(n, "dilations", nsp, 1, 1, d, err));
    Q8_TRY(ints_attr(n, "pads", 2 * nsp, 0, 0, pads, err));
    int64_t ceil_mode = q8_attr_int(n, "ceil_mode", 0);
    int64_t order = q8_attr_int(n, "storage_order", 0);
    int64_t cip = q8_attr_int(n, "count_include_pad", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "ceil_mode is %lld, expected 0 or 1",
                            (long long)ceil_mode);
    if (order != 0 && order != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "storage_order is %lld, expected 0 or 1",
                            (long long)order);
    if (cip != 0 && cip != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "count_include_pad is %lld, expected 0 or 1",
                            (long long)cip);
    const char *ap = q8_attr_str(n, "auto_pad", "NOTSET");
    bool same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    bool valid = strcmp(ap, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0 && *ap)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "auto_pad is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                            ap);

    pool_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->avg = avg;
    p->include_pad = cip == 1;
    p->col_major = order == 1;
    p->dtype = x->dtype;
    p->nc = x->dims[0] * x->dims[1];
    int64_t ydims[Q8_MAX_DIMS] = {x->dims[0], x->dims[1]};
    for (int i = 0; i < 3; i++) {
        p->in[i] = p->out[i] = p->k[i] = p->s[i] = p->d[i] = 1;
        p->pb[i] = p->pe[i] = 0;
    }
    for (int i = 0; i < nsp; i++) {
        int j = 3 - nsp + i; /* internal dim */
        int64_t in = x->dims[2 + i], ek = (k[i] - 1) * d[i] + 1, pb = pads[i];
        int64_t pe = pads[nsp + i], out;
        if (same_upper || same_lower) {
            out = ceil_div(in, s[i]);
            int64_t total = (out - 1) * s[i] + ek - in;
            if (total < 0) total = 0;
            pb = same_lower ? (total + 1) / 2 : total / 2;
            pe = total - pb;
        } else {
            if (valid) pb = pe = 0;
            /* (onnxruntime: pads < kernel_shape; with dilations, the extent) */
            if (pb >= ek || pe >= ek)
                return q8_node_fail(
                    err, Q8_ERR_FORMAT, n,
                    "pads for spatial dim %d are %lld and %lld; each must be smaller "
                    "than the kernel extent (%lld)",
                    i, (long long)pb, (long long)pe, (long long)ek);
            int64_t span = in + pb + pe - ek;
            if (span < 0)
                return q8_node_fail(
                    err, Q8_ERR_SHAPE, n,
                    "spatial dim %d: the kernel covers %lld elements but the padded "
                    "input has only %lld",
                    i, (long long)ek, (long long)(in + pb + pe));
            out = (ceil_mode ? ceil_div(span, s[i]) : span / s[i]) + 1;
            /* ceil_mode: the last window must start inside the input or the
             * left padding, not in the right padding only. */
            if (ceil_mode && (out - 1) * s[i] >= in + pb) out--;
        }
        p->in[j] = in;
        p->out[j] = out;
        p->k[j] = k[i];
        p->s[j] = s[i];
        p->d[j] = d[i];
        p->pb[j] = pb;
        p->pe[j] = pe;
        ydims[2 + i] = out;
    }
    p->dil1 = p->d[0] == 1 && p->d[1] == 1 && p->d[2] == 1;
    /* columns ow with 0 <= ow*s - pb and ow*s - pb + k <= in (no dilation) */
    p->ow_lo = (p->pb[2] + p->s[2] - 1) / p->s[2];
    p->ow_hi = p->in[2] + p->pb[2] >= p->k[2] ? (p->in[2] + p->pb[2] - p->k[2]) / p->s[2] + 1 : 0;
    if (p->ow_hi > p->out[2]) p->ow_hi = p->out[2];
    if (p->ow_lo > p->ow_hi) p->ow_lo = p->ow_hi;
    Q8_TRY(q8_set_output(g, n, 0, x->dtype, ydims, x->ndim, err));
    return q8_set_output(g, n, 1, Q8_I64, ydims, x->ndim, err);
}

static q8_status maxpool_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return pool_infer(g, n, err, false);
}
static q8_status avgpool_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return pool_infer(g, n, err, true);
}

/* The taps of output position o along one dim that fall inside the input:
 * kk in [*lo, *hi); *cnt_pad counts the taps inside the padded extent. */
static inline void taps(const pool_params *p, int j, int64_t o, int64_t *lo, int64_t *hi,
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
    const pool_params *p;
    const void *x;
    void *y;
    int64_t *idx; /* Indices output or NULL */
} pool_args;

/* One work item: one output row (plane nc, od, oh) along W. */
#define POOL_ROW_PREAMBLE                                               \
    const pool_params *p = a->p;                                        \
    int64_t oh = r % p->out[1], od = (r / p->out[1]) % p->out[0];       \
    int64_t nc = r / (p->out[1] * p->out[0]);                           \
    int64_t dlo, dhi, dcnt, hlo, hhi, hcnt;                             \
    taps(p, 0, od, &dlo, &dhi, &dcnt);                                  \
    taps(p, 1, oh, &hlo, &hhi, &hcnt);                                  \
    int64_t H = p->in[1], W = p->in[2], D = p->in[0];                   \
    int64_t plane = nc * D * H * W;                                     \
    int64_t d0 = od * p->s[0] - p->pb[0], h0 = oh * p->s[1] - p->pb[1]; \
    int64_t yo = r * p->out[2];

/* Without Indices: a branch-free running max (maxss for float); a NaN in
 * the window makes the result NaN (as in numpy and PyTorch). With Indices:
 * the first maximum wins (strict '>'), a NaN wins and stays. */
#define DEFINE_MAXPOOL(NAME, T, LOWEST, NANV)                                                      \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                                     \
        const pool_args *a = arg;                                                                  \
        const T *x = a->x;                                                                         \
        T *y = a->y;                                                                               \
        for (int64_t r = b; r < e; r++) {                                                          \
            POOL_ROW_PREAMBLE                                                                      \
            int64_t dw = p->d[2];                                                                  \
            /* Windows wholly inside the input, without dilation or Indices: \
             * a tight loop (the usual 2x2 / 3x3 pooling spends its time here) */                  \
            bool full = !a->idx && p->dil1 && dlo == 0 && dhi == p->k[0] && hlo == 0 &&            \
                        hhi == p->k[1];                                                            \
            if (full) {                                                                            \
                const T *w0p = x + plane + (d0 * H + h0) * W - p->pb[2];                           \
                T *yr = y + yo;                                                                    \
                int64_t sw = p->s[2];                                                              \
                if (p->k[0] == 1 && p->k[1] == 2 && p->k[2] == 2) { /* 2x2: unrolled */            \
                    for (int64_t ow = p->ow_lo; ow < p->ow_hi; ow++) {                             \
                        const T *q = w0p + ow * sw;                                                \
                        T m0 = q[0] > q[1] ? q[0] : q[1], m1 = q[W] > q[W + 1] ? q[W] : q[W + 1];  \
                        T m = m0 > m1 ? m0 : m1;                                                   \
                        bool nan = q[0] != q[0] || q[1] != q[1] || q[W] != q[W] ||                 \
                                   q[W + 1] != q[W + 1];                                           \
                        yr[ow] = nan ? (T)(NANV) : m;                                              \
                    }                                                                              \
                } else {                                                                           \
                    for (int64_t ow = p->ow_lo; ow < p->ow_hi; ow++) {                             \
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
                if (full && ow == p->ow_lo) ow = p->ow_hi; /* done above */                        \
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

DEFINE_MAXPOOL(maxpool_f32, float, -__builtin_inff(), __builtin_nanf(""))
DEFINE_MAXPOOL(maxpool_i8, int8_t, INT8_MIN, 0)
DEFINE_MAXPOOL(maxpool_u8, uint8_t, 0, 0)

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
    const pool_params *p = n->params;
    pool_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), NULL};
    if (n->n_outputs > 1 && n->outputs[1] >= 0) a.idx = Q8_OUT_PTR(x, n, 1);
    q8_range_fn fn = p->avg              ? avgpool_f32
                     : p->dtype == Q8_I8 ? maxpool_i8
                     : p->dtype == Q8_U8 ? maxpool_u8
                                         : maxpool_f32;
    int64_t rows = p->nc * p->out[0] * p->out[1];
    int64_t work = p->out[2] * p->k[0] * p->k[1] * p->k[2];
    q8_parallel_for(x->pool, rows, work >= 8192 ? 1 : 8192 / (work ? work : 1), fn, &a);
}

const q8_op_schema q8_schema_max_pool = {.infer = maxpool_infer};
const q8_cpu_op q8_cpu_max_pool = {.run = pool_run};

const q8_op_schema q8_schema_average_pool = {.infer = avgpool_infer};
const q8_cpu_op q8_cpu_average_pool = {.run = pool_run};
