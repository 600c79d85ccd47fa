/* q8.QMul: the product of two int8 tensors with per-tensor scales,
 * requantized to the output's scale (y_scale). B has A's shape, or A's
 * leading dims and 1 in every later one (a squeeze-excite gate [N, C, 1, 1]
 * scaling [N, C, H, W]); A is seen as outer x inner, B as outer values:
 *
 *   y[o, i] = clamp((a[o, i] * b[o] * m + 2^(shift - 1)) >> shift, -128, 127)
 *
 * with m = round(sa * sb / sy * 2^shift) and the largest shift in [1, 30]
 * that keeps m at most 32767 (15 significant bits). |a * b| <= 2^14, so
 * a * b * m plus the rounding term fits int32; >> is arithmetic (round half
 * up). Kernels may form b * m first (exact: the same integer). */
#ifndef Q8_CORE_OPS_QMUL_H
#define Q8_CORE_OPS_QMUL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct q8_qmul_params {
    int32_t m;          /* in [0, 32767] */
    int32_t shift;      /* in [1, 30] */
    int64_t outer;      /* values of B */
    int64_t inner;      /* elements of A per value of B (1: same shape) */
} q8_qmul_params;

struct q8_tensor;
/* b has a's shape, or a's leading dims and 1 in every later one (the
 * broadcast q8.QMul and q8.QMulF take); *inner (if not NULL): elements of
 * a per value of b. */
bool q8_qmul_broadcasts(const struct q8_tensor *a, const struct q8_tensor *b, int64_t *inner);

/* m and shift for the real multiplier r = sa * sb / sy (positive, finite). */
void q8_qmul_multiplier(double r, q8_qmul_params *p);

/* One element, the definition every kernel matches. */
static inline int8_t q8_qmul_one(const q8_qmul_params *p, int8_t a, int8_t b) {
    int32_t v = ((int32_t)a * b * p->m + (1 << (p->shift - 1))) >> p->shift;
    return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

/* q8.QMulF: the same operands and broadcast, multiplied the way
 * DequantizeLinear -> Mul -> QuantizeLinear compute it in float32 (the
 * quantizer's default for a squeeze-excite gate, whose float product keeps
 * accuracy that q8.QMul's integer requantization loses), in one pass:
 *
 *   y = round_half_even(((float)a * a_scale) * ((float)b * b_scale) / y_scale)
 *
 * saturated to int8 (kernels/common/requant.h q8_round_sat, QuantizeLinear's
 * rounding): bit for bit the three nodes' result. Attributes a_scale,
 * b_scale, y_scale (the DequantizeLinear and QuantizeLinear scales; zero
 * points 0). */
typedef struct q8_qmulf_params {
    float sa, sb, sy;
    int64_t outer;      /* values of B */
    int64_t inner;      /* elements of A per value of B (1: same shape) */
} q8_qmulf_params;

#endif
