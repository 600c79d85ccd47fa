/* q8.QGemm: Y[..., n] = B[n] + sum_k A[..., k] * W[n, k] (docs/int8-ops.md).
 * A int8 of rank >= 1 with a per-tensor scale (its leading dims are batch
 * rows), W int8 constant [N, K] with per-channel scales, optional int32
 * constant bias [N]; int8 (y_scale) or float32 output [..., N]. */
#ifndef Q8_CORE_OPS_QGEMM_H
#define Q8_CORE_OPS_QGEMM_H

#include "ops/qop.h"

typedef struct q8_qgemm_params {
    int64_t M;                  /* rows: the product of A's leading dims */
    int64_t N, K;               /* W is [N, K] */
    q8_qop_quant q;             /* sx: A's scale; per-channel scales are W's */
    bool has_bias;              /* input 2 */
} q8_qgemm_params;

#endif
