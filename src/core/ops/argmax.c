/* ArgMax and ArgMin (see argmax.h). */
#include "ops/argmax.h"

#include "op.h"

static bool supported(q8_dtype t) {
    switch (t) {
    case Q8_F32: case Q8_F64: case Q8_I8: case Q8_I16: case Q8_I32: case Q8_I64:
    case Q8_U8: case Q8_U16: case Q8_U32: case Q8_U64: return true;
    default: return false;
    }
}

static q8_status argmax_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (!supported(x->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "data '%s' is %s (numbers only)", x->name,
                            q8_dtype_name(x->dtype));
    if (x->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "data '%s' is a scalar, expected rank >= 1",
                            x->name);
    int64_t axis_attr = q8_attr_int(n, "axis", 0), keep = q8_attr_int(n, "keepdims", 1);
    int64_t last = q8_attr_int(n, "select_last_index", 0);
    int axis;
    if (!q8_norm_axis(axis_attr, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                            (long long)axis_attr, x->ndim);
    if ((keep != 0 && keep != 1) || (last != 0 && last != 1))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "keepdims and select_last_index must be 0 or 1");
    if (x->dims[axis] == 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "the axis of '%s' is empty: no index to give",
                            x->name);
    q8_argmax_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->dtype = x->dtype;
    p->min = n->op == Q8_OP_ARG_MIN;
    p->last = last == 1;
    q8_axis_split(x, axis, &p->outer, &p->len, &p->inner);
    int64_t dims[Q8_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (d != axis) dims[nd++] = x->dims[d];
        else if (keep) dims[nd++] = 1;
    }
    return q8_set_output(g, n, 0, Q8_I64, dims, nd, err);
}

static q8_status hardmax_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' is a scalar, expected rank >= 1",
                            x->name);
    int64_t axis_attr = q8_attr_int(n, "axis", -1);
    int axis;
    if (!q8_norm_axis(axis_attr, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                            (long long)axis_attr, x->ndim);
    q8_argmax_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->dtype = Q8_F32;
    q8_axis_split(x, axis, &p->outer, &p->len, &p->inner);
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_hardmax = {.infer = hardmax_infer};
const q8_op_schema q8_schema_arg_max = {.infer = argmax_infer};
const q8_op_schema q8_schema_arg_min = {.infer = argmax_infer};
