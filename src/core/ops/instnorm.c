/* InstanceNormalization, MeanVarianceNormalization and LRN (see
 * instnorm.h). */
#include "ops/instnorm.h"

#include <string.h>

#include "op.h"

static q8_status instnorm_infer(q8_graph *g, q8_node *n, q8_error *err) {
    bool inst = n->op == Q8_OP_INSTANCE_NORMALIZATION, lrn = n->op == Q8_OP_LRN;
    Q8_TRY(q8_check_io(n, inst ? 3 : 1, inst ? 3 : 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < (lrn || inst ? 2 : 1))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has rank %d, expected >= %d",
                            x->name, x->ndim, lrn || inst ? 2 : 1);
    q8_instnorm_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->rank = x->ndim;
    memcpy(p->dims, x->dims, sizeof(int64_t) * (size_t)x->ndim);
    if (inst) {
        p->kind = Q8_NORM_INSTANCE;
        for (int i = 1; i <= 2; i++) {
            Q8_TRY(q8_check_input(g, n, i, Q8_F32, err));
            const q8_tensor *t = q8_in(g, n, i);
            if (t->ndim != 1 || t->dims[0] != x->dims[1])
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s must be [%lld] (the channels)",
                                    i == 1 ? "scale" : "B", (long long)x->dims[1]);
        }
        p->epsilon = q8_attr_float(n, "epsilon", 1e-5f);
    } else if (lrn) {
        p->kind = Q8_NORM_LRN;
        p->size = q8_attr_int(n, "size", 0);
        if (p->size < 1)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "size %lld: expected a positive number",
                                (long long)p->size);
        p->alpha = q8_attr_float(n, "alpha", 1e-4f);
        p->beta = q8_attr_float(n, "beta", 0.75f);
        p->bias = q8_attr_float(n, "bias", 1.0f);
    } else {
        p->kind = Q8_NORM_MVN;
        int na = 0;
        const int64_t *axes = q8_attr_ints(n, "axes", &na);
        static const int64_t def[3] = {0, 2, 3};
        if (!axes) {
            axes = def;
            na = 3;
        }
        for (int i = 0; i < na; i++) {
            int a;
            if (!q8_norm_axis(axes[i], x->ndim, &a))
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                                    (long long)axes[i], x->ndim);
            p->reduce[a] = true;
        }
        p->groups = p->group_len = 1;
        for (int d = 0; d < x->ndim; d++) *(p->reduce[d] ? &p->group_len : &p->groups) *= x->dims[d];
    }
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_instance_normalization = {.infer = instnorm_infer};
const q8_op_schema q8_schema_mean_variance_normalization = {.infer = instnorm_infer};
const q8_op_schema q8_schema_lrn = {.infer = instnorm_infer};
