/* DequantizeLinear: y = (x - zero_point) * scale for
 * int8, uint8 and int32 x, per tensor or per axis, float32 output. Scale and
 * zero point must be constants. */
#ifndef Q8_CORE_OPS_DEQUANTIZELINEAR_H
#define Q8_CORE_OPS_DEQUANTIZELINEAR_H

#include "ops/qop.h"

typedef struct q8_dequantizelinear_params {
    q8_qdq q;                   /* scale and zero point layout */
    q8_dtype xt;                /* x's type (the zero point's too) */
    int64_t rows;               /* numel / inner */
} q8_dequantizelinear_params;

#endif
