/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (see loss.h). */
#include "ops/loss.h"

#include <string.h>

#include "op.h"

static q8_status loss_infer(q8_graph *g, q8_node *n, q8_error *err) {
    bool sce = n->op == Q8_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
    Q8_TRY(q8_check_io(n, 2, 3, 1, sce ? 2 : 1, err));
    if (n->outputs[0] < 0) return q8_node_fail(err, Q8_ERR_FORMAT, n, "has no loss output");
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *t = q8_in(g, n, 1);
    if (x->dtype != Q8_F32 && x->dtype != Q8_F64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, expected float32 or "
                            "float64", q8_dtype_name(x->dtype));
    if (t->dtype != Q8_I32 && t->dtype != Q8_I64)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "targets are %s, expected int32 or int64",
                            q8_dtype_name(t->dtype));
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input has rank %d, expected >= 2 ([N, C, ...])",
                            x->ndim);
    bool same = t->ndim == x->ndim - 1 && t->dims[0] == x->dims[0];
    for (int i = 2; same && i < x->ndim; i++) same = t->dims[i - 1] == x->dims[i];
    if (!same)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "targets must have the input's shape without "
                            "its dim 1 (C)");
    bool w = q8_has_input(n, 2);
    if (w) {
        Q8_TRY(q8_check_input(g, n, 2, x->dtype, err));
        const q8_tensor *wt = q8_in(g, n, 2);
        if (wt->ndim != 1 || wt->dims[0] != x->dims[1])
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "weights must be [C] = [%lld]",
                                (long long)x->dims[1]);
    }
    const char *rs = q8_attr_str(n, "reduction", "mean");
    q8_loss_reduction red = !strcmp(rs, "none") ? Q8_LOSS_NONE
                            : !strcmp(rs, "sum") ? Q8_LOSS_SUM
                            : !strcmp(rs, "mean") ? Q8_LOSS_MEAN : (q8_loss_reduction)-1;
    if ((int)red < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "reduction '%s': expected none, sum or mean",
                            rs);
    q8_loss_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->dtype = x->dtype;
    p->target_dtype = t->dtype;
    p->softmax = sce;
    p->has_weight = w;
    p->has_ignore = q8_attr_find(n, "ignore_index") != NULL;
    p->ignore_index = q8_attr_int(n, "ignore_index", 0);
    p->reduction = red;
    p->n = x->dims[0];
    p->c = x->dims[1];
    p->d = 1;
    for (int i = 2; i < x->ndim; i++) p->d *= x->dims[i];
    /* a reduced loss is a scalar */
    Q8_TRY(q8_set_output(g, n, 0, x->dtype, t->dims, red == Q8_LOSS_NONE ? t->ndim : 0, err));
    /* SCE's log_prob: an unnamed output is not made */
    return sce ? q8_set_output(g, n, 1, x->dtype, x->dims, x->ndim, err) : Q8_OK;
}

const q8_op_schema q8_schema_nll_loss = {.infer = loss_infer};
const q8_op_schema q8_schema_softmax_cross_entropy_loss = {.infer = loss_infer};
