/* A MatMul's bias Add folded into its q8.QGemm (src/quant/rewrite.c,
 * fold_matmul_biases): the structure after quantizing, the output against
 * FP32, what is not folded, and what the folded output's readers do. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "npy.h"
#include "passes.h"
#include "quantize.h"
#include "testutil.h"

#define T q8t_tensor

enum { ROWS = 5, K = 8, N = 6, NSAMPLES = 6 };

static void constant(q8_graph *g, const char *name, int nd, const int64_t *dims, float lo,
                     float hi, uint64_t seed) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, nd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    q8t_rng r = q8t_seed(seed);
    q8t_fill(&r, g->tensors[t]->data, q8_tensor_numel(g->tensors[t]), lo, hi);
}

static q8_node *node(q8_graph *g, const char *name, const char *op, int n_in, const char **in,
                     const char *out) {
    int ii[4], oo = T(g, out);
    for (int i = 0; i < n_in; i++) ii[i] = T(g, in[i]);
    int k = q8_graph_add_node(g, name, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, n_in, &oo, 1, NULL), Q8_OK);
    return g->nodes[k];
}

/* What reads the sum z = Add(b, MatMul(x, w)). */
enum tail { T_OUT, T_RELU, T_SIGMOID, T_RESHAPE, T_TWICE, T_ROW_BIAS, T_RESIDUAL };

/* x[1,ROWS,K] -> MatMul(w[K,N]) -> mm -> Add(b, mm) -> z, then the tail:
 * T_OUT z is the output; T_RELU / T_SIGMOID / T_RESHAPE: Relu, Sigmoid or a
 * Reshape to [1,ROWS*N] of z, then a second MatMul (w2[.,4]); T_RESIDUAL:
 * (N = K) the residual sum x + z, then a second MatMul; T_TWICE: mm
 * is an output too (a second reader); T_ROW_BIAS: b is [ROWS,1], not a bias
 * of the last axis. The bias is large against the product, so a lost bias
 * shows. */
static q8_graph *linear(enum tail tail) {
    q8_graph *g = q8_graph_new();
    int64_t n = tail == T_RESIDUAL ? K : N; /* the residual sum needs N = K */
    int64_t xd[3] = {1, ROWS, K}, wd[2] = {K, n}, bd[1] = {n}, rbd[2] = {ROWS, 1};
    int x = T(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 3);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    constant(g, "w", 2, wd, -0.5f, 0.5f, 11);
    if (tail == T_ROW_BIAS) constant(g, "b", 2, rbd, 1.0f, 3.0f, 12);
    else constant(g, "b", 1, bd, 1.0f, 3.0f, 12);
    node(g, "mm", "MatMul", 2, (const char *[]){"x", "w"}, "mm_out");
    node(g, "bias", "Add", 2, (const char *[]){"b", "mm_out"}, "z");
    const char *out = "z";
    if (tail == T_RESIDUAL) {
        node(g, "residual", "Add", 2, (const char *[]){"x", "z"}, "r");
        int64_t w2d[2] = {K, 4};
        constant(g, "w2", 2, w2d, -0.5f, 0.5f, 13);
        node(g, "mm2", "MatMul", 2, (const char *[]){"r", "w2"}, "y");
        out = "y";
    } else if (tail == T_RELU || tail == T_SIGMOID) {
        node(g, "act", tail == T_RELU ? "Relu" : "Sigmoid", 1, (const char *[]){"z"}, "a");
        int64_t w2d[2] = {N, 4};
        constant(g, "w2", 2, w2d, -0.5f, 0.5f, 13);
        node(g, "mm2", "MatMul", 2, (const char *[]){"a", "w2"}, "y");
        out = "y";
    } else if (tail == T_RESHAPE) {
        int s = T(g, "shape");
        int64_t sd = 2;
        q8_tensor_set_shape(g->tensors[s], Q8_I64, &sd, 1);
        cr_assert_eq(q8_tensor_alloc_data(g->tensors[s], NULL), Q8_OK);
        ((int64_t *)g->tensors[s]->data)[0] = 1;
        ((int64_t *)g->tensors[s]->data)[1] = ROWS * N;
        node(g, "flat", "Reshape", 2, (const char *[]){"z", "shape"}, "f");
        int64_t w2d[2] = {ROWS * N, 4};
        constant(g, "w2", 2, w2d, -0.5f, 0.5f, 13);
        node(g, "mm2", "MatMul", 2, (const char *[]){"f", "w2"}, "y");
        out = "y";
    }
    g->outputs = malloc(2 * sizeof(int));
    g->outputs[g->n_outputs++] = T(g, out);
    if (tail == T_TWICE) g->outputs[g->n_outputs++] = T(g, "mm_out");
    return g;
}

