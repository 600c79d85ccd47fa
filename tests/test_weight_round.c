/* quantize --weight-rounding gptq|sums (src/quant/weight_round*.c): the
 * block rounding against nearest rounding on random problems, the grid and
 * its clamp, rows the rewrite reproduces bit for bit, the window sums, a
 * real layer's output error, and the option on the command line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "npy.h"
#include "onnx_import.h"
#include "passes.h"
#include "prune_fit.h"
#include "quantize.h"
#include "testutil.h"
#include "weight_round.h"
#include "wround_choose.h"

#define MNIST Q8_SOURCE_DIR "/models/mnist"

static uint32_t rng = 777;
static float frand(void) { /* uniform in [-1, 1) */
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / (float)(1u << 23) - 1.0f;
}

/* || X (w - v) ||^2 over the rows of X [n, k]: the plain reference */
static double out_error(const float *x, int n, int k, const float *w, const float *v) {
    double e = 0;
    for (int r = 0; r < n; r++) {
        double t = 0;
        for (int j = 0; j < k; j++) t += (double)x[r * k + j] * ((double)w[j] - v[j]);
        e += t * t;
    }
    return e;
}

/* Correlated inputs (each a mix of a few shared factors plus its own
 * noise), as the rows of a layer's input are; H = X^T X. */
static void random_problem(float *x, int n, int k, float *h, float *w) {
    enum { F = 6 };
    float mix[128 * F]; /* k <= 128 */
    for (int j = 0; j < k * F; j++) mix[j] = frand();
    for (int r = 0; r < n; r++) {
        float f[F];
        for (int i = 0; i < F; i++) f[i] = frand();
        for (int j = 0; j < k; j++) {
            float t = 0.2f * frand();
            for (int i = 0; i < F; i++) t += mix[j * F + i] * f[i];
            x[r * k + j] = t;
        }
    }
    memset(h, 0, sizeof(float) * (size_t)(k * k));
    for (int r = 0; r < n; r++)
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) h[i * k + j] += x[r * k + i] * x[r * k + j];
    for (int j = 0; j < k; j++) w[j] = frand() * (1.0f + 3.0f * (j % 5 == 0));
}

static float amax_of(const float *w, int k) {
    float a = 0;
    for (int j = 0; j < k; j++) a = fmaxf(a, fabsf(w[j]));
    return a;
}

static void assert_on_grid(const float *v, int k, float scale) {
    for (int j = 0; j < k; j++) {
        float q = nearbyintf(v[j] / scale);
        cr_assert_eq(q * scale, v[j], "entry %d: %g is not on the grid of %g", j, v[j], scale);
        cr_assert(fabsf(q) <= 127, "entry %d: %g steps", j, q);
    }
}

/* On every one of 20 random problems the compensated rounding's output
 * error is at most nearest's, and over all of them well below; the values
 * are on the grid; the returned loss is the output error of the damped H. */
Test(weight_round, gptq_beats_nearest_on_random_problems) {
    enum { K = 40, N = 300, P = 20 };
    static float x[N * K], h[K * K], u[K * K];
    float w[K], vn[K], vg[K];
    double sum_n = 0, sum_g = 0;
    for (int p = 0; p < P; p++) {
        random_problem(x, N, K, h, w);
        float scale = q8_weight_scale(amax_of(w, K));
        memcpy(vn, w, sizeof w);
        cr_assert_eq(q8_wround_block(vn, NULL, NULL, K, scale, -1), 0.0);
        memcpy(u, h, sizeof h);
        double damp = 1e-4;
        q8_pfit_factor(u, K, damp);
        memcpy(vg, w, sizeof w);
        double loss = q8_wround_block(vg, NULL, u, K, scale, -1);
        assert_on_grid(vn, K, scale);
        assert_on_grid(vg, K, scale);
        for (int j = 0; j < K; j++) /* nearest is nearest */
            cr_assert_leq(fabsf(vn[j] - w[j]), 0.5f * scale * (1 + 1e-6f));
        double en = out_error(x, N, K, w, vn), eg = out_error(x, N, K, w, vg);
        cr_assert_leq(eg, en, "problem %d: gptq %g > nearest %g", p, eg, en);
        double mean = 0;
        for (int j = 0; j < K; j++) mean += h[j * K + j] / K;
        float dw[K];
        double ridge = 0;
        for (int j = 0; j < K; j++) {
            dw[j] = vg[j] - w[j];
            ridge += damp * mean * (double)dw[j] * dw[j];
        }
        cr_assert_float_eq(loss, eg + ridge, 1e-3 * (eg + ridge), "loss %g vs %g", loss, eg + ridge);
        sum_n += en;
        sum_g += eg;
    }
    cr_log_info("output error: nearest %g, gptq %g (%.2fx)", sum_n, sum_g, sum_g / sum_n);
    cr_assert_lt(sum_g, 0.5 * sum_n, "gptq %g vs nearest %g", sum_g, sum_n);
}

