/* Tests of the spectral ops: DFT (opset 20 form, and opset 17's axis
 * attribute through the canonicalize pass), STFT and MelWeightMatrix. Each is
 * compared with a plain reference written here (the defining sums, in
 * double) on seeded random data and awkward sizes, run with 1 and 3 threads
 * (which must agree bit for bit), and checked for clear errors. */
#include <string.h>

#include "testutil.h"

/* ---------------------------------------------------------------- helpers */

/* Run the graph built by b with 1 and 3 threads; outputs must match bit for
 * bit. The 1-thread output goes to *out (free it). */
static void run2(q8t_built b, const void *const *data, void **out, q8_tensor_info *info) {
    q8_error err = {0};
    q8_status st = q8t_run(b.fn(b.ctx), data, 1, out, info, 1, &err);
    cr_assert_eq(st, Q8_OK, "run failed: %s", err.msg);
    void *o3;
    q8_tensor_info i3;
    st = q8t_run(b.fn(b.ctx), data, 3, &o3, &i3, 1, &err);
    cr_assert_eq(st, Q8_OK, "run (3 threads) failed: %s", err.msg);
    cr_assert_eq(info->ndim, i3.ndim);
    cr_assert(memcmp(o3, *out, q8t_info_bytes(info)) == 0,
              "output differs between 1 and 3 threads");
    free(o3);
}

static q8_status run_err(q8_graph *g, const void *const *data, q8_error *err) {
    void *outs[1] = {NULL};
    q8_tensor_info infos[1];
    memset(err, 0, sizeof *err);
    q8_status st = q8t_run(g, data, 1, outs, infos, 1, err);
    free(outs[0]);
    return st;
}

#define EXPECT_ERR(g, data, substr)                                                       \
    do {                                                                                  \
        q8_error e_;                                                                      \
        q8_status s_ = run_err((g), (data), &e_);                                         \
        cr_assert_neq(s_, Q8_OK, "expected an error containing '%s'", (substr));          \
        cr_assert(strstr(e_.msg, (substr)), "message '%s' lacks '%s'", e_.msg, (substr)); \
        cr_assert(strstr(e_.msg, "node 'node'"), "message '%s' does not name the node",   \
                  e_.msg);                                                                \
    } while (0)

/* got (float32 or float64) against want: |g - w| <= tol * (1 + scale[i]),
 * scale being the sum of the magnitudes that went into point i. */
static void check(bool f64, const void *got, const double *want, const double *scale, int64_t n,
                  const char *what) {
    double tol = f64 ? 1e-12 : 2e-6;
    for (int64_t i = 0; i < n; i++) {
        double g = f64 ? ((const double *)got)[i] : ((const float *)got)[i];
        double s = scale ? scale[i] : fabs(want[i]);
        cr_assert(fabs(g - want[i]) <= tol * (1 + s), "%s: [%lld] is %.9g, want %.9g", what,
                  (long long)i, g, want[i]);
    }
}

/* Random data, as float and as the same values in double (plus a little
 * that float cannot hold, so that a float64 path through float fails). */
static void random_data(q8t_rng *r, int64_t n, bool f64, float **xf, double **xd) {
    *xf = malloc(sizeof(float) * (size_t)(n ? n : 1));
    *xd = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        (*xf)[i] = q8t_uniform(r, -2, 2);
        (*xd)[i] = (*xf)[i] + (f64 ? 1e-9 * (double)(i % 5) : 0);
    }
}

static const double two_pi = 6.283185307179586476925286766559;

/* ---------------------------------------------------------------- DFT */

typedef struct dft_case {
    bool f64, cplx, inverse, onesided;
    int opset;                  /* 17: axis an attribute; else input 2 */
    bool has_axis;              /* axis given (attribute or input) */
    int64_t axis;
    bool has_len;
    bool len32;                 /* dft_length as int32 */
    int64_t len;                /* dft_length */
    int nd;                     /* x's rank, the complex dim included */
    int64_t dims[Q8_MAX_DIMS];
} dft_case;

