/* Graph passes: pattern fusion (LayerNorm, GELU), activation fusion, BN
 * folding, Identity removal, If inlining, dead-node removal. Each rewrite
 * must leave the results unchanged and the graph smaller. */
#include <string.h>

#include "graph_clone.h"
#include "passes.h"
#include "testutil.h"

/* ---- a tiny graph builder: tensors by name ---- */

#define T q8t_tensor

static void input(q8_graph *g, const char *name, int ndim, const int64_t *dims) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, ndim);
    g->inputs = realloc(g->inputs, sizeof(int) * (size_t)(g->n_inputs + 1));
    g->inputs[g->n_inputs++] = t;
}

static void output(q8_graph *g, const char *name) {
    g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
    g->outputs[g->n_outputs++] = T(g, name);
}

static void cf(q8_graph *g, const char *name, int ndim, const int64_t *dims, const float *v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, ndim);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, q8_tensor_nbytes(g->tensors[t]));
}

static void ci(q8_graph *g, const char *name, int n, const int64_t *v) {
    int t = T(g, name);
    int64_t d = n;
    q8_tensor_set_shape(g->tensors[t], Q8_I64, &d, 1);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, sizeof(int64_t) * (size_t)n);
}

static void scalar(q8_graph *g, const char *name, float v) {
    int64_t one = 1;
    cf(g, name, 0, &one, &v);
}

/* node(g, "Op", "a,b", "y"): "" entries are absent optional inputs */
static q8_node *node(q8_graph *g, const char *op, const char *ins, const char *outs) {
    int in[16], out[8], ni = 0, no = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", ins);
    for (char *p = buf, *e; p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        in[ni++] = *p ? T(g, p) : -1;
    }
    snprintf(buf, sizeof buf, "%s", outs);
    for (char *p = buf, *e; p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        out[no++] = T(g, p);
    }
    char name[64];
    snprintf(name, sizeof name, "%s_%d", op, g->n_nodes);
    int k = q8_graph_add_node(g, name, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, ni, out, no, NULL), Q8_OK);
    return g->nodes[k];
}

static void set_ints(q8_node *n, const char *name, const int64_t *v, int c) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_INTS);
    a->n = c;
    a->ints = malloc(sizeof(int64_t) * (size_t)c);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)c);
}

static int count_op(const q8_graph *g, const char *op) {
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++) c += strcmp(g->nodes[i]->op_type, op) == 0;
    return c;
}

/* Run g (already through the passes) on one float input; returns output 0. */
static float *run1(q8_graph *g, const float *x) {
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    const void *in[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    /* q8t_run runs the passes again: they must be idempotent */
    cr_assert_eq(q8t_run(g, in, 2, out, info, 1, &err), Q8_OK, "%s", err.msg);
    return out[0];
}

static q8_graph *layernorm_pattern(bool affine, bool use_pow) {
    q8_graph *g = q8_graph_new();
    int64_t xd[3] = {2, 5, 13}, vd[1] = {13};
    input(g, "x", 3, xd);
    int64_t ax[1] = {-1};
    set_ints(node(g, "ReduceMean", "x", "mean"), "axes", ax, 1);
    node(g, "Sub", "x,mean", "d");
    if (use_pow) {
        scalar(g, "two", 2.0f);
        node(g, "Pow", "d,two", "sq");
    } else {
        node(g, "Mul", "d,d", "sq");
    }
    set_ints(node(g, "ReduceMean", "sq", "var"), "axes", ax, 1);
    scalar(g, "eps", 1e-5f);
    node(g, "Add", "var,eps", "ve");
    node(g, "Sqrt", "ve", "std");
    if (affine) {
        node(g, "Div", "d,std", "nrm");
        float gam[13], bet[13];
        for (int i = 0; i < 13; i++) gam[i] = 0.5f + 0.1f * (float)i, bet[i] = -0.3f + 0.05f * (float)i;
        cf(g, "gamma", 1, vd, gam);
        cf(g, "beta", 1, vd, bet);
        node(g, "Mul", "nrm,gamma", "sc");
        node(g, "Add", "beta,sc", "y"); /* bias first, as some exporters write */
    } else {
        node(g, "Div", "d,std", "y");
    }
    output(g, "y");
    return g;
}

static void layernorm_reference(const float *x, float *y, bool affine) {
    for (int r = 0; r < 10; r++) {
        const float *v = x + r * 13;
        double m = 0, var = 0;
        for (int i = 0; i < 13; i++) m += v[i];
        m /= 13;
        for (int i = 0; i < 13; i++) var += (v[i] - m) * (v[i] - m);
        var /= 13;
        for (int i = 0; i < 13; i++) {
            double n = (v[i] - m) / sqrt(var + 1e-5);
            y[r * 13 + i] = (float)(affine ? n * (0.5 + 0.1 * i) + (-0.3 + 0.05 * i) : n);
        }
    }
}

Test(passes, layernorm_pattern_becomes_one_op) {
    for (int variant = 0; variant < 4; variant++) {
        bool affine = variant & 1, use_pow = variant & 2;
        q8_graph *g = layernorm_pattern(affine, use_pow);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, 1, "variant %d: %d nodes left", variant, g->n_nodes);
        cr_assert_str_eq(g->nodes[0]->op_type, "LayerNormalization");
        cr_assert_eq(q8_attr_int(g->nodes[0], "axis", -99), 2);
        q8_graph_free(g);
        float x[130], want[130];
        q8t_rng r = q8t_seed(11 + variant);
        q8t_fill(&r, x, 130, -3, 3);
        layernorm_reference(x, want, affine);
        float *got = run1(layernorm_pattern(affine, use_pow), x);
        q8t_assert_close(got, want, 130, 1e-4f, 1e-5f, "layernorm");
        free(got);
    }
}

Test(passes, layernorm_pattern_with_an_outside_reader_is_left_alone) {
    q8_graph *g = layernorm_pattern(false, true);
    output(g, "d"); /* the centered value is also an output */
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(count_op(g, "LayerNormalization"), 0);
    q8_graph_free(g);
}

static q8_graph *gelu_pattern(int form) {
    q8_graph *g = q8_graph_new();
    int64_t xd[2] = {9, 7};
    input(g, "x", 2, xd);
    if (form == 0) {
        scalar(g, "sqrt2", 1.4142135f);
        node(g, "Div", "x,sqrt2", "a");
    } else {
        scalar(g, "isqrt2", 0.70710678f);
        node(g, "Mul", "x,isqrt2", "a");
    }
    node(g, "Erf", "a", "b");
    scalar(g, "one", 1.0f);
    node(g, "Add", "b,one", "c");
    scalar(g, "half", 0.5f);
    if (form == 0) { /* (x * c) * 0.5 */
        node(g, "Mul", "x,c", "d");
        node(g, "Mul", "d,half", "y");
    } else { /* (x * 0.5) * c */
        node(g, "Mul", "x,half", "h");
        node(g, "Mul", "h,c", "y");
    }
    output(g, "y");
    return g;
}

Test(passes, gelu_erf_pattern_becomes_one_op) {
    for (int form = 0; form < 2; form++) {
        q8_graph *g = gelu_pattern(form);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, 1);
        cr_assert_str_eq(g->nodes[0]->op_type, "Gelu");
        q8_graph_free(g);
        float x[63], want[63];
        q8t_rng r = q8t_seed(5);
        q8t_fill(&r, x, 63, -5, 5);
        for (int i = 0; i < 63; i++) want[i] = (float)(0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0))));
        float *got = run1(gelu_pattern(form), x);
        q8t_assert_close(got, want, 63, 1e-5f, 1e-6f, "gelu");
        free(got);
    }
}

/* x -> Conv(3x3, pad 1) -> BatchNormalization -> Relu */
static q8_graph *conv_bn_relu(bool bn, bool relu) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {2, 3, 9, 7}, wd[4] = {5, 3, 3, 3}, cd[1] = {5};
    input(g, "x", 4, xd);
    float w[135], b[5], gam[5], bet[5], mean[5], var[5];
    q8t_rng r = q8t_seed(3);
    q8t_fill(&r, w, 135, -0.5f, 0.5f);
    q8t_fill(&r, b, 5, -0.2f, 0.2f);
    q8t_fill(&r, gam, 5, 0.5f, 1.5f);
    q8t_fill(&r, bet, 5, -0.5f, 0.5f);
    q8t_fill(&r, mean, 5, -0.3f, 0.3f);
    q8t_fill(&r, var, 5, 0.2f, 2.0f);
    cf(g, "w", 4, wd, w);
    cf(g, "b", 1, cd, b);
    int64_t pads[4] = {1, 1, 1, 1};
    set_ints(node(g, "Conv", "x,w,b", bn ? "c" : relu ? "bo" : "y"), "pads", pads, 4);
    if (bn) {
        cf(g, "gam", 1, cd, gam);
        cf(g, "bet", 1, cd, bet);
        cf(g, "mean", 1, cd, mean);
        cf(g, "var", 1, cd, var);
        node(g, "BatchNormalization", "c,gam,bet,mean,var", relu ? "bo" : "y");
    }
    if (relu) node(g, "Relu", "bo", "y");
    output(g, "y");
    return g;
}

