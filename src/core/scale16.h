/* Weight scales in 16 bits (.q8 version 7). quantize rounds each weight
 * scale up to a float with at most 12 significant bits (at most 2^-11
 * larger: no weight is clipped); a tensor whose scales all have that form
 * and lie within 32 binades is stored with 2 bytes a scale instead of 4,
 * and widened back to the same floats, exactly, when the file is read.
 *
 * A 16-bit scale h, against its tensor's base (the smallest biased float
 * exponent among its scales, 1..254): bits 15..11 the binade above the
 * base, bits 10..0 the float's top 11 stored mantissa bits. */
#ifndef Q8_CORE_SCALE16_H
#define Q8_CORE_SCALE16_H

#include <stdbool.h>
#include <stdint.h>

/* The smallest float of the 16-bit form >= s; s itself when s is not a
 * positive, finite, normal float (or rounding up would overflow). */
float q8_scale16_ceil(float s);

/* Whether every one of s[0..n) has the 16-bit form (n >= 1); *base gets
 * the base to store. */
bool q8_scale16_fits(const float *s, int64_t n, uint32_t *base);

uint16_t q8_scale16_pack(float s, uint32_t base);

/* The float that h stands for; false when base + h's binade passes 254
 * (not a finite float) or base is outside 1..254. */
bool q8_scale16_unpack(uint16_t h, uint32_t base, float *out);

#endif
