/* Calibration: histogram bookkeeping, the threshold methods, and the
 * per-sample spread that marks wide tensors. */
#include "calib_span.h"
#include "calib_stats.h"
#include "testutil.h"

static void two_pass(q8_hist *h, const float *x, int64_t n) {
    q8_hist_init(h);
    q8_hist_range(h, x, n, true);
    q8_hist_freeze(h);
    q8_hist_add(h, x, n);
}

/* Box-Muller normal samples. */
static void fill_normal(q8t_rng *r, float *x, int64_t n) {
    for (int64_t i = 0; i < n; i += 2) {
        double u1 = q8t_uniform(r, 1e-7f, 1), u2 = q8t_uniform(r, 0, 1);
        double m = sqrt(-2 * log(u1));
        x[i] = (float)(m * cos(2 * M_PI * u2));
        if (i + 1 < n) x[i + 1] = (float)(m * sin(2 * M_PI * u2));
    }
}

Test(calib, minmax_is_the_absolute_max) {
    float x[5] = {-3.5f, 1, 2, 0, 0.25f};
    q8_hist h;
    two_pass(&h, x, 5);
    cr_assert_float_eq(q8_calib_threshold(&h, Q8_CALIB_MINMAX, 0), 3.5f, 1e-6);
    cr_assert_eq(h.count, 5);
}

Test(calib, percentile_of_uniform_data) {
    enum { N = 200000 };
    float *x = malloc(sizeof(float) * N);
    q8t_rng r = q8t_seed(3);
    q8t_fill(&r, x, N, -10, 10);
    q8_hist h;
    two_pass(&h, x, N);
    float t50 = q8_calib_threshold(&h, Q8_CALIB_PERCENTILE, 50);
    float t99 = q8_calib_threshold(&h, Q8_CALIB_PERCENTILE, 99);
    float t100 = q8_calib_threshold(&h, Q8_CALIB_PERCENTILE, 100);
    /* |x| is uniform on [0, 10]: quantiles are linear; bins are 10/2048 wide */
    cr_assert(fabsf(t50 - 5.0f) < 0.05f, "t50 = %g", t50);
    cr_assert(fabsf(t99 - 9.9f) < 0.05f, "t99 = %g", t99);
    cr_assert(fabsf(t100 - (float)h.amax) < 1e-4f, "t100 = %g", t100);
    free(x);
}

Test(calib, entropy_clips_outliers_of_a_gaussian) {
    enum { N = 100000 };
    float *x = malloc(sizeof(float) * N);
    q8t_rng r = q8t_seed(5);
    fill_normal(&r, x, N);
    x[0] = 60; /* a far outlier sets amax */
    q8_hist h;
    two_pass(&h, x, N);
    float te = q8_calib_threshold(&h, Q8_CALIB_ENTROPY, 0);
    /* The optimum for a unit normal at 8 bits lies a few sigma out; it must
     * ignore the outlier at 60 yet keep the body (|x| < 2 holds 95%). */
    cr_assert(te > 2.0f && te < 10.0f, "entropy threshold %g", te);
    cr_assert_float_eq(q8_calib_threshold(&h, Q8_CALIB_MINMAX, 0), 60.0f, 1e-4);
    free(x);
}

Test(calib, entropy_keeps_the_range_of_uniform_data) {
    enum { N = 100000 };
    float *x = malloc(sizeof(float) * N);
    q8t_rng r = q8t_seed(9);
    q8t_fill(&r, x, N, -1, 1);
    q8_hist h;
    two_pass(&h, x, N);
    float te = q8_calib_threshold(&h, Q8_CALIB_ENTROPY, 0);
    cr_assert(te > 0.9f && te <= 1.0f, "entropy threshold %g", te);
    free(x);
}

Test(calib, degenerate_inputs_give_finite_thresholds) {
    float z[16] = {0};
    q8_hist h;
    two_pass(&h, z, 16);
    for (int m = 0; m <= Q8_CALIB_MSE; m++) {
        float t = q8_calib_threshold(&h, (q8_calib_method)m, 99.99);
        cr_assert(isfinite(t) && t > 0, "method %d: %g", m, t);
    }
    float bad[4] = {NAN, INFINITY, -INFINITY, 2};
    two_pass(&h, bad, 4);
    cr_assert_float_eq(q8_calib_threshold(&h, Q8_CALIB_MINMAX, 0), 2.0f, 0);
    cr_assert_eq(h.nonfinite, 3);
    q8_hist_init(&h); /* no data at all */
    q8_hist_freeze(&h);
    cr_assert(q8_calib_threshold(&h, Q8_CALIB_ENTROPY, 0) > 0);
}

/* The mean squared error of symmetric INT8 quantization of x at threshold
 * t, on the values themselves (not the histogram the method sees). */
static double real_mse(const float *x, int64_t n, double t) {
    double d = t / 127, e = 0;
    for (int64_t i = 0; i < n; i++) {
        double q = fmin(fmax(round(x[i] / d), -127), 127);
        e += (x[i] - q * d) * (x[i] - q * d);
    }
    return e / (double)n;
}

/* Laplace (heavy-tailed, like activations after folded BatchNorm): the MSE
 * threshold must be within 3% of the best error that a brute-force scan of
 * thresholds finds on the raw values, and well below minmax's; on uniform
 * data it keeps (nearly) the whole range. (A single far value is kept by
 * MSE, rightly by its measure: clipping it costs more than coarse steps.) */
