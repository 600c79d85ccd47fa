/* Reduce* (see reduce.h). */
#include <string.h>

#include "ops/reduce.h"

#include "op.h"

static bool int_ok(q8_reduce_kind kind) {
    return kind == Q8_REDUCE_SUM || kind == Q8_REDUCE_MAX || kind == Q8_REDUCE_MIN ||
           kind == Q8_REDUCE_PROD;
}

static q8_status reduce_infer(q8_graph *g, q8_node *n, q8_error *err, q8_reduce_kind kind) {
    Q8_TRY(q8_check_io(n, 1, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && x->dtype != Q8_F64 &&
        !((x->dtype == Q8_I64 || x->dtype == Q8_I32) && int_ok(kind)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, supported: float32, float64%s",
                            q8_dtype_name(x->dtype), int_ok(kind) ? ", int32, int64" : "");
    int r = x->ndim;
    int64_t axes[Q8_MAX_DIMS];
    int na = 0;
    const q8_tensor *at = q8_in(g, n, 1);
    if (at && (!at->shape_known || q8_tensor_numel(at) > 0))
        Q8_TRY(q8_const_ints(g, n, 1, axes, Q8_MAX_DIMS, &na, err));
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
    q8_reduce_params *p = q8_node_params(n, sizeof *p, err);
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
DEF_INFER(sum_infer, Q8_REDUCE_SUM)
DEF_INFER(mean_infer, Q8_REDUCE_MEAN)
DEF_INFER(max_infer, Q8_REDUCE_MAX)
DEF_INFER(min_infer, Q8_REDUCE_MIN)
DEF_INFER(prod_infer, Q8_REDUCE_PROD)
DEF_INFER(l1_infer, Q8_REDUCE_L1)
DEF_INFER(l2_infer, Q8_REDUCE_L2)
DEF_INFER(sumsq_infer, Q8_REDUCE_SUM_SQUARE)
DEF_INFER(logsum_infer, Q8_REDUCE_LOG_SUM)
DEF_INFER(logsumexp_infer, Q8_REDUCE_LOG_SUM_EXP)

const q8_op_schema q8_schema_reduce_sum = {.infer = sum_infer};
const q8_op_schema q8_schema_reduce_mean = {.infer = mean_infer};
const q8_op_schema q8_schema_reduce_max = {.infer = max_infer};
const q8_op_schema q8_schema_reduce_min = {.infer = min_infer};
const q8_op_schema q8_schema_reduce_prod = {.infer = prod_infer};
const q8_op_schema q8_schema_reduce_l1 = {.infer = l1_infer};
const q8_op_schema q8_schema_reduce_l2 = {.infer = l2_infer};
const q8_op_schema q8_schema_reduce_sum_square = {.infer = sumsq_infer};
const q8_op_schema q8_schema_reduce_log_sum = {.infer = logsum_infer};
const q8_op_schema q8_schema_reduce_log_sum_exp = {.infer = logsumexp_infer};
