/* GatherND (see gathernd.h). */
#include "ops/gathernd.h"

#include "op.h"
#include "ops/tensor_args.h"

static q8_status gnd_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *it = q8_in(g, n, 1);
    if (it->dtype != Q8_I64 && it->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "indices '%s' are %s, expected int64",
                            it->name, q8_dtype_name(it->dtype));
    int64_t b = q8_attr_int(n, "batch_dims", 0);
    char sa[96], sb[96];
    q8_shape_str(it->dims, it->ndim, sa, sizeof sa);
    q8_shape_str(x->dims, x->ndim, sb, sizeof sb);
    if (x->ndim < 1 || it->ndim < 1 || b < 0 || b >= x->ndim || b >= it->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "batch_dims %lld does not fit data %s and indices %s", (long long)b, sb,
                            sa);
    int64_t k = it->dims[it->ndim - 1];
    if (k < 1 || k > x->ndim - b)
        return q8_node_fail(
            err, Q8_ERR_SHAPE, n,
            "indices %s: last dim %lld must be in 1..%lld (data %s, batch_dims %lld)", sa,
            (long long)k, (long long)(x->ndim - b), sb, (long long)b);
    for (int d = 0; d < b; d++)
        if (x->dims[d] != it->dims[d])
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "batch dim %d differs: data %s, indices %s",
                                d, sb, sa);
    if (it->data) {
        int64_t nt = q8_tensor_numel(it) / k;
        for (int64_t t = 0; t < nt; t++)
            for (int64_t j = 0; j < k; j++) {
                int64_t v = q8_ta_index(it->dtype, it->data, t * k + j), dim = x->dims[b + j];
                if (v < -dim || v >= dim)
                    return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                        "index %lld (at position %lld of '%s') is out of range for "
                                        "axis %lld of size %lld",
                                        (long long)v, (long long)(t * k + j), it->name,
                                        (long long)(b + j), (long long)dim);
            }
    }
    int64_t dims[2 * Q8_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < it->ndim - 1; d++) dims[nd++] = it->dims[d];
    for (int d = (int)(b + k); d < x->ndim; d++) dims[nd++] = x->dims[d];
    if (nd > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", nd,
                            Q8_MAX_DIMS);
    q8_gather_nd_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->batch = (int)b;
    p->k = (int)k;
    p->esize = es;
    return q8_set_output(g, n, 0, x->dtype, dims, nd, err);
}

const q8_op_schema q8_schema_gather_nd = {.infer = gnd_infer};
