/* The CUDA plans of the elementwise ops: unary float32 activations and math
 * (unary.cu), Relu and Clip on int8 too, Add / Sub / Mul / Div / PRelu on
 * float32 with numpy broadcasting (binary.cu), Max / Min / Sum / Mean
 * (variadic.cu), Cast / CastLike between every
 * numeric dtype and bool (cast.cu), and q8.EwChain (ewchain.cu). Each reads the params the core's infer
 * made (src/core/ops/unary.h, clip.h, broadcast.h, cast.h); what is
 * left here is turning them into kernel parameters and refusing the cases
 * the kernels do not cover. */
#include <math.h>

#include "backend_cuda.h"
#include "ops/broadcast.h"
#include "ops/cast.h"
#include "ops/clip.h"
#include "ops/ewchain.h"
#include "ops/unary.h"

static q8_status unary_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_unary(q8_cu_stream(c), p), n, n->op_type, err);
}

/* The kernel's kind for a core unary kind; -1: none (the op table only
 * sends the ops that have one). */
static int cu_unary_kind(q8_unary_kind k) {
    switch (k) {
    case Q8_UNARY_RELU: return Q8CU_U_RELU;
    case Q8_UNARY_LEAKY_RELU: return Q8CU_U_LEAKY_RELU;
    case Q8_UNARY_SIGMOID: return Q8CU_U_SIGMOID;
    case Q8_UNARY_HARD_SIGMOID: return Q8CU_U_HARD_SIGMOID;
    case Q8_UNARY_HARD_SWISH: return Q8CU_U_HARD_SWISH;
    case Q8_UNARY_TANH: return Q8CU_U_TANH;
    case Q8_UNARY_GELU: return Q8CU_U_GELU;
    case Q8_UNARY_GELU_TANH: return Q8CU_U_GELU_TANH;
    case Q8_UNARY_ERF: return Q8CU_U_ERF;
    case Q8_UNARY_SQRT: return Q8CU_U_SQRT;
    case Q8_UNARY_EXP: return Q8CU_U_EXP;
    case Q8_UNARY_LOG: return Q8CU_U_LOG;
    case Q8_UNARY_ABS: return Q8CU_U_ABS;
    case Q8_UNARY_NEG: return Q8CU_U_NEG;
    case Q8_UNARY_RECIPROCAL: return Q8CU_U_RECIPROCAL;
    default: return -1;
    }
}

q8_status q8_cu_unary_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    const q8_unary_params *up = n->params;
    int kind = cu_unary_kind(up->kind);
    Q8_ASSERT(kind >= 0);
    const q8_tensor *x = q8_in(g, n, 0);
    bool i8 = x->dtype == Q8_I8;
    if (x->dtype != Q8_F32 && !(i8 && up->kind == Q8_UNARY_RELU))
        return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(x->dtype));
    q8cu_unary_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->n = q8_tensor_numel(x);
    p->kind = i8 ? Q8CU_U_RELU_I8 : kind;
    p->alpha = up->alpha;
    p->beta = up->beta;
    nd->run = unary_run;
    return Q8_OK;
}

/* Clip: bounds from constant scalar inputs. */
q8_status q8_cu_clip_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    const q8_clip_params *cp = n->params;
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
    for (int i = 1; i < 3; i++) {
        if (!(i == 1 ? cp->has_lo : cp->has_hi)) continue;
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
    const q8_bcast *bc = n->params;
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (a->dtype != Q8_F32 || b->dtype != Q8_F32)
        return q8_cu_unsupported(err, n, "%s data (float32 only)", q8_dtype_name(a->dtype));
    if (bc->ndim > Q8CU_MAX_DIMS) return q8_cu_unsupported(err, n, "rank %d", bc->ndim);
    q8cu_binary_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    p->ndim = bc->ndim;
    p->n = bc->numel;
    for (int d = 0; d < bc->ndim; d++) {
        p->dims[d] = bc->dims[d];
        p->sa[d] = bc->strides[d];
        p->sb[d] = bc->strides[Q8_MAX_DIMS + d];
    }
    switch (n->op) {
    case Q8_OP_ADD: p->op = Q8CU_B_ADD; break;
    case Q8_OP_SUB: p->op = Q8CU_B_SUB; break;
    case Q8_OP_MUL: p->op = Q8CU_B_MUL; break;
    case Q8_OP_DIV: p->op = Q8CU_B_DIV; break;
    case Q8_OP_PRELU: p->op = Q8CU_B_PRELU; break;
    case Q8_OP_EQUAL: p->op = Q8CU_B_EQ; break;
    case Q8_OP_GREATER: p->op = Q8CU_B_GT; break;
    case Q8_OP_LESS: p->op = Q8CU_B_LT; break;
    case Q8_OP_GREATER_OR_EQUAL: p->op = Q8CU_B_GE; break;
    default: p->op = Q8CU_B_LE; break;
    }
    p->a = q8_cu_tensor(pr, g, n->inputs[0]);
    p->b = q8_cu_tensor(pr, g, n->inputs[1]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = binary_run;
    return Q8_OK;
}

/* ---- Max / Min / Sum / Mean ------------------------------------------------------ */

static q8_status variadic_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_variadic(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_variadic_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                              q8_error *err) {
    const q8_bcast *bc = n->params;
    const q8_tensor *a = q8_in(g, n, 0);
    if (a->dtype != Q8_F32)
        return q8_cu_unsupported(err, n, "%s data (float32 only)", q8_dtype_name(a->dtype));
    if (bc->n_in > Q8CU_VAR_MAX_IN)
        return q8_cu_unsupported(err, n, "%d inputs (at most %d)", bc->n_in, Q8CU_VAR_MAX_IN);
    if (bc->ndim > Q8CU_MAX_DIMS) return q8_cu_unsupported(err, n, "rank %d", bc->ndim);
    q8cu_variadic_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    p->op = n->op == Q8_OP_MAX   ? Q8CU_V_MAX
            : n->op == Q8_OP_MIN ? Q8CU_V_MIN
            : n->op == Q8_OP_SUM ? Q8CU_V_SUM
                                 : Q8CU_V_MEAN;
    p->n_in = bc->n_in;
    p->ndim = bc->ndim;
    p->n = bc->numel;
    for (int d = 0; d < bc->ndim; d++) p->dims[d] = bc->dims[d];
    /* the plan's inputs are the node's present ones, in order */
    int k = 0;
    for (int j = 0; j < n->n_inputs && k < bc->n_in; j++) {
        if (n->inputs[j] < 0) continue;
        for (int d = 0; d < bc->ndim; d++) p->st[k][d] = bc->strides[k * Q8_MAX_DIMS + d];
        p->x[k++] = q8_cu_tensor(pr, g, n->inputs[j]);
    }
    Q8_ASSERT(k == bc->n_in);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = variadic_run;
    return Q8_OK;
}

/* ---- Cast / CastLike ----------------------------------------------------------- */

static q8_status cast_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_cast(q8_cu_stream(c), p), n, n->op_type, err);
}

