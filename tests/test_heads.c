/* The model's heads (src/quant/heads.c, quantize --fp32-heads): the
 * weighted layers that write the outputs, and those that feed them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "onnx.pb-c.h"
#include "q8_tools.h"
#include "quantize.h"
#include "testutil.h"

#define T q8t_tensor
#define Q8RUN Q8_BINARY_DIR "/q8run"

static void weight(q8_graph *g, const char *name, int64_t m, int64_t c) {
    int t = T(g, name);
    int64_t d[4] = {m, c, 1, 1};
    q8_tensor_set_shape(g->tensors[t], Q8_F32, d, 4);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memset(g->tensors[t]->data, 0, sizeof(float) * (size_t)(m * c));
}

static void node(q8_graph *g, const char *op, int n_in, const char **in, const char *out) {
    int ii[4], oo = T(g, out);
    for (int i = 0; i < n_in; i++) ii[i] = T(g, in[i]);
    int k = q8_graph_add_node(g, out, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, n_in, &oo, 1, NULL), Q8_OK);
}

static void output(q8_graph *g, const char *name) {
    g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
    g->outputs[g->n_outputs++] = T(g, name);
}

/* x -> Conv trunk (c_trunk x 64) -> Relu -> two heads of two 1x1 convs
 * each: b (2 x c_trunk) -> Relu -> c (1 x 2) -> Sigmoid -> out1, and d
 * (2 x c_trunk) -> e (3 x 2) -> out2; a MatMul of two activations (not a
 * weighted layer) between e and out2 when via_matmul. */
static q8_graph *make(int64_t c_trunk, bool via_matmul) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x");
    int64_t xd[4] = {1, 64, 2, 2};
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    weight(g, "wt", c_trunk, 64);
    weight(g, "wb", 2, c_trunk);
    weight(g, "wc", 1, 2);
    weight(g, "wd", 2, c_trunk);
    weight(g, "we", 3, 2);
    node(g, "Conv", 2, (const char *[]){"x", "wt"}, "trunk");
    node(g, "Relu", 1, (const char *[]){"trunk"}, "t");
    node(g, "Conv", 2, (const char *[]){"t", "wb"}, "b");
    node(g, "Relu", 1, (const char *[]){"b"}, "br");
    node(g, "Conv", 2, (const char *[]){"br", "wc"}, "c");
    node(g, "Sigmoid", 1, (const char *[]){"c"}, "out1");
    node(g, "Conv", 2, (const char *[]){"t", "wd"}, "d");
    node(g, "Conv", 2, (const char *[]){"d", "we"}, "e");
    if (via_matmul) {
        node(g, "MatMul", 2, (const char *[]){"e", "e"}, "out2");
    } else {
        node(g, "Relu", 1, (const char *[]){"e"}, "out2");
    }
    output(g, "out1");
    output(g, "out2");
    return g;
}

static bool has(const q8_name_list *l, const char *name) {
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], name)) return true;
    return false;
}

/* Both heads, two layers each; not the trunk. The weights: trunk 65536,
 * heads 2 x 2048 + 2 + 6 = 4104, 5.9% of all: within an 8% bound, not 4%. */
