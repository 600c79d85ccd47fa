/* MaxUnpool (opset 9/11): x [N, C, D1..Dk] (float32 or float64), indices
 * (int64, x's shape, MaxPool's Indices: flat offsets into the whole
 * unpooled tensor), kernel_shape, strides, pads; optional output_shape
 * (input 2, a constant: it decides the shape).
 *
 * As the ONNX reference computes it: the unpooled shape is
 * (Di - 1) * stride - pad_begin - pad_end + kernel per spatial dim; every
 * x[i] is written at flat offset indices[i] of a zeroed tensor of that shape
 * (in element order, so a repeated index keeps the last); with output_shape,
 * that tensor is placed at the origin of a zeroed output_shape tensor (each
 * dim at least the unpooled one). An index outside the unpooled tensor is
 * skipped. (ONNX Runtime 1.30 reads the indices as offsets into the
 * output_shape tensor instead; the ONNX backend test
 * maxunpool_export_with_output_shape expects the reference's placement.) */
#ifndef Q8_CORE_OPS_MAXUNPOOL_H
#define Q8_CORE_OPS_MAXUNPOOL_H

#include "common.h"

typedef struct q8_maxunpool_params {
    size_t elem;                    /* bytes per element */
    int rank;
    int64_t unpooled[Q8_MAX_DIMS];  /* the shape indices refer to */
    int64_t out[Q8_MAX_DIMS];       /* the output's shape (unpooled, or output_shape) */
    int64_t unpooled_numel, in_numel, out_numel;
    bool padded;                    /* out differs from unpooled */
} q8_maxunpool_params;

#endif
