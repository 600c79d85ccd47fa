/* GridSample (opset 16, 4-D): X [N, C, H, W] sampled at grid [N, Ho, Wo, 2]
 * (float32, read when the node runs; (x, y) in [-1, 1] across W and H) ->
 * [N, C, Ho, Wo]. A grid value maps to a pixel coordinate by
 * align_corners: 1: (g + 1) / 2 * (d - 1); 0 (the default): ((g + 1) * d -
 * 1) / 2. mode: bilinear (or linear; the default), nearest (round half to
 * even) or bicubic (or cubic: Keys, a = -0.75, over 4 x 4 pixels).
 * padding_mode: a coordinate outside [-0.5, d - 0.5] ([0, d - 1] with
 * align_corners) is clamped into [0, d - 1] (border) or reflected into that
 * range (reflection); a pixel outside the image reads 0 (zeros, the
 * default), its clamped neighbour (border) or its reflection (a dim of one
 * pixel with align_corners, where the reference divides by zero: that
 * pixel). This is the
 * ONNX reference's arithmetic, PyTorch's grid_sample. */
#ifndef Q8_CORE_OPS_GRIDSAMPLE_H
#define Q8_CORE_OPS_GRIDSAMPLE_H

#include "common.h"

typedef enum { Q8_GS_LINEAR, Q8_GS_NEAREST, Q8_GS_CUBIC } q8_gs_mode;
typedef enum { Q8_GS_ZEROS, Q8_GS_BORDER, Q8_GS_REFLECTION } q8_gs_padding;

typedef struct q8_gridsample_params {
    q8_gs_mode mode;
    q8_gs_padding padding;
    bool align_corners;
    int64_t n, c, h, w, ho, wo;
} q8_gridsample_params;

#endif
