/* quantize: ONNX FP32 model -> compact INT8 .q8 file.
 *
 *   quantize MODEL.onnx -o OUT.q8 [--calib DIR] [--input-shape NAME=DIMS]...
 *            [--calib-method auto|minmax|percentile|entropy|mse] [--percentile P]
 *            [--prune FRACTION] [--prune-mode unstructured|2:4]
 *            [--prune-scope sensitivity|layer|global] [--prune-skip NAME,...]
 *            [--prune-refit on|dense|layer|off] [--prune-protect ends|none]
 *            [--prune-measure output|layer]
 *            [--fp32-layers NAME,...] [--threads N] [--equalize on|relu|off]
 *            [--scalar-tables on|off|auto] [--int8-prelu on|off|auto] [--int8-gates on|off]
 *            [--int8-tails on|off]
 *            [--output-ranges full|calibrated]
 *            [--int8-embeddings on|off] [--weight-rounding auto|nearest|sums|gptq]
 *            [--max-drop POINTS --data DIR [--labels FILE.npy] [--max-trials N]]
 *            [--speed-check] [--min-sqnr DB [--data DIR] [--max-trials N]]
 *            [--wide-range fp32|int8] [--compress-weights auto|on|off]
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "cli_util.h"

#define MAX_LIST 1024

static void usage(FILE *f) {
    fprintf(f,
            "usage: quantize MODEL.onnx -o OUT.q8 --calib DIR [--input-shape NAME=DIMS]...\n"
            "                [--calib-method auto|minmax|percentile|entropy|mse] [--percentile P]\n"
            "                [--prune FRACTION] [--prune-mode unstructured|2:4]\n"
            "                [--prune-scope sensitivity|layer|global] [--prune-skip NAME,...]\n"
            "                [--prune-refit on|dense|layer|off] [--prune-protect ends|none]\n"
            "                [--prune-measure output|layer]\n"
            "                [--fp32-layers NAME,...] [--threads N] [--bind NAME=FILE]...\n"
            "                [--equalize on|relu|off] [--scalar-tables on|off|auto]\n"
            "                [--int8-prelu on|off|auto] [--int8-gates on|off]\n"
            "                [--fp32-heads on|off|auto]\n"
            "                [--int8-embeddings on|off]\n"
            "                [--int8-tails on|off] [--output-ranges full|calibrated]\n"
            "                [--weight-rounding auto|nearest|sums|gptq]\n"
            "                [--max-drop POINTS --data DIR [--labels FILE.npy] [--max-trials N]]\n"
            "                [--speed-check] [--min-sqnr auto|off|DB [--data DIR] [--max-trials N]]\n"
            "                [--wide-range fp32|int8] [--compress-weights auto|on|off]\n"
            "  Calibrates on the samples in DIR (*.npy / *.pb, one file per sample; one\n"
            "  subfolder per input for multi-input models), prunes and quantizes to INT8.\n"
            "  --calib-method auto (the default): percentile (--percentile P, 99.99) or mse\n"
            "  ranges, whichever gives the INT8 model the better output SQNR on the\n"
            "  calibration samples.\n"
            "  --equalize on (the default): a Conv whose output only a depthwise Conv reads\n"
            "  (directly or through activations) is rescaled per channel so that the\n"
            "  tensors between them have equal channel ranges on the calibration samples\n"
            "  (the same FP32 model; activations other than Relu become one table per\n"
            "  channel in INT8); relu: only pairs with at most a Relu between; off: none.\n"
            "  --int8-gates on: a Mul of two activations between INT8 layers (squeeze-excite\n"
            "  scaling) runs on int8 as q8.QMul (faster, one more rounding); off (the\n"
            "  default): FP32.\n"
            "  --int8-tails off: tables and views that lead to no INT8 layer (toward the\n"
            "  outputs) run in FP32, so the last INT8 layers write float, not int8\n"
            "  (heat maps, offsets, scores keep their peaks and steps); on (the default):\n"
            "  int8 as far as it flows.\n"
            "  --output-ranges full (the default): int8 tensors that reach an output\n"
            "  through tables and views only take the extremes seen in calibration as\n"
            "  range (rare peaks kept); calibrated: the calibration method's ranges.\n"
            "  --int8-embeddings on (the default): a Gather from a float constant table\n"
            "  (token or position embeddings) reads an int8 copy with one scale per row,\n"
            "  and so does an Add of such a table to an activation (a position embedding);\n"
            "  off: the FP32 tables.\n"
            "  --weight-rounding gptq: each row of INT8 weights is rounded one input at a\n"
            "  time, the rounding error moved onto the inputs not yet rounded as the\n"
            "  calibration samples' input covariance says (GPTQ); nearest: each weight\n"
            "  to its nearest step; sums: nearest, then in each convolution window (one\n"
            "  output and one input channel) the taps rounded furthest moved one step\n"
            "  back until the window's sum is the step nearest its FP32 sum; auto (the\n"
            "  default): gptq where it gains 0.5 dB of output SQNR over sums on the last\n"
            "  quarter of the calibration samples (held out from its fit), else sums.\n"
            "  --scalar-tables on: Add/Sub/Mul/Div by a constant scalar between INT8 layers\n"
            "  run as int8 tables (faster, one more rounding); off: FP32; auto (the\n"
            "  default): on unless it costs more than 1.5 dB of output SQNR on the\n"
            "  calibration samples.\n"
            "  --int8-prelu on: a PRelu between int8 nodes runs in int8 (q8.QPRelu), and the\n"
            "  residual sum before it as q8.QAdd; off: FP32; auto (the default): on unless\n"
            "  the output SQNR on the calibration samples is lower with it.\n"
            "  --fp32-heads on: the layers that write the outputs (and those that feed them)\n"
            "  stay FP32 when they hold at most 2%% of the weights (more accurate, slower);\n"
            "  off (the default): INT8 like the rest; auto: on when it gains 1 dB of output\n"
            "  SQNR on the calibration samples and grows the activation arena by at most\n"
            "  half; not with --prune.\n"
            "  --prune F: F of the prunable weights, shared out over the layers by their\n"
            "  measured sensitivity (scope sensitivity; layer: F of each layer; global: one\n"
            "  threshold), first and last layers dense (--prune-protect none: pruned too);\n"
            "  the kept weights are re-fitted on the samples, layer after layer, to the\n"
            "  dense model's outputs (--prune-refit layer: to each dense layer's output on\n"
            "  its pruned inputs, fewer passes, the default (on) for 2:4; off: not).\n"
            "  --prune-measure output: each layer's sensitivity at its own output is scaled\n"
            "  by the error the model's outputs show with that layer pruned alone (up to 8\n"
            "  samples, within a fixed multiply-add budget); layer: its own output only.\n"
            "  --bind: the input's value is fixed (folded into the model, recorded in the\n"
            "  .q8; --calib needs no samples of it); an integer input the same in every\n"
            "  sample that decides shapes or If branches is bound so too.\n"
            "  --max-drop: measure the model on the --data samples and fall back on the most\n"
            "  damaged layers (dense, then FP32) until top-1 (vs --labels, else agreement with\n"
            "  FP32) is at most POINTS percentage points below FP32 (0.5 = half a point);\n"
            "  writes the best model found; exit status 3 if the target was not reached.\n"
            "  --min-sqnr DB: the same, label-free: until the output SQNR against FP32 on the\n"
            "  --data samples (default: the --calib samples) is at least DB. auto (the\n"
            "  default): when --calib-method auto measured the INT8 model under 12 dB and\n"
            "  nothing is pruned, the same search for 12 dB, in at most 4 trials, keeping in\n"
            "  FP32 at most 2%% of the file's bytes more; off: never.\n"
            "  --speed-check: time each INT8 layer against its FP32 form on this machine\n"
            "  (calibration sample 0, --threads) and keep FP32 the layers INT8 makes slower.\n"
            "  --wide-range fp32 (the default): an activation whose range varies by orders of\n"
            "  magnitude from sample to sample (a tenth of the samples below 1/32 of the\n"
            "  INT8 range: faint and loud audio), and what linear layers compute from it,\n"
            "  get no static INT8 scale: their layers stay FP32; int8: quantized anyway.\n"
            "  --compress-weights on: dense weights are deflated in the .q8 too where that\n"
            "  is smaller (the smallest file; every weight is then inflated into memory at\n"
            "  load instead of read in place from the mapped file); off: only pruned\n"
            "  weights and tables; auto (the default): on when something is pruned.\n");
}

/* Split "a,b,c" in place into list; returns the count or -1 if too many. */
static int split_list(char *s, const char **list, int max, int have) {
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        if (have == max) return -1;
        if (*tok) list[have++] = tok;
    }
    return have;
}

