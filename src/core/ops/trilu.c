/* Trilu (see trilu.h). */
#include "ops/trilu.h"

#include "op.h"

static q8_status trilu_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has rank %d, expected >= 2",
                            x->name, x->ndim);
    if (x->dtype == Q8_STRING)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "string data");
    bool has_k = n->n_inputs > 1 && n->inputs[1] >= 0;
    if (has_k) {
        Q8_TRY(q8_check_input(g, n, 1, Q8_I64, err));
        if (q8_tensor_numel(q8_in(g, n, 1)) != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "k must be one int64 value");
    }
    int64_t upper = q8_attr_int(n, "upper", 1);
    if (upper != 0 && upper != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "upper is %lld, expected 0 or 1",
                            (long long)upper);
    q8_trilu_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->upper = upper == 1;
    p->has_k = has_k;
    p->elem = q8_dtype_size(x->dtype);
    p->rows = x->dims[x->ndim - 2];
    p->cols = x->dims[x->ndim - 1];
    p->batch = 1;
    for (int d = 0; d < x->ndim - 2; d++) p->batch *= x->dims[d];
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_trilu = {.infer = trilu_infer};
