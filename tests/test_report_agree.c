/* q8report's agreement measure fits output 0: top-1 agreement for class
 * scores, per-pixel class agreement for N,C,H,W class maps, mask IoU for a
 * one-channel probability map, none for regressors and images. Each output's
 * worst sample and per-channel SQNR. Each expected number is recomputed here
 * with plain loops from the same inputs. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"
#include "npy.h"
#include "passes.h"
#include "report.h"
#include "report_outputs.h"
#include "q8_tools.h"
#include "testutil.h"

#define N_SAMPLES 3

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

#define T q8t_tensor

static void node(q8_graph *g, const char *op, const char *a, const char *b, const char *y) {
    int in[2] = {T(g, a), b ? T(g, b) : -1}, out = T(g, y);
    int k = q8_graph_add_node(g, y, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, b ? 2 : 1, &out, 1, NULL), Q8_OK);
}

static void constant(q8_graph *g, const char *name, const int64_t *d, int nd, const float *v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, d, nd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, (size_t)q8_tensor_numel(g->tensors[t]) * sizeof(float));
}

/* y = act(x + c) or act(x * c): c of shape cd (broadcast), act "" or an op */
static q8_model *model(const int64_t *xd, int nx, const char *op, const int64_t *cd, int nc,
                       const float *c, const char *act) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, nx);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    constant(g, "c", cd, nc, c);
    node(g, op, "x", "c", *act ? "h" : "y");
    if (*act) node(g, act, "h", NULL, "y");
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m = NULL;
    cr_assert_eq(q8_model_from_graph(g, "m", &m, &err), Q8_OK, "%s", err.msg);
    return m;
}

/* N_SAMPLES random inputs of shape xd in dir (returned in xs) */
static void samples(const char *dir, const int64_t *xd, int nx, float *xs, int64_t n) {
    q8t_rng rng = q8t_seed(5);
    for (int i = 0; i < N_SAMPLES; i++) {
        q8t_fill(&rng, xs + i * n, n, -2, 2);
        char p[128];
        snprintf(p, sizeof p, "%s/%d.npy", dir, i);
        q8_error err = {0};
        cr_assert_eq(q8_npy_write(p, Q8_F32, xd, nx, xs + i * n, &err), Q8_OK, "%s", err.msg);
    }
}

typedef struct compared {
    q8_report_model out[2];
} compared;

static compared compare(q8_model *f, q8_model *q, const int64_t *xd, int nx, float *xs) {
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/q8agree_XXXXXX");
    cr_assert(mkdtemp(dir));
    int64_t n = 1;
    for (int i = 0; i < nx; i++) n *= xd[i];
    samples(dir, xd, nx, xs, n);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, f->g, &s, &err), Q8_OK, "%s", err.msg);
    compared c = {{{0}}};
    q8_compare_options co = {.n_threads = 1};
    const q8_model *qs[1] = {q};
    cr_assert_eq(q8_report_compare(f, qs, 1, &s, &co, c.out, &err), Q8_OK, "%s", err.msg);
    q8_samples_free(&s);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return c;
}

static void done(compared *c, q8_model *f, q8_model *q) {
    q8_report_model_free(&c->out[0]);
    q8_report_model_free(&c->out[1]);
    q8_model_free(f);
    q8_model_free(q);
}

static float sigmoid(float v) { return 1 / (1 + expf(-v)); }

Test(report_agree, one_channel_probability_map_is_a_mask_iou) {
    int64_t xd[4] = {1, 1, 6, 7}, n = 42, cd[1] = {1};
    float zero = 0, shift = 0.3f, xs[N_SAMPLES * 42];
    q8_model *f = model(xd, 4, "Add", cd, 1, &zero, "Sigmoid");
    q8_model *q = model(xd, 4, "Add", cd, 1, &shift, "Sigmoid");
    compared c = compare(f, q, xd, 4, xs);
    int64_t inter = 0, uni = 0;
    for (int64_t i = 0; i < N_SAMPLES * n; i++) {
        bool a = sigmoid(xs[i]) > 0.5f, b = sigmoid(xs[i] + shift) > 0.5f;
        inter += a && b;
        uni += a || b;
    }
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_MASK);
    cr_assert_eq(c.out[1].agree, inter);
    cr_assert_eq(c.out[1].agree_of, uni);
    cr_assert(inter < uni, "the shift must move some pixels for the test to mean anything");
    cr_assert_float_eq(q8_report_agreement(&c.out[1]), (double)inter / (double)uni, 1e-12);
    cr_assert_eq(c.out[1].rows, 0, "a mask has no top-1 rows");
    done(&c, f, q);
}

