/* src/passes/layout_fold.c: a zero Pad folds into the Conv, a Transpose into
 * a Reduce that drops axes, Transpose pairs into one or none, Transpose ->
 * Reshape -> Transpose into one Transpose; each folded
 * graph is checked against plain loops, and the cases that must not fold
 * (reflect padding, a non-zero pad value, keepdims=1, kept axes out of
 * order) keep their nodes and their values. */
#include <math.h>
#include <string.h>

#include "model.h"
#include "passes.h"
#include "q8_tools.h"
#include "testutil.h"

#define T q8t_tensor

static q8_node *node(q8_graph *g, const char *op, const char *const *in, int nin, const char *y) {
    int ii[8], out = T(g, y);
    for (int i = 0; i < nin; i++) ii[i] = in[i] ? T(g, in[i]) : -1;
    int k = q8_graph_add_node(g, y, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, nin, &out, 1, NULL), Q8_OK);
    return g->nodes[k];
}

static void ints_attr(q8_node *n, const char *name, const int64_t *v, int count) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_INTS);
    cr_assert(a && (a->ints = malloc(sizeof(int64_t) * (size_t)count)));
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
    a->n = count;
}

static void int_attr(q8_node *n, const char *name, int64_t v) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_INT);
    cr_assert(a);
    a->i = v;
}

static void constant(q8_graph *g, const char *name, q8_dtype dt, const int64_t *d, int nd,
                     const void *v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], dt, d, nd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, q8_tensor_nbytes(g->tensors[t]));
}

static q8_graph *with_input(const int64_t *xd, int nx) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, nx);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    return g;
}

static int count_ops(const q8_graph *g, const char *op) {
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++) c += !g->nodes[i]->dead && !strcmp(g->nodes[i]->op_type, op);
    return c;
}

/* Passes, then one run on x; returns output y (malloc'd) and the op counts. */
static float *finish_and_run(q8_graph *g, const float *x, int64_t ny, int *pads, int *transposes) {
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    *pads = count_ops(g, "Pad");
    *transposes = count_ops(g, "Transpose");
    const q8_tensor *xt = g->tensors[g->inputs[0]];
    int64_t xd[Q8_MAX_DIMS];
    int nx = xt->ndim;
    memcpy(xd, xt->dims, sizeof(int64_t) * (size_t)nx);
    q8_model *m = NULL;
    cr_assert_eq(q8_model_from_graph(g, "m", &m, &err), Q8_OK, "%s", err.msg);
    q8_session *s = NULL;
    q8_session_options so = {.n_threads = 1, .device = Q8_DEVICE_CPU};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, xd, nx, x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *yd;
    q8_session_output(s, 0, &info, &yd, NULL);
    float *y = malloc(sizeof(float) * (size_t)ny);
    memcpy(y, yd, sizeof(float) * (size_t)ny);
    q8_session_free(s);
    q8_model_free(m);
    return y;
}

static void assert_close(const float *got, const float *want, int64_t n, const char *what) {
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabsf(got[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])),
                  "%s: element %lld is %g, want %g", what, (long long)i, got[i], want[i]);
}

/* ---- Pad -> Conv ---- */

enum { C = 2, H = 5, W = 6, M = 3, K = 3 };

/* y = Conv(Pad(x, pads, value, mode), w, conv pads cp) */
static float *pad_conv(const float *x, const float *w, const int64_t *pads, float value,
                       const char *mode, const int64_t *cp, int *n_pad, int64_t *oh, int64_t *ow) {
    int64_t xd[4] = {1, C, H, W}, wd[4] = {M, C, K, K}, pd[1] = {8}, vd[1] = {1};
    q8_graph *g = with_input(xd, 4);
    constant(g, "pads", Q8_I64, pd, 1, pads);
    constant(g, "value", Q8_F32, vd, 1, &value);
    constant(g, "w", Q8_F32, wd, 4, w);
    const char *pin[3] = {"x", "pads", "value"};
    q8_node *p = node(g, "Pad", pin, 3, "xp");
    q8_attr *a = q8_node_set_attr(p, "mode", Q8_ATTR_STRING);
    a->s = strdup(mode);
    const char *cin[2] = {"xp", "w"};
    ints_attr(node(g, "Conv", cin, 2, "y"), "pads", cp, 4);
    *oh = H + pads[2] + pads[6] + cp[0] + cp[2] - K + 1;
    *ow = W + pads[3] + pads[7] + cp[1] + cp[3] - K + 1;
    int tr;
    return finish_and_run(g, x, M * *oh * *ow, n_pad, &tr);
}

