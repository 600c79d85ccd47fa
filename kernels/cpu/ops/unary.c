/* The unary elementwise family on the CPU (semantics and params:
 * src/core/ops/unary.h): run switches once per chunk and runs a plain loop.
 *
 * Math is libm's (sinf, atanf, ...) except Exp, Sigmoid, Tanh, Erf, Gelu,
 * Log, Softplus and the Elu family, which use the vectorizable forms of
 * vmath.h. */
#include "clones.h"
#include "ew_kernels.h"
#include "ops/unary.h"
#include "vmath.h"
#include "vmath_x86.h"

typedef struct unary_args {
    const void *x;
    void *y;
    const q8_unary_params *p;
} unary_args;

/* Gelu's tanh form is computed in double: in float, rounding the argument
 * alone costs ~1e-6 relative error in the negative tail, where the result
 * is a tiny fraction of x; 0.5 x (1 + tanh u) is rewritten as
 * x / (1 + exp(-2u)) to avoid the cancellation of 1 + tanh. (The erf form,
 * the default, is vmath.h's q8_vgelu, which takes e^(-x^2 / 2) from x
 * exactly.) */
static inline float gelu_tanhf(float v) {
    if (isinf(v)) return v > 0 ? v : -0.0f;
    double x = v, u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return (float)(x / (1.0 + exp(-2.0 * u)));
}

/* The ops with a vector form, in one function cloned per ISA. This file is
 * built with -fno-trapping-math -fno-math-errno -ffp-contract=off
 * (CMakeLists.txt; an optimize attribute here instead kept vmath.h's
 * functions from being inlined):
 * - a ?: with a multiply in one arm is not if-converted under trapping
 *   math, so the piecewise activations ran one element at a time
 *   (HardSwish on ppocr_det's 1x16x320x320 tensor: ~3 ns per element);
 * - sqrtf, floorf and nearbyintf become vector instructions, and vmath.h's
 *   selects vectorize;
 * - no FMA contraction: every clone rounds alpha * v + beta twice, as the
 *   scalar form does (the bits of the fused forms in fused_act.c too).
 * Exact ops keep their bits; Exp and Sigmoid keep those of the 4-lane forms
 * they replaced (the same steps); Tanh was libm's tanhf, one call per
 * element (56x ONNX Runtime's time on 1x64x64x64). Returns false for the
 * kinds left to libm. */
static inline float hard_sigmoid(float v, float al, float be) {
    float h = al * v + be;
    return h < 0 ? 0.0f : h > 1 ? 1.0f : h;
}

/* piecewise so that -inf gives -0 (as finite x <= -3 does), not -inf * 0 =
 * NaN */
static inline float hard_swish(float v, float al, float be) {
    float h = al * v + be;
    return h <= 0 ? -0.0f : h >= 1 ? v : v * h;
}

#define MAP(EXPR)                                                                         \
    for (int64_t i = 0; i < n; i++) {                                                     \
        float v = x[i];                                                                   \
        y[i] = (EXPR);                                                                    \
    }                                                                                     \
    return true;

Q8_CLONES static bool mapped_f32(q8_unary_kind k, const float *x, float *y, int64_t n,
                                 float al, float be, float ga) {
    switch (k) {
    case Q8_UNARY_RELU: MAP(v < 0 ? 0.0f : v)
    case Q8_UNARY_LEAKY_RELU: MAP(v < 0 ? al * v : v)
    case Q8_UNARY_HARD_SIGMOID: MAP(hard_sigmoid(v, al, be))
    case Q8_UNARY_HARD_SWISH: MAP(hard_swish(v, al, be))
    case Q8_UNARY_SIGMOID: q8_sigmoid_f32(x, y, n); return true; /* vmath_x86.h */
    case Q8_UNARY_EXP: MAP(q8_vexp(v))
    case Q8_UNARY_TANH: MAP(q8_vtanh(v))
    case Q8_UNARY_ERF: MAP(q8_verf(v))
    case Q8_UNARY_GELU: MAP(q8_vgelu(v))
    case Q8_UNARY_ELU: MAP(v < 0 ? al * q8_vexpm1(v) : v)
    case Q8_UNARY_SELU: MAP(v > 0 ? ga * v : ga * al * q8_vexpm1(v))
    case Q8_UNARY_SQRT: MAP(sqrtf(v))
    case Q8_UNARY_LOG: MAP(q8_vlog(v))
    case Q8_UNARY_SOFTPLUS: MAP(q8_vsoftplus(v))
    case Q8_UNARY_ABS: MAP(fabsf(v))
    case Q8_UNARY_NEG: MAP(-v)
    case Q8_UNARY_RECIPROCAL: MAP(1.0f / v)
    case Q8_UNARY_FLOOR: MAP(floorf(v))
    case Q8_UNARY_CEIL: MAP(ceilf(v))
    case Q8_UNARY_ROUND: MAP(nearbyintf(v)) /* default rounding: half to even */
    case Q8_UNARY_SIGN: MAP(v > 0 ? 1.0f : v < 0 ? -1.0f : v)
    case Q8_UNARY_SOFTSIGN: MAP(isinf(v) ? copysignf(1.0f, v) : v / (1.0f + fabsf(v)))
    /* NaN propagates (the comparisons alone would make it 0) */
    case Q8_UNARY_THRESHOLDED_RELU: MAP(v > al || v != v ? v : 0.0f)
    case Q8_UNARY_CELU: MAP(v > 0 || v != v ? v : al * q8_vexpm1(v / al))
    case Q8_UNARY_SHRINK: MAP(v < -al ? v + be : v > al ? v - be : v != v ? v : 0.0f)
    default: return false;
    }
}

