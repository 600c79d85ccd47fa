/* The spectral ops (float32 or float64 data, computed in double):
 * - DFT, in its opset 20 form (q8_pass_canonicalize turns opset 17's axis
 *   attribute, default 1, into input 2): x [..., 1 or 2] (real, or complex
 *   as (re, im) pairs); the transform runs along axis (input 2, a constant
 *   scalar, default -2; any dim but the last) over n = dft_length (input
 *   1, a constant scalar, default that dim's length) points: the signal is
 *   truncated or zero-padded to n (at most 2^19). X[k] = sum_j x[j] e^(-2 pi i j k / n);
 *   inverse = 1: the sign is + and X is divided by n; onesided = 1: only
 *   k in [0, n/2] (both ways, as the ONNX reference). The output has the
 *   input's shape with that dim n (or n/2 + 1) and the last dim 2.
 * - STFT: signal [batch, length, 1 or 2]; frames of frame_length (input 3,
 *   else the window's length, else the signal's) every frame_step (input
 *   1) samples, frames = 1 + (length - frame_length) / frame_step, each
 *   multiplied by the window (input 2, [frame_length], read when the node
 *   runs) and transformed as DFT over frame_length points. onesided
 *   (default 1): frame_length / 2 + 1 bins. Output [batch, frames, bins, 2].
 * - MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters
 *   exactly as the ONNX reference computes them (float32 edges in float32
 *   arithmetic up to the mel step, the rest in double, bins by numpy's
 *   floor division). num_mel_bins and dft_length (they decide the shape)
 *   must be constants; sample_rate and the edges are read when the node
 *   runs. A filter point outside the matrix is left out (the reference
 *   would fail or wrap). */
#ifndef Q8_CORE_OPS_SPECTRAL_H
#define Q8_CORE_OPS_SPECTRAL_H

#include "common.h"

typedef struct q8_dft_params {
    bool f64, complex_in, inverse;
    int64_t outer, len, inner;  /* x as outer x len x inner (x 1 or 2) around axis */
    int64_t n, bins;            /* dft_length; the output's length along axis */
} q8_dft_params;

typedef struct q8_stft_params {
    bool f64, complex_in, window;
    int64_t batch, len;         /* signal [batch, len, 1 or 2] */
    int64_t step, frame, frames, bins;
} q8_stft_params;

typedef struct q8_mel_params {
    bool f64;                   /* output float64 (output_datatype 11), else float32 */
    q8_dtype rate_dtype;        /* sample_rate: int32 or int64 */
    q8_dtype edge_dtype;        /* the edges: float32 or float64 */
    int64_t mels, dft_length, bins;
} q8_mel_params;

#endif
