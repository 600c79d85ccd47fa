/* CumSum: running sums of input 0 along the axis given by input 1 (an int32
 * or int64 scalar, a constant: it decides the loop), in the input's dtype
 * (float32/64, int32/64, uint32/64), summed in order. exclusive = 1: each
 * sum leaves out its own element (the first is 0); reverse = 1: sums run
 * from the end. The input seen as outer x len x inner. */
#ifndef Q8_CORE_OPS_CUMSUM_H
#define Q8_CORE_OPS_CUMSUM_H

#include "common.h"

typedef struct q8_cumsum_params {
    q8_dtype dtype;
    bool exclusive, reverse;
    int64_t outer, len, inner;
} q8_cumsum_params;

#endif
