/* Concat (see concat.h). */
#include "ops/concat.h"

#include <string.h>

#include "op.h"
#include "ops/tensor_args.h"

static q8_status concat_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1 << 20, 1, 1, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    const q8_tensor *x0 = q8_in(g, n, 0);
    const q8_attr *aa = q8_attr_find(n, "axis");
    if (!aa || aa->type != Q8_ATTR_INT)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute 'axis' is missing");
    int axis;
    if (!q8_norm_axis(aa->i, x0->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axis %lld is out of range for rank %d",
                            (long long)aa->i, x0->ndim);
    int64_t dims[Q8_MAX_DIMS];
    memcpy(dims, x0->dims, sizeof dims);
    dims[axis] = 0;
    char sa[96], sb[96];
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0) return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", i);
        Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
        const q8_tensor *t = q8_in(g, n, i);
        if (t->dtype != x0->dtype)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d ('%s') is %s, input 0 is %s", i,
                                t->name, q8_dtype_name(t->dtype), q8_dtype_name(x0->dtype));
        bool ok = t->ndim == x0->ndim;
        for (int d = 0; ok && d < t->ndim; d++) ok = d == axis || t->dims[d] == x0->dims[d];
        if (!ok)
            return q8_node_fail(
                err, Q8_ERR_SHAPE, n,
                "input %d ('%s') has shape %s, input 0 has %s: all dims but axis %d "
                "must match",
                i, t->name, q8_shape_str(t->dims, t->ndim, sa, sizeof sa),
                q8_shape_str(x0->dims, x0->ndim, sb, sizeof sb), axis);
        dims[axis] += t->dims[axis];
    }
    q8_concat_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->axis = axis;
    p->esize = es;
    return q8_set_output(g, n, 0, x0->dtype, dims, x0->ndim, err);
}

const q8_op_schema q8_schema_concat = {.infer = concat_infer};