/* An option with two values: 0 for a, 1 for b; -1 (message printed) for
 * anything else. */
static int two_way(const char *opt, const char *arg, const char *a, const char *b) {
    if (!strcmp(arg, a)) return 0;
    if (!strcmp(arg, b)) return 1;
    fprintf(stderr, "quantize: --%s must be %s or %s\n", opt, a, b);
    return -1;
}

/* on, off or auto: 1, 0, 2; -1 (message printed) for anything else. */
static int on_off_auto(const char *opt, const char *arg) {
    if (!strcmp(arg, "on")) return 1;
    if (!strcmp(arg, "off")) return 0;
    if (!strcmp(arg, "auto")) return 2;
    fprintf(stderr, "quantize: --%s must be on, off or auto\n", opt);
    return -1;
}

static void print_warning(void *arg, const char *msg) {
    (void)arg;
    q8_cli_warn("quantize", msg);
}

static void print_written(const char *out, const q8_quantize_result *r) {
    if (r->calib_scored > 0)
        printf("calibration auto: %s ranges (output SQNR of the INT8 model on %d calibration "
               "samples: percentile %.1f dB, mse %.1f dB)\n",
               r->calib_chosen == Q8_CALIB_MSE ? "mse" : "percentile", r->calib_scored,
               r->calib_candidate_db[0], r->calib_candidate_db[1]);
    if (r->wround_scored > 0)
        printf("weight rounding auto: %s (output SQNR of the INT8 model on %d held-out "
               "calibration samples: sums %.1f dB, gptq %.1f dB)\n",
               r->wround_chosen == Q8_WROUND_GPTQ ? "gptq" : "sums", r->wround_scored,
               r->wround_db[0], r->wround_db[1]);
    else if (r->wround_note[0])
        printf("weight rounding auto: sums (%s)\n", r->wround_note);
    if (r->tables_scored > 0)
        printf("scalar tables %s (output SQNR of the INT8 model on %d calibration samples: "
               "off %.1f dB, on %.1f dB)\n", r->tables_chosen ? "on" : "off", r->tables_scored,
               r->tables_db[0], r->tables_db[1]);
    if (r->prelu_scored > 0)
        printf("int8 prelu %s (output SQNR of the INT8 model on %d calibration samples: "
               "off %.1f dB, on %.1f dB)\n", r->prelu_chosen ? "on" : "off", r->prelu_scored,
               r->prelu_db[0], r->prelu_db[1]);
    if (r->heads_scored > 0)
        printf("fp32 heads %s (%d layers; output SQNR of the INT8 model on %d calibration "
               "samples: INT8 %.1f dB, FP32 %.1f dB)\n", r->heads_chosen ? "on" : "off",
               r->n_heads, r->heads_scored, r->heads_db[0], r->heads_db[1]);
    else if (r->n_heads > 0 && r->heads_chosen)
        printf("fp32 heads on (%d layers)\n", r->n_heads);
    else if (r->n_heads > 0 && r->heads_arena[1] == 0)
        printf("fp32 heads off (%d layers; pruned: INT8 for the smaller file, --fp32-heads on "
               "takes them)\n", r->n_heads);
    else if (r->n_heads > 0 && !q8_heads_arena_fits(r->heads_arena[0], r->heads_arena[1]))
        printf("fp32 heads off (%d layers; the activation arena would grow from %.1f to %.1f "
               "MiB, over 1.5x)\n", r->n_heads, (double)r->heads_arena[0] / 1048576.0,
               (double)r->heads_arena[1] / 1048576.0);
    if (r->n_equalized > 0)
        printf("equalized %d conv -> depthwise pair%s, %d through activations (per-channel "
               "tables)\n", r->n_equalized, r->n_equalized > 1 ? "s" : "",
               r->n_equalized_through);
    if (r->n_int8_tables > 0)
        printf("int8 embedding tables: %d lookup%s (--int8-embeddings off: FP32)\n",
               r->n_int8_tables, r->n_int8_tables > 1 ? "s" : "");
    if (r->n_int8_added_tables > 0)
        printf("int8 added tables: %d (a constant added to an activation, one scale per row; "
               "--int8-embeddings off: FP32)\n", r->n_int8_added_tables);
    if (r->prune.layers > 0 && r->prune.weights > 0) {
        /* what was asked is a share of the prunable weights; say what it
         * is of all of them (a protected end may hold most: the MNIST
         * MLP's first layer, 85%) */
        printf("pruned: %lld of the %lld weights of %d layer%s are zero (%.1f%%)",
               (long long)r->prune.zeros, (long long)r->prune.weights, r->prune.layers,
               r->prune.layers > 1 ? "s" : "",
               100.0 * (double)r->prune.zeros / (double)r->prune.weights);
        if (r->prune.protected_weights > 0)
            printf("; the first and last layers, %lld weights (%.0f%%), stay dense "
                   "(--prune-protect none prunes them too)",
                   (long long)r->prune.protected_weights,
                   100.0 * (double)r->prune.protected_weights / (double)r->prune.weights);
        printf("\n");
    }
    printf("wrote %s: %zu bytes (%.3fx of the %zu-byte ONNX file), %d INT8 nodes, "
           "calibrated on %d samples, activation arena %zu B (FP32 %zu B), %.2f s\n",
           out, r->q8_bytes, r->onnx_bytes ? (double)r->q8_bytes / (double)r->onnx_bytes : 0.0,
           r->onnx_bytes, r->n_quantized, r->n_samples, r->q8_arena_bytes, r->fp32_arena_bytes,
           r->seconds);
    if (r->n_onnx_integer > 0)
        printf("note: the model was already quantized by another tool: its %d integer node%s "
               "(ConvInteger, MatMulInteger, QLinear*) run as they are%s\n",
               r->n_onnx_integer, r->n_onnx_integer == 1 ? "" : "s",
               r->n_quantized ? "" : ", and no float layer was left for q8 to quantize");
}

