/* Flatten: a 2-D view, (prod dims[:axis], prod dims[axis:]). */
#include "op.h"
#include "ops/tensor_args.h"

static q8_status flatten_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t axis = q8_attr_int(n, "axis", 1);
    /* axis may equal the rank: (numel, 1) */
    if (axis < -x->ndim || axis > x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axis %lld is out of range for rank %d",
                            (long long)axis, x->ndim);
    if (axis < 0) axis += x->ndim;
    int64_t dims[2] = {q8_ta_prod(x->dims, 0, (int)axis), q8_ta_prod(x->dims, (int)axis, x->ndim)};
    return q8_set_output(g, n, 0, x->dtype, dims, 2, err);
}

const q8_op_schema q8_schema_flatten = {.infer = flatten_infer, .flags = Q8_OPF_VIEW};