static q8_graph *dft_build(const void *ctx) {
    const dft_case *c = ctx;
    int32_t len32 = (int32_t)c->len;
    q8t_in ins[3] = {{"x", c->f64 ? Q8_F64 : Q8_F32, c->nd, {0}, NULL},
                     {NULL, Q8_I64, 0, {0}, NULL},
                     {NULL, Q8_I64, 0, {0}, NULL}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    int n_in = 1;
    if (c->has_len) {
        ins[1] = (q8t_in){"len", c->len32 ? Q8_I32 : Q8_I64, 0, {0},
                          c->len32 ? (const void *)&len32 : &c->len};
        n_in = 2;
    }
    if (c->has_axis && c->opset != 17) {
        ins[2] = (q8t_in){"axis", Q8_I64, 0, {0}, &c->axis};
        n_in = 3;
    }
    q8_graph *g = q8t_graph1("DFT", ins, n_in, 1);
    if (c->opset) g->opset = c->opset;
    if (c->has_axis && c->opset == 17) q8t_attr_int(g, "axis", c->axis);
    if (c->inverse) q8t_attr_int(g, "inverse", 1);
    if (c->onesided) q8t_attr_int(g, "onesided", 1);
    return g;
}

/* The definition, point by point: X[k] = sum_j x[j] e^(-+2 pi i j k / n)
 * over the first min(len, n) samples along axis (ax normalized). Writes the
 * output's dims to od and the magnitudes summed to scale. */
static double *dft_ref(const dft_case *c, int ax, const double *x, int64_t *od, double **scale) {
    int64_t cdim = c->dims[c->nd - 1], len = c->dims[ax];
    int64_t n = c->has_len ? c->len : len, bins = c->onesided ? n / 2 + 1 : n;
    int64_t outer = q8t_numel(c->dims, ax), inner = q8t_numel(c->dims + ax + 1, c->nd - ax - 2);
    memcpy(od, c->dims, sizeof(int64_t) * (size_t)c->nd);
    od[ax] = bins;
    od[c->nd - 1] = 2;
    int64_t total = outer * bins * inner;
    double *y = malloc(sizeof(double) * 2 * (size_t)(total ? total : 1));
    *scale = malloc(sizeof(double) * 2 * (size_t)(total ? total : 1));
    double sign = c->inverse ? 1 : -1, norm = c->inverse ? (double)n : 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < bins; k++)
            for (int64_t i = 0; i < inner; i++) {
                double re = 0, im = 0, mag = 0;
                for (int64_t j = 0; j < len && j < n; j++) {
                    const double *v = x + ((o * len + j) * inner + i) * cdim;
                    double xr = v[0], xi = cdim == 2 ? v[1] : 0;
                    double a = sign * two_pi * (double)(j * k) / (double)n;
                    re += xr * cos(a) - xi * sin(a);
                    im += xr * sin(a) + xi * cos(a);
                    mag += fabs(xr) + fabs(xi);
                }
                int64_t at = ((o * bins + k) * inner + i) * 2;
                y[at] = re / norm;
                y[at + 1] = im / norm;
                (*scale)[at] = (*scale)[at + 1] = mag / norm;
            }
    return y;
}

static void dft_check(const dft_case *c, q8t_rng *r, const char *what) {
    int ax = (int)(c->has_axis ? c->axis : c->opset == 17 ? 1 : -2);
    if (ax < 0) ax += c->nd;
    int64_t n = q8t_numel(c->dims, c->nd), od[Q8_MAX_DIMS];
    float *xf;
    double *xd, *scale;
    random_data(r, n, c->f64, &xf, &xd);
    double *want = dft_ref(c, ax, xd, od, &scale);
    const void *data[1] = {c->f64 ? (const void *)xd : xf};
    void *out;
    q8_tensor_info info;
    run2((q8t_built){dft_build, c}, data, &out, &info);
    q8t_assert_shape(&info, od, c->nd);
    cr_assert_eq(info.dtype, c->f64 ? Q8_F64 : Q8_F32, "%s: dtype", what);
    check(c->f64, out, want, scale, q8t_numel(od, c->nd), what);
    free(out);
    free(want);
    free(scale);
    free(xf);
    free(xd);
}