/* A scale too small for the weights: every value stays within +-127 steps
 * (compensation pushes later entries further out; they clamp). */
Test(weight_round, clamps_to_127_steps) {
    enum { K = 16 };
    static float h[K * K];
    float w[K];
    for (int i = 0; i < K; i++) {
        w[i] = 2.0f * (i % 2 ? 1 : -1) + 0.1f * frand();
        for (int j = 0; j < K; j++) h[i * K + j] = (i == j) + 0.5f;
    }
    q8_pfit_factor(h, K, 0.01);
    float scale = 0.01f; /* 200 steps wanted */
    q8_wround_block(w, NULL, h, K, scale, -1);
    assert_on_grid(w, K, scale);
    for (int j = 0; j < K; j++) cr_assert_eq(fabsf(w[j]), 127 * scale, "entry %d: %g", j, w[j]);
}

/* Rows of any magnitude come out so that q8_quantize_weights gives the
 * FP32 row's scale and integers whose products with it are the row, bit
 * for bit; zeros stay zero; the row reaches 127 steps. */
Test(weight_round, rows_reproduce_bit_for_bit) {
    enum { K = 70, BLK = 32, N = 200, NB = (K + BLK - 1) / BLK };
    static float x[N * K], hk[K * K], ub[NB][BLK * BLK];
    float w[K], row[K], tmp[K], s2;
    int8_t qt[K], q[K];
    const float *u[NB];
    float mags[] = {1e-20f, 3e-4f, 1.0f, 7.5f, 1e5f};
    int done = 0;
    for (int p = 0; p < 25; p++) {
        random_problem(x, N, K, hk, w);
        for (int b = 0; b < NB; b++) { /* the block-diagonal part of H, factored */
            int c0 = b * BLK, bs = K - c0 < BLK ? K - c0 : BLK;
            for (int i = 0; i < bs; i++)
                for (int j = 0; j < bs; j++) ub[b][i * bs + j] = hk[(c0 + i) * K + c0 + j];
            q8_pfit_factor(ub[b], bs, 0.01);
            u[b] = p % 5 == 4 && b == 1 ? NULL : ub[b]; /* a block without statistics */
        }
        for (int j = 0; j < K; j++) {
            w[j] *= mags[p % 5];
            if (j % 7 == 3) w[j] = 0.0f; /* pruned */
        }
        float scale = q8_weight_scale(amax_of(w, K));
        memcpy(row, w, sizeof w);
        bool ok = q8_wround_row(row, K, BLK, u, tmp, qt);
        cr_assert(ok || !memcmp(row, w, sizeof w), "a row not rounded is left as it was");
        if (!ok) continue;
        done++;
        q8_quantize_weights(row, 1, K, q, &s2);
        cr_assert_eq(s2, scale, "problem %d: scale %a, wanted %a", p, s2, scale);
        int top = 0;
        for (int j = 0; j < K; j++) {
            cr_assert_eq((float)q[j] * s2, row[j], "problem %d entry %d", p, j);
            if (w[j] == 0.0f) cr_assert_eq(row[j], 0.0f, "pruned entry %d", j);
            top = abs(q[j]) > top ? abs(q[j]) : top;
        }
        cr_assert_eq(top, 127);
    }
    cr_assert_geq(done, 24, "only %d rows of 25 rounded", done);
    float zero[K] = {0};
    memcpy(row, zero, sizeof zero);
    cr_assert_not(q8_wround_row(row, K, BLK, u, tmp, qt), "an all-zero row stays for nearest");
}

/* The entry of the largest |w| is pinned to 127 steps when compensation
 * would leave the row without one: the scale survives. The second input
 * is half the first: the first's rounding error (0.4 steps) lands doubled
 * on the second, the largest. */
Test(weight_round, pins_the_largest_entry) {
    float h[4] = {1, 0.5f, 0.5f, 0.2501f}, w[2] = {0.4f, -127.0f}, tmp[2];
    int8_t qt[2], q[2];
    q8_pfit_factor(h, 2, 1e-6);
    const float *u[1] = {h};
    float scale = q8_weight_scale(127.0f), s2;
    float v[2] = {w[0], w[1]};
    q8_wround_block(v, NULL, h, 2, scale, -1);
    cr_assert_lt(fabsf(v[1]), 127 * scale, "compensation moves the largest off 127 steps");
    cr_assert(q8_wround_row(w, 2, 2, u, tmp, qt));
    q8_quantize_weights(w, 1, 2, q, &s2);
    cr_assert_eq(s2, scale);
    cr_assert_eq(q[1], -127);
}

