/* q8.QMul and q8.QMulF (the definitions: qmul.h). Inputs A and B: int8
 * activations with per-tensor scales, B of A's shape or broadcast over A's
 * trailing dims; attribute y_scale: the output's scale (QMulF: a_scale and
 * b_scale too). */
#include "ops/qmul.h"

#include <math.h>

#include "op.h"
#include "ops/qop.h"

bool q8_qmul_broadcasts(const q8_tensor *a, const q8_tensor *b, int64_t *inner) {
    if (a->ndim != b->ndim) return false;
    int d = 0;
    while (d < a->ndim && b->dims[d] == a->dims[d]) d++;
    int64_t in = 1;
    for (int k = d; k < a->ndim; k++) {
        if (b->dims[k] != 1) return false;
        in *= a->dims[k];
    }
    if (inner) *inner = in;
    return true;
}

void q8_qmul_multiplier(double r, q8_qmul_params *p) {
    int s = 30;
    while (s > 1 && nearbyint(ldexp(r, s)) > 32767) s--;
    double m = nearbyint(ldexp(r, s));
    p->m = (int32_t)(m > 32767 ? 32767 : m); /* only r > 2^14: every nonzero product saturates */
    p->shift = s;
}

/* A and B int8 activations, B of A's shape or its leading dims then 1s;
 * *inner: elements of A per value of B. */
static q8_status check_operands(q8_graph *g, q8_node *n, float *sa, float *sb, int64_t *inner,
                                q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_qop_act_scale(g, n, 0, "A", sa, err));
    Q8_TRY(q8_qop_act_scale(g, n, 1, "B", sb, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (!q8_qmul_broadcasts(a, b, inner))
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "B '%s' must have A '%s''s shape or its leading dims and 1s after "
                            "them (%s broadcasts only so)", b->name, a->name, n->op_type);
    return q8_set_output(g, n, 0, Q8_I8, a->dims, a->ndim, err);
}

static q8_status qmul_infer(q8_graph *g, q8_node *n, q8_error *err) {
    float sa, sb, sy;
    int64_t inner = 1;
    Q8_TRY(check_operands(g, n, &sa, &sb, &inner, err));
    bool i8;
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    if (!i8) return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is missing");
    q8_qmul_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    q8_qmul_multiplier((double)sa * sb / sy, p);
    p->outer = q8_tensor_numel(q8_in(g, n, 1));
    p->inner = inner;
    return q8_qop_set_out_scale(g, n, sy, err);
}

const q8_op_schema q8_schema_qmul = {.infer = qmul_infer, .flags = Q8_OPF_INPLACE};

/* q8.QMulF (qmul.h): the scales are attributes (the fused
 * DequantizeLinear and QuantizeLinear nodes' own, bit for bit); the
 * operands' tensor scales must agree with them. */
static q8_status scale_attr(const q8_node *n, const char *name, float tensor_scale, float *v,
                            q8_error *err) {
    const q8_attr *a = q8_attr_find(n, name);
    if (!a || a->type != Q8_ATTR_FLOAT)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute %s (float) is missing", name);
    if (!(a->f > 0) || !isfinite(a->f) || (tensor_scale > 0 && a->f != tensor_scale))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s is %g (the tensor's scale: %g)", name,
                            a->f, tensor_scale);
    *v = a->f;
    return Q8_OK;
}

static q8_status qmulf_infer(q8_graph *g, q8_node *n, q8_error *err) {
    float sa, sb;
    int64_t inner = 1;
    Q8_TRY(check_operands(g, n, &sa, &sb, &inner, err));
    q8_qmulf_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    Q8_TRY(scale_attr(n, "a_scale", sa, &p->sa, err));
    Q8_TRY(scale_attr(n, "b_scale", sb, &p->sb, err));
    Q8_TRY(scale_attr(n, "y_scale", 0, &p->sy, err));
    p->outer = q8_tensor_numel(q8_in(g, n, 1));
    p->inner = inner;
    return q8_qop_set_out_scale(g, n, p->sy, err);
}

const q8_op_schema q8_schema_qmul_f = {.infer = qmulf_infer, .flags = Q8_OPF_INPLACE};
