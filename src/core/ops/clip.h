/* Clip: y = min(max(x, lo), hi), x float32/float64 or any integer dtype.
 * lo/hi are optional scalar inputs of x's dtype (absent: no bound), which
 * may be computed, so they are read at run time. lo > hi gives hi
 * everywhere (numpy's clip); NaN in x stays NaN. */
#ifndef Q8_CORE_OPS_CLIP_H
#define Q8_CORE_OPS_CLIP_H

#include <stdbool.h>

typedef struct q8_clip_params {
    bool has_lo, has_hi;    /* input 1 (min) / 2 (max) is given */
} q8_clip_params;

#endif
