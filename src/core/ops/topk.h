/* TopK: the k largest (largest = 1, the default) or smallest values along
 * `axis` (default -1) of input 0, and their int64 indices, always sorted
 * (largest first, or smallest first); equal values in index order. A NaN
 * counts as larger than every number. k is input 1, an int64 [1] constant
 * (it decides the outputs' shape), 0 <= k <= the axis' length. dtypes:
 * float32/64, int32/64. The input seen as outer x len x inner. */
#ifndef Q8_CORE_OPS_TOPK_H
#define Q8_CORE_OPS_TOPK_H

#include "common.h"

typedef struct q8_topk_params {
    q8_dtype dtype;
    bool largest;
    int64_t outer, len, inner, k;
} q8_topk_params;

#endif