/* The kernel's element type for t; -1: none (strings: infer refuses them). */
static int cu_cast_dtype(q8_dtype t) {
    switch (t) {
    case Q8_BOOL: return Q8CU_DT_BOOL;
    case Q8_F16: return Q8CU_DT_F16;
    case Q8_BF16: return Q8CU_DT_BF16;
    case Q8_F32: return Q8CU_DT_F32;
    case Q8_F64: return Q8CU_DT_F64;
    case Q8_I8: return Q8CU_DT_I8;
    case Q8_U8: return Q8CU_DT_U8;
    case Q8_I16: return Q8CU_DT_I16;
    case Q8_U16: return Q8CU_DT_U16;
    case Q8_I32: return Q8CU_DT_I32;
    case Q8_U32: return Q8CU_DT_U32;
    case Q8_I64: return Q8CU_DT_I64;
    case Q8_U64: return Q8CU_DT_U64;
    default: return -1;
    }
}

/* Cast and CastLike (CastLike's second input only gave the dtype). */
q8_status q8_cu_cast_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    const q8_cast_params *cp = n->params;
    int from = cu_cast_dtype(cp->from), to = cu_cast_dtype(cp->to);
    if (from < 0 || to < 0)
        return q8_cu_unsupported(err, n, "a cast from %s to %s", q8_dtype_name(cp->from),
                                 q8_dtype_name(cp->to));
    q8cu_cast_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->n = q8_tensor_numel(q8_in(g, n, 0));
    p->from = from;
    p->to = to;
    p->esize = (int)q8_dtype_size(cp->from);
    nd->run = cast_run;
    return Q8_OK;
}

/* ---- q8.EwChain ------------------------------------------------------------------------ */

static q8_status ewchain_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_ewchain(q8_cu_stream(c), p), n, "ewchain", err);
}

static int cu_int_type(q8_dtype t) {
    return t == Q8_I8 ? Q8CU_T_I8 : t == Q8_U8 ? Q8CU_T_U8 : t == Q8_I32 ? Q8CU_T_I32 : 0;
}

q8_status q8_cu_ewchain_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    const q8_ewchain_params *ep = n->params;
    q8cu_ewchain_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_ewchain_args){.x = q8_cu_tensor(pr, g, n->inputs[0]),
                             .y = q8_cu_tensor(pr, g, n->outputs[0]), .n = ep->n,
                             .xt = cu_int_type(ep->x_dtype), .yt = cu_int_type(ep->y_dtype),
                             .n_steps = ep->n_steps, .xs = ep->x_scale, .ys = ep->y_scale,
                             .xz = ep->x_zero_point, .yz = ep->y_zero_point};
    _Static_assert(Q8CU_EW_MAX_STEPS == Q8_EWCHAIN_MAX_STEPS, "q8cuda.h's step count");
    for (int k = 0; k < ep->n_steps; k++)
        p->steps[k] = (q8cu_ew_step){ep->steps[k].kind, ep->steps[k].c0, ep->steps[k].c1};
    if (ep->bn) {
        float *km = q8_cu_bn_consts(pr, g, n, ep->bn_eps, ep->bn_c);
        p->bn_k = km; /* NULL outside the fill pass (sizes only) */
        p->bn_m = km ? km + ep->bn_c : NULL;
        p->bn_inner = ep->bn_s;
        p->bn_c = ep->bn_c;
    }
    nd->run = ewchain_run;
    return Q8_OK;
}
