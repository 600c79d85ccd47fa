/* Clip (see clip.h). */
#include "ops/clip.h"

#include "op.h"
#include "ops/elementwise.h"

static q8_status clip_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (!q8_ew_dtype_in(Q8_EW_DT_NUMS, x->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(x->dtype));
    for (int i = 1; i < 3; i++) {
        if (!q8_has_input(n, i)) continue;
        const q8_tensor *b = q8_in(g, n, i);
        Q8_TRY(q8_check_input(g, n, i, x->dtype, err));
        if (q8_tensor_numel(b) != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s ('%s') has %lld values, expected 1",
                                i == 1 ? "min" : "max", b->name, (long long)q8_tensor_numel(b));
    }
    q8_clip_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->has_lo = q8_has_input(n, 1);
    p->has_hi = q8_has_input(n, 2);
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_clip = {.infer = clip_infer, .flags = Q8_OPF_INPLACE};
