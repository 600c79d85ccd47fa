/* GatherElements: out has the shape of indices (same rank as data, each dim
 * but the axis at most data's); out[i] = data[i with i[axis] replaced by
 * indices[i]], negative indices counting from the end. Constant indices are
 * range-checked in infer; an out-of-range index at run time reads nothing
 * and gives a zero element. */
#ifndef Q8_CORE_OPS_GATHER_ELEMENTS_H
#define Q8_CORE_OPS_GATHER_ELEMENTS_H

#include <stddef.h>

typedef struct q8_gather_elements_params {
    int axis;       /* in [0, rank) */
    size_t esize;   /* element size in bytes */
} q8_gather_elements_params;

#endif
