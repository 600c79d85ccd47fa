/* The MSE range: the clipping threshold whose symmetric INT8 quantization
 * of the calibration values has the least squared error, clipping and
 * rounding together, as NVIDIA's pytorch-quantization "mse" calibrator
 * and OpenVINO's MSE range estimators choose it. Percentile clips a fixed
 * share whatever the distribution and entropy matches shapes rather than
 * values; the error itself is what the next layer sees. */
#include <math.h>

#include "calib_stats.h"

/* The squared error of quantizing |x| = c with step d over 127 levels. */
static double quant_err(double c, double d) {
    double q = fmin(round(c / d), 127.0);
    double e = c - q * d;
    return e * e;
}

/* Candidates from Q8_MSE_FIRST_BIN bins up to the whole histogram; each
 * bin's values are taken at its centre (the histogram's resolution). */
#define Q8_MSE_FIRST_BIN 64

float q8_calib_mse_threshold(const q8_hist *h) {
    double w = h->amax / Q8_HIST_BINS;
    int last = Q8_HIST_BINS - 1;
    while (last > 0 && h->bins[last] == 0) last--;
    double best = INFINITY;
    int best_i = last + 1;
    for (int i = Q8_MSE_FIRST_BIN; i <= last + 1; i++) {
        double d = i * w / 127.0, err = 0;
        for (int b = 0; b <= last && err < best; b++)
            if (h->bins[b]) err += (double)h->bins[b] * quant_err((b + 0.5) * w, d);
        if (err < best) { /* ties: the smaller range, finer steps */
            best = err;
            best_i = i;
        }
    }
    return (float)(best_i * w);
}
