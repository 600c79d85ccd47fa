/* quantize --equalize (src/quant/equalize.c): a Conv whose two output
 * channels span ranges ~200x apart feeds a depthwise Conv that weighs both
 * alike. Per-tensor INT8 of the tensor between them leaves the small
 * channel a level or two; equalized, the same FP32 function quantizes
 * well. */
#include <math.h>
#include <string.h>

#include "calibrate.h"
#include "equalize.h"
#include "model.h"
#include "npy.h"
#include "passes.h"
#include "quantize.h"
#include "report.h"
#include "testutil.h"

#define T q8t_tensor
#define S 6

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

/* out = the 2-channel 3x3 depthwise Conv (pads 1) of in with weights w. */
static void depthwise(q8_graph *g, const char *in, const char *w, const char *out) {
    q8_node *d = node(g, "Conv", 2, (const char *[]){in, w}, out);
    q8_node_set_attr(d, "group", Q8_ATTR_INT)->i = 2;
    q8_attr *a = q8_node_set_attr(d, "pads", Q8_ATTR_INTS);
    a->n = 4;
    a->ints = malloc(4 * sizeof(int64_t));
    for (int i = 0; i < 4; i++) a->ints[i] = 1;
}

static void output(q8_graph *g, const char *name) {
    g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
    g->outputs[g->n_outputs++] = T(g, name);
}

typedef enum shape { PLAIN, RELU, LEAKY, CLIP6, SHARED, HSWISH, HSWISH_CLIP, HSWISH_EVEN, HSWISH_RES, HSWISH_TWO_D } shape;

/* x[1,2,6,6] -> Conv P 1x1 (+bias) -> y [-> activation -> r] -> depthwise
 * 3x3 D -> z. The passes fuse the activation into P. SHARED: y is a graph
 * output too (read twice: not equalized). */
static q8_graph *make(shape sh) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {1, 2, 6, 6}, pd[4] = {2, 2, 1, 1}, bd[1] = {2}, dd[4] = {2, 1, 3, 3};
    int x = T(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    if (sh == HSWISH_EVEN) /* channel ranges within 2x: nothing to gain */
        weight(g, "pw", 4, pd, (const float[]){20, -12, 14, 9});
    else
        weight(g, "pw", 4, pd, (const float[]){20, -12, 0.06f, 0.09f});
    weight(g, "pb", 1, bd, (const float[]){1, 0.02f});
    float dw[18];
    for (int i = 0; i < 9; i++) {
        dw[i] = 0.01f * (float)(i % 3 - 1) + 0.005f;  /* channel 0: large input, small taps */
        dw[9 + i] = 2.0f * (float)(i % 4) - 3.0f;     /* channel 1: the other way round */
    }
    weight(g, "dw", 4, dd, dw);
    node(g, "Conv", 3, (const char *[]){"x", "pw", "pb"}, "y");
    const char *into_d = "y";
    if (sh == RELU || sh == LEAKY) {
        node(g, sh == RELU ? "Relu" : "LeakyRelu", 1, (const char *[]){"y"}, "r");
        into_d = "r";
    } else if (sh == CLIP6) {
        int64_t one[1] = {1};
        weight(g, "lo", 1, one, (const float[]){0});
        weight(g, "hi", 1, one, (const float[]){6});
        node(g, "Clip", 3, (const char *[]){"y", "lo", "hi"}, "r");
        into_d = "r";
    } else if (sh == HSWISH || sh == HSWISH_EVEN || sh == HSWISH_RES || sh == HSWISH_TWO_D) {
        node(g, "HardSwish", 1, (const char *[]){"y"}, "r");
        into_d = "r";
    } else if (sh == HSWISH_CLIP) { /* two activations, the second with bounds */
        int64_t one[1] = {1};
        weight(g, "lo", 1, one, (const float[]){-0.2f});
        weight(g, "hi", 1, one, (const float[]){30.0f});
        node(g, "HardSwish", 1, (const char *[]){"y"}, "r0");
        node(g, "Clip", 3, (const char *[]){"r0", "lo", "hi"}, "r");
        into_d = "r";
    }
    depthwise(g, into_d, "dw", "z");
    if (sh == HSWISH_RES) { /* r is read by a residual sum too */
        node(g, "Add", 2, (const char *[]){"z", "r"}, "o");
        output(g, "o");
    } else if (sh == HSWISH_TWO_D) { /* and by a second depthwise conv */
        weight(g, "dw2", 4, dd, dw);
        depthwise(g, into_d, "dw2", "z2");
        node(g, "Add", 2, (const char *[]){"z", "z2"}, "o");
        output(g, "o");
    } else {
        output(g, "z");
    }
    if (sh == SHARED) output(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    return g;
}

static float xs[S][72];

static void fill_samples(void) {
    q8t_rng r = q8t_seed(3);
    for (int i = 0; i < S; i++) q8t_fill(&r, xs[i], 72, -1, 1);
}

static char *write_samples(void) {
    char *dir = q8t_tmpdir("equalize");
    int64_t d[4] = {1, 2, 6, 6};
    fill_samples();
    for (int i = 0; i < S; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 4, xs[i], NULL), Q8_OK);
    }
    return dir;
}

