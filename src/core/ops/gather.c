/* Gather (see gather.h). */
#include "ops/gather.h"

#include "op.h"
#include "ops/tensor_args.h"

static q8_status gather_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *it = q8_in(g, n, 1);
    if (it->dtype != Q8_I64 && it->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "indices '%s' are %s, expected int32 or int64",
                            it->name, q8_dtype_name(it->dtype));
    if (x->ndim < 1) return q8_node_fail(err, Q8_ERR_SHAPE, n, "data must have rank >= 1, not 0");
    int64_t ax = q8_attr_int(n, "axis", 0);
    int axis;
    if (!q8_norm_axis(ax, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axis %lld is out of range for rank %d",
                            (long long)ax, x->ndim);
    int rank = x->ndim - 1 + it->ndim;
    if (rank > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", rank,
                            Q8_MAX_DIMS);
    int64_t dim = x->dims[axis];
    if (it->data) {
        int64_t ni = q8_tensor_numel(it);
        for (int64_t i = 0; i < ni; i++) {
            int64_t v = q8_ta_index(it->dtype, it->data, i);
            if (v < -dim || v >= dim)
                return q8_node_fail(
                    err, Q8_ERR_SHAPE, n,
                    "index %lld (at position %lld of '%s') is out of range for axis "
                    "%d of size %lld",
                    (long long)v, (long long)i, it->name, axis, (long long)dim);
        }
    }
    int64_t dims[Q8_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < axis; d++) dims[k++] = x->dims[d];
    for (int d = 0; d < it->ndim; d++) dims[k++] = it->dims[d];
    for (int d = axis + 1; d < x->ndim; d++) dims[k++] = x->dims[d];
    q8_gather_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->axis = axis;
    p->esize = es;
    return q8_set_output(g, n, 0, x->dtype, dims, rank, err);
}

const q8_op_schema q8_schema_gather = {.infer = gather_infer};
