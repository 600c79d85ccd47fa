/* The quantizer on small hand-built graphs: which nodes become INT8, where
 * the quantize/dequantize boundaries go, shared scales, table activations,
 * --fp32-layers, degenerate weights, and the pruning patterns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "model.h"
#include "npy.h"
#include "passes.h"
#include "quantize.h"
#include "scale16.h"
#include "testutil.h"

#define T q8t_tensor

static void weight(q8_graph *g, const char *name, int nd, const int64_t *dims, q8t_rng *r) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, nd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    q8t_fill(r, g->tensors[t]->data, q8_tensor_numel(g->tensors[t]), -0.5f, 0.5f);
}

static q8_node *node(q8_graph *g, const char *name, const char *op, int n_in, const char **in,
                     const char *out) {
    int ii[8], oo = T(g, out);
    for (int i = 0; i < n_in; i++) ii[i] = T(g, in[i]);
    int k = q8_graph_add_node(g, name, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, n_in, &oo, 1, NULL), Q8_OK);
    return g->nodes[k];
}

static void pads1(q8_node *n) {
    q8_attr *a = q8_node_set_attr(n, "pads", Q8_ATTR_INTS);
    a->n = 4;
    a->ints = malloc(4 * sizeof(int64_t));
    for (int i = 0; i < 4; i++) a->ints[i] = 1;
}

/* g's one input: x [1,3,8,8] (the samples' shape) */
static void input_x(q8_graph *g) {
    int x = T(g, "x");
    int64_t xd[4] = {1, 3, 8, 8};
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
}

static const int64_t k_w2[4] = {8, 8, 3, 3};

/* A graph with input x[1,3,8,8] and two conv weights from r, w1 [8,3,3,3]
 * and w2 [8,8,3,3]. */
static q8_graph *x_and_two_weights(q8t_rng *r) {
    q8_graph *g = q8_graph_new();
    int64_t w1[4] = {8, 3, 3, 3};
    input_x(g);
    weight(g, "w1", 4, w1, r);
    weight(g, "w2", 4, k_w2, r);
    return g;
}

/* x[1,3,8,8] -> conv1 -> act -> conv2 [-> more] -> y */
static q8_graph *conv_chain(const char *act, bool concat) {
    q8t_rng r = q8t_seed(4);
    q8_graph *g = x_and_two_weights(&r);
    pads1(node(g, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    if (!strncmp(act, "SiLU", 4)) { /* "SiLU": Mul(c1, s1); "SiLUr": Mul(s1, c1) */
        node(g, "act", "Sigmoid", 1, (const char *[]){"c1"}, "s1");
        bool rev = act[4] == 'r';
        node(g, "silu", "Mul", 2, (const char *[]){rev ? "s1" : "c1", rev ? "c1" : "s1"}, "a1");
    } else {
        node(g, "act", act, 1, (const char *[]){"c1"}, "a1");
    }
    pads1(node(g, "conv2", "Conv", 2, (const char *[]){"a1", "w2"}, "c2"));
    const char *last = "c2";
    if (concat) {
        weight(g, "w3", 4, k_w2, &r);
        pads1(node(g, "conv3", "Conv", 2, (const char *[]){"a1", "w3"}, "c3"));
        q8_node *cc = node(g, "cat", "Concat", 2, (const char *[]){"c2", "c3"}, "cat_out");
        q8_node_set_attr(cc, "axis", Q8_ATTR_INT)->i = 1;
        last = "cat_out";
    }
    node(g, "pool", "MaxPool", 1, (const char *[]){last}, "y");
    q8_attr *k = q8_node_set_attr(g->nodes[g->n_nodes - 1], "kernel_shape", Q8_ATTR_INTS);
    k->n = 2;
    k->ints = malloc(2 * sizeof(int64_t));
    k->ints[0] = k->ints[1] = 2;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    return g;
}

/* Write n random samples of shape [1,3,8,8] into a fresh folder; the odd
 * ones scaled by quiet (1: all alike). */
static char *sample_dir(int n, float quiet) {
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/q8qt%dXXXXXX", (int)getpid());
    cr_assert(mkdtemp(dir));
    q8t_rng r = q8t_seed(9);
    int64_t d[4] = {1, 3, 8, 8};
    float x[192];
    for (int i = 0; i < n; i++) {
        q8t_fill(&r, x, 192, -1, 1);
        for (int k = 0; i % 2 && k < 192; k++) x[k] *= quiet;
        char p[128];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 4, x, NULL), Q8_OK);
    }
    return dir;
}

static void rm_dir(const char *dir, int n) {
    for (int i = 0; i < n; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

/* Optimize, calibrate on n random samples (the odd ones scaled by quiet),
 * quantize; the metadata into *meta. keep_wide: no wide-range rule. */
static q8_graph *quantized_on(q8_graph *g, const q8_quant_options *qo, int n, float quiet,
                              bool keep_wide, q8_meta *meta) {
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    char *dir = sample_dir(n, quiet);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 1, .keep_wide = keep_wide};
    q8_calibration cal;
    cr_assert_eq(q8_calibrate(g, &s, &co, &cal, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_quantize_graph(g, &cal, qo, meta, &err), Q8_OK, "%s", err.msg);
    q8_calibration_free(&cal);
    q8_samples_free(&s);
    rm_dir(dir, n);
    return g;
}

/* The same on 8 alike samples. */
static q8_graph *quantized(q8_graph *g, const q8_quant_options *qo) {
    q8_meta meta = {0};
    quantized_on(g, qo, 8, 1, false, &meta);
    q8_meta_free(&meta);
    return g;
}

static int count(const q8_graph *g, const char *op) {
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++) c += strcmp(g->nodes[i]->op_type, op) == 0;
    return c;
}

/* Run graph g (consumed) on one input; returns output 0 (malloc'd). */
static float *run(q8_graph *g, const float *x) {
    q8_error err = {0};
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "t", &m, &err), Q8_OK);
    q8_session *s;
    q8_session_options so = {.n_threads = 2};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    int64_t d[4] = {1, 3, 8, 8};
    cr_assert_eq(q8_session_set_input(s, NULL, Q8_F32, d, 4, x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *o;
    q8_session_output(s, 0, &info, &o, NULL);
    size_t nb = q8_dtype_size(info.dtype);
    for (int i = 0; i < info.ndim; i++) nb *= (size_t)info.dims[i];
    float *r = malloc(nb);
    memcpy(r, o, nb);
    cr_assert_eq(info.dtype, Q8_F32);
    q8_session_free(s);
    q8_model_free(m);
    return r;
}

/* Output SQNR of quantized graph g against the FP32 chain f (its first n
 * outputs) on sample 0 of sample_dir (both consumed: run's model takes
 * them). */
static double sqnr_vs(q8_graph *f, q8_graph *g, int n) {
    q8t_rng r = q8t_seed(9); /* sample 0 of sample_dir */
    float x[192];
    q8t_fill(&r, x, 192, -1, 1);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(f, NULL, &err), Q8_OK, "%s", err.msg);
    float *want = run(f, x), *got = run(g, x);
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        num += (double)want[i] * want[i];
        den += (double)(want[i] - got[i]) * (want[i] - got[i]);
    }
    free(want);
    free(got);
    return 10 * log10(num / (den + 1e-30));
}

