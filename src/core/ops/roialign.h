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
 * An empty or reversed ROI (adaptive grid of 0 samples) gives 0, as the
 * reference's empty loops do.
 *
 * Only the samples that can fall on the map are visited (the others give
 * 0 and are only counted), so a ROI much larger than the map costs what the
 * map holds, not its own size.
 *
 * Not in the spec, for bad data: sampling_ratio is at most 1024 and the
 * samples it asks for (rois x C x output_height x output_width x ratio^2)
 * at most 2^36; a ROI with a coordinate or size beyond 2^40 (scaled), or
 * not finite, or a batch index outside [0, N), gives NaN. */
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
