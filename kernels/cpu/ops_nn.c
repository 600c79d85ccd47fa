/* GEMM, convolution, pooling, normalization, softmax, reductions, resize. */
#include "registry.h"

const q8_op_def *const q8_ops_nn[] = {
    NULL,
};
