/* q8.QAdd: the sum of two int8 tensors of one shape, each with its own
 * per-tensor scale, requantized to the output's scale (y_scale):
 *
 *   y = clamp((a * ma + b * mb + 2^(shift - 1)) >> shift, lo, 127)
 *
 * lo is -128, or 0 with a Relu fused into it (the internal attribute
 * _act = "Relu", set by q8_pass_fuse_activations on an int8 Relu that only
 * reads the sum: the same bytes as the Relu after it, one pass fewer).
 *
 * with ma = round(sa / sy * 2^shift), mb = round(sb / sy * 2^shift) and the
 * largest shift in [1, 30] that keeps both in int16 (at most 32767; the
 * multipliers then carry 15 significant bits). The sum fits int32 (|a|,
 * |b| <= 128); >> is arithmetic, so the rounding is half up. Residual
 * additions between INT8 layers (ResNet, BlazeFace, MobileNet blocks) run
 * on the int8 tensors instead of a dequantize of each side, a float add
 * and a quantize. */
#ifndef Q8_CORE_OPS_QADD_H
#define Q8_CORE_OPS_QADD_H

#include <stdint.h>

typedef struct q8_qadd_params {
    int32_t ma, mb;     /* the multipliers of A and B, in [0, 32767] */
    int32_t shift;      /* in [1, 30] */
    int32_t lo;         /* the lower clamp: -128, or 0 (a fused Relu) */
    int64_t n;          /* elements */
} q8_qadd_params;

/* The multipliers for scales sa, sb and sy (all positive and finite); lo
 * -128. */
void q8_qadd_multipliers(double sa, double sb, double sy, q8_qadd_params *p);

/* One element, the definition every kernel matches. */
static inline int8_t q8_qadd_one(const q8_qadd_params *p, int8_t a, int8_t b) {
    int32_t v = ((int32_t)a * p->ma + (int32_t)b * p->mb + (1 << (p->shift - 1))) >> p->shift;
    return (int8_t)(v < p->lo ? p->lo : v > 127 ? 127 : v);
}

#endif
