/* Einsum (float32 / float64): `equation` in ONNX's (numpy's) form, e.g.
 * "bij,bjk->bik", "ij->ji", "...ii->...i", "i,i"; letters a-z and A-Z label
 * dims, "..." stands for the dims no letter names (broadcast across the
 * inputs, numpy's rules), spaces are ignored. A label repeated in one input
 * takes its diagonal. Without "->" the output is "..." then the letters
 * used once, in alphabetical order. Every output element sums, over the
 * labels not in the output, the product of the inputs' elements, in double,
 * in row-major order of those labels. */
#ifndef Q8_CORE_OPS_EINSUM_H
#define Q8_CORE_OPS_EINSUM_H

#include "common.h"

#define Q8_EINSUM_MAX_IN 8
#define Q8_EINSUM_MAX_LABELS (52 + Q8_MAX_DIMS)  /* letters, then "..." dims */

typedef struct q8_einsum_params {
    q8_dtype dtype;
    int n_in, n_labels, n_out;
    int out[Q8_MAX_DIMS];                       /* the output's labels, in order */
    int sum[Q8_EINSUM_MAX_LABELS];              /* the labels summed over, in order */
    int n_sum;
    int64_t size[Q8_EINSUM_MAX_LABELS];
    /* element stride of each label in each input (0: not there, or a
     * broadcast dim of 1; a diagonal adds its dims' strides) */
    int64_t stride[Q8_EINSUM_MAX_IN][Q8_EINSUM_MAX_LABELS];
} q8_einsum_params;

#endif
