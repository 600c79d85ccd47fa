/* BatchNormalization, inference form: y = (x - mean) / sqrt(var + eps) * scale + B
 * per channel (dim 1) of X (N x C x D1 x ... x Dn). */
#ifndef Q8_CORE_OPS_BATCHNORM_H
#define Q8_CORE_OPS_BATCHNORM_H

#include <math.h>
#include <stdint.h>

typedef struct q8_batchnorm_params {
    int64_t rows;  /* N * C */
    int64_t c;     /* channels */
    int64_t s;     /* elements per (n, c): D1 * ... * Dn */
    float eps;
} q8_batchnorm_params;

/* Channel c's y = x * k + m: the one float expression every BatchNormalization
 * kernel (CPU, CUDA, q8.EwChain's leading step) uses, so all give the same
 * bits (built without FMA contraction). */
static inline void q8_bn_channel(const float *scale, const float *bias, const float *mean,
                                 const float *var, float eps, int64_t c, float *k, float *m) {
    *k = scale[c] / sqrtf(var[c] + eps);
    *m = bias[c] - mean[c] * *k;
}

#endif
