/* Pruning with sensitivity allocation and re-fit (src/quant/prune_*.c):
 * the least-squares re-fit against plain magnitude pruning, the share-out
 * of the global budget, and the whole pass on the MNIST CNN. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "npy.h"
#include "onnx_import.h"
#include "passes.h"
#include "prune_fit.h"
#include "quantize.h"
#include "testutil.h"

static uint32_t rng = 12345;
static float frand(void) { /* uniform in [-1, 1) */
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / (float)(1u << 23) - 1.0f;
}

/* || X (w - v) ||^2 over the rows of X [n, k] */
static double out_error(const float *x, int n, int k, const float *w, const float *v) {
    double e = 0;
    for (int r = 0; r < n; r++) {
        double t = 0;
        for (int j = 0; j < k; j++) t += (double)x[r * k + j] * (w[j] - v[j]);
        e += t * t;
    }
    return e;
}

/* Inputs in pairs, the first of each a noisy copy of the second; the
 * weights small on the copies, so magnitude prunes exactly the copies. The
 * re-fit moves each copy's weight onto its twin: the dense output comes
 * back up to the noise, and the weights to w[2i] + w[2i+1]. (The
 * sequential update moves a pruned weight onto the inputs after it, so the
 * twin comes second here.) */
Test(prune_fit, refit_recovers_redundant_inputs) {
    enum { K = 16, N = 400 };
    static float x[N * K], h[K * K];
    float w[K], mag[K], fit[K];
    for (int r = 0; r < N; r++)
        for (int j = 0; j < K; j += 2) {
            x[r * K + j + 1] = frand();
            x[r * K + j] = x[r * K + j + 1] + 0.01f * frand();
        }
    for (int j = 0; j < K; j += 2) {
        w[j + 1] = 1.0f + 0.5f * frand();
        w[j] = 0.3f * frand();
    }
    memset(h, 0, sizeof h);
    for (int r = 0; r < N; r++)
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++) h[i * K + j] += x[r * K + i] * x[r * K + j];
    uint8_t mask[K];
    uint64_t order[K];
    q8_pfit_smallest(w, K, K / 2, mask, order);
    for (int j = 0; j < K; j++) cr_assert_eq(mask[j], 1 - j % 2, "magnitude prunes the copies");
    double predicted = q8_pfit_masked_error(w, mask, h, K);
    memcpy(mag, w, sizeof w);
    q8_pfit_prune_block(mag, mask, NULL, K, false);
    double e_mag = out_error(x, N, K, w, mag);
    cr_assert_float_eq(predicted, e_mag, 1e-3 * e_mag, "dw^T H dw is the output error");
    q8_pfit_factor(h, K, 1e-6);
    memcpy(fit, w, sizeof w);
    double loss = q8_pfit_prune_block(fit, mask, h, K, true);
    double e_fit = out_error(x, N, K, w, fit);
    for (int j = 0; j < K; j++) {
        if (j % 2 == 0) cr_assert_eq(fit[j], 0.0f);
        else cr_assert_float_eq(fit[j], w[j] + w[j - 1], 0.02, "weight %d", j);
    }
    cr_assert_lt(e_fit, 1e-2 * e_mag, "re-fit %g vs magnitude %g", e_fit, e_mag);
    cr_assert_float_eq(loss, e_fit, 0.05 * e_fit + 1e-4, "the returned loss is the output error");
}

/* The exact re-fit (narrow layers) moves a pruned weight onto its twin
 * whichever side of it the twin is, and its loss is the output error. */
