/* Slice: constant inputs starts, ends and the optional axes, steps. Starts
 * and ends are adjusted and clamped exactly as the ONNX spec says (negative
 * values + dim; positive steps clamp to [0, dim], negative steps start to
 * [0, dim-1] and end to [-1, dim-1]), so INT64_MAX / INT64_MIN ends work. */
#ifndef Q8_CORE_OPS_SLICE_H
#define Q8_CORE_OPS_SLICE_H

#include "common.h"

/* Output element i along dim d is input element start[d] + i * step[d]
 * (i < the output's dims[d]), for every dim d of the input's rank. */
typedef struct q8_slice_params {
    int64_t start[Q8_MAX_DIMS]; /* in [0, dim); 0 where the output dim is empty */
    int64_t step[Q8_MAX_DIMS];  /* nonzero; 1 where the output dim has at most one element */
    size_t esize;               /* element size in bytes */
} q8_slice_params;

#endif