Test(passes, batchnorm_and_relu_fold_into_the_conv) {
    q8_graph *g = conv_bn_relu(true, true);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->n_nodes, 1);
    cr_assert_str_eq(g->nodes[0]->op_type, "Conv");
    cr_assert_str_eq(q8_attr_str(g->nodes[0], "_act", ""), "Relu");
    q8_graph_free(g);
    /* reference: unfused Conv, then BN and Relu by hand */
    float x[378];
    q8t_rng r = q8t_seed(8);
    q8t_fill(&r, x, 378, -2, 2);
    float *conv = run1(conv_bn_relu(false, false), x);
    float *got = run1(conv_bn_relu(true, true), x);
    float gam[5], bet[5], mean[5], var[5], skip[140];
    q8t_rng r2 = q8t_seed(3);
    q8t_fill(&r2, skip, 135 + 5, 0, 1); /* same draws as the builder */
    q8t_fill(&r2, gam, 5, 0.5f, 1.5f);
    q8t_fill(&r2, bet, 5, -0.5f, 0.5f);
    q8t_fill(&r2, mean, 5, -0.3f, 0.3f);
    q8t_fill(&r2, var, 5, 0.2f, 2.0f);
    float want[630];
    for (int i = 0; i < 630; i++) {
        int c = (i / 63) % 5;
        float v = (conv[i] - mean[c]) / sqrtf(var[c] + 1e-5f) * gam[c] + bet[c];
        want[i] = v > 0 ? v : 0;
    }
    q8t_assert_close(got, want, 630, 1e-4f, 1e-5f, "conv+bn+relu");
    free(conv);
    free(got);
}

/* x -> Conv(3x3, pad 1, no bias) -> Add(k) -> Clip(0, 6), k of shape kd */
static q8_graph *conv_add_clip(int kn, const int64_t *kd, bool bias) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {2, 3, 9, 7}, wd[4] = {5, 3, 3, 3}, cd[1] = {5};
    input(g, "x", 4, xd);
    float w[135], b[5], k[63];
    q8t_rng r = q8t_seed(13);
    q8t_fill(&r, w, 135, -0.5f, 0.5f);
    q8t_fill(&r, b, 5, -0.2f, 0.2f);
    q8t_fill(&r, k, 63, -1, 1);
    cf(g, "w", 4, wd, w);
    cf(g, "b", 1, cd, b);
    cf(g, "k", kn, kd, k);
    int64_t pads[4] = {1, 1, 1, 1};
    set_ints(node(g, "Conv", bias ? "x,w,b" : "x,w", "c"), "pads", pads, 4);
    node(g, "Add", "k,c", "a"); /* the constant first: either side folds */
    scalar(g, "lo", 0);
    scalar(g, "hi", 6);
    node(g, "Clip", "a,lo,hi", "y");
    output(g, "y");
    return g;
}

/* TensorFlow's BiasAdd after a bias-free Conv: the Add of a per-channel
 * constant ([C, 1, 1], [1, C, 1, 1], a scalar) becomes the Conv's bias and
 * the Clip its activation; a constant that varies along H or W stays an
 * Add. The same values within rounding (the bias joins the sum first). */
Test(passes, per_channel_add_folds_into_the_conv_bias) {
    const int64_t c11[3] = {5, 1, 1}, c1111[4] = {1, 5, 1, 1}, one[1] = {1}, hw[2] = {9, 7};
    struct {
        int kn;
        const int64_t *kd;
        bool bias, folds;
    } cases[] = {{3, c11, false, true},  {4, c1111, true, true}, {1, one, false, true},
                 {2, hw, false, false}};
    float x[378];
    q8t_rng r = q8t_seed(14);
    q8t_fill(&r, x, 378, -2, 2);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        q8_graph *g = conv_add_clip(cases[i].kn, cases[i].kd, cases[i].bias);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(count_op(g, "Add"), cases[i].folds ? 0 : 1, "case %zu", i);
        if (cases[i].folds) {
            cr_assert_eq(g->n_nodes, 1, "case %zu", i);
            cr_assert_str_eq(q8_attr_str(g->nodes[0], "_act", ""), "Clip");
        }
        q8_graph_free(g);
        /* reference: the Conv alone, then the Add and the Clip by hand */
        q8_graph *h = conv_add_clip(cases[i].kn, cases[i].kd, cases[i].bias);
        h->nodes[1]->dead = h->nodes[2]->dead = true; /* Conv alone, output c */
        h->outputs[0] = q8_graph_find(h, "c");
        q8_graph_compact(h);
        float *conv = run1(h, x);
        float *got = run1(conv_add_clip(cases[i].kn, cases[i].kd, cases[i].bias), x);
        float k[63], want[630], skip[140];
        q8t_rng r2 = q8t_seed(13);
        q8t_fill(&r2, skip, 140, 0, 1); /* the builder's w and b draws */
        q8t_fill(&r2, k, 63, -1, 1);
        for (int j = 0; j < 630; j++) {
            int c = (j / 63) % 5, hwi = j % 63;
            float kv = cases[i].kn == 1 ? k[0] : cases[i].kn == 2 ? k[hwi] : k[c];
            float v = conv[j] + kv;
            want[j] = v < 0 ? 0 : v > 6 ? 6 : v;
        }
        char what[32];
        snprintf(what, sizeof what, "conv+add+clip case %zu", i);
        q8t_assert_close(got, want, 630, 1e-5f, 1e-5f, what);
        free(conv);
        free(got);
    }
}

Test(passes, identity_and_dropout_disappear) {
    q8_graph *g = q8_graph_new();
    int64_t d[1] = {4};
    input(g, "x", 1, d);
    node(g, "Identity", "x", "a");
    node(g, "Relu", "a", "b");
    node(g, "Dropout", "b", "c");
    node(g, "Identity", "c", "y");
    output(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->n_nodes, 1);
    cr_assert_str_eq(g->nodes[0]->op_type, "Relu");
    cr_assert_str_eq(g->tensors[g->outputs[0]]->name, "y", "the output keeps its name");
    q8_graph_free(g);
}

Test(passes, if_with_a_constant_condition_is_inlined) {
    for (int cond = 0; cond < 2; cond++) {
        q8_graph *g = q8_graph_new();
        int64_t d[1] = {3};
        input(g, "x", 1, d);
        int ct = T(g, "cond");
        q8_tensor_set_shape(g->tensors[ct], Q8_BOOL, d, 0);
        q8_tensor_alloc_data(g->tensors[ct], NULL);
        *(uint8_t *)g->tensors[ct]->data = (uint8_t)cond;
        q8_node *n = node(g, "If", "cond", "y");
        const char *br[2] = {"else_branch", "then_branch"};
        const char *op[2] = {"Neg", "Abs"};
        for (int k = 0; k < 2; k++) {
            q8_graph *b = q8_graph_new();
            b->parent = g;
            int xo = T(b, "x");
            b->tensors[xo]->outer = true;
            char out[16];
            snprintf(out, sizeof out, "r%d", k);
            node(b, op[k], "x", out);
            output(b, out);
            q8_node_set_attr(n, br[k], Q8_ATTR_GRAPH)->g = b;
        }
        output(g, "y");
        float x[3] = {-1, 2, -3};
        float *got = run1(g, x);
        for (int i = 0; i < 3; i++) cr_assert_float_eq(got[i], cond ? fabsf(x[i]) : -x[i], 0);
        free(got);
    }
}

Test(passes, dead_nodes_and_unused_constants_go) {
    q8_graph *g = q8_graph_new();
    int64_t d[1] = {4};
    input(g, "x", 1, d);
    node(g, "Relu", "x", "y");
    node(g, "Neg", "x", "unused");
    float w[4] = {1, 2, 3, 4};
    cf(g, "w", 1, d, w);
    node(g, "Mul", "unused,w", "unused2");
    output(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->n_nodes, 1);
    cr_assert(!g->tensors[q8_graph_find(g, "w")]->data, "the unused constant is freed");
    q8_graph_free(g);
}

Test(passes, shape_subgraph_folds_and_reshape_is_a_view) {
    q8_graph *g = q8_graph_new();
    int64_t d[4] = {2, 3, 4, 5};
    input(g, "x", 4, d);
    node(g, "Shape", "x", "s");
    int64_t idx0[1] = {0};
    ci(g, "i0", 1, idx0);
    node(g, "Gather", "s,i0", "n");
    int64_t m1[1] = {-1};
    ci(g, "m1", 1, m1);
    q8_node *cc = node(g, "Concat", "n,m1", "shape");
    q8_node_set_attr(cc, "axis", Q8_ATTR_INT)->i = 0;
    node(g, "Reshape", "x,shape", "y");
    output(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->n_nodes, 1);
    cr_assert_str_eq(g->nodes[0]->op_type, "Reshape");
    const q8_tensor *y = g->tensors[g->outputs[0]];
    cr_assert_eq(y->ndim, 2);
    cr_assert_eq(y->dims[0], 2);
    cr_assert_eq(y->dims[1], 60);
    q8_graph_free(g);
}

/* HardSwish fuses into the conv for FP32 runs (the op's formula; the
 * epilogue may contract it into FMAs, so not bit for bit), but not for
 * graphs that will be quantized. */
static q8_graph *conv_hardswish(void) {
    q8_graph *g = conv_bn_relu(false, false); /* x -> Conv -> y */
    node(g, "HardSwish", "y", "hs");
    g->outputs[0] = T(g, "hs");
    return g;
}

