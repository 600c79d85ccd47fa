/* q8.QConv: INT8 convolution, 1-D or 2-D (docs/int8-ops.md). X int8 with a
 * per-tensor scale, W int8 constant [M, C/group, *kernel] with per-channel
 * scales, optional int32 constant bias [M]; int8 (y_scale) or float32
 * output. acc[n, m, p] = B[m] + sum over (c, k) of X * W; padding is the
 * quantized zero (0). */
#ifndef Q8_CORE_OPS_QCONV_H
#define Q8_CORE_OPS_QCONV_H

#include "ops/qconv_geom.h"
#include "ops/qop.h"

typedef struct q8_qconv_params {
    q8_qconv_geom geo;
    int64_t Cg, Mg;             /* per group: input and output channels */
    int64_t K;                  /* reduction length: Cg * KH * KW */
    int64_t P;                  /* output pixels per channel: OH * OW */
    q8_qop_quant q;             /* sx: X's scale; per-channel scales are W's */
    bool has_bias;              /* input 2 */
} q8_qconv_params;

#endif
