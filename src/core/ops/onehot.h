/* OneHot: indices (any numeric dtype; a float index is truncated toward
 * zero) -> the indices' shape with `depth` inserted at `axis` (default -1,
 * the last); the element at depth position d is values[1] where the index
 * equals d, values[0] elsewhere. A negative index in [-depth, -1] counts
 * from the end; one outside [-depth, depth) gives values[0] everywhere.
 * depth is input 1, a constant scalar (it decides the shape); values is
 * input 2, [off, on] of the output's dtype, read when the node runs. */
#ifndef Q8_CORE_OPS_ONEHOT_H
#define Q8_CORE_OPS_ONEHOT_H

#include "common.h"

typedef struct q8_onehot_params {
    q8_dtype index_dtype;
    size_t elem;                /* bytes an output element */
    int64_t outer, depth, inner;
} q8_onehot_params;

/* IsNaN and IsInf: float32/64 -> bool of the same shape. IsInf's
 * detect_negative and detect_positive (both 1 by default) choose which
 * infinities count. */
typedef struct q8_isnan_params {
    q8_dtype dtype;
    bool inf, negative, positive;
} q8_isnan_params;

/* EyeLike: the input's 2-D shape in `dtype` (an ONNX code; default the
 * input's), 1 where column - row == k (default 0), 0 elsewhere. */
typedef struct q8_eyelike_params {
    size_t elem;
    uint8_t one[8];             /* 1 in the output dtype's bytes */
    int64_t rows, cols, k;
} q8_eyelike_params;

#endif
