/* The CUDA plans of the elementwise ops: unary float32 activations and math
 * (unary.cu), Relu and Clip on int8 too, and Add / Sub / Mul / Div on
 * float32 with numpy broadcasting (binary.cu). Attribute defaults are those
 * of kernels/cpu/ops/unary.c and clip.c. */
#include <float.h>
#include <string.h>

#include "backend_cuda.h"
#include "broadcast.h"

static bool has_input(const q8_node *n, int i) { return i < n->n_inputs && n->inputs[i] >= 0; }

static q8_status unary_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_unary(q8_cu_stream(c), p), n, n->op_type, err);
}

typedef struct ukind {
    const char *name;
    int kind;
    float alpha, beta;          /* attribute defaults */
    bool i8;                    /* also on int8 data */
} ukind;

static const ukind k_unary[] = {
    {"Relu", Q8CU_U_RELU, 0, 0, true},
    {"LeakyRelu", Q8CU_U_LEAKY_RELU, 0.01f, 0, false},
    {"Sigmoid", Q8CU_U_SIGMOID, 0, 0, false},
    {"HardSigmoid", Q8CU_U_HARD_SIGMOID, 0.2f, 0.5f, false},
    {"HardSwish", Q8CU_U_HARD_SWISH, 1.0f / 6.0f, 0.5f, false},
    {"Tanh", Q8CU_U_TANH, 0, 0, false},
    {"Gelu", Q8CU_U_GELU, 0, 0, false},
    {"Erf", Q8CU_U_ERF, 0, 0, false},
    {"Sqrt", Q8CU_U_SQRT, 0, 0, false},
    {"Exp", Q8CU_U_EXP, 0, 0, false},
    {"Log", Q8CU_U_LOG, 0, 0, false},
    {"Abs", Q8CU_U_ABS, 0, 0, false},
    {"Neg", Q8CU_U_NEG, 0, 0, false},
    {"Reciprocal", Q8CU_U_RECIPROCAL, 0, 0, false},
};

q8_status q8_cu_unary_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    const ukind *u = NULL;
    for (size_t i = 0; i < sizeof k_unary / sizeof k_unary[0] && !u; i++)
        if (strcmp(k_unary[i].name, n->op_type) == 0) u = &k_unary[i];
    Q8_ASSERT(u);
    const q8_tensor *x = q8_in(g, n, 0);
    bool i8 = x->dtype == Q8_I8;
    if (x->dtype != Q8_F32 && !(i8 && u->i8))
        return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(x->dtype));
    q8cu_unary_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->n = q8_tensor_numel(x);
    p->kind = i8 ? Q8CU_U_RELU_I8 : u->kind;
    p->alpha = q8_attr_float(n, "alpha", u->alpha);
    p->beta = q8_attr_float(n, "beta", u->beta);
    if (u->kind == Q8CU_U_HARD_SWISH) { /* fixed constants, no attributes */
        p->alpha = u->alpha;
        p->beta = u->beta;
    }
    if (u->kind == Q8CU_U_GELU) {
        const char *ap = q8_attr_str(n, "approximate", "none");
        if (strcmp(ap, "tanh") == 0) p->kind = Q8CU_U_GELU_TANH;
        else if (strcmp(ap, "none") != 0) return q8_cu_unsupported(err, n, "approximate '%s'", ap);
    }
    nd->run = unary_run;
    return Q8_OK;
}

/* Clip: bounds from attributes (opset < 11) or constant scalar inputs. */
q8_status q8_cu_clip_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && x->dtype != Q8_I8)
        return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(x->dtype));
    q8cu_unary_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    bool i8 = x->dtype == Q8_I8;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->n = q8_tensor_numel(x);
    p->kind = i8 ? Q8CU_U_CLIP_I8 : Q8CU_U_CLIP;
    p->lo = -INFINITY;
    p->hi = INFINITY;
    p->ilo = -128;
    p->ihi = 127;
    if (g->opset < 11) {
        p->lo = q8_attr_float(n, "min", -FLT_MAX);
        p->hi = q8_attr_float(n, "max", FLT_MAX);
    }
    for (int i = 1; i < 3; i++) {
        if (!has_input(n, i)) continue;
        const q8_tensor *b = q8_in(g, n, i);
        if (!b->data)
            return q8_cu_unsupported(err, n, "a computed %s bound (it must be a constant)",
                                     i == 1 ? "min" : "max");
        if (i8) *(i == 1 ? &p->ilo : &p->ihi) = *(const int8_t *)b->data;
        else *(i == 1 ? &p->lo : &p->hi) = *(const float *)b->data;
    }
    nd->run = unary_run;
    return Q8_OK;
}

/* ---- binary ---------------------------------------------------------------- */

static q8_status binary_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_binary(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_binary_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1), *y = q8_out(g, n, 0);
    if (a->dtype != Q8_F32 || b->dtype != Q8_F32)
        return q8_cu_unsupported(err, n, "%s data (float32 only)", q8_dtype_name(a->dtype));
    if (q8_attr_find(n, "broadcast"))
        return q8_cu_unsupported(err, n, "the legacy broadcast attribute (opset < 7)");
    if (y->ndim > Q8CU_MAX_DIMS) return q8_cu_unsupported(err, n, "rank %d", y->ndim);
    q8cu_binary_args *p = q8_cu_params(nd, sizeof *p);
    q8_bcast *bc = malloc(q8_bcast_bytes(2));
    if (!p || !bc) {
        free(bc);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    const int64_t *dims[2] = {a->dims, b->dims};
    int nds[2] = {a->ndim, b->ndim};
    q8_bcast_plan_init(bc, y->dims, y->ndim, 2, dims, nds);
    p->ndim = bc->ndim;
    p->n = bc->numel;
    for (int d = 0; d < bc->ndim; d++) {
        p->dims[d] = bc->dims[d];
        p->sa[d] = bc->strides[d];
        p->sb[d] = bc->strides[Q8_MAX_DIMS + d];
    }
    free(bc);
    const char *op = n->op_type;
    p->op = strcmp(op, "Add") == 0 ? Q8CU_B_ADD : strcmp(op, "Sub") == 0 ? Q8CU_B_SUB
            : strcmp(op, "Mul") == 0 ? Q8CU_B_MUL : Q8CU_B_DIV;
    p->a = q8_cu_tensor(pr, g, n->inputs[0]);
    p->b = q8_cu_tensor(pr, g, n->inputs[1]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = binary_run;
    return Q8_OK;
}
