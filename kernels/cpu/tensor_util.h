/* CPU kernels shared by the shape and data-movement ops: a strided copy and
 * a fill, generic over element size. Their arguments come from the core
 * (src/core/ops/tensor_args.h) and the strided view from
 * kernels/common/strided.h. */
#ifndef Q8_KERNELS_CPU_TENSOR_UTIL_H
#define Q8_KERNELS_CPU_TENSOR_UTIL_H

#include "cpu_op.h"
#include "ops/tensor_args.h"
#include "strided.h"

/* Copy the view into dense dst (s should be simplified first). */
void q8_tu_strided_copy(q8_pool *pool, void *dst, const void *src, const q8_strided *s);

/* Grain (in items) so that one chunk moves at least ~32 KiB. */
static inline int64_t q8_tu_grain(size_t bytes_per_item) {
    int64_t g = (int64_t)(32768 / (bytes_per_item ? bytes_per_item : 1));
    return g > 0 ? g : 1;
}

/* Fill n elements of size esize at dst with the element at val. */
void q8_tu_fill(void *dst, const void *val, int64_t n, size_t esize);

#endif
