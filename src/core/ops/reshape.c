/* Reshape: a view of its input with a new shape, the constant input 1: 0
 * copies the input dim (unless allowzero=1, then it is a real 0), one -1 is
 * inferred. */
#include "op.h"
#include "ops/tensor_args.h"

static q8_status reshape_infer(q8_graph *g, q8_node *n, q8_error *err) {
    int64_t shape[Q8_MAX_DIMS];
    int ns = 0;
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_const_ints(g, n, 1, shape, Q8_MAX_DIMS, &ns, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    bool allowzero = q8_attr_int(n, "allowzero", 0) != 0;
    int64_t dims[Q8_MAX_DIMS], known = 1;
    int infer_at = -1;
    char sa[96], sb[160];
    for (int i = 0; i < ns; i++) {
        int64_t s = shape[i];
        if (s == -1) {
            if (infer_at >= 0)
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "shape %s has more than one -1",
                                    q8_ta_list_str(shape, ns, sb, sizeof sb));
            infer_at = i;
            dims[i] = 1;
            continue;
        }
        if (s < -1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "shape %s has the invalid value %lld",
                                q8_ta_list_str(shape, ns, sb, sizeof sb), (long long)s);
        if (s == 0 && !allowzero) {
            if (i >= x->ndim)
                return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                    "shape %s copies dim %d (0) but the input %s has rank %d",
                                    q8_ta_list_str(shape, ns, sb, sizeof sb), i,
                                    q8_shape_str(x->dims, x->ndim, sa, sizeof sa), x->ndim);
            s = x->dims[i];
        }
        dims[i] = s;
        if (__builtin_mul_overflow(known, s, &known))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "shape %s is too large",
                                q8_ta_list_str(shape, ns, sb, sizeof sb));
    }
    int64_t numel = q8_tensor_numel(x);
    if (infer_at >= 0) {
        if (known == 0 || numel % known != 0)
            return q8_node_fail(
                err, Q8_ERR_SHAPE, n,
                "cannot reshape %s (%lld elements) to %s: the -1 cannot be inferred",
                q8_shape_str(x->dims, x->ndim, sa, sizeof sa), (long long)numel,
                q8_ta_list_str(shape, ns, sb, sizeof sb));
        dims[infer_at] = numel / known;
        known = numel;
    }
    if (known != numel)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "cannot reshape %s (%lld elements) to %s (%lld elements)",
                            q8_shape_str(x->dims, x->ndim, sa, sizeof sa), (long long)numel,
                            q8_ta_list_str(shape, ns, sb, sizeof sb), (long long)known);
    return q8_set_output(g, n, 0, x->dtype, dims, ns, err);
}

const q8_op_schema q8_schema_reshape = {.infer = reshape_infer, .flags = Q8_OPF_VIEW};
