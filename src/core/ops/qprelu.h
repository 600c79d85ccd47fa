/* q8.QPRelu: PRelu of an int8 activation with a per-tensor scale, one slope
 * per channel (or one for all), int8 out at y_scale, computed the way
 * DequantizeLinear -> PRelu -> QuantizeLinear compute it in float32:
 *
 *   v = (float)x * x_scale;  v = v < 0 ? v * slope[c] : v
 *   y = round_half_even(v / y_scale), saturated to int8
 *
 * (kernels/common/requant.h q8_round_sat, QuantizeLinear's rounding): bit
 * for bit the three nodes' result. Inputs: X int8 (rank >= 2 when the slope
 * is per channel), slope a constant float32 of 1 value or C values (C =
 * X's dim 1, any shape of that size); attribute y_scale. MediaPipe's face
 * and iris models end every residual block with a PRelu: in float, its
 * block's sum ran in float too, between dequantizes and a quantize. */
#ifndef Q8_CORE_OPS_QPRELU_H
#define Q8_CORE_OPS_QPRELU_H

#include <stdint.h>

typedef struct q8_qprelu_params {
    float sx, sy;
    int64_t channels;   /* slope values: 1 or X's dim 1 */
    int64_t inner;      /* elements of X per channel plane (per tensor: all of X) */
    int64_t planes;     /* channel planes of X (1 when the slope is one value) */
} q8_qprelu_params;

#endif