/* Equalize g (when eq) on the samples, then calibrate (minmax) and
 * quantize it, the layer named fp32 (if any) kept FP32; returns the
 * equalized pairs recorded in meta. */
static int64_t prepare_full(q8_graph *g, bool eq, bool through, bool quantize,
                            const char *fp32) {
    char *dir = write_samples();
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_meta meta = {0};
    if (eq) cr_assert_eq(q8_equalize(g, through, &s, 1, &meta, &err), Q8_OK, "%s", err.msg);
    if (quantize) {
        q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 1};
        q8_calibration cal;
        cr_assert_eq(q8_calibrate(g, &s, &co, &cal, &err), Q8_OK, "%s", err.msg);
        const char *names[1] = {fp32};
        q8_quant_options qo = {.fp32_layers = names, .n_fp32_layers = fp32 ? 1 : 0};
        cr_assert_eq(q8_quantize_graph(g, &cal, &qo, &meta, &err), Q8_OK, "%s", err.msg);
        q8_calibration_free(&cal);
    }
    const q8_meta_entry *e = q8_meta_get(&meta, "equalize.pairs");
    int64_t pairs = e ? e->i : -1;
    q8_meta_free(&meta);
    q8_samples_free(&s);
    q8t_rm_rf(dir);
    free(dir);
    return pairs;
}

static int64_t prepare_with(q8_graph *g, bool eq, bool through, bool quantize) {
    return prepare_full(g, eq, through, quantize, NULL);
}

static int64_t prepare(q8_graph *g, bool eq, bool quantize) {
    return prepare_with(g, eq, true, quantize);
}

/* Output z of g (consumed) on every sample, into z[S][72]. */
static void run_all(q8_graph *g, float z[S][72]) {
    int64_t d[4] = {1, 2, 6, 6};
    q8t_run_each(g, d, 4, &xs[0][0], 72, S, &z[0][0], 72);
}

static double sqnr_db(float a[S][72], float b[S][72]) {
    double sig = 0, noise = 0;
    for (int i = 0; i < S; i++)
        for (int j = 0; j < 72; j++) {
            sig += (double)a[i][j] * a[i][j];
            noise += ((double)b[i][j] - a[i][j]) * ((double)b[i][j] - a[i][j]);
        }
    return 10 * log10(sig / noise);
}

/* The FP32 output of shape sh's graph on every sample before (ref) and
 * after (got) equalization, which must take one pair. */
static void fp32_before_after(shape sh, float ref[S][72], float got[S][72]) {
    fill_samples();
    run_all(make(sh), ref);
    q8_graph *g = make(sh);
    cr_assert_eq(prepare(g, true, false), 1);
    run_all(g, got);
}

/* The q8.QLut nodes of g: how many, and the distinct tables of the last
 * one (1 for one [256] table; else [K, 256] and a channel index). */
