/* The unary elementwise family: float32 activations and math functions,
 * Abs / Neg / Sign also over integers, Not over bool. One infer and one
 * run serve them all: infer looks the op up in `ops` and parses its
 * attributes; run switches once per chunk and runs a plain loop.
 *
 * Math is libm's (erff, tanhf, ...) except Exp and Sigmoid, which use the
 * vectorizable q8_expf_fast (fastexp.h, within 2 ulp); all are written in
 * the forms that stay accurate at the ends: Sigmoid never forms exp of a large positive number,
 * Elu/Selu use expm1f, Softplus log1pf, Gelu erfc in double. NaN propagates through
 * every float op. Integer Abs/Neg wrap (Abs(INT_MIN) is INT_MIN). Round is
 * half to even. */
#include <string.h>

#include "elementwise.h"
#include "fastexp.h"

typedef enum ukind {
    U_RELU, U_LEAKY_RELU, U_SIGMOID, U_HARD_SIGMOID, U_HARD_SWISH, U_TANH, U_ELU, U_SELU,
    U_ERF, U_GELU, U_GELU_TANH, U_SQRT, U_EXP, U_LOG, U_ABS, U_NEG, U_RECIPROCAL, U_FLOOR,
    U_CEIL, U_ROUND, U_SIGN, U_SOFTPLUS, U_SOFTSIGN, U_NOT,
} ukind;

enum { T_F32 = 1, T_SINT = 2, T_UINT = 4, T_BOOL = 8 };

typedef struct uinfo {
    const char *name;
    ukind kind;
    unsigned types;
    float alpha, beta, gamma;  /* attribute defaults */
} uinfo;

static const uinfo ops[] = {
    {"Relu", U_RELU, T_F32 | T_SINT, 0, 0, 0}, /* int8: the quantized path */
    {"LeakyRelu", U_LEAKY_RELU, T_F32, 0.01f, 0, 0},
    {"Sigmoid", U_SIGMOID, T_F32, 0, 0, 0},
    {"HardSigmoid", U_HARD_SIGMOID, T_F32, 0.2f, 0.5f, 0},
    {"HardSwish", U_HARD_SWISH, T_F32, 1.0f / 6.0f, 0.5f, 0},
    {"Tanh", U_TANH, T_F32, 0, 0, 0},
    {"Elu", U_ELU, T_F32, 1.0f, 0, 0},
    {"Selu", U_SELU, T_F32, 1.67326319217681884765625f, 0, 1.05070102214813232421875f},
    {"Erf", U_ERF, T_F32, 0, 0, 0},
    {"Gelu", U_GELU, T_F32, 0, 0, 0},
    {"Sqrt", U_SQRT, T_F32, 0, 0, 0},
    {"Exp", U_EXP, T_F32, 0, 0, 0},
    {"Log", U_LOG, T_F32, 0, 0, 0},
    {"Abs", U_ABS, T_F32 | T_SINT | T_UINT, 0, 0, 0},
    {"Neg", U_NEG, T_F32 | T_SINT, 0, 0, 0},
    {"Reciprocal", U_RECIPROCAL, T_F32, 0, 0, 0},
    {"Floor", U_FLOOR, T_F32, 0, 0, 0},
    {"Ceil", U_CEIL, T_F32, 0, 0, 0},
    {"Round", U_ROUND, T_F32, 0, 0, 0},
    {"Sign", U_SIGN, T_F32 | T_SINT | T_UINT, 0, 0, 0},
    {"Softplus", U_SOFTPLUS, T_F32, 0, 0, 0},
    {"Softsign", U_SOFTSIGN, T_F32, 0, 0, 0},
    {"Not", U_NOT, T_BOOL, 0, 0, 0},
};

typedef struct unary_params {
    ukind kind;
    float alpha, beta, gamma;
} unary_params;

typedef struct unary_args {
    const void *x;
    void *y;
    const unary_params *p;
} unary_args;

static inline float hard_sigmoidf(float v, float alpha, float beta) {
    float h = alpha * v + beta;
    return h < 0 ? 0.0f : h > 1 ? 1.0f : h;
}

/* x * hard_sigmoid(x), piecewise so that -inf gives -0 (as finite x <= -3
 * does), not -inf * 0 = NaN. */
