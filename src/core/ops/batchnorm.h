/* BatchNormalization, inference form: y = (x - mean) / sqrt(var + eps) * scale + B
 * per channel (dim 1) of X (N x C x D1 x ... x Dn). Opsets 7-8 with
 * spatial=0 take per-activation statistics of shape C x D1 x ... x Dn. */
#ifndef Q8_CORE_OPS_BATCHNORM_H
#define Q8_CORE_OPS_BATCHNORM_H

#include <stdbool.h>
#include <stdint.h>

typedef struct q8_batchnorm_params {
    int64_t rows;  /* N * C */
    int64_t c;     /* channels */
    int64_t s;     /* elements per (n, c): D1 * ... * Dn */
    float eps;
    bool per_elem; /* statistics hold C * s values (spatial = 0) */
} q8_batchnorm_params;

#endif
