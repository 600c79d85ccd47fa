/* Conv (1-D, 2-D, 3-D; groups, dilations, strides, pads, auto_pad, optional
 * bias, fused activation):
 *   Y[img, oc] = act(bias[oc] + sum over the group's cg input channels and
 *                    the kernel taps of W[oc, ci, tap] * X[img, ci, window])
 * with the geometry widened to 3-D (conv_geom.h). */
#ifndef Q8_CORE_OPS_CONV_H
#define Q8_CORE_OPS_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/act.h"
#include "ops/conv_geom.h"

typedef struct q8_conv_params {
    int64_t nb, c, m;       /* images, input channels, output channels */
    int64_t g, cg, mg;      /* groups; input and output channels per group */
    q8_conv_geom geo;       /* pads resolved (auto_pad applied), out[] set */
    int64_t in_sp, out_sp;  /* spatial size of one input / output channel */
    int64_t kprod;          /* kernel taps: k[0]*k[1]*k[2] */
    int64_t kg;             /* weights per output channel: cg*kprod */
    bool has_bias;
    q8_act act;             /* fused activation */
} q8_conv_params;

#endif