/* plain loops: zero padding top/left/bottom/right, then a valid conv */
static void ref_conv(const float *x, const float *w, int64_t t, int64_t l, int64_t oh, int64_t ow,
                     float *y) {
    for (int m = 0; m < M; m++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double s = 0;
                for (int c = 0; c < C; c++)
                    for (int u = 0; u < K; u++)
                        for (int v = 0; v < K; v++) {
                            int64_t yy = i + u - t, xx = j + v - l;
                            if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                                s += x[(c * H + yy) * W + xx] * w[((m * C + c) * K + u) * K + v];
                        }
                y[(m * oh + i) * ow + j] = (float)s;
            }
}

Test(layout_fold, zero_pad_folds_into_the_conv) {
    q8t_rng rng = q8t_seed(1);
    float x[C * H * W], w[M * C * K * K];
    q8t_fill(&rng, x, C * H * W, -1, 1);
    q8t_fill(&rng, w, M * C * K * K, -1, 1);
    int64_t pads[8] = {0, 0, 1, 2, 0, 0, 2, 1}, cp[4] = {1, 0, 0, 1}, oh, ow;
    int n_pad;
    float *y = pad_conv(x, w, pads, 0.0f, "constant", cp, &n_pad, &oh, &ow);
    cr_assert_eq(n_pad, 0, "the Pad was not folded");
    float want[M * 16 * 16];
    ref_conv(x, w, 2, 2, oh, ow, want);
    assert_close(y, want, M * oh * ow, "folded Pad + Conv");
    free(y);
}

Test(layout_fold, reflect_or_nonzero_pads_stay) {
    q8t_rng rng = q8t_seed(2);
    float x[C * H * W], w[M * C * K * K];
    q8t_fill(&rng, x, C * H * W, -1, 1);
    q8t_fill(&rng, w, M * C * K * K, -1, 1);
    int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1}, cp[4] = {0}, oh, ow;
    int n_pad;
    float *y = pad_conv(x, w, pads, 0.0f, "reflect", cp, &n_pad, &oh, &ow);
    cr_assert_eq(n_pad, 1, "a reflect Pad is not zero padding");
    free(y);
    y = pad_conv(x, w, pads, 1.0f, "constant", cp, &n_pad, &oh, &ow);
    cr_assert_eq(n_pad, 1, "a Pad with value 1 is not zero padding");
    /* and its value is still the ones padding: x padded with 1 */
    float xp[C * (H + 2) * (W + 2)], want[M * H * W];
    for (int c = 0; c < C; c++)
        for (int i = 0; i < H + 2; i++)
            for (int j = 0; j < W + 2; j++)
                xp[(c * (H + 2) + i) * (W + 2) + j] =
                    i && j && i <= H && j <= W ? x[(c * H + i - 1) * W + j - 1] : 1.0f;
    for (int m = 0; m < M; m++)
        for (int i = 0; i < H; i++)
            for (int j = 0; j < W; j++) {
                double s = 0;
                for (int c = 0; c < C; c++)
                    for (int u = 0; u < K; u++)
                        for (int v = 0; v < K; v++)
                            s += xp[(c * (H + 2) + i + u) * (W + 2) + j + v] *
                                 w[((m * C + c) * K + u) * K + v];
                want[(m * H + i) * W + j] = (float)s;
            }
    assert_close(y, want, M * H * W, "Pad with value 1");
    free(y);
}

/* ---- Transpose -> Reduce ---- */

/* y = ReduceMean(Transpose(x[1,3,4,5], perm), axes, keepdims) */
static float *transpose_mean(const float *x, const int64_t *perm, const int64_t *axes, int na,
                             int64_t keep, int64_t ny, int *n_tr) {
    int64_t xd[4] = {1, 3, 4, 5}, ad[1] = {na};
    q8_graph *g = with_input(xd, 4);
    constant(g, "axes", Q8_I64, ad, 1, axes);
    const char *tin[1] = {"x"};
    ints_attr(node(g, "Transpose", tin, 1, "xt"), "perm", perm, 4);
    const char *rin[2] = {"xt", "axes"};
    int_attr(node(g, "ReduceMean", rin, 2, "y"), "keepdims", keep);
    int pads;
    return finish_and_run(g, x, ny, &pads, n_tr);
}