static void sample(int i, float *x) {
    q8t_rng r = q8t_seed(100 + (uint64_t)i);
    q8t_fill(&r, x, ROWS * K, -1, 1);
}

/* Passes, minmax ranges on NSAMPLES random inputs, the INT8 rewrite. */
static q8_graph *quantized(q8_graph *g) {
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    char *dir = q8t_tmpdir("mmb");
    int64_t d[3] = {1, ROWS, K};
    for (int i = 0; i < NSAMPLES; i++) {
        float x[ROWS * K];
        sample(i, x);
        char p[256], nm[32];
        snprintf(nm, sizeof nm, "s%02d.npy", i);
        q8t_path(p, sizeof p, dir, nm);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 3, x, NULL), Q8_OK);
    }
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 1};
    q8_calibration cal;
    cr_assert_eq(q8_calibrate(g, &s, &co, &cal, &err), Q8_OK, "%s", err.msg);
    q8_meta meta = {0};
    q8_quant_options qo = {0};
    cr_assert_eq(q8_quantize_graph(g, &cal, &qo, &meta, &err), Q8_OK, "%s", err.msg);
    q8_meta_free(&meta);
    q8_calibration_free(&cal);
    q8_samples_free(&s);
    q8t_rm_rf(dir);
    free(dir);
    return g;
}

static int count(const q8_graph *g, const char *op) {
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++) c += strcmp(g->nodes[i]->op_type, op) == 0;
    return c;
}

static const q8_node *named(const q8_graph *g, const char *name) {
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->name, name)) return g->nodes[i];
    cr_assert_fail("no node '%s'", name);
    return NULL;
}

/* Output 0 of g (consumed) on sample 0, on every backend of the build. */
static float *run(q8_graph *g, int64_t *n) {
    float x[ROWS * K];
    sample(0, x);
    const void *in[1] = {x};
    void *outs[2];
    q8_tensor_info info[2];
    q8_error err = {0};
    int n_out = g->n_outputs; /* q8t_run consumes g */
    cr_assert_eq(q8t_run(g, in, 2, outs, info, 2, &err), Q8_OK, "%s", err.msg);
    if (n_out > 1) free(outs[1]);
    cr_assert_eq(info[0].dtype, Q8_F32);
    *n = 1;
    for (int d = 0; d < info[0].ndim; d++) *n *= info[0].dims[d];
    return outs[0];
}

static double sqnr_vs_fp32(enum tail tail, q8_graph *q) {
    int64_t n, nq;
    float *want = run(linear(tail), &n), *got = run(q, &nq);
    cr_assert_eq(n, nq);
    double s = 0, e = 0;
    for (int64_t i = 0; i < n; i++) {
        s += (double)want[i] * want[i];
        e += (double)(got[i] - want[i]) * (got[i] - want[i]);
    }
    free(want);
    free(got);
    return 10 * log10(s / (e + 1e-30));
}