static void print_trial(void *arg, const q8_search_trial *t) {
    const q8_search_options *so = arg;
    if (t->index == 1)
        printf("trial 1: as asked");
    else if (t->action == Q8_SEARCH_UNDO)
        printf("trial %d: back as they were, the steps that gained nothing: %s", t->index,
               t->node);
    else
    {
        printf("trial %d: %s %s (SQNR alone %.1f dB", t->index,
               t->action == Q8_SEARCH_DENSE ? "no pruning for" : "FP32 for", t->node,
               t->layer_sqnr_db);
        if (!isnan(t->layer_gain_db)) printf("; exact, it gave the output %+.1f dB", t->layer_gain_db);
        printf(")");
    }
    if (so->by_sqnr)
        printf(": output SQNR %.1f dB", t->sqnr_db);
    else if (so->labels_path)
        printf(": top-1 %.2f%%, drop %.2f points", 100 * t->top1, t->drop);
    else
        printf(": top-1 agreement with FP32 %.2f%%, drop %.2f points", 100 * t->agreement, t->drop);
    printf(", %zu bytes\n", t->q8_bytes);
    fflush(stdout);
}

static void print_list(const char *what, char *const *v, int n) {
    printf("  %s (%d)%s", what, n, n ? ": " : "\n");
    for (int i = 0; i < n; i++) printf("%s%s", v[i], i + 1 < n ? ", " : "\n");
}

