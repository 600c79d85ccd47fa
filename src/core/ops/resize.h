/* Resize (import rewrites Upsample into it). Modes nearest, linear
 * (n-linear) and cubic; all coordinate transformation and nearest modes.
 * scales or sizes must be constant (they decide the output shape); roi too
 * when tf_crop_and_resize uses it. Nearest also takes int8, uint8, int32
 * and int64 data; linear and cubic float32.
 *
 * Along each dim d, output index o reads 1 (nearest), 2 (linear) or 4
 * (cubic) input indices, its taps, with weights: q8_resize_dim_taps. A dim
 * where every output has exactly one nonzero tap, of weight 1 (N and C, or
 * linear where every output lands on an input index), keeps only that tap.
 * An output element sums over the product of its dims' taps.
 *
 * Coordinates follow the ONNX reference implementation, which the backend
 * tests are generated with: in double precision, with the scale as given
 * (or sizes / input), and align_corners / tf_crop_and_resize divide by
 * scale * input_length - 1 (not output_length - 1; they differ only when
 * scales give a fractional output length). */
#ifndef Q8_CORE_OPS_RESIZE_H
#define Q8_CORE_OPS_RESIZE_H

#include "common.h"

typedef enum q8_resize_mode {
    Q8_RESIZE_NEAREST,
    Q8_RESIZE_LINEAR,
    Q8_RESIZE_CUBIC,
} q8_resize_mode;

/* coordinate_transformation_mode */
typedef enum q8_resize_coord {
    Q8_RESIZE_HALF_PIXEL,
    Q8_RESIZE_PYTORCH_HALF_PIXEL,
    Q8_RESIZE_ALIGN_CORNERS,
    Q8_RESIZE_ASYMMETRIC,
    Q8_RESIZE_TF_HALF_PIXEL_FOR_NN,
    Q8_RESIZE_TF_CROP_AND_RESIZE,
} q8_resize_coord;

/* nearest_mode */
typedef enum q8_resize_nearest {
    Q8_RESIZE_ROUND_PREFER_FLOOR,
    Q8_RESIZE_ROUND_PREFER_CEIL,
    Q8_RESIZE_FLOOR,
    Q8_RESIZE_CEIL,
} q8_resize_nearest;

/* Taps per output row (the product of the taps of every dim but the last)
 * q8 supports: resizing 4 leading dims at once in cubic mode is beyond it. */
#define Q8_RESIZE_MAX_ROW_TAPS 64

typedef struct q8_resize_params {
    int rank;
    q8_dtype dtype; /* of X and Y */
    q8_resize_mode mode;
    q8_resize_coord coord;
    q8_resize_nearest nearest;
    double cubic_a;        /* cubic_coeff_a */
    bool exclude_outside;  /* cubic: taps outside the input get weight 0, the rest renormalized */
    int64_t in[Q8_MAX_DIMS], out[Q8_MAX_DIMS];
    /* as given, or from sizes: sizes / in (1 for an empty dim), or the common
     * scale of keep_aspect_ratio_policy */
    double scale[Q8_MAX_DIMS];
    /* tf_crop_and_resize: the roi per dim, normalized (else 0 and 1) */
    double roi_start[Q8_MAX_DIMS], roi_end[Q8_MAX_DIMS];
    float extrap_value;    /* extrapolation_value */
    bool extrap;           /* tf_crop_and_resize: some outputs lie outside the crop */
    int taps[Q8_MAX_DIMS]; /* taps per output index of each dim (1 once collapsed) */
    int64_t rows;          /* product of out[0 .. rank-1) */
} q8_resize_params;

/* Taps per output index before any collapse: 1, 2 or 4. */
static inline int q8_resize_mode_taps(q8_resize_mode m) {
    return m == Q8_RESIZE_NEAREST ? 1 : m == Q8_RESIZE_LINEAR ? 2 : 4;
}

/* Dim d's taps, p->taps[d] per output index o in [0, p->out[d]): input index
 * times stride in idx[o * p->taps[d] + k], weight in w[...]; ext (if not NULL)
 * gets 1 for an output outside the crop (tf_crop_and_resize), else 0. */
void q8_resize_dim_taps(const q8_resize_params *p, int d, int64_t stride, int64_t *idx, float *w,
                        uint8_t *ext);

#endif
