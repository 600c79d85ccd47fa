/* q8.QGlobalAveragePool: the mean of each (n, c) plane of an int8 tensor
 * X [N, C, ...] (per-tensor scale sx), requantized once to the output's
 * scale sy (y_scale); output int8 [N, C, 1, ..., 1]. With s values per plane:
 *
 *   acc = sum of the s values (exact int32: s * 128 < 2^31)
 *   y   = clamp((acc * mult + 2^(shift - 1)) >> shift, -128, 127)   (64-bit, arithmetic >>)
 *
 * where mult * 2^-shift is M = sx / (s * sy), made as the INT8 ops'
 * requantization (docs/int8-ops.md): mult in [2^30, 2^31), shift in [1, 62];
 * mult 0 when no plane can reach half a step. */
#ifndef Q8_CORE_OPS_QGAP_H
#define Q8_CORE_OPS_QGAP_H

#include <stdint.h>

typedef struct q8_qgap_params {
    int64_t rows;       /* N * C */
    int64_t s;          /* values per plane (>= 1) */
    int32_t mult, shift;
} q8_qgap_params;

/* Longest plane: |acc| <= 128 * s stays below 2^31. */
#define Q8_QGAP_MAX_S ((int64_t)1 << 24)

/* mult and shift for M (positive, finite). */
void q8_qgap_multiplier(double M, q8_qgap_params *p);

/* One plane's output from its exact sum, the definition every kernel matches. */
static inline int8_t q8_qgap_one(const q8_qgap_params *p, int32_t acc) {
    int64_t v = ((int64_t)acc * p->mult + ((int64_t)1 << (p->shift - 1))) >> p->shift;
    return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

#endif