Test(passes, hardswish_fuses_only_for_fp32) {
    for (int quant = 0; quant < 2; quant++) {
        q8_graph *g = conv_hardswish();
        q8_error err = {0};
        q8_status s = quant ? q8_passes_run_for_quantize(g, NULL, &err) : q8_passes_run(g, NULL, &err);
        cr_assert_eq(s, Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, quant ? 2 : 1, "quant %d: %d nodes", quant, g->n_nodes);
        q8_graph_free(g);
    }
    float x[378];
    q8t_rng r = q8t_seed(8);
    q8t_fill(&r, x, 378, -2, 2);
    float *conv = run1(conv_bn_relu(false, false), x);
    float *got = run1(conv_hardswish(), x);
    for (int i = 0; i < 630; i++) {
        float v = conv[i], h = (1.0f / 6.0f) * v + 0.5f;
        float ref = h <= 0.0f ? -0.0f : h >= 1.0f ? v : v * h;
        cr_assert(fabsf(got[i] - ref) <= 1e-5f * fabsf(ref) + 1e-6f, "[%d] %.9g vs %.9g", i,
                  got[i], ref);
    }
    free(conv);
    free(got);
}

Test(passes, hardsigmoid_times_x_becomes_hardswish) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {9, 7};
    input(g, "x", 2, d);
    q8_node *h = node(g, "HardSigmoid", "x", "h");
    q8_node_set_attr(h, "alpha", Q8_ATTR_FLOAT)->f = 1.0f / 6.0f;
    node(g, "Mul", "x,h", "y");
    output(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->n_nodes, 1);
    cr_assert_str_eq(g->nodes[0]->op_type, "HardSwish");
    q8_graph_free(g);
}

/* HardSwish / HardSigmoid written out with Clip (paddle2onnx, Keras,
 * tf2onnx): x * Clip(x + 3, 0, 6) / 6, x * (Clip(x + 3, 0, 6) / 6),
 * Clip(x + 3, 0, 6) * (1/6) and (1/6 * x) * Clip(x + 3, 0, 6) become one op
 * each, with the same values. */
static q8_graph *relu6_form(int form) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {9, 7};
    input(g, "x", 2, d);
    scalar(g, "three", 3.0f);
    scalar(g, "zero", 0.0f);
    scalar(g, "six", 6.0f);
    scalar(g, "sixth", 1.0f / 6.0f);
    node(g, "Add", form == 1 ? "three,x" : "x,three", "a");
    node(g, "Clip", "a,zero,six", "c");
    if (form == 0) {
        node(g, "Mul", "x,c", "m");
        node(g, "Div", "m,six", "y");
    } else if (form == 1) {
        node(g, "Div", "c,six", "h");
        node(g, "Mul", "h,x", "y");
    } else if (form >= 3) {
        node(g, "Mul", "sixth,x", "s");
        node(g, "Mul", "s,c", "y");
        if (form == 4) /* float16's 1/6 (tf2onnx's CenterNet): HardSwish times 6k */
            *(float *)g->tensors[q8_graph_find(g, "sixth")]->data = 0.16662598f;
    } else {
        node(g, "Mul", "sixth,c", "y");
    }
    output(g, "y");
    return g;
}

Test(passes, clip_written_hardswish_and_hardsigmoid_become_one_op) {
    static const char *const want[] = {"HardSwish", "HardSwish", "HardSigmoid", "HardSwish",
                                       "HardSwish"};
    float x[63];
    q8t_rng r = q8t_seed(9);
    q8t_fill(&r, x, 63, -5, 5);
    x[0] = -3.0f, x[1] = 3.0f, x[2] = 0.0f;
    for (int form = 0; form < 5; form++) {
        q8_graph *g = relu6_form(form);
        q8_error err = {0};
        /* quantize's pipeline: a run's would fuse form 4's two nodes further
         * (q8.EwChain) */
        cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, form == 4 ? 2 : 1, "form %d: %d nodes", form, g->n_nodes);
        cr_assert_str_eq(g->nodes[0]->op_type, want[form]);
        if (form == 4) cr_assert_str_eq(g->nodes[1]->op_type, "Mul");
        q8_graph_free(g);
        float *got = run1(relu6_form(form), x);
        for (int i = 0; i < 63; i++) {
            float c = fminf(fmaxf(x[i] + 3.0f, 0.0f), 6.0f);
            float ref = form == 2 ? c / 6.0f : form == 4 ? x[i] * 0.16662598f * c : x[i] * c / 6.0f;
            cr_assert(fabsf(got[i] - ref) <= 1e-6f * (1 + fabsf(ref)), "form %d [%d] %.9g vs %.9g",
                      form, i, got[i], ref);
        }
        free(got);
    }
}

Test(passes, clip_written_hardswish_with_other_bounds_is_left_alone) {
    q8_graph *g = relu6_form(0);
    *(float *)g->tensors[q8_graph_find(g, "six")]->data = 5.0f; /* Clip(0, 5), / 5 */
    q8_error err = {0};
    /* quantize's pipeline: a run's would fuse the Add and Clip (q8.EwChain) */
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(count_op(g, "HardSwish"), 0);
    cr_assert_eq(count_op(g, "Clip"), 1);
    q8_graph_free(g);
}

/* Max / Min with a constant scalar become Clip with the same bits: ties
 * (3 against 3, -0 against +0 where c comes first), NaN passing through;
 * Max(x, 0) (a tie of -0 and +0 would give +0, Clip -0) and a broadcasting
 * constant are left alone. */
static q8_graph *bound_graph(const char *op, const char *ins, float c, int cdims) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {9, 7}, one[3] = {1, 1, 1};
    input(g, "x", 2, d);
    if (cdims == 0) scalar(g, "c", c);
    else cf(g, "c", cdims, one, &c); /* rank 2: same shape; rank 3 would grow y */
    node(g, op, ins, "y");
    output(g, "y");
    return g;
}

Test(passes, max_and_min_with_a_scalar_become_clip) {
    static const struct {
        const char *op, *ins;
        float c;
        bool clip;
    } cases[] = {{"Max", "x,c", 3.0f, true}, {"Max", "c,x", 0.0f, true},
                 {"Min", "x,c", -0.4f, true}, {"Min", "c,x", 0.0f, true},
                 {"Max", "x,c", 0.0f, false}, {"Min", "x,c", 0.0f, false}};
    float x[63];
    q8t_rng r = q8t_seed(11);
    q8t_fill(&r, x, 63, -5, 5);
    x[0] = 3.0f, x[1] = -0.0f, x[2] = 0.0f, x[3] = NAN, x[4] = -0.4f;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        q8_graph *g = bound_graph(cases[k].op, cases[k].ins, cases[k].c, 0);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(count_op(g, "Clip"), cases[k].clip ? 1 : 0, "case %zu", k);
        q8_graph_free(g);
        float *got = run1(bound_graph(cases[k].op, cases[k].ins, cases[k].c, 0), x);
        bool max = !strcmp(cases[k].op, "Max"), cfirst = cases[k].ins[0] == 'c';
        for (int i = 0; i < 63; i++) {
            float a = cfirst ? cases[k].c : x[i], b = cfirst ? x[i] : cases[k].c;
            /* ONNX Max / Min, NaN from either side; a tie gives the later input */
            float ref = a != a || (max ? a > b : a < b) ? a : b;
            cr_assert(memcmp(&got[i], &ref, 4) == 0 || (got[i] != got[i] && ref != ref),
                      "case %zu [%d] %g vs %g", k, i, got[i], ref);
        }
        free(got);
    }
    q8_graph *g = bound_graph("Max", "x,c", 1.0f, 3); /* c of rank 3: y [1, 9, 7] */
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(count_op(g, "Clip"), 0);
    q8_graph_free(g);
}

/* x [2, 3, 9, 7] -> AveragePool(kernel kh x kw, pads p) -> y */
static q8_graph *avgpool_graph(int64_t kh, int64_t kw, int64_t pad) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {2, 3, 9, 7}, k[2] = {kh, kw}, pads[4] = {pad, pad, pad, pad};
    input(g, "x", 4, xd);
    q8_node *n = node(g, "AveragePool", "x", "y");
    set_ints(n, "kernel_shape", k, 2);
    set_ints(n, "pads", pads, 4);
    output(g, "y");
    return g;
}

/* An AveragePool over the whole map is a GlobalAveragePool (the 16-lane
 * double sum); a smaller or padded window stays. The mean of each plane
 * either way, to float rounding. */
Test(passes, whole_map_average_pool_becomes_global) {
    static const struct {
        int64_t kh, kw, pad;
        bool global;
    } cases[] = {{9, 7, 0, true}, {9, 6, 0, false}, {9, 7, 1, false}, {3, 3, 0, false}};
    float x[2 * 3 * 9 * 7];
    q8t_rng r = q8t_seed(12);
    q8t_fill(&r, x, 2 * 3 * 9 * 7, -5, 5);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        q8_graph *g = avgpool_graph(cases[k].kh, cases[k].kw, cases[k].pad);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(count_op(g, "GlobalAveragePool"), cases[k].global ? 1 : 0, "case %zu", k);
        cr_assert_eq(count_op(g, "AveragePool"), cases[k].global ? 0 : 1, "case %zu", k);
        q8_graph_free(g);
    }
    float *got = run1(avgpool_graph(9, 7, 0), x);
    for (int p = 0; p < 6; p++) {
        double s = 0;
        for (int i = 0; i < 63; i++) s += x[p * 63 + i];
        cr_assert_float_eq(got[p], (float)(s / 63), 1e-6f, "plane %d: %g vs %g", p, got[p],
                           s / 63);
    }
    free(got);
}

/* a8 [ad] and b8 [bd] int8 inputs -> DequantizeLinear each -> Mul (gate
 * first when swap) -> QuantizeLinear -> y8; with also_float the product is
 * an output too. */
/* An int8 tensor named name: a graph input (data NULL) or a constant, with
 * n scales (per tensor, or along axis 0). */
