/* Shared geometry for Conv and ConvTranspose: attribute parsing and
 * validation, with 1-D and 2-D convolutions widened to 3-D (leading spatial
 * dims of size 1) so one set of loops serves all ranks. */
#ifndef Q8_CORE_OPS_CONV_GEOM_H
#define Q8_CORE_OPS_CONV_GEOM_H

#include "graph.h"

#define Q8_CONV_MAX_SP 3

typedef enum q8_auto_pad {
    Q8_PAD_NOTSET,
    Q8_PAD_SAME_UPPER,
    Q8_PAD_SAME_LOWER,
    Q8_PAD_VALID,
} q8_auto_pad;

/* Spatial geometry, always 3-D: the real dims are the last nsp entries. */
typedef struct q8_conv_geom {
    int nsp;
    int64_t in[3], out[3], k[3], s[3], d[3];
    int64_t pb[3], pe[3];    /* pads at the start / end (ConvTranspose: may be < 0) */
} q8_conv_geom;

/* Read kernel_shape (checked against the weight's spatial dims wk),
 * strides, dilations, pads and auto_pad into g (in[] must already be set,
 * out[] is not computed). Pads are only read, not resolved for auto_pad. */
q8_status q8_conv_read_attrs(const q8_node *n, int nsp, const int64_t *wk, q8_conv_geom *g,
                             q8_auto_pad *auto_pad, q8_error *err);

/* Conv: resolve auto_pad and compute out[]; fails if an output dim would
 * be < 1. */
q8_status q8_conv_out_shape(const q8_node *n, q8_auto_pad ap, q8_conv_geom *g, q8_error *err);

/* Widen spatial dims (nsp values) to the 3-D form. */
void q8_conv_widen(int nsp, const int64_t *src, int64_t fill, int64_t *dst3);

#endif
