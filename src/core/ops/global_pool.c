/* GlobalAveragePool and GlobalMaxPool (see global_pool.h). */
#include "ops/global_pool.h"

#include "op.h"

static q8_status gpool_infer(q8_graph *g, q8_node *n, q8_error *err, bool avg) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && (avg || (x->dtype != Q8_I8 && x->dtype != Q8_U8)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, supported: float32%s",
                            q8_dtype_name(x->dtype), avg ? "" : ", int8, uint8");
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input has rank %d, expected N x C x ...",
                            x->ndim);
    q8_global_pool_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    int64_t ydims[Q8_MAX_DIMS];
    p->s = 1;
    for (int d = 0; d < x->ndim; d++) {
        ydims[d] = d < 2 ? x->dims[d] : 1;
        if (d >= 2) p->s *= x->dims[d];
    }
    p->rows = x->dims[0] * x->dims[1];
    p->avg = avg;
    p->dtype = x->dtype;
    return q8_set_output(g, n, 0, x->dtype, ydims, x->ndim, err);
}

static q8_status gavg_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return gpool_infer(g, n, err, true);
}
static q8_status gmax_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return gpool_infer(g, n, err, false);
}

const q8_op_schema q8_schema_global_average_pool = {.infer = gavg_infer};
const q8_op_schema q8_schema_global_max_pool = {.infer = gmax_infer};
