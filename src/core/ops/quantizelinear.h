/* QuantizeLinear: y = saturate(round_half_even(x / scale)
 * + zero_point), int8 or uint8 (the zero point's type; uint8 without one),
 * per tensor or per axis. Scale and zero point may be computed at run time;
 * when they are constants, the output gets them as its quantization
 * parameters (when the zero points agree). */
#ifndef Q8_CORE_OPS_QUANTIZELINEAR_H
#define Q8_CORE_OPS_QUANTIZELINEAR_H

#include "ops/qop.h"

typedef struct q8_quantizelinear_params {
    q8_qdq q;                   /* scale and zero point layout */
    bool in_i32;                /* x is int32 (else float32) */
    bool out_i8;                /* y is int8 (else uint8) */
    int64_t rows;               /* numel / inner */
} q8_quantizelinear_params;

#endif
