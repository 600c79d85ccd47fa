/* The CPU op tables, one per family, each NULL-terminated. Every op lives in
 * its own file; the family file only lists them. */
#ifndef Q8_KERNELS_CPU_REGISTRY_H
#define Q8_KERNELS_CPU_REGISTRY_H

#include "op.h"

extern const q8_op_def *const q8_ops_math[];   /* elementwise, activations */
extern const q8_op_def *const q8_ops_nn[];     /* GEMM, conv, pooling, norms, softmax, reduce, resize */
extern const q8_op_def *const q8_ops_tensor[]; /* shape and data movement */
extern const q8_op_def *const q8_ops_nn2[];    /* pooling, norms, softmax, reduce, resize */
extern const q8_op_def *const q8_ops_q8[];     /* INT8: q8.Q* ops, Quantize/DequantizeLinear */

#endif
