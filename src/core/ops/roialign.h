/* RoiAlign (opset 10/16): x [N, C, H, W] float32, rois [R, 4] float32 (x1,
 * y1, x2, y2 in input coordinates, scaled by spatial_scale), batch_indices
 * [R] (int64, or int32), all read when the node runs; y [R, C,
 * output_height, output_width].
 *
 * As the ONNX reference computes it: coordinate_transformation_mode
 * "half_pixel" (opset 16's default) shifts the scaled ROI by -0.5;
 * "output_half_pixel" (opset 10's only behaviour) does not and makes ROIs at
 * least 1x1. Each output bin averages ("avg") or takes the max ("max", of
 * the four weighted corner values, as ONNX Runtime does) over a grid of
 * sampling_ratio^2 bilinear samples (sampling_ratio 0: ceil(roi size / bin
 * count) per side), a sample beyond [-1, H] x [-1, W] counting as 0.
 *
 * Not in the spec, for bad data: a grid side is capped at 1024 samples (a
 * ROI that would need more is sampled more sparsely); a ROI with a
 * non-finite coordinate or a batch index outside [0, N) gives NaN. */
#ifndef Q8_CORE_OPS_ROIALIGN_H
#define Q8_CORE_OPS_ROIALIGN_H

#include "common.h"

#define Q8_ROIALIGN_MAX_GRID 1024

typedef struct q8_roialign_params {
    bool max;                   /* mode "max", else "avg" */
    bool half_pixel;
    q8_dtype index_dtype;       /* batch_indices: int64 or int32 */
    float spatial_scale;
    int64_t sampling_ratio;     /* 0: adaptive */
    int64_t n, c, h, w, rois, oh, ow;
} q8_roialign_params;

#endif
