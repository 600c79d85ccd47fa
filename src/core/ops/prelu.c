/* PRelu: y = x < 0 ? slope * x : x, slope broadcast to X's shape
 * (unidirectional: the output always has X's shape). float32 and float64.
 * Params: the broadcast plan (ops/broadcast.h). */
#include <string.h>

#include "op.h"
#include "ops/elementwise.h"

static q8_status prelu_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *s = q8_in(g, n, 1);
    if (x->dtype != s->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "X is %s and slope %s, expected one dtype",
                            q8_dtype_name(x->dtype), q8_dtype_name(s->dtype));
    if (!q8_ew_dtype_in(Q8_EW_DT_FLOATS, x->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(x->dtype));
    const int64_t *sd = s->dims;
    int64_t dims[Q8_MAX_DIMS];
    int sn = s->ndim, nd;
    char sx[96], ss[96];
    bool ok = sn <= x->ndim;
    for (int d = 0; ok && d < sn; d++)
        ok = sd[d] == 1 || sd[d] == x->dims[x->ndim - sn + d];
    if (!ok)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "slope shape %s does not broadcast to X shape %s",
                            q8_shape_str(s->dims, s->ndim, ss, sizeof ss),
                            q8_shape_str(x->dims, x->ndim, sx, sizeof sx));
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->ndim);
    nd = x->ndim;
    const int64_t *in_dims[2] = {x->dims, sd};
    int in_nd[2] = {x->ndim, sn};
    Q8_TRY(q8_bcast_plan_dims(n, dims, nd, 2, in_dims, in_nd, err));
    return q8_set_output(g, n, 0, x->dtype, dims, nd, err);
}

const q8_op_schema q8_schema_prelu = {.infer = prelu_infer, .flags = Q8_OPF_INPLACE};
