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

/* The error of threshold i bins (stops once past bound). */
static double error_at(const q8_hist *h, int last, double w, int i, double bound) {
    double d = i * w / 127.0, err = 0;
    for (int b = 0; b <= last && err < bound; b++)
        if (h->bins[b]) err += (double)h->bins[b] * quant_err((b + 0.5) * w, d);
    return err;
}

/* Every 16th candidate, then every one within 16 of the best: the error is
 * smooth in the threshold at this resolution, and a full scan cost seconds
 * per tensor (quadratic in the bins). */
float q8_calib_mse_threshold(const q8_hist *h) {
    enum { STEP = 16 };
    double w = h->amax / Q8_HIST_BINS;
    int last = Q8_HIST_BINS - 1;
    while (last > 0 && h->bins[last] == 0) last--;
    int top = last + 1 < Q8_MSE_FIRST_BIN ? Q8_MSE_FIRST_BIN : last + 1;
    double best = INFINITY;
    int best_i = top;
    for (int pass = 0; pass < 2; pass++) {
        int lo = pass ? best_i - STEP + 1 : Q8_MSE_FIRST_BIN, hi = pass ? best_i + STEP - 1 : top;
        if (lo < Q8_MSE_FIRST_BIN) lo = Q8_MSE_FIRST_BIN;
        if (hi > top) hi = top;
        for (int i = lo; i <= hi; i += pass ? 1 : STEP) {
            double err = error_at(h, last, w, i, best);
            if (err < best || (err == best && i < best_i)) { /* ties: finer steps */
                best = err;
                best_i = i;
            }
        }
        if (!pass && (top - Q8_MSE_FIRST_BIN) % STEP) { /* the full range too */
            double err = error_at(h, last, w, top, best);
            if (err < best) best = err, best_i = top;
        }
    }
    return (float)(best_i * w);
}
