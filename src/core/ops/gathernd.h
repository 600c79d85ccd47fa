/* GatherND: indices [..., k] pick slices data[b..., i_0..i_{k-1}, :] where
 * the first batch_dims dims of data and indices match. Output shape:
 * indices dims but the last, then data dims from batch_dims + k on.
 * Negative indices count from the end. Constant indices are range-checked in
 * infer; an out-of-range tuple at run time reads nothing and gives a zero
 * slice. */
#ifndef Q8_CORE_OPS_GATHERND_H
#define Q8_CORE_OPS_GATHERND_H

#include <stddef.h>

typedef struct q8_gather_nd_params {
    int batch;      /* batch_dims, in [0, min(data rank, indices rank)) */
    int k;          /* indices' last dim: data dims indexed per tuple, 1..rank - batch */
    size_t esize;   /* element size in bytes */
} q8_gather_nd_params;

#endif
