/* Calibration statistics for one activation tensor, and the three ways to
 * turn them into a symmetric INT8 range: minmax, percentile, entropy (KL
 * divergence over a 2048-bin histogram of |x|, as TensorRT's entropy
 * calibrator does). Memory is fixed per tensor, whatever the sample count.
 *
 * Outlier samples (calibrate.c decides which: see docs/robustness.md) count
 * in the minmax range but not in the histogram: its range is the largest
 * |x| of the kept samples, so one wild value cannot squeeze every other
 * value into bin 0, and percentile and entropy see the kept samples only. */
#ifndef Q8_CALIB_H
#define Q8_CALIB_H

#include "q8_tools.h"

#include "common.h"

#define Q8_HIST_BINS 2048
/* Per-sample largest |x| by power of two (calib_span.c): bin b holds the
 * samples whose largest |x| is in [2^(b + Q8_SPAN_LOG2_MIN), twice that);
 * smaller ones go to bin 0, larger to the last. */
#define Q8_SPAN_BINS 64
#define Q8_SPAN_LOG2_MIN (-48)
/* Entropy never clips more than this percentile of |x| (see calib_stats.c). */
#define Q8_ENTROPY_GUARD_PERCENTILE 99.9


typedef struct q8_hist {
    double min, max;        /* pass 1: observed range, every sample (minmax) */
    double kept_amax;       /* pass 1: largest |x| of the kept samples */
    double amax;            /* histogram range [0, amax] of |x| (fixed after pass 1) */
    uint64_t count;         /* values in the histogram */
    uint64_t seen;          /* pass 1: finite values of the kept samples */
    uint64_t nonfinite;     /* pass 1: NaN/inf values of the kept samples (left out) */
    uint64_t bins[Q8_HIST_BINS];
    /* pass 1, kept samples: how the per-sample largest |x| is spread */
    uint32_t samples, zero_samples;     /* samples seen; those all 0 (exact in INT8) */
    uint32_t span[Q8_SPAN_BINS];        /* the others, by power of two */
} q8_hist;

void q8_hist_init(q8_hist *h);
/* Pass 1: extend the observed range; kept: the sample counts in the
 * histogram (false for an outlier sample: minmax range only). One call is
 * one sample (its largest |x| goes to span). */
void q8_hist_range(q8_hist *h, const float *x, int64_t n, bool kept);
/* Between passes: fix the histogram range [0, kept_amax]. */
void q8_hist_freeze(q8_hist *h);
/* Pass 2 (kept samples only): count |x| into the bins (values past amax go
 * to the last bin; non-finite values are left out). */
void q8_hist_add(q8_hist *h, const float *x, int64_t n);

/* The clipping threshold T (quantization scale = T / 127). percentile is in
 * (0, 100], used by Q8_CALIB_PERCENTILE. minmax: the largest |x| of every
 * sample; percentile and entropy: from the histogram of the kept samples.
 * Never returns 0, inf or NaN. */
float q8_calib_threshold(const q8_hist *h, q8_calib_method m, double percentile);
/* The threshold with the least squared error of INT8 quantization (calib_mse.c). */
float q8_calib_mse_threshold(const q8_hist *h);

/* The smallest threshold q8 uses, so that scales stay finite and non-zero
 * for all-zero tensors. */
#define Q8_MIN_THRESHOLD 1e-6f

#endif
