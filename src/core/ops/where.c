/* Where: out = cond ? X : Y with cond (bool), X and Y broadcast together.
 * X and Y may have any dtype of 1, 2, 4 or 8 bytes (the same one). Params:
 * the broadcast plan (ops/broadcast.h). */
#include "op.h"
#include "ops/broadcast.h"

static bool elem_size_ok(q8_dtype t) {
    size_t s = q8_dtype_size(t);
    return s == 1 || s == 2 || s == 4 || s == 8;
}

static q8_status where_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 3, 3, 1, 1, err));
    for (int i = 0; i < 3; i++) Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *c = q8_in(g, n, 0), *a = q8_in(g, n, 1), *b = q8_in(g, n, 2);
    if (c->dtype != Q8_BOOL)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "condition '%s' is %s, expected bool",
                            c->name, q8_dtype_name(c->dtype));
    if (a->dtype != b->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "X is %s and Y is %s, expected one dtype",
                            q8_dtype_name(a->dtype), q8_dtype_name(b->dtype));
    if (!elem_size_ok(a->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(a->dtype));
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_bcast_shapes(g, n, 0, 3, dims, &nd, err));
    Q8_TRY(q8_bcast_plan_new(n, g, 0, 3, dims, nd, err));
    return q8_set_output(g, n, 0, a->dtype, dims, nd, err);
}

const q8_op_schema q8_schema_where = {.infer = where_infer, .flags = Q8_OPF_INPLACE};