/* --weight-rounding sums on random rows of windows (3x3, 1x7, 25 taps,
 * one tap; zero-sum filters as BatchNorm folding leaves them, magnitudes
 * from 1e-20 to 1e5, pruned zeros): the rewrite reproduces the row bit for
 * bit at nearest's scale; every tap is within one step of its FP32 value
 * and, unless moved, is nearest's; each window's sum is within half a step
 * of the FP32 sum wherever the window had taps it could move; zeros and
 * +-127 taps stay; the count returned is the taps that differ from
 * nearest. A plain reference: nearest rounding and the sums, in double. */
static void check_sums_row(const float *w, int k, int win, int p) {
    float row[200], tmp[200], s2;
    int8_t qt[200], q[200], qn[200];
    cr_assert_leq(k, 200);
    memcpy(row, w, sizeof(float) * (size_t)k);
    float scale = q8_weight_scale(amax_of(w, k));
    q8_quantize_weights(w, 1, k, qn, &s2); /* nearest */
    int64_t moved = q8_wround_row_sums(row, k, win, tmp, qt);
    cr_assert_geq(moved, 0, "problem %d: row not rounded", p);
    q8_quantize_weights(row, 1, k, q, &s2);
    cr_assert_eq(s2, scale, "problem %d: scale %a, wanted %a", p, s2, scale);
    int64_t differ = 0;
    for (int w0 = 0; w0 < k; w0 += win) {
        double sv = 0, sq = 0;
        bool stuck = false;
        for (int j = w0; j < w0 + win; j++) {
            cr_assert_eq((float)q[j] * s2, row[j], "problem %d entry %d", p, j);
            double v = (double)w[j] / scale;
            cr_assert_lt(fabs(q[j] - v), 1.0, "problem %d entry %d: %d for %g", p, j, q[j], v);
            if (w[j] == 0.0f) cr_assert_eq(q[j], 0, "pruned entry %d", j);
            if (abs(qn[j]) == 127) cr_assert_eq(q[j], qn[j], "entry %d at the end moved", j);
            differ += q[j] != qn[j];
            /* a window whose every tap already moved, or sits at an end or
             * at 0, may keep an error over half a step */
            stuck |= abs(qn[j]) >= 126 || w[j] == 0.0f;
            sv += v;
            sq += q[j];
        }
        if (!stuck) cr_assert_leq(fabs(sq - sv), 0.5 + 1e-3, "problem %d window %d: sum %g vs %g",
                                  p, w0 / win, sq, sv);
    }
    cr_assert_eq(moved, differ, "problem %d: %lld moved, %lld differ", p, (long long)moved,
                 (long long)differ);
}

Test(weight_round, sums_keep_each_window) {
    float mags[] = {1e-20f, 3e-4f, 1.0f, 7.5f, 1e5f};
    int wins[] = {9, 7, 25, 1};
    float w[200];
    int64_t changed = 0;
    for (int p = 0; p < 80; p++) {
        int win = wins[p % 4], k = win * (1 + p % 8);
        for (int w0 = 0; w0 < k; w0 += win) { /* a zero-sum edge filter plus noise */
            float m = 0;
            for (int j = w0; j < w0 + win; j++) m += (w[j] = 4.0f * frand());
            for (int j = w0; j < w0 + win; j++) w[j] = (w[j] - m / win + 0.01f * frand()) * mags[p % 5];
        }
        if (p % 3 == 0) w[k / 2] = 0.0f; /* pruned */
        float row[200], tmp[200];
        int8_t qt[200];
        memcpy(row, w, sizeof(float) * (size_t)k);
        changed += q8_wround_row_sums(row, k, win, tmp, qt);
        check_sums_row(w, k, win, p);
    }
    cr_assert_gt(changed, 50, "only %lld taps moved in 80 rows", (long long)changed);
    float zero[9] = {0}, tmp[9];
    int8_t qt[9];
    cr_assert_eq(q8_wround_row_sums(zero, 9, 9, tmp, qt), -1, "an all-zero row stays for nearest");
    cr_assert_eq(q8_wround_row_sums(w, 10, 3, tmp, qt), -1, "k not a multiple of the window");
    float bad[9] = {0.3f, -0.2f, NAN, 0.1f, 0.45f, 0.45f, 0.45f, -1.0f, 0.2f};
    cr_assert_eq(q8_wround_row_sums(bad, 9, 9, tmp, qt), -1, "a NaN weight: left for nearest");
    cr_assert(isnan(bad[2]) && bad[0] == 0.3f, "and the row unchanged");
}

/* A window with nothing it may move (its sum 0.8 steps short, but the
 * taps that could take it would reach 127 steps) comes out as nearest's;
 * windows of one tap never move. */