Test(dft, random_shapes_vs_definition) {
    q8t_rng r = q8t_seed(4242);
    for (int it = 0; it < 80; it++) {
        dft_case c = {.f64 = it % 4 == 1, .cplx = (it / 2) % 2, .inverse = (it / 4) % 2,
                      .onesided = (it / 8) % 2, .opset = it % 3 == 2 ? 17 : 0,
                      .nd = 2 + (int)(q8t_next(&r) % 4)};
        for (int d = 0; d < c.nd - 1; d++) c.dims[d] = 1 + (int64_t)(q8t_next(&r) % 4);
        c.dims[c.nd - 1] = c.cplx ? 2 : 1;
        /* axis: the default (1 at opset 17, -2 after), or any valid one */
        c.has_axis = it % 5 != 0 || (c.opset == 17 && c.nd == 2);
        int ax = c.has_axis ? (int)(q8t_next(&r) % (uint64_t)(c.nd - 1))
                            : c.opset == 17 ? 1 : c.nd - 2;
        c.axis = c.has_axis && q8t_next(&r) % 2 ? ax - c.nd : ax;
        c.dims[ax] = 1 + (int64_t)(q8t_next(&r) % 23); /* odd, prime, 1 */
        int lk = (it / 3) % 4; /* none, shorter, longer, equal */
        c.has_len = lk != 0;
        c.len32 = it % 7 == 3;
        c.len = lk == 1 ? 1 + (int64_t)(q8t_next(&r) % (uint64_t)c.dims[ax])
                : lk == 2 ? c.dims[ax] + 1 + (int64_t)(q8t_next(&r) % 9) : c.dims[ax];
        char what[128];
        snprintf(what, sizeof what, "DFT case %d (rank %d, axis %lld, len %lld of %lld, %s%s%s%s)",
                 it, c.nd, (long long)c.axis, (long long)(c.has_len ? c.len : c.dims[ax]),
                 (long long)c.dims[ax], c.cplx ? "complex" : "real", c.inverse ? ", inverse" : "",
                 c.onesided ? ", onesided" : "", c.opset == 17 ? ", opset 17" : "");
        dft_check(&c, &r, what);
    }
}

/* Long transforms split over many chunks: the thread count must not show. */
Test(dft, long_signals) {
    q8t_rng r = q8t_seed(77);
    static const int64_t lens[4] = {1031, 1024, 4096, 999};
    for (int i = 0; i < 4; i++) {
        dft_case c = {.f64 = i == 3, .cplx = i % 2, .inverse = i == 2, .onesided = i == 1,
                      .nd = 3, .dims = {2, lens[i], 1}};
        c.dims[2] = c.cplx ? 2 : 1;
        c.has_len = i == 3;
        c.len = 1500;
        char what[64];
        snprintf(what, sizeof what, "DFT of %lld points", (long long)lens[i]);
        dft_check(&c, &r, what);
    }
}

/* Powers of two (the FFT path): every size up to 512, padded and truncated
 * signals, along a dim that is not the innermost. */
Test(dft, powers_of_two) {
    q8t_rng r = q8t_seed(2048);
    for (int it = 0; it < 40; it++) {
        int64_t n = (int64_t)1 << (1 + it % 9);
        dft_case c = {.f64 = it % 5 == 4, .cplx = (it / 2) % 2, .inverse = (it / 3) % 2,
                      .onesided = (it / 4) % 2, .opset = it % 6 == 5 ? 17 : 0, .nd = 4,
                      .has_axis = true, .axis = 1, .has_len = it % 3 != 0, .len = n,
                      .dims = {1 + it % 2, n, 1 + it % 3, 1}};
        c.dims[3] = c.cplx ? 2 : 1;
        uint64_t u = q8t_next(&r);
        if (it % 3 == 1) c.dims[1] = n / 2 + 1 + (int64_t)(u % (uint64_t)(n / 2)); /* padded */
        if (it % 3 == 2) c.dims[1] = n + 1 + (int64_t)(u % 5); /* truncated */
        char what[96];
        snprintf(what, sizeof what, "DFT case %d (%lld points of %lld%s%s)", it, (long long)n,
                 (long long)c.dims[1], c.inverse ? ", inverse" : "",
                 c.onesided ? ", onesided" : "");
        dft_check(&c, &r, what);
    }
}

/* Lengths with small prime factors only take the mixed-radix FFT (4s, then
 * 2, 3, 5, ... up to 61 here); those with a prime factor above 64 (201 =
 * 3 x 67, 4099 and 8191 prime, 8198 = 2 x 4099) the chirp-z transform; 1,
 * 2, 3 the smallest of each. */
