/* LayerNormalization: each row of X over dims [axis, rank) is
 * normalized to zero mean and unit variance, then scaled and shifted:
 * Y = (X - mean) / sqrt(var + epsilon) * Scale + B. Scale and the optional B
 * broadcast (numpy rules, right-aligned) to X.shape[axis:]. The optional
 * outputs Mean and InvStdDev have shape X.shape[:axis] + [1,...]. */
#ifndef Q8_CORE_OPS_LAYERNORM_H
#define Q8_CORE_OPS_LAYERNORM_H

#include "common.h"

typedef struct q8_layernorm_params {
    int64_t rows, len; /* outer rows, normalized elements per row */
    float eps;
    int nd;                    /* normalized dims */
    int64_t dims[Q8_MAX_DIMS]; /* X.shape[axis:] */
    /* Scale's and B's element strides over dims (0 on broadcast dims) */
    int64_t sstride[Q8_MAX_DIMS], bstride[Q8_MAX_DIMS];
    bool s_full, b_full; /* already X.shape[axis:]: len values in order, no expansion */
    bool has_b;          /* B is given */
} q8_layernorm_params;

#endif
