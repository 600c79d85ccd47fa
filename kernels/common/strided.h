/* A strided view of a dense source tensor, as Transpose and Slice read it on
 * every backend: built from the core params (src/core/ops/transpose.h,
 * slice.h) and simplified on the host, then copied by each backend's kernel
 * (kernels/cpu/tensor_util.c, kernels/cuda/strided_copy.cu). */
#ifndef Q8_KERNELS_COMMON_STRIDED_H
#define Q8_KERNELS_COMMON_STRIDED_H

#include <stddef.h>
#include <stdint.h>

#include "q8.h"

/* The dense destination element at index (i0, .., i{ndim-1}) is
 * src[offset + sum(i_k * stride[k])], counted in elements (strides may be
 * negative or zero). */
typedef struct q8_strided {
    int ndim;
    size_t esize;
    int64_t offset;
    int64_t dims[Q8_MAX_DIMS];
    int64_t stride[Q8_MAX_DIMS];
} q8_strided;

/* Row-major strides (in elements) of a shape. */
void q8_row_strides(const int64_t *dims, int ndim, int64_t *stride);

/* Drop size-1 dims and merge dims that are contiguous in the source; a
 * size-0 view becomes ndim 1 with dims[0] = 0. */
void q8_strided_simplify(q8_strided *s);

/* Transpose: view dim k is dim perm[k] of the dense source of shape
 * dims[0..ndim); simplified. */
void q8_strided_permute(q8_strided *s, const int64_t *dims, int ndim, const int *perm,
                        size_t esize);

/* Slice: along each dim d of the dense source of shape dims[0..ndim), the
 * elements start[d] + i * step[d] for i < out_dims[d]; simplified. */
void q8_strided_slice(q8_strided *s, const int64_t *dims, int ndim, const int64_t *start,
                      const int64_t *step, const int64_t *out_dims, size_t esize);

#endif
