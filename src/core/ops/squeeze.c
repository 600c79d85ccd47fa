/* Squeeze and Unsqueeze: views that remove or insert size-1 dims, at the
 * axes of the constant input 1. */
#include "op.h"
#include "ops/tensor_args.h"

static q8_status squeeze_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t axes[Q8_MAX_DIMS];
    int na = 0;
    bool present = q8_in(g, n, 1) != NULL;
    if (present) Q8_TRY(q8_const_ints(g, n, 1, axes, Q8_MAX_DIMS, &na, err));
    Q8_TRY(q8_ta_norm_axes(n, "axes", axes, na, x->ndim, err));
    bool drop[Q8_MAX_DIMS] = {0};
    char sa[96];
    for (int i = 0; i < na; i++) {
        if (x->dims[axes[i]] != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "cannot squeeze axis %d of shape %s: its size is %lld, not 1",
                                (int)axes[i], q8_shape_str(x->dims, x->ndim, sa, sizeof sa),
                                (long long)x->dims[axes[i]]);
        drop[axes[i]] = true;
    }
    /* No (or empty) axes: every size-1 dim goes. */
    if (!present || na == 0)
        for (int i = 0; i < x->ndim; i++) drop[i] = x->dims[i] == 1;
    int64_t dims[Q8_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < x->ndim; i++)
        if (!drop[i]) dims[nd++] = x->dims[i];
    return q8_set_output(g, n, 0, x->dtype, dims, nd, err);
}

static q8_status unsqueeze_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t axes[Q8_MAX_DIMS];
    int na = 0;
    bool present = q8_in(g, n, 1) != NULL;
    if (present) Q8_TRY(q8_const_ints(g, n, 1, axes, Q8_MAX_DIMS, &na, err));
    if (!present) return q8_node_fail(err, Q8_ERR_FORMAT, n, "axes are missing");
    int rank = x->ndim + na;
    if (rank > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", rank,
                            Q8_MAX_DIMS);
    /* Negative axes count from the end of the output. */
    Q8_TRY(q8_ta_norm_axes(n, "axes", axes, na, rank, err));
    bool ins[Q8_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) ins[axes[i]] = true;
    int64_t dims[Q8_MAX_DIMS];
    for (int i = 0, k = 0; i < rank; i++) dims[i] = ins[i] ? 1 : x->dims[k++];
    return q8_set_output(g, n, 0, x->dtype, dims, rank, err);
}

const q8_op_schema q8_schema_squeeze = {.infer = squeeze_infer, .flags = Q8_OPF_VIEW};
const q8_op_schema q8_schema_unsqueeze = {.infer = unsqueeze_infer, .flags = Q8_OPF_VIEW};