Test(report_agree, unbounded_one_channel_map_has_no_agreement) {
    int64_t xd[4] = {1, 1, 6, 7}, cd[1] = {1};
    float one = 1, more = 1.01f, xs[N_SAMPLES * 42];
    q8_model *f = model(xd, 4, "Mul", cd, 1, &one, "");
    q8_model *q = model(xd, 4, "Mul", cd, 1, &more, "");
    compared c = compare(f, q, xd, 4, xs);
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_NONE);
    cr_assert_eq(c.out[1].agree, -1);
    cr_assert_lt(q8_report_agreement(&c.out[1]), 0);
    done(&c, f, q);
}

/* argmax over `classes` values at stride `inner` */
static int64_t argmax_at(const float *v, int64_t classes, int64_t inner) {
    int64_t am = 0;
    for (int64_t k = 1; k < classes; k++)
        if (v[k * inner] > v[am * inner]) am = k;
    return am;
}

Test(report_agree, nchw_class_map_is_compared_per_pixel_over_axis_1) {
    int64_t xd[4] = {2, 3, 4, 5}, n = 120, cd[4] = {1, 3, 1, 1};
    float one[3] = {1, 1, 1}, skew[3] = {1, 1.6f, 0.7f}, xs[N_SAMPLES * 120];
    q8_model *f = model(xd, 4, "Mul", cd, 4, one, "");
    q8_model *q = model(xd, 4, "Mul", cd, 4, skew, "");
    compared c = compare(f, q, xd, 4, xs);
    int64_t same = 0, pixels = 0;
    for (int s = 0; s < N_SAMPLES; s++)
        for (int64_t b = 0; b < 2; b++)
            for (int64_t p = 0; p < 20; p++) {
                const float *x = xs + s * n + b * 60 + p;
                float y[3];
                for (int k = 0; k < 3; k++) y[k] = x[k * 20] * skew[k];
                same += argmax_at(x, 3, 20) == argmax_at(y, 3, 1);
                pixels++;
            }
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_PIXEL);
    cr_assert_eq(c.out[1].agree_of, pixels);
    cr_assert_eq(c.out[1].agree, same);
    cr_assert(same < pixels, "the skew must flip some pixels for the test to mean anything");
    done(&c, f, q);
}

Test(report_agree, nhwc_class_map_is_compared_over_the_last_axis) {
    int64_t xd[4] = {1, 4, 5, 3}, n = 60, cd[1] = {3};
    float one[3] = {1, 1, 1}, skew[3] = {1, 1.6f, 0.7f}, xs[N_SAMPLES * 60];
    q8_model *f = model(xd, 4, "Mul", cd, 1, one, "");
    q8_model *q = model(xd, 4, "Mul", cd, 1, skew, "");
    compared c = compare(f, q, xd, 4, xs);
    int64_t same = 0;
    for (int64_t r = 0; r < N_SAMPLES * n / 3; r++) {
        float y[3];
        for (int k = 0; k < 3; k++) y[k] = xs[r * 3 + k] * skew[k];
        same += argmax_at(xs + r * 3, 3, 1) == argmax_at(y, 3, 1);
    }
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_TOP1);
    cr_assert_eq(c.out[1].agree_of, N_SAMPLES * 20);
    cr_assert_eq(c.out[1].rows, N_SAMPLES * 20);
    cr_assert_eq(c.out[1].agree, same);
    cr_assert(same < N_SAMPLES * 20);
    done(&c, f, q);
}