/* --speed-check: say what was measured and which layers were kept in FP32. */
static int run_speed(const char *onnx, const char *out, const q8_quantize_options *o) {
    q8_error err = {0};
    q8_speed_result r;
    if (q8_quantize_speed(onnx, out, o, 30, &r, &err) != Q8_OK) {
        q8_cli_error("quantize", err.msg);
        return 1;
    }
    printf("speed check: %d INT8 layers timed against FP32 (min of 30 runs of sample 0): "
           "model FP32 %.3f ms, INT8 %.3f ms\n", r.n_layers, r.fp32_ms, r.int8_ms);
    for (int i = 0; i < r.n_layers; i++)
        if (r.layers[i].kept)
            printf("  %s: INT8 %.4f ms (with its conversions) vs FP32 %.4f ms\n",
                   r.layers[i].node, r.layers[i].int8_ms, r.layers[i].fp32_ms);
    if (!r.n_kept)
        printf("  no layer is slower in INT8: all kept INT8\n");
    else if (r.reverted)
        printf("  with these %d in FP32 the model took %.3f ms, not faster than %.3f ms: "
               "all kept INT8\n", r.n_kept, r.int8_kept_ms, r.int8_ms);
    else
        printf("  kept these %d in FP32: model %.3f ms (all INT8: %.3f ms)\n", r.n_kept,
               r.int8_kept_ms, r.int8_ms);
    print_written(out, &r.q);
    q8_speed_result_free(&r);
    return 0;
}

/* --max-drop: exit 0 when met, 3 when the best model found misses it. */
static int run_search(const char *onnx, const char *out, const q8_quantize_options *o,
                      const q8_search_options *so) {
    q8_error err = {0};
    q8_search_result r;
    if (so->by_sqnr)
        printf("searching: output SQNR >= %g dB against FP32 on %s, at most %d trials\n",
               so->min_sqnr_db, so->data_dir ? so->data_dir : o->calib_dir, so->max_trials);
    else
        printf("searching: at most %g points of %s on %s, at most %d trials\n", so->max_drop,
               so->labels_path ? "top-1 vs the labels" : "top-1 agreement with FP32",
               so->data_dir, so->max_trials);
    if (q8_quantize_search(onnx, out, o, so, print_trial, (void *)so, &r, &err) != Q8_OK) {
        q8_cli_error("quantize", err.msg);
        return 1;
    }
    if (so->by_sqnr)
        printf("best model: output SQNR %.1f dB (as asked: %.1f dB)\n", r.best.sqnr_db,
               r.first.sqnr_db);
    else if (r.labels)
        printf("FP32 top-1 %.2f%% on %lld rows; best model: top-1 %.2f%%, drop %.2f points "
               "(as asked: %.2f)\n", 100 * r.fp32_top1, (long long)r.rows, 100 * r.best.top1,
               r.best.drop, r.first.drop);
    else
        printf("best model: top-1 agreement with FP32 %.2f%% on %lld rows, drop %.2f points "
               "(as asked: %.2f)\n", 100 * r.best.agreement, (long long)r.rows, r.best.drop,
               r.first.drop);
    if (r.met && so->by_sqnr)
        printf("criterion met: output SQNR %.1f >= %g dB after %d trial%s\n", r.best.sqnr_db,
               so->min_sqnr_db, r.trials, r.trials == 1 ? "" : "s");
    else if (r.met)
        printf("criterion met: drop %.2f <= %g points after %d trial%s\n", r.best.drop,
               so->max_drop, r.trials, r.trials == 1 ? "" : "s");
    else if (so->by_sqnr)
        printf("criterion NOT met: the best output SQNR found is %.1f < %g dB after %d trial%s "
               "(%s); writing the best model found anyway\n", r.best.sqnr_db, so->min_sqnr_db,
               r.trials, r.trials == 1 ? "" : "s",
               r.exhausted ? (so->max_added_bytes ? "no layer left to fall back on within the "
                                                      "byte budget"
                                                    : "no layer left to fall back on")
                           : "the --max-trials budget");
    else
        printf("criterion NOT met: the best drop found is %.2f > %g points after %d trial%s (%s); "
               "writing the best model found anyway\n", r.best.drop, so->max_drop, r.trials,
               r.trials == 1 ? "" : "s",
               r.exhausted ? "no layer left to fall back on" : "the --max-trials budget");
    print_list("layers made dense (no pruning)", r.dense_layers, r.n_dense_layers);
    print_list("layers kept in FP32", r.fp32_layers, r.n_fp32_layers);
    print_written(out, &r.q);
    int rc = r.met ? 0 : 3;
    q8_search_result_free(&r);
    return rc;
}

/* --min-sqnr auto: the output SQNR below which quantize looks for layers to
 * keep in FP32, the budget it has for them (a share of the INT8 file) and
 * its trials (the first repeats the model just written). docs/accuracy.md,
 * "A default for --min-sqnr", says why these. */
#ifndef Q8_AUTO_MIN_SQNR_DB /* a build may try another floor */
#define Q8_AUTO_MIN_SQNR_DB 12.0
#endif
#define Q8_AUTO_BUDGET 0.02
#define Q8_AUTO_TRIALS 4
/* From the floor up to Q8_AUTO_PROBE_DB, one step is tried, and only for a
 * layer whose exact outputs gained the model's at least
 * Q8_AUTO_PROBE_GAIN_DB in the analysis of the model written (FaceRes:
 * its first depthwise conv, +5.5 dB; the steps other kit models offered
 * there gained 0.1-1.3 dB and their searches to 20 dB cost PP-OCR
 * recognition 7x its quantize time: docs/accuracy.md, "One large step
 * above the floor"). */
#define Q8_AUTO_PROBE_DB 20.0
#define Q8_AUTO_PROBE_GAIN_DB 3.0
/* The search compares every layer with FP32: it holds each activation of
 * one run twice (docs/cli.md). A model past this is left to --min-sqnr. */
#define Q8_AUTO_MAX_HELD ((size_t)512 << 20)

