/* q8.QMatMul: Y = A x B for two int8 activations with per-tensor scales,
 * A [..., M, K] and B [..., K, N] with numpy batch broadcasting
 * (docs/int8-ops.md); int8 (y_scale) or float32 output [..., M, N]. The
 * multiplier is sa * sb / sy. */
#ifndef Q8_CORE_OPS_QMATMUL_H
#define Q8_CORE_OPS_QMATMUL_H

#include "ops/qop.h"

typedef struct q8_qmatmul_params {
    int64_t M, N, K;
    int nb;                         /* output batch dims */
    int64_t bdims[Q8_MAX_DIMS];     /* their sizes */
    int64_t astr[Q8_MAX_DIMS], bstr[Q8_MAX_DIMS]; /* in matrices; 0: broadcast */
    int64_t batches;                /* product of bdims */
    q8_qop_quant q;                 /* sx: A's scale */
    float sb;                       /* B's scale */
} q8_qmatmul_params;

#endif