Test(report_agree, sequence_of_probabilities_is_top1_and_regressors_are_not) {
    int64_t xd[3] = {1, 8, 5}, cd[1] = {5};
    float zero[5] = {0}, bias[5] = {0, 0.8f, 0, -0.5f, 0.3f}, xs[N_SAMPLES * 40];
    q8_model *f = model(xd, 3, "Add", cd, 1, zero, "Softmax");
    q8_model *q = model(xd, 3, "Add", cd, 1, bias, "Softmax");
    compared c = compare(f, q, xd, 3, xs);
    int64_t same = 0;
    for (int64_t r = 0; r < N_SAMPLES * 8; r++) {
        float y[5];
        for (int k = 0; k < 5; k++) y[k] = xs[r * 5 + k] + bias[k];
        same += argmax_at(xs + r * 5, 5, 1) == argmax_at(y, 5, 1);
    }
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_TOP1);
    cr_assert_eq(c.out[1].agree, same);
    cr_assert(same < N_SAMPLES * 8);
    done(&c, f, q);
    /* the same shape without the softmax: 5 numbers per row, not probabilities */
    f = model(xd, 3, "Add", cd, 1, zero, "");
    q = model(xd, 3, "Add", cd, 1, bias, "");
    c = compare(f, q, xd, 3, xs);
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_NONE);
    cr_assert_eq(c.out[1].agree, -1);
    done(&c, f, q);
}

Test(report_agree, kind_labels) {
    cr_assert_null(q8_agree_kind_label(Q8_AGREE_NONE));
    cr_assert_str_eq(q8_agree_kind_label(Q8_AGREE_MASK), "mask IoU with FP32 (at 0.5)");
    q8_report_model m = {.agree_kind = Q8_AGREE_MASK, .agree = 0, .agree_of = 0};
    cr_assert_float_eq(q8_report_agreement(&m), 1.0, 0, "two empty masks are the same mask");
    m.agree_kind = Q8_AGREE_TOP1;
    cr_assert_lt(q8_report_agreement(&m), 0);
}

/* An RGB image (one plane plus an offset per channel: channels that move
 * together), NCHW and NHWC, has no class structure; the same shapes with
 * independent channels stay class maps (the tests above). */
Test(report_agree, image_outputs_have_no_agreement) {
    int64_t xd[4] = {1, 1, 6, 7}, cd[4] = {1, 3, 1, 1};
    float off[3] = {0, 0.1f, -0.2f}, off2[3] = {0, 0.15f, -0.1f}, xs[N_SAMPLES * 42];
    q8_model *f = model(xd, 4, "Add", cd, 4, off, "");
    q8_model *q = model(xd, 4, "Add", cd, 4, off2, "");
    compared c = compare(f, q, xd, 4, xs);
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_NONE);
    cr_assert_eq(c.out[1].agree, -1);
    done(&c, f, q);
    int64_t hd[4] = {1, 6, 7, 1}, hc[1] = {3};
    f = model(hd, 4, "Add", hc, 1, off, "");
    q = model(hd, 4, "Add", hc, 1, off2, "");
    c = compare(f, q, hd, 4, xs);
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_NONE);
    done(&c, f, q);
}


/* ---- per channel and per sample ---- */

Test(report_outputs, channel_axis_by_layout) {
    struct {
        int nd;
        int64_t d[5];
        int axis;
    } c[] = {
        {2, {1, 512}, 1},        {2, {4, 1}, -1},         {3, {1, 25200, 85}, 2},
        {4, {1, 64, 32, 32}, 1}, {4, {1, 160, 160, 4}, 3}, {4, {1, 1, 17, 3}, 3},
        {4, {1, 1, 6, 7}, -1},   {4, {1, 256, 8, 8}, 1},  {5, {1, 3, 2, 4, 4}, 1},
        {1, {7}, -1},            {4, {1, 256, 256, 1}, -1}, {4, {1, 1, 320, 240}, -1},
        {4, {1, 25, 25, 17}, 3},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        q8_tensor t = {.dtype = Q8_F32, .ndim = c[i].nd};
        memcpy(t.dims, c[i].d, sizeof(int64_t) * (size_t)c[i].nd);
        cr_assert_eq(q8_report_channel_axis(&t), c[i].axis, "case %zu", i);
    }
}