static inline float hard_swishf(float v, float alpha, float beta) {
    float h = alpha * v + beta;
    return h <= 0 ? -0.0f : h >= 1 ? v : v * h;
}

/* Gelu is computed in double: in float, rounding the argument alone costs
 * ~1e-6 relative error in the negative tail, where the result is a tiny
 * fraction of x. 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2)
 * avoids the cancellation of 1 + erf; the tanh form is rewritten as
 * 0.5 x (1 + tanh u) = x / (1 + exp(-2u)) for the same reason. */
static inline float geluf(float v) {
    if (isinf(v)) return v > 0 ? v : -0.0f;
    return (float)(0.5 * v * erfc(-v * 0.70710678118654752440));
}

static inline float gelu_tanhf(float v) {
    if (isinf(v)) return v > 0 ? v : -0.0f;
    double x = v, u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return (float)(x / (1.0 + exp(-2.0 * u)));
}

static inline float softplusf(float v) {
    return v > 0 ? v + log1pf(expf(-v)) : log1pf(expf(v));
}

#define LOOP(T, EXPR)                                                                      \
    {                                                                                     \
        const T *x = a->x;                                                                \
        T *y = a->y;                                                                      \
        for (int64_t i = b; i < e; i++) {                                                 \
            T v = x[i];                                                                   \
            y[i] = (EXPR);                                                                \
        }                                                                                 \
    }                                                                                     \
    break;

static void unary_f32(void *arg, int64_t b, int64_t e, int t) {
    const unary_args *a = arg;
    const float al = a->p->alpha, be = a->p->beta, ga = a->p->gamma;
    switch (a->p->kind) {
    case U_RELU: LOOP(float, v < 0 ? 0.0f : v)
    case U_LEAKY_RELU: LOOP(float, v < 0 ? al * v : v)
    case U_SIGMOID: Q8_MAP4(q8_sigmoid4, (const float *)a->x + b, (float *)a->y + b, e - b); break;
    case U_HARD_SIGMOID: LOOP(float, hard_sigmoidf(v, al, be))
    case U_HARD_SWISH: LOOP(float, hard_swishf(v, al, be))
    case U_TANH: LOOP(float, tanhf(v))
    case U_ELU: LOOP(float, v < 0 ? al * expm1f(v) : v)
    case U_SELU: LOOP(float, v > 0 ? ga * v : ga * al * expm1f(v))
    case U_ERF: LOOP(float, erff(v))
    case U_GELU: LOOP(float, geluf(v))
    case U_GELU_TANH: LOOP(float, gelu_tanhf(v))
    case U_SQRT: LOOP(float, sqrtf(v))
    case U_EXP: Q8_MAP4(q8_exp4, (const float *)a->x + b, (float *)a->y + b, e - b); break;
    case U_LOG: LOOP(float, logf(v))
    case U_ABS: LOOP(float, fabsf(v))
    case U_NEG: LOOP(float, -v)
    case U_RECIPROCAL: LOOP(float, 1.0f / v)
    case U_FLOOR: LOOP(float, floorf(v))
    case U_CEIL: LOOP(float, ceilf(v))
    case U_ROUND: LOOP(float, nearbyintf(v))  /* default rounding: half to even */
    case U_SIGN: LOOP(float, v > 0 ? 1.0f : v < 0 ? -1.0f : v)
    case U_SOFTPLUS: LOOP(float, softplusf(v))
    case U_SOFTSIGN: LOOP(float, isinf(v) ? copysignf(1.0f, v) : v / (1.0f + fabsf(v)))
    default: Q8_ASSERT(!"unary: bad kind for float32");
    }
}

#define SINT_FN(E, T, S, W)                                                                \
    static void unary_##S(void *arg, int64_t b, int64_t e, int t) {                       \
        const unary_args *a = arg;                                                        \
        switch (a->p->kind) {                                                             \
        case U_RELU: LOOP(T, v > 0 ? v : (T)0)                                            \
        case U_ABS: LOOP(T, v < 0 ? (T)(0 - (W)v) : v)                                    \
        case U_NEG: LOOP(T, (T)(0 - (W)v))                                                \
        case U_SIGN: LOOP(T, (T)(v > 0 ? 1 : v < 0 ? -1 : 0))                             \
        default: Q8_ASSERT(!"unary: bad kind for a signed integer");                      \
        }                                                                                 \
    }
