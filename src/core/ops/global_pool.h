/* GlobalAveragePool and GlobalMaxPool: one value per (n, c) over all spatial
 * dims of X (N x C x ...); output N x C x 1 x ... x 1. GlobalMaxPool also
 * takes int8 and uint8. */
#ifndef Q8_CORE_OPS_GLOBAL_POOL_H
#define Q8_CORE_OPS_GLOBAL_POOL_H

#include "common.h"

typedef struct q8_global_pool_params {
    int64_t rows;   /* N * C */
    int64_t s;      /* values pooled per row: the product of the spatial dims */
    bool avg;       /* GlobalAveragePool (else GlobalMaxPool) */
    q8_dtype dtype; /* of X and Y */
} q8_global_pool_params;

#endif
