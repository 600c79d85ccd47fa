/* Helpers shared by the shape and data-movement ops (the ops_tensor family):
 * element sizes, int lists that moved from attributes to inputs, axis
 * normalization, and a strided copy kernel generic over element size. */
#ifndef Q8_KERNELS_CPU_TENSOR_UTIL_H
#define Q8_KERNELS_CPU_TENSOR_UTIL_H

#include "cpu_op.h"

/* Byte size of input i's elements; fails for strings and undefined types
 * (these ops copy bytes, so any fixed-size dtype works). */
q8_status q8_tu_elem_size(const q8_graph *g, const q8_node *n, int i, size_t *esize,
                          q8_error *err);

/* An int list that is attribute `name` before opset `since` and (optional)
 * input `input` from then on. Absent: *present = false, *count = 0. The
 * wrong form for the model's opset is an error. */
q8_status q8_tu_ints_arg(const q8_graph *g, const q8_node *n, const char *name, int since,
                         int input, int64_t *out, int max, int *count, bool *present,
                         q8_error *err);

/* Normalize axes in [-rank, rank) to [0, rank); out of range or repeated
 * axes fail, naming `what` ("axes"). */
q8_status q8_tu_norm_axes(const q8_node *n, const char *what, int64_t *axes, int count, int rank,
                          q8_error *err);

/* "[2, -1, 0]": an int list for messages. */
const char *q8_tu_list_str(const int64_t *v, int n, char *buf, size_t size);

/* A strided view of a source tensor: the dense destination element at
 * index (i0, .., i{ndim-1}) is src[offset + sum(i_k * stride[k])], counted
 * in elements (strides may be negative or zero). */
typedef struct q8_strided {
    int ndim;
    size_t esize;
    int64_t offset;
    int64_t dims[Q8_MAX_DIMS];
    int64_t stride[Q8_MAX_DIMS];
} q8_strided;

/* Drop size-1 dims and merge dims that are contiguous in the source; a
 * size-0 view becomes ndim 1 with dims[0] = 0. */
void q8_tu_strided_simplify(q8_strided *s);
/* Copy the view into dense dst (s should be simplified first). */
void q8_tu_strided_copy(q8_pool *pool, void *dst, const void *src, const q8_strided *s);

/* Row-major strides (in elements) of a shape. */
void q8_tu_strides(const int64_t *dims, int ndim, int64_t *stride);

/* Product of dims[b..e). */
static inline int64_t q8_tu_prod(const int64_t *dims, int b, int e) {
    int64_t p = 1;
    for (int i = b; i < e; i++) p *= dims[i];
    return p;
}

/* Grain (in items) so that one chunk moves at least ~32 KiB. */
static inline int64_t q8_tu_grain(size_t bytes_per_item) {
    int64_t g = (int64_t)(32768 / (bytes_per_item ? bytes_per_item : 1));
    return g > 0 ? g : 1;
}

/* Fill n elements of size esize at dst with the element at val. */
void q8_tu_fill(void *dst, const void *val, int64_t n, size_t esize);

#endif
