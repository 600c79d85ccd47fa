/* Calibration statistics for one activation tensor, and the three ways to
 * turn them into a symmetric INT8 range: minmax, percentile, entropy (KL
 * divergence over a 2048-bin histogram of |x|, as TensorRT's entropy
 * calibrator does). Memory is fixed per tensor, whatever the sample count. */
#ifndef Q8_CALIB_H
#define Q8_CALIB_H

#include "q8_tools.h"

#include "common.h"

#define Q8_HIST_BINS 2048
/* Entropy never clips more than this percentile of |x| (see calib_stats.c). */
#define Q8_ENTROPY_GUARD_PERCENTILE 99.9


typedef struct q8_hist {
    double min, max;        /* pass 1: observed range */
    double amax;            /* histogram range [0, amax] of |x| (fixed after pass 1) */
    uint64_t count;         /* values in the histogram */
    uint64_t nonfinite;     /* NaN/inf values seen (ignored) */
    uint64_t bins[Q8_HIST_BINS];
} q8_hist;

void q8_hist_init(q8_hist *h);
/* Pass 1: extend the observed range. */
void q8_hist_range(q8_hist *h, const float *x, int64_t n);
/* Between passes: fix the histogram range from the observed range. */
void q8_hist_freeze(q8_hist *h);
/* Pass 2: count |x| into the bins (values past amax go to the last bin). */
void q8_hist_add(q8_hist *h, const float *x, int64_t n);

/* The clipping threshold T (quantization scale = T / 127). percentile is in
 * (0, 100], used by Q8_CALIB_PERCENTILE. Never returns 0, inf or NaN. */
float q8_calib_threshold(const q8_hist *h, q8_calib_method m, double percentile);
/* The threshold with the least squared error of INT8 quantization (calib_mse.c). */
float q8_calib_mse_threshold(const q8_hist *h);

/* The smallest threshold q8 uses, so that scales stay finite and non-zero
 * for all-zero tensors. */
#define Q8_MIN_THRESHOLD 1e-6f

#endif