Test(weight_round, sums_leave_what_cannot_move) {
    float w[4] = {126.4f, 126.4f, 127.0f, 0.0f}, tmp[40], v[40];
    int8_t qt[40], q[4], qn[4];
    float s2;
    memcpy(v, w, sizeof w);
    q8_quantize_weights(w, 1, 4, qn, &s2);
    cr_assert_eq(q8_wround_row_sums(v, 4, 4, tmp, qt), 0, "nothing can move");
    q8_quantize_weights(v, 1, 4, q, &s2);
    cr_assert_arr_eq(q, qn, 4);
    for (int p = 0; p < 5; p++) {
        for (int j = 0; j < 40; j++) v[j] = frand() * 3.0f;
        cr_assert_eq(q8_wround_row_sums(v, 40, 1, tmp, qt), 0, "one-tap windows move nothing");
    }
}

/* The MNIST CNN: every rounded weight is on the grid the rewrite picks;
 * each layer's output error on the calibration rows (w - v)^T H (w - v),
 * H of the FP32 model, is lower for the first layer (same inputs in both
 * models) than with nearest rounding, and lower over the whole model. */
Test(weight_round, mnist_layer_error_drops, .timeout = 300) {
    q8_error err = {0};
    q8_graph *g = NULL, *ref = NULL;
    q8_input_shape shape = {.name = "input", .ndim = 4, .dims = {1, 1, 28, 28}};
    q8_load_options lo = {.input_shapes = &shape, .n_input_shapes = 1};
    cr_assert_eq(q8_onnx_load(MNIST "/cnn.onnx", &g, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_passes_run_for_quantize(g, &lo, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_onnx_load(MNIST "/cnn.onnx", &ref, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_passes_run_for_quantize(ref, &lo, &err), Q8_OK, "%s", err.msg);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(MNIST "/calib", g, &s, &err), Q8_OK, "%s", err.msg);
    q8_quant_options qo = {.weight_rounding = Q8_WROUND_GPTQ};
    q8_meta meta = {0};
    cr_assert_eq(q8_round_weights(g, &qo, &s, 2, &meta, NULL, &err), Q8_OK, "%s", err.msg);
    const q8_meta_entry *e = q8_meta_get(&meta, "quant.weight_rounding");
    cr_assert(e && e->type == Q8_META_STR && !strcmp(e->s, "gptq"));
    q8_pfit_layer l[16];
    int nl = 0;
    for (int i = 0; i < ref->n_nodes && nl < 16; i++) {
        const q8_node *n = ref->nodes[i];
        if (n->dead || (strcmp(n->op_type, "Conv") && strcmp(n->op_type, "Gemm") &&
                        strcmp(n->op_type, "MatMul")))
            continue;
        q8_pfit_describe(ref, i, n->inputs[1], &l[nl]);
        cr_assert_neq(l[nl].kind, Q8_PFIT_NONE);
        nl++;
    }
    cr_assert_geq(nl, 3);
    cr_assert_eq(q8_pfit_capture(ref, l, nl, &s, 2, Q8_PFIT_H, &err), Q8_OK, "%s", err.msg);
    double tot_n = 0, tot_g = 0;
    for (int i = 0; i < nl; i++) {
        const q8_tensor *wt = ref->tensors[l[i].wt];
        const float *w = wt->data, *v = g->tensors[l[i].wt]->data;
        if (!q8_pfit_fit_trusted(&l[i])) {
            /* fewer calibration rows than inputs (the FC: 64 rows, 1568
             * inputs): left as trained, for the rewrite's nearest rounding */
            cr_log_info("layer %d: %lld rows for %lld inputs: not rounded by gptq", i,
                        (long long)l[i].n_rows, (long long)l[i].k);
            cr_assert(!memcmp(w, v, sizeof(float) * (size_t)l[i].numel), "layer %d changed", i);
            cr_assert_gt(i, 0);
            free(l[i].h);
            continue;
        }
        float *a = malloc(sizeof(float) * (size_t)l[i].k), *b = malloc(sizeof(float) * (size_t)l[i].k);
        float *dq = malloc(sizeof(float) * (size_t)l[i].k), sc, sg;
        int8_t *q = malloc((size_t)l[i].k), *qg = malloc((size_t)l[i].k);
        double en = 0, eg = 0;
        int64_t moved = 0;
        for (int64_t r = 0; r < l[i].m; r++) {
            for (int64_t j = 0; j < l[i].k; j++) { /* row r of both, as the rewrite reads it */
                int64_t at = l[i].kind == Q8_PFIT_KN ? j * l[i].m + r : r * l[i].k + j;
                a[j] = w[at];
                b[j] = v[at];
            }
            q8_quantize_weights(a, 1, l[i].k, q, &sc);
            q8_quantize_weights(b, 1, l[i].k, qg, &sg);
            cr_assert_eq(sg, sc, "layer %d row %lld: the FP32 row's scale", i, (long long)r);
            for (int64_t j = 0; j < l[i].k; j++) {
                cr_assert_eq((float)qg[j] * sg, b[j], "layer %d row %lld: not on the grid", i,
                             (long long)r);
                moved += qg[j] != q[j];
            }
            int64_t grp = r / (l[i].m / l[i].groups);
            for (int64_t bi = 0; bi < l[i].nblk; bi++) {
                int64_t c0 = bi * l[i].blk, bs = l[i].k - c0 < l[i].blk ? l[i].k - c0 : l[i].blk;
                const float *h = l[i].h + (grp * l[i].nblk + bi) * l[i].blk * l[i].blk;
                for (int64_t j = 0; j < bs; j++) {
                    dq[j] = a[c0 + j] - (float)q[c0 + j] * sc;
                    b[c0 + j] = a[c0 + j] - b[c0 + j];
                }
                en += q8_pfit_energy(dq, h, bs);
                eg += q8_pfit_energy(b + c0, h, bs);
            }
        }
        cr_log_info("layer %d: output error nearest %g, gptq %g; %lld of %lld weights moved", i,
                    en, eg, (long long)moved, (long long)l[i].numel);
        cr_assert_gt(moved, 0, "layer %d: rounded as nearest", i);
        if (i == 0) cr_assert_lt(eg, 0.8 * en, "first layer: gptq %g vs nearest %g", eg, en);
        tot_n += en;
        tot_g += eg;
        free(a);
        free(b);
        free(dq);
        free(q);
        free(qg);
        free(l[i].h);
    }
    cr_assert_lt(tot_g, tot_n, "all layers: gptq %g vs nearest %g", tot_g, tot_n);
    q8_meta_free(&meta);
    q8_samples_free(&s);
    q8_graph_free(g);
    q8_graph_free(ref);
}

/* After --prune 0.5 with its re-fit, the rounding keeps every pruned
 * weight at 0 and moves kept ones. */
Test(weight_round, pruned_weights_stay_zero, .timeout = 300) {
    q8_error err = {0};
    q8_graph *g = NULL;
    q8_input_shape shape = {.name = "input", .ndim = 4, .dims = {1, 1, 28, 28}};
    q8_load_options lo = {.input_shapes = &shape, .n_input_shapes = 1};
    cr_assert_eq(q8_onnx_load(MNIST "/cnn.onnx", &g, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_passes_run_for_quantize(g, &lo, &err), Q8_OK, "%s", err.msg);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(MNIST "/calib", g, &s, &err), Q8_OK, "%s", err.msg);
    q8_prune_options po = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5, .sensitivity = true,
                           .refit = true};
    q8_meta meta = {0};
    cr_assert_eq(q8_prune(g, &po, &s, 2, &meta, &err), Q8_OK, "%s", err.msg);
    int64_t total = 0, zeros = 0;
    float *before[64] = {0};
    int wt[64], nw = 0;
    for (int i = 0; i < g->n_nodes && nw < 64; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead || (strcmp(n->op_type, "Conv") && strcmp(n->op_type, "Gemm"))) continue;
        const q8_tensor *t = g->tensors[n->inputs[1]];
        wt[nw] = n->inputs[1];
        before[nw] = malloc(sizeof(float) * (size_t)q8_tensor_numel(t));
        memcpy(before[nw++], t->data, sizeof(float) * (size_t)q8_tensor_numel(t));
    }
    q8_quant_options qo = {.weight_rounding = Q8_WROUND_GPTQ};
    cr_assert_eq(q8_round_weights(g, &qo, &s, 2, &meta, NULL, &err), Q8_OK, "%s", err.msg);
    int64_t moved = 0;
    for (int i = 0; i < nw; i++) {
        const float *w = g->tensors[wt[i]]->data;
        for (int64_t j = 0; j < q8_tensor_numel(g->tensors[wt[i]]); j++) {
            total++;
            if (before[i][j] == 0.0f) {
                zeros++;
                cr_assert_eq(w[j], 0.0f, "layer %d weight %lld: pruned, now %g", i,
                             (long long)j, w[j]);
            }
            moved += before[i][j] != 0.0f && w[j] != before[i][j];
        }
        free(before[i]);
    }
    cr_assert_gt(zeros, total / 3, "pruned first");
    cr_assert_gt(moved, 0);
    q8_meta_free(&meta);
    q8_samples_free(&s);
    q8_graph_free(g);
}