static void compare_to_fp32(const char *act, bool concat, q8_graph *q, int n_out) {
    double sqnr = sqnr_vs(conv_chain(act, concat), q, n_out);
    cr_assert_gt(sqnr, 25.0, "%s: SQNR %.1f dB against FP32", act, sqnr);
}

Test(quantize, int8_flows_through_relu_and_maxpool) {
    q8_graph *g = quantized(conv_chain("Relu", false), NULL);
    cr_assert_eq(count(g, "QConv"), 2);
    cr_assert_eq(count(g, "QuantizeLinear"), 1, "only the graph input is quantized");
    cr_assert_eq(count(g, "DequantizeLinear"), 1, "only the output is dequantized");
    cr_assert_eq(count(g, "Relu"), 0, "Relu fused into conv1's epilogue");
    cr_assert_str_eq(g->tensors[g->outputs[0]]->name, "y", "the output keeps its name");
    compare_to_fp32("Relu", false, g, 8 * 4 * 4);
}

/* --int8-tails off: the MaxPool before the output and a table there run in
 * FP32 and the last conv writes float (nothing is dequantized); a table on
 * the way to an INT8 layer stays a table. The default keeps them in int8. */
Test(quantize, fp32_tails_leave_the_outputs_float) {
    q8_quant_options qo = {.fp32_tails = true};
    q8_graph *g = quantized(conv_chain("Sigmoid", false), &qo);
    cr_assert_eq(count(g, "QConv"), 2);
    cr_assert_eq(count(g, "QLut"), 1, "the Sigmoid between the convs stays a table");
    cr_assert_eq(count(g, "DequantizeLinear"), 0, "conv2 writes float itself");
    int pool = -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->op_type, "MaxPool")) pool = i;
    cr_assert(pool >= 0);
    cr_assert_eq(g->tensors[g->nodes[pool]->inputs[0]]->dtype, Q8_F32, "MaxPool on float");
    compare_to_fp32("Sigmoid", false, g, 8 * 4 * 4);
    /* a table right before the output: FP32 too */
    q8_graph *h = q8_graph_new();
    q8t_rng r = q8t_seed(4);
    int64_t w1[4] = {8, 3, 3, 3};
    input_x(h);
    weight(h, "w1", 4, w1, &r);
    pads1(node(h, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    node(h, "act", "Sigmoid", 1, (const char *[]){"c1"}, "y");
    h->outputs = malloc(sizeof(int));
    h->outputs[h->n_outputs++] = T(h, "y");
    h = quantized(h, &qo);
    cr_assert_eq(count(h, "QLut"), 0, "the Sigmoid before the output runs in FP32");
    cr_assert_eq(count(h, "QConv"), 1);
    q8_graph_free(h);
    q8_graph *d = quantized(conv_chain("Sigmoid", false), NULL);
    cr_assert_eq(count(d, "DequantizeLinear"), 1, "by default the MaxPool carries int8");
    q8_graph_free(d);
}

/* The output scale of the node named `node` (y_scale) in quantized g. */
static float y_scale_of(const q8_graph *g, const char *node) {
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->name, node)) return q8_attr_float(g->nodes[i], "y_scale", 0);
    cr_assert_fail("no node %s", node);
    return 0;
}

/* --output-ranges full: the conv and the table whose int8 reaches the
 * output through a table only take the extremes seen in calibration as
 * their ranges (percentile clips them); conv1, which feeds conv2 (an INT8
 * layer), keeps the percentile range. */