Test(prune_fit, exact_refit_any_order) {
    enum { K = 12, N = 300 };
    static float x[N * K], h[K * K];
    float w[K], fit[K];
    uint8_t mask[K];
    for (int r = 0; r < N; r++)
        for (int j = 0; j < K; j += 2) { /* twin first, copy second */
            x[r * K + j] = frand();
            x[r * K + j + 1] = x[r * K + j] + 0.01f * frand();
        }
    for (int j = 0; j < K; j += 2) {
        w[j] = 1.0f + 0.5f * frand();
        w[j + 1] = 0.3f * frand();
        mask[j] = 0;
        mask[j + 1] = 1;
    }
    memset(h, 0, sizeof h);
    for (int r = 0; r < N; r++)
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++) h[i * K + j] += x[r * K + i] * x[r * K + j];
    memcpy(fit, w, sizeof w);
    double loss = q8_pfit_solve_block(fit, mask, h, K, 1e-6);
    double e_mag = q8_pfit_masked_error(w, mask, h, K), e_fit = out_error(x, N, K, w, fit);
    for (int j = 0; j < K; j += 2) {
        cr_assert_eq(fit[j + 1], 0.0f);
        cr_assert_float_eq(fit[j], w[j] + w[j + 1], 0.02, "weight %d", j);
    }
    cr_assert_lt(e_fit, 1e-2 * e_mag, "re-fit %g vs magnitude %g", e_fit, e_mag);
    cr_assert_float_eq(loss, e_fit, 0.05 * e_fit + 1e-4);
}

/* A layer of 8 outputs with 2 inputs each: its curve counts only what
 * pruning whole weights per row can give (0, 8 or 16 weights), so no grid
 * point claims weights for free that pruning would then take from a few
 * rows (it once did: 10% of 16 weights measured as 0 of 2 per row, error 0;
 * applied as 1 of 2 in two rows). */
Test(prune_fit, curve_counts_whole_weights_per_row) {
    enum { K = 2, M = 8 };
    static const float w[K * M] = {1, -2, 3, -4, 5, -6, 7, -8, 2, 1, -1, 3, 4, -2, 6, 5};
    q8t_in ins[] = {{"x", Q8_F32, 2, {4, K}, NULL}, {"w", Q8_F32, 2, {K, M}, w}};
    q8_graph *g = q8t_graph1("MatMul", ins, 2, 1);
    q8_pfit_layer l;
    q8_pfit_describe(g, 0, q8_graph_find(g, "w"), &l);
    cr_assert_eq(l.kind, Q8_PFIT_KN);
    cr_assert_eq(l.k, K);
    cr_assert_eq(l.m, M);
    q8_pfit_curve(g, &l, false);
    for (int gi = 0; gi < Q8_PFIT_GRID; gi++) {
        cr_assert_eq(l.cnt[gi] % M, 0, "grid %d: %lld weights", gi, (long long)l.cnt[gi]);
        if (l.cnt[gi] > 0) cr_assert_gt(l.err[gi], 0, "grid %d prunes for free", gi);
    }
    cr_assert_eq(l.cnt[Q8_PFIT_GRID - 1], K * M);
    q8_graph_free(g);
}

/* A MatMul of 64 inputs and 8 outputs whose H comes from n random rows. */
static double curve_at_half(int n, bool refit, double *plain) {
    enum { K = 64, M = 8 };
    static float w[K * M];
    q8t_rng r = q8t_seed(7);
    q8t_fill(&r, w, K * M, -1, 1);
    q8t_in ins[] = {{"x", Q8_F32, 2, {4, K}, NULL}, {"w", Q8_F32, 2, {K, M}, w}};
    q8_graph *g = q8t_graph1("MatMul", ins, 2, 1);
    q8_pfit_layer l;
    q8_pfit_describe(g, 0, q8_graph_find(g, "w"), &l);
    cr_assert_eq(l.blk, K);
    /* correlated inputs (16 latent factors and a little noise): what a
     * re-fit can move the pruned weights' work onto */
    enum { F = 16 };
    static float mix[F * K];
    q8t_fill(&r, mix, F * K, -1, 1);
    float *x = malloc(sizeof(float) * K * (size_t)n);
    for (int s = 0; s < n; s++) {
        float z[F];
        q8t_fill(&r, z, F, -1, 1);
        for (int i = 0; i < K; i++) {
            float v = 0.05f * q8t_uniform(&r, -1, 1);
            for (int f = 0; f < F; f++) v += z[f] * mix[f * K + i];
            x[s * K + i] = v;
        }
    }
    l.h = calloc(K * K, sizeof(float));
    for (int s = 0; s < n; s++)
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++) l.h[i * K + j] += x[s * K + i] * x[s * K + j];
    l.n_rows = n;
    /* what pruning the smaller half of each column costs, re-fit or not */
    double e = 0, energy = 0;
    float row[K];
    uint8_t mask[K];
    uint64_t order[K];
    for (int c = 0; c < M; c++) {
        for (int j = 0; j < K; j++) row[j] = w[j * M + c];
        q8_pfit_smallest(row, K, K / 2, mask, order);
        e += q8_pfit_masked_error(row, mask, l.h, K);
        energy += q8_pfit_energy(row, l.h, K);
    }
    *plain = e / energy;
    q8_pfit_curve(g, &l, refit);
    double got = l.err[(Q8_PFIT_GRID - 1) / 2];
    free(l.h);
    free(x);
    q8_graph_free(g);
    return got;
}

