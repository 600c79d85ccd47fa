/* ConvTranspose (1-D, 2-D, 3-D; groups, strides, pads, dilations,
 * output_padding, output_shape, auto_pad, optional bias, fused activation):
 * each input pixel X[img, ci, i] adds W[ci, oc - group's first, tap] to
 * Y[img, oc, i*s - pb + tap*d] for the output channels oc of ci's group;
 * Y starts at bias[oc], the activation comes last. Geometry widened to 3-D
 * (conv_geom.h). */
#ifndef Q8_CORE_OPS_CONV_TRANSPOSE_H
#define Q8_CORE_OPS_CONV_TRANSPOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/act.h"
#include "ops/conv_geom.h"

typedef struct q8_conv_transpose_params {
    int64_t nb, c, m;       /* images, input channels, output channels */
    int64_t g, cg, mg;      /* groups; input and output channels per group */
    q8_conv_geom geo;       /* pads resolved (auto_pad, output_shape), out[] set */
    int64_t in_sp, out_sp;  /* spatial size of one input / output channel */
    int64_t kprod;          /* kernel taps: k[0]*k[1]*k[2] */
    int64_t rows;           /* weights per input channel: mg*kprod */
    bool has_bias;
    q8_act act;             /* fused activation */
} q8_conv_transpose_params;

#endif
