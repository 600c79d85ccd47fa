/* Geometry of q8.QConv / q8.QConvTranspose (and ConvInteger / QLinearConv):
 * ONNX Conv / ConvTranspose attributes (auto_pad, dilations, group,
 * kernel_shape, pads, strides, output_padding, output_shape) checked and
 * resolved into one 2-D description (1-D convolutions have H = KH = OH = 1). */
#ifndef Q8_CORE_OPS_QCONV_GEOM_H
#define Q8_CORE_OPS_QCONV_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"

typedef struct q8_qconv_geom {
    int nsp;                    /* spatial dims of the model: 1 or 2 */
    int64_t N, C, M, group;     /* M: output channels */
    int64_t H, W, OH, OW;       /* input and output spatial size */
    int64_t KH, KW, sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;     /* pads: top, left, bottom, right */
} q8_qconv_geom;

/* X is input 0, W input wi ([M, C/group, *kernel] for all these ops). */
q8_status q8_qconv_geom_parse(const q8_graph *g, const q8_node *n, int wi, bool transpose,
                              q8_qconv_geom *o, q8_error *err);

#endif
