/* ScatterElements, Scatter and ScatterND (see scatter.h). */
#include "ops/scatter.h"

#include <string.h>

#include "op.h"

static q8_status scatter_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 3, 3, 1, 1, err));
    for (int i = 0; i < 3; i++) Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *d = q8_in(g, n, 0), *ind = q8_in(g, n, 1), *u = q8_in(g, n, 2);
    if (ind->dtype != Q8_I64 && ind->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "indices are %s, expected int32 or int64",
                            q8_dtype_name(ind->dtype));
    if (u->dtype != d->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "updates are %s, data %s",
                            q8_dtype_name(u->dtype), q8_dtype_name(d->dtype));
    if (d->dtype == Q8_STRING)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "string data");
    if (d->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "data is a scalar, expected rank >= 1");
    const char *rs = q8_attr_str(n, "reduction", "none");
    q8_scatter_reduce red = !strcmp(rs, "none") ? Q8_SCATTER_NONE
                            : !strcmp(rs, "add") ? Q8_SCATTER_ADD
                            : !strcmp(rs, "mul") ? Q8_SCATTER_MUL
                            : !strcmp(rs, "max") ? Q8_SCATTER_MAX
                            : !strcmp(rs, "min") ? Q8_SCATTER_MIN : (q8_scatter_reduce)-1;
    if ((int)red < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "reduction '%s': expected none, add, mul, "
                            "max or min", rs);
    q8_dtype t = d->dtype;
    if (red != Q8_SCATTER_NONE && t != Q8_F32 && t != Q8_F64 && t != Q8_I32 && t != Q8_I64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "reduction '%s' on %s data", rs,
                            q8_dtype_name(t));
    q8_scatter_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->nd = n->op == Q8_OP_SCATTER_ND;
    p->reduce = red;
    p->dtype = t;
    p->index_dtype = ind->dtype;
    p->elem = q8_dtype_size(t);
    p->rank = d->ndim;
    memcpy(p->dims, d->dims, sizeof(int64_t) * (size_t)d->ndim);
    if (!p->nd) {
        if (ind->ndim != d->ndim || u->ndim != d->ndim)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "data, indices and updates must have one "
                                "rank (%d, %d, %d)", d->ndim, ind->ndim, u->ndim);
        for (int i = 0; i < d->ndim; i++)
            if (ind->dims[i] != u->dims[i])
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "indices and updates differ in shape");
        int64_t axis_attr = q8_attr_int(n, "axis", 0);
        if (!q8_norm_axis(axis_attr, d->ndim, &p->axis))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                                (long long)axis_attr, d->ndim);
        for (int i = 0; i < d->ndim; i++)
            if (i != p->axis && ind->dims[i] > d->dims[i])
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "indices' dim %d (%lld) is larger than "
                                    "data's (%lld)", i, (long long)ind->dims[i],
                                    (long long)d->dims[i]);
        memcpy(p->udims, u->dims, sizeof(int64_t) * (size_t)u->ndim);
        p->n_updates = q8_tensor_numel(u);
    } else {
        if (ind->ndim < 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "indices are a scalar, expected rank >= 1");
        int64_t k = ind->dims[ind->ndim - 1];
        if (k < 1 || k > d->ndim)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "indices' last dim %lld: expected 1 to "
                                "data's rank %d", (long long)k, d->ndim);
        int want = ind->ndim - 1 + d->ndim - (int)k;
        bool ok = u->ndim == want;
        for (int i = 0; ok && i < ind->ndim - 1; i++) ok = u->dims[i] == ind->dims[i];
        for (int i = (int)k; ok && i < d->ndim; i++)
            ok = u->dims[ind->ndim - 1 + i - (int)k] == d->dims[i];
        if (!ok)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "updates' shape must be indices' dims but "
                                "the last, then data's dims from %lld on", (long long)k);
        p->k = (int)k;
        p->n_updates = q8_tensor_numel(ind) / k;
        p->slice = 1;
        for (int i = (int)k; i < d->ndim; i++) p->slice *= d->dims[i];
    }
    return q8_set_output(g, n, 0, t, d->dims, d->ndim, err);
}

const q8_op_schema q8_schema_scatter_elements = {.infer = scatter_infer};
const q8_op_schema q8_schema_scatter = {.infer = scatter_infer};
const q8_op_schema q8_schema_scatter_nd = {.infer = scatter_infer};