Test(quantize, output_ranges_from_the_extremes) {
    float scale[2][3];
    for (int full = 0; full < 2; full++) {
        q8t_rng r = q8t_seed(4);
        q8_graph *h = x_and_two_weights(&r);
        pads1(node(h, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
        pads1(node(h, "conv2", "Conv", 2, (const char *[]){"c1", "w2"}, "c2"));
        node(h, "act", "Sigmoid", 1, (const char *[]){"c2"}, "y");
        h->outputs = malloc(sizeof(int));
        h->outputs[h->n_outputs++] = T(h, "y");
        q8_error err = {0};
        cr_assert_eq(q8_passes_run_for_quantize(h, NULL, &err), Q8_OK, "%s", err.msg);
        char *dir = sample_dir(8, 1);
        q8_sample_set s;
        cr_assert_eq(q8_samples_from_dir(dir, h, &s, &err), Q8_OK, "%s", err.msg);
        q8_calib_options co = {.method = Q8_CALIB_PERCENTILE, .percentile = 90, .n_threads = 1};
        q8_calibration cal;
        cr_assert_eq(q8_calibrate(h, &s, &co, &cal, &err), Q8_OK, "%s", err.msg);
        float amax[3];
        const char *names[3] = {"c1", "c2", "y"};
        for (int k = 0; k < 3; k++) {
            const q8_hist *hs = cal.hist[q8_graph_find(h, names[k])];
            amax[k] = (float)fmax(fabs(hs->min), fabs(hs->max));
        }
        q8_quant_options qo = {.output_ranges_full = full};
        q8_meta meta = {0};
        cr_assert_eq(q8_quantize_graph(h, &cal, &qo, &meta, &err), Q8_OK, "%s", err.msg);
        scale[full][0] = y_scale_of(h, "conv1");
        scale[full][1] = y_scale_of(h, "conv2");
        scale[full][2] = y_scale_of(h, "act");
        if (full) {
            cr_assert_float_eq(scale[1][1], amax[1] / 127, 1e-6 * amax[1], "conv2: its extremes");
            cr_assert_float_eq(scale[1][2], amax[2] / 127, 1e-6 * amax[2], "the table: its extremes");
        }
        q8_meta_free(&meta);
        q8_calibration_free(&cal);
        q8_samples_free(&s);
        rm_dir(dir, 8);
        q8_graph_free(h);
    }
    cr_assert(scale[0][1] < scale[1][1] && scale[0][2] < scale[1][2], "percentile clipped them");
    cr_assert_float_eq(scale[0][0], scale[1][0], 0, "conv1 feeds an INT8 layer: as calibrated");
}

Test(quantize, smooth_activations_become_tables) {
    const char *acts[] = {"HardSwish", "Sigmoid", "Gelu", "Tanh"};
    for (int i = 0; i < 4; i++) {
        q8_graph *g = quantized(conv_chain(acts[i], false), NULL);
        cr_assert_eq(count(g, "QLut"), 1, "%s", acts[i]);
        cr_assert_eq(count(g, "DequantizeLinear"), 1, "%s", acts[i]);
        compare_to_fp32(acts[i], false, g, 8 * 4 * 4);
    }
}

/* SiLU (a Sigmoid and the Mul of its input by it, in either order) is one
 * table: quantize(x * sigmoid(x) / sy) of conv1's 256 int8 values, not the
 * Sigmoid's table and a product of two int8 tensors. */
Test(quantize, silu_becomes_one_table) {
    const char *acts[] = {"SiLU", "SiLUr"};
    for (int i = 0; i < 2; i++) {
        q8_graph *g = quantized(conv_chain(acts[i], false), NULL);
        cr_assert_eq(count(g, "QLut"), 1, "%s", acts[i]);
        cr_assert_eq(count(g, "QConv"), 2, "%s", acts[i]);
        cr_assert_eq(count(g, "QMul") + count(g, "QMulF") + count(g, "Mul") +
                         count(g, "Sigmoid") + count(g, "EwChain"),
                     0, "%s", acts[i]);
        const q8_node *lut = NULL;
        for (int k = 0; k < g->n_nodes; k++)
            if (!strcmp(g->nodes[k]->op_type, "QLut")) lut = g->nodes[k];
        const q8_tensor *xq = g->tensors[lut->inputs[0]], *tab = g->tensors[lut->inputs[1]];
        cr_assert_eq(tab->dtype, Q8_I8);
        cr_assert_eq(q8_tensor_numel(tab), 256);
        float sx = xq->q.scale[0], sy = q8_attr_float(lut, "y_scale", 0);
        cr_assert(sx > 0 && sy > 0);
        int off = 0;
        for (int q = -128; q < 128; q++) {
            double x = (double)q * sx, y = x / (1 + exp(-x)) / sy;
            double want = nearbyint(y < -128 ? -128 : y > 127 ? 127 : y);
            int got = ((const int8_t *)tab->data)[q + 128];
            cr_assert(fabs(got - want) <= 1, "%s: q %d: %d, want %g", acts[i], q, got, want);
            off += got != want; /* float vs double at a half: rare */
        }
        cr_assert_leq(off, 2, "%s", acts[i]);
        compare_to_fp32(acts[i], false, g, 8 * 4 * 4);
    }
    /* --fp32-layers names a SiLU by its Sigmoid ("act"), the node the fused
     * step keeps: then it runs as the float step (the Mul's name is gone) */
    const char *keep[1] = {"act"}, *gone[1] = {"silu"};
    q8_quant_options qo = {.fp32_layers = keep, .n_fp32_layers = 1};
    q8_graph *h = conv_chain("SiLU", false);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(h, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_check_layer_names(h, true, 0, NULL, &qo, &err), Q8_OK, "%s", err.msg);
    q8_quant_options qg = {.fp32_layers = gone, .n_fp32_layers = 1};
    cr_assert_neq(q8_check_layer_names(h, true, 0, NULL, &qg, &err), Q8_OK);
    cr_assert(strstr(err.msg, "does not survive the graph passes"), "%s", err.msg);
    q8_graph_free(h);
    q8_graph *g = quantized(conv_chain("SiLU", false), &qo);
    cr_assert_eq(count(g, "QLut"), 0);
    cr_assert_eq(count(g, "EwChain"), 1, "the SiLU in float");
    cr_assert_eq(count(g, "QConv"), 2);
    compare_to_fp32("SiLU", false, g, 8 * 4 * 4);
}

Test(quantize, concat_shares_one_scale) {
    q8_graph *g = quantized(conv_chain("Relu", true), NULL);
    cr_assert_eq(count(g, "QConv"), 3);
    int cat = -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->op_type, "Concat")) cat = i;
    cr_assert(cat >= 0);
    const q8_node *n = g->nodes[cat];
    const q8_tensor *a = g->tensors[n->inputs[0]], *b = g->tensors[n->inputs[1]],
                    *o = g->tensors[n->outputs[0]];
    cr_assert_eq(a->dtype, Q8_I8);
    cr_assert_eq(a->q.scale[0], b->q.scale[0]);
    cr_assert_eq(a->q.scale[0], o->q.scale[0]);
    compare_to_fp32("Relu", true, g, 16 * 4 * 4);
}

Test(quantize, fp32_layers_stay_fp32) {
    const char *keep[1] = {"conv2"};
    q8_quant_options qo = {.fp32_layers = keep, .n_fp32_layers = 1};
    q8_graph *g = quantized(conv_chain("Relu", false), &qo);
    cr_assert_eq(count(g, "QConv"), 1);
    cr_assert_eq(count(g, "Conv"), 1);
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->name, "conv2")) cr_assert_str_eq(g->nodes[i]->op_type, "Conv");
    q8_graph_free(g);
}

Test(quantize, zero_and_tiny_channels_get_finite_scales) {
    float w[3 * 4] = {0, 0, 0, 0, 1e-38f, -1e-39f, 0, 0, 0.5f, -0.25f, 0.125f, 1};
    int8_t q[12];
    float s[3];
    q8_quantize_weights(w, 3, 4, q, s);
    for (int c = 0; c < 3; c++) cr_assert(isfinite(s[c]) && s[c] > 0, "channel %d scale %g", c, s[c]);
    for (int i = 0; i < 4; i++) cr_assert_eq(q[i], 0);
    cr_assert_eq(q[11], 127);
    /* the scale is 1/127 rounded up to 12 significant bits: 0.5 / s is just
     * below 63.5 (exactly 63.5 with s = 1/127 would round to 64) */
    cr_assert_eq(q[8], 63);
    cr_assert_eq(q[9], -32); /* -31.75 -> -32 */
}

/* Each weight scale is the smallest float of the 16-bit form (scale16.h)
 * >= max|w| / 127: never smaller (no weight clipped: |q| <= 127, the
 * channel's largest at 127), at most 2^-11 larger, stored in 2 bytes. */
