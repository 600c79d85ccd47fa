/* Shared infer of the plain binary elementwise ops; see elementwise.h. */
#include "ops/elementwise.h"

#include <stdio.h>

#include "op.h"

const char *q8_ew_dtype_list(unsigned set, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = 0;
    for (int t = 0; t < Q8_DTYPE_COUNT && used < size; t++)
        if (q8_ew_dtype_in(set, (q8_dtype)t))
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                                     q8_dtype_name((q8_dtype)t));
    return buf;
}

q8_status q8_ew_binary_plan(q8_graph *g, q8_node *n, int64_t *dims, int *nd, q8_error *err) {
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    Q8_TRY(q8_broadcast_shape(n, a->dims, a->ndim, b->dims, b->ndim, dims, nd, err));
    const int64_t *in_dims[2] = {a->dims, b->dims};
    int in_nd[2] = {a->ndim, b->ndim};
    return q8_bcast_plan_dims(n, dims, *nd, 2, in_dims, in_nd, err);
}

q8_status q8_ew_binary_infer(q8_graph *g, q8_node *n, unsigned dtypes, q8_dtype out_dtype,
                             q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (a->dtype != b->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "inputs have different dtypes (%s and %s)",
                            q8_dtype_name(a->dtype), q8_dtype_name(b->dtype));
    if (!q8_ew_dtype_in(dtypes, a->dtype)) {
        char list[256];
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported (only %s)",
                            q8_dtype_name(a->dtype), q8_ew_dtype_list(dtypes, list, sizeof list));
    }
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_ew_binary_plan(g, n, dims, &nd, err));
    return q8_set_output(g, n, 0, out_dtype ? out_dtype : a->dtype, dims, nd, err);
}
