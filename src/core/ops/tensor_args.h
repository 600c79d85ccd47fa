/* Argument helpers of the shape and data-movement ops (Transpose, Slice,
 * Pad, ...): element sizes, axis normalization, index reading, int lists
 * for messages. */
#ifndef Q8_CORE_OPS_TENSOR_ARGS_H
#define Q8_CORE_OPS_TENSOR_ARGS_H

#include "graph.h"

/* Byte size of input i's elements; fails for strings and undefined types
 * (these ops copy bytes, so any fixed-size dtype works). */
q8_status q8_ta_elem_size(const q8_graph *g, const q8_node *n, int i, size_t *esize,
                          q8_error *err);

/* Normalize axes in [-rank, rank) to [0, rank); out of range or repeated
 * axes fail, naming `what` ("axes"). */
q8_status q8_ta_norm_axes(const q8_node *n, const char *what, int64_t *axes, int count, int rank,
                          q8_error *err);

/* "[2, -1, 0]": an int list for messages. */
const char *q8_ta_list_str(const int64_t *v, int n, char *buf, size_t size);

/* Product of dims[b..e). */
static inline int64_t q8_ta_prod(const int64_t *dims, int b, int e) {
    int64_t p = 1;
    for (int i = b; i < e; i++) p *= dims[i];
    return p;
}

/* Element i of an index tensor of dtype dt (int64, else int32). */
static inline int64_t q8_ta_index(q8_dtype dt, const void *p, int64_t i) {
    return dt == Q8_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

#endif