Test(quantize, weight_scales_have_the_16bit_form) {
    enum { C = 64, P = 9 };
    float w[C * P], s[C];
    int8_t q[C * P];
    q8t_rng r = q8t_seed(11);
    for (int c = 0; c < C; c++) /* channels over 40 binades */
        q8t_fill(&r, w + c * P, P, -ldexpf(1, c % 40 - 30), ldexpf(1, c % 40 - 30));
    q8_quantize_weights(w, C, P, q, s);
    for (int c = 0; c < C; c++) {
        float amax = 0;
        int qmax = 0;
        for (int i = 0; i < P; i++) {
            amax = fmaxf(amax, fabsf(w[c * P + i]));
            qmax = abs(q[c * P + i]) > qmax ? abs(q[c * P + i]) : qmax;
        }
        float want = amax / 127.0f, base;
        uint32_t b;
        cr_assert(s[c] >= want && (s[c] - want) / want <= 0x1p-11f, "channel %d: %a for %a", c,
                  s[c], want);
        cr_assert(q8_scale16_fits(&s[c], 1, &b), "channel %d: %a has more than 12 bits", c, s[c]);
        base = ldexpf(1, ilogbf(s[c]) - 11); /* the 16-bit form's spacing there */
        cr_assert(s[c] - base < want, "channel %d: %a is not the smallest", c, s[c]);
        cr_assert_eq(qmax, 127, "channel %d", c);
    }
}

static double zero_fraction(const q8_tensor *t) {
    int64_t z = 0, n = q8_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) z += ((const float *)t->data)[i] == 0.0f;
    return (double)z / (double)n;
}

Test(quantize, pruning_patterns) {
    q8_meta meta = {0};
    q8_error err = {0};
    /* per layer: exactly floor(0.5 * numel) zeros in each */
    q8_graph *g = conv_chain("Relu", false);
    q8_prune_options po = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5};
    cr_assert_eq(q8_prune(g, &po, NULL, 1, &meta, &err), Q8_OK, "%s", err.msg);
    cr_assert_float_eq(zero_fraction(g->tensors[q8_graph_find(g, "w1")]), 0.5, 1e-9); /* 108 of 216 */
    cr_assert_float_eq(zero_fraction(g->tensors[q8_graph_find(g, "w2")]), 0.5, 1e-9);
    cr_assert(q8_meta_get(&meta, "layer.conv1.sparsity"));
    q8_graph_free(g);
    /* skip */
    g = conv_chain("Relu", false);
    const char *skip[1] = {"conv1"};
    po.skip = skip;
    po.n_skip = 1;
    cr_assert_eq(q8_prune(g, &po, NULL, 1, &meta, &err), Q8_OK, "%s", err.msg);
    cr_assert_float_eq(zero_fraction(g->tensors[q8_graph_find(g, "w1")]), 0.0, 1e-9);
    q8_graph_free(g);
    /* 2:4 along the input channels: at most 2 non-zeros of every 4 */
    g = conv_chain("Relu", false);
    q8_prune_options p24 = {.mode = Q8_PRUNE_2_4};
    cr_assert_eq(q8_prune(g, &p24, NULL, 1, &meta, &err), Q8_OK, "%s", err.msg);
    const float *w2 = g->tensors[q8_graph_find(g, "w2")]->data; /* [8, 8, 3, 3] */
    for (int o = 0; o < 8; o++)
        for (int k = 0; k < 9; k++)
            for (int c0 = 0; c0 < 8; c0 += 4) {
                int nz = 0;
                for (int c = c0; c < c0 + 4; c++) nz += w2[(o * 8 + c) * 9 + k] != 0.0f;
                cr_assert_leq(nz, 2);
            }
    cr_assert_float_eq(zero_fraction(g->tensors[q8_graph_find(g, "w2")]), 0.5, 1e-9);
    q8_graph_free(g);
    /* global: one threshold over both layers, total fraction 0.5 */
    g = conv_chain("Relu", false);
    q8_prune_options pg = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5, .global = true};
    cr_assert_eq(q8_prune(g, &pg, NULL, 1, &meta, &err), Q8_OK, "%s", err.msg);
    double z1 = zero_fraction(g->tensors[q8_graph_find(g, "w1")]) * 216,
           z2 = zero_fraction(g->tensors[q8_graph_find(g, "w2")]) * 576;
    cr_assert_float_eq(z1 + z2, 396.0, 1e-6); /* half of 792, split by magnitude */
    cr_assert_neq(z1, 108.0, "one global threshold: layers are not pruned evenly");
    q8_graph_free(g);
    q8_meta_free(&meta);
}

static void scalar_const(q8_graph *g, const char *name, float v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, NULL, 0);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    *(float *)g->tensors[t]->data = v;
}

/* x -> conv1 -> k * c1 -> (..) - 0.25 -> conv2 -> MaxPool -> y (tail false: a
 * scale-and-shift between two convs, k on the left); or x -> conv1 -> conv2 ->
 * MaxPool -> / 3 -> y (tail true: a scalar op as the graph's output). */
