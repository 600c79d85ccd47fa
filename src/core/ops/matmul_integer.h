/* MatMulInteger and QLinearMatMul: A [..., M, K] x
 * B [..., K, N] of int8 or uint8 with zero points (per tensor, per row of A,
 * per column of B) and numpy batch broadcasting:
 *   acc[i][j] = sum_k (A[i][k] - za_i)(B[k][j] - zb_j)
 * MatMulInteger writes acc (int32); QLinearMatMul requantizes:
 * y = saturate(round_half_even(acc * (a_scale * b_scale / y_scale)) + y_zp),
 * with the multiplier in float as ONNX Runtime does. Zero points and scales
 * must be constants, except MatMulInteger's A zero point, which may be one
 * value computed at run time (dynamic quantization: DynamicQuantizeLinear). */
#ifndef Q8_CORE_OPS_MATMUL_INTEGER_H
#define Q8_CORE_OPS_MATMUL_INTEGER_H

#include "ops/qop.h"

typedef struct q8_matmul_integer_params {
    bool qlinear;                   /* QLinearMatMul */
    bool a_u8, b_u8, y_u8;          /* uint8 (else int8) A, B, y */
    int64_t M, N, K;
    int nb;                         /* output batch dims */
    int64_t bdims[Q8_MAX_DIMS];     /* their sizes */
    int64_t astr[Q8_MAX_DIMS], bstr[Q8_MAX_DIMS]; /* in matrices; 0: broadcast */
    int64_t batches;                /* product of bdims */
    int ia, ib;                     /* input index of A and B */
    int iza, izb;                   /* input index of their zero points (may be absent) */
    bool za_runtime;                /* MatMulInteger: A's zero point is read each run */
    float y_scale;                  /* QLinearMatMul */
    int32_t y_zp;                   /* QLinearMatMul */
} q8_matmul_integer_params;

#endif
