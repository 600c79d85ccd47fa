/* ConvInteger and QLinearConv: 1-D/2-D convolution of int8
 * or uint8 data and constant weights with zero points (x: per tensor; w:
 * per tensor or per output channel); padding is x's zero point:
 *   acc[n, m, p] = sum over (c, k) of (w - zw_m)(x - zx)
 * ConvInteger writes acc (int32); QLinearConv adds its int32 bias and
 * requantizes: y = saturate(round_half_even(acc * (x_scale * w_scale[m] /
 * y_scale)) + y_zp), the multiplier in float as ONNX Runtime does. */
#ifndef Q8_CORE_OPS_CONV_INTEGER_H
#define Q8_CORE_OPS_CONV_INTEGER_H

#include "ops/qconv_geom.h"
#include "ops/qop.h"

typedef struct q8_conv_integer_params {
    bool qlinear;               /* QLinearConv */
    bool x_u8, w_u8, y_u8;      /* uint8 (else int8) x, w, y */
    q8_qconv_geom geo;
    int64_t Cg, Mg, K, P;       /* per group: input, output channels, K; P = OH*OW */
    int iw, izw;                /* input index of w and of its zero point (may be absent) */
    int32_t beta;               /* x's zero point - (128 for uint8) */
    uint8_t pad;                /* x's zero point as stored: the padding */
    bool zx_runtime;            /* ConvInteger: x's zero point is input 2, computed at run
                                 * time (beta and pad are then taken from it each run) */
    float x_scale, y_scale;     /* QLinearConv */
    int32_t y_zp;               /* QLinearConv */
    bool has_bias;              /* QLinearConv: input 8 */
} q8_conv_integer_params;

#endif
