/* Reduce* on the CPU (params: src/core/ops/reduce.h). Each output element
 * is reduced by one work item in a fixed order, so results do not depend on
 * the thread count. Float sums run in double: when the innermost group is
 * reduced, over 8 interleaved partial sums combined in a fixed order; when
 * it is kept, blocks of contiguous outputs are accumulated together.
 * Max/Min propagate NaN. float64 runs the float32 code with double data. */
#include <math.h>
#include <string.h>

#include "clones.h"
#include "cpu_op.h"
#include "ops/reduce.h"

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
    const q8_reduce_params *p;
    const void *x;
    void *y;
} reduce_args;

/* ---- float32 and float64: per kind, the accumulator's start, update and final step ---- */

#define UPD_SUM(a, v) ((a) + (v))
#define UPD_SUMSQ(a, v) ((a) + (v) * (v))
#define UPD_L1(a, v) ((a) + fabs(v))
#define UPD_PROD(a, v) ((a) * (v))
#define UPD_MAX(a, v) ((((v) > (a)) | ((v) != (v))) ? (v) : (a))
#define UPD_MIN(a, v) ((((v) < (a)) | ((v) != (v))) ? (v) : (a))
/* max/min lanes combine with the same rule; a NaN lane wins either way */

#define FIN_ID(a, c) (a)
#define FIN_MEAN(a, c) ((a) / (double)(c))
#define FIN_SQRT(a, c) sqrt(a)
#define FIN_LOG(a, c) log(a)

#define LANES 8
#define BLK 256

/* float32's loops are cloned per ISA (ReduceMean over rows of 64 ran SSE2
 * code at 2.5x ONNX Runtime's time); reduce.c is built without trapping
 * math or FMA contraction (CMakeLists.txt), so every clone adds the same
 * lanes in the same order: the same bits. */
#define DEF_FLT(NAME, T, INIT, UPD, COMB, FIN, ATTR)                                           \
    /* innermost group reduced: one output element per item */                                 \
    ATTR static void NAME##_inner(void *arg, int64_t b, int64_t e, int t) {                    \
        const reduce_args *a = arg;                                                            \
        const q8_reduce_params *p = a->p;                                                      \
        const T *x = a->x;                                                                     \
        int64_t len = p->rdims[p->nr - 1], outer = p->red_numel / len;                         \
        for (int64_t o = b; o < e; o++) {                                                      \
            int64_t base = offset_of(o, p->nk, p->kdims, p->kstride);                          \
            double acc[LANES];                                                                 \
            for (int k = 0; k < LANES; k++) acc[k] = (INIT);                                   \
            for (int64_t ro = 0; ro < outer; ro++) {                                           \
                const T *s = x + base + offset_of(ro, p->nr - 1, p->rdims, p->rstride);        \
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
            ((T *)a->y)[o] = (T)FIN(r, p->red_numel);                                          \
        }                                                                                      \
    }                                                                                          \
    /* innermost group kept: a block of up to BLK contiguous outputs per item */               \
    ATTR static void NAME##_outer(void *arg, int64_t b, int64_t e, int t) {                    \
        const reduce_args *a = arg;                                                            \
        const q8_reduce_params *p = a->p;                                                      \
        const T *x = a->x;                                                                     \
        int64_t inner = p->nk ? p->kdims[p->nk - 1] : 1;                                       \
        int64_t nblk = (inner + BLK - 1) / BLK;                                                \
        double acc[BLK];                                                                       \
        for (int64_t it = b; it < e; it++) {                                                   \
            int64_t row = it / nblk, c0 = (it % nblk) * BLK;                                   \
            int64_t w = inner - c0 < BLK ? inner - c0 : BLK;                                   \
            int64_t base = c0 + (p->nk ? offset_of(row, p->nk - 1, p->kdims, p->kstride) : 0); \
            for (int64_t j = 0; j < w; j++) acc[j] = (INIT);                                   \
            for (int64_t ri = 0; ri < p->red_numel; ri++) {                                    \
                const T *s = x + base + offset_of(ri, p->nr, p->rdims, p->rstride);            \
                for (int64_t j = 0; j < w; j++) {                                              \
                    double v = s[j];                                                           \
                    acc[j] = UPD(acc[j], v);                                                   \
                }                                                                              \
            }                                                                                  \
            T *y = (T *)a->y + row * inner + c0;                                               \
            for (int64_t j = 0; j < w; j++) y[j] = (T)FIN(acc[j], p->red_numel);               \
        }                                                                                      \
    }

/* LogSumExp: max first, then log(sum(exp(x - max))) + max; one output per
 * item, any layout (it is rare enough not to need the blocked form). */