Test(dft, mixed_radix_and_chirp_lengths) {
    static const int64_t ns[] = {12, 15, 18, 45, 60, 100, 231, 244, 360, 400, 201, 625, 27,
                                 1,  2,  3,  4099, 8191, 8198, 67, 131};
    q8t_rng r = q8t_seed(400);
    for (int it = 0; it < 42; it++) {
        int64_t n = ns[it % 21];
        dft_case c = {.f64 = it % 5 == 4, .cplx = (it / 2) % 2, .inverse = (it / 3) % 2,
                      .onesided = (it / 4) % 2, .nd = 4, .has_axis = true, .axis = 1,
                      .has_len = it % 3 != 0, .len = n, .dims = {1 + it % 2, n, 1 + it % 3, 1}};
        c.dims[3] = c.cplx ? 2 : 1;
        uint64_t u = q8t_next(&r);
        if (it % 3 == 1 && n > 1) c.dims[1] = n / 2 + 1 + (int64_t)(u % (uint64_t)(n / 2)); /* padded */
        if (it % 3 == 2) c.dims[1] = n + 1 + (int64_t)(u % 5); /* truncated */
        if (n > 4000) c.dims[0] = 1, c.dims[2] = 1; /* the reference is O(n^2) */
        char what[96];
        snprintf(what, sizeof what, "DFT case %d (%lld points of %lld%s%s)", it, (long long)n,
                 (long long)c.dims[1], c.inverse ? ", inverse" : "",
                 c.onesided ? ", onesided" : "");
        dft_check(&c, &r, what);
    }
}

/* The inverse of the full transform gives the signal back. */
Test(dft, inverse_round_trip) {
    q8t_rng r = q8t_seed(9);
    int64_t n = 37;
    float x[37];
    q8t_fill(&r, x, n, -1, 1);
    dft_case fwd = {.nd = 2, .dims = {n, 1}, .has_axis = true, .axis = 0};
    const void *data[1] = {x};
    void *spec, *back;
    q8_tensor_info info;
    run2((q8t_built){dft_build, &fwd}, data, &spec, &info);
    dft_case inv = {.nd = 2, .dims = {n, 2}, .has_axis = true, .axis = 0, .inverse = true};
    data[0] = spec;
    run2((q8t_built){dft_build, &inv}, data, &back, &info);
    const float *b = back;
    for (int64_t i = 0; i < n; i++) {
        cr_assert(fabsf(b[2 * i] - x[i]) < 1e-5f, "[%lld] re %g, want %g", (long long)i,
                  b[2 * i], x[i]);
        cr_assert(fabsf(b[2 * i + 1]) < 1e-5f, "[%lld] im %g, want 0", (long long)i, b[2 * i + 1]);
    }
    free(spec);
    free(back);
}

Test(dft, errors) {
    float x[64] = {0};
    const void *data[2] = {x, x};
    dft_case c = {.nd = 3, .dims = {2, 4, 1}, .has_axis = true, .axis = -1};
    EXPECT_ERR(dft_build(&c), data, "axis -1 is the last dim");
    c.axis = 2;
    EXPECT_ERR(dft_build(&c), data, "axis 2 is out of [-3, 1]");
    c.axis = -4;
    EXPECT_ERR(dft_build(&c), data, "axis -4 is out of [-3, 1]");
    c = (dft_case){.nd = 3, .dims = {2, 4, 3}};
    EXPECT_ERR(dft_build(&c), data, "has last dim 3, expected 1 (real) or 2 (complex)");
    c = (dft_case){.nd = 1, .dims = {4}};
    EXPECT_ERR(dft_build(&c), data, "has rank 1, expected >= 2");
    c = (dft_case){.nd = 3, .dims = {2, 4, 1}, .has_len = true, .len = 0};
    EXPECT_ERR(dft_build(&c), data, "dft_length is 0 (input 1), expected 1 to 2^19");
    c = (dft_case){.nd = 3, .dims = {2, 0, 1}};
    EXPECT_ERR(dft_build(&c), data, "dft_length is 0 (the axis' length)");
    c = (dft_case){.nd = 3, .dims = {2, 4, 1}};
    q8_graph *g = dft_build(&c);
    q8t_attr_int(g, "inverse", 2);
    EXPECT_ERR(g, data, "inverse is 2, expected 0 or 1");
    g = dft_build(&c);
    q8t_attr_int(g, "axis", 1);
    EXPECT_ERR(g, data, "'axis' is an input since opset 20");
    /* dft_length read at run time would change the shape */
    q8t_in ins[2] = {{"x", Q8_F32, 3, {2, 4, 1}, NULL}, {"len", Q8_I64, 0, {0}, NULL}};
    int64_t five = 5;
    data[1] = &five;
    EXPECT_ERR(q8t_graph1("DFT", ins, 2, 1), data, "input 1 ('len') must be a constant");
    ins[0].dtype = Q8_I32;
    ins[1].data = &five;
    EXPECT_ERR(q8t_graph1("DFT", ins, 2, 1), data, "float32 and float64 are supported");
}

/* ---------------------------------------------------------------- STFT */