static int i8_tensor(q8_graph *g, const char *name, const int64_t *dims, int nd,
                     const int8_t *data, const float *scales, int n) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_I8, dims, nd);
    float *sc = malloc(sizeof(float) * (size_t)n);
    memcpy(sc, scales, sizeof(float) * (size_t)n);
    g->tensors[t]->q = (q8_qparams){.axis = n > 1 ? 0 : -1, .n = n, .scale = sc};
    if (data) {
        cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
        memcpy(g->tensors[t]->data, data, (size_t)q8t_numel(dims, nd));
    } else {
        g->inputs = realloc(g->inputs, sizeof(int) * (size_t)(g->n_inputs + 1));
        g->inputs[g->n_inputs++] = t;
    }
    return t;
}

static q8_graph *dq_mul_q(const int64_t *ad, const int64_t *bd, int nd, bool swap,
                          bool also_float) {
    q8_graph *g = q8_graph_new();
    const char *names[2] = {"a8", "b8"};
    const int64_t *dims[2] = {ad, bd};
    float sc[2] = {0.0371f, 0.00391f};
    for (int k = 0; k < 2; k++) i8_tensor(g, names[k], dims[k], nd, NULL, &sc[k], 1);
    scalar(g, "sa", sc[0]);
    scalar(g, "sb", sc[1]);
    scalar(g, "sy", 0.0137f);
    int z = T(g, "z8"); /* an int8 zero point: int8 output, as quantize writes */
    int64_t one = 1;
    q8_tensor_set_shape(g->tensors[z], Q8_I8, &one, 0);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[z], NULL), Q8_OK);
    *(int8_t *)g->tensors[z]->data = 0;
    node(g, "DequantizeLinear", "a8,sa,z8", "af");
    node(g, "DequantizeLinear", "b8,sb", "bf");
    node(g, "Mul", swap ? "bf,af" : "af,bf", "v");
    node(g, "QuantizeLinear", "v,sy,z8", "y8");
    output(g, "y8");
    if (also_float) output(g, "v");
    return g;
}

/* q8_pass_fuse_float_muls: the three nodes become q8.QMulF with the same
 * bytes, on every backend (q8t_run_backends), for a per-channel gate on a
 * 9 x 11 map, a gate before the map in the Mul, a gate on 7 x 7 planes,
 * same-shape operands and an int8 range that saturates; not when the float
 * product is read elsewhere. */