/* For y = x * one[k] (FP32) and x * skew[k] (quantized) with k = i %
 * period / run: each channel's sums of squares of FP32's values and of the
 * errors, with the models' float rounding. */
static void channel_sums(const float *xs, int64_t n, int64_t period, int64_t run,
                         const float *one, const float *skew, double *r2, double *e2) {
    for (int64_t i = 0; i < n; i++) {
        int64_t k = i % period / run;
        float rf = xs[i] * one[k], vf = xs[i] * skew[k]; /* as the model rounds */
        double r = rf, v = vf;
        r2[k] += r * r;
        e2[k] += (v - r) * (v - r);
    }
}

/* y = x * c over the last axis of [1, 16, 5]: channel k's SQNR is set by
 * the quantized model's factor; FP32's channel 4 is all 0 (left out). */
Test(report_outputs, per_channel_median_and_worst) {
    int64_t xd[3] = {1, 16, 5}, cd[1] = {5};
    float one[5] = {1, 1, 1, 1, 0}, skew[5] = {1.001f, 1.1f, 1.01f, 1, 0.5f};
    float xs[N_SAMPLES * 80];
    q8_model *f = model(xd, 3, "Mul", cd, 1, one, "");
    q8_model *q = model(xd, 3, "Mul", cd, 1, skew, "");
    compared c = compare(f, q, xd, 3, xs);
    double r2[5] = {0}, e2[5] = {0};
    channel_sums(xs, N_SAMPLES * 80, 5, 1, one, skew, r2, e2);
    const q8_report_output *o = &c.out[1].outputs[0];
    cr_assert_eq(o->channel_axis, 2);
    cr_assert_eq(o->channels, 5);
    cr_assert_eq(o->channels_measured, 4, "the all-0 channel is left out");
    cr_assert_eq(o->channel_worst, 1);
    cr_assert_float_eq(o->channel_worst_db, 10 * log10(r2[1] / e2[1]), 1e-9);
    /* median of {20, 40, 60, exact} dB: between 40 and 60 */
    cr_assert_float_eq(o->channel_median_db,
                       (10 * log10(r2[2] / e2[2]) + 10 * log10(r2[0] / e2[0])) / 2, 1e-9);
    done(&c, f, q);
}

/* y = x + 0.3 in the quantized model: the same error everywhere, so the
 * sample with the least energy has the lowest SQNR. */
Test(report_outputs, worst_sample_is_the_lowest_sample_sqnr) {
    int64_t xd[2] = {1, 16}, cd[1] = {1};
    float zero = 0, shift = 0.3f, xs[N_SAMPLES * 16];
    q8_model *f = model(xd, 2, "Add", cd, 1, &zero, "");
    q8_model *q = model(xd, 2, "Add", cd, 1, &shift, "");
    compared c = compare(f, q, xd, 2, xs);
    double worst = INFINITY;
    int ws = -1;
    for (int s = 0; s < N_SAMPLES; s++) {
        double r2 = 0, e2 = 0;
        for (int i = 0; i < 16; i++) {
            float vf = xs[s * 16 + i] + shift; /* as the model rounds */
            double r = xs[s * 16 + i], v = vf;
            r2 += r * r;
            e2 += (v - r) * (v - r);
        }
        if (10 * log10(r2 / e2) < worst) worst = 10 * log10(r2 / e2), ws = s;
    }
    const q8_report_output *o = &c.out[1].outputs[0];
    cr_assert_eq(o->worst_sample, ws);
    cr_assert_float_eq(o->worst_sample_db, worst, 1e-9);
    char want[16];
    snprintf(want, sizeof want, "/%d.npy", ws);
    cr_assert(o->worst_sample_path && strstr(o->worst_sample_path, want), "%s",
              o->worst_sample_path ? o->worst_sample_path : "(null)");
    cr_assert_eq(o->channel_axis, -1, "16 channels x 3 samples: too few values");
    done(&c, f, q);
    /* one score a sample: no worst sample (a value near 0 has no SQNR to speak of) */
    int64_t one[2] = {1, 1};
    f = model(one, 2, "Add", cd, 1, &zero, "");
    q = model(one, 2, "Add", cd, 1, &shift, "");
    c = compare(f, q, one, 2, xs);
    cr_assert_eq(c.out[1].outputs[0].worst_sample, -1);
    done(&c, f, q);
}