static int luts(const q8_graph *g, int64_t *tables) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->op_type, "QLut")) {
            const q8_node *q = g->nodes[i];
            const q8_tensor *t = q8_in(g, q, 1);
            *tables = t->ndim == 2 ? t->dims[0] : 1;
            cr_assert_eq(q->n_inputs, *tables > 1 ? 3 : 2, "an index with several tables");
            n++;
        }
    return n;
}

static void equalizes(shape sh) {
    static float ref[S][72], same[S][72], plain[S][72], eq[S][72];
    fill_samples();
    run_all(make(sh), ref);
    q8_graph *g = make(sh);
    cr_assert_eq(prepare(g, true, false), 1, "one Conv -> depthwise pair");
    run_all(g, same);
    for (int i = 0; i < S; i++) q8t_assert_close(same[i], ref[i], 72, 1e-4f, 1e-4f, "FP32 z");
    g = make(sh);
    prepare(g, false, true);
    run_all(g, plain);
    g = make(sh);
    prepare(g, true, true);
    run_all(g, eq);
    double d_plain = sqnr_db(ref, plain), d_eq = sqnr_db(ref, eq);
    /* with the residual sum the output carries r's own error too */
    double gain = sh == HSWISH_RES ? 6 : 10;
    cr_assert(d_eq > d_plain + gain, "INT8 output SQNR: equalized %.1f dB, not %.1f dB", d_eq,
              d_plain);
}

Test(equalize, conv_into_depthwise) { equalizes(PLAIN); }

Test(equalize, through_a_relu) { equalizes(RELU); }

Test(equalize, through_a_leaky_relu) { equalizes(LEAKY); }

/* Clip(0, 6) of a scaled channel is not the scaled Clip: P's fused Clip
 * keeps the pair as it is */
Test(equalize, not_through_a_clip) {
    static float ref[S][72], got[S][72];
    fill_samples();
    run_all(make(CLIP6), ref);
    q8_graph *g = make(CLIP6);
    cr_assert_eq(prepare(g, true, false), 0, "Clip(0, 6) between: left alone");
    run_all(g, got);
    for (int i = 0; i < S; i++) q8t_assert_close(got[i], ref[i], 72, 1e-6f, 1e-6f, "FP32 z");
}

Test(equalize, not_a_tensor_read_twice) {
    q8_graph *g = make(SHARED);
    int t = q8_graph_find(g, "pw");
    cr_assert(t >= 0);
    float before[4];
    memcpy(before, g->tensors[t]->data, sizeof before);
    cr_assert_eq(prepare(g, true, false), 0, "y is a graph output too: left alone");
    cr_assert_eq(memcmp(before, g->tensors[t]->data, sizeof before), 0);
    q8_graph_free(g);
}

/* The model imported again (auto's candidates, --input-shape) takes the
 * equalized weights by name: the same FP32 function, the same weights. */
Test(equalize, copy_to_a_fresh_import) {
    q8_graph *g = make(PLAIN), *again = make(PLAIN);
    cr_assert_eq(prepare(g, true, false), 1);
    q8_error err = {0};
    cr_assert_eq(q8_equalize_copy(again, g, true, &err), Q8_OK, "%s", err.msg);
    const char *names[3] = {"pw", "pb", "dw"};
    for (int k = 0; k < 3; k++) {
        const q8_tensor *a = g->tensors[q8_graph_find(g, names[k])];
        const q8_tensor *b = again->tensors[q8_graph_find(again, names[k])];
        cr_assert_eq(memcmp(a->data, b->data, sizeof(float) * (size_t)q8_tensor_numel(a)), 0,
                     "%s", names[k]);
    }
    const q8_tensor *pw = again->tensors[q8_graph_find(again, "pw")];
    cr_assert_float_eq(((const float *)pw->data)[0], 20.0f, 1e-6, "the large channel stays");
    cr_assert(((const float *)pw->data)[2] > 1.0f, "the small channel is scaled up");
    q8_graph_free(g);
    q8_graph_free(again);
}

/* The SQNR alone of the layer named `node` in r. */
static double alone_db(const q8_report_model *r, const char *node) {
    for (int i = 0; i < r->n_layers; i++)
        if (!strcmp(r->layers[i].node, node)) return q8_err_sqnr_db(&r->layers[i].alone);
    cr_assert_fail("no layer %s in the report", node);
    return NAN;
}