Test(layout_fold, transpose_folds_into_a_reduce_that_drops_axes) {
    q8t_rng rng = q8t_seed(3);
    float x[60];
    q8t_fill(&rng, x, 60, -1, 1);
    int64_t nhwc[4] = {0, 2, 3, 1}, hw[2] = {1, 2};
    int n_tr;
    float *y = transpose_mean(x, nhwc, hw, 2, 0, 3, &n_tr);
    cr_assert_eq(n_tr, 0, "the Transpose was not folded");
    float want[3];
    for (int c = 0; c < 3; c++) {
        double s = 0;
        for (int i = 0; i < 20; i++) s += x[c * 20 + i];
        want[c] = (float)(s / 20);
    }
    assert_close(y, want, 3, "mean over H, W");
    free(y);
    /* keepdims=1 keeps the layout: no fold, same values as [1,1,1,3] */
    y = transpose_mean(x, nhwc, hw, 2, 1, 3, &n_tr);
    cr_assert_eq(n_tr, 1);
    assert_close(y, want, 3, "mean over H, W, keepdims");
    free(y);
    /* kept axes out of order: perm (0,3,2,1) then reduce axis 0 keeps
     * (W, H, C) whose order differs from x's (C, H, W) */
    int64_t rev[4] = {0, 3, 2, 1}, a0[1] = {0};
    y = transpose_mean(x, rev, a0, 1, 0, 60, &n_tr);
    cr_assert_eq(n_tr, 1, "folding would reorder the output");
    for (int w = 0; w < 5; w++)
        for (int h = 0; h < 4; h++)
            for (int c = 0; c < 3; c++)
                cr_assert_float_eq(y[(w * 4 + h) * 3 + c], x[(c * 4 + h) * 5 + w], 1e-6);
    free(y);
}

/* ---- Transpose -> Transpose ---- */

static float *two_transposes(const float *x, const int64_t *p1, const int64_t *p2, int *n_tr) {
    int64_t xd[4] = {2, 3, 4, 5};
    q8_graph *g = with_input(xd, 4);
    const char *a[1] = {"x"}, *b[1] = {"t1"}, *c[1] = {"t2"};
    ints_attr(node(g, "Transpose", a, 1, "t1"), "perm", p1, 4);
    ints_attr(node(g, "Transpose", b, 1, "t2"), "perm", p2, 4);
    node(g, "Relu", c, 1, "y");
    int pads;
    return finish_and_run(g, x, 120, &pads, n_tr);
}

Test(layout_fold, transpose_pairs_compose_or_cancel) {
    q8t_rng rng = q8t_seed(4);
    float x[120];
    q8t_fill(&rng, x, 120, -1, 1);
    int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2}, swap[4] = {0, 2, 1, 3};
    int n_tr;
    float *y = two_transposes(x, to_nhwc, to_nchw, &n_tr);
    cr_assert_eq(n_tr, 0, "NCHW -> NHWC -> NCHW should vanish");
    for (int i = 0; i < 120; i++) cr_assert_float_eq(y[i], x[i] > 0 ? x[i] : 0, 0);
    free(y);
    y = two_transposes(x, to_nhwc, swap, &n_tr);
    cr_assert_eq(n_tr, 1, "two transposes should compose into one");
    /* y[n][w][h][c] with perm p1[p2] = (0,3,2,1) of x[n][c][h][w] */
    const int64_t d[4] = {2, 3, 4, 5};
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 3; c++)
            for (int h = 0; h < 4; h++)
                for (int w = 0; w < 5; w++) {
                    float v = x[((n * d[1] + c) * d[2] + h) * d[3] + w];
                    cr_assert_float_eq(y[((n * 5 + w) * 4 + h) * 3 + c], v > 0 ? v : 0, 0);
                }
    free(y);
}

/* ---- Transpose -> Reshape -> Transpose ---- */

/* Two detection heads of x [1, A * F, Hh, Ww] (the second through a Relu):
 * to NHWC, Reshape to [1, Hh * Ww, A, F] (rdims), anchors first: [1, A,
 * Hh * Ww, F]; joined on axis 2. With rdims mixing axes the fold must not
 * apply. */
enum { A = 2, F = 6, Hh = 4, Ww = 5, NX = A * F * Hh * Ww };

