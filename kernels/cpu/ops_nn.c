/* GEMM, convolution, pooling, normalization, softmax, reductions, resize. */
#include "registry.h"

/* GEMM family (sgemm.c): */
extern const q8_op_def q8_op_gemm;
extern const q8_op_def q8_op_matmul;
extern const q8_op_def q8_op_conv;
extern const q8_op_def q8_op_conv_transpose;

const q8_op_def *const q8_ops_nn[] = {
    /* GEMM family */
    &q8_op_gemm,
    &q8_op_matmul,
    &q8_op_conv,
    &q8_op_conv_transpose,
    NULL,
};
