/* ScatterElements (and Scatter, its older name), ScatterND: the output is
 * a copy of data (input 0) with the updates (input 2) written at the
 * places the indices (input 1, int32/int64, read when the node runs) name,
 * one after another in the updates' order: with reduction "none" (the
 * default) the last of duplicate indices wins; "add", "mul", "max", "min"
 * combine each update with what is there (float32/64, int32/64 data).
 * ScatterElements: indices and updates of one shape, of data's rank; the
 * update at position p goes to p with p[axis] replaced by its index.
 * ScatterND: indices [..., k] (k <= rank), updates = indices' dims but the
 * last, then data's dims from k on; each k-tuple names a slice.
 * Negative indices count from the end; an index out of range at run time
 * skips its update (run never fails). */
#ifndef Q8_CORE_OPS_SCATTER_H
#define Q8_CORE_OPS_SCATTER_H

#include "common.h"

typedef enum q8_scatter_reduce {
    Q8_SCATTER_NONE, Q8_SCATTER_ADD, Q8_SCATTER_MUL, Q8_SCATTER_MAX, Q8_SCATTER_MIN,
} q8_scatter_reduce;

typedef struct q8_scatter_params {
    bool nd;                        /* ScatterND */
    q8_scatter_reduce reduce;
    q8_dtype dtype, index_dtype;
    size_t elem;
    int rank, axis;                 /* data's rank; ScatterElements' axis */
    int64_t dims[Q8_MAX_DIMS];      /* data's dims */
    int64_t udims[Q8_MAX_DIMS];     /* ScatterElements: updates' (= indices') dims */
    int64_t n_updates;              /* ScatterElements: elements; ScatterND: tuples */
    int k;                          /* ScatterND: tuple length */
    int64_t slice;                  /* ScatterND: elements a tuple names */
} q8_scatter_params;

#endif