/* --min-sqnr auto between the floor and Q8_AUTO_PROBE_DB: the model just
 * written (trial 1, analysed layer by layer) and, if its most damaging
 * layer gains the output Q8_AUTO_PROBE_GAIN_DB or more when exact and fits
 * the byte budget, the model with that layer in FP32, kept if better. */
static int auto_probe(const char *onnx, const char *out, const q8_quantize_options *o,
                      const q8_quantize_result *r, double db) {
    q8_search_options so = {.max_drop = -1, .by_sqnr = true, .min_sqnr_db = Q8_AUTO_PROBE_DB,
                            .max_trials = 2,
                            .max_added_bytes = (size_t)(Q8_AUTO_BUDGET * (double)r->q8_bytes),
                            .automatic = true,
                            .min_step_gain_db = Q8_AUTO_PROBE_GAIN_DB, .out_is_first = true};
    printf("output SQNR %.1f dB < %g dB: trying one layer in FP32 if it gains the output "
           "%g dB or more (--min-sqnr off: not)\n", db, Q8_AUTO_PROBE_DB, Q8_AUTO_PROBE_GAIN_DB);
    q8_quantize_options ao = *o;
    q8_quantize_pin_auto(&ao, r);
    q8_error err = {0};
    q8_search_result sr;
    if (q8_quantize_search(onnx, out, &ao, &so, print_trial, (void *)&so, &sr, &err) != Q8_OK) {
        q8_cli_warn("quantize", err.msg);
        q8_cli_warn("quantize", "the FP32 fallback probe stopped: the model written above stays");
        return 0;
    }
    if (!sr.written) {
        printf("no step taken (%s): the model above stays\n",
               sr.no_large_step ? "no layer gains that much" : "none better");
    } else {
        printf("output SQNR %.1f -> %.1f dB\n", sr.first.sqnr_db, sr.best.sqnr_db);
        print_list("layers kept in FP32", sr.fp32_layers, sr.n_fp32_layers);
        print_written(out, &sr.q);
    }
    q8_search_result_free(&sr);
    return 0;
}

/* Only --calib-method auto measures the output SQNR while quantizing; a
 * model at or above the floor is left as written. A pruned model is too:
 * auto scores it against the pruned FP32 model, the search against the
 * dense one, and would undo the sparsity asked for (--min-sqnr DB does
 * that when asked). */
static int auto_search(const char *onnx, const char *out, const q8_quantize_options *o,
                       const q8_quantize_result *r, const q8_search_options *given,
                       bool trials_given) {
    if (r->calib_scored <= 0 || o->prune.mode != Q8_PRUNE_NONE) return 0;
    double db = r->calib_candidate_db[r->calib_chosen == Q8_CALIB_MSE ? 1 : 0];
    /* --weight-rounding auto scored the model written against the FP32
     * model with its weights as trained (auto's ranges score compares with
     * the rounded ones: optimistic), on fewer samples, held out */
    if (r->wround_scored > 0) db = r->wround_db[r->wround_chosen == Q8_WROUND_GPTQ ? 1 : 0];
    bool probe = !(db < Q8_AUTO_MIN_SQNR_DB);
    if (probe && !(db < Q8_AUTO_PROBE_DB)) return 0;
    if (probe && 2 * r->fp32_activation_bytes > Q8_AUTO_MAX_HELD) return 0;
    if (probe) return auto_probe(onnx, out, o, r, db);
    if (2 * r->fp32_activation_bytes > Q8_AUTO_MAX_HELD) {
        printf("output SQNR %.1f dB < %g dB, but the search for layers to keep in FP32 would "
               "hold %zu MiB of activations (over %zu MiB): not run (--min-sqnr %g runs it)\n",
               db, Q8_AUTO_MIN_SQNR_DB, (2 * r->fp32_activation_bytes) >> 20,
               Q8_AUTO_MAX_HELD >> 20, Q8_AUTO_MIN_SQNR_DB);
        return 0;
    }
    q8_search_options so = {.max_drop = -1, .by_sqnr = true, .min_sqnr_db = Q8_AUTO_MIN_SQNR_DB,
                            .max_trials = trials_given ? given->max_trials : Q8_AUTO_TRIALS,
                            .max_added_bytes = (size_t)(Q8_AUTO_BUDGET * (double)r->q8_bytes),
                            .automatic = true};
    printf("output SQNR %.1f dB < %g dB: looking for layers to keep in FP32 within %zu bytes "
           "(2%% of the file; --min-sqnr off: not)\n", db, Q8_AUTO_MIN_SQNR_DB,
           so.max_added_bytes);
    /* what auto chose, so that trial 1 is the model just written */
    q8_quantize_options ao = *o;
    q8_quantize_pin_auto(&ao, r);
    int rc = run_search(onnx, out, &ao, &so);
    if (rc == 1) /* the search writes only at its end: out is the model above */
        q8_cli_warn("quantize", "the FP32 fallback search stopped: the model written above "
                    "stays");
    return 0; /* a floor tried for, not a target asked for: met or not */
}

