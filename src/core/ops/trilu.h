/* Trilu: the upper (upper = 1, the default) or lower triangle of each of
 * the last two dims' matrices of input 0, the rest set to zero (any
 * dtype). An element (i, j) is kept when j - i >= k (upper) or j - i <= k
 * (lower); k is the optional int64 scalar input 1 (default 0), read when
 * the node runs, so it need not be a constant. */
#ifndef Q8_CORE_OPS_TRILU_H
#define Q8_CORE_OPS_TRILU_H

#include "common.h"

typedef struct q8_trilu_params {
    bool upper;
    bool has_k;              /* input 1 given */
    size_t elem;             /* bytes an element */
    int64_t batch, rows, cols;
} q8_trilu_params;

#endif
