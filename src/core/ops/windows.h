/* Small ops of signal and matrix work:
 * - HannWindow, HammingWindow, BlackmanWindow: a window of `size` values
 *   (input 0, an int32/int64 constant scalar: it decides the shape), with
 *   N = size (periodic = 1, the default) or size - 1 (symmetric):
 *   Hann 0.5 - 0.5 cos(2 pi n / N); Hamming 25/46 - 21/46 cos(2 pi n / N);
 *   Blackman 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N); computed in
 *   double, output_datatype float32 (1, the default) or float64 (11).
 * - ReverseSequence: x [T, B, ...] (time_axis 0, batch_axis 1, the
 *   defaults) or [B, T, ...] (1, 0); the first sequence_lens[b] (input 1,
 *   int64, read when the node runs, clamped to [0, T]) steps of batch b
 *   reversed, the rest copied. Any dtype.
 * - Det: the determinant of each [M, M] matrix of x [..., M, M] (float32;
 *   LU with partial pivoting in double). */
#ifndef Q8_CORE_OPS_WINDOWS_H
#define Q8_CORE_OPS_WINDOWS_H

#include "common.h"

typedef struct q8_window_params {
    int kind;                   /* 0 Hann, 1 Hamming, 2 Blackman */
    bool f64;
    int64_t size, period;
} q8_window_params;

typedef struct q8_revseq_params {
    size_t elem;
    bool batch_first;           /* batch_axis 0, time_axis 1 */
    int64_t t, b, inner;        /* steps, batch, elements a (step, batch) */
} q8_revseq_params;

typedef struct q8_det_params {
    int64_t batch, m;
} q8_det_params;

#endif
