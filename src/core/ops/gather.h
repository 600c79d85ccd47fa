/* Gather along an axis with int32/int64 indices (negative ones count from
 * the end): out[outer, idx..., inner] = data[outer, indices[idx...], inner].
 * Constant indices are range-checked in infer. An index that is out of range
 * at run time (a non-constant indices tensor) is never used to read: its
 * output block is filled with zero bytes instead. */
#ifndef Q8_CORE_OPS_GATHER_H
#define Q8_CORE_OPS_GATHER_H

#include <stddef.h>

typedef struct q8_gather_params {
    int axis;       /* of data, in [0, rank) */
    size_t esize;   /* element size in bytes */
} q8_gather_params;

#endif
