/* Transpose: output dim k is input dim perm[k] (default perm: reversed). */
#ifndef Q8_CORE_OPS_TRANSPOSE_H
#define Q8_CORE_OPS_TRANSPOSE_H

#include "common.h"

typedef struct q8_transpose_params {
    int perm[Q8_MAX_DIMS];  /* a permutation of 0..rank-1 (rank: the input's) */
    size_t esize;           /* element size in bytes */
} q8_transpose_params;

#endif
