/* MaxPool and AveragePool over 1 to 3 spatial dims (N x C x D1 [x D2 [x D3]]),
 * with strides, pads, dilations, auto_pad and ceil_mode. The geometry is
 * given as 3-D (leading spatial dims of size 1). MaxPool takes float32, int8
 * and uint8 and can produce Indices (int64, flattened over the whole input,
 * row- or column-major per storage_order). A window that holds no input
 * element (possible with large dilations) gives the lowest value and index -1
 * for MaxPool, 0 for AveragePool. */
#ifndef Q8_CORE_OPS_POOL_H
#define Q8_CORE_OPS_POOL_H

#include "common.h"

typedef struct q8_pool_params {
    int64_t nc;            /* N * C */
    int64_t in[3], out[3]; /* spatial dims, D, H, W order */
    int64_t k[3];          /* kernel_shape */
    int64_t s[3], d[3];    /* strides, dilations */
    int64_t pb[3], pe[3];  /* padding at the start / end, auto_pad resolved */
    bool avg;              /* AveragePool (else MaxPool) */
    bool include_pad;      /* count_include_pad = 1 */
    bool col_major;        /* storage_order = 1 (Indices) */
    q8_dtype dtype;        /* of X and Y */
} q8_pool_params;

#endif
