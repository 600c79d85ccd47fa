/* Concat along one axis (negative counts from the end). Inputs must agree
 * on dtype, rank and every dim but the axis; size-0 inputs are allowed. */
#ifndef Q8_CORE_OPS_CONCAT_H
#define Q8_CORE_OPS_CONCAT_H

#include <stddef.h>

typedef struct q8_concat_params {
    int axis;       /* in [0, rank) */
    size_t esize;   /* element size in bytes */
} q8_concat_params;

#endif