static q8_graph *conv_scalar_chain(bool tail) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(4);
    int64_t w1[4] = {8, 3, 3, 3}, w2[4] = {8, 8, 3, 3};
    input_x(g);
    weight(g, "w1", 4, w1, &r);
    weight(g, "w2", 4, w2, &r);
    scalar_const(g, "k", 0.75f);
    scalar_const(g, "shift", 0.25f);
    scalar_const(g, "three", 3.0f);
    pads1(node(g, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    const char *a1 = "c1";
    if (!tail) {
        node(g, "scale", "Mul", 2, (const char *[]){"k", "c1"}, "scaled");
        node(g, "shift", "Sub", 2, (const char *[]){"scaled", "shift"}, "a1");
        a1 = "a1";
    }
    pads1(node(g, "conv2", "Conv", 2, (const char *[]){a1, "w2"}, "c2"));
    q8_node *p = node(g, "pool", "MaxPool", 1, (const char *[]){"c2"}, tail ? "p" : "y");
    q8_attr *ks = q8_node_set_attr(p, "kernel_shape", Q8_ATTR_INTS);
    ks->n = 2;
    ks->ints = malloc(2 * sizeof(int64_t));
    ks->ints[0] = ks->ints[1] = 2;
    if (tail) node(g, "div", "Div", 2, (const char *[]){"p", "three"}, "y");
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    return g;
}

/* ... and a chain of them is one table, its ops composed in float (one
 * rounding at its end). */
Test(quantize, scalar_ops_between_int8_layers_become_tables) {
    q8_quant_options qo = {.scalar_tables = Q8_SCALAR_TABLES_ON};
    q8_graph *g = quantized(conv_scalar_chain(false), &qo);
    cr_assert_eq(count(g, "QConv"), 2);
    cr_assert_eq(count(g, "QLut"), 1, "k * x - shift: two tables composed into one");
    cr_assert_eq(count(g, "Mul") + count(g, "Sub"), 0);
    cr_assert_eq(count(g, "QuantizeLinear"), 1, "only the graph input is quantized");
    cr_assert_eq(count(g, "DequantizeLinear"), 1, "only the output is dequantized");
    cr_assert_gt(sqnr_vs(conv_scalar_chain(false), g, 8 * 4 * 4), 25.0, "SQNR against FP32");
}

/* Off by default (it cost PP-OCR recognition accuracy): the ops stay FP32. */
Test(quantize, scalar_tables_are_opt_in) {
    q8_graph *g = quantized(conv_scalar_chain(false), NULL);
    cr_assert_eq(count(g, "QLut"), 0);
    cr_assert_eq(count(g, "Mul"), 1);
    cr_assert_eq(count(g, "Sub"), 1);
    q8_graph_free(g);
}

Test(quantize, scalar_op_before_an_output_stays_fp32) {
    q8_quant_options qo = {.scalar_tables = Q8_SCALAR_TABLES_ON};
    q8_graph *g = quantized(conv_scalar_chain(true), &qo);
    cr_assert_eq(count(g, "QLut"), 0);
    cr_assert_eq(count(g, "Div"), 1);
    q8_graph_free(g);
}

/* x -> conv1 -> Relu -> a1 -> conv2 -> c2; c2 + a1 -> s (a residual sum);
 * then (tail false) Relu (PRelu with a slope per channel if prelu) ->
 * conv3 -> MaxPool -> y, or (tail true) s is the output y. */
static q8_graph *residual_chain_act(bool tail, bool prelu) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(5);
    int64_t w1[4] = {8, 3, 3, 3}, w2[4] = {8, 8, 3, 3};
    input_x(g);
    weight(g, "w1", 4, w1, &r);
    weight(g, "w2", 4, w2, &r);
    weight(g, "w3", 4, w2, &r);
    pads1(node(g, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    node(g, "relu1", "Relu", 1, (const char *[]){"c1"}, "a1");
    pads1(node(g, "conv2", "Conv", 2, (const char *[]){"a1", "w2"}, "c2"));
    node(g, "sum", "Add", 2, (const char *[]){"c2", "a1"}, tail ? "y" : "s");
    if (!tail) {
        if (prelu) {
            int64_t sd[3] = {8, 1, 1};
            weight(g, "slope", 3, sd, &r);
            node(g, "prelu", "PRelu", 2, (const char *[]){"s", "slope"}, "r");
        } else {
            node(g, "relu2", "Relu", 1, (const char *[]){"s"}, "r");
        }
        pads1(node(g, "conv3", "Conv", 2, (const char *[]){"r", "w3"}, "c3"));
        q8_node *p = node(g, "pool", "MaxPool", 1, (const char *[]){"c3"}, "y");
        q8_attr *ks = q8_node_set_attr(p, "kernel_shape", Q8_ATTR_INTS);
        ks->n = 2;
        ks->ints = malloc(2 * sizeof(int64_t));
        ks->ints[0] = ks->ints[1] = 2;
    }
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    return g;
}

static q8_graph *residual_chain(bool tail) { return residual_chain_act(tail, false); }

/* A residual sum that an int8 layer reads is q8.QAdd of the two int8
 * tensors: no dequantize, float Add and quantize around it; the Relu after
 * it is its clamp (_act). */
Test(quantize, residual_sum_between_int8_layers_is_qadd) {
    q8_graph *g = quantized(residual_chain(false), NULL);
    cr_assert_eq(count(g, "QConv"), 3);
    cr_assert_eq(count(g, "QAdd"), 1);
    cr_assert_eq(count(g, "Add"), 0);
    cr_assert_eq(count(g, "Relu"), 0, "relu1 in conv1's epilogue, relu2 in the sum's clamp");
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->op_type, "QAdd"))
            cr_assert_str_eq(q8_attr_str(g->nodes[i], "_act", ""), "Relu");
    cr_assert_eq(count(g, "QuantizeLinear"), 1, "only the graph input is quantized");
    cr_assert_eq(count(g, "DequantizeLinear"), 1, "only the output is dequantized");
    cr_assert_gt(sqnr_vs(residual_chain(false), g, 8 * 4 * 4), 25.0, "SQNR against FP32");
}

/* --int8-prelu on: a PRelu after the sum is q8.QPRelu and the sum q8.QAdd
 * (the stream int8 from conv2 to conv3); off: both stay FP32 between a
 * dequantize and a quantize. */
Test(quantize, prelu_after_a_residual_sum_is_qprelu) {
    q8_quant_options on = {.int8_prelu = Q8_INT8_PRELU_ON};
    q8_graph *g = quantized(residual_chain_act(false, true), &on);
    cr_assert_eq(count(g, "QPRelu"), 1);
    cr_assert_eq(count(g, "QAdd"), 1);
    cr_assert_eq(count(g, "PRelu") + count(g, "Add"), 0);
    cr_assert_eq(count(g, "QuantizeLinear"), 1, "only the graph input is quantized");
    cr_assert_gt(sqnr_vs(residual_chain_act(false, true), g, 8 * 4 * 4), 25.0,
                 "SQNR against FP32");
    q8_quant_options off = {.int8_prelu = Q8_INT8_PRELU_OFF};
    g = quantized(residual_chain_act(false, true), &off);
    cr_assert_eq(count(g, "QPRelu") + count(g, "QAdd"), 0);
    cr_assert_eq(count(g, "PRelu"), 1);
    cr_assert_eq(count(g, "Add"), 1);
    q8_graph_free(g);
}

/* A sum only a float reader (here the graph output) reads stays FP32: int8
 * would only add roundings there. */
Test(quantize, residual_sum_before_an_output_stays_fp32) {
    q8_graph *g = quantized(residual_chain(true), NULL);
    cr_assert_eq(count(g, "QAdd"), 0);
    cr_assert_eq(count(g, "Add"), 1);
    cr_assert_eq(count(g, "QConv"), 2);
    q8_graph_free(g);
}

/* x -> conv1 -> c1 [-> HardSwish (table true)] -> h; GlobalAveragePool ->
 * 1x1 conv -> HardSigmoid -> gate [1, 8, 1, 1]; h * gate -> conv2 -> MaxPool
 * -> y: a squeeze-excite block (MobileNetV3's, with the table; PP-LCNet's
 * without). */
