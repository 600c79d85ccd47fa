/* Softmax and LogSoftmax (see softmax.h). */
#include "ops/softmax.h"

#include "op.h"

static q8_status softmax_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input is a scalar, expected rank >= 1");
    int64_t axis_attr = q8_attr_int(n, "axis", -1);
    int axis;
    if (!q8_norm_axis(axis_attr, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                            (long long)axis_attr, x->ndim);
    q8_softmax_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    q8_axis_split(x, axis, &p->outer, &p->len, &p->inner);
    p->log = n->op == Q8_OP_LOG_SOFTMAX;
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err);
}

/* In place is safe: every kernel reads a row's inputs before writing it. */
const q8_op_schema q8_schema_softmax = {.infer = softmax_infer, .flags = Q8_OPF_INPLACE};
const q8_op_schema q8_schema_log_softmax = {.infer = softmax_infer, .flags = Q8_OPF_INPLACE};