typedef struct stft_case {
    bool f64, cplx, window, has_frame, onesided_default, onesided, step32;
    int64_t batch, len, step, frame;  /* frame: the window's and frame_length's */
} stft_case;

static q8_graph *stft_build(const void *ctx) {
    const stft_case *c = ctx;
    q8_dtype ft = c->f64 ? Q8_F64 : Q8_F32;
    int32_t step32 = (int32_t)c->step;
    q8t_in ins[4] = {{"signal", ft, 3, {c->batch, c->len, c->cplx ? 2 : 1}, NULL},
                     {"step", c->step32 ? Q8_I32 : Q8_I64, 0, {0},
                      c->step32 ? (const void *)&step32 : &c->step},
                     {c->window ? "window" : NULL, ft, 1, {c->frame}, NULL},
                     {"frame_length", Q8_I64, 0, {0}, &c->frame}};
    q8_graph *g = q8t_graph1("STFT", ins, c->has_frame ? 4 : c->window ? 3 : 2, 1);
    if (!c->onesided_default) q8t_attr_int(g, "onesided", c->onesided);
    return g;
}

/* frames x bins points per batch row: sum_j x[f step + j] w[j]
 * e^(-2 pi i j k / frame). */
static double *stft_ref(const stft_case *c, const double *x, const double *w, int64_t frame,
                        int64_t frames, int64_t bins, double **scale) {
    int64_t cd = c->cplx ? 2 : 1, total = c->batch * frames * bins;
    double *y = malloc(sizeof(double) * 2 * (size_t)(total ? total : 1));
    *scale = malloc(sizeof(double) * 2 * (size_t)(total ? total : 1));
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t f = 0; f < frames; f++)
            for (int64_t k = 0; k < bins; k++) {
                double re = 0, im = 0, mag = 0;
                for (int64_t j = 0; j < frame; j++) {
                    const double *v = x + (b * c->len + f * c->step + j) * cd;
                    double wj = w ? w[j] : 1, xr = v[0] * wj, xi = cd == 2 ? v[1] * wj : 0;
                    double a = -two_pi * (double)(j * k) / (double)frame;
                    re += xr * cos(a) - xi * sin(a);
                    im += xr * sin(a) + xi * cos(a);
                    mag += fabs(xr) + fabs(xi);
                }
                int64_t at = ((b * frames + f) * bins + k) * 2;
                y[at] = re;
                y[at + 1] = im;
                (*scale)[at] = (*scale)[at + 1] = mag;
            }
    return y;
}

/* Run the STFT of c (random signal and window from r) against stft_ref:
 * the output's shape and values. */
static void stft_check(const stft_case *c, q8t_rng *r, const char *what) {
    bool onesided = c->onesided_default || c->onesided;
    int64_t frames = 1 + (c->len - c->frame) / c->step;
    int64_t bins = onesided ? c->frame / 2 + 1 : c->frame;
    float *xf, *wf;
    double *xd, *wd, *scale;
    random_data(r, c->batch * c->len * (c->cplx ? 2 : 1), c->f64, &xf, &xd);
    random_data(r, c->frame, c->f64, &wf, &wd);
    double *want = stft_ref(c, xd, c->window ? wd : NULL, c->frame, frames, bins, &scale);
    const void *data[2] = {c->f64 ? (const void *)xd : xf, c->f64 ? (const void *)wd : wf};
    void *out;
    q8_tensor_info info;
    run2((q8t_built){stft_build, c}, data, &out, &info);
    int64_t od[4] = {c->batch, frames, bins, 2};
    q8t_assert_shape(&info, od, 4);
    check(c->f64, out, want, scale, q8t_numel(od, 4), what);
    free(out);
    free(want);
    free(scale);
    free(xf);
    free(xd);
    free(wf);
    free(wd);
}

Test(stft, random_shapes_vs_definition) {
    q8t_rng r = q8t_seed(1717);
    for (int it = 0; it < 60; it++) {
        stft_case c = {.f64 = it % 4 == 3, .cplx = it % 2, .window = (it / 2) % 2,
                       .has_frame = (it / 4) % 2, .onesided_default = it % 3 == 0,
                       .onesided = (it / 3) % 2, .step32 = it % 5 == 1,
                       .batch = 1 + (int64_t)(q8t_next(&r) % 3),
                       .len = 1 + (int64_t)(q8t_next(&r) % 60),
                       .step = 1 + (int64_t)(q8t_next(&r) % 7)};
        if (!c.window && !c.has_frame) c.frame = c.len; /* the whole signal */
        else c.frame = 1 + (int64_t)(q8t_next(&r) % (uint64_t)c.len);
        bool onesided = c.onesided_default || c.onesided;
        char what[128];
        snprintf(what, sizeof what, "STFT case %d (len %lld, step %lld, frame %lld%s%s%s)", it,
                 (long long)c.len, (long long)c.step, (long long)c.frame,
                 c.cplx ? ", complex" : "", c.window ? ", window" : "",
                 onesided ? ", onesided" : "");
        stft_check(&c, &r, what);
    }
}

