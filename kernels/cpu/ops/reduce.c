/* ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
 * ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp.
 *
 * axes come from the attribute (older opsets) or the second input (ReduceSum
 * >= 13, all >= 18; it must be constant unless it is empty). No axes: reduce
 * everything, or copy when noop_with_empty_axes=1.
 *
 * infer merges the input dims into alternating kept / reduced groups (size-1
 * dims dropped). Each output element is reduced by one work item in a fixed
 * order, so results do not depend on the thread count. Float sums run in
 * double: when the innermost group is reduced, over 8 interleaved partial
 * sums combined in a fixed order; when it is kept, blocks of contiguous
 * outputs are accumulated together. Max/Min propagate NaN. int32/int64 inputs
 * (shape arithmetic) are accepted by Sum, Max, Min and Prod; their sums and
 * products wrap around on overflow. */
#include <math.h>
#include <string.h>

#include "cpu_op.h"

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LOGSUM, R_LOGSUMEXP };

typedef struct reduce_params {
    int kind;
    q8_dtype dtype;
    bool noop; /* copy the input (empty axes + noop_with_empty_axes) */
    int64_t out_numel, red_numel, in_numel;
    int nk, nr; /* merged kept / reduced groups */
    int64_t kdims[Q8_MAX_DIMS], kstride[Q8_MAX_DIMS];
    int64_t rdims[Q8_MAX_DIMS], rstride[Q8_MAX_DIMS];
    bool last_kept; /* innermost group is kept (stride 1) */
} reduce_params;

static bool int_ok(int kind) {
    return kind == R_SUM || kind == R_MAX || kind == R_MIN || kind == R_PROD;
}

static q8_status reduce_infer(q8_graph *g, q8_node *n, q8_error *err, int kind) {
    Q8_TRY(q8_check_io(n, 1, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && !((x->dtype == Q8_I64 || x->dtype == Q8_I32) && int_ok(kind)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, supported: float32%s",
                            q8_dtype_name(x->dtype), int_ok(kind) ? ", int32, int64" : "");
    int r = x->ndim;
    int64_t axes[Q8_MAX_DIMS];
    int na = 0;
    const q8_attr *aa = q8_attr_find(n, "axes");
    bool in_axes = n->n_inputs > 1 && n->inputs[1] >= 0;
    if (in_axes && aa)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axes are given both as attribute and input");
    if (in_axes) {
        const q8_tensor *at = q8_in(g, n, 1);
        if (!at->shape_known || q8_tensor_numel(at) > 0)
            Q8_TRY(q8_const_ints(g, n, 1, axes, Q8_MAX_DIMS, &na, err));
    } else if (aa) {
        const int64_t *v = q8_attr_ints(n, "axes", &na);
        if (!v) return q8_node_fail(err, Q8_ERR_FORMAT, n, "axes must be a list of ints");
        if (na > Q8_MAX_DIMS)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "axes has %d values, rank is %d", na, r);
        memcpy(axes, v, sizeof(int64_t) * (size_t)na);
    }
    bool red[Q8_MAX_DIMS] = {false};
    for (int i = 0; i < na; i++) {
        int a;
        if (!q8_norm_axis(axes[i], r, &a))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                                (long long)axes[i], r);
        if (red[a])
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is given twice",
                                (long long)axes[i]);
        red[a] = true;
    }
    int64_t keep = q8_attr_int(n, "keepdims", 1);
    reduce_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->kind = kind;
    p->dtype = x->dtype;
    p->in_numel = q8_tensor_numel(x);
    if (na == 0 && q8_attr_int(n, "noop_with_empty_axes", 0)) {
        p->noop = true;
        return q8_set_output(g, n, 0, x->dtype, x->dims, r, err);
    }
    if (na == 0)
        for (int d = 0; d < r; d++) red[d] = true;
    int64_t ydims[Q8_MAX_DIMS];
    int yn = 0;
    p->out_numel = p->red_numel = 1;
    for (int d = 0; d < r; d++) {
        if (red[d])
            p->red_numel *= x->dims[d];
        else
            p->out_numel *= x->dims[d];
        if (!red[d])
            ydims[yn++] = x->dims[d];
        else if (keep)
            ydims[yn++] = 1;
    }
    /* Merge: drop size-1 dims, join neighbours with the same role. */
    int64_t md[Q8_MAX_DIMS];
    bool mr[Q8_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < r; d++) {
        if (x->dims[d] == 1) continue;
        if (m > 0 && mr[m - 1] == red[d]) {
            md[m - 1] *= x->dims[d];
        } else {
            md[m] = x->dims[d];
            mr[m++] = red[d];
        }
    }
    int64_t stride = 1, st[Q8_MAX_DIMS];
    for (int i = m - 1; i >= 0; i--) {
        st[i] = stride;
        stride *= md[i];
    }
    for (int i = 0; i < m; i++) {
        if (mr[i]) {
            p->rdims[p->nr] = md[i];
            p->rstride[p->nr++] = st[i];
        } else {
            p->kdims[p->nk] = md[i];
            p->kstride[p->nk++] = st[i];
        }
    }
    p->last_kept = m == 0 || !mr[m - 1];
    return q8_set_output(g, n, 0, x->dtype, ydims, yn, err);
}