Test(matmul_bias, the_bias_add_goes_into_the_qgemm) {
    q8_graph *g = quantized(linear(T_OUT));
    cr_assert_eq(count(g, "Add"), 0, "the bias Add is folded");
    const q8_node *q = named(g, "mm");
    cr_assert_str_eq(q->op_type, "QGemm");
    cr_assert_eq(q->n_inputs, 3, "A, W and the bias");
    const q8_tensor *b = q8_in(g, q, 2);
    cr_assert_eq(b->dtype, Q8_I32);
    cr_assert_eq(q8_tensor_numel(b), N);
    cr_assert_str_eq(q8_out(g, q, 0)->name, "z", "the QGemm writes the Add's output");
    double db = sqnr_vs_fp32(T_OUT, g);
    cr_assert_gt(db, 35.0, "SQNR %.1f dB against FP32", db);
}

Test(matmul_bias, not_folded_when_the_product_or_the_bias_does_not_fit) {
    q8_graph *g = quantized(linear(T_TWICE));
    cr_assert_eq(count(g, "Add"), 1, "the product is an output too");
    cr_assert_eq(named(g, "mm")->n_inputs, 2);
    q8_graph_free(g);
    g = quantized(linear(T_ROW_BIAS));
    cr_assert_eq(count(g, "Add"), 1, "a [ROWS,1] bias is not a bias of the last axis");
    cr_assert_eq(named(g, "mm")->n_inputs, 2);
    double db = sqnr_vs_fp32(T_ROW_BIAS, g);
    cr_assert_gt(db, 35.0, "SQNR %.1f dB against FP32", db);
}

/* Behind the float Add, Relu and a table stayed FP32 and the next layer
 * quantized their float output; the fold keeps that (int8 at the sum's
 * scale would round once more). A Reshape carries int8 as before. */
Test(matmul_bias, readers_of_the_sum_keep_their_kind) {
    for (int t = T_RELU; t <= T_SIGMOID; t++) {
        q8_graph *g = quantized(linear((enum tail)t));
        cr_assert_eq(count(g, "Add"), 0);
        const q8_node *a = named(g, "act");
        cr_assert_str_eq(a->op_type, t == T_RELU ? "Relu" : "Sigmoid", "stays FP32");
        cr_assert_eq(q8_in(g, a, 0)->dtype, Q8_F32);
        cr_assert_eq(q8_out(g, named(g, "mm"), 0)->dtype, Q8_F32, "the QGemm writes float");
        cr_assert_eq(count(g, "QuantizeLinear"), 2, "x, and the activation's output");
        double db = sqnr_vs_fp32((enum tail)t, g);
        cr_assert_gt(db, 30.0, "tail %d: SQNR %.1f dB against FP32", t, db);
    }
    q8_graph *g = quantized(linear(T_RESHAPE));
    cr_assert_eq(q8_out(g, named(g, "mm"), 0)->dtype, Q8_I8, "int8 into the Reshape");
    cr_assert_eq(q8_in(g, named(g, "flat"), 0)->dtype, Q8_I8);
    cr_assert_eq(count(g, "QuantizeLinear"), 1, "x only");
    double db = sqnr_vs_fp32(T_RESHAPE, g);
    cr_assert_gt(db, 30.0, "reshape: SQNR %.1f dB against FP32", db);
}

/* x + z before an INT8 layer: behind the float Add neither side was int8
 * (x is an input), so the sum stayed FP32; the folded z does not make it a
 * q8.QAdd, which would round the float residual stream (a transformer's). */
Test(matmul_bias, the_sum_is_no_int8_source_for_a_residual_add) {
    q8_graph *g = quantized(linear(T_RESIDUAL));
    cr_assert_eq(named(g, "mm")->n_inputs, 3, "folded");
    cr_assert_eq(count(g, "QAdd"), 0);
    const q8_node *r = named(g, "residual");
    cr_assert_str_eq(r->op_type, "Add", "stays FP32");
    cr_assert_eq(q8_in(g, r, 1)->dtype, Q8_F32);
    double db = sqnr_vs_fp32(T_RESIDUAL, g);
    cr_assert_gt(db, 30.0, "residual: SQNR %.1f dB against FP32", db);
}