/* MoveNet's [1, 1, 17, 3] (y, x, score of 17 keypoints, all in [0, 1]) is
 * not a one-channel mask: no mask IoU, and its 3 fields are its channels. */
Test(report_agree, keypoints_in_unit_interval_are_not_a_mask) {
    int64_t xd[4] = {1, 1, 17, 3}, cd[1] = {1};
    float zero = 0, shift = 0.1f, xs[N_SAMPLES * 51];
    q8_model *f = model(xd, 4, "Add", cd, 1, &zero, "Sigmoid");
    q8_model *q = model(xd, 4, "Add", cd, 1, &shift, "Sigmoid");
    compared c = compare(f, q, xd, 4, xs);
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_NONE);
    cr_assert_eq(c.out[1].outputs[0].channel_axis, 3);
    cr_assert_eq(c.out[1].outputs[0].channels, 3);
    done(&c, f, q);
}

/* Rows of 24 points' x, y around a circle of radius 50 (a face contour's
 * layout) are landmarks: no top-1 agreement over coordinates. The same
 * values in a shuffled order are scores again. */
Test(report_agree, landmark_rows_have_no_top1) {
    int64_t xd[2] = {1, 48}, cd[2] = {1, 48};
    float pts[48], shuffled[48], xs[N_SAMPLES * 48];
    for (int k = 0; k < 24; k++) {
        pts[2 * k] = 96 + 50 * cosf(6.2831853f * (float)k / 24);
        pts[2 * k + 1] = 96 + 50 * sinf(6.2831853f * (float)k / 24);
    }
    for (int i = 0; i < 48; i++) shuffled[i] = pts[(i * 7) % 48]; /* 7 is prime to 48 */
    q8_model *f = model(xd, 2, "Add", cd, 2, pts, "");
    q8_model *q = model(xd, 2, "Add", cd, 2, pts, "");
    compared c = compare(f, q, xd, 2, xs);
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_NONE);
    done(&c, f, q);
    f = model(xd, 2, "Add", cd, 2, shuffled, "");
    q = model(xd, 2, "Add", cd, 2, shuffled, "");
    c = compare(f, q, xd, 2, xs);
    cr_assert_eq(c.out[1].agree_kind, Q8_AGREE_TOP1);
    done(&c, f, q);
}

/* Softmax(x / 1000 + c) over 48 classes where c climbs by 0.01 on even
 * classes and is 0 on odd ones: rows one period apart are close, as
 * landmarks' are, but they sum to 1: class probabilities, top-1 compared.
 * And 15 points (30 values) are too few to call landmarks: scores. */
Test(report_agree, probabilities_and_short_rows_are_scores) {
    int64_t xd[2] = {1, 48}, cd[2] = {1, 48}, one[1] = {1};
    float c[48], tiny = 0.001f, xs[N_SAMPLES * 48];
    for (int k = 0; k < 24; k++) {
        c[2 * k] = 2 + 0.01f * (float)k;
        c[2 * k + 1] = 0;
    }
    q8_model *m[2];
    for (int i = 0; i < 2; i++) {
        q8_graph *g = q8_graph_new();
        int x = T(g, "x");
        q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 2);
        g->inputs = malloc(sizeof(int));
        g->inputs[g->n_inputs++] = x;
        constant(g, "s", one, 1, &tiny);
        constant(g, "c", cd, 2, c);
        node(g, "Mul", "x", "s", "h");
        node(g, "Add", "h", "c", "z");
        node(g, "Softmax", "z", NULL, "y");
        g->outputs = malloc(sizeof(int));
        g->outputs[g->n_outputs++] = T(g, "y");
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_model_from_graph(g, "m", &m[i], &err), Q8_OK, "%s", err.msg);
    }
    compared r = compare(m[0], m[1], xd, 2, xs);
    cr_assert_eq(r.out[1].agree_kind, Q8_AGREE_TOP1);
    done(&r, m[0], m[1]);
    int64_t sd[2] = {1, 30};
    float pts[30];
    for (int k = 0; k < 15; k++) {
        pts[2 * k] = 96 + 50 * cosf(6.2831853f * (float)k / 15);
        pts[2 * k + 1] = 96 + 50 * sinf(6.2831853f * (float)k / 15);
    }
    q8_model *f = model(sd, 2, "Add", sd, 2, pts, "");
    q8_model *q = model(sd, 2, "Add", sd, 2, pts, "");
    r = compare(f, q, sd, 2, xs);
    cr_assert_eq(r.out[1].agree_kind, Q8_AGREE_TOP1, "15 points: scores");
    done(&r, f, q);
}