/* The curve of a layer whose calibration rows are fewer than its inputs is
 * measured without a re-fit (a least-squares fit on 16 rows for 64 inputs
 * reproduces those rows and says pruning is nearly free); with enough
 * rows the re-fit lowers it. */
Test(prune_fit, curve_refits_only_with_enough_rows) {
    double plain, got = curve_at_half(16, true, &plain);
    cr_assert_float_eq(got, plain, 1e-6 * plain, "16 rows: %g, magnitude alone %g", got, plain);
    got = curve_at_half(512, true, &plain);
    cr_assert_lt(got, 0.9 * plain, "512 rows: %g, magnitude alone %g", got, plain);
    got = curve_at_half(512, false, &plain);
    cr_assert_float_eq(got, plain, 1e-6 * plain, "no re-fit asked: %g vs %g", got, plain);
}

static void curve(q8_pfit_layer *l, int64_t numel, double scale, double power) {
    memset(l, 0, sizeof *l);
    l->numel = numel;
    l->eligible = true;
    for (int g = 0; g < Q8_PFIT_GRID; g++) {
        l->cnt[g] = numel * g / (Q8_PFIT_GRID - 1);
        l->err[g] = scale * pow(g / (double)(Q8_PFIT_GRID - 1), power);
    }
}

/* An insensitive layer takes the budget before a sensitive one; a
 * protected (ineligible) layer takes none, however insensitive. */
Test(prune_fit, allocation_follows_sensitivity) {
    q8_pfit_layer l[3];
    curve(&l[0], 1000, 1e-3, 1); /* insensitive */
    curve(&l[1], 1000, 1.0, 2);  /* sensitive */
    curve(&l[2], 1000, 0, 1);    /* free to prune, but protected */
    l[2].eligible = false;
    cr_assert(q8_pfit_allocate(l, 3, 1000));
    cr_assert_eq(l[0].count, 900); /* 90% at most while others can take the rest */
    cr_assert_eq(l[1].count, 100);
    cr_assert_eq(l[2].count, 0);
    /* all of it only when the budget needs it */
    cr_assert(q8_pfit_allocate(l, 3, 1950));
    cr_assert_eq(l[0].count, 1000);
    cr_assert_eq(l[1].count, 950);
    /* two equally sensitive convex curves share a budget evenly */
    curve(&l[0], 1000, 1.0, 2);
    curve(&l[1], 1000, 1.0, 2);
    cr_assert(q8_pfit_allocate(l, 2, 1000));
    cr_assert_eq(l[0].count, 500);
    cr_assert_eq(l[1].count, 500);
    /* more than the eligible layers hold: refused */
    cr_assert_not(q8_pfit_allocate(l, 2, 2001));
}

