/* INT32 biases of channels whose weights are tiny beside the bias
 * (src/quant/rewrite.c fit_bias_scales): BatchNorm folding leaves such
 * "dead" channels in real models (PoseNet's MobileNetV1: weights 1e-13,
 * bias -1.6). At the weight scale the weights alone ask for, the bias
 * needs ~1e16 in the accumulator: clamped to INT32, the channel that FP32
 * holds at act(bias) came out wrong. The channel's weight scale is raised
 * until the bias fits; the other channels keep theirs. */
#include <math.h>
#include <string.h>

#include "calibrate.h"
#include "model.h"
#include "npy.h"
#include "passes.h"
#include "quantize.h"
#include "testutil.h"

#define T q8t_tensor
#define S 6
#define C 4
#define HW 25

static void weight(q8_graph *g, const char *name, int nd, const int64_t *dims, const float *v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, nd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, sizeof(float) * (size_t)q8_tensor_numel(g->tensors[t]));
}

static q8_node *node(q8_graph *g, const char *op, int n_in, const char **in, const char *out) {
    int ii[4], oo = T(g, out);
    for (int i = 0; i < n_in; i++) ii[i] = T(g, in[i]);
    int k = q8_graph_add_node(g, out, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, n_in, &oo, 1, NULL), Q8_OK);
    return g->nodes[k];
}

/* x[1,2,5,5] -> Conv 1x1 (4 channels, bias) -> Relu -> y. Channel 0: plain
 * weights; 1: dead, bias +1.5 (FP32: 1.5 everywhere); 2: dead, bias -1.6
 * (FP32: 0); 3: plain, small. */
static q8_graph *make(void) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {1, 2, 5, 5}, wd[4] = {C, 2, 1, 1}, bd[1] = {C};
    int x = T(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    weight(g, "w", 4, wd, (const float[]){1.0f, -0.5f, 3e-13f, -1e-13f, 2e-13f, 1e-13f, 0.2f, 0.3f});
    weight(g, "b", 1, bd, (const float[]){0.5f, 1.5f, -1.6f, 0.1f});
    node(g, "Conv", 3, (const char *[]){"x", "w", "b"}, "c");
    node(g, "Relu", 1, (const char *[]){"c"}, "y");
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    return g;
}

static float xs[S][2 * HW];

static char *write_samples(void) {
    q8t_rng r = q8t_seed(11);
    for (int i = 0; i < S; i++) q8t_fill(&r, xs[i], 2 * HW, -1, 1);
    char *dir = q8t_tmpdir("bias_fit");
    int64_t d[4] = {1, 2, 5, 5};
    for (int i = 0; i < S; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 4, xs[i], NULL), Q8_OK);
    }
    return dir;
}

static void run_all(q8_graph *g, float y[S][C * HW]) {
    int64_t d[4] = {1, 2, 5, 5};
    q8t_run_each(g, d, 4, &xs[0][0], 2 * HW, S, &y[0][0], C * HW);
}

Test(bias_fit, dead_channels_keep_their_bias) {
    static float ref[S][C * HW], got[S][C * HW];
    char *dir = write_samples();
    run_all(make(), ref);
    q8_graph *g = make();
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 1};
    q8_calibration cal;
    cr_assert_eq(q8_calibrate(g, &s, &co, &cal, &err), Q8_OK, "%s", err.msg);
    q8_quant_options qo = {0};
    q8_meta meta = {0};
    cr_assert_eq(q8_quantize_graph(g, &cal, &qo, &meta, &err), Q8_OK, "%s", err.msg);
    q8_calibration_free(&cal);
    q8_meta_free(&meta);
    q8_samples_free(&s);
    /* the INT8 weights: the dead channels' scales raised, the others as
     * max |w| / 127 gives them */
    const q8_tensor *wq = NULL;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t]->dtype == Q8_I8 && g->tensors[t]->data && g->tensors[t]->q.n == C)
            wq = g->tensors[t];
    cr_assert(wq, "no INT8 weight tensor");
    cr_assert(wq->q.scale[1] > 1e-9f && wq->q.scale[2] > 1e-9f, "dead channels: %g %g",
              (double)wq->q.scale[1], (double)wq->q.scale[2]);
    cr_assert_float_eq(wq->q.scale[0], q8_weight_scale(1.0f), 1e-12, "channel 0 as before");
    cr_assert_float_eq(wq->q.scale[3], q8_weight_scale(0.3f), 1e-12, "channel 3 as before");
    run_all(g, got);
    float step = 0;   /* the output's INT8 step: its range over 127 */
    for (int i = 0; i < S; i++)
        for (int j = 0; j < C * HW; j++) step = fmaxf(step, ref[i][j] / 127.0f);
    for (int i = 0; i < S; i++)
        for (int j = 0; j < C * HW; j++) {
            int ch = j / HW;
            if (ch == 2)
                cr_assert_eq(got[i][j], 0.0f, "dead channel with a negative bias: %g at %d",
                             (double)got[i][j], j);
            else
                cr_assert(fabsf(got[i][j] - ref[i][j]) <= 1.5f * step,
                          "channel %d: %g, FP32 %g (step %g)", ch, (double)got[i][j],
                          (double)ref[i][j], (double)step);
        }
    q8t_rm_rf(dir);
    free(dir);
}
