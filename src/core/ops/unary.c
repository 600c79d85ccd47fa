/* The unary elementwise family (see unary.h): one infer serves them all; it
 * looks the op up in `ops` and parses its attributes. */
#include "ops/unary.h"

#include <string.h>

#include "op.h"

enum { T_F32 = 1, T_SINT = 2, T_UINT = 4, T_BOOL = 8 };

typedef struct uinfo {
    q8_op_id op;
    q8_unary_kind kind;
    unsigned types;
    float alpha, beta, gamma;  /* attribute defaults */
} uinfo;

static const uinfo ops[] = {
    {Q8_OP_RELU, Q8_UNARY_RELU, T_F32 | T_SINT, 0, 0, 0}, /* int8: the quantized path */
    {Q8_OP_LEAKY_RELU, Q8_UNARY_LEAKY_RELU, T_F32, 0.01f, 0, 0},
    {Q8_OP_SIGMOID, Q8_UNARY_SIGMOID, T_F32, 0, 0, 0},
    {Q8_OP_HARD_SIGMOID, Q8_UNARY_HARD_SIGMOID, T_F32, 0.2f, 0.5f, 0},
    {Q8_OP_HARD_SWISH, Q8_UNARY_HARD_SWISH, T_F32, 1.0f / 6.0f, 0.5f, 0},
    {Q8_OP_TANH, Q8_UNARY_TANH, T_F32, 0, 0, 0},
    {Q8_OP_ELU, Q8_UNARY_ELU, T_F32, 1.0f, 0, 0},
    {Q8_OP_SELU, Q8_UNARY_SELU, T_F32, 1.67326319217681884765625f, 0,
     1.05070102214813232421875f},
    {Q8_OP_ERF, Q8_UNARY_ERF, T_F32, 0, 0, 0},
    {Q8_OP_GELU, Q8_UNARY_GELU, T_F32, 0, 0, 0},
    {Q8_OP_GELU_MS, Q8_UNARY_GELU, T_F32, 0, 0, 0},
    {Q8_OP_SQRT, Q8_UNARY_SQRT, T_F32, 0, 0, 0},
    {Q8_OP_EXP, Q8_UNARY_EXP, T_F32, 0, 0, 0},
    {Q8_OP_LOG, Q8_UNARY_LOG, T_F32, 0, 0, 0},
    {Q8_OP_ABS, Q8_UNARY_ABS, T_F32 | T_SINT | T_UINT, 0, 0, 0},
    {Q8_OP_NEG, Q8_UNARY_NEG, T_F32 | T_SINT, 0, 0, 0},
    {Q8_OP_RECIPROCAL, Q8_UNARY_RECIPROCAL, T_F32, 0, 0, 0},
    {Q8_OP_FLOOR, Q8_UNARY_FLOOR, T_F32, 0, 0, 0},
    {Q8_OP_CEIL, Q8_UNARY_CEIL, T_F32, 0, 0, 0},
    {Q8_OP_ROUND, Q8_UNARY_ROUND, T_F32, 0, 0, 0},
    {Q8_OP_SIGN, Q8_UNARY_SIGN, T_F32 | T_SINT | T_UINT, 0, 0, 0},
    {Q8_OP_SOFTPLUS, Q8_UNARY_SOFTPLUS, T_F32, 0, 0, 0},
    {Q8_OP_SOFTSIGN, Q8_UNARY_SOFTSIGN, T_F32, 0, 0, 0},
    {Q8_OP_NOT, Q8_UNARY_NOT, T_BOOL, 0, 0, 0},
    {Q8_OP_SIN, Q8_UNARY_SIN, T_F32, 0, 0, 0},
    {Q8_OP_COS, Q8_UNARY_COS, T_F32, 0, 0, 0},
    {Q8_OP_TAN, Q8_UNARY_TAN, T_F32, 0, 0, 0},
    {Q8_OP_ASIN, Q8_UNARY_ASIN, T_F32, 0, 0, 0},
    {Q8_OP_ACOS, Q8_UNARY_ACOS, T_F32, 0, 0, 0},
    {Q8_OP_ATAN, Q8_UNARY_ATAN, T_F32, 0, 0, 0},
    {Q8_OP_SINH, Q8_UNARY_SINH, T_F32, 0, 0, 0},
    {Q8_OP_COSH, Q8_UNARY_COSH, T_F32, 0, 0, 0},
    {Q8_OP_ASINH, Q8_UNARY_ASINH, T_F32, 0, 0, 0},
    {Q8_OP_ACOSH, Q8_UNARY_ACOSH, T_F32, 0, 0, 0},
    {Q8_OP_ATANH, Q8_UNARY_ATANH, T_F32, 0, 0, 0},
    {Q8_OP_THRESHOLDED_RELU, Q8_UNARY_THRESHOLDED_RELU, T_F32, 1.0f, 0, 0},
    {Q8_OP_CELU, Q8_UNARY_CELU, T_F32, 1.0f, 0, 0},
    {Q8_OP_SHRINK, Q8_UNARY_SHRINK, T_F32, 0.5f, 0, 0}, /* lambd, bias */
};

static unsigned type_bit(q8_dtype t) {
    if (t == Q8_F32) return T_F32;
    if (t == Q8_BOOL) return T_BOOL;
    if (t == Q8_I8 || t == Q8_I16 || t == Q8_I32 || t == Q8_I64) return T_SINT;
    if (q8_dtype_is_int(t)) return T_UINT;
    return 0;
}

static q8_status unary_infer(q8_graph *g, q8_node *n, q8_error *err) {
    const uinfo *u = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && !u; i++)
        if (ops[i].op == n->op) u = &ops[i];
    Q8_ASSERT(u);
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (!(type_bit(x->dtype) & u->types))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(x->dtype));
    q8_unary_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->kind = u->kind;
    p->alpha = q8_attr_float(n, "alpha", u->alpha);
    p->beta = q8_attr_float(n, "beta", u->beta);
    p->gamma = q8_attr_float(n, "gamma", u->gamma);
    if (u->kind == Q8_UNARY_SHRINK) { /* its attributes have their own names */
        p->alpha = q8_attr_float(n, "lambd", u->alpha);
        p->beta = q8_attr_float(n, "bias", 0.0f);
    }
    if (u->kind == Q8_UNARY_CELU && !(p->alpha != 0))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "alpha is 0 (Celu divides by it)");
    if (u->kind == Q8_UNARY_HARD_SWISH) { /* fixed constants, no attributes */
        p->alpha = u->alpha;
        p->beta = u->beta;
    }
    if (u->kind == Q8_UNARY_GELU) {
        const char *ap = q8_attr_str(n, "approximate", "none");
        if (strcmp(ap, "tanh") == 0) p->kind = Q8_UNARY_GELU_TANH;
        else if (strcmp(ap, "none") != 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "approximate is '%s', expected 'none' or 'tanh'", ap);
    }
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

#define UNARY_SCHEMA(VAR) \
    const q8_op_schema q8_schema_##VAR = {.infer = unary_infer, .flags = Q8_OPF_INPLACE};
Q8_UNARY_OPS(UNARY_SCHEMA)