/* Frames of a power of two (the FFT path), windowed or not. */
Test(stft, powers_of_two) {
    q8t_rng r = q8t_seed(512);
    for (int it = 0; it < 16; it++) {
        stft_case c = {.f64 = it % 4 == 3, .cplx = it % 2, .window = (it / 2) % 2,
                       .has_frame = true, .onesided_default = (it / 4) % 2, .batch = 2,
                       .frame = (int64_t)1 << (1 + it % 8), .step = 1 + it % 5};
        c.len = c.frame + (int64_t)(q8t_next(&r) % 40);
        char what[96];
        snprintf(what, sizeof what, "STFT case %d (frame %lld)", it, (long long)c.frame);
        stft_check(&c, &r, what);
    }
}

/* A speech front end's frames (400 = 4 4 5 5 at 16 kHz, 25 ms) and other
 * lengths with small factors: the mixed-radix FFT. */
Test(stft, mixed_radix_frames) {
    static const int64_t frames_of[] = {400, 12, 30, 243, 320};
    q8t_rng r = q8t_seed(160);
    for (int it = 0; it < 10; it++) {
        stft_case c = {.f64 = it % 4 == 3, .cplx = it % 2, .window = (it / 2) % 2,
                       .has_frame = true, .onesided_default = (it / 4) % 2, .batch = 1 + it % 2,
                       .frame = frames_of[it % 5], .step = 160 - 37 * (it % 3)};
        c.len = c.frame + (int64_t)(q8t_next(&r) % 700);
        char what[96];
        snprintf(what, sizeof what, "STFT case %d (frame %lld)", it, (long long)c.frame);
        stft_check(&c, &r, what);
    }
}

Test(stft, errors) {
    float x[64] = {0};
    const void *data[2] = {x, x};
    stft_case c = {.batch = 1, .len = 16, .step = 0, .frame = 4, .has_frame = true,
                   .onesided_default = true};
    EXPECT_ERR(stft_build(&c), data, "frame_step is 0, expected >= 1");
    c.step = 2;
    c.frame = 17;
    EXPECT_ERR(stft_build(&c), data, "frame_length is 17, expected 1 to the signal's length 16");
    c.frame = 0;
    EXPECT_ERR(stft_build(&c), data, "frame_length is 0");
    /* a window of another length than frame_length */
    int64_t eight = 8;
    q8t_in ins[4] = {{"signal", Q8_F32, 3, {1, 16, 1}, NULL}, {"step", Q8_I64, 0, {0}, &eight},
                     {"window", Q8_F32, 1, {6}, NULL}, {"frame_length", Q8_I64, 0, {0}, &eight}};
    EXPECT_ERR(q8t_graph1("STFT", ins, 4, 1), data, "frame_length is 8 but the window has 6");
    ins[2].dtype = Q8_F64;
    EXPECT_ERR(q8t_graph1("STFT", ins, 3, 1), data, "input 'window' is float64, only float32");
    ins[0] = (q8t_in){"signal", Q8_F32, 2, {1, 16}, NULL};
    EXPECT_ERR(q8t_graph1("STFT", ins, 2, 1), data, "has rank 2, expected >= 3");
    ins[0] = (q8t_in){"signal", Q8_F32, 3, {1, 16, 3}, NULL};
    EXPECT_ERR(q8t_graph1("STFT", ins, 2, 1), data, "last dim 3, expected 1 (real) or 2");
    ins[0] = (q8t_in){"signal", Q8_F32, 4, {1, 16, 1, 1}, NULL};
    EXPECT_ERR(q8t_graph1("STFT", ins, 2, 1), data, "has rank 4, expected 3");
    ins[0] = (q8t_in){"signal", Q8_F32, 3, {1, 16, 1}, NULL};
    ins[1].data = NULL;
    data[1] = &eight;
    EXPECT_ERR(q8t_graph1("STFT", ins, 2, 1), data, "input 1 ('step') must be a constant");
}