Test(passes, dequantize_mul_quantize_becomes_qmulf) {
    static const struct {
        int64_t a[4], b[4];
        bool swap, also_float;
    } cases[] = {{{2, 6, 9, 11}, {2, 6, 1, 1}, false, false},
                 {{2, 6, 9, 11}, {2, 6, 1, 1}, true, false},
                 {{1, 96, 7, 7}, {1, 96, 1, 1}, false, false},
                 {{1, 3, 5, 17}, {1, 3, 5, 17}, true, false},
                 {{2, 6, 9, 11}, {2, 6, 1, 1}, false, true}};
    q8t_rng r = q8t_seed(13);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t na = 1, nb = 1;
        for (int d = 0; d < 4; d++) na *= cases[k].a[d], nb *= cases[k].b[d];
        int8_t *a = malloc((size_t)na), *b = malloc((size_t)nb);
        for (int64_t i = 0; i < na; i++) a[i] = (int8_t)(q8t_next(&r) % 256);
        for (int64_t i = 0; i < nb; i++) b[i] = (int8_t)(q8t_next(&r) % 256);
        a[0] = -128, a[1] = 127, b[0] = 127; /* a product past y's range */
        const void *in[2] = {a, b};
        void *want[2], *got[2];
        q8_tensor_info wi[2], gi[2];
        q8_error err = {0};
        int nout = cases[k].also_float ? 2 : 1;
        cr_assert_eq(q8t_run(dq_mul_q(cases[k].a, cases[k].b, 4, cases[k].swap,
                                      cases[k].also_float), in, 2, want, wi, nout, &err),
                     Q8_OK, "%s", err.msg);
        q8_graph *g = dq_mul_q(cases[k].a, cases[k].b, 4, cases[k].swap, cases[k].also_float);
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_pass_fuse_float_muls(g, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(count_op(g, "QMulF"), cases[k].also_float ? 0 : 1, "case %zu", k);
        cr_assert_eq(count_op(g, "Mul"), cases[k].also_float ? 1 : 0, "case %zu", k);
        cr_assert_eq(q8t_run_backends(g, in, 2, got, gi, nout, true, NULL, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert(memcmp(want[0], got[0], (size_t)na) == 0, "case %zu: not the three nodes' bytes",
                  k);
        for (int o = 0; o < nout; o++) free(want[o]), free(got[o]);
        free(a);
        free(b);
    }
}

/* Random int8 weights w [19, 3, 3, 3] with scales ws [19] and an int8
 * input x [2, 3, 9, 70] for the q8.QConv graphs below. */
static void qconv_data(uint64_t seed, int8_t *w, float *ws, int8_t *x) {
    q8t_rng r = q8t_seed(seed);
    for (int i = 0; i < 19 * 27; i++) w[i] = (int8_t)(q8t_next(&r) % 255 - 127);
    for (int i = 0; i < 19; i++) ws[i] = q8t_uniform(&r, 0.002f, 0.01f);
    for (int i = 0; i < 2 * 3 * 9 * 70; i++) x[i] = (int8_t)(q8t_next(&r) % 256);
}

/* x int8 [2, 3, 9, 70] at 0.05 -> q8.QConv (3x3, pad 1, W [M, 3, 3, 3]
 * with per-channel scales ws) -> c, int8 at 0.1, with conv_act (if any) as
 * its clamp, bounds -1 and 6. */
static q8_graph *qconv_graph(const int8_t *w, const float *ws, int64_t M, const char *conv_act) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {2, 3, 9, 70}, wd[4] = {M, 3, 3, 3};
    float sx = 0.05f;
    i8_tensor(g, "x", xd, 4, NULL, &sx, 1);
    i8_tensor(g, "w", wd, 4, w, ws, (int)M);
    q8_node *c = node(g, "QConv", "x,w", "c");
    free(c->domain);
    c->domain = q8_strdup("q8");
    int64_t k[2] = {3, 3}, pads[4] = {1, 1, 1, 1};
    set_ints(c, "kernel_shape", k, 2);
    set_ints(c, "pads", pads, 4);
    q8_node_set_attr(c, "y_scale", Q8_ATTR_FLOAT)->f = 0.1f;
    if (conv_act) {
        q8_node_set_attr(c, "_act", Q8_ATTR_STRING)->s = q8_strdup(conv_act);
        q8_node_set_attr(c, "_act_min", Q8_ATTR_FLOAT)->f = -1.0f;
        q8_node_set_attr(c, "_act_max", Q8_ATTR_FLOAT)->f = 6.0f;
    }
    return g;
}

/* q8.QConv (int8 out) -> MaxPool -> Relu; with pool_out the pooled map is
 * an output too (then the Relu cannot move). */
static q8_graph *qconv_pool_relu(const int8_t *w, const float *ws, int64_t M, bool pool_out,
                                 const char *conv_act) {
    q8_graph *g = qconv_graph(w, ws, M, conv_act);
    int64_t two[2] = {2, 2};
    q8_node *mp = node(g, "MaxPool", "c", "p");
    set_ints(mp, "kernel_shape", two, 2);
    set_ints(mp, "strides", two, 2);
    node(g, "Relu", "p", "y");
    output(g, "y");
    if (pool_out) output(g, "p");
    return g;
}

/* An int8 Relu after a MaxPool of a q8.QConv's output moves into the
 * conv's clamp: the same bytes (max commutes with the clamp at 0), on every
 * backend, and one node less; not when the pooled map is read elsewhere or
 * the conv has an activation already. */
Test(passes, int8_relu_after_a_pool_moves_into_the_conv) {
    const int64_t M = 19;
    int8_t w[19 * 27], x[2 * 3 * 9 * 70];
    float ws[19];
    qconv_data(17, w, ws, x);
    const void *in[1] = {x};
    q8_error err = {0};
    void *want[2], *got[1];
    q8_tensor_info wi[2], gi[1];
    /* the reference: the Relu stays a node (the pooled map is an output) */
    q8_graph *g = qconv_pool_relu(w, ws, M, true, NULL);
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(count_op(g, "Relu"), 1, "the pooled map is read: the Relu stays");
    q8_graph_free(g);
    cr_assert_eq(q8t_run(qconv_pool_relu(w, ws, M, true, NULL), in, 2, want, wi, 2, &err), Q8_OK,
                 "%s", err.msg);
    int64_t n = q8t_numel(wi[0].dims, wi[0].ndim);
    cr_assert_eq(n, 2 * M * 4 * 35);
    int neg = 0;
    for (int64_t i = 0; i < n; i++) neg += ((const int8_t *)want[1])[i] < 0;
    cr_assert(neg > n / 50, "the pooled map has negative values for the Relu to clamp (%d of %lld)", neg, (long long)n);
    g = qconv_pool_relu(w, ws, M, false, NULL);
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(count_op(g, "Relu"), 0);
    cr_assert_eq(count_op(g, "MaxPool"), 1);
    int others = -1;
    cr_assert_eq(q8t_run_backends(g, in, 2, got, gi, 1, true, &others, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(others, q8t_other_backends());
    cr_assert(memcmp(want[0], got[0], (size_t)n) == 0, "not the three nodes' bytes");
    free(want[0]), free(want[1]), free(got[0]);
    /* a conv with its own activation keeps it, and the Relu stays */
    g = qconv_pool_relu(w, ws, M, false, "Clip");
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(count_op(g, "Relu"), 1);
    q8_graph_free(g);
}

/* q8_graph_clone: quantize's --calib-method auto makes each candidate's
 * INT8 graph from a copy of the calibration graph sharing its weights. */
Test(passes, a_clone_shares_or_copies_constants_and_computes_the_same) {
    float x[378];
    q8t_rng r = q8t_seed(5);
    q8t_fill(&r, x, 378, -2, 2);
    float *want = run1(conv_bn_relu(true, true), x);
    q8_graph *g = conv_bn_relu(true, true);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    for (int share = 0; share < 2; share++) {
        q8_graph *c = NULL;
        cr_assert_eq(q8_graph_clone(g, share, &c, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(c->n_tensors, g->n_tensors);
        cr_assert_eq(c->n_nodes, g->n_nodes);
        int n_const = 0;
        for (int i = 0; i < g->n_tensors; i++) {
            const q8_tensor *a = g->tensors[i], *b = c->tensors[i];
            cr_assert_str_eq(a->name, b->name);
            cr_assert_eq(q8_graph_find(c, a->name), i, "the copy's name map");
            if (!a->data) continue;
            n_const++;
            cr_assert_eq(b->data == a->data, share, "%s: shared only when asked", a->name);
            cr_assert_eq(b->owns_data, !share);
            cr_assert_eq(memcmp(a->data, b->data, q8_tensor_nbytes(a)), 0);
        }
        cr_assert_gt(n_const, 0);
        for (int i = 0; i < g->n_nodes; i++)
            cr_assert_not_null(c->nodes[i]->params, "params made again by inference");
        float *got = run1(c, x); /* runs and frees the copy */
        cr_assert_eq(memcmp(got, want, sizeof(float) * 630), 0, "share %d", share);
        free(got);
    }
    /* running and freeing the copies left the source's weights alone */
    float *again = run1(g, x);
    cr_assert_eq(memcmp(again, want, sizeof(float) * 630), 0);
    free(again);
    free(want);
}

Test(passes, a_graph_with_subgraphs_is_not_copied) {
    q8_graph *g = q8_graph_new();
    int64_t d[1] = {3};
    input(g, "x", 1, d);
    q8_node *n = node(g, "If", "x", "y");
    q8_graph *b = q8_graph_new();
    b->parent = g;
    node(b, "Neg", "x", "r");
    output(b, "r");
    q8_node_set_attr(n, "then_branch", Q8_ATTR_GRAPH)->g = b;
    output(g, "y");
    q8_error err = {0};
    q8_graph *c = (q8_graph *)1;
    cr_assert_eq(q8_graph_clone(g, true, &c, &err), Q8_ERR_UNSUPPORTED);
    cr_assert_null(c);
    cr_assert(strstr(err.msg, "subgraphs"), "%s", err.msg);
    q8_graph_free(g);
}

/* A few bytes of constants asking for gigabytes (ConstantOfShape of
 * [2^30, 4]: 16 GiB) are not computed at load: the node stays and runs
 * with the session; a small one still folds. The load must not allocate
 * the output (it would fail, or take the machine's memory). */
Test(passes, folds_that_would_grow_gigabytes_stay_nodes) {
    q8_graph *g = q8_graph_new();
    int64_t big[2] = {(int64_t)1 << 30, 4}, small[2] = {2, 3}, two[1] = {2};
    ci(g, "big", 1, two);
    memcpy(g->tensors[q8_graph_find(g, "big")]->data, big, sizeof big);
    ci(g, "small", 1, two);
    memcpy(g->tensors[q8_graph_find(g, "small")]->data, small, sizeof small);
    node(g, "ConstantOfShape", "big", "huge");
    node(g, "ConstantOfShape", "small", "tiny");
    output(g, "huge");
    output(g, "tiny");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *huge = g->tensors[q8_graph_find(g, "huge")];
    const q8_tensor *tiny = g->tensors[q8_graph_find(g, "tiny")];
    cr_assert(!huge->data, "16 GiB computed at load");
    cr_assert_eq(huge->dims[0], (int64_t)1 << 30, "the shape is still known");
    cr_assert(tiny->data, "the small one folds");
    cr_assert_eq(g->n_nodes, 1);
    cr_assert_str_eq(g->nodes[0]->op_type, "ConstantOfShape");
    q8_graph_free(g);
}

/* ---- q8_pass_fuse_ewchains ---- */

static void attr_f(q8_node *n, const char *name, float v) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_FLOAT);
    cr_assert_not_null(a);
    a->f = v;
}

static void int_input(q8_graph *g, const char *name, q8_dtype dt, const int64_t *dims, int nd) {
    input(g, name, nd, dims);
    g->tensors[T(g, name)]->dtype = dt;
}

static void int_scalar(q8_graph *g, const char *name, q8_dtype dt, int v) {
    int t = T(g, name);
    int64_t one = 1;
    q8_tensor_set_shape(g->tensors[t], dt, &one, 0);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    if (dt == Q8_I8) *(int8_t *)g->tensors[t]->data = (int8_t)v;
    else *(uint8_t *)g->tensors[t]->data = (uint8_t)v;
}

/* The chains of the test below. Variant 0: float32 in and out through every
 * step kind (both operand orders of Sub and Div, a Clip with one bound);
 * 1: int8 in (zero point -5) dequantized, PP-OCR's Mul, Add, HardSwish,
 * Mul, Add, quantized to int8; 2: uint8 in and out (zero points 128, 120)
 * around Relu, Mul; 3: 18 steps, more than one q8.EwChain holds; 4: Mul,
 * HardSwish, its -0 for h <= 0 the output (a later step may lose it); 5:
 * int32 in through a Cast, Sub and Mul by [1, 1, 1, 19] constants of one
 * value, Sub 1 (MoveNet's image); 6: the same with a Mul by 19 values (not
 * a step: the Cast and Sub fuse, the Mul and the last Sub stay); 7: Mul,
 * SiLU (Sigmoid, Mul(v, s)), Add, SiLU in the other order (Mul(s, v)); 8:
 * SiLU at the head, then Relu; 9: a BatchNormalization (dims[1] channels,
 * a zero and a negative scale), Relu, Mul; 10: int8 in dequantized, a
 * BatchNormalization, Relu, quantized to int8 (DenseNet's BN -> Relu
 * before each int8 conv); 11: the same without the Relu (a chain of no
 * steps). all_out:
 * every intermediate tensor is a graph output too, so nothing fuses (the
 * nodes one by one: the reference). Output 0 is the chain's end. */
static q8_graph *ew_chain_graph(const int64_t *dims, int nd, int variant, bool all_out) {
    q8_graph *g = q8_graph_new();
    g->opset = 17;
    char cur[32] = "x", nxt[32], cn[32];
    int steps = 0;
    const char *mids[40];
    int n_mid = 0;
#define EW_NEXT() (snprintf(nxt, sizeof nxt, "t%d", steps), snprintf(cn, sizeof cn, "c%d", steps++))
#define EW_BIN(OP, C, LEFT)                                                              \
    do {                                                                                 \
        EW_NEXT();                                                                       \
        scalar(g, cn, C);                                                                \
        char ins_[80];                                                                   \
        snprintf(ins_, sizeof ins_, LEFT ? "%s,%s" : "%2$s,%1$s", cur, cn);              \
        node(g, OP, ins_, nxt);                                                          \
        mids[n_mid++] = q8_strdup(nxt);                                                  \
        snprintf(cur, sizeof cur, "%s", nxt);                                            \
    } while (0)
#define EW_UN(OP)                                                                        \
    (EW_NEXT(), mids[n_mid++] = q8_strdup(nxt), node(g, OP, cur, nxt))
    /* Sigmoid, then the Mul of its input by it (SIG_FIRST: Mul(s, v)) */
#define EW_SWISH(SIG_FIRST)                                                              \
    do {                                                                                 \
        char s_[32], ins_[80];                                                           \
        EW_NEXT();                                                                       \
        snprintf(s_, sizeof s_, "%s", nxt);                                              \
        node(g, "Sigmoid", cur, s_);                                                     \
        mids[n_mid++] = q8_strdup(s_);                                                   \
        EW_NEXT();                                                                       \
        snprintf(ins_, sizeof ins_, SIG_FIRST ? "%2$s,%1$s" : "%1$s,%2$s", cur, s_);     \
        node(g, "Mul", ins_, nxt);                                                       \
        mids[n_mid++] = q8_strdup(nxt);                                                  \
        snprintf(cur, sizeof cur, "%s", nxt);                                            \
    } while (0)
    if (variant == 1 || variant == 2 || variant >= 10) {
        q8_dtype dt = variant == 2 ? Q8_U8 : Q8_I8;
        int_input(g, "x8", dt, dims, nd);
        scalar(g, "xs", 0.0421f);
        int_scalar(g, "xz", dt, variant == 2 ? 128 : -5);
        node(g, "DequantizeLinear", "x8,xs,xz", "x");
        mids[n_mid++] = q8_strdup("x");
    } else if (variant == 5 || variant == 6) {
        int_input(g, "x32", Q8_I32, dims, nd);
        q8_node *c = node(g, "Cast", "x32", "x");
        q8_node_set_attr(c, "to", Q8_ATTR_INT)->i = 1; /* float */
        mids[n_mid++] = q8_strdup("x");
    } else {
        input(g, "x", nd, dims);
    }
    if (variant >= 9) {
        /* per channel: scale, B, mean, var */
        float st[4][64];
        const int64_t cd[1] = {dims[1]};
        for (int64_t c = 0; c < dims[1] && c < 64; c++) {
            st[0][c] = c == 1 ? 0.0f : c == 2 ? -0.7f : 0.5f + 0.173f * (float)c;
            st[1][c] = 0.31f * (float)c - 0.4f;
            st[2][c] = 0.05f * (float)c - 0.1f;
            st[3][c] = 0.2f + 0.37f * (float)c;
        }
        cf(g, "bs", 1, cd, st[0]);
        cf(g, "bb", 1, cd, st[1]);
        cf(g, "bm", 1, cd, st[2]);
        cf(g, "bv", 1, cd, st[3]);
        EW_NEXT();
        char ins[80];
        snprintf(ins, sizeof ins, "%s,bs,bb,bm,bv", cur);
        attr_f(node(g, "BatchNormalization", ins, nxt), "epsilon", 1e-3f);
        mids[n_mid++] = q8_strdup(nxt);
        snprintf(cur, sizeof cur, "%s", nxt);
        if (variant < 11) {
            EW_UN("Relu");
            snprintf(cur, sizeof cur, "%s", nxt);
        }
        if (variant == 9) EW_BIN("Mul", 1.5f, true);
    } else if (variant == 0) {
        EW_BIN("Mul", 1.3841065f, false);
        EW_BIN("Add", 0.58607715f, true);
        EW_UN("HardSwish");
        snprintf(cur, sizeof cur, "%s", nxt);
        EW_BIN("Sub", 0.75f, false); /* c - v */
        EW_BIN("Div", 3.3f, true);
        EW_UN("Relu");
        snprintf(cur, sizeof cur, "%s", nxt);
        attr_f(EW_UN("LeakyRelu"), "alpha", 0.1f);
        snprintf(cur, sizeof cur, "%s", nxt);
        EW_BIN("Sub", 0.25f, true);
        EW_NEXT();
        scalar(g, "lo", -0.2f);
        scalar(g, "hi", 0.9f);
        char ins[80];
        snprintf(ins, sizeof ins, "%s,lo,hi", cur);
        node(g, "Clip", ins, nxt);
        mids[n_mid++] = q8_strdup(nxt);
        snprintf(cur, sizeof cur, "%s", nxt);
        q8_node *hs = EW_UN("HardSigmoid");
        attr_f(hs, "alpha", 0.3f);
        attr_f(hs, "beta", 0.45f);
        snprintf(cur, sizeof cur, "%s", nxt);
        EW_BIN("Div", 0.5f, false); /* c / v */
        EW_NEXT();
        snprintf(ins, sizeof ins, "%s,lo", cur);
        node(g, "Clip", ins, nxt);
        mids[n_mid++] = q8_strdup(nxt);
        snprintf(cur, sizeof cur, "%s", nxt);
    } else if (variant == 1) {
        EW_BIN("Mul", 2.111558f, false);
        EW_BIN("Add", 1.0563203f, true);
        EW_UN("HardSwish");
        snprintf(cur, sizeof cur, "%s", nxt);
        EW_BIN("Mul", 0.18280847f, false);
        EW_BIN("Add", -0.20085478f, true);
    } else if (variant == 2) {
        EW_UN("Relu");
        snprintf(cur, sizeof cur, "%s", nxt);
        EW_BIN("Mul", 1.7f, true);
    } else if (variant == 3) {
        for (int k = 0; k < 9; k++) {
            EW_BIN("Mul", 1.01f + 0.01f * (float)k, k % 2);
            EW_BIN("Add", 0.1f * (float)k - 0.4f, true);
        }
    } else if (variant == 7) {
        EW_BIN("Mul", 0.7f, true);
        EW_SWISH(false);
        EW_BIN("Add", 0.1f, true);
        EW_SWISH(true);
    } else if (variant == 8) {
        EW_SWISH(false);
        EW_UN("Relu");
        snprintf(cur, sizeof cur, "%s", nxt);
    } else if (variant == 4) {
        EW_BIN("Mul", 0.9f, true);
        EW_UN("HardSwish");
        snprintf(cur, sizeof cur, "%s", nxt);
    } else {
        /* MoveNet's image: Sub and Mul by [1, 1, 1, C] constants of one
         * value (variant 5: a chain), or of several (6: left alone) */
        float k[19], z[19];
        for (int i = 0; i < 19; i++) {
            k[i] = variant == 5 ? 0.00784302f : 0.01f * (float)(i + 1);
            z[i] = 0.0f;
        }
        const int64_t kd[4] = {1, 1, 1, 19};
        cf(g, "kz", 4, kd, z);
        cf(g, "kk", 4, kd, k);
        node(g, "Sub", "x,kz", "xs0");
        node(g, "Mul", "xs0,kk", "xm");
        mids[n_mid++] = q8_strdup("xs0");
        mids[n_mid++] = q8_strdup("xm");
        snprintf(cur, sizeof cur, "xm");
        EW_BIN("Sub", 1.0f, true);
    }
    if (variant == 1 || variant == 2 || variant >= 10) {
        q8_dtype dt = variant == 2 ? Q8_U8 : Q8_I8;
        scalar(g, "ys", 0.0137f);
        int_scalar(g, "yz", dt, variant == 2 ? 120 : 0);
        char ins[80];
        snprintf(ins, sizeof ins, "%s,ys,yz", cur);
        node(g, "QuantizeLinear", ins, "y");
        mids[n_mid++] = q8_strdup(cur);
        output(g, "y");
    } else {
        output(g, cur);
        free((void *)mids[--n_mid]); /* cur is output 0 already */
    }
    for (int k = 0; k < n_mid; k++) {
        if (all_out) output(g, mids[k]);
        free((void *)mids[k]);
    }
#undef EW_NEXT
#undef EW_BIN
#undef EW_UN
#undef EW_SWISH
    return g;
}

/* ew_chain_graph's variant on input x (shape dims; tag: a label for the
 * messages): the passes leave `chains` q8.EwChain nodes and `nodes` nodes
 * in all, and every backend gives the unfused nodes' bytes. */
static void check_chain(const int64_t *dims, int variant, const void *x, int chains, int nodes,
                        int tag) {
    const void *in[1] = {x};
    void *want[40], *got[1];
    q8_tensor_info wi[40], gi[1];
    q8_error err = {0};
    q8_graph *ref = ew_chain_graph(dims, 4, variant, true);
    int nref = ref->n_outputs;
    cr_assert_eq(q8t_run(ref, in, 2, want, wi, nref, &err), Q8_OK, "%s", err.msg);
    q8_graph *g = ew_chain_graph(dims, 4, variant, false);
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(count_op(g, "EwChain"), chains, "%d: variant %d", tag, variant);
    cr_assert_eq(g->n_nodes, nodes, "%d: variant %d: nodes left", tag, variant);
    cr_assert_eq(q8t_run_backends(g, in, 2, got, gi, 1, true, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(gi[0].dtype, wi[0].dtype);
    cr_assert(memcmp(want[0], got[0], q8t_info_bytes(&wi[0])) == 0,
              "%d: variant %d: not the nodes' bytes", tag, variant);
    for (int o = 0; o < nref; o++) free(want[o]);
    free(got[0]);
}

/* q8_pass_fuse_ewchains (in q8_passes_run): each chain becomes q8.EwChain
 * with the nodes' bytes, on every backend: a float map whose size leaves
 * tails of the vector loops and of the 1024-element blocks, with -0, +-inf,
 * NaN and values near HardSwish's and the Clip's corners; int8 / uint8 at
 * either end. */
Test(passes, elementwise_chains_become_one_node) {
    const int64_t dims[4] = {2, 3, 17, 19};
    const int64_t n = 2 * 3 * 17 * 19;
    const int want_chains[9] = {1, 1, 1, 2, 1, 1, 1, 1, 1};
    const int want_nodes[9] = {1, 1, 1, 2, 1, 1, 3, 1, 1};
    q8t_rng r = q8t_seed(17);
    float *xf = malloc(sizeof(float) * (size_t)n);
    uint8_t *x8 = malloc((size_t)n);
    q8t_fill(&r, xf, n, -6, 6);
    /* and a signalling NaN (its quieting is part of the bytes) */
    const uint32_t snan_bits = 0x7f800001u;
    float snan;
    memcpy(&snan, &snan_bits, sizeof snan);
    const float specials[] = {-0.0f, 0.0f, INFINITY, -INFINITY, NAN, -3.0f, 3.0f, 1e30f, -1e30f,
                              snan};
    for (int64_t i = 0; i < n; i += 37) xf[i] = specials[(i / 37) % 10];
    for (int64_t i = 0; i < n; i++) x8[i] = (uint8_t)(q8t_next(&r) % 256);
    int32_t *x32 = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) /* image values, and a few past float's 24 bits */
        x32[i] = i % 53 == 7 ? (int32_t)(q8t_next(&r) >> 33) : (int32_t)(q8t_next(&r) % 256);
    for (int variant = 0; variant < 9; variant++)
        check_chain(dims, variant,
                    variant == 1 || variant == 2   ? (const void *)x8
                    : variant == 5 || variant == 6 ? (const void *)x32
                                                   : (const void *)xf,
                    want_chains[variant], want_nodes[variant], 0);
    free(xf);
    free(x8);
    free(x32);
}

/* A BatchNormalization no conv took in leads a q8.EwChain: the nodes'
 * bytes on every backend, with channel rows shorter than the chain's
 * 1024-element blocks (17 x 19) and longer with a tail (41 x 37), one and
 * two images, float and int8 at the ends. */
Test(passes, batchnorm_leads_a_chain) {
    const int64_t shapes[2][4] = {{2, 3, 17, 19}, {1, 5, 41, 37}};
    q8t_rng r = q8t_seed(29);
    for (int sh = 0; sh < 2; sh++) {
        const int64_t *dims = shapes[sh];
        int64_t n = dims[0] * dims[1] * dims[2] * dims[3];
        float *xf = malloc(sizeof(float) * (size_t)n);
        uint8_t *x8 = malloc((size_t)n);
        q8t_fill(&r, xf, n, -6, 6);
        const float specials[] = {-0.0f, INFINITY, -INFINITY, NAN};
        for (int64_t i = 0; i < n; i += 41) xf[i] = specials[(i / 41) % 4];
        for (int64_t i = 0; i < n; i++) x8[i] = (uint8_t)(q8t_next(&r) % 256);
        for (int variant = 9; variant <= 11; variant++)
            check_chain(dims, variant, variant >= 10 ? (const void *)x8 : (const void *)xf, 1, 1,
                        sh);
        free(xf);
        free(x8);
    }
}

/* q8.EwChain's infer refuses what a damaged .q8 could hold, with one line:
 * an unknown step, consts not two a step, a scale on the wrong side, a zero
 * point outside its type. */
Test(passes, ewchain_attributes_are_checked) {
    static const struct {
        int64_t kind;
        int n_consts;
        bool x8, bad_scale, bad_zp;
        const char *msg;
    } cases[] = {{99, 2, false, false, false, "unknown kind"},
                 {1, 3, false, false, false, "consts must be 2 floats"},
                 {1, 2, true, false, false, "x_scale needs int8"},
                 {1, 2, false, true, false, "y_scale must be a finite float > 0"},
                 {1, 2, false, false, true, "y_zero_point 300"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        q8_graph *g = q8_graph_new();
        int64_t d[2] = {2, 3};
        input(g, "x", 2, d);
        q8_node *n = node(g, "EwChain", "x", "y");
        free(n->domain);
        n->domain = q8_strdup("q8");
        set_ints(n, "steps", &cases[k].kind, 1);
        q8_attr *c = q8_node_set_attr(n, "consts", Q8_ATTR_FLOATS);
        c->floats = calloc(4, sizeof(float));
        c->n = cases[k].n_consts;
        if (cases[k].x8) attr_f(n, "x_scale", 0.5f);
        if (cases[k].bad_scale) attr_f(n, "y_scale", -1.0f);
        if (cases[k].bad_zp) {
            attr_f(n, "y_scale", 0.5f);
            q8_node_set_attr(n, "y_zero_point", Q8_ATTR_INT)->i = 300;
        }
        output(g, "y");
        q8_error err = {0};
        cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK, "case %zu", k);
        cr_assert(strstr(err.msg, cases[k].msg), "case %zu: %s", k, err.msg);
        q8_graph_free(g);
    }
}

/* remove_identity: views that end at their first input's shape go (a
 * Squeeze undone by an Unsqueeze, twice: MoveNet's image); a pair that
 * moves the axis stays. */
Test(passes, view_round_trips_are_removed) {
    for (int moved = 0; moved < 2; moved++) {
        q8_graph *g = q8_graph_new();
        g->opset = 13;
        int64_t d[4] = {1, 5, 6, 3}, a0 = 0, a3 = 3;
        input(g, "x", 4, d);
        ci(g, "ax0", 1, &a0);
        ci(g, "ax3", 1, &a3);
        node(g, "Squeeze", "x,ax0", "s1");
        node(g, "Unsqueeze", "s1,ax0", "u1");
        node(g, "Squeeze", "u1,ax0", "s2");
        node(g, "Unsqueeze", moved ? "s2,ax3" : "s2,ax0", "u2");
        node(g, "Relu", "u2", "y");
        output(g, "y");
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        int views = count_op(g, "Squeeze") + count_op(g, "Unsqueeze");
        cr_assert_eq(views, moved ? 2 : 0, "moved %d: %d views", moved, views);
        q8_graph_free(g);
    }
}

/* x -> Conv(3x3, pad 1; groups g) -> Mul(k) -> Add(b) -> Relu, k and b of
 * shape kd (kn dims); TensorFlow's BatchNorm after a conv, as FaceRes
 * writes it. */
static q8_graph *conv_mul_add_relu(int kn, const int64_t *kd, int64_t groups) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {2, 4, 9, 7}, wd[4] = {8, 4 / groups, 3, 3};
    input(g, "x", 4, xd);
    float w[8 * 4 * 9], k[63], b[63];
    q8t_rng r = q8t_seed(31);
    q8t_fill(&r, w, 8 * 4 * 9, -0.5f, 0.5f);
    q8t_fill(&r, k, 63, -2, 2);
    q8t_fill(&r, b, 63, -1, 1);
    cf(g, "w", 4, wd, w);
    cf(g, "k", kn, kd, k);
    cf(g, "b", kn, kd, b);
    int64_t pads[4] = {1, 1, 1, 1};
    q8_node *c = node(g, "Conv", "x,w", "c");
    set_ints(c, "pads", pads, 4);
    if (groups > 1) q8_node_set_attr(c, "group", Q8_ATTR_INT)->i = groups;
    node(g, "Mul", "c,k", "m");
    node(g, "Add", "b,m", "a");
    node(g, "Relu", "a", "y");
    output(g, "y");
    return g;
}

/* A Mul by a per-channel constant after a Conv folds into its weights (and
 * the Add after it into the bias): one node, the same values within
 * rounding; a scalar or an H x W constant stays a Mul. */
Test(passes, per_channel_mul_folds_into_the_conv_weights) {
    const int64_t c11[3] = {8, 1, 1}, c1111[4] = {1, 8, 1, 1}, one[1] = {1}, hw[2] = {9, 7};
    struct {
        int kn;
        const int64_t *kd;
        int64_t groups;
        bool folds;
    } cases[] = {{3, c11, 1, true}, {4, c1111, 4, true}, {1, one, 1, false}, {2, hw, 2, false}};
    float x[504];
    q8t_rng r = q8t_seed(32);
    q8t_fill(&r, x, 504, -2, 2);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        q8_graph *g = conv_mul_add_relu(cases[i].kn, cases[i].kd, cases[i].groups);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        /* folded: conv, mul, add and relu in one node; else the Mul stays
         * (in a q8.EwChain with the Add and Relu) */
        if (cases[i].folds) cr_assert_eq(g->n_nodes, 1, "case %zu", i);
        else cr_assert_eq(count_op(g, "Mul") + count_op(g, "EwChain"), 1, "case %zu", i);
        q8_graph_free(g);
        /* reference: the Conv alone, then Mul, Add and Relu by hand */
        q8_graph *h = conv_mul_add_relu(cases[i].kn, cases[i].kd, cases[i].groups);
        h->nodes[1]->dead = h->nodes[2]->dead = h->nodes[3]->dead = true;
        h->outputs[0] = q8_graph_find(h, "c");
        q8_graph_compact(h);
        float *conv = run1(h, x);
        float *got = run1(conv_mul_add_relu(cases[i].kn, cases[i].kd, cases[i].groups), x);
        float k[63], b[63], skip[288];
        q8t_rng r2 = q8t_seed(31);
        q8t_fill(&r2, skip, 288, 0, 1); /* the builder's w draws */
        q8t_fill(&r2, k, 63, -2, 2);
        q8t_fill(&r2, b, 63, -1, 1);
        float want[1008];
        for (int j = 0; j < 1008; j++) {
            int c = (j / 63) % 8, hwi = j % 63;
            int at = cases[i].kn == 1 ? 0 : cases[i].kn == 2 ? hwi : c;
            float v = conv[j] * k[at] + b[at];
            want[j] = v > 0 ? v : 0;
        }
        char what[32];
        snprintf(what, sizeof what, "conv+mul+add+relu case %zu", i);
        q8t_assert_close(got, want, 1008, 1e-5f, 1e-5f, what);
        free(conv);
        free(got);
    }
}

/* x -> Relu -> Min(6) -> Max(0) -> y (FaceRes's ReLU6 with a Max it does
 * not need); with `relu` false, x -> Clip(-1, 6) -> Max(0): there the Max
 * does clamp. */
static q8_graph *relu6_then_max0(bool relu) {
    q8_graph *g = q8_graph_new();
    int64_t xd[2] = {4, 16};
    input(g, "x", 2, xd);
    scalar(g, "six", 6);
    scalar(g, "zero", 0);
    scalar(g, "m1", -1);
    if (relu) {
        node(g, "Relu", "x", "r");
        node(g, "Min", "r,six", "c");
    } else {
        node(g, "Clip", "x,m1,six", "c");
    }
    node(g, "Max", "c,zero", "y");
    output(g, "y");
    return g;
}

/* A Max(X, 0) of an X that is never below 0 (a Relu's output, clipped to
 * 6) goes: the same values, NaN and infinities included (a -0 may stay -0
 * where the Max made it +0); after a Clip that lets negative values through
 * it stays. */
Test(passes, max_zero_after_a_relu_is_removed) {
    float x[64];
    q8t_rng r = q8t_seed(33);
    q8t_fill(&r, x, 64, -8, 8);
    x[0] = -0.0f, x[1] = 0.0f, x[2] = NAN, x[3] = 6.0f, x[4] = -INFINITY, x[5] = INFINITY;
    for (int relu = 0; relu < 2; relu++) {
        q8_graph *g = relu6_then_max0(relu);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(count_op(g, "Max"), relu ? 0 : 1, "relu %d", relu);
        q8_graph_free(g);
        float *got = run1(relu6_then_max0(relu), x);
        for (int i = 0; i < 64; i++) {
            float v = x[i], want;
            if (relu) { /* q8's Relu as a node: NaN stays NaN */
                v = v < 0 ? 0 : v;
                want = v > 6 ? 6 : v;
            } else { /* Clip keeps NaN and -0; Max(X, 0) gives the later input on a tie */
                v = v < -1 ? -1 : v > 6 ? 6 : v;
                want = v > 0 || v != v ? v : 0;
            }
            /* -0 and +0 alike: q8's Relu gives -0 for -0 as a node, +0 fused */
            cr_assert(got[i] == want || (want != want && got[i] != got[i]),
                      "relu %d, x[%d] = %g: %g, want %g", relu, i, x[i], got[i], want);
        }
        free(got);
    }
}

/* q8.QConv (int8 out at 0.1, clamp conv_act with bounds -1 and 6) -> int8
 * Clip(lo, hi) (absent when NO_BOUND); with conv_out the conv's map is an
 * output too (then the Clip cannot move). */
enum { NO_BOUND = 1000 };
static q8_graph *qconv_clip(const int8_t *w, const float *ws, int64_t M, bool conv_out,
                            const char *conv_act, int lo, int hi) {
    q8_graph *g = qconv_graph(w, ws, M, conv_act);
    float sy = 0.1f;
    int_scalar(g, "lo", Q8_I8, lo == NO_BOUND ? 0 : lo);
    int_scalar(g, "hi", Q8_I8, hi == NO_BOUND ? 0 : hi);
    node(g, "Clip", lo == NO_BOUND ? "c,,hi" : hi == NO_BOUND ? "c,lo" : "c,lo,hi", "y");
    int yt = T(g, "y");
    float *s = malloc(sizeof(float));
    *s = sy;
    g->tensors[yt]->q = (q8_qparams){.axis = -1, .n = 1, .scale = s};
    output(g, "y");
    if (conv_out) output(g, "c");
    return g;
}

/* An int8 Clip after a q8.QConv moves into the conv's clamp (the
 * intersection of both): the same bytes on every backend, one node less;
 * not when the conv's map is read elsewhere. */
Test(passes, int8_clip_after_a_qconv_moves_into_its_clamp) {
    const int64_t M = 19;
    int8_t w[19 * 27], x[2 * 3 * 9 * 70];
    float ws[19];
    qconv_data(34, w, ws, x);
    const void *in[1] = {x};
    struct {
        const char *act;
        int lo, hi;
        bool changes; /* the Clip changes values (else the conv's clamp is tighter) */
    } cases[] = {{NULL, 0, 60, true},
                 {"Relu", NO_BOUND, 60, true},
                 {"Clip", -5, 30, true},
                 {"Clip", -50, 100, false},
                 {NULL, -20, NO_BOUND, true}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        q8_error err = {0};
        void *want[2], *got[1];
        q8_tensor_info wi[2], gi[1];
        q8_graph *g = qconv_clip(w, ws, M, true, cases[k].act, cases[k].lo, cases[k].hi);
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(count_op(g, "Clip"), 1, "case %zu: the conv's map is read: the Clip stays", k);
        q8_graph_free(g);
        cr_assert_eq(q8t_run(qconv_clip(w, ws, M, true, cases[k].act, cases[k].lo, cases[k].hi),
                             in, 1, want, wi, 2, &err),
                     Q8_OK, "%s", err.msg);
        int64_t n = q8t_numel(wi[0].dims, wi[0].ndim);
        int clipped = 0;
        for (int64_t i = 0; i < n; i++)
            clipped += ((const int8_t *)want[0])[i] != ((const int8_t *)want[1])[i];
        cr_assert(cases[k].changes ? clipped > n / 50 : clipped == 0,
                  "case %zu: the Clip changed %d of %lld values", k, clipped, (long long)n);
        g = qconv_clip(w, ws, M, false, cases[k].act, cases[k].lo, cases[k].hi);
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(count_op(g, "Clip"), 0, "case %zu", k);
        int others = -1;
        cr_assert_eq(q8t_run_backends(g, in, 1, got, gi, 1, true, &others, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert_eq(others, q8t_other_backends());
        cr_assert(memcmp(want[0], got[0], (size_t)n) == 0, "case %zu: not the two nodes' bytes", k);
        free(want[0]), free(want[1]), free(got[0]);
    }
}

/* x -> Conv -> Relu -> Min(6) -> y: FaceRes's ReLU6. */
static q8_graph *conv_relu_min6(void) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {1, 3, 6, 6}, wd[4] = {4, 3, 3, 3};
    input(g, "x", 4, xd);
    float w[108];
    q8t_rng r = q8t_seed(35);
    q8t_fill(&r, w, 108, -1, 1);
    cf(g, "w", 4, wd, w);
    scalar(g, "six", 6);
    node(g, "Conv", "x,w", "c");
    node(g, "Relu", "c", "r");
    node(g, "Min", "r,six", "y");
    output(g, "y");
    return g;
}

/* For quantize, a Clip after a conv with a fused Relu joins it as one
 * Clip(0, hi): calibration then ranges the clipped map (FaceRes: output
 * SQNR 14.0 -> 18.6 dB). A run's graph keeps the Clip apart (the fused Relu
 * makes a NaN 0, a Clip keeps it). */
Test(passes, relu_then_clip_after_a_conv_is_one_clip_for_quantize) {
    for (int quant = 0; quant < 2; quant++) {
        q8_graph *g = conv_relu_min6();
        q8_error err = {0};
        cr_assert_eq(quant ? q8_passes_run_for_quantize(g, NULL, &err)
                           : q8_passes_run(g, NULL, &err),
                     Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, quant ? 1 : 2, "quant %d", quant);
        const q8_node *c = g->nodes[0];
        cr_assert_str_eq(q8_attr_str(c, "_act", ""), quant ? "Clip" : "Relu");
        if (quant) {
            cr_assert_eq(q8_attr_float(c, "_act_min", -1), 0.0f);
            cr_assert_eq(q8_attr_float(c, "_act_max", -1), 6.0f);
        }
        q8_graph_free(g);
    }
}

/* x -> Mul(k) -> Add(b) -> Conv(3x3, pads p, groups g) -> y, k and b of
 * shape [C, 1, 1] (per channel) or a scalar: PP-OCR's scaled hard-swish
 * before a conv, a Keras BatchNorm after an activation. */
static q8_graph *mul_add_conv(bool scalar, int64_t pad, int64_t groups) {
    q8_graph *g = q8_graph_new();
    int64_t xd[4] = {2, 4, 9, 7}, wd[4] = {6, 4 / groups, 3, 3}, kd[3] = {4, 1, 1}, one = 1;
    input(g, "x", 4, xd);
    float w[6 * 4 * 9], bias[6], k[4], b[4];
    q8t_rng r = q8t_seed(36);
    q8t_fill(&r, w, 6 * 4 * 9, -0.5f, 0.5f);
    q8t_fill(&r, bias, 6, -0.2f, 0.2f);
    q8t_fill(&r, k, 4, 0.5f, 2);
    q8t_fill(&r, b, 4, -1, 1);
    cf(g, "w", 4, wd, w);
    cf(g, "bias", 1, wd, bias);
    cf(g, "k", scalar ? 0 : 3, scalar ? &one : kd, k);
    cf(g, "b", scalar ? 0 : 3, scalar ? &one : kd, b);
    node(g, "Mul", "k,x", "m");
    node(g, "Add", "m,b", "a");
    int64_t pads[4] = {pad, pad, pad, pad};
    q8_node *c = node(g, "Conv", "a,w,bias", "y");
    set_ints(c, "pads", pads, 4);
    if (groups > 1) q8_node_set_attr(c, "group", Q8_ATTR_INT)->i = groups;
    output(g, "y");
    return g;
}

/* A Mul and an Add of per-channel or scalar constants that only a one-group
 * Conv reads fold into its weights and bias (the Add only when the conv is
 * unpadded: its border would add 0, not b): the same values within
 * rounding. */
Test(passes, mul_and_add_before_a_conv_fold_into_it) {
    struct {
        bool scalar;
        int64_t pad, groups;
        int nodes; /* after the passes */
    } cases[] = {{false, 0, 1, 1}, {true, 0, 1, 1}, {false, 1, 1, 3}, {false, 0, 2, 3}};
    float x[504];
    q8t_rng r = q8t_seed(37);
    q8t_fill(&r, x, 504, -2, 2);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        q8_graph *g = mul_add_conv(cases[i].scalar, cases[i].pad, cases[i].groups);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, cases[i].nodes, "case %zu: %d nodes", i, g->n_nodes);
        cr_assert_eq(count_op(g, "Mul") + count_op(g, "Add"), cases[i].nodes - 1, "case %zu", i);
        q8_graph_free(g);
        /* reference: the same graph with the affine's output also an output
         * (read twice: nothing folds) */
        q8_graph *h = mul_add_conv(cases[i].scalar, cases[i].pad, cases[i].groups);
        output(h, "a");
        void *want[2], *got[1];
        q8_tensor_info wi[2], gi[1];
        const void *in[1] = {x};
        cr_assert_eq(q8t_run(h, in, 1, want, wi, 2, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8t_run(mul_add_conv(cases[i].scalar, cases[i].pad, cases[i].groups), in, 1,
                             got, gi, 1, &err),
                     Q8_OK, "%s", err.msg);
        int64_t n = q8t_numel(wi[0].dims, wi[0].ndim);
        char what[32];
        snprintf(what, sizeof what, "mul+add+conv case %zu", i);
        q8t_assert_close(got[0], want[0], n, 1e-4f, 1e-5f, what);
        free(want[0]), free(want[1]), free(got[0]);
    }
}
