/* BatchNormalization (see batchnorm.h). */
#include "ops/batchnorm.h"

#include "op.h"

static q8_status bn_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 5, 5, 1, 5, err));
    if (q8_attr_int(n, "training_mode", 0) != 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "training mode is not supported (training_mode=1); export the model "
                            "in eval mode");
    for (int i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] >= 0)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "output %d (running or saved mean/var) is a training output and "
                                "is not supported; only Y can be computed in inference",
                                i);
    for (int i = 0; i < 5; i++) Q8_TRY(q8_check_input(g, n, i, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "X has rank %d, expected at least 2 (N x C x ...)", x->ndim);
    int64_t s = 1;
    for (int d = 2; d < x->ndim; d++) s *= x->dims[d];
    int64_t c = x->dims[1];
    static const char *const names[] = {"X", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        if (q8_tensor_numel(t) != c) {
            char sb[96];
            return q8_node_fail(
                err, Q8_ERR_SHAPE, n, "%s has shape %s (%lld values), expected %lld (one per "
                "channel)", names[i], q8_shape_str(t->dims, t->ndim, sb, sizeof sb),
                (long long)q8_tensor_numel(t), (long long)c);
        }
    }
    float eps = q8_attr_float(n, "epsilon", 1e-5f);
    if (!(eps >= 0.0f))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "epsilon is %g, expected >= 0", eps);
    q8_batchnorm_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    *p = (q8_batchnorm_params){.rows = x->dims[0] * c, .c = c, .s = s, .eps = eps};
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_batch_norm = {.infer = bn_infer, .flags = Q8_OPF_INPLACE};