/* q8report (and the --min-sqnr search that ranks by it) compares each layer
 * with the FP32 model. P's output was divided by s per channel: compared
 * as it is, P showed as badly damaged (ppocr_rec's stem: -15.5 dB) and D,
 * fed FP32's unscaled values, too. The report recovers s from D's weights. */
static void report_sees_through_shape(shape sh, bool with_meta) {
    fill_samples();
    q8_graph *g = make(sh);
    cr_assert_eq(prepare(g, true, true), 1);
    q8_error err = {0};
    q8_model *mf = NULL, *mq = NULL;
    cr_assert_eq(q8_model_from_graph(make(sh), "fp32", &mf, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_model_from_graph(g, "int8", &mq, &err), Q8_OK, "%s", err.msg);
    if (with_meta) cr_assert_eq(q8_meta_set_int(&mq->meta, "equalize.pairs", 1, &err), Q8_OK);
    char *dir = write_samples();
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, mf->g, &s, &err), Q8_OK, "%s", err.msg);
    q8_report_model out[2] = {{0}};
    q8_compare_options co = {.per_layer = true, .n_threads = 1};
    const q8_model *qs[1] = {mq};
    cr_assert_eq(q8_report_compare(mf, qs, 1, &s, &co, out, &err), Q8_OK, "%s", err.msg);
    double p = alone_db(&out[1], "y"), d = alone_db(&out[1], "z");
    if (sh == HSWISH) {
        /* the toy's small channel spans 1/360 of the large one: with factors
         * no smaller than 1/8, D's own input rounding stays large (its row
         * is right, and low); P and the table compare in the right scale */
        double t = alone_db(&out[1], "r_eq_mul");
        cr_assert(p > 30 && t > 30, "SQNR alone: P %.1f dB, the table %.1f dB", p, t);
    } else if (with_meta) {
        cr_assert(p > 30 && d > 30, "SQNR alone: P %.1f dB, D %.1f dB (INT8 of balanced "
                  "channels keeps > 30 dB)", p, d);
    } else { /* a file without the record: compared as it is (the rescaling shows) */
        cr_assert(p < 10, "P alone %.1f dB: the factors are applied only to equalized files", p);
    }
    q8_report_model_free(&out[0]);
    q8_report_model_free(&out[1]);
    q8_samples_free(&s);
    q8t_rm_rf(dir);
    free(dir);
    q8_model_free(mq);
    q8_model_free(mf);
}

static void report_sees_through(bool with_meta) { report_sees_through_shape(PLAIN, with_meta); }

Test(equalize, report_compares_in_the_equalized_scale) { report_sees_through(true); }

/* Through an activation: P's output (y_eq) and the depthwise input (r_eq)
 * are new tensors, compared with FP32's y and r once their factors are
 * recovered (P's weights, D's weights); without the factors neither had a
 * row. */
Test(equalize, report_compares_through_an_activation) { report_sees_through_shape(HSWISH, true); }

Test(equalize, report_without_the_record_compares_as_is) { report_sees_through(false); }

/* HardSwish does not commute with a scale: the pair is rescaled around it
 * (P / u, Mul by u, HardSwish, Mul by 1 / v, D * v), the same FP32
 * function; in INT8 the Muls and the activation are one table per channel
 * and both int8 tensors use their range in every channel. --equalize relu
 * leaves the pair alone. */
Test(equalize, through_a_hardswish) {
    equalizes(HSWISH);
    /* the factors are powers of two: the FP32 function is the same bits */
    static float ref[S][72], same[S][72];
    fp32_before_after(HSWISH, ref, same);
    cr_assert(memcmp(ref, same, sizeof ref) == 0, "equalized FP32: the same bits");
    q8_graph *g = make(HSWISH);
    cr_assert_eq(prepare(g, true, true), 1);
    int64_t ch = 0;
    cr_assert_eq(luts(g, &ch), 1, "Mul, HardSwish, Mul: one table");
    cr_assert_eq(ch, 2, "a table per channel (the two differ)");
    q8_graph_free(g);
    g = make(HSWISH);
    cr_assert_eq(prepare_with(g, true, false, true), 0, "--equalize relu: not paired");
    cr_assert_eq(luts(g, &ch), 1);
    cr_assert_eq(ch, 1, "the HardSwish's one table");
    q8_graph_free(g);
}