static q8_graph *se_chain(bool table) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(6);
    int64_t w1[4] = {8, 3, 3, 3}, w2[4] = {8, 8, 3, 3},
            ws[4] = {8, 8, 1, 1};
    input_x(g);
    weight(g, "w1", 4, w1, &r);
    weight(g, "w2", 4, w2, &r);
    weight(g, "ws", 4, ws, &r);
    pads1(node(g, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    const char *h = "c1";
    if (table) {
        node(g, "hswish", "HardSwish", 1, (const char *[]){"c1"}, "h1");
        h = "h1";
    }
    node(g, "gap", "GlobalAveragePool", 1, (const char *[]){h}, "pooled");
    node(g, "se", "Conv", 2, (const char *[]){"pooled", "ws"}, "se_out");
    node(g, "hsig", "HardSigmoid", 1, (const char *[]){"se_out"}, "gate");
    node(g, "scale", "Mul", 2, (const char *[]){"gate", h}, "scaled");
    pads1(node(g, "conv2", "Conv", 2, (const char *[]){"scaled", "w2"}, "c2"));
    q8_node *p = node(g, "pool", "MaxPool", 1, (const char *[]){"c2"}, "y");
    q8_attr *ks = q8_node_set_attr(p, "kernel_shape", Q8_ATTR_INTS);
    ks->n = 2;
    ks->ints = malloc(2 * sizeof(int64_t));
    ks->ints[0] = ks->ints[1] = 2;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    return g;
}

/* With --int8-gates the gate multiply is q8.QMul of the int8 block output
 * and the int8 gate (gate first in the graph: QMul takes the full-shape side
 * as A); off by default, where it is the float product of the two int8
 * tensors, fused into one q8.QMulF. */
Test(quantize, squeeze_excite_scale_is_qmul) {
    q8_graph *d = quantized(se_chain(true), NULL);
    cr_assert_eq(count(d, "QMul"), 0, "off by default");
    cr_assert_eq(count(d, "QMulF"), 1);
    cr_assert_eq(count(d, "Mul"), 0);
    q8_graph_free(d);
    q8_quant_options qo = {.int8_gates = true};
    q8_graph *g = quantized(se_chain(true), &qo);
    cr_assert_eq(count(g, "QMul"), 1);
    cr_assert_eq(count(g, "Mul"), 0);
    cr_assert_eq(count(g, "QConv"), 3);
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->op_type, "QMul") == 0)
            cr_assert_eq(g->tensors[g->nodes[i]->inputs[1]]->dims[2], 1, "B is the gate");
    cr_assert_gt(sqnr_vs(se_chain(true), g, 8 * 4 * 4), 25.0, "SQNR against FP32");
}

/* Where the block output is an INT8 layer's that only the Mul and the float
 * GlobalAveragePool read, the Mul stays FP32: the conv writes float32 and is
 * not rounded for the Mul's sake. */
Test(quantize, squeeze_excite_scale_of_a_conv_output_stays_fp32) {
    q8_quant_options qo = {.int8_gates = true};
    q8_graph *g = quantized(se_chain(false), &qo);
    cr_assert_eq(count(g, "QMul"), 0);
    cr_assert_eq(count(g, "Mul"), 1);
    q8_graph_free(g);
}

/* The squeeze-excite's GlobalAveragePool of a table's output that a conv
 * reads runs as q8.QGlobalAveragePool (no dequantize of the block output
 * for it, no quantize after it), by default and with --int8-gates; the
 * result stays close to FP32. */
Test(quantize, squeeze_of_an_int8_block_output_is_qgap) {
    for (int gates = 0; gates < 2; gates++) {
        q8_quant_options qo = {.int8_gates = gates};
        q8_graph *g = quantized(se_chain(true), &qo);
        cr_assert_eq(count(g, "QGlobalAveragePool"), 1, "gates %d", gates);
        cr_assert_eq(count(g, "GlobalAveragePool"), 0, "gates %d", gates);
        for (int i = 0; i < g->n_nodes; i++)
            if (strcmp(g->nodes[i]->op_type, "QGlobalAveragePool") == 0) {
                int y = g->nodes[i]->outputs[0];
                for (int j = 0; j < g->n_nodes; j++)
                    for (int k = 0; k < g->nodes[j]->n_inputs; k++)
                        if (g->nodes[j]->inputs[k] == y)
                            cr_assert_str_eq(g->nodes[j]->op_type, "QConv", "its reader");
            }
        cr_assert_gt(sqnr_vs(se_chain(true), g, 8 * 4 * 4), 25.0, "SQNR against FP32, gates %d",
                     gates);
    }
}

/* Where the block output is an INT8 layer's that only the pooling and the
 * gate Mul read, neither makes it int8 for the other: the conv keeps writing
 * float32, and both stay FP32 (also with --int8-gates). */
Test(quantize, squeeze_of_a_conv_output_stays_fp32) {
    for (int gates = 0; gates < 2; gates++) {
        q8_quant_options qo = {.int8_gates = gates};
        q8_graph *g = quantized(se_chain(false), &qo);
        cr_assert_eq(count(g, "QGlobalAveragePool"), 0, "gates %d", gates);
        cr_assert_eq(count(g, "GlobalAveragePool"), 1, "gates %d", gates);
        cr_assert_eq(count(g, "QMul"), 0, "gates %d", gates);
        q8_graph_free(g);
    }
}

enum { UP_CHAIN, UP_HEAD, UP_SHARED };

/* x[1,3,8,8] -> conv1 -> Relu -> Resize (mode, scales 1,1,2,2) -> conv2 -> y;
 * UP_HEAD: the Resize's output is y (no conv2); UP_SHARED: a second conv
 * reads the Relu's output too and writes a second output z. */