#define UINT_FN(E, T, S, W)                                                                \
    static void unary_##S(void *arg, int64_t b, int64_t e, int t) {                       \
        const unary_args *a = arg;                                                        \
        switch (a->p->kind) {                                                             \
        case U_ABS: LOOP(T, v)                                                            \
        case U_SIGN: LOOP(T, (T)(v > 0))                                                  \
        default: Q8_ASSERT(!"unary: bad kind for an unsigned integer");                   \
        }                                                                                 \
    }
Q8_EW_SINTS(SINT_FN)
Q8_EW_UINTS(UINT_FN)

static void unary_bool(void *arg, int64_t b, int64_t e, int t) {
    const unary_args *a = arg;
    switch (a->p->kind) {
    case U_NOT: LOOP(uint8_t, !v)
    default: Q8_ASSERT(!"unary: bad kind for bool");
    }
}

#define TAB_FN(E, T, S, W) [E] = unary_##S,
static const q8_range_fn fns[Q8_DTYPE_COUNT] = {
    [Q8_F32] = unary_f32, [Q8_BOOL] = unary_bool, Q8_EW_INTS(TAB_FN)
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
        if (strcmp(ops[i].name, n->op_type) == 0) u = &ops[i];
    Q8_ASSERT(u);
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (!(type_bit(x->dtype) & u->types))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(x->dtype));
    unary_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->kind = u->kind;
    p->alpha = q8_attr_float(n, "alpha", u->alpha);
    p->beta = q8_attr_float(n, "beta", u->beta);
    p->gamma = q8_attr_float(n, "gamma", u->gamma);
    if (u->kind == U_HARD_SWISH) { /* fixed constants, no attributes */
        p->alpha = u->alpha;
        p->beta = u->beta;
    }
    if (u->kind == U_GELU) {
        const char *ap = q8_attr_str(n, "approximate", "none");
        if (strcmp(ap, "tanh") == 0) p->kind = U_GELU_TANH;
        else if (strcmp(ap, "none") != 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "approximate is '%s', expected 'none' or 'tanh'", ap);
    }
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

static void unary_run(const q8_exec *x, const q8_node *n) {
    const q8_tensor *t = q8_in(x->g, n, 0);
    const unary_params *p = n->params;
    unary_args a = {Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), p};
    bool cheap = p->kind == U_RELU || p->kind == U_LEAKY_RELU || p->kind == U_ABS ||
                 p->kind == U_NEG || p->kind == U_SIGN || p->kind == U_NOT ||
                 p->kind == U_HARD_SIGMOID || p->kind == U_HARD_SWISH;
    q8_parallel_for(x->pool, q8_tensor_numel(t), cheap ? Q8_EW_GRAIN : Q8_EW_GRAIN_MATH,
                    fns[t->dtype], &a);
}

#define UNARY_OP(VAR, NAME)                                                                \
    const q8_op_schema q8_schema_##VAR = {.infer = unary_infer, .flags = Q8_OPF_INPLACE}; \
    const q8_cpu_op q8_cpu_##VAR = {.run = unary_run};

UNARY_OP(relu, "Relu")
UNARY_OP(leaky_relu, "LeakyRelu")
UNARY_OP(sigmoid, "Sigmoid")
UNARY_OP(hard_sigmoid, "HardSigmoid")
UNARY_OP(hard_swish, "HardSwish")
UNARY_OP(tanh, "Tanh")
UNARY_OP(elu, "Elu")
UNARY_OP(selu, "Selu")
UNARY_OP(erf, "Erf")
UNARY_OP(gelu, "Gelu")
UNARY_OP(sqrt, "Sqrt")
UNARY_OP(exp, "Exp")
UNARY_OP(log, "Log")
UNARY_OP(abs, "Abs")
UNARY_OP(neg, "Neg")
UNARY_OP(reciprocal, "Reciprocal")
UNARY_OP(floor, "Floor")
UNARY_OP(ceil, "Ceil")
UNARY_OP(round, "Round")
UNARY_OP(sign, "Sign")
UNARY_OP(softplus, "Softplus")
UNARY_OP(softsign, "Softsign")
UNARY_OP(not, "Not")

/* Gelu as written by onnxruntime's transformer optimizer (exact erf form). */
const q8_op_schema q8_schema_gelu_ms = {.infer = unary_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_gelu_ms = {.run = unary_run};
