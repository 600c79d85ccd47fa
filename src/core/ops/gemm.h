/* Gemm: Y = act(alpha * op(A) * op(B) + beta * C), A and B 2-D, C
 * unidirectionally broadcast to [M, N]. */
#ifndef Q8_CORE_OPS_GEMM_H
#define Q8_CORE_OPS_GEMM_H

#include <stdbool.h>

#include "ops/act.h"

typedef enum q8_gemm_cmode {
    Q8_GEMM_C_NONE,     /* no C, or beta == 0 */
    Q8_GEMM_C_BIAS_COL, /* C has N values along columns and beta == 1: a bias per column */
    Q8_GEMM_C_BIAS_ROW, /* C is [M, 1] and beta == 1: a bias per row */
    Q8_GEMM_C_FILL,     /* anything else: Y starts as broadcast C, times beta */
} q8_gemm_cmode;

typedef struct q8_gemm_params {
    int64_t m, n, k;
    bool ta, tb;                /* transA, transB */
    float alpha, beta;
    q8_gemm_cmode cmode;
    int64_t c_rows, c_cols;     /* C's shape as [c_rows, c_cols] */
    q8_act act;                 /* fused activation */
} q8_gemm_params;

#endif