/* y = x * c[k] over axis 1 of an NCHW [1, 4, 8, 8] map (c broadcast as [1,
 * 4, 1, 1]): per-channel SQNR along axis 1, each channel's 64 values of 3
 * samples; channel 2 exact in the quantized model (+inf dB, the median's
 * upper side). */
Test(report_outputs, per_channel_sqnr_over_nchw_axis_1) {
    int64_t xd[4] = {1, 4, 8, 8}, cd[4] = {1, 4, 1, 1};
    float one[4] = {1, 1, 1, 1}, skew[4] = {1.01f, 1.1f, 1, 1.001f};
    float xs[N_SAMPLES * 256];
    q8_model *f = model(xd, 4, "Mul", cd, 4, one, "");
    q8_model *q = model(xd, 4, "Mul", cd, 4, skew, "");
    compared c = compare(f, q, xd, 4, xs);
    double r2[4] = {0}, e2[4] = {0};
    channel_sums(xs, N_SAMPLES * 256, 256, 64, one, skew, r2, e2);
    const q8_report_output *o = &c.out[1].outputs[0];
    cr_assert_eq(o->channel_axis, 1);
    cr_assert_eq(o->channels, 4);
    cr_assert_eq(o->channels_measured, 4);
    cr_assert_eq(o->channel_worst, 1);
    cr_assert_float_eq(o->channel_worst_db, 10 * log10(r2[1] / e2[1]), 1e-9);
    cr_assert(isinf(10 * log10(r2[2] / e2[2])), "channel 2 is exact");
    /* median of {20, 40, 60, +inf} dB: between 40 and 60 */
    cr_assert_float_eq(o->channel_median_db,
                       (10 * log10(r2[0] / e2[0]) + 10 * log10(r2[3] / e2[3])) / 2, 1e-9);
    done(&c, f, q);
}

/* The summary and the answers table name an output whose worst sample or
 * median channel is 6 dB or more under its SQNR; not class scores' channels. */
Test(report_outputs, what_the_summary_calls_hidden) {
    q8_report_output o = {.err = {.ref2 = 1000, .err2 = 1, .n = 10}, /* 30 dB */
                          .worst_sample = 2, .worst_sample_db = 24.5,
                          .channel_axis = 2, .channels = 85, .channels_measured = 85,
                          .channel_median_db = 23.9, .channel_worst_db = 0};
    q8_report_model q = {.outputs = &o, .n_outputs = 1, .agree_kind = Q8_AGREE_NONE};
    bool sample, chan;
    cr_assert(q8_report_output_hides(&q, 0, &sample, &chan));
    cr_assert(!sample && chan, "24.5 is 5.5 dB under 30; 23.9 is 6.1");
    q.agree_kind = Q8_AGREE_TOP1;
    cr_assert(!q8_report_output_hides(&q, 0, &sample, &chan), "class scores' channels");
    o.worst_sample_db = 23;
    cr_assert(q8_report_output_hides(&q, 0, &sample, &chan) && sample && !chan);
    o.worst_sample = -1;
    cr_assert(!q8_report_output_hides(&q, 0, &sample, &chan), "one sample: nothing to hide");
}
