#include "calib_stats.h"

#include "calib_span.h"

#include <math.h>
#include <string.h>

void q8_hist_init(q8_hist *h) {
    memset(h, 0, sizeof *h);
    h->min = INFINITY;
    h->max = -INFINITY;
}

void q8_hist_range(q8_hist *h, const float *x, int64_t n, bool kept) {
    double lo = h->min, hi = h->max, ka = h->kept_amax;
    float sa = 0; /* this sample's largest |x| */
    uint64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        if (!isfinite(v)) {
            bad++;
            continue;
        }
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        if (fabsf(v) > sa) sa = fabsf(v);
    }
    if (kept && sa > ka) ka = sa;
    h->min = lo;
    h->max = hi;
    if (kept) {
        h->kept_amax = ka;
        h->nonfinite += bad;
        h->seen += (uint64_t)n - bad;
        q8_span_add(h, sa);
    }
}

void q8_hist_freeze(q8_hist *h) {
    h->amax = isfinite(h->kept_amax) && h->kept_amax > 0 ? h->kept_amax : 0;
}

void q8_hist_add(q8_hist *h, const float *x, int64_t n) {
    if (h->amax <= 0) {
        h->count += (uint64_t)n; /* all values are zero: everything in bin 0 */
        h->bins[0] += (uint64_t)n;
        return;
    }
    double scale = Q8_HIST_BINS / h->amax;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        if (!isfinite(v)) continue;
        int64_t b = (int64_t)fmin(fabs((double)v) * scale, Q8_HIST_BINS - 1);
        h->bins[b]++;
        h->count++;
    }
}

static float percentile_threshold(const q8_hist *h, double pct) {
    if (pct <= 0 || pct > 100) pct = 100;
    double want = pct / 100.0 * (double)h->count;
    double width = h->amax / Q8_HIST_BINS;
    uint64_t cum = 0;
    for (int b = 0; b < Q8_HIST_BINS; b++) {
        cum += h->bins[b];
        if ((double)cum >= want) return (float)((b + 1) * width);
    }
    return (float)h->amax;
}

/* KL(P || Q) over bins where P > 0; Q is smoothed where P > 0 and Q = 0 so
 * that the divergence stays finite (the usual epsilon trick). */
static double kl_divergence(const double *p, const double *q, int n) {
    double d = 0;
    for (int i = 0; i < n; i++)
        if (p[i] > 0) d += p[i] * log(p[i] / (q[i] > 0 ? q[i] : 1e-12));
    return d;
}

/* TensorRT-style search: for each candidate cut i (in bins) from 128 to
 * 2048, P = the first i bins with the clipped tail folded into the last;
 * Q = those i bins merged into 128 levels and spread back evenly over the
 * non-empty bins of each level. Choose the cut with the least KL(P||Q). */
static float entropy_threshold(const q8_hist *hist) {
    const int levels = 128;
    double *p = malloc(sizeof(double) * Q8_HIST_BINS);
    double *q = malloc(sizeof(double) * Q8_HIST_BINS);
    q8_hist *h = malloc(sizeof *h);
    if (!p || !q || !h) {
        free(p);
        free(q);
        free(h);
        return (float)hist->amax; /* no memory: fall back to minmax */
    }
    /* The zero bin (ReLU outputs: half the values) would dominate both
     * distributions and make every cut look alike; count it like its
     * neighbour, as TensorRT's calibrator does. */
    *h = *hist;
    h->bins[0] = h->bins[1];
    double tail = 0;
    for (int b = levels; b < Q8_HIST_BINS; b++) tail += (double)h->bins[b];
    double best = INFINITY;
    int best_i = Q8_HIST_BINS;
    for (int i = levels; i <= Q8_HIST_BINS; i++) {
        /* tail = mass of bins >= i */
        double ptotal = 0;
        for (int b = 0; b < i; b++) {
            p[b] = (double)h->bins[b];
            ptotal += p[b];
        }
        p[i - 1] += tail;
        ptotal += tail;
        if (i < Q8_HIST_BINS) tail -= (double)h->bins[i];
        if (ptotal <= 0) continue;
        /* merge into levels: level j covers bins [j*i/levels, (j+1)*i/levels) */
        for (int j = 0; j < levels; j++) {
            int start = (int)((int64_t)j * i / levels), end = (int)((int64_t)(j + 1) * i / levels);
            double mass = 0;
            int nonzero = 0;
            for (int b = start; b < end; b++) {
                mass += (double)h->bins[b];
                nonzero += h->bins[b] != 0;
            }
            for (int b = start; b < end; b++)
                q[b] = h->bins[b] && nonzero ? mass / nonzero : 0;
        }
        /* Q is built from the unclipped bins, P has the tail: like TensorRT */
        double qtotal = 0;
        for (int b = 0; b < i; b++) qtotal += q[b];
        if (qtotal <= 0) continue;
        for (int b = 0; b < i; b++) {
            p[b] /= ptotal;
            q[b] /= qtotal;
        }
        double d = kl_divergence(p, q, i);
        if (d <= best) { /* ties: the larger range */
            best = d;
            best_i = i;
        }
    }
    float t = (float)((best_i + 0.5) * (h->amax / Q8_HIST_BINS));
    free(p);
    free(q);
    free(h);
    return t;
}

float q8_calib_threshold(const q8_hist *h, q8_calib_method m, double percentile) {
    float t;
    if (m == Q8_CALIB_MINMAX) {
        double a = fmax(fabs(h->min), fabs(h->max));
        t = isfinite(a) ? (float)a : 0;
    } else if (h->amax <= 0 || h->count == 0) {
        return Q8_MIN_THRESHOLD;
    } else if (m == Q8_CALIB_PERCENTILE) {
        t = percentile_threshold(h, percentile);
    } else if (m == Q8_CALIB_MSE) {
        t = q8_calib_mse_threshold(h);
    } else {
        /* KL cannot see clipping when the cut falls on a dominant spike
         * (a constant image background, a saturated activation): both
         * distributions are then nearly one point and the divergence is ~0.
         * Guard: never clip more than 0.1% of the values. */
        t = fmaxf(entropy_threshold(h), percentile_threshold(h, Q8_ENTROPY_GUARD_PERCENTILE));
    }
    if (m != Q8_CALIB_MINMAX && t > (float)h->amax) t = (float)h->amax;
    if (!(t >= Q8_MIN_THRESHOLD) || !isfinite(t)) t = Q8_MIN_THRESHOLD;
    return t;
}