static q8_graph *upsample_graph(const char *mode, int shape) {
    bool head = shape == UP_HEAD;
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(5);
    int64_t w1[4] = {8, 3, 3, 3}, w2[4] = {8, 8, 3, 3}, four = 4, none = 0;
    input_x(g);
    weight(g, "w1", 4, w1, &r);
    weight(g, "w2", 4, w2, &r);
    int roi = T(g, "roi"), sc = T(g, "scales");
    q8_tensor_set_shape(g->tensors[roi], Q8_F32, &none, 1);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[roi], NULL), Q8_OK);
    q8_tensor_set_shape(g->tensors[sc], Q8_F32, &four, 1);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[sc], NULL), Q8_OK);
    memcpy(g->tensors[sc]->data, (const float[]){1, 1, 2, 2}, 4 * sizeof(float));
    pads1(node(g, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    node(g, "relu", "Relu", 1, (const char *[]){"c1"}, "r1");
    q8_node *rs = node(g, "up", "Resize", 3, (const char *[]){"r1", "roi", "scales"},
                       head ? "y" : "u1");
    q8_attr *md = q8_node_set_attr(rs, "mode", Q8_ATTR_STRING);
    md->s = q8_strdup(mode);
    if (!head) pads1(node(g, "conv2", "Conv", 2, (const char *[]){"u1", "w2"}, "y"));
    if (shape == UP_SHARED) pads1(node(g, "side", "Conv", 2, (const char *[]){"r1", "w2"}, "z"));
    g->outputs = malloc(2 * sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    if (shape == UP_SHARED) g->outputs[g->n_outputs++] = T(g, "z");
    return g;
}

/* A nearest Resize between INT8 convolutions carries int8 (no dequantize
 * before it, no quantize after it), and so does a linear one whose input is
 * int8 for another INT8 layer too; both close to the FP32 model. */
Test(quantize, resize_carries_int8) {
    for (int m = 0; m < 2; m++) {
        const char *mode = m ? "linear" : "nearest";
        int shape = m ? UP_SHARED : UP_CHAIN;
        q8_graph *g = quantized(upsample_graph(mode, shape), NULL);
        cr_assert_eq(count(g, "QConv"), m ? 3 : 2, "%s", mode);
        cr_assert_eq(count(g, "QuantizeLinear"), 1, "%s: only the graph input's", mode);
        cr_assert_eq(count(g, "DequantizeLinear"), 0, "%s", mode);
        for (int i = 0; i < g->n_nodes; i++)
            if (strcmp(g->nodes[i]->op_type, "Resize") == 0)
                cr_assert_eq(g->tensors[g->nodes[i]->outputs[0]]->dtype, Q8_I8, "%s", mode);
        cr_assert_gt(sqnr_vs(upsample_graph(mode, shape), g, 8 * 16 * 16), 25.0,
                     "%s: SQNR against FP32", mode);
    }
}

/* A linear Resize stays FP32 where int8 would add a rounding: when only the
 * graph output reads it, and when its input is an INT8 layer's output that
 * nothing else reads in int8 (the conv writes float32, one quantize after
 * the Resize, as before int8 linear Resize existed). */
Test(quantize, linear_resize_only_where_it_adds_no_rounding) {
    for (int shape = UP_CHAIN; shape <= UP_HEAD; shape++) {
        q8_graph *l = quantized(upsample_graph("linear", shape), NULL);
        cr_assert_eq(count(l, "DequantizeLinear"), 0, "shape %d", shape);
        cr_assert_eq(count(l, "QuantizeLinear"), shape == UP_CHAIN ? 2 : 1, "shape %d", shape);
        for (int i = 0; i < l->n_nodes; i++)
            if (strcmp(l->nodes[i]->op_type, "Resize") == 0)
                cr_assert_eq(l->tensors[l->nodes[i]->outputs[0]]->dtype, Q8_F32, "shape %d",
                             shape);
        q8_graph_free(l);
    }
}

/* x -> conv1 -> c1; Concat(c1, zeros) on channels -> conv2 -> MaxPool -> y:
 * BlazeFace's channel padding. The Concat stays int8 at c1's scale (the
 * zeros become int8 zeros): no dequantize and quantize around it. */
Test(quantize, concat_with_constant_zeros_stays_int8) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(7);
    int64_t w1[4] = {8, 3, 3, 3}, w2[4] = {8, 16, 3, 3},
            zd[4] = {1, 8, 8, 8};
    input_x(g);
    weight(g, "w1", 4, w1, &r);
    weight(g, "w2", 4, w2, &r);
    int z = T(g, "zeros");
    q8_tensor_set_shape(g->tensors[z], Q8_F32, zd, 4);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[z], NULL), Q8_OK);
    memset(g->tensors[z]->data, 0, 512 * sizeof(float));
    pads1(node(g, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    q8_node *cc = node(g, "pad", "Concat", 2, (const char *[]){"c1", "zeros"}, "padded");
    q8_node_set_attr(cc, "axis", Q8_ATTR_INT)->i = 1;
    pads1(node(g, "conv2", "Conv", 2, (const char *[]){"padded", "w2"}, "c2"));
    q8_node *p = node(g, "pool", "MaxPool", 1, (const char *[]){"c2"}, "y");
    q8_attr *ks = q8_node_set_attr(p, "kernel_shape", Q8_ATTR_INTS);
    ks->n = 2;
    ks->ints = malloc(2 * sizeof(int64_t));
    ks->ints[0] = ks->ints[1] = 2;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    g = quantized(g, NULL);
    cr_assert_eq(count(g, "QConv"), 2);
    cr_assert_eq(count(g, "Concat"), 1);
    cr_assert_eq(count(g, "QuantizeLinear"), 1, "only the graph input is quantized");
    cr_assert_eq(count(g, "DequantizeLinear"), 1, "only the output is dequantized");
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->op_type, "Concat") == 0)
            cr_assert_eq(g->tensors[g->nodes[i]->outputs[0]]->dtype, Q8_I8);
    q8_graph_free(g);
}

/* A U-Net's skip connection: x -> conv1 -> Relu -> r1; r1 -> conv2 -> c2;
 * Concat(r1, c2) on channels -> conv3 -> y. */
static q8_graph *skip_concat_graph(void) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(8);
    int64_t w1[4] = {8, 3, 3, 3}, w2[4] = {8, 8, 3, 3}, w3[4] = {8, 16, 3, 3};
    input_x(g);
    weight(g, "w1", 4, w1, &r);
    weight(g, "w2", 4, w2, &r);
    weight(g, "w3", 4, w3, &r);
    pads1(node(g, "conv1", "Conv", 2, (const char *[]){"x", "w1"}, "c1"));
    node(g, "act", "Relu", 1, (const char *[]){"c1"}, "r1");
    pads1(node(g, "conv2", "Conv", 2, (const char *[]){"r1", "w2"}, "c2"));
    q8_node *cc = node(g, "cat", "Concat", 2, (const char *[]){"r1", "c2"}, "cat");
    q8_node_set_attr(cc, "axis", Q8_ATTR_INT)->i = 1;
    pads1(node(g, "conv3", "Conv", 2, (const char *[]){"cat", "w3"}, "y"));
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    return g;
}

/* conv2 reads r1 too, so r1 cannot be written at the Concat's scale: an
 * int8 table rescales it, and the Concat stays int8 (before: two
 * dequantizes, an FP32 Concat and a quantize), close to FP32. */
