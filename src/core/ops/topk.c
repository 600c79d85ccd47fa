/* TopK (see topk.h). */
#include "ops/topk.h"

#include "op.h"

static q8_status topk_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 2, err));
    if (n->outputs[0] < 0) return q8_node_fail(err, Q8_ERR_FORMAT, n, "has no Values output");
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    q8_dtype t = x->dtype;
    if (t != Q8_F32 && t != Q8_F64 && t != Q8_I32 && t != Q8_I64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(t));
    if (x->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' is a scalar, expected rank >= 1",
                            x->name);
    int64_t axis_attr = q8_attr_int(n, "axis", -1), largest = q8_attr_int(n, "largest", 1);
    int axis;
    if (!q8_norm_axis(axis_attr, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                            (long long)axis_attr, x->ndim);
    if (largest != 0 && largest != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "largest must be 0 or 1");
    int64_t k[1];
    int nk = 0;
    Q8_TRY(q8_const_ints(g, n, 1, k, 1, &nk, err));
    if (nk != 1 || k[0] < 0 || k[0] > x->dims[axis])
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "k must be one value in [0, %lld] (the axis' "
                            "length)", (long long)x->dims[axis]);
    q8_topk_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->dtype = t;
    p->largest = largest == 1;
    q8_axis_split(x, axis, &p->outer, &p->len, &p->inner);
    p->k = k[0];
    int64_t dims[Q8_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) dims[d] = d == axis ? k[0] : x->dims[d];
    Q8_TRY(q8_set_output(g, n, 0, t, dims, x->ndim, err));
    /* an output left unnamed (-1) is not made */
    return n->outputs[1] >= 0 ? q8_set_output(g, n, 1, Q8_I64, dims, x->ndim, err) : Q8_OK;
}

const q8_op_schema q8_schema_topk = {.infer = topk_infer};
