/* Expand: broadcast the input to a shape given by a constant int64 tensor
 * (bidirectional: the result is broadcast(input shape, shape), so a 1 in
 * shape keeps the input's dim). Any dtype of 1, 2, 4 or 8 bytes. Params:
 * the broadcast plan (ops/broadcast.h). */
#include "op.h"
#include "ops/broadcast.h"

static bool elem_size_ok(q8_dtype t) {
    size_t s = q8_dtype_size(t);
    return s == 1 || s == 2 || s == 4 || s == 8;
}

static q8_status expand_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *a = q8_in(g, n, 0), *s = q8_in(g, n, 1);
    if (!elem_size_ok(a->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(a->dtype));
    if (s->ndim != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "shape input has rank %d, expected 1",
                            s->ndim);
    int64_t shape[Q8_MAX_DIMS], dims[Q8_MAX_DIMS];
    int ns, nd;
    Q8_TRY(q8_const_ints(g, n, 1, shape, Q8_MAX_DIMS, &ns, err));
    for (int i = 0; i < ns; i++)
        if (shape[i] < 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "shape[%d] is %lld, expected >= 0", i,
                                (long long)shape[i]);
    Q8_TRY(q8_broadcast_shape(n, a->dims, a->ndim, shape, ns, dims, &nd, err));
    Q8_TRY(q8_bcast_plan_new(n, g, 0, 1, dims, nd, err));
    return q8_set_output(g, n, 0, a->dtype, dims, nd, err);
}

/* In place only when nothing is expanded: then the copy is skipped. */
const q8_op_schema q8_schema_expand = {.infer = expand_infer, .flags = Q8_OPF_INPLACE};
