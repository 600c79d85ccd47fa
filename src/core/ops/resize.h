/* Resize (import rewrites Upsample into it). Modes nearest, linear
 * (n-linear) and cubic; all coordinate transformation and nearest modes.
 * scales or sizes must be constant (they decide the output shape); roi too
 * when tf_crop_and_resize uses it. Nearest also takes int8, uint8, int32
 * and int64 data; linear takes int8 and uint8 too (integer weights, below,
 * when at most two dims interpolate); cubic float32 only.
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

/* Linear Resize on int8 / uint8 (quantize passes int8 through it at its
 * input's scale). Each dim with 2 taps has integer weights in steps of
 * 2^-Q8_RESIZE_WBITS (OpenCV's 11 bits), the two of an output index summing
 * to 2^WBITS exactly, so a constant input stays constant and the result is
 * a convex combination (never outside the input's range). An output is the
 * integer sum over its taps of the weights' product times x, shifted right
 * by WBITS per 2-tap dim with rounding to nearest, ties to even. At most two
 * dims may have 2 taps: the sum then stays within int32 (255 * 2^22). Every
 * backend uses these tables and this rounding: the same bits everywhere. */
#define Q8_RESIZE_WBITS 11
#define Q8_RESIZE_INT_MAX_DIMS 2

/* Dim d's integer weights from its float taps w (q8_resize_dim_taps, taps
 * p->taps[d] per output index): a 1-tap dim has weight 1 (no shift). */
void q8_resize_int_weights(const q8_resize_params *p, int d, const float *w, int32_t *wi);

/* The right shift of an int8 linear Resize: WBITS per dim with 2 taps. */
int q8_resize_int_shift(const q8_resize_params *p);

/* s / 2^shift rounded to nearest, ties to even (arithmetic shift: floor):
 * with s = q 2^shift + r, q goes up when r + (q odd) > half, i.e. when
 * s + half - 1 + (q odd) reaches the next multiple. Branch-free, so loops
 * over it vectorize. shift >= 1. */
static inline int32_t q8_resize_round(int32_t s, int shift) {
    int32_t half = 1 << (shift - 1);
    return (s + half - 1 + ((s >> shift) & 1)) >> shift;
}

#endif