Test(heads, two_layers_per_output_within_the_bound) {
    for (int mm = 0; mm < 2; mm++) {
        q8_graph *g = make(1024, mm);
        q8_name_list l;
        q8_error err = {0};
        cr_assert_eq(q8_head_layers(g, 0.08, &l, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(l.n, 4, "matmul %d: %d heads", mm, l.n);
        cr_assert(has(&l, "b") && has(&l, "c") && has(&l, "d") && has(&l, "e"));
        cr_assert(!has(&l, "trunk"));
        q8_name_list_free(&l);
        cr_assert_eq(q8_head_layers(g, 0.04, &l, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(l.n, 0, "over the bound: none");
        q8_name_list_free(&l);
        q8_graph_free(g);
    }
}

/* An output that comes from the input through float ops only has no head;
 * a model whose every layer is a head has them all over the bound. */
Test(heads, none_when_no_layer_or_all_layers) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x");
    int64_t xd[2] = {1, 8};
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 2);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    node(g, "Relu", 1, (const char *[]){"x"}, "y");
    output(g, "y");
    q8_name_list l;
    q8_error err = {0};
    cr_assert_eq(q8_head_layers(g, 1.0, &l, &err), Q8_OK);
    cr_assert_eq(l.n, 0);
    q8_graph_free(g);
    g = make(4, false); /* heads 24 of 280 weights */
    cr_assert_eq(q8_head_layers(g, Q8_HEADS_MAX_SHARE, &l, &err), Q8_OK);
    cr_assert_eq(l.n, 0);
    cr_assert_eq(q8_head_layers(g, 1.0, &l, &err), Q8_OK);
    cr_assert_eq(l.n, 4);
    q8_name_list_free(&l);
    q8_graph_free(g);
}

static void onnx_node(Onnx__NodeProto *nd, Onnx__NodeProto **p, char *name, char *op,
                      char **in, int n_in, char **out) {
    Onnx__NodeProto z = ONNX__NODE_PROTO__INIT;
    *nd = z;
    nd->name = name, nd->op_type = op, nd->n_input = (size_t)n_in, nd->input = in;
    nd->n_output = 1, nd->output = out;
    *p = nd;
}

/* An ONNX chain of n <= 8 1x1 Convs c0, c1, ... with a Relu after each
 * but the last: layer i maps ch[i] channels to ch[i + 1] (weights
 * 0.1 sin(k + i): nothing special), on x [1, ch[0], 8, 8] -> y. */
static void chain_model(const char *path, int n, const int64_t *ch) {
    char w[8][8], c[8][8], a[8][8], r[8][8];
    char *cin[8][2], *cout[8][1], *rin[8][1], *rout[8][1];
    int64_t dims[8][4];
    float *ws[8];
    Onnx__TensorProto ts[8], *inits[8];
    Onnx__NodeProto nodes[16], *np[16];
    int nn = 0;
    cr_assert(n >= 1 && n <= 8);
    for (int i = 0; i < n; i++) {
        int64_t m = ch[i + 1], k = ch[i];
        snprintf(w[i], 8, "w%d", i);
        snprintf(c[i], 8, "c%d", i);
        snprintf(a[i], 8, i == n - 1 ? "y" : "a%d", i);
        snprintf(r[i], 8, "r%d", i);
        ws[i] = malloc(sizeof(float) * (size_t)(m * k));
        for (int64_t j = 0; j < m * k; j++) ws[i][j] = 0.1f * sinf((float)(j + i));
        Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
        dims[i][0] = m, dims[i][1] = k, dims[i][2] = dims[i][3] = 1;
        t.name = w[i], t.n_dims = 4, t.dims = dims[i], t.has_data_type = 1;
        t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, t.n_float_data = (size_t)(m * k);
        t.float_data = ws[i];
        ts[i] = t;
        inits[i] = &ts[i];
        cin[i][0] = i == 0 ? "x" : r[i - 1];
        cin[i][1] = w[i];
        cout[i][0] = a[i];
        onnx_node(&nodes[nn], &np[nn], c[i], "Conv", cin[i], 2, cout[i]);
        nn++;
        if (i == n - 1) break;
        rin[i][0] = a[i];
        rout[i][0] = r[i];
        onnx_node(&nodes[nn], &np[nn], r[i], "Relu", rin[i], 1, rout[i]);
        nn++;
    }
    q8t_write_xy_model(path, "chain", np, nn, inits, n, (const int64_t[]){1, ch[0], 8, 8}, false);
    for (int i = 0; i < n; i++) free(ws[i]);
}

/* quantize --fp32-heads on a chain 1 -> 512 -> 64 -> 1 -> 2: the heads
 * are c3 and c2 (66 of 33346 weights, 0.2%); on keeps both FP32 (recorded per
 * layer), off none, auto records its choice; every form runs. */
Test(heads, quantize_keeps_the_heads_fp32, .timeout = 120) {
    char *tmp = q8t_tmpdir("heads");
    char onnx[512], calib[512], out[512];
    q8t_path(onnx, sizeof onnx, tmp, "chain.onnx");
    q8t_path(calib, sizeof calib, tmp, "calib");
    q8t_path(out, sizeof out, tmp, "chain.q8");
    const int64_t ch[5] = {1, 512, 64, 1, 2};
    chain_model(onnx, 4, ch);
    q8t_square_samples(calib, 8, 8, 5);
    const q8_fp32_heads modes[3] = {Q8_FP32_HEADS_OFF, Q8_FP32_HEADS_ON, Q8_FP32_HEADS_AUTO};
    for (int k = 0; k < 3; k++) {
        q8_quantize_options o = {.calib_dir = calib, .method = Q8_CALIB_PERCENTILE,
                                 .percentile = 99.99, .n_threads = 2,
                                 .quant = {.fp32_heads = modes[k]}};
        q8_quantize_result r;
        q8_error err = {0};
        cr_assert_eq(q8_quantize_model(onnx, out, &o, &r, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(r.n_heads, k == 0 ? 0 : 2, "mode %d: %d heads", k, r.n_heads);
        bool fp32 = k == 1 || (k == 2 && r.heads_chosen);
        cr_assert_eq(q8t_has_meta(out, "layer.c3.fp32"), fp32, "mode %d", k);
        cr_assert_eq(q8t_has_meta(out, "layer.c2.fp32"), fp32, "mode %d", k);
        cr_assert(!q8t_has_meta(out, "layer.c1.fp32") && !q8t_has_meta(out, "layer.c0.fp32"));
        cr_assert_eq(q8t_has_meta(out, "quant.fp32_heads"), k == 2, "mode %d", k);
        if (k == 2) /* scored (the arena grows by less than half) */
            cr_assert(r.heads_scored > 0 && r.heads_arena[0] > 0 &&
                          r.heads_arena[1] <= r.heads_arena[0] + r.heads_arena[0] / 2,
                      "auto: scored %d, arena %zu -> %zu", r.heads_scored, r.heads_arena[0],
                      r.heads_arena[1]);
        char s0[600], yo[600];
        q8t_path(s0, sizeof s0, calib, "s0.npy");
        snprintf(yo, sizeof yo, "x=%s", s0);
        char *argv[] = {Q8RUN, out, "--input", yo, NULL};
        q8t_cmd c = q8t_run_cmd(tmp, 60, argv);
        cr_assert(c.exited && c.code == 0, "q8run mode %d: %s", k, c.err ? c.err : "");
        q8t_cmd_free(&c);
    }
    q8t_rm_rf(tmp);
    free(tmp);
}