Test(quantize, concat_of_a_shared_tensor_stays_int8) {
    q8_graph *g = quantized(skip_concat_graph(), NULL);
    cr_assert_eq(count(g, "QConv"), 3);
    cr_assert_eq(count(g, "QLut"), 1, "r1 rescaled to the Concat's scale");
    cr_assert_eq(count(g, "QuantizeLinear"), 1, "only the graph input is quantized");
    cr_assert_eq(count(g, "DequantizeLinear"), 0, "conv3 writes the float output itself");
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->op_type, "Concat") == 0)
            cr_assert_eq(g->tensors[g->nodes[i]->outputs[0]]->dtype, Q8_I8);
    cr_assert_gt(sqnr_vs(skip_concat_graph(), g, 8 * 8 * 8), 25.0, "SQNR against FP32");
}

/* x -> conv1 (+ a bias of 5 that lifts its range) -> Relu -> conv2 ->
 * Sigmoid -> conv3 -> y */
static q8_graph *wide_chain(void) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(4);
    int64_t w1[4] = {8, 3, 3, 3}, w2[4] = {8, 8, 3, 3}, bd = 8;
    input_x(g);
    weight(g, "w1", 4, w1, &r);
    weight(g, "w2", 4, w2, &r);
    weight(g, "w3", 4, w2, &r);
    weight(g, "b1", 1, &bd, &r);
    for (int i = 0; i < 8; i++) ((float *)g->tensors[T(g, "b1")]->data)[i] = 5;
    pads1(node(g, "conv1", "Conv", 3, (const char *[]){"x", "w1", "b1"}, "c1"));
    node(g, "act", "Relu", 1, (const char *[]){"c1"}, "a1");
    pads1(node(g, "conv2", "Conv", 2, (const char *[]){"a1", "w2"}, "c2"));
    node(g, "sig", "Sigmoid", 1, (const char *[]){"c2"}, "s2");
    pads1(node(g, "conv3", "Conv", 2, (const char *[]){"s2", "w3"}, "y"));
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    return g;
}

/* Half the samples 1000 times quieter: x's static scale would leave them a
 * fraction of a step. x is wide; conv1's output is not (its bias sets the
 * range) but is computed from x by a linear layer, so it is wide too; the
 * Sigmoid stops that. conv1 and conv2 stay FP32, conv3 is INT8, and the
 * metadata says why. */
Test(quantize, wide_range_activations_keep_their_layers_fp32) {
    q8_meta meta = {0};
    q8_graph *g = quantized_on(wide_chain(), NULL, 16, 1e-3f, false, &meta);
    cr_assert_eq(count(g, "Conv"), 2);
    cr_assert_eq(count(g, "QConv"), 1);
    const q8_meta_entry *e = q8_meta_get(&meta, "tensor.x.wide_range");
    cr_assert(e && e->type == Q8_META_STR && !strncmp(e->s, "measured: 50%", 13), "%s",
              e ? e->s : "(none)");
    cr_assert_not_null(q8_meta_get(&meta, "layer.conv1.fp32_wide_range"));
    cr_assert_not_null(q8_meta_get(&meta, "layer.conv2.fp32_wide_range"));
    cr_assert_null(q8_meta_get(&meta, "layer.conv3.fp32_wide_range"));
    int inherited = 0;
    for (int i = 0; i < meta.n; i++)
        inherited += meta.e[i].type == Q8_META_STR && strstr(meta.e[i].key, ".wide_range") &&
                     !strncmp(meta.e[i].s, "inherited from node 'conv1'", 27);
    cr_assert_eq(inherited, 1); /* conv1's output (with the Relu fused or not) */
    e = q8_meta_get(&meta, "quant.wide_range_tensors");
    cr_assert(e && e->i >= 3);
    q8_meta_free(&meta);
    q8_graph_free(g);
    /* samples alike, or the rule off (--wide-range int8): every conv INT8,
     * nothing recorded */
    for (int keep = 0; keep < 2; keep++) {
        g = quantized_on(wide_chain(), NULL, 16, keep ? 1e-3f : 1, keep, &meta);
        cr_assert_eq(count(g, "QConv"), 3);
        cr_assert_null(q8_meta_get(&meta, "quant.wide_range_tensors"));
        q8_meta_free(&meta);
        q8_graph_free(g);
    }
}

/* x[1,3,8,8] -> 1x1 conv a (3 -> 2) [-> Relu -> 1x1 conv b (2 -> 1)]
 * [-> Sigmoid] -> y: 384 and 128 multiply-adds */
static q8_graph *small_convs(bool chain, bool sigmoid) {
    q8_graph *g = q8_graph_new();
    q8t_rng r = q8t_seed(4);
    int64_t wa[4] = {2, 3, 1, 1}, wb[4] = {1, 2, 1, 1};
    input_x(g);
    weight(g, "wa", 4, wa, &r);
    weight(g, "wb", 4, wb, &r);
    const char *last = chain ? "cb" : "ca";
    node(g, "a", "Conv", 2, (const char *[]){"x", "wa"}, "ca");
    if (chain) {
        node(g, "act", "Relu", 1, (const char *[]){"ca"}, "ra");
        node(g, "b", "Conv", 2, (const char *[]){"ra", "wb"}, "cb");
    }
    node(g, "last", sigmoid ? "Sigmoid" : "Identity", 1, (const char *[]){last}, "y");
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    return g;
}

/* A small layer alone between FP32 (with or without a table after it)
 * stays FP32, its Sigmoid fused as in an FP32 model; small layers with an
 * int8 neighbour stay INT8. */
Test(quantize, small_layer_alone_stays_fp32) {
    q8_quant_options qo = {.small_alone_fp32 = true};
    for (int sig = 0; sig < 2; sig++) {
        q8_meta meta = {0};
        q8_graph *g = quantized_on(small_convs(false, sig), &qo, 8, 1, false, &meta);
        cr_assert_eq(count(g, "Conv"), 1);
        cr_assert_eq(count(g, "QConv") + count(g, "QLut") + count(g, "Sigmoid"), 0, "sig %d", sig);
        const q8_meta_entry *e = q8_meta_get(&meta, "layer.a.fp32_small");
        cr_assert(e && e->i == 384, "%lld", e ? (long long)e->i : -1LL);
        q8_meta_free(&meta);
        q8_graph_free(g);
        g = quantized_on(small_convs(true, sig), &qo, 8, 1, false, &meta);
        cr_assert_eq(count(g, "QConv"), 2);
        cr_assert_eq(count(g, "QLut"), sig);
        cr_assert_null(q8_meta_get(&meta, "layer.b.fp32_small"));
        q8_meta_free(&meta);
        q8_graph_free(g);
        g = quantized_on(small_convs(false, sig), NULL, 8, 1, false, &meta); /* option off */
        cr_assert_eq(count(g, "QConv"), 1);
        cr_assert_eq(count(g, "QLut"), sig);
        q8_meta_free(&meta);
        q8_graph_free(g);
    }
}
