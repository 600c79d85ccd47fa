/* --calib-method auto (src/quant/calib_choose.c): the ranges are chosen by
 * the INT8 model's output, not by a rule. The inputs are values in [-1, 1]
 * with a spike of 20 in half the samples (4 values of 65536): percentile
 * 99.99 clips the spikes (range ~1), MSE keeps them (range ~20, clipping
 * them would cost more than coarser steps). Which is right depends on what
 * the model does with the spike. */
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "output_eval.h"
#include "npy.h"
#include "passes.h"
#include "quantize.h"
#include "testutil.h"

#define N 8192
#define S 8

#define T q8t_tensor

static void node(q8_graph *g, const char *op, const char *in0, const char *in1, const char *out) {
    int ii[2] = {T(g, in0), in1 ? T(g, in1) : -1}, oo = T(g, out);
    int k = q8_graph_add_node(g, out, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, in1 ? 2 : 1, &oo, 1, NULL), Q8_OK);
}

static void input(q8_graph *g, const char *name) {
    int64_t d[2] = {1, N};
    int x = T(g, name);
    q8_tensor_set_shape(g->tensors[x], Q8_F32, d, 2);
    g->inputs = realloc(g->inputs, sizeof(int) * (size_t)(g->n_inputs + 1));
    g->inputs[g->n_inputs++] = x;
}

static void output(q8_graph *g, const char *name) {
    g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
    g->outputs[g->n_outputs++] = T(g, name);
}

/* Where the spikes are (write_samples): sample i (even) at (i * 997) % N */
static bool spike_at(int j) {
    for (int i = 0; i < S; i += 2)
        if ((i * 997) % N == j) return true;
    return false;
}

/* y = x . w by a MatMul (INT8: x quantized at its range); w is 1, or with
 * masked, 0 where the spikes are: they do not matter to y then */
static void sum(q8_graph *g, const char *x, const char *y, bool masked) {
    char w[32];
    snprintf(w, sizeof w, "w_%s", y);
    int64_t d[2] = {N, 1};
    int t = T(g, w);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, d, 2);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    for (int i = 0; i < N; i++) ((float *)g->tensors[t]->data)[i] = masked && spike_at(i) ? 0 : 1;
    node(g, "MatMul", x, w, y);
}

typedef enum shape { SUM, MASKED_SUM } shape;

/* SUM: y = sum(x), the spike is part of the answer. MASKED_SUM: the sum
 * leaves the spikes out. */
static q8_graph *make(shape sh) {
    q8_graph *g = q8_graph_new();
    input(g, "x");
    sum(g, "x", "y", sh == MASKED_SUM);
    output(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    return g;
}

/* values in [-1, 1], a spike of +-20 in every second sample */
static void write_samples(const char *dir, uint64_t seed) {
    q8t_rng r = q8t_seed(seed);
    static float x[N];
    int64_t d[2] = {1, N};
    for (int i = 0; i < S; i++) {
        q8t_fill(&r, x, N, -1, 1);
        if (i % 2 == 0) x[(i * 997) % N] = i % 4 ? -20.0f : 20.0f;
        char p[256];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 2, x, NULL), Q8_OK);
    }
}

typedef struct builder {
    shape sh;
    const q8_graph *gcal;
} builder;

/* What convert.c's builder does: the graph again, rewritten at thr. */
static q8_status build(void *arg, const float *thr, q8_graph **out, q8_error *err) {
    const builder *b = arg;
    q8_graph *g = make(b->sh);
    q8_calibration from = {.n_tensors = b->gcal->n_tensors, .threshold = (float *)thr}, cal;
    Q8_TRY(q8_calibration_by_name(&from, b->gcal, g, &cal, err));
    q8_meta meta = {0};
    q8_quant_options qo = {0};
    q8_status st = q8_quantize_graph(g, &cal, &qo, &meta, err);
    q8_meta_free(&meta);
    q8_calibration_free(&cal);
    *out = g;
    return st;
}

/* Calibrate graph sh (*gout) with auto on 8 samples. */
static void choose(shape sh, q8_calibration *cal, q8_graph **gout) {
    char *dir = q8t_tmpdir("choose");
    q8_graph *g = make(sh);
    write_samples(dir, 5);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    builder b = {.sh = sh, .gcal = g};
    q8_calib_options co = {.method = Q8_CALIB_AUTO, .percentile = 99.99, .n_threads = 1,
                           .build = build, .build_arg = &b};
    cr_assert_eq(q8_calibrate(g, &s, &co, cal, &err), Q8_OK, "%s", err.msg);
    q8_samples_free(&s);
    q8t_rm_rf(dir);
    free(dir);
    *gout = g;
}

