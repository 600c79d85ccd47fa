/* Clip: y = min(max(x, lo), hi), x float32/float64 or any integer dtype.
 * Before opset 11 lo/hi are float attributes (float x only); from 11 they
 * are optional scalar inputs of x's dtype (absent: no bound), which may be
 * computed, so they are read at run time. lo > hi gives hi everywhere
 * (numpy's clip); NaN in x stays NaN. */
#ifndef Q8_CORE_OPS_CLIP_H
#define Q8_CORE_OPS_CLIP_H

#include <stdbool.h>

typedef struct q8_clip_params {
    bool attrs;             /* opset < 11: the bounds are lo and hi below */
    /* The min / max attributes, with Clip-6's defaults -FLT_MAX / FLT_MAX
     * (numeric_limits lowest / max); read whatever the opset. */
    float lo, hi;
    bool has_lo, has_hi;    /* opset >= 11: input 1 (min) / 2 (max) is given */
} q8_clip_params;

#endif
