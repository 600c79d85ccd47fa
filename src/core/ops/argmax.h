/* ArgMax and ArgMin: the index (int64) of the largest / smallest value
 * along `axis` (default 0), the axis kept as 1 (keepdims, default 1) or
 * removed. Ties give the first index, or the last with select_last_index=1.
 * A NaN counts as beyond every number (numpy's rule): the first NaN (the
 * last, with select_last_index) wins. The input seen as outer x len x inner;
 * output o = (outer index) * inner + (inner index).
 * Hardmax (float32, axis default -1, opset 13): the same shape as its
 * input, 1 at the first largest value of each line along axis (a NaN
 * counts as the largest, as above), 0 elsewhere. */
#ifndef Q8_CORE_OPS_ARGMAX_H
#define Q8_CORE_OPS_ARGMAX_H

#include "common.h"

typedef struct q8_argmax_params {
    q8_dtype dtype;             /* of the data: float32/64, int8/16/32/64, uint8/16/32/64 */
    bool min;                   /* ArgMin */
    bool last;                  /* select_last_index */
    int64_t outer, len, inner;
} q8_argmax_params;

#endif