/* quantize --weight-rounding: gptq writes a model that says so and runs
 * (at a deployment shape other than the calibration samples': the rounded
 * weights are carried over); a wrong value is one error line and exit 2. */
Test(weight_round, cli_option, .timeout = 600) {
    char *tmp = q8t_tmpdir("wround");
    char out_g[512], out_n[512], out_s[512];
    q8t_path(out_g, sizeof out_g, tmp, "g.q8");
    q8t_path(out_s, sizeof out_s, tmp, "s.q8");
    q8t_path(out_n, sizeof out_n, tmp, "n.q8");
    char *gptq[] = {Q8_BINARY_DIR "/quantize", MNIST "/cnn.onnx", "-o", out_g, "--calib",
                    MNIST "/calib", "--calib-method", "percentile", "--weight-rounding", "gptq",
                    "--input-shape", "input=1000x1x28x28", NULL};
    char *near[] = {Q8_BINARY_DIR "/quantize", MNIST "/cnn.onnx", "-o", out_n, "--calib",
                    MNIST "/calib", "--calib-method", "percentile", "--weight-rounding",
                    "nearest", "--input-shape", "input=1000x1x28x28", NULL};
    char *sums[] = {Q8_BINARY_DIR "/quantize", MNIST "/cnn.onnx", "-o", out_s, "--calib",
                    MNIST "/calib", "--calib-method", "percentile", "--weight-rounding", "sums",
                    "--input-shape", "input=1000x1x28x28", NULL};
    char *bad[] = {Q8_BINARY_DIR "/quantize", MNIST "/cnn.onnx", "-o", out_n, "--calib",
                   MNIST "/calib", "--weight-rounding", "gtpq", NULL};
    q8t_cmd r = q8t_run_cmd(tmp, 300, gptq);
    cr_assert(r.exited && r.code == 0, "gptq: exit %d: %s", r.code, r.err);
    q8t_cmd_free(&r);
    r = q8t_run_cmd(tmp, 300, near);
    cr_assert(r.exited && r.code == 0, "nearest: exit %d: %s", r.code, r.err);
    q8t_cmd_free(&r);
    r = q8t_run_cmd(tmp, 300, sums);
    cr_assert(r.exited && r.code == 0, "sums: exit %d: %s", r.code, r.err);
    q8t_cmd_free(&r);
    q8_model *m;
    q8_error err = {0};
    cr_assert_eq(q8_model_open(out_g, NULL, &m, &err), Q8_OK, "%s", err.msg);
    const q8_meta_entry *e = q8_meta_get(&m->meta, "quant.weight_rounding");
    cr_assert(e && e->type == Q8_META_STR && !strcmp(e->s, "gptq"));
    q8_model_free(m);
    cr_assert_eq(q8_model_open(out_n, NULL, &m, &err), Q8_OK, "%s", err.msg);
    cr_assert_null(q8_meta_get(&m->meta, "quant.weight_rounding"), "nearest is not recorded");
    q8_model_free(m);
    cr_assert_eq(q8_model_open(out_s, NULL, &m, &err), Q8_OK, "%s", err.msg);
    e = q8_meta_get(&m->meta, "quant.weight_rounding");
    cr_assert(e && e->type == Q8_META_STR && !strcmp(e->s, "sums"));
    e = q8_meta_get(&m->meta, "quant.weight_sums_moved");
    cr_assert(e && e->type == Q8_META_INT && e->i > 0, "taps moved recorded");
    q8_model_free(m);
    double top_g = q8t_mnist_top1(out_g), top_n = q8t_mnist_top1(out_n);
    double top_s = q8t_mnist_top1(out_s);
    cr_log_info("MNIST CNN top-1: nearest %.4f, gptq %.4f, sums %.4f", top_n, top_g, top_s);
    cr_assert_geq(top_g, top_n - 0.005);
    cr_assert_geq(top_s, top_n - 0.005);
    unlink(out_n);
    r = q8t_run_cmd(tmp, 20, bad);
    cr_assert(r.exited && r.code == 2, "exit %d", r.code);
    cr_assert(!strncmp(r.err, "quantize: --weight-rounding must be auto, nearest, sums or gptq\n",
                       strlen(r.err) + 1), "%s", r.err);
    cr_assert(access(out_n, F_OK) != 0, "nothing written");
    q8t_cmd_free(&r);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* Layers that calibration keeps FP32 compute with their weights as
 * trained, whatever the rounding: sums rounds only the int8 copies, gptq
 * (which rounds the graph, its statistics need the rounded layers upstream)
 * gets them back after the rewrite. Calibrated on MNIST digits of which
 * every fourth is 1000 times fainter, the wide-range rule keeps every layer
 * of the CNN FP32, so the .q8 has no int8 layer and its output is the ONNX
 * model's, bit for bit. (Rounded in the graph before calibration, as sums
 * was until 2026-11-29, such layers had int8 weights: Silero VAD, all FP32
 * in its .q8, moved a chunk's speech probability by 0.105.) */
static void fp32_layers_as_trained(const char *rounding) {
    char *tmp = q8t_tmpdir("wrfp32");
    char q8[512], cal[512], out_q[512], out_o[512];
    q8t_path(q8, sizeof q8, tmp, "m.q8");
    q8t_path(cal, sizeof cal, tmp, "calib");
    q8t_path(out_q, sizeof out_q, tmp, "q");
    q8t_path(out_o, sizeof out_o, tmp, "o");
    cr_assert_eq(mkdir(cal, 0755), 0);
    q8_error err = {0};
    for (int i = 0; i < 16; i++) {
        char src[600], dst[600];
        snprintf(src, sizeof src, MNIST "/calib/calib_%03d.npy", i);
        snprintf(dst, sizeof dst, "%s/%03d.npy", cal, i);
        q8_tensor *t = NULL;
        cr_assert_eq(q8_npy_read(src, &t, &err), Q8_OK, "%s", err.msg);
        float *x = t->data;
        for (int64_t j = 0; i % 4 == 0 && j < q8_tensor_numel(t); j++) x[j] *= 1e-3f;
        cr_assert_eq(q8_npy_write(dst, t->dtype, t->dims, t->ndim, t->data, &err), Q8_OK, "%s",
                     err.msg);
        q8_tensor_free(t);
    }
    char *quant[] = {Q8_BINARY_DIR "/quantize", MNIST "/cnn.onnx", "-o", q8, "--calib", cal,
                     "--weight-rounding", (char *)rounding, NULL};
    q8t_cmd r = q8t_run_cmd(tmp, 200, quant);
    cr_assert(r.exited && r.code == 0, "quantize: exit %d: %s", r.code, r.err);
    cr_assert(strstr(r.out, " 0 INT8 nodes") || strstr(r.err, " 0 INT8 nodes"), "%s%s", r.out,
              r.err);
    /* auto scores each candidate as it would be written: with every layer
     * FP32 both are exact, a tie, and sums is kept (its candidate used to
     * be scored with the FP32 layers' weights rounded: 28.6 dB on Silero
     * against gptq's inf, and gptq taken) */
    if (!strcmp(rounding, "auto"))
        cr_assert(strstr(r.out, "weight rounding auto: sums (") &&
                      strstr(r.out, "sums inf dB, gptq inf dB"),
                  "%s", r.out);
    q8t_cmd_free(&r);
    char *run_q[] = {Q8_BINARY_DIR "/q8run", q8, "--input", MNIST "/sample.npy", "--out", out_q,
                     NULL};
    char *run_o[] = {Q8_BINARY_DIR "/q8run", MNIST "/cnn.onnx", "--input", MNIST "/sample.npy",
                     "--out", out_o, NULL};
    r = q8t_run_cmd(tmp, 60, run_q);
    cr_assert(r.exited && r.code == 0, "q8run .q8: %s", r.err);
    q8t_cmd_free(&r);
    r = q8t_run_cmd(tmp, 60, run_o);
    cr_assert(r.exited && r.code == 0, "q8run .onnx: %s", r.err);
    q8t_cmd_free(&r);
    char fq[600], fo[600];
    snprintf(fq, sizeof fq, "%s/logits.npy", out_q);
    snprintf(fo, sizeof fo, "%s/logits.npy", out_o);
    size_t nq = 0, no = 0;
    char *a = q8t_slurp(fq, &nq), *b = q8t_slurp(fo, &no);
    cr_assert(a && b, "outputs %s, %s", fq, fo);
    cr_assert(nq == no && memcmp(a, b, nq) == 0, "%s: the all-FP32 .q8 differs from the ONNX model",
              rounding);
    free(a);
    free(b);
    q8t_rm_rf(tmp);
    free(tmp);
}

Test(weight_round, sums_leaves_fp32_layers_as_trained, .timeout = 300) {
    fp32_layers_as_trained("sums");
}

Test(weight_round, gptq_gives_fp32_layers_their_weights_back, .timeout = 300) {
    fp32_layers_as_trained("gptq");
}

Test(weight_round, auto_scores_fp32_layers_as_trained, .timeout = 300) {
    fp32_layers_as_trained("auto");
}

/* --weight-rounding auto (wround_choose.c). x -> Conv 1x1 to 16 equal
 * channels -> Conv 1x1 (w2) -> y. With w2's signs alternating its sum
 * cancels to 0.02: each weight's rounding error is a large share of y, and
 * the 16 inputs are one value, so GPTQ moves every error onto the inputs
 * not yet rounded and y comes out nearly exact; with w2 all positive nothing
 * cancels and the roundings give about the same y. */
static void auto_model(const char *dir, bool cancel, char *onnx, char *calib) {
    float w1[16], w2[16];
    q8t_rng rng = q8t_seed(cancel ? 41 : 42);
    float sum = 0;
    for (int i = 0; i < 16; i++) {
        w1[i] = 1.0f;
        w2[i] = q8t_uniform(&rng, 0.3f, 1.0f) * (cancel && i % 2 ? -1.0f : 1.0f);
        sum += i < 15 ? w2[i] : 0;
    }
    if (cancel) w2[15] = 0.02f - sum; /* y = 0.02 x */
    q8t_path(onnx, 512, dir, cancel ? "cancel.onnx" : "plain.onnx");
    q8t_path(calib, 512, dir, "calib");
    q8t_two_conv_model(onnx, 16, w1, w2, false);
    q8t_square_samples(calib, 16, 8, 7);
}

static q8_quantize_result quantize_rounding(const char *onnx, const char *calib, const char *out,
                                            q8_weight_rounding wr) {
    q8_quantize_options o = {.calib_dir = calib, .method = Q8_CALIB_MINMAX, .n_threads = 1,
                             .quant = {.weight_rounding = wr}};
    q8_quantize_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(onnx, out, &o, &r, &err), Q8_OK, "%s", err.msg);
    return r;
}