#define DEF_INFER(fn, kind)                                       \
    static q8_status fn(q8_graph *g, q8_node *n, q8_error *err) { \
        return reduce_infer(g, n, err, kind);                     \
    }
DEF_INFER(sum_infer, R_SUM)
DEF_INFER(mean_infer, R_MEAN)
DEF_INFER(max_infer, R_MAX)
DEF_INFER(min_infer, R_MIN)
DEF_INFER(prod_infer, R_PROD)
DEF_INFER(l1_infer, R_L1)
DEF_INFER(l2_infer, R_L2)
DEF_INFER(sumsq_infer, R_SUMSQ)
DEF_INFER(logsum_infer, R_LOGSUM)
DEF_INFER(logsumexp_infer, R_LOGSUMEXP)

/* Offset of the idx-th element (row-major) of the sub-space dims/strides. */
static inline int64_t offset_of(int64_t idx, int nd, const int64_t *dims, const int64_t *strides) {
    int64_t off = 0;
    for (int i = nd - 1; i >= 0; i--) {
        off += (idx % dims[i]) * strides[i];
        idx /= dims[i];
    }
    return off;
}

typedef struct reduce_args {
    const reduce_params *p;
    const void *x;
    void *y;
} reduce_args;

/* ---- float32: per kind, the accumulator's start, update and final step ---- */

#define UPD_SUM(a, v) ((a) + (v))
#define UPD_SUMSQ(a, v) ((a) + (v) * (v))
#define UPD_L1(a, v) ((a) + fabs(v))
#define UPD_PROD(a, v) ((a) * (v))
#define UPD_MAX(a, v) ((v) > (a) || ((v) != (v)) ? (v) : (a))
#define UPD_MIN(a, v) ((v) < (a) || ((v) != (v)) ? (v) : (a))
/* max/min lanes combine with the same rule; a NaN lane wins either way */

#define FIN_ID(a, c) (a)
#define FIN_MEAN(a, c) ((a) / (double)(c))
#define FIN_SQRT(a, c) sqrt(a)
#define FIN_LOG(a, c) log(a)

#define LANES 8
#define BLK 256

