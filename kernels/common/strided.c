#include "strided.h"

void q8_row_strides(const int64_t *dims, int ndim, int64_t *stride) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        stride[i] = s;
        s *= dims[i];
    }
}

void q8_strided_simplify(q8_strided *s) {
    int64_t numel = 1;
    for (int i = 0; i < s->ndim; i++) numel *= s->dims[i];
    if (numel == 0) {
        s->ndim = 1;
        s->dims[0] = 0;
        s->stride[0] = 1;
        return;
    }
    int k = 0;
    for (int i = 0; i < s->ndim; i++) {
        if (s->dims[i] == 1) continue;
        if (k > 0 && s->stride[k - 1] == s->stride[i] * s->dims[i]) {
            s->dims[k - 1] *= s->dims[i];
            s->stride[k - 1] = s->stride[i];
            continue;
        }
        s->dims[k] = s->dims[i];
        s->stride[k] = s->stride[i];
        k++;
    }
    s->ndim = k;
}

void q8_strided_permute(q8_strided *s, const int64_t *dims, int ndim, const int *perm,
                        size_t esize) {
    int64_t in_stride[Q8_MAX_DIMS];
    q8_row_strides(dims, ndim, in_stride);
    *s = (q8_strided){.ndim = ndim, .esize = esize};
    for (int k = 0; k < ndim; k++) {
        s->dims[k] = dims[perm[k]];
        s->stride[k] = in_stride[perm[k]];
    }
    q8_strided_simplify(s);
}

void q8_strided_slice(q8_strided *s, const int64_t *dims, int ndim, const int64_t *start,
                      const int64_t *step, const int64_t *out_dims, size_t esize) {
    int64_t stride[Q8_MAX_DIMS];
    q8_row_strides(dims, ndim, stride);
    *s = (q8_strided){.ndim = ndim, .esize = esize};
    for (int d = 0; d < ndim; d++) {
        s->offset += start[d] * stride[d];
        s->dims[d] = out_dims[d];
        s->stride[d] = step[d] * stride[d];
    }
    q8_strided_simplify(s);
}
