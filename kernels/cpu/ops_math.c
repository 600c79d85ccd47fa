/* Elementwise and activation ops. */
#include "registry.h"

#define Q8_MATH_OPS(X)                                                                     \
    /* unary.c */                                                                          \
    X(relu) X(leaky_relu) X(sigmoid) X(hard_sigmoid) X(hard_swish) X(tanh) X(elu) X(selu)  \
    X(erf) X(gelu) X(gelu_ms) X(sqrt) X(exp) X(log) X(abs) X(neg) X(reciprocal) X(floor)   \
    X(ceil) X(round) X(sign) X(softplus) X(softsign) X(not)                                \
    X(clip) X(prelu) /* clip.c, prelu.c */                                                 \
    X(add) X(sub) X(mul) X(div) X(mod) /* arith.c */                                       \
    X(pow) /* pow.c */                                                                     \
    X(max) X(min) X(sum) X(mean) /* variadic.c */                                          \
    X(equal) X(greater) X(less) X(greater_or_equal) X(less_or_equal) /* compare.c */       \
    X(and) X(or) X(xor)                                                                    \
    X(where) X(expand) /* where.c, expand.c */                                             \
    X(cast) X(castlike) /* cast.c */

#define Q8_DECLARE(op) extern const q8_op_def q8_op_##op;
Q8_MATH_OPS(Q8_DECLARE)

#define Q8_LIST(op) &q8_op_##op,
const q8_op_def *const q8_ops_math[] = {
    Q8_MATH_OPS(Q8_LIST)
    NULL,
};