static float thr(const q8_graph *g, const q8_calibration *c, const char *name) {
    int t = q8_graph_find(g, name);
    cr_assert(t >= 0, "no tensor %s", name);
    return c->threshold[t];
}

Test(calib_choose, keeps_the_spike_when_the_output_needs_it) {
    q8_calibration c;
    q8_graph *g;
    choose(SUM, &c, &g);
    cr_assert_eq(c.chosen, Q8_CALIB_MSE, "chose %d (percentile %.1f dB, mse %.1f dB)", c.chosen,
                 c.score_db[0], c.score_db[1]);
    cr_assert(c.score_db[1] > c.score_db[0] + 3, "%.1f vs %.1f", c.score_db[1], c.score_db[0]);
    cr_assert(thr(g, &c, "x") > 15, "x range %g", thr(g, &c, "x"));
    cr_assert(c.n_scored == S, "%d", c.n_scored);
    q8_calibration_free(&c);
    q8_graph_free(g);
}

Test(calib_choose, clips_the_spike_when_the_output_ignores_it) {
    q8_calibration c;
    q8_graph *g;
    choose(MASKED_SUM, &c, &g);
    cr_assert_eq(c.chosen, Q8_CALIB_PERCENTILE, "chose %d (percentile %.1f dB, mse %.1f dB)",
                 c.chosen, c.score_db[0], c.score_db[1]);
    cr_assert(c.score_db[0] > c.score_db[1] + 3, "%.1f vs %.1f", c.score_db[0], c.score_db[1]);
    cr_assert(thr(g, &c, "x") < 2, "x range %g", thr(g, &c, "x"));
    q8_calibration_free(&c);
    q8_graph_free(g);
}

Test(calib_choose, refuses_auto_without_a_builder) {
    char *dir = q8t_tmpdir("choose");
    write_samples(dir, 5);
    q8_graph *g = make(SUM);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_AUTO, .percentile = 99.99, .n_threads = 1};
    q8_calibration c;
    cr_assert_neq(q8_calibrate(g, &s, &co, &c, &err), Q8_OK);
    cr_assert(strstr(err.msg, "builder"), "%s", err.msg);
    q8_samples_free(&s);
    q8t_rm_rf(dir);
    free(dir);
    q8_graph_free(g);
}

/* A wide output (a recognizer's 40 x 6625 scores, 64 samples) is not kept
 * per sample: the FP32 session runs again for each candidate. The scores
 * must be the same either way. */
Test(calib_choose, scores_are_the_same_with_outputs_kept_or_made_again) {
    char *dir = q8t_tmpdir("choose");
    write_samples(dir, 7);
    q8_graph *g = make(SUM);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    float *t = calloc((size_t)g->n_tensors, sizeof(float));
    cr_assert(t);
    t[q8_graph_find(g, "x")] = 1.5f;
    t[q8_graph_find(g, "y")] = 40.0f;
    builder b = {.sh = SUM, .gcal = g};
    double db[2];
    for (int k = 0; k < 2; k++) {
        q8_out_eval e;
        q8_out_eval_refs mode = k ? Q8_OUT_EVAL_REFS_RERUN : Q8_OUT_EVAL_REFS_KEEP;
        cr_assert_eq(q8_out_eval_open(g, &s, NULL, S, 1, mode, &e, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(e.ref == NULL, k, "outputs kept only when asked");
        cr_assert_eq(e.fp32 != NULL, k, "the session kept only when asked");
        q8_graph *q = NULL;
        cr_assert_eq(build(&b, t, &q, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_out_eval_score(&e, q, &db[k], &err), Q8_OK, "%s", err.msg);
        q8_out_eval_close(&e);
    }
    cr_assert(isfinite(db[0]) && db[0] > 0, "%g dB", db[0]);
    cr_assert(db[0] == db[1], "kept %.17g dB, made again %.17g dB", db[0], db[1]);
    free(t);
    q8_samples_free(&s);
    q8_graph_free(g);
    q8t_rm_rf(dir);
    free(dir);
}