Test(prune_fit, budget_met_exactly) {
    q8_pfit_layer l[5];
    for (int i = 0; i < 5; i++) curve(&l[i], 997 + 131 * i, 1.0 + i, 1.0 + 0.5 * i);
    int64_t total = 0;
    for (int i = 0; i < 5; i++) total += l[i].numel;
    for (int64_t budget = 1; budget < total; budget += 613) {
        cr_assert(q8_pfit_allocate(l, 5, budget));
        int64_t sum = 0;
        for (int i = 0; i < 5; i++) {
            cr_assert_geq(l[i].count, 0);
            cr_assert_leq(l[i].count, l[i].numel);
            sum += l[i].count;
        }
        cr_assert_eq(sum, budget);
    }
}

static int64_t zeros(const q8_tensor *t) {
    int64_t z = 0;
    for (int64_t i = 0; i < q8_tensor_numel(t); i++) z += ((const float *)t->data)[i] == 0.0f;
    return z;
}

/* The pass on the MNIST CNN with its calibration samples: exactly half the
 * weights of the layers between the first and the last are zero, those two
 * stay dense, and the pruned weights are re-fitted (not the dense values). */
Test(prune_fit, mnist_cnn_budget_and_ends) {
    q8_error err = {0};
    q8_graph *g = NULL, *ref = NULL;
    cr_assert_eq(q8_onnx_load(Q8_SOURCE_DIR "/models/mnist/cnn.onnx", &g, &err), Q8_OK, "%s",
                 err.msg);
    q8_input_shape shape = {.name = "input", .ndim = 4, .dims = {1, 1, 28, 28}};
    q8_load_options lo = {.input_shapes = &shape, .n_input_shapes = 1};
    cr_assert_eq(q8_passes_run_for_quantize(g, &lo, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_onnx_load(Q8_SOURCE_DIR "/models/mnist/cnn.onnx", &ref, &err), Q8_OK);
    cr_assert_eq(q8_passes_run_for_quantize(ref, &lo, &err), Q8_OK, "%s", err.msg);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(Q8_SOURCE_DIR "/models/mnist/calib", g, &s, &err), Q8_OK,
                 "%s", err.msg);
    q8_prune_options po = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5, .sensitivity = true,
                           .protect_ends = true, .refit = true};
    q8_meta meta = {0};
    cr_assert_eq(q8_prune(g, &po, &s, 1, &meta, &err), Q8_OK, "%s", err.msg);
    int layers[64], nl = 0;
    for (int i = 0; i < g->n_nodes && nl < 64; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead || (strcmp(n->op_type, "Conv") && strcmp(n->op_type, "Gemm") &&
                        strcmp(n->op_type, "MatMul")))
            continue;
        layers[nl++] = n->inputs[1];
    }
    cr_assert_geq(nl, 3);
    int64_t total = 0, z = 0, moved = 0;
    for (int i = 0; i < nl; i++) {
        const q8_tensor *t = g->tensors[layers[i]];
        if (i == 0 || i == nl - 1) {
            cr_assert_eq(zeros(t), 0, "protected layer %d pruned", i);
            continue;
        }
        total += q8_tensor_numel(t);
        z += zeros(t);
        const float *a = t->data, *b = ref->tensors[layers[i]]->data;
        for (int64_t j = 0; j < q8_tensor_numel(t); j++) moved += a[j] != 0.0f && a[j] != b[j];
    }
    cr_assert_eq(z, total / 2, "%lld zeros of %lld", (long long)z, (long long)total);
    cr_assert_gt(moved, total / 4, "kept weights re-fitted");
    /* what quantize reports: every layer, the ends counted as protected */
    q8_prune_counts pc;
    cr_assert_eq(q8_prune_count(g, &po, &pc, &err), Q8_OK, "%s", err.msg);
    int64_t ends = q8_tensor_numel(g->tensors[layers[0]]) +
                   q8_tensor_numel(g->tensors[layers[nl - 1]]);
    cr_assert_eq(pc.layers, nl);
    cr_assert_eq(pc.weights, total + ends);
    cr_assert_eq(pc.zeros, z);
    cr_assert_eq(pc.protected_weights, ends);
    q8_meta_free(&meta);
    q8_samples_free(&s);
    q8_graph_free(g);
    q8_graph_free(ref);
}

