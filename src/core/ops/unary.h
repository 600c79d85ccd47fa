/* The unary elementwise family: float32 activations and math functions,
 * Abs / Neg / Sign also over integers (Relu over signed integers: the
 * quantized path), Not over bool. The output has the input's dtype and
 * shape.
 *
 * Values follow the exact functions (libm's where one exists) and stay
 * accurate at the ends: Sigmoid never forms exp of a large positive number,
 * Elu/Selu use expm1, Softplus log1p, Gelu erfc in double. NaN propagates
 * through every float op. Integer Abs/Neg wrap (Abs(INT_MIN) is INT_MIN).
 * Round is half to even. The trigonometric and hyperbolic functions (Sin ..
 * Atanh) are libm's float functions; outside their domains they give NaN
 * as libm does. ThresholdedRelu: x > alpha ? x : 0. Celu: max(0, x) +
 * min(0, alpha * expm1(x / alpha)). Shrink: x < -lambd ? x + bias : x >
 * lambd ? x - bias : 0 (lambd in alpha, bias in beta). */
#ifndef Q8_CORE_OPS_UNARY_H
#define Q8_CORE_OPS_UNARY_H

typedef enum q8_unary_kind {
    Q8_UNARY_RELU, Q8_UNARY_LEAKY_RELU, Q8_UNARY_SIGMOID, Q8_UNARY_HARD_SIGMOID,
    Q8_UNARY_HARD_SWISH, Q8_UNARY_TANH, Q8_UNARY_ELU, Q8_UNARY_SELU, Q8_UNARY_ERF,
    Q8_UNARY_GELU,          /* exact (erf) form: Gelu, com.microsoft Gelu */
    Q8_UNARY_GELU_TANH,     /* Gelu with approximate = "tanh" */
    Q8_UNARY_SQRT, Q8_UNARY_EXP, Q8_UNARY_LOG, Q8_UNARY_ABS, Q8_UNARY_NEG,
    Q8_UNARY_RECIPROCAL, Q8_UNARY_FLOOR, Q8_UNARY_CEIL, Q8_UNARY_ROUND, Q8_UNARY_SIGN,
    Q8_UNARY_SOFTPLUS, Q8_UNARY_SOFTSIGN, Q8_UNARY_NOT,
    Q8_UNARY_SIN, Q8_UNARY_COS, Q8_UNARY_TAN, Q8_UNARY_ASIN, Q8_UNARY_ACOS, Q8_UNARY_ATAN,
    Q8_UNARY_SINH, Q8_UNARY_COSH, Q8_UNARY_ASINH, Q8_UNARY_ACOSH, Q8_UNARY_ATANH,
    Q8_UNARY_THRESHOLDED_RELU, Q8_UNARY_CELU, Q8_UNARY_SHRINK,
} q8_unary_kind;

typedef struct q8_unary_params {
    q8_unary_kind kind;
    /* The attributes alpha, beta, gamma (or their defaults), read for every
     * op; only these use them: LeakyRelu (alpha), HardSigmoid
     * (max(0, min(1, alpha * x + beta))), HardSwish (x * HardSigmoid(x) with
     * the fixed alpha 1/6, beta 1/2), Elu (alpha), Selu (alpha, gamma). */
    float alpha, beta, gamma;
} q8_unary_params;

/* The ops of the family (op_list.h syms), for the schema and backend tables. */
#define Q8_UNARY_OPS(X)                                                                    \
    X(relu) X(leaky_relu) X(sigmoid) X(hard_sigmoid) X(hard_swish) X(tanh) X(elu) X(selu) \
    X(erf) X(gelu) X(sqrt) X(exp) X(log) X(abs) X(neg) X(reciprocal) X(floor) X(ceil)     \
    X(round) X(sign) X(softplus) X(softsign) X(not)                                        \
    X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(asinh) X(acosh)        \
    X(atanh) X(thresholded_relu) X(celu) X(shrink)                                         \
    X(gelu_ms) /* Gelu as onnxruntime's transformer optimizer writes it (com.microsoft) */

#endif
