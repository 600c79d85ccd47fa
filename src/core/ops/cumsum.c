/* CumSum (see cumsum.h). */
#include "ops/cumsum.h"

#include "op.h"

static q8_status cumsum_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    q8_dtype t = x->dtype;
    if (t != Q8_F32 && t != Q8_F64 && t != Q8_I32 && t != Q8_I64 && t != Q8_U32 && t != Q8_U64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(t));
    if (x->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' is a scalar, expected rank >= 1",
                            x->name);
    int64_t ax[1];
    int na = 0;
    Q8_TRY(q8_const_ints(g, n, 1, ax, 1, &na, err));
    int axis;
    if (na != 1 || !q8_norm_axis(ax[0], x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis must be one value in [-%d, %d)",
                            x->ndim, x->ndim);
    int64_t ex = q8_attr_int(n, "exclusive", 0), rev = q8_attr_int(n, "reverse", 0);
    if ((ex != 0 && ex != 1) || (rev != 0 && rev != 1))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "exclusive and reverse must be 0 or 1");
    q8_cumsum_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->dtype = t;
    p->exclusive = ex == 1;
    p->reverse = rev == 1;
    q8_axis_split(x, axis, &p->outer, &p->len, &p->inner);
    return q8_set_output(g, n, 0, t, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_cumsum = {.infer = cumsum_infer};