#define DEF_F32(NAME, INIT, UPD, COMB, FIN)                                                    \
    /* innermost group reduced: one output element per item */                                 \
    static void NAME##_inner(void *arg, int64_t b, int64_t e, int t) {                         \
        const reduce_args *a = arg;                                                            \
        const reduce_params *p = a->p;                                                         \
        const float *x = a->x;                                                                 \
        int64_t len = p->rdims[p->nr - 1], outer = p->red_numel / len;                         \
        for (int64_t o = b; o < e; o++) {                                                      \
            int64_t base = offset_of(o, p->nk, p->kdims, p->kstride);                          \
            double acc[LANES];                                                                 \
            for (int k = 0; k < LANES; k++) acc[k] = (INIT);                                   \
            for (int64_t ro = 0; ro < outer; ro++) {                                           \
                const float *s = x + base + offset_of(ro, p->nr - 1, p->rdims, p->rstride);    \
                int64_t i = 0;                                                                 \
                for (; i + LANES <= len; i += LANES)                                           \
                    for (int k = 0; k < LANES; k++) {                                          \
                        double v = s[i + k];                                                   \
                        acc[k] = UPD(acc[k], v);                                               \
                    }                                                                          \
                for (; i < len; i++) {                                                         \
                    double v = s[i];                                                           \
                    acc[0] = UPD(acc[0], v);                                                   \
                }                                                                              \
            }                                                                                  \
            double r = acc[0];                                                                 \
            for (int k = 1; k < LANES; k++) r = COMB(r, acc[k]);                               \
            ((float *)a->y)[o] = (float)FIN(r, p->red_numel);                                  \
        }                                                                                      \
    }                                                                                          \
    /* innermost group kept: a block of up to BLK contiguous outputs per item */               \
    static void NAME##_outer(void *arg, int64_t b, int64_t e, int t) {                         \
        const reduce_args *a = arg;                                                            \
        const reduce_params *p = a->p;                                                         \
        const float *x = a->x;                                                                 \
        int64_t inner = p->nk ? p->kdims[p->nk - 1] : 1;                                       \
        int64_t nblk = (inner + BLK - 1) / BLK;                                                \
        double acc[BLK];                                                                       \
        for (int64_t it = b; it < e; it++) {                                                   \
            int64_t row = it / nblk, c0 = (it % nblk) * BLK;                                   \
            int64_t w = inner - c0 < BLK ? inner - c0 : BLK;                                   \
            int64_t base = c0 + (p->nk ? offset_of(row, p->nk - 1, p->kdims, p->kstride) : 0); \
            for (int64_t j = 0; j < w; j++) acc[j] = (INIT);                                   \
            for (int64_t ri = 0; ri < p->red_numel; ri++) {                                    \
                const float *s = x + base + offset_of(ri, p->nr, p->rdims, p->rstride);        \
                for (int64_t j = 0; j < w; j++) {                                              \
                    double v = s[j];                                                           \
                    acc[j] = UPD(acc[j], v);                                                   \
                }                                                                              \
            }                                                                                  \
            float *y = (float *)a->y + row * inner + c0;                                       \
            for (int64_t j = 0; j < w; j++) y[j] = (float)FIN(acc[j], p->red_numel);           \
        }                                                                                      \
    }

DEF_F32(f_sum, 0.0, UPD_SUM, UPD_SUM, FIN_ID)
DEF_F32(f_mean, 0.0, UPD_SUM, UPD_SUM, FIN_MEAN)
DEF_F32(f_max, -INFINITY, UPD_MAX, UPD_MAX, FIN_ID)
DEF_F32(f_min, INFINITY, UPD_MIN, UPD_MIN, FIN_ID)
DEF_F32(f_prod, 1.0, UPD_PROD, UPD_PROD, FIN_ID)
DEF_F32(f_l1, 0.0, UPD_L1, UPD_SUM, FIN_ID)
DEF_F32(f_l2, 0.0, UPD_SUMSQ, UPD_SUM, FIN_SQRT)
DEF_F32(f_sumsq, 0.0, UPD_SUMSQ, UPD_SUM, FIN_ID)
DEF_F32(f_logsum, 0.0, UPD_SUM, UPD_SUM, FIN_LOG)

/* LogSumExp: max first, then log(sum(exp(x - max))) + max; one output per
 * item, any layout (it is rare enough not to need the blocked form). */
static void f_logsumexp(void *arg, int64_t b, int64_t e, int t) {
    const reduce_args *a = arg;
    const reduce_params *p = a->p;
    const float *x = a->x;
    for (int64_t o = b; o < e; o++) {
        int64_t base = offset_of(o, p->nk, p->kdims, p->kstride);
        double m = -INFINITY;
        for (int64_t ri = 0; ri < p->red_numel; ri++) {
            double v = x[base + offset_of(ri, p->nr, p->rdims, p->rstride)];
            m = UPD_MAX(m, v);
        }
        double s = 0.0;
        if (isfinite(m))
            for (int64_t ri = 0; ri < p->red_numel; ri++)
                s += exp(x[base + offset_of(ri, p->nr, p->rdims, p->rstride)] - m);
        ((float *)a->y)[o] = isfinite(m) ? (float)(log(s) + m) : (float)m;
    }
}

/* int32 / int64: small shape tensors; plain loops, wrap-around arithmetic. */
static void int_range(void *arg, int64_t b, int64_t e, int t) {
    const reduce_args *a = arg;
    const reduce_params *p = a->p;
    bool i64 = p->dtype == Q8_I64;
    for (int64_t o = b; o < e; o++) {
        int64_t base = offset_of(o, p->nk, p->kdims, p->kstride);
        uint64_t acc = p->kind == R_PROD ? 1 : 0;
        int64_t best =
            p->kind == R_MAX ? (i64 ? INT64_MIN : INT32_MIN) : (i64 ? INT64_MAX : INT32_MAX);
        for (int64_t ri = 0; ri < p->red_numel; ri++) {
            int64_t i = base + offset_of(ri, p->nr, p->rdims, p->rstride);
            int64_t v = i64 ? ((const int64_t *)a->x)[i] : ((const int32_t *)a->x)[i];
            if (p->kind == R_SUM)
                acc += (uint64_t)v;
            else if (p->kind == R_PROD)
                acc *= (uint64_t)v;
            else if (p->kind == R_MAX)
                best = v > best ? v : best;
            else
                best = v < best ? v : best;
        }
        int64_t r = p->kind == R_SUM || p->kind == R_PROD ? (int64_t)acc : best;
        if (i64)
            ((int64_t *)a->y)[o] = r;
        else
            ((int32_t *)a->y)[o] = (int32_t)r;
    }
}

