/* ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
 * ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp.
 *
 * axes come from the second input (it must be constant unless it is empty).
 * No axes: reduce everything, or copy when noop_with_empty_axes=1.
 *
 * The input dims are merged into alternating kept / reduced groups (size-1
 * dims dropped): output element o is at offset(o over kdims / kstride) and
 * reduces the elements at that plus offset(i over rdims / rstride), i in
 * [0, red_numel). float32 and float64 take every kind; int32 and int64 (shape
 * arithmetic) Sum, Max, Min and Prod, whose sums and products wrap around. */
#ifndef Q8_CORE_OPS_REDUCE_H
#define Q8_CORE_OPS_REDUCE_H

#include "common.h"

typedef enum q8_reduce_kind {
    Q8_REDUCE_SUM,
    Q8_REDUCE_MEAN,
    Q8_REDUCE_MAX,
    Q8_REDUCE_MIN,
    Q8_REDUCE_PROD,
    Q8_REDUCE_L1,
    Q8_REDUCE_L2,
    Q8_REDUCE_SUM_SQUARE,
    Q8_REDUCE_LOG_SUM,
    Q8_REDUCE_LOG_SUM_EXP,
} q8_reduce_kind;

typedef struct q8_reduce_params {
    q8_reduce_kind kind;
    q8_dtype dtype; /* of X and Y */
    /* empty axes and noop_with_empty_axes = 1: Y is a copy of X (in_numel
     * values) and nothing else below is set */
    bool noop;
    int64_t out_numel, red_numel, in_numel; /* outputs, elements per output, inputs */
    int nk, nr;                             /* merged kept / reduced groups */
    int64_t kdims[Q8_MAX_DIMS], kstride[Q8_MAX_DIMS];
    int64_t rdims[Q8_MAX_DIMS], rstride[Q8_MAX_DIMS];
    bool last_kept; /* the innermost group is kept (stride 1), or there is none */
} q8_reduce_params;

#endif
