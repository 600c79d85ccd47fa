/* BatchNormalization, inference form: y = (x - mean) / sqrt(var + eps) * scale + B
 * per channel (dim 1) of X (N x C x D1 x ... x Dn). */
#ifndef Q8_CORE_OPS_BATCHNORM_H
#define Q8_CORE_OPS_BATCHNORM_H

#include <stdint.h>

typedef struct q8_batchnorm_params {
    int64_t rows;  /* N * C */
    int64_t c;     /* channels */
    int64_t s;     /* elements per (n, c): D1 * ... * Dn */
    float eps;
} q8_batchnorm_params;

#endif