Test(equalize, through_a_hardswish_and_a_clip) { equalizes(HSWISH_CLIP); }

/* The depthwise conv of a through pair kept FP32 (--fp32-layers, or the
 * --min-sqnr search's fallback): the Muls and the activation between stay
 * float too, from P's equalized int8 output. As tables they would write the
 * activation's input at one int8 scale for both channels (the rounding the
 * pair is rescaled to avoid) and feed that to the float D: on CenterNet
 * such a fallback lowered the output SQNR from 5.7 to 2.8 dB. Here the
 * output must be at least as close to FP32 as with D in INT8. */
Test(equalize, through_pair_with_its_depthwise_conv_kept_fp32) {
    static float ref[S][72], all8[S][72], keep[S][72];
    fill_samples();
    run_all(make(HSWISH), ref);
    q8_graph *g = make(HSWISH);
    prepare(g, true, true);
    run_all(g, all8);
    g = make(HSWISH);
    prepare_full(g, true, true, true, "z");
    int64_t ch = 0;
    cr_assert_eq(luts(g, &ch), 0, "no table before the float depthwise conv");
    run_all(g, keep);
    double d8 = sqnr_db(ref, all8), dk = sqnr_db(ref, keep);
    cr_assert(dk >= d8, "D in FP32: output SQNR %.1f dB, below all-INT8's %.1f dB", dk, d8);
}

/* A fresh import gets the same nodes and weights: the same FP32 outputs and
 * the same tables. */
Test(equalize, through_copies_to_a_fresh_import) {
    static float ref[S][72], got[S][72];
    fill_samples();
    q8_graph *g = make(HSWISH), *again = make(HSWISH);
    cr_assert_eq(prepare(g, true, false), 1);
    run_all(g, ref);
    g = make(HSWISH);
    cr_assert_eq(prepare(g, true, false), 1);
    q8_error err = {0};
    cr_assert_eq(q8_equalize_copy(again, g, true, &err), Q8_OK, "%s", err.msg);
    cr_assert(q8_graph_find(again, "y_eq_scale") >= 0 && q8_graph_find(again, "r_eq_scale") >= 0);
    run_all(again, got);
    for (int i = 0; i < S; i++) q8t_assert_close(got[i], ref[i], 72, 0, 0, "same FP32 z");
    q8_graph_free(g);
}

/* Channels whose ranges are within 2x gain less than 2 bits: the pair is
 * left as it is (its tables would cost bytes for nothing). */
Test(equalize, through_only_where_it_gains) {
    q8_graph *g = make(HSWISH_EVEN);
    int nodes = g->n_nodes;
    cr_assert_eq(prepare(g, true, false), 0);
    cr_assert_eq(g->n_nodes, nodes, "no scale nodes added");
    q8_graph_free(g);
}

/* Through an activation whose output a residual sum reads too: the sum
 * keeps reading it as it was, the depthwise conv reads a rescaled copy made
 * from the table's source (two tables, both per channel). */
Test(equalize, through_with_a_residual_reader) {
    equalizes(HSWISH_RES);
    q8_graph *g = make(HSWISH_RES);
    cr_assert_eq(prepare(g, true, true), 1);
    int64_t k = 0;
    cr_assert_eq(luts(g, &k), 2, "the activation for the sum, its rescaled copy for D");
    q8_graph_free(g);
}

/* Two depthwise convs reading one activation: P is rescaled for the first
 * (one pair), the second reads the activation as it is; the same FP32
 * function. */
Test(equalize, two_depthwise_readers) {
    static float ref[S][72], got[S][72];
    fp32_before_after(HSWISH_TWO_D, ref, got);
    for (int i = 0; i < S; i++) q8t_assert_close(got[i], ref[i], 72, 1e-5f, 1e-5f, "FP32 o");
}