/* ---------------------------------------------------------------- MelWeightMatrix */

typedef struct mel_case {
    int64_t mels, dft, rate;
    double lo, hi;
    bool edges64, rate64, out64;
    bool runtime;               /* sample_rate and the edges as graph inputs */
} mel_case;

typedef struct mel_inputs {
    int64_t mels, dft, rate;
    int32_t rate32;
    float lo, hi;
    double lo64, hi64;
} mel_inputs;

static mel_inputs mel_values(const mel_case *c) {
    return (mel_inputs){c->mels, c->dft, c->rate, (int32_t)c->rate, (float)c->lo, (float)c->hi,
                        c->lo, c->hi};
}

static q8_graph *mel_build(const void *ctx) {
    const mel_case *c = ctx;
    mel_inputs mel_v = mel_values(c); /* q8t_graph1 copies constants */
    q8_dtype et = c->edges64 ? Q8_F64 : Q8_F32;
    const void *rate = c->rate64 ? (const void *)&mel_v.rate : &mel_v.rate32;
    const void *lo = c->edges64 ? (const void *)&mel_v.lo64 : &mel_v.lo;
    const void *hi = c->edges64 ? (const void *)&mel_v.hi64 : &mel_v.hi;
    q8t_in ins[5] = {{"num_mel_bins", Q8_I64, 0, {0}, &mel_v.mels},
                     {"dft_length", Q8_I64, 0, {0}, &mel_v.dft},
                     {"sample_rate", c->rate64 ? Q8_I64 : Q8_I32, 0, {0}, c->runtime ? NULL : rate},
                     {"lower_edge_hertz", et, 0, {0}, c->runtime ? NULL : lo},
                     {"upper_edge_hertz", et, 0, {0}, c->runtime ? NULL : hi}};
    q8_graph *g = q8t_graph1("MelWeightMatrix", ins, 5, 1);
    if (c->out64) q8t_attr_int(g, "output_datatype", 11);
    return g;
}

/* The ONNX reference's steps: edges in mel (float32 arithmetic for float32
 * edges), mels + 2 points evenly spaced in mel, back in hertz, as bins of
 * the (dft + 1)-point grid; filter m rises from point m to point m + 1 and
 * falls to point m + 2. Points outside the matrix are left out. */
static double *mel_ref(const mel_case *c) {
    int64_t rows = c->dft / 2 + 1, pts[600];
    double lm, step;
    if (c->edges64) {
        lm = 2595 * log10(1 + c->lo / 700);
        step = (2595 * log10(1 + c->hi / 700) - lm) / (double)(c->mels + 2);
    } else {
        float l = 2595.0f * log10f(1.0f + (float)c->lo / 700.0f);
        float h = 2595.0f * log10f(1.0f + (float)c->hi / 700.0f);
        lm = l;
        step = (float)((h - l) / (float)(c->mels + 2));
    }
    for (int64_t i = 0; i < c->mels + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * step + lm) / 2595) - 1);
        pts[i] = (int64_t)floor((double)(c->dft + 1) * hz / (double)c->rate);
    }
    double *w = calloc((size_t)(rows * c->mels) + 1, sizeof(double));
    for (int64_t m = 0; m < c->mels; m++) {
        int64_t l = pts[m], ctr = pts[m + 1], h = pts[m + 2];
        if (ctr == l) {
            if (ctr >= 0 && ctr < rows) w[ctr * c->mels + m] = 1;
        } else {
            for (int64_t j = l; j <= ctr; j++)
                if (j >= 0 && j < rows) w[j * c->mels + m] = (double)(j - l) / (double)(ctr - l);
        }
        for (int64_t j = ctr; j < h; j++)
            if (j >= 0 && j < rows) w[j * c->mels + m] = (double)(h - j) / (double)(h - ctr);
    }
    return w;
}

static void mel_check(const mel_case *c, const char *what) {
    mel_inputs v = mel_values(c);
    const void *rate = c->rate64 ? (const void *)&v.rate : &v.rate32;
    const void *data[3] = {rate, c->edges64 ? (const void *)&v.lo64 : &v.lo,
                           c->edges64 ? (const void *)&v.hi64 : &v.hi};
    void *out;
    q8_tensor_info info;
    run2((q8t_built){mel_build, c}, data, &out, &info);
    int64_t od[2] = {c->dft / 2 + 1, c->mels};
    q8t_assert_shape(&info, od, 2);
    cr_assert_eq(info.dtype, c->out64 ? Q8_F64 : Q8_F32, "%s: dtype", what);
    double *want = mel_ref(c);
    check(c->out64, out, want, NULL, od[0] * od[1], what);
    free(want);
    free(out);
}

