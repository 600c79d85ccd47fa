/* q8.QPRelu (the definition: qprelu.h). Inputs X (int8, per-tensor scale)
 * and slope (constant float32, 1 or C values); attribute y_scale. */
#include "ops/qprelu.h"

#include "op.h"
#include "ops/qop.h"

static q8_status qprelu_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    float sx, sy;
    bool i8;
    Q8_TRY(q8_qop_act_scale(g, n, 0, "X", &sx, err));
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    if (!i8) return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is missing");
    const q8_tensor *x = q8_in(g, n, 0), *s = q8_in(g, n, 1);
    int64_t ns = s ? q8_tensor_numel(s) : 0;
    bool per_channel = ns > 1 && x->ndim >= 2 && ns == x->dims[1];
    if (!s || !s->data || s->dtype != Q8_F32 || (ns != 1 && !per_channel))
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "the slope must be a constant float32 of 1 value or one per "
                            "channel of X (dim 1)");
    q8_qprelu_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    int64_t total = q8_tensor_numel(x);
    p->sx = sx;
    p->sy = sy;
    p->channels = ns;
    p->inner = total;
    p->planes = 1;
    if (per_channel) {
        p->inner = 1;
        for (int d = 2; d < x->ndim; d++) p->inner *= x->dims[d];
        p->planes = x->dims[0] * x->dims[1];
    }
    Q8_TRY(q8_set_output(g, n, 0, Q8_I8, x->dims, x->ndim, err));
    return q8_qop_set_out_scale(g, n, sy, err);
}

const q8_op_schema q8_schema_qprelu = {.infer = qprelu_infer, .flags = Q8_OPF_INPLACE};
