/* Normalizations over fixed groups of float32 elements:
 * - InstanceNormalization: x [N, C, ...], scale [C], B [C] (inputs 1, 2,
 *   read when the node runs); per (n, c) over the rest: y = scale[c] * (x -
 *   mean) / sqrt(var + epsilon) + B[c] (epsilon default 1e-5; the biased
 *   variance).
 * - MeanVarianceNormalization: over `axes` (default [0, 2, 3]): y = (x -
 *   mean) / (sqrt(var) + 1e-9), the spec's function body.
 * - LRN: x [N, C, ...]; y = x / (bias + alpha / size * s)^beta, s the sum of
 *   x^2 over channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2)
 *   at the same place (alpha 1e-4, beta 0.75, bias 1 by default; size
 *   required).
 * Means and variances are accumulated in double, in element order. */
#ifndef Q8_CORE_OPS_INSTNORM_H
#define Q8_CORE_OPS_INSTNORM_H

#include "common.h"

typedef enum q8_norm_kind { Q8_NORM_INSTANCE, Q8_NORM_MVN, Q8_NORM_LRN } q8_norm_kind;

typedef struct q8_instnorm_params {
    q8_norm_kind kind;
    float epsilon, alpha, beta, bias;
    int64_t size;                   /* LRN */
    int rank;
    int64_t dims[Q8_MAX_DIMS];
    bool reduce[Q8_MAX_DIMS];       /* MVN: the axes averaged over */
    int64_t groups, group_len;      /* MVN: kept elements, averaged elements */
} q8_instnorm_params;

#endif