static const char *rounding_of(const char *q8) {
    static char s[32];
    q8_model *m;
    q8_error err = {0};
    cr_assert_eq(q8_model_open(q8, NULL, &m, &err), Q8_OK, "%s", err.msg);
    const q8_meta_entry *e = q8_meta_get(&m->meta, "quant.weight_rounding");
    snprintf(s, sizeof s, "%s", e && e->type == Q8_META_STR ? e->s : "-");
    q8_model_free(m);
    return s;
}

Test(weight_round, auto_takes_gptq_where_it_gains, .timeout = 300) {
    char *tmp = q8t_tmpdir("wrauto");
    char onnx[512], calib[512], out[512];
    auto_model(tmp, true, onnx, calib);
    q8t_path(out, sizeof out, tmp, "a.q8");
    q8_quantize_result r = quantize_rounding(onnx, calib, out, Q8_WROUND_AUTO);
    cr_log_info("cancelling w2: sums %.1f dB, gptq %.1f dB on %d samples", r.wround_db[0],
                r.wround_db[1], r.wround_scored);
    cr_assert_eq(r.wround_scored, 4, "the last quarter of 16 samples is held out");
    cr_assert_eq(r.wround_chosen, Q8_WROUND_GPTQ);
    cr_assert_gt(r.wround_db[1], r.wround_db[0] + 6, "gptq %.1f vs sums %.1f", r.wround_db[1],
                 r.wround_db[0]);
    cr_assert_str_eq(rounding_of(out), "gptq");
    q8t_rm_rf(tmp);
    free(tmp);
}

