/* Vectorized QuantizeLinear for float32 data with one scale: the same
 * arithmetic as q8_round_sat (IEEE division, NaN -> 0, clamp to +-2^22, the
 * 1.5*2^23 rounding trick, then zero point and saturation), so every path
 * gives identical bytes. */
#ifndef Q8_QUANT_SIMD_H
#define Q8_QUANT_SIMD_H

#include <stdbool.h>
#include <stdint.h>

void q8_quantize_f32(const float *x, void *y, int64_t n, float scale, int32_t zp, bool out_i8);

#endif