int main(int argc, char **argv) {
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'},       {"calib", required_argument, 0, 'c'},
        {"input-shape", required_argument, 0, 's'},  {"calib-method", required_argument, 0, 'm'},
        {"percentile", required_argument, 0, 'P'},   {"prune", required_argument, 0, 'p'},
        {"prune-mode", required_argument, 0, 'M'},   {"prune-scope", required_argument, 0, 'S'},
        {"prune-skip", required_argument, 0, 'k'},   {"fp32-layers", required_argument, 0, 'f'},
        {"threads", required_argument, 0, 't'},      {"help", no_argument, 0, 'h'},
        {"max-drop", required_argument, 0, 'X'},     {"data", required_argument, 0, 'D'},
        {"labels", required_argument, 0, 'L'},       {"max-trials", required_argument, 0, 'T'},
        {"bind", required_argument, 0, 'B'},         {"speed-check", no_argument, 0, 'C'},
        {"prune-refit", required_argument, 0, 'R'},  {"prune-protect", required_argument, 0, 'E'},
        {"min-sqnr", required_argument, 0, 'Q'},     {"equalize", required_argument, 0, 'e'},
        {"scalar-tables", required_argument, 0, 'u'}, {"int8-gates", required_argument, 0, 'g'},
        {"int8-embeddings", required_argument, 0, 'b'},
        {"int8-prelu", required_argument, 0, 'u' + 256},
        {"fp32-heads", required_argument, 0, 'u' + 512},
        {"int8-tails", required_argument, 0, 'Z'},
        {"output-ranges", required_argument, 0, 'O' + 256},
        {"prune-measure", required_argument, 0, 'O'},
        {"weight-rounding", required_argument, 0, 'W'},
        {"wide-range", required_argument, 0, 'r'},
        {"compress-weights", required_argument, 0, 'z'},
        {0, 0, 0, 0}};
    static q8_input_value values[64];
    static q8_host_tensor *bound[64];
    int n_values = 0;
    static q8_input_shape shapes[64];
    static const char *skip[MAX_LIST], *fp32[MAX_LIST];
    int n_shapes = 0, n_skip = 0, n_fp32 = 0;
    const char *out = NULL;
    bool prune_given = false, mode_given = false, percentile_given = false, scope_given = false;
    bool refit_given = false, protect_given = false, measure_given = false, refit_default = true; /* on or not given */
    /* auto: percentile 99.99 or MSE ranges, whichever gives the better
     * output SQNR on the calibration samples (docs/accuracy.md) */
    q8_quantize_options o = {.method = Q8_CALIB_AUTO, .percentile = 99.99,
                             .prune = {.sensitivity = true, .protect_ends = true, .refit = true,
                                       .refit_dense = true},
                             .quant = {.equalize = true, .equalize_through = true, .output_ranges_full = true, .int8_embeddings = true,
                                       .scalar_tables = Q8_SCALAR_TABLES_AUTO,
                                       .int8_prelu = Q8_INT8_PRELU_AUTO,
                                       .small_alone_fp32 = true,
                                       .weight_rounding = Q8_WROUND_AUTO}};
    q8_search_options so = {.max_drop = -1, .max_trials = 12};
    bool trials_given = false, speed = false;
    /* --min-sqnr auto (the default): the search below only for a model whose
     * output SQNR on the calibration samples is under Q8_AUTO_MIN_SQNR_DB */
    bool auto_sqnr = true;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:c:s:m:P:p:M:S:k:f:t:h", opts, NULL)) != -1) {
        char *end;
        long v;
        switch (c) {
        case 'o': out = optarg; break;
        case 'c': o.calib_dir = optarg; break;
        case 's':
            if (n_shapes == 64 || !q8_cli_parse_input_shape(optarg, &shapes[n_shapes])) {
                fprintf(stderr, "quantize: --input-shape wants NAME=DIMS like data=1x3x224x224\n");
                return 2;
            }
            if (!q8_cli_dims_positive("quantize", &shapes[n_shapes])) return 2;
            n_shapes++;
            break;
        case 'm':
            if (!strcmp(optarg, "minmax")) o.method = Q8_CALIB_MINMAX;
            else if (!strcmp(optarg, "percentile")) o.method = Q8_CALIB_PERCENTILE;
            else if (!strcmp(optarg, "entropy")) o.method = Q8_CALIB_ENTROPY;
            else if (!strcmp(optarg, "mse")) o.method = Q8_CALIB_MSE;
            else if (!strcmp(optarg, "auto")) o.method = Q8_CALIB_AUTO;
            else {
                fprintf(stderr, "quantize: --calib-method must be auto, minmax, percentile, "
                        "entropy or mse\n");
                return 2;
            }
            break;
        case 'P':
            o.percentile = strtod(optarg, &end);
            if (end == optarg || *end || !(o.percentile > 0 && o.percentile <= 100)) {
                fprintf(stderr, "quantize: --percentile must be in (0, 100], not '%s'\n", optarg);
                return 2;
            }
            percentile_given = true;
            break;
        case 'p':
            o.prune.fraction = strtod(optarg, &end);
            if (end == optarg || *end || !(o.prune.fraction >= 0 && o.prune.fraction < 1)) {
                fprintf(stderr, "quantize: --prune wants a fraction in [0, 1), not '%s'\n", optarg);
                return 2;
            }
            prune_given = true;
            break;
        case 'M':
            if (!strcmp(optarg, "unstructured")) o.prune.mode = Q8_PRUNE_UNSTRUCTURED;
            else if (!strcmp(optarg, "2:4")) o.prune.mode = Q8_PRUNE_2_4;
            else {
                fprintf(stderr, "quantize: --prune-mode must be unstructured or 2:4\n");
                return 2;
            }
            mode_given = true;
            break;
        case 'S':
            o.prune.sensitivity = !strcmp(optarg, "sensitivity");
            if (!strcmp(optarg, "layer")) o.prune.global = false;
            else if (!strcmp(optarg, "global")) o.prune.global = true;
            else if (!o.prune.sensitivity) {
                fprintf(stderr, "quantize: --prune-scope must be sensitivity, layer or global\n");
                return 2;
            }
            scope_given = true;
            break;
        case 'R':
            if (strcmp(optarg, "on") && strcmp(optarg, "off") && strcmp(optarg, "dense") &&
                strcmp(optarg, "layer")) {
                fprintf(stderr, "quantize: --prune-refit must be on, dense, layer or off\n");
                return 2;
            }
            o.prune.refit = strcmp(optarg, "off") != 0;
            refit_default = !strcmp(optarg, "on");
            o.prune.refit_dense = !strcmp(optarg, "on") || !strcmp(optarg, "dense");
            refit_given = true;
            break;
        case 'e':
            if (strcmp(optarg, "on") && strcmp(optarg, "relu") && strcmp(optarg, "off")) {
                fprintf(stderr, "quantize: --equalize must be on, relu or off\n");
                return 2;
            }
            o.quant.equalize = strcmp(optarg, "off") != 0;
            o.quant.equalize_through = !strcmp(optarg, "on");
            break;
        case 'g': {
            int v = two_way("int8-gates", optarg, "on", "off");
            if (v < 0) return 2;
            o.quant.int8_gates = v == 0;
            break;
        }
        case 'Z': {
            int v = two_way("int8-tails", optarg, "on", "off");
            if (v < 0) return 2;
            o.quant.fp32_tails = v == 1;
            break;
        }
        case 'O' + 256: {
            int v = two_way("output-ranges", optarg, "full", "calibrated");
            if (v < 0) return 2;
            o.quant.output_ranges_full = v == 0;
            break;
        }
        case 'b': {
            int v = two_way("int8-embeddings", optarg, "on", "off");
            if (v < 0) return 2;
            o.quant.int8_embeddings = v == 0;
            break;
        }
        case 'W': {
            static const struct {
                const char *name;
                q8_weight_rounding v;
            } roundings[] = {{"auto", Q8_WROUND_AUTO}, {"nearest", Q8_WROUND_NEAREST},
                             {"sums", Q8_WROUND_SUMS}, {"gptq", Q8_WROUND_GPTQ}};
            size_t k = 0, nr = sizeof roundings / sizeof roundings[0];
            while (k < nr && strcmp(optarg, roundings[k].name)) k++;
            if (k == nr) {
                fprintf(stderr, "quantize: --weight-rounding must be auto, nearest, sums or gptq\n");
                return 2;
            }
            o.quant.weight_rounding = roundings[k].v;
            break;
        }
        case 'r': {
            int v = two_way("wide-range", optarg, "fp32", "int8");
            if (v < 0) return 2;
            o.quant.wide_int8 = v == 1;
            break;
        }
        case 'u' + 512: {
            int v = on_off_auto("fp32-heads", optarg);
            if (v < 0) return 2;
            o.quant.fp32_heads = v == 1 ? Q8_FP32_HEADS_ON
                                 : v == 0 ? Q8_FP32_HEADS_OFF
                                          : Q8_FP32_HEADS_AUTO;
            break;
        }
        case 'u':
        case 'u' + 256:
        case 'z': {
            const char *opt = c == 'u' ? "scalar-tables" : c == 'z' ? "compress-weights"
                                                                    : "int8-prelu";
            int v = on_off_auto(opt, optarg);
            if (v < 0) return 2;
            if (c == 'u')
                o.quant.scalar_tables = v == 1 ? Q8_SCALAR_TABLES_ON
                                        : v == 0 ? Q8_SCALAR_TABLES_OFF
                                                 : Q8_SCALAR_TABLES_AUTO;
            else if (c == 'z')
                o.compress = v == 1 ? Q8_COMPRESS_ON : v == 0 ? Q8_COMPRESS_OFF : Q8_COMPRESS_AUTO;
            else
                o.quant.int8_prelu = v == 1 ? Q8_INT8_PRELU_ON
                                     : v == 0 ? Q8_INT8_PRELU_OFF
                                              : Q8_INT8_PRELU_AUTO;
            break;
        }
        case 'O': {
            int v = two_way("prune-measure", optarg, "output", "layer");
            if (v < 0) return 2;
            o.prune.output_aware = v == 0;
            measure_given = true;
            break;
        }
        case 'E': {
            int v = two_way("prune-protect", optarg, "ends", "none");
            if (v < 0) return 2;
            o.prune.protect_ends = v == 0;
            protect_given = true;
            break;
        }
        case 'k':
            if ((n_skip = split_list(optarg, skip, MAX_LIST, n_skip)) < 0) {
                fprintf(stderr, "quantize: too many --prune-skip names\n");
                return 2;
            }
            break;
        case 'f':
            if ((n_fp32 = split_list(optarg, fp32, MAX_LIST, n_fp32)) < 0) {
                fprintf(stderr, "quantize: too many --fp32-layers names\n");
                return 2;
            }
            break;
        case 't':
            if (!q8_cli_parse_int(optarg, 1, 1024, &v)) {
                fprintf(stderr, "quantize: --threads needs a number from 1 to 1024\n");
                return 2;
            }
            o.n_threads = (int)v;
            break;
        case 'X': {
            char msg[400];
            if (!q8_parse_max_drop(optarg, &so.max_drop, msg, sizeof msg)) {
                fprintf(stderr, "quantize: %s\n", msg);
                return 2;
            }
            break;
        }
        case 'Q':
            if (!strcmp(optarg, "auto") || !strcmp(optarg, "off")) { /* the last one given */
                auto_sqnr = !strcmp(optarg, "auto");
                so.by_sqnr = false;
                break;
            }
            auto_sqnr = false;
            so.min_sqnr_db = strtod(optarg, &end);
            if (end == optarg || (*end && strcmp(end, "dB")) || !isfinite(so.min_sqnr_db)) {
                fprintf(stderr, "quantize: --min-sqnr wants the output SQNR to reach in dB, "
                        "e.g. 30, not '%s'\n", optarg);
                return 2;
            }
            so.by_sqnr = true;
            break;
        case 'D': so.data_dir = optarg; break;
        case 'L': so.labels_path = optarg; break;
        case 'T':
            if (!q8_cli_parse_int(optarg, 1, 10000, &v)) {
                fprintf(stderr, "quantize: --max-trials needs a number from 1 to 10000\n");
                return 2;
            }
            so.max_trials = (int)v;
            trials_given = true;
            break;
        case 'C':
            speed = true;
            break;
        case 'B':
            if (n_values == 64) {
                fprintf(stderr, "quantize: --bind: at most 64\n");
                return 2;
            }
            if (!q8_cli_parse_bind("quantize", optarg, &values[n_values], &bound[n_values]))
                return 2;
            n_values++;
            break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "quantize: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || !out) {
        fprintf(stderr, optind != argc - 1 ? "quantize: give exactly one MODEL.onnx\n"
                                           : "quantize: -o OUT.q8 is required\n");
        usage(stderr);
        return 2;
    }
    /* --prune F alone means unstructured; --prune-mode 2:4 needs no fraction */
    if (prune_given && !mode_given) o.prune.mode = Q8_PRUNE_UNSTRUCTURED;
    /* on for 2:4 is the per-layer fit: the dense target lost 1 point on the
     * MNIST MLP's 2:4 (64 samples, one row each; docs/accuracy.md) */
    if (o.prune.mode == Q8_PRUNE_2_4 && refit_default) o.prune.refit_dense = false;
    if (mode_given && o.prune.mode == Q8_PRUNE_UNSTRUCTURED && !prune_given) {
        fprintf(stderr, "quantize: --prune-mode unstructured needs --prune FRACTION\n");
        return 2;
    }
    /* an option that would be ignored is refused: the person meant something by it */
    const char *ignored =
        prune_given && o.prune.mode == Q8_PRUNE_2_4
            ? "--prune FRACTION goes with unstructured pruning: --prune-mode 2:4 always "
              "prunes 2 of every 4 weights (50%)"
        : percentile_given && o.method != Q8_CALIB_PERCENTILE && o.method != Q8_CALIB_AUTO
            ? "--percentile goes with --calib-method percentile or auto"
        : scope_given && o.prune.mode != Q8_PRUNE_UNSTRUCTURED
            ? "--prune-scope goes with --prune FRACTION (unstructured pruning)"
        : n_skip && o.prune.mode == Q8_PRUNE_NONE
            ? "--prune-skip goes with --prune or --prune-mode: nothing is pruned without them"
        : refit_given && o.prune.mode == Q8_PRUNE_NONE
            ? "--prune-refit goes with --prune or --prune-mode: nothing is pruned without them"
        : protect_given && (o.prune.mode != Q8_PRUNE_UNSTRUCTURED || !o.prune.sensitivity)
            ? "--prune-protect goes with --prune FRACTION and --prune-scope sensitivity"
        : measure_given && (o.prune.mode != Q8_PRUNE_UNSTRUCTURED || !o.prune.sensitivity)
            ? "--prune-measure goes with --prune FRACTION and --prune-scope sensitivity"
            : NULL;
    if (ignored) {
        fprintf(stderr, "quantize: %s\n", ignored);
        return 2;
    }
    if (so.by_sqnr && so.max_drop >= 0) {
        fprintf(stderr, "quantize: --min-sqnr and --max-drop are two targets: give one\n");
        return 2;
    }
    if (so.by_sqnr && so.labels_path) {
        fprintf(stderr, "quantize: --min-sqnr compares with FP32: it takes no --labels\n");
        return 2;
    }
    bool search = so.max_drop >= 0 || so.by_sqnr;
    if (search && !so.by_sqnr && !so.data_dir) {
        fprintf(stderr,
                "quantize: --max-drop needs --data DIR (the samples to measure accuracy on)\n");
        return 2;
    }
    if (!search && (so.data_dir || so.labels_path || (trials_given && !auto_sqnr))) {
        fprintf(stderr, "quantize: --data, --labels and --max-trials go with --max-drop or "
                "--min-sqnr\n");
        return 2;
    }
    o.input_shapes = shapes;
    o.n_input_shapes = n_shapes;
    o.input_values = values;
    o.n_input_values = n_values;
    o.prune.skip = skip;
    o.prune.n_skip = n_skip;
    o.quant.fp32_layers = fp32;
    o.quant.n_fp32_layers = n_fp32;
    o.warn = print_warning;
    q8_error err = {0};
    q8_quantize_result r;
    if (search && speed) {
        fprintf(stderr, "quantize: --speed-check and %s cannot be combined yet\n",
                so.by_sqnr ? "--min-sqnr" : "--max-drop");
        return 2;
    }
    if (search) return run_search(argv[optind], out, &o, &so);
    if (speed) return run_speed(argv[optind], out, &o);
    if (q8_quantize_model(argv[optind], out, &o, &r, &err) != Q8_OK) {
        q8_cli_error("quantize", err.msg);
        return 1;
    }
    print_written(out, &r);
    if (auto_sqnr && !speed) return auto_search(argv[optind], out, &o, &r, &so, trials_given);
    return 0;
}