/* The MLP's output over its calibration samples, run on the CPU. */
static void mlp_outputs(q8_graph *g, const q8_sample_set *s, float *out, int n_out) {
    q8_error err = {0};
    q8_model m = {.g = g};
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = 1, .device = Q8_DEVICE_CPU};
    cr_assert_eq(q8_session_create(&m, &so, &sess, &err), Q8_OK, "%s", err.msg);
    for (int i = 0; i < s->n_samples; i++) {
        q8_tensor *t = NULL;
        cr_assert_eq(q8_sample_load(s, i, 0, &t, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_set_input(sess, g->tensors[g->inputs[0]]->name, t->dtype, t->dims,
                                          t->ndim, t->data, &err), Q8_OK, "%s", err.msg);
        q8_tensor_free(t);
        cr_assert_eq(q8_session_run(sess, &err), Q8_OK, "%s", err.msg);
        q8_tensor_info info;
        const void *y;
        cr_assert_eq(q8_session_output(sess, 0, &info, &y, &err), Q8_OK, "%s", err.msg);
        memcpy(out + i * n_out, y, sizeof(float) * (size_t)n_out);
    }
    q8_session_free(sess);
}

static q8_graph *mlp(void) {
    q8_error err = {0};
    q8_graph *g = NULL;
    cr_assert_eq(q8_onnx_load(Q8_SOURCE_DIR "/models/mnist/mlp.onnx", &g, &err), Q8_OK, "%s",
                 err.msg);
    q8_input_shape shape = {.name = "input", .ndim = 4, .dims = {1, 1, 28, 28}};
    q8_load_options lo = {.input_shapes = &shape, .n_input_shapes = 1};
    cr_assert_eq(q8_passes_run_for_quantize(g, &lo, &err), Q8_OK, "%s", err.msg);
    return g;
}

/* Re-fitting to the dense model's output (refit_dense) takes back the
 * error of the pruned layers upstream: on the MNIST MLP with all three
 * layers pruned, the output is nearer the dense model's than with each
 * layer re-fitted to its own dense output on its pruned inputs. */
Test(prune_fit, dense_target_takes_back_upstream_error) {
    enum { NOUT = 10, NS = 64 };
    q8_error err = {0};
    q8_graph *ref = mlp();
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(Q8_SOURCE_DIR "/models/mnist/calib", ref, &s, &err), Q8_OK,
                 "%s", err.msg);
    cr_assert_leq(s.n_samples, NS);
    static float want[NS * NOUT], got[2][NS * NOUT];
    mlp_outputs(ref, &s, want, NOUT);
    double e[2] = {0, 0}, energy = 0;
    for (int dense = 0; dense < 2; dense++) {
        q8_graph *g = mlp();
        q8_prune_options po = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.7,
                               .sensitivity = false, .refit = true, .refit_dense = dense};
        q8_meta meta = {0};
        cr_assert_eq(q8_prune(g, &po, &s, 1, &meta, &err), Q8_OK, "%s", err.msg);
        mlp_outputs(g, &s, got[dense], NOUT);
        for (int i = 0; i < s.n_samples * NOUT; i++) {
            double d = (double)got[dense][i] - want[i];
            e[dense] += d * d;
            if (!dense) energy += (double)want[i] * want[i];
        }
        q8_meta_free(&meta);
        q8_graph_free(g);
    }
    cr_log_info("output error / energy: layer %g, dense %g", e[0] / energy, e[1] / energy);
    cr_assert_lt(e[1], 0.8 * e[0], "dense target %g vs layer %g", e[1], e[0]);
    q8_samples_free(&s);
    q8_graph_free(ref);
}

/* ---- output-aware sensitivity (prune_probe.c) ---- */

static int add_node(q8_graph *g, const char *op, const int *in, int ni, int out) {
    char name[32];
    snprintf(name, sizeof name, "%s_%d", op, out);
    int k = q8_graph_add_node(g, name, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, ni, &out, 1, NULL), Q8_OK);
    return k;
}

