/* q8.EwChain: elementwise float32 steps on one tensor in one pass, as the
 * nodes it replaces compute them one after the other (made at load and at
 * quantize time by src/passes/fuse_ewchain.c; PP-OCR recognition's
 * Conv -> Mul -> Add -> HardSwish -> Mul -> Add -> QuantizeLinear chains
 * were six passes over each tensor):
 *
 *   v = X                                     float32 X
 *   v = (float)(X - x_zero_point) * x_scale   int8 / uint8 X (DequantizeLinear),
 *                                             or int8 / uint8 / int32 X with
 *                                             x_scale 1, zero point 0 (a Cast
 *                                             to float: (float)X exactly)
 *   v = v * k[c] + m[c]                       with inputs 1-4 (scale, B, mean,
 *                                             var: a BatchNormalization taken in,
 *                                             attribute bn_epsilon; c the channel,
 *                                             dim 1; k, m as its kernels make them:
 *                                             q8_bn_channel, ops/batchnorm.h)
 *   v = step(v), for each step in order
 *   Y = v                                     without y_scale
 *   Y = q8_round_sat(v / y_scale, y_zero_point, lo, hi)   int8 / uint8 Y
 *                                             (QuantizeLinear; y_dtype 3: int8, 2: uint8)
 *
 * Steps: attribute `steps` (ints, Q8_EW_*; none when a BatchNormalization
 * leads, at least one otherwise) with two floats each in
 * `consts` (c0, c1; unused ones 0). Each is its op's float32 arithmetic
 * exactly (kernels/common/ewchain_eval.h; no FMA contraction):
 *   MUL v * c0, ADD v + c0, SUB v - c0, RSUB c0 - v, DIV v / c0, RDIV c0 / v,
 *   RELU v < 0 ? 0 : v, LEAKY_RELU v < 0 ? c0 * v : v,
 *   CLIP v < c0 ? c0 : v, then > c1 ? c1 (NaN stays NaN),
 *   HARD_SIGMOID h = c0 * v + c1, h < 0 ? 0 : h > 1 ? 1 : h,
 *   HARD_SWISH h = c0 * v + c1, h <= 0 ? -0 : h >= 1 ? v : v * h,
 *   SWISH v * sigmoid(v) (c0 0) or sigmoid(v) * v (c0 1): a Sigmoid and the
 *   Mul of its input by it (SiLU), in the Mul's operand order (a NaN's bits
 *   are its first operand's); sigmoid as the Sigmoid op (q8_vsigmoid).
 * Y has X's shape. */
#ifndef Q8_CORE_OPS_EWCHAIN_H
#define Q8_CORE_OPS_EWCHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "ops/ewchain_kinds.h"

#define Q8_EWCHAIN_MAX_STEPS 16

typedef struct q8_ew_step {
    int32_t kind; /* q8_ew_kind */
    float c0, c1;
} q8_ew_step;

typedef struct q8_ewchain_params {
    int n_steps;
    q8_ew_step steps[Q8_EWCHAIN_MAX_STEPS];
    q8_dtype x_dtype, y_dtype; /* float32, int8 or uint8 (X: int32 too) */
    float x_scale, y_scale;    /* the integer sides' scales */
    int32_t x_zero_point, y_zero_point;
    int64_t n;                 /* elements */
    bool bn;                   /* a BatchNormalization first (inputs 1-4) */
    float bn_eps;
    int64_t bn_c, bn_s;        /* its channels, elements per (n, c) */
} q8_ewchain_params;

#endif