static float *two_heads(const float *x, const int64_t *rdims, int *n_tr) {
    int64_t xd[4] = {1, A * F, Hh, Ww}, sd[1] = {4};
    q8_graph *g = with_input(xd, 4);
    constant(g, "shape", Q8_I64, sd, 1, rdims);
    const char *ra[1] = {"x"};
    node(g, "Relu", ra, 1, "xr");
    static const int64_t nhwc[4] = {0, 2, 3, 1}, swap[4] = {0, 2, 1, 3};
    const char *src[2] = {"x", "xr"}, *t1[2] = {"a1", "b1"}, *z[2] = {"az", "bz"};
    const char *t2[2] = {"a2", "b2"};
    for (int h = 0; h < 2; h++) {
        const char *i1[1] = {src[h]}, *i2[2] = {t1[h], "shape"}, *i3[1] = {z[h]};
        ints_attr(node(g, "Transpose", i1, 1, t1[h]), "perm", nhwc, 4);
        node(g, "Reshape", i2, 2, z[h]);
        ints_attr(node(g, "Transpose", i3, 1, t2[h]), "perm", swap, 4);
    }
    const char *ci[2] = {"a2", "b2"};
    int_attr(node(g, "Concat", ci, 2, "y"), "axis", 2);
    int pads;
    return finish_and_run(g, x, 2 * NX, &pads, n_tr);
}

/* The heads by plain loops on the reshaped NHWC bytes (rdims[1..3]). */
static void ref_heads(const float *x, const int64_t *rdims, float *y) {
    float nhwc[NX];
    for (int c = 0; c < A * F; c++)
        for (int p = 0; p < Hh * Ww; p++) nhwc[p * A * F + c] = x[c * Hh * Ww + p];
    int64_t d1 = rdims[1], d2 = rdims[2], d3 = rdims[3];
    for (int h = 0; h < 2; h++)
        for (int64_t i = 0; i < d2; i++)
            for (int64_t j = 0; j < d1; j++)
                for (int64_t k = 0; k < d3; k++) {
                    float v = nhwc[(j * d2 + i) * d3 + k];
                    y[(i * 2 * d1 + h * d1 + j) * d3 + k] = h && v < 0 ? 0 : v;
                }
}

Test(layout_fold, transpose_reshape_transpose_becomes_one_transpose) {
    q8t_rng rng = q8t_seed(5);
    float x[NX], want[2 * NX];
    q8t_fill(&rng, x, NX, -1, 1);
    /* splits only: [.., A * F] -> [A, F], pixels merged: one Transpose a head */
    int64_t split[4] = {1, Hh * Ww, A, F};
    int n_tr;
    float *y = two_heads(x, split, &n_tr);
    cr_assert_eq(n_tr, 2, "each head should keep one Transpose, not %d", n_tr);
    ref_heads(x, split, want);
    for (int i = 0; i < 2 * NX; i++) cr_assert_float_eq(y[i], want[i], 0, "element %d", i);
    free(y);
    /* [1, 4, 5, 12] -> [1, 5, 4, 12]: the 4 and the 5 swap places, no
     * common axes: the nodes stay, the values are the same */
    int64_t mixed[4] = {1, Ww, Hh, A * F};
    y = two_heads(x, mixed, &n_tr);
    cr_assert_eq(n_tr, 4, "a Reshape that mixes axes must not fold");
    ref_heads(x, mixed, want);
    for (int i = 0; i < 2 * NX; i++) cr_assert_float_eq(y[i], want[i], 0, "element %d", i);
    free(y);
}

Test(layout_fold, transpose_reshape_transpose_that_cancel_leave_a_reshape) {
    /* x [2, 3, 4] -> (2, 0, 1) -> [4, 2, 3] -> [4, 6] -> (1, 0) -> [6, 4]:
     * the same bytes as x, so no Transpose at all */
    q8t_rng rng = q8t_seed(6);
    float x[24];
    q8t_fill(&rng, x, 24, -1, 1);
    int64_t xd[3] = {2, 3, 4}, sd[1] = {2}, shape[2] = {4, 6};
    q8_graph *g = with_input(xd, 3);
    constant(g, "shape", Q8_I64, sd, 1, shape);
    const char *i1[1] = {"x"}, *i2[2] = {"t1", "shape"}, *i3[1] = {"z"};
    static const int64_t p1[3] = {2, 0, 1}, p2[2] = {1, 0};
    ints_attr(node(g, "Transpose", i1, 1, "t1"), "perm", p1, 3);
    node(g, "Reshape", i2, 2, "z");
    ints_attr(node(g, "Transpose", i3, 1, "y"), "perm", p2, 2);
    int pads, n_tr;
    float *y = finish_and_run(g, x, 24, &pads, &n_tr);
    cr_assert_eq(n_tr, 0, "the two Transposes cancel, %d left", n_tr);
    for (int i = 0; i < 24; i++) cr_assert_float_eq(y[i], x[i], 0, "element %d", i);
    free(y);
}