static int const_f32(q8_graph *g, const char *name, int ndim, const int64_t *dims, q8t_rng *r,
                     float v) {
    int t = q8t_tensor(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, ndim);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    float *d = g->tensors[t]->data;
    for (int64_t i = 0; i < q8_tensor_numel(g->tensors[t]); i++)
        d[i] = r ? q8t_uniform(r, -1, 1) : v;
    return t;
}

/* y = x Wa + 0.01 (x Wb): two layers alike in weights and inputs, so alike
 * at their own outputs, but Wb's error reaches y a hundred times smaller. */
static q8_graph *two_paths(void) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {1, 16}, wd[2] = {16, 16};
    int x = q8t_tensor(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, d, 2);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    q8t_rng r = q8t_seed(9);
    int wa = const_f32(g, "wa", 2, wd, &r, 0), wb = const_f32(g, "wb", 2, wd, &r, 0);
    int k = const_f32(g, "k", 0, NULL, NULL, 0.01f);
    int a = q8t_tensor(g, "a"), b = q8t_tensor(g, "b"), bs = q8t_tensor(g, "bs");
    int y = q8t_tensor(g, "y");
    add_node(g, "MatMul", (int[]){x, wa}, 2, a);
    add_node(g, "MatMul", (int[]){x, wb}, 2, b);
    add_node(g, "Mul", (int[]){b, k}, 2, bs);
    add_node(g, "Add", (int[]){a, bs}, 2, y);
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = y;
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    return g;
}

static double zero_share(const q8_graph *g, const char *name) {
    const q8_tensor *t = g->tensors[q8_graph_find(g, name)];
    return (double)zeros(t) / (double)q8_tensor_numel(t);
}

/* Measured at each layer's output the two layers look alike and share the
 * budget about evenly; measured at the model's output (each layer pruned
 * alone) Wb costs y a ten-thousandth of what Wa does, and takes most of
 * the budget. */
Test(prune_fit, output_probe_follows_what_reaches_the_output) {
    char *dir = q8t_tmpdir("probe");
    q8t_rng r = q8t_seed(4);
    int64_t d[2] = {1, 16};
    for (int i = 0; i < 32; i++) {
        float x[16];
        q8t_fill(&r, x, 16, -1, 1);
        char p[512], name[32];
        snprintf(name, sizeof name, "s%02d.npy", i);
        q8t_path(p, sizeof p, dir, name);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 2, x, NULL), Q8_OK);
    }
    double share[2][2];
    for (int output = 0; output < 2; output++) {
        q8_graph *g = two_paths();
        q8_error err = {0};
        q8_sample_set s;
        cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
        q8_prune_options po = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5,
                               .sensitivity = true, .refit = true, .output_aware = output};
        q8_meta meta = {0};
        cr_assert_eq(q8_prune(g, &po, &s, 1, &meta, &err), Q8_OK, "%s", err.msg);
        share[output][0] = zero_share(g, "wa");
        share[output][1] = zero_share(g, "wb");
        if (output) {
            const q8_meta_entry *e = q8_meta_get(&meta, "prune.probed_layers");
            cr_assert(e && e->i == 2, "both layers probed");
        }
        q8_meta_free(&meta);
        q8_samples_free(&s);
        q8_graph_free(g);
    }
    cr_log_info("zeros Wa, Wb: per layer %.2f %.2f, at the output %.2f %.2f", share[0][0],
                share[0][1], share[1][0], share[1][1]);
    cr_assert_lt(fabs(share[0][0] - share[0][1]), 0.2, "per layer: alike");
    cr_assert_geq(share[1][1], 0.85, "at the output: Wb pruned most (%.2f)", share[1][1]);
    cr_assert_leq(share[1][0], 0.15, "at the output: Wa kept (%.2f)", share[1][0]);
    q8t_rm_rf(dir);
    free(dir);
}
