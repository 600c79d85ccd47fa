/* Applying a fused activation (src/core/ops/act.h) to float32 values on the
 * CPU. */
#ifndef Q8_FUSED_ACT_H
#define Q8_FUSED_ACT_H

#include <stdint.h>

#include "ops/act.h"

/* x[i] = act(x[i]) for i < len. */
void q8_act_apply(const q8_act *a, float *x, int64_t len);

#endif