Test(melweightmatrix, cases_vs_reference) {
    static const mel_case cases[] = {
        {8, 16, 8192, 0, 4096, false, false, false, false}, /* the ONNX test's */
        {40, 512, 16000, 20, 8000, false, true, false, true},
        {13, 257, 22050, 300, 11025, true, false, true, false},
        {64, 1024, 44100, 0, 22050, true, true, false, true},
        {5, 9, 100, 0, 50, false, false, true, false},      /* filters of one bin */
        {30, 64, 8000, 100, 4000, false, false, false, true},  /* empty rises */
        {6, 20, 1000, 10, 2000, false, true, false, true},  /* past Nyquist: cut */
        {0, 16, 8000, 0, 4000, false, false, false, false}, /* no filter */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char what[64];
        snprintf(what, sizeof what, "MelWeightMatrix case %zu", i);
        mel_check(&cases[i], what);
    }
}

/* The ONNX test's matrix (8 mels, dft 16, 8192 Hz, 0 to 4096 Hz) worked out
 * from the reference's steps: the points are bins 0, 0, 0, 1, 1, 2, 3, 4, 5,
 * 6, so filter m is a single 1 at row (0, 0, 1, 1, 2, 3, 4, 5)[m]. */
Test(melweightmatrix, onnx_example_by_hand) {
    static const int row[8] = {0, 0, 1, 1, 2, 3, 4, 5};
    mel_case c = {8, 16, 8192, 0, 4096, false, false, false, false};
    void *out;
    q8_tensor_info info;
    run2((q8t_built){mel_build, &c}, NULL, &out, &info);
    const float *w = out;
    for (int j = 0; j < 9; j++)
        for (int m = 0; m < 8; m++)
            cr_assert_eq(w[j * 8 + m], j == row[m] ? 1.0f : 0.0f, "[%d, %d] is %g", j, m,
                         w[j * 8 + m]);
    free(out);
}

Test(melweightmatrix, errors) {
    int64_t eight = 8, sixteen = 16, zero = 0, rate = 8000;
    float lo = 0, hi = 4000;
    double hi64 = 4000;
    const void *data[5] = {&eight, &sixteen, &rate, &lo, &hi};
    q8t_in ins[5] = {{"num_mel_bins", Q8_I64, 0, {0}, NULL},
                     {"dft_length", Q8_I64, 0, {0}, &sixteen},
                     {"sample_rate", Q8_I64, 0, {0}, &rate},
                     {"lower_edge_hertz", Q8_F32, 0, {0}, &lo},
                     {"upper_edge_hertz", Q8_F32, 0, {0}, &hi}};
    EXPECT_ERR(q8t_graph1("MelWeightMatrix", ins, 5, 1), data,
               "input 0 ('num_mel_bins') must be a constant");
    ins[0].data = &eight;
    ins[1].data = &zero;
    EXPECT_ERR(q8t_graph1("MelWeightMatrix", ins, 5, 1), data, "dft_length is 0, expected 1");
    ins[1].data = &sixteen;
    ins[2].data = &zero;
    EXPECT_ERR(q8t_graph1("MelWeightMatrix", ins, 5, 1), data, "sample_rate is 0, expected >= 1");
    ins[2].data = &rate;
    q8_graph *g = q8t_graph1("MelWeightMatrix", ins, 5, 1);
    q8t_attr_int(g, "output_datatype", 10);
    EXPECT_ERR(g, data, "output_datatype 10: float32 (1) and float64 (11) are supported");
    ins[4] = (q8t_in){"upper_edge_hertz", Q8_F64, 0, {0}, &hi64};
    EXPECT_ERR(q8t_graph1("MelWeightMatrix", ins, 5, 1), data, "have different dtypes");
    ins[4] = (q8t_in){"upper_edge_hertz", Q8_I64, 0, {0}, &rate};
    EXPECT_ERR(q8t_graph1("MelWeightMatrix", ins, 5, 1), data,
               "upper_edge_hertz 'upper_edge_hertz' is int64, expected float32 or float64");
    ins[4] = (q8t_in){"upper_edge_hertz", Q8_F32, 1, {2}, NULL};
    EXPECT_ERR(q8t_graph1("MelWeightMatrix", ins, 5, 1), data, "has 2 values, expected one");
}
