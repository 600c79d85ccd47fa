/* Applying a fused activation (src/core/ops/act.h) to float32 values on the
 * CPU. */
#ifndef Q8_FUSED_ACT_H
#define Q8_FUSED_ACT_H

#include <stdint.h>

#include "ops/act.h"

/* x[i] = act(x[i]) for i < len. */
void q8_act_apply(const q8_act *a, float *x, int64_t len);

/* A GEMM epilogue in one call: for i < rows, j < cols, x[i*ld + j] plus
 * bias_rows[i] (when given) or else bias_cols[j] (when given), then act;
 * the same values as adding and calling q8_act_apply row by row. */
void q8_act_apply_block(const q8_act *a, float *x, int64_t rows, int64_t cols, int64_t ld,
                        const float *bias_rows, const float *bias_cols);

#endif
