/* Q8_SCALAR_TABLES_AUTO (src/quant/tables_choose.c): scalar ops between
 * INT8 layers run as tables when that costs the output little, and stay
 * FP32 when the extra rounding (at the first layer's output, before the
 * chain) costs more than Q8_TABLES_MAX_LOSS_DB. The same chooser decides
 * Q8_INT8_PRELU_AUTO at fixed ranges (q8.QPRelu). */
#include <math.h>
#include <string.h>

#include "calibrate.h"
#include "npy.h"
#include "passes.h"
#include "quantize.h"
#include "tables_choose.h"
#include "testutil.h"

#define T q8t_tensor
#define S 8

static void node(q8_graph *g, const char *op, const char *in0, const char *in1, const char *out) {
    int ii[2] = {T(g, in0), in1 ? T(g, in1) : -1}, oo = T(g, out);
    int k = q8_graph_add_node(g, out, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, in1 ? 2 : 1, &oo, 1, NULL), Q8_OK);
}

static void constant(q8_graph *g, const char *name, int nd, const int64_t *d, float lo, float hi,
                     q8t_rng *r) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, d, nd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    q8t_fill(r, g->tensors[t]->data, q8_tensor_numel(g->tensors[t]), lo, hi);
}

typedef enum chain { AFFINE, STEEP, PRELU } chain;

/* x[1,8,8,8] -> 1x1 conv -> ... -> 1x1 conv -> y. AFFINE: 0.75 * c1 - 2
 * between the convs (the table's extra rounding, at c1's step times 0.75,
 * is small against the step of its output, whose range the shift widens);
 * STEEP:
 * Tanh(40 * c1) (the table rounds c1 first, where a step is worth 0.3 of
 * tanh's argument); PRELU: PRelu with a slope per channel. */
static q8_graph *make(chain ch) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(4);
    int64_t xd[4] = {1, 8, 8, 8}, wd[4] = {8, 8, 1, 1};
    int x = T(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    constant(g, "w1", 4, wd, -0.5f, 0.5f, &r);
    constant(g, "w2", 4, wd, -0.5f, 0.5f, &r);
    constant(g, "k", 0, NULL, ch == STEEP ? 40.0f : 0.75f, ch == STEEP ? 40.0f : 0.75f, &r);
    constant(g, "shift", 0, NULL, 2.0f, 2.0f, &r);
    node(g, "Conv", "x", "w1", "c1");
    node(g, "Mul", "c1", "k", "m");
    int64_t sd[3] = {8, 1, 1};
    constant(g, "slope", 3, sd, -0.5f, 0.5f, &r);
    if (ch == STEEP) node(g, "Tanh", "m", NULL, "a");
    else if (ch == PRELU) node(g, "PRelu", "c1", "slope", "a");
    else node(g, "Sub", "m", "shift", "a");
    node(g, "Conv", "a", "w2", "y");
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    return g;
}

typedef struct builder {
    chain ch;
    const q8_graph *gcal;
    const float *thr;
} builder;

/* What convert.c's builder does: the graph again, rewritten at thr. */
static q8_status build(void *arg, bool on, q8_graph **out, q8_error *err) {
    const builder *b = arg;
    q8_graph *g = make(b->ch);
    q8_calibration from = {.n_tensors = b->gcal->n_tensors, .threshold = (float *)b->thr}, cal;
    Q8_TRY(q8_calibration_by_name(&from, b->gcal, g, &cal, err));
    q8_meta meta = {0};
    bool prelu = b->ch == PRELU;
    q8_quant_options qo = {
        .scalar_tables = on && !prelu ? Q8_SCALAR_TABLES_ON : Q8_SCALAR_TABLES_OFF,
        .int8_prelu = on && prelu ? Q8_INT8_PRELU_ON : Q8_INT8_PRELU_OFF};
    q8_status st = q8_quantize_graph(g, &cal, &qo, &meta, err);
    q8_meta_free(&meta);
    q8_calibration_free(&cal);
    *out = g;
    return st;
}

static q8_tables_choice choose(chain ch) {
    char *dir = q8t_tmpdir("tables");
    q8t_rng r = q8t_seed(7);
    int64_t d[4] = {1, 8, 8, 8};
    float x[512];
    for (int i = 0; i < S; i++) {
        q8t_fill(&r, x, 512, -1, 1);
        char p[256];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 4, x, NULL), Q8_OK);
    }
    q8_graph *g = make(ch);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 1};
    q8_calibration cal;
    cr_assert_eq(q8_calibrate(g, &s, &co, &cal, &err), Q8_OK, "%s", err.msg);
    builder b = {.ch = ch, .gcal = g, .thr = cal.threshold};
    q8_tables_choice tc;
    cr_assert_eq(q8_tables_choose(g, &s, S, 1, build, &b, ch == PRELU ? "QPRelu" : "QLut",
                                  ch == PRELU ? 0.0 : Q8_TABLES_MAX_LOSS_DB, &tc, &err),
                 Q8_OK, "%s", err.msg);
    q8_calibration_free(&cal);
    q8_samples_free(&s);
    q8_graph_free(g);
    q8t_rm_rf(dir);
    free(dir);
    return tc;
}

Test(tables_choose, takes_the_tables_when_they_cost_little) {
    q8_tables_choice tc = choose(AFFINE);
    cr_assert(tc.differ);
    cr_assert_eq(tc.n_scored, S);
    cr_assert(tc.on, "off %.1f dB, on %.1f dB", tc.db[0], tc.db[1]);
    cr_assert(tc.db[1] > 25 && tc.db[1] >= tc.db[0] - Q8_TABLES_MAX_LOSS_DB, "off %.1f, on %.1f",
              tc.db[0], tc.db[1]);
}

Test(tables_choose, keeps_fp32_when_the_tables_cost_accuracy) {
    q8_tables_choice tc = choose(STEEP);
    cr_assert(tc.differ);
    cr_assert(!tc.on, "off %.1f dB, on %.1f dB", tc.db[0], tc.db[1]);
    cr_assert(tc.db[0] > tc.db[1] + Q8_TABLES_MAX_LOSS_DB, "off %.1f, on %.1f", tc.db[0],
              tc.db[1]);
}

/* PRelu: the two forms differ (q8.QPRelu, its conv writing int8) and are
 * both scored; "on" only where it loses nothing. */
Test(tables_choose, int8_prelu_is_scored_and_taken_without_loss) {
    q8_tables_choice tc = choose(PRELU);
    cr_assert(tc.differ);
    cr_assert_eq(tc.n_scored, S);
    cr_assert(tc.db[0] > 25 && tc.db[1] > 25, "off %.1f, on %.1f", tc.db[0], tc.db[1]);
    cr_assert_eq(tc.on, tc.db[1] >= tc.db[0], "off %.1f, on %.1f", tc.db[0], tc.db[1]);
}
