/* INT8 ops: the q8.Q* ops the quantizer emits (domain "q8"), the ONNX
 * quantization ops, and the ONNX integer ops of quantized models. */
#include "registry.h"

extern const q8_op_def q8_op_qconv, q8_op_qconvtranspose, q8_op_qgemm, q8_op_qmatmul,
    q8_op_quantizelinear, q8_op_dequantizelinear, q8_op_matmulinteger, q8_op_qlinearmatmul,
    q8_op_convinteger, q8_op_qlinearconv, q8_op_dynamicquantizelinear, q8_op_qlut;

const q8_op_def *const q8_ops_q8[] = {
    &q8_op_qconv,
    &q8_op_qconvtranspose,
    &q8_op_qgemm,
    &q8_op_qmatmul,
    &q8_op_quantizelinear,
    &q8_op_dequantizelinear,
    &q8_op_matmulinteger,
    &q8_op_qlinearmatmul,
    &q8_op_convinteger,
    &q8_op_qlinearconv,
    &q8_op_dynamicquantizelinear,
    &q8_op_qlut,
    NULL,
};