static void reduce_run(const q8_exec *x, const q8_node *n) {
    const reduce_params *p = n->params;
    reduce_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    if (p->noop) {
        if (a.y != a.x) memcpy(a.y, a.x, (size_t)p->in_numel * q8_dtype_size(p->dtype));
        return;
    }
    if (p->out_numel == 0) return;
    int64_t work = p->red_numel ? p->red_numel : 1;
    int64_t grain = work >= 16384 ? 1 : 16384 / work;
    if (p->dtype != Q8_F32) {
        q8_parallel_for(x->pool, p->out_numel, grain, int_range, &a);
        return;
    }
    if (p->red_numel == 0) {
        /* reducing an empty set: the identity of the reduction */
        static const float ident[] = {
            [R_SUM] = 0.0f,         [R_MEAN] = NAN,
            [R_MAX] = -INFINITY,    [R_MIN] = INFINITY,
            [R_PROD] = 1.0f,        [R_L1] = 0.0f,
            [R_L2] = 0.0f,          [R_SUMSQ] = 0.0f,
            [R_LOGSUM] = -INFINITY, [R_LOGSUMEXP] = -INFINITY,
        };
        for (int64_t i = 0; i < p->out_numel; i++) ((float *)a.y)[i] = ident[p->kind];
        return;
    }
    if (p->kind == R_LOGSUMEXP) {
        q8_parallel_for(x->pool, p->out_numel, grain, f_logsumexp, &a);
        return;
    }
    static const q8_range_fn inner_fns[] = {
        [R_SUM] = f_sum_inner, [R_MEAN] = f_mean_inner,   [R_MAX] = f_max_inner,
        [R_MIN] = f_min_inner, [R_PROD] = f_prod_inner,   [R_L1] = f_l1_inner,
        [R_L2] = f_l2_inner,   [R_SUMSQ] = f_sumsq_inner, [R_LOGSUM] = f_logsum_inner,
    };
    static const q8_range_fn outer_fns[] = {
        [R_SUM] = f_sum_outer, [R_MEAN] = f_mean_outer,   [R_MAX] = f_max_outer,
        [R_MIN] = f_min_outer, [R_PROD] = f_prod_outer,   [R_L1] = f_l1_outer,
        [R_L2] = f_l2_outer,   [R_SUMSQ] = f_sumsq_outer, [R_LOGSUM] = f_logsum_outer,
    };
    if (!p->last_kept) {
        q8_parallel_for(x->pool, p->out_numel, grain, inner_fns[p->kind], &a);
    } else {
        int64_t inner = p->nk ? p->kdims[p->nk - 1] : 1;
        int64_t nblk = (inner + BLK - 1) / BLK, rows = p->out_numel / (inner ? inner : 1);
        int64_t w = inner < BLK ? inner : BLK;
        int64_t g2 = work * w >= 16384 ? 1 : 16384 / (work * w);
        q8_parallel_for(x->pool, rows * nblk, g2, outer_fns[p->kind], &a);
    }
}

#define DEF_OP(sym, infer_fn)                                    \
    const q8_op_schema q8_schema_##sym = {.infer = infer_fn}; \
    const q8_cpu_op q8_cpu_##sym = {.run = reduce_run};
DEF_OP(reduce_sum, sum_infer)
DEF_OP(reduce_mean, mean_infer)
DEF_OP(reduce_max, max_infer)
DEF_OP(reduce_min, min_infer)
DEF_OP(reduce_prod, prod_infer)
DEF_OP(reduce_l1, l1_infer)
DEF_OP(reduce_l2, l2_infer)
DEF_OP(reduce_sum_square, sumsq_infer)
DEF_OP(reduce_log_sum, logsum_infer)
DEF_OP(reduce_log_sum_exp, logsumexp_infer)