Test(calib, mse_threshold_minimizes_the_quantization_error) {
    enum { N = 100000 };
    float *x = malloc(sizeof(float) * N);
    q8t_rng r = q8t_seed(11);
    for (int i = 0; i < N; i++) {
        double u = q8t_uniform(&r, -0.5f, 0.5f);
        x[i] = (float)(u < 0 ? log(1 + 2 * u) : -log(1 - 2 * u));
    }
    q8_hist h;
    two_pass(&h, x, N);
    double amax = h.amax, tm = q8_calib_threshold(&h, Q8_CALIB_MSE, 0), best = INFINITY;
    for (int k = 1; k <= 2000; k++) best = fmin(best, real_mse(x, N, amax * k / 2000));
    double em = real_mse(x, N, tm), emax = real_mse(x, N, amax);
    cr_assert(em <= 1.03 * best, "mse threshold %g: error %g, best %g", tm, em, best);
    cr_assert(em < 0.8 * emax, "error %g vs minmax %g", em, emax);
    q8t_fill(&r, x, N, -1, 1);
    two_pass(&h, x, N);
    tm = q8_calib_threshold(&h, Q8_CALIB_MSE, 0);
    cr_assert(tm > 0.97 && tm <= 1.0, "uniform: mse threshold %g", tm);
    free(x);
}

#include "sha256.h"

Test(sha256, known_vectors) {
    char hex[65];
    q8_sha256_hex("", 0, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    q8_sha256_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: two blocks */
    q8_sha256_hex(m, strlen(m), hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* A constant background (80% of values at one point) fools plain KL into
 * cutting at the spike; the guard keeps 99.9% of the values unclipped. */
Test(calib, entropy_guard_on_a_spiky_distribution) {
    enum { N = 50000 };
    float *x = malloc(sizeof(float) * N);
    q8t_rng r = q8t_seed(21);
    for (int i = 0; i < N; i++) x[i] = i % 5 ? -0.4242f : q8t_uniform(&r, 0, 2.82f);
    q8_hist h;
    two_pass(&h, x, N);
    float te = q8_calib_threshold(&h, Q8_CALIB_ENTROPY, 0);
    float p999 = q8_calib_threshold(&h, Q8_CALIB_PERCENTILE, 99.9);
    cr_assert(te >= p999 && te > 2.7f, "entropy %g, 99.9th percentile %g", te, p999);
    free(x);
}

/* ---- per-sample spread (calib_span.h) ---- */

/* n samples of `values` values each, sample i's largest |x| amax[i] */
static void spans_of(q8_hist *h, const float *amax, int n, int values) {
    q8_hist_init(h);
    float x[Q8_WIDE_MIN_VALUES];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < values; k++) x[k] = amax[i] * (float)(k % 5) / -8;
        x[values / 2] = -amax[i];
        q8_hist_range(h, x, values, true);
    }
}

static void spans(q8_hist *h, const float *amax, int n) {
    spans_of(h, amax, n, Q8_WIDE_MIN_VALUES);
}

Test(calib, span_counts_each_sample_by_its_largest_value) {
    float a[4] = {0.5f, 0.75f, 1e-3f, 0};
    q8_hist h;
    spans(&h, a, 4);
    cr_assert_eq(h.samples, 4);
    cr_assert_eq(h.zero_samples, 1);
    cr_assert_eq(h.span[-1 - Q8_SPAN_LOG2_MIN], 2);  /* [0.5, 1) */
    cr_assert_eq(h.span[-10 - Q8_SPAN_LOG2_MIN], 1); /* 1e-3 in [2^-10, 2^-9) */
    /* an outlier sample (not kept) is not counted */
    float big[1] = {100};
    q8_hist_range(&h, big, 1, false);
    cr_assert_eq(h.samples, 4);
}

Test(calib, span_quiet_samples_are_those_wholly_below_the_bound) {
    /* threshold 0.5: the bound is 0.5 / 32 = 2^-6. A sample just below it
     * (its bin [2^-7, 2^-6) ends at the bound) is quiet; one at 2^-6 is not. */
    float a[8] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.0150f, 0.015625f};
    q8_hist h;
    spans(&h, a, 8);
    cr_assert_float_eq(q8_span_quiet_fraction(&h, 0.5, Q8_WIDE_RATIO), 1.0 / 8, 1e-12);
    cr_assert(q8_span_is_wide(&h, 0.5)); /* 1 of 8 >= 10% */
    cr_assert_not(q8_span_is_wide(&h, 0.25)); /* bound 2^-7: none below */
}

Test(calib, span_needs_a_tenth_of_enough_samples) {
    float a[11];
    for (int i = 0; i < 11; i++) a[i] = 0.5f;
    a[0] = 1e-4f;
    q8_hist h;
    spans(&h, a, 10); /* 1 quiet of 10: wide */
    cr_assert(q8_span_is_wide(&h, 0.5));
    spans(&h, a, 11); /* 1 of 11: not */
    cr_assert_not(q8_span_is_wide(&h, 0.5));
    spans(&h, a, 7); /* 1 of 7, but too few samples to say */
    cr_assert_not(q8_span_is_wide(&h, 0.5));
    /* a few values per sample (a scalar score) say nothing about loudness */
    spans_of(&h, a, 10, Q8_WIDE_MIN_VALUES - 1);
    cr_assert_float_eq(q8_span_quiet_fraction(&h, 0.5, Q8_WIDE_RATIO), 0.1, 1e-12);
    cr_assert_not(q8_span_is_wide(&h, 0.5));
    /* all-zero samples are exact in INT8: not quiet */
    for (int i = 0; i < 5; i++) a[i] = 0;
    spans(&h, a, 10);
    cr_assert_float_eq(q8_span_quiet_fraction(&h, 0.5, Q8_WIDE_RATIO), 0.0, 1e-12);
    cr_assert_not(q8_span_is_wide(&h, 0.5));
}