#define LOOP(T, EXPR)                                                                     \
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
    if (mapped_f32(a->p->kind, (const float *)a->x + b, (float *)a->y + b, e - b, al, be, ga))
        return;
    switch (a->p->kind) {
    case Q8_UNARY_GELU_TANH: LOOP(float, gelu_tanhf(v))
    case Q8_UNARY_SIN: LOOP(float, sinf(v))
    case Q8_UNARY_COS: LOOP(float, cosf(v))
    case Q8_UNARY_TAN: LOOP(float, tanf(v))
    case Q8_UNARY_ASIN: LOOP(float, asinf(v))
    case Q8_UNARY_ACOS: LOOP(float, acosf(v))
    case Q8_UNARY_ATAN: LOOP(float, atanf(v))
    case Q8_UNARY_SINH: LOOP(float, sinhf(v))
    case Q8_UNARY_COSH: LOOP(float, coshf(v))
    case Q8_UNARY_ASINH: LOOP(float, asinhf(v))
    case Q8_UNARY_ACOSH: LOOP(float, acoshf(v))
    case Q8_UNARY_ATANH: LOOP(float, atanhf(v))
    default: Q8_ASSERT(!"unary: bad kind for float32");
    }
}

#define SINT_FN(E, T, S, W)                                                               \
    static void unary_##S(void *arg, int64_t b, int64_t e, int t) {                       \
        const unary_args *a = arg;                                                        \
        switch (a->p->kind) {                                                             \
        case Q8_UNARY_RELU: LOOP(T, v > 0 ? v : (T)0)                                     \
        case Q8_UNARY_ABS: LOOP(T, v < 0 ? (T)(0 - (W)v) : v)                             \
        case Q8_UNARY_NEG: LOOP(T, (T)(0 - (W)v))                                         \
        case Q8_UNARY_SIGN: LOOP(T, (T)(v > 0 ? 1 : v < 0 ? -1 : 0))                      \
        default: Q8_ASSERT(!"unary: bad kind for a signed integer");                      \
        }                                                                                 \
    }
#define UINT_FN(E, T, S, W)                                                               \
    static void unary_##S(void *arg, int64_t b, int64_t e, int t) {                       \
        const unary_args *a = arg;                                                        \
        switch (a->p->kind) {                                                             \
        case Q8_UNARY_ABS: LOOP(T, v)                                                     \
        case Q8_UNARY_SIGN: LOOP(T, (T)(v > 0))                                           \
        default: Q8_ASSERT(!"unary: bad kind for an unsigned integer");                   \
        }                                                                                 \
    }
Q8_EW_SINTS(SINT_FN)
Q8_EW_UINTS(UINT_FN)

static void unary_bool(void *arg, int64_t b, int64_t e, int t) {
    const unary_args *a = arg;
    switch (a->p->kind) {
    case Q8_UNARY_NOT: LOOP(uint8_t, !v)
    default: Q8_ASSERT(!"unary: bad kind for bool");
    }
}

#define TAB_FN(E, T, S, W) [E] = unary_##S,
static const q8_range_fn fns[Q8_DTYPE_COUNT] = {
    [Q8_F32] = unary_f32, [Q8_BOOL] = unary_bool, Q8_EW_INTS(TAB_FN)
};

static void unary_run(const q8_exec *x, const q8_node *n) {
    const q8_tensor *t = q8_in(x->g, n, 0);
    const q8_unary_params *p = n->params;
    unary_args a = {Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), p};
    q8_unary_kind k = p->kind;
    bool cheap = k == Q8_UNARY_RELU || k == Q8_UNARY_LEAKY_RELU || k == Q8_UNARY_ABS ||
                 k == Q8_UNARY_NEG || k == Q8_UNARY_SIGN || k == Q8_UNARY_NOT ||
                 k == Q8_UNARY_HARD_SIGMOID || k == Q8_UNARY_HARD_SWISH;
    q8_parallel_for(x->pool, q8_tensor_numel(t), cheap ? Q8_EW_GRAIN : Q8_EW_GRAIN_MATH,
                    fns[t->dtype], &a);
}

#define UNARY_CPU(VAR) const q8_cpu_op q8_cpu_##VAR = {.run = unary_run};
Q8_UNARY_OPS(UNARY_CPU)
