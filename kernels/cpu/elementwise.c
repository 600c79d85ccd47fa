/* Shared infer / run of the plain binary elementwise ops. */
#include "elementwise.h"

#include <string.h>

const char *q8_ew_dtype_list(const q8_bcast_row_fn *rows, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = 0;
    for (int t = 0; t < Q8_DTYPE_COUNT && used < size; t++)
        if (rows[t])
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                                     q8_dtype_name((q8_dtype)t));
    return buf;
}

q8_status q8_ew_binary_plan(q8_graph *g, q8_node *n, int64_t *dims, int *nd, q8_error *err) {
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    int64_t bd[Q8_MAX_DIMS];
    int bn = b->ndim;
    memcpy(bd, b->dims, sizeof(int64_t) * (size_t)bn);
    /* Before opset 7, broadcast=1 broadcasts B onto A, aligned at `axis`
     * (default: trailing dims, as numpy): pad B with trailing 1s. */
    const q8_attr *ax = q8_attr_find(n, "axis");
    if (g->opset < 7 && q8_attr_int(n, "broadcast", 0) == 1 && ax) {
        int axis;
        if (!q8_norm_axis(ax->i, a->ndim, &axis) || axis + bn > a->ndim)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "axis %lld does not place B (rank %d) inside A (rank %d)",
                                (long long)ax->i, bn, a->ndim);
        while (bn < a->ndim - axis) bd[bn++] = 1;
    }
    Q8_TRY(q8_broadcast_shape(n, a->dims, a->ndim, bd, bn, dims, nd, err));
    const int64_t *in_dims[2] = {a->dims, bd};
    int in_nd[2] = {a->ndim, bn};
    return q8_bcast_plan_dims(n, dims, *nd, 2, in_dims, in_nd, err);
}

q8_status q8_ew_binary_infer(q8_graph *g, q8_node *n, const q8_bcast_row_fn *rows,
                             q8_dtype out_dtype, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (a->dtype != b->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "inputs have different dtypes (%s and %s)",
                            q8_dtype_name(a->dtype), q8_dtype_name(b->dtype));
    if (a->dtype <= Q8_UNDEFINED || a->dtype >= Q8_DTYPE_COUNT || !rows[a->dtype]) {
        char list[256];
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported (only %s)",
                            q8_dtype_name(a->dtype), q8_ew_dtype_list(rows, list, sizeof list));
    }
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_ew_binary_plan(g, n, dims, &nd, err));
    return q8_set_output(g, n, 0, out_dtype ? out_dtype : a->dtype, dims, nd, err);
}

void q8_ew_binary_run(const q8_exec *x, const q8_node *n, const q8_bcast_row_fn *rows,
                      int64_t grain) {
    const q8_tensor *a = q8_in(x->g, n, 0), *b = q8_in(x->g, n, 1), *o = q8_out(x->g, n, 0);
    const void *in[2] = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1)};
    size_t sz[2] = {q8_dtype_size(a->dtype), q8_dtype_size(b->dtype)};
    q8_bcast_run(x->pool, n->params, Q8_OUT_PTR(x, n, 0), q8_dtype_size(o->dtype), in, sz,
                 rows[a->dtype], NULL, grain);
}