#define DEF_LSE(NAME, T)                                                                       \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                                 \
        const reduce_args *a = arg;                                                            \
        const q8_reduce_params *p = a->p;                                                      \
        const T *x = a->x;                                                                     \
        for (int64_t o = b; o < e; o++) {                                                      \
            int64_t base = offset_of(o, p->nk, p->kdims, p->kstride);                          \
            double m = -INFINITY;                                                              \
            for (int64_t ri = 0; ri < p->red_numel; ri++) {                                    \
                double v = x[base + offset_of(ri, p->nr, p->rdims, p->rstride)];               \
                m = UPD_MAX(m, v);                                                             \
            }                                                                                  \
            double s = 0.0;                                                                    \
            if (isfinite(m))                                                                   \
                for (int64_t ri = 0; ri < p->red_numel; ri++)                                  \
                    s += exp(x[base + offset_of(ri, p->nr, p->rdims, p->rstride)] - m);        \
            ((T *)a->y)[o] = isfinite(m) ? (T)(log(s) + m) : (T)m;                             \
        }                                                                                      \
    }

#define DEF_KINDS(P, T, ATTR)                                      \
    DEF_FLT(P##_sum, T, 0.0, UPD_SUM, UPD_SUM, FIN_ID, ATTR)       \
    DEF_FLT(P##_mean, T, 0.0, UPD_SUM, UPD_SUM, FIN_MEAN, ATTR)    \
    DEF_FLT(P##_max, T, -INFINITY, UPD_MAX, UPD_MAX, FIN_ID, ATTR) \
    DEF_FLT(P##_min, T, INFINITY, UPD_MIN, UPD_MIN, FIN_ID, ATTR)  \
    DEF_FLT(P##_prod, T, 1.0, UPD_PROD, UPD_PROD, FIN_ID, ATTR)    \
    DEF_FLT(P##_l1, T, 0.0, UPD_L1, UPD_SUM, FIN_ID, ATTR)         \
    DEF_FLT(P##_l2, T, 0.0, UPD_SUMSQ, UPD_SUM, FIN_SQRT, ATTR)    \
    DEF_FLT(P##_sumsq, T, 0.0, UPD_SUMSQ, UPD_SUM, FIN_ID, ATTR)   \
    DEF_FLT(P##_logsum, T, 0.0, UPD_SUM, UPD_SUM, FIN_LOG, ATTR)   \
    DEF_LSE(P##_logsumexp, T)

DEF_KINDS(f, float, Q8_CLONES)
DEF_KINDS(d, double, )

/* int32 / int64: small shape tensors; plain loops, wrap-around arithmetic. */
static void int_range(void *arg, int64_t b, int64_t e, int t) {
    const reduce_args *a = arg;
    const q8_reduce_params *p = a->p;
    bool i64 = p->dtype == Q8_I64;
    for (int64_t o = b; o < e; o++) {
        int64_t base = offset_of(o, p->nk, p->kdims, p->kstride);
        uint64_t acc = p->kind == Q8_REDUCE_PROD ? 1 : 0;
        int64_t best = p->kind == Q8_REDUCE_MAX ? (i64 ? INT64_MIN : INT32_MIN)
                                                : (i64 ? INT64_MAX : INT32_MAX);
        for (int64_t ri = 0; ri < p->red_numel; ri++) {
            int64_t i = base + offset_of(ri, p->nr, p->rdims, p->rstride);
            int64_t v = i64 ? ((const int64_t *)a->x)[i] : ((const int32_t *)a->x)[i];
            if (p->kind == Q8_REDUCE_SUM)
                acc += (uint64_t)v;
            else if (p->kind == Q8_REDUCE_PROD)
                acc *= (uint64_t)v;
            else if (p->kind == Q8_REDUCE_MAX)
                best = v > best ? v : best;
            else
                best = v < best ? v : best;
        }
        int64_t r = p->kind == Q8_REDUCE_SUM || p->kind == Q8_REDUCE_PROD ? (int64_t)acc : best;
        if (i64)
            ((int64_t *)a->y)[o] = r;
        else
            ((int32_t *)a->y)[o] = (int32_t)r;
    }
}

static void reduce_run(const q8_exec *x, const q8_node *n) {
    const q8_reduce_params *p = n->params;
    reduce_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    if (p->noop) {
        if (a.y != a.x) memcpy(a.y, a.x, (size_t)p->in_numel * q8_dtype_size(p->dtype));
        return;
    }
    if (p->out_numel == 0) return;
    int64_t work = p->red_numel ? p->red_numel : 1;
    int64_t grain = work >= 16384 ? 1 : 16384 / work;
    if (p->dtype != Q8_F32 && p->dtype != Q8_F64) {
        q8_parallel_for(x->pool, p->out_numel, grain, int_range, &a);
        return;
    }
    bool f64 = p->dtype == Q8_F64;
    if (p->red_numel == 0) {
        /* reducing an empty set: the identity of the reduction */
        static const double ident[] = {
            [Q8_REDUCE_SUM] = 0.0,          [Q8_REDUCE_MEAN] = NAN,
            [Q8_REDUCE_MAX] = -INFINITY,    [Q8_REDUCE_MIN] = INFINITY,
            [Q8_REDUCE_PROD] = 1.0,         [Q8_REDUCE_L1] = 0.0,
            [Q8_REDUCE_L2] = 0.0,           [Q8_REDUCE_SUM_SQUARE] = 0.0,
            [Q8_REDUCE_LOG_SUM] = -INFINITY, [Q8_REDUCE_LOG_SUM_EXP] = -INFINITY,
        };
        for (int64_t i = 0; i < p->out_numel; i++) {
            if (f64) ((double *)a.y)[i] = ident[p->kind];
            else ((float *)a.y)[i] = (float)ident[p->kind];
        }
        return;
    }
    if (p->kind == Q8_REDUCE_LOG_SUM_EXP) {
        q8_parallel_for(x->pool, p->out_numel, grain, f64 ? d_logsumexp : f_logsumexp, &a);
        return;
    }
    static const q8_range_fn inner_fns[2][Q8_REDUCE_LOG_SUM + 1] = {
        {
            [Q8_REDUCE_SUM] = f_sum_inner,   [Q8_REDUCE_MEAN] = f_mean_inner,
            [Q8_REDUCE_MAX] = f_max_inner,   [Q8_REDUCE_MIN] = f_min_inner,
            [Q8_REDUCE_PROD] = f_prod_inner, [Q8_REDUCE_L1] = f_l1_inner,
            [Q8_REDUCE_L2] = f_l2_inner,     [Q8_REDUCE_SUM_SQUARE] = f_sumsq_inner,
            [Q8_REDUCE_LOG_SUM] = f_logsum_inner,
        },
        {
            [Q8_REDUCE_SUM] = d_sum_inner,   [Q8_REDUCE_MEAN] = d_mean_inner,
            [Q8_REDUCE_MAX] = d_max_inner,   [Q8_REDUCE_MIN] = d_min_inner,
            [Q8_REDUCE_PROD] = d_prod_inner, [Q8_REDUCE_L1] = d_l1_inner,
            [Q8_REDUCE_L2] = d_l2_inner,     [Q8_REDUCE_SUM_SQUARE] = d_sumsq_inner,
            [Q8_REDUCE_LOG_SUM] = d_logsum_inner,
        },
    };
    static const q8_range_fn outer_fns[2][Q8_REDUCE_LOG_SUM + 1] = {
        {
            [Q8_REDUCE_SUM] = f_sum_outer,   [Q8_REDUCE_MEAN] = f_mean_outer,
            [Q8_REDUCE_MAX] = f_max_outer,   [Q8_REDUCE_MIN] = f_min_outer,
            [Q8_REDUCE_PROD] = f_prod_outer, [Q8_REDUCE_L1] = f_l1_outer,
            [Q8_REDUCE_L2] = f_l2_outer,     [Q8_REDUCE_SUM_SQUARE] = f_sumsq_outer,
            [Q8_REDUCE_LOG_SUM] = f_logsum_outer,
        },
        {
            [Q8_REDUCE_SUM] = d_sum_outer,   [Q8_REDUCE_MEAN] = d_mean_outer,
            [Q8_REDUCE_MAX] = d_max_outer,   [Q8_REDUCE_MIN] = d_min_outer,
            [Q8_REDUCE_PROD] = d_prod_outer, [Q8_REDUCE_L1] = d_l1_outer,
            [Q8_REDUCE_L2] = d_l2_outer,     [Q8_REDUCE_SUM_SQUARE] = d_sumsq_outer,
            [Q8_REDUCE_LOG_SUM] = d_logsum_outer,
        },
    };
    if (!p->last_kept) {
        q8_parallel_for(x->pool, p->out_numel, grain, inner_fns[f64][p->kind], &a);
    } else {
        int64_t inner = p->nk ? p->kdims[p->nk - 1] : 1;
        int64_t nblk = (inner + BLK - 1) / BLK, rows = p->out_numel / (inner ? inner : 1);
        int64_t w = inner < BLK ? inner : BLK;
        int64_t g2 = work * w >= 16384 ? 1 : 16384 / (work * w);
        q8_parallel_for(x->pool, rows * nblk, g2, outer_fns[f64][p->kind], &a);
    }
}

const q8_cpu_op q8_cpu_reduce_sum = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_mean = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_max = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_min = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_prod = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_l1 = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_l2 = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_sum_square = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_log_sum = {.run = reduce_run};
const q8_cpu_op q8_cpu_reduce_log_sum_exp = {.run = reduce_run};