/* Where gptq gains less than the margin, auto's model is sums' byte for
 * byte (the weights rounded again from the trained ones, the ranges those
 * sums measured); and so it is with too few samples to hold some out. */
Test(weight_round, auto_keeps_sums_otherwise, .timeout = 300) {
    char *tmp = q8t_tmpdir("wrauto");
    char onnx[512], calib[512], out_a[512], out_s[512];
    auto_model(tmp, false, onnx, calib);
    q8t_path(out_a, sizeof out_a, tmp, "a.q8");
    q8t_path(out_s, sizeof out_s, tmp, "s.q8");
    q8_quantize_result r = quantize_rounding(onnx, calib, out_a, Q8_WROUND_AUTO);
    cr_log_info("plain w2: sums %.1f dB, gptq %.1f dB", r.wround_db[0], r.wround_db[1]);
    cr_assert_eq(r.wround_scored, 4);
    cr_assert_eq(r.wround_chosen, Q8_WROUND_SUMS);
    cr_assert_lt(r.wround_db[1], r.wround_db[0] + Q8_WROUND_AUTO_MARGIN_DB);
    quantize_rounding(onnx, calib, out_s, Q8_WROUND_SUMS);
    size_t na, ns;
    char *a = q8t_slurp(out_a, &na), *s = q8t_slurp(out_s, &ns);
    cr_assert(a && s && na == ns && !memcmp(a, s, na), "auto's file differs from sums'");
    free(a);
    free(s);
    /* three samples: nothing held out, sums, said why */
    char few[512];
    q8t_path(few, sizeof few, tmp, "few");
    q8t_square_samples(few, 3, 8, 9);
    auto_model(tmp, true, onnx, calib);
    r = quantize_rounding(onnx, few, out_a, Q8_WROUND_AUTO);
    cr_assert_eq(r.wround_scored, 0);
    cr_assert_eq(r.wround_chosen, Q8_WROUND_SUMS);
    cr_assert(strstr(r.wround_note, "3 calibration samples"), "%s", r.wround_note);
    cr_assert_str_eq(rounding_of(out_a), "sums");
    q8t_rm_rf(tmp);
    free(tmp);
}
