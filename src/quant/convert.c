/* quantize, end to end: ONNX -> FP32 passes -> prune -> calibrate ->
 * INT8 rewrite -> memory plan -> .q8 file (atomically). */
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bind_calib.h"
#include "calibrate.h"
#include "equalize.h"
#include "graph_clone.h"
#include "onnx_import.h"
#include "passes.h"
#include "planner.h"
#include "q8file.h"
#include "convert.h"
#include "sha256.h"
#include "tables_choose.h"
#include "wround_choose.h"
#include "weight_round.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *method_name(q8_calib_method m) {
    return m == Q8_CALIB_MINMAX    ? "minmax"
           : m == Q8_CALIB_ENTROPY ? "entropy"
           : m == Q8_CALIB_MSE     ? "mse"
           : m == Q8_CALIB_AUTO    ? "auto"
                                   : "percentile";
}

/* "name=1x3x224x224;..." of the graph inputs */
static void shapes_string(const q8_graph *g, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < g->n_inputs && used < n; i++) {
        const q8_tensor *t = g->tensors[g->inputs[i]];
        char sb[128];
        used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", i ? ";" : "", t->name,
                                 q8_shape_str(t->dims, t->ndim, sb, sizeof sb));
    }
}

static size_t plan_arena(const q8_graph *g, q8_plan *p, q8_error *err) {
    (void)err;
    return q8_plan_build(g, NULL, NULL, p, NULL) == Q8_OK ? p->arena_bytes : 0;
}

static size_t activation_bytes(const q8_graph *g) {
    size_t n = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const q8_tensor *x = g->tensors[t];
        if (x->producer >= 0 && !x->data && x->dtype == Q8_F32) n += q8_tensor_nbytes(x);
    }
    return n;
}

/* Options the library itself must refuse (the tools check the rest). */
static q8_status check_options(const q8_quantize_options *o, q8_error *err) {
    for (int k = 0; k < o->n_input_shapes; k++) {
        const q8_input_shape *is = &o->input_shapes[k];
        for (int d = 0; d < is->ndim && d < Q8_MAX_DIMS; d++)
            if (is->dims[d] < 1) {
                char sb[128];
                return q8_fail(err, Q8_ERR_ARG,
                               "--input-shape %s=%s: every dim must be at least 1 (a model for "
                               "%lld rows has nothing to compute)", is->name ? is->name : "",
                               q8_shape_str(is->dims, is->ndim, sb, sizeof sb),
                               (long long)is->dims[d]);
            }
    }
    return Q8_OK;
}

/* --input-shape gives every input the shape calibration ran at: the
 * calibration graph is the deployment graph, no second import. */
static bool same_shapes(const q8_quantize_options *o, const q8_input_shape *cal, int n) {
    if (o->n_input_shapes != n) return false;
    for (int k = 0; k < n; k++) {
        const q8_input_shape *d = NULL;
        for (int j = 0; j < o->n_input_shapes; j++)
            if (!strcmp(o->input_shapes[j].name, cal[k].name)) d = &o->input_shapes[j];
        if (!d || d->ndim != cal[k].ndim ||
            memcmp(d->dims, cal[k].dims, sizeof(int64_t) * (size_t)d->ndim))
            return false;
    }
    return true;
}

static void free_constant_data(q8_graph *g) {
    for (int i = 0; i < g->n_tensors; i++)
        if (g->tensors[i]->data) q8_tensor_free_data(g->tensors[i]);
}

/* --calib-method auto's builder: the INT8 graph quantize would write at
 * the calibration shapes for thresholds thr (indexed like gcal's tensors),
 * made from a copy of gcal (the rewrite consumes its graph) that shares
 * gcal's weights, as pruned and equalized: the rewrite only reads them, and
 * a second copy would double quantize's peak memory. */
typedef struct build_ctx {
    const q8_quantize_options *o;
    q8_quant_options quant;     /* o->quant with the tables decided */
    const q8_graph *gcal;
    const float *thr;           /* the tables builder's ranges */
} build_ctx;

static q8_status build_int8(void *arg, const float *thr, q8_graph **out, q8_error *err) {
    const build_ctx *b = arg;
    q8_graph *g = NULL;
    q8_meta meta = {0};
    q8_calibration cal = {.n_tensors = b->gcal->n_tensors, .threshold = (float *)thr};
    q8_status s = q8_graph_clone(b->gcal, true, &g, err);
    if (s == Q8_OK) s = q8_quantize_graph(g, &cal, &b->quant, &meta, err);
    /* the float steps left between int8 nodes in one pass each (the same
     * bits: the candidates score as the written model runs) */
    if (s == Q8_OK) s = q8_pass_fuse_ewchains(g, err);
    q8_meta_free(&meta);
    if (s != Q8_OK) {
        q8_graph_free(g);
        g = NULL;
    }
    *out = g;
    return s;
}

/* A count the passes recorded in meta, 0 where they recorded none. */
static int meta_count(const q8_meta *meta, const char *key) {
    const q8_meta_entry *e = q8_meta_get(meta, key);
    return e && e->type == Q8_META_INT ? (int)e->i : 0;
}

/* Q8_WROUND_AUTO's builder: the graph at the chosen tables, of gcal's
 * weights as they are rounded now; by sums at the ranges measured on that
 * model, by gptq at ranges measured again on the gptq-rounded model (by the
 * method chosen; its weights move the activations: scored at sums' ranges,
 * FaceMesh's gptq model lost 7 dB it did not lose at its own). */
typedef struct wround_ctx {
    build_ctx *bc;
    const q8_sample_set *s;
    q8_calib_options co;        /* the chosen method, no warnings (said once) */
    const q8_calibration *cal;  /* sums' ranges */
    q8_calibration again;       /* gptq's */
} wround_ctx;

static q8_status build_rounded(void *arg, q8_weight_rounding wr, q8_graph **out,
                               q8_error *err) {
    wround_ctx *w = arg;
    w->bc->thr = w->cal->threshold;
    if (wr == Q8_WROUND_GPTQ) {
        q8_calibration_free(&w->again);
        Q8_TRY(q8_calibrate(w->bc->gcal, w->s, &w->co, &w->again, err));
        w->bc->thr = w->again.threshold;
    }
    return build_int8(w->bc, w->bc->thr, out, err);
}

/* Q8_SCALAR_TABLES_AUTO's builder: the graph at the chosen ranges, with the
 * tables or without. */
static q8_status build_tables(void *arg, bool on, q8_graph **out, q8_error *err) {
    build_ctx *b = arg;
    b->quant.scalar_tables = on ? Q8_SCALAR_TABLES_ON : Q8_SCALAR_TABLES_OFF;
    return build_int8(b, b->thr, out, err);
}

/* Q8_INT8_PRELU_AUTO's builder: with q8.QPRelu or without. */
static q8_status build_prelu(void *arg, bool on, q8_graph **out, q8_error *err) {
    build_ctx *b = arg;
    b->quant.int8_prelu = on ? Q8_INT8_PRELU_ON : Q8_INT8_PRELU_OFF;
    return build_int8(b, b->thr, out, err);
}

/* Samples the tables are scored on: those calibration auto scored, else
 * the first few. */
#define Q8_TABLES_SAMPLES 8

/* The better output SQNR of calibration auto's candidates (NAN: none). */
static double best_db(const q8_calibration *c) {
    double b = NAN;
    for (int k = 0; k < 2; k++)
        if (!isnan(c->score_db[k]) && (isnan(b) || c->score_db[k] > b)) b = c->score_db[k];
    return b;
}

/* Q8_INT8_PRELU_AUTO, cal made with PRelu in FP32. The residual stream in
 * int8 rounds each block's sum and conv output, so the ranges that suit
 * it differ: with calibration auto, the model is calibrated again with
 * q8.QPRelu and the better of the two (ranges and form) is kept (FaceMesh:
 * at the FP32 form's MSE ranges q8.QPRelu lost 3 dB, at its own percentile
 * ranges it gained 6; the iris model lost either way). With a fixed range
 * method both forms are scored at the same ranges. */
static q8_status choose_prelu(build_ctx *b, const q8_sample_set *s, const q8_calib_options *co,
                              q8_calibration *cal, q8_quantize_result *r, q8_meta *meta,
                              q8_error *err) {
    q8_tables_choice pc = {.db = {NAN, NAN}};
    if (cal->n_scored > 0) {
        q8_calib_options c2 = *co;
        c2.warn = NULL; /* said once already */
        q8_calibration on = {0};
        b->quant.int8_prelu = Q8_INT8_PRELU_ON;
        q8_status st = q8_calibrate(b->gcal, s, &c2, &on, err);
        b->quant.int8_prelu = Q8_INT8_PRELU_OFF;
        if (st != Q8_OK) return st;
        pc.db[0] = best_db(cal);
        pc.db[1] = best_db(&on);
        pc.n_scored = on.n_scored;
        pc.differ = true;
        pc.on = !isnan(pc.db[1]) && !(pc.db[1] < pc.db[0]);
        if (pc.on) {
            q8_calibration_free(cal);
            *cal = on;
        } else {
            q8_calibration_free(&on);
        }
    } else {
        b->thr = cal->threshold;
        Q8_TRY(q8_tables_choose(b->gcal, s, Q8_TABLES_SAMPLES, co->n_threads, build_prelu, b,
                                "QPRelu", 0.0, &pc, err));
    }
    b->quant.int8_prelu = pc.on ? Q8_INT8_PRELU_ON : Q8_INT8_PRELU_OFF;
    r->prelu_chosen = pc.on;
    r->prelu_scored = pc.n_scored;
    memcpy(r->prelu_db, pc.db, sizeof pc.db);
    return pc.differ ? q8_meta_set_str(meta, "quant.int8_prelu", pc.on ? "on" : "off", err)
                     : Q8_OK;
}

/* Q8_FP32_HEADS_AUTO's builder: the heads FP32 (on) or as asked. */
typedef struct heads_ctx {
    build_ctx *bc;
    const char *const *with, *const *without;
    int n_with, n_without;
} heads_ctx;

static q8_status build_heads(void *arg, bool on, q8_graph **out, q8_error *err) {
    heads_ctx *h = arg;
    h->bc->quant.fp32_layers = on ? h->with : h->without;
    h->bc->quant.n_fp32_layers = on ? h->n_with : h->n_without;
    return build_int8(h->bc, h->bc->thr, out, err);
}

/* The activation arena of the INT8 graph with the heads FP32 or not. */
static q8_status heads_arena(heads_ctx *h, bool on, size_t *bytes, q8_error *err) {
    q8_graph *g = NULL;
    Q8_TRY(build_heads(h, on, &g, err));
    q8_plan plan = {0};
    q8_status st = q8_plan_build(g, NULL, NULL, &plan, err);
    *bytes = st == Q8_OK ? plan.arena_bytes : 0;
    q8_plan_free(&plan);
    q8_graph_free(g);
    return st;
}

/* Q8_FP32_HEADS_ON / AUTO, at the chosen ranges and tables: the heads
 * (q8_head_layers) join the layers kept FP32 (*with: those asked for, then
 * the heads; the caller frees it and heads). Auto scores the INT8 model
 * both ways on the calibration samples, as the tables' choice does, and
 * keeps the heads FP32 only for a gain of Q8_HEADS_MIN_GAIN_DB (MoveNet's
 * heat maps gained, CenterNet's detections lost: docs/accuracy.md, "FP32
 * heads"), not in a pruned model. The comparison builds see the heads'
 * weights as the rounding left them; the model written gets them back as
 * trained (q8_wround_restore_fp32: every rounded tensor was saved). */
static q8_status choose_heads(build_ctx *b, const q8_sample_set *s, const q8_calibration *cal,
                              q8_quantize_result *r, q8_meta *meta, q8_name_list *heads,
                              const char ***with, q8_error *err) {
    const q8_quantize_options *o = b->o;
    Q8_TRY(q8_head_layers(b->gcal, Q8_HEADS_MAX_SHARE, heads, err));
    r->n_heads = heads->n;
    if (heads->n == 0) return Q8_OK;
    int nu = b->quant.n_fp32_layers;
    const char **w = calloc((size_t)(nu + heads->n), sizeof *w);
    if (!w) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; i < nu; i++) w[i] = b->quant.fp32_layers[i];
    for (int i = 0; i < heads->n; i++) w[nu + i] = heads->v[i];
    *with = w;
    bool on = o->quant.fp32_heads == Q8_FP32_HEADS_ON;
    /* pruned: the smaller file is why one prunes (Selfie's 0.199x would be
     * 0.201x); --fp32-heads on still takes them */
    if (o->quant.fp32_heads == Q8_FP32_HEADS_AUTO && o->prune.mode == Q8_PRUNE_NONE) {
        /* the two graphs differ in their count of the heads' INT8 op */
        const q8_node *h0 = q8_graph_find_node(b->gcal, heads->v[0]);
        char op[32];
        snprintf(op, sizeof op, "Q%s", h0 ? h0->op_type : "Conv");
        heads_ctx hx = {.bc = b, .with = w, .n_with = nu + heads->n,
                        .without = b->quant.fp32_layers, .n_without = nu};
        q8_tables_choice hc = {.db = {NAN, NAN}};
        b->thr = cal->threshold;
        /* Float heads at full resolution can take the INT8 model's arena
         * to its FP32 size (ISNet's side outputs at 1024 x 1024: 156 ->
         * 268 MiB for 0.5 dB): not taken then. */
        q8_status st = heads_arena(&hx, false, &r->heads_arena[0], err);
        if (st == Q8_OK) st = heads_arena(&hx, true, &r->heads_arena[1], err);
        bool cheap = q8_heads_arena_fits(r->heads_arena[0], r->heads_arena[1]);
        int n_score = cal->n_scored > 0 ? cal->n_scored : Q8_TABLES_SAMPLES;
        if (st == Q8_OK && cheap)
            st = q8_tables_choose(b->gcal, s, n_score, o->n_threads, build_heads, &hx, op,
                                  -Q8_HEADS_MIN_GAIN_DB, &hc, err);
        b->quant.fp32_layers = hx.without;
        b->quant.n_fp32_layers = hx.n_without;
        Q8_TRY(st);
        on = hc.on;
        r->heads_scored = hc.n_scored;
        memcpy(r->heads_db, hc.db, sizeof hc.db);
        if (hc.differ || !cheap)
            Q8_TRY(q8_meta_set_str(meta, "quant.fp32_heads", on ? "on" : "off", err));
    }
    r->heads_chosen = on;
    if (on) {
        b->quant.fp32_layers = w;
        b->quant.n_fp32_layers = nu + heads->n;
    }
    return Q8_OK;
}

q8_status q8_quantize_model(const char *onnx_path, const char *out_path,
                            const q8_quantize_options *o, q8_quantize_result *r, q8_error *err) {
    double t0 = now_s();
    memset(r, 0, sizeof *r);
    if (!o->calib_dir)
        return q8_fail(err, Q8_ERR_ARG,
                       "calibration data is needed (--calib DIR): INT8 activation ranges are "
                       "measured by running the model on samples of its real inputs");
    if (q8_same_file(onnx_path, out_path))
        return q8_fail(err, Q8_ERR_ARG, "refusing to overwrite the input model '%s'", onnx_path);
    Q8_TRY(check_options(o, err));
    /* before minutes of calibration, not after */
    Q8_TRY(q8_check_output_path(out_path, err));
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_read_file(onnx_path, &buf, &len, err));
    r->onnx_bytes = len;
    char sha[65];
    q8_sha256_hex(buf, len, sha);
    free(buf);

    q8_graph *g = NULL, *gcal = NULL;
    q8_sample_set samples = {0};
    q8_calibration cal = {0}, moved = {0};
    q8_meta meta = {0};
    q8_plan plan = {0};
    q8_wround_saved wsaved = {0};
    q8_input_shape shapes[64];
    q8_binds binds = {0};
    /* Calibration runs at the samples' shapes; the model is then built for
     * the deployment shapes (--input-shape, e.g. a larger batch) and takes
     * the thresholds by tensor name. */
    q8_status s = q8_onnx_load(onnx_path, &gcal, err);
    if (s == Q8_OK && (s = q8_check_weights(gcal, err)) != Q8_OK) q8_fail_prefix(err, "%s", onnx_path);
    if (s == Q8_OK) s = q8_check_layer_names(gcal, false, 0, &o->prune, &o->quant, err);
    if (s == Q8_OK)
        s = q8_samples_from_dir_bound(o->calib_dir, gcal, o->input_values, o->n_input_values,
                                      &samples, err);
    if (s == Q8_OK && samples.n_inputs > 64) s = q8_fail(err, Q8_ERR_UNSUPPORTED, "too many inputs");
    for (int k = 0; s == Q8_OK && k < samples.n_inputs; k++) {
        q8_tensor *t;
        s = q8_sample_load(&samples, 0, k, &t, err);
        if (s != Q8_OK) break;
        shapes[k].name = samples.names[k];
        shapes[k].ndim = t->ndim;
        memcpy(shapes[k].dims, t->dims, sizeof shapes[k].dims);
        if (q8_tensor_numel(t) == 0) {
            char sb[128];
            s = q8_fail(err, Q8_ERR_ARG,
                        "calibration sample %s: input '%s' has shape %s: no values to measure",
                        samples.paths[0][k], shapes[k].name,
                        q8_shape_str(t->dims, t->ndim, sb, sizeof sb));
        }
        q8_tensor_free(t);
    }
    q8_load_options lcal = {.input_shapes = shapes, .n_input_shapes = samples.n_inputs};
    /* inputs bound by the caller, then those calibration shows constant
     * that decide shapes or branches */
    if (s == Q8_OK)
        s = q8_binds_for_quantize(onnx_path, &samples, shapes, o->input_values,
                                  o->n_input_values, &binds, err);
    lcal.input_values = binds.v;
    lcal.n_input_values = binds.n;
    for (int k = 0; s == Q8_OK && o->warn && k < binds.n; k++) {
        if (!binds.from_samples[k]) continue;
        char msg[512];
        snprintf(msg, sizeof msg, "input '%s' is the same in every calibration sample and decides "
                 "shapes or branches: bound to that value (the .q8 runs only with it)",
                 binds.v[k].name);
        o->warn(o->warn_arg, msg);
    }
    if (s == Q8_OK && (s = q8_passes_run_for_quantize(gcal, &lcal, err)) != Q8_OK)
        q8_fail_prefix(err, "at the calibration samples' shapes");
    if (s == Q8_OK) s = q8_check_layer_names(gcal, true, binds.n, &o->prune, &o->quant, err);
    if (s == Q8_OK) r->fp32_activation_bytes = activation_bytes(gcal);
    if (s == Q8_OK) s = q8_prune(gcal, &o->prune, &samples, o->n_threads, &meta, err);
    if (s == Q8_OK) s = q8_prune_count(gcal, &o->prune, &r->prune, err);
    /* after pruning (its re-fit wants the weights as trained), before the
     * ranges are measured (they are of the equalized tensors) */
    if (s == Q8_OK && o->quant.equalize)
        s = q8_equalize(gcal, o->quant.equalize_through, &samples, o->n_threads, &meta, err);
    /* on the weights as they will be scaled, before the ranges are measured
     * (they are those of the model with its weights rounded) */
    /* auto: sums now, gptq compared once ranges and tables are chosen */
    q8_quant_options rq = o->quant;
    if (rq.weight_rounding == Q8_WROUND_AUTO) rq.weight_rounding = Q8_WROUND_SUMS;
    if (s == Q8_OK) s = q8_round_weights(gcal, &rq, &samples, o->n_threads, &meta, &wsaved, err);
    q8_calib_options co = {.method = o->method, .percentile = o->percentile,
                           .n_threads = o->n_threads, .keep_wide = o->quant.wide_int8,
                           .warn = o->warn, .warn_arg = o->warn_arg};
    /* ranges are chosen without the tables (AUTO), then the tables at them */
    build_ctx bc = {.o = o, .quant = o->quant, .gcal = gcal};
    bool tables_auto = o->quant.scalar_tables == Q8_SCALAR_TABLES_AUTO;
    if (tables_auto) bc.quant.scalar_tables = Q8_SCALAR_TABLES_OFF;
    bool prelu_auto = o->quant.int8_prelu == Q8_INT8_PRELU_AUTO;
    if (prelu_auto) bc.quant.int8_prelu = Q8_INT8_PRELU_OFF;
    co.build = build_int8;
    co.build_arg = &bc;
    if (s == Q8_OK) s = q8_calibrate(gcal, &samples, &co, &cal, err);
    if (s == Q8_OK && prelu_auto && q8_has_prelu(gcal))
        s = choose_prelu(&bc, &samples, &co, &cal, r, &meta, err);
    if (s == Q8_OK) {
        r->calib_chosen = cal.chosen;
        r->calib_scored = cal.n_scored;
        memcpy(r->calib_candidate_db, cal.score_db, sizeof cal.score_db);
    }
    if (s == Q8_OK && tables_auto && q8_has_scalar_ops(gcal)) {
        q8_tables_choice tc;
        bc.thr = cal.threshold;
        s = q8_tables_choose(gcal, &samples, cal.n_scored > 0 ? cal.n_scored : Q8_TABLES_SAMPLES,
                             o->n_threads, build_tables, &bc, "QLut", Q8_TABLES_MAX_LOSS_DB, &tc,
                             err);
        if (s == Q8_OK) {
            bc.quant.scalar_tables = tc.on ? Q8_SCALAR_TABLES_ON : Q8_SCALAR_TABLES_OFF;
            r->tables_chosen = tc.on;
            r->tables_scored = tc.n_scored;
            memcpy(r->tables_db, tc.db, sizeof tc.db);
        }
        if (s == Q8_OK && tc.differ)
            s = q8_meta_set_str(&meta, "quant.scalar_tables", tc.on ? "on" : "off", err);
    }
    q8_name_list heads = {0};
    const char **with_heads = NULL;
    if (s == Q8_OK && o->quant.fp32_heads != Q8_FP32_HEADS_OFF)
        s = choose_heads(&bc, &samples, &cal, r, &meta, &heads, &with_heads, err);
    if (s == Q8_OK && o->quant.weight_rounding == Q8_WROUND_AUTO) {
        q8_wround_choice wc;
        wround_ctx wx = {.bc = &bc, .s = &samples, .co = co, .cal = &cal};
        wx.co.method = cal.chosen;
        wx.co.warn = NULL;
        s = q8_wround_choose(gcal, &rq, &samples, o->n_threads, build_rounded, &wx, &wsaved,
                             &meta, &wc, err);
        if (s == Q8_OK) {
            rq.weight_rounding = wc.chosen;
            r->wround_chosen = wc.chosen;
            r->wround_scored = wc.n_scored;
            memcpy(r->wround_db, wc.db, sizeof wc.db);
            snprintf(r->wround_note, sizeof r->wround_note, "%s", wc.note);
        }
        if (s == Q8_OK && wc.chosen == Q8_WROUND_GPTQ) { /* its ranges */
            wx.again.chosen = cal.chosen;
            wx.again.n_scored = cal.n_scored;
            memcpy(wx.again.score_db, cal.score_db, sizeof cal.score_db);
            q8_calibration_free(&cal);
            cal = wx.again;
        } else {
            q8_calibration_free(&wx.again);
        }
        bc.thr = cal.threshold; /* not the freed gptq ranges the builder last took */
    }
    if (s == Q8_OK && o->n_input_shapes && !same_shapes(o, shapes, samples.n_inputs)) {
        /* the deployment graph is imported again: gcal's weights are no
         * longer needed (the thresholds go by tensor name), unless pruning
         * or equalization changed them (they are copied over by name, then
         * freed) */
        bool changed = o->prune.mode != Q8_PRUNE_NONE || o->quant.equalize ||
                       rq.weight_rounding != Q8_WROUND_NEAREST;
        if (!changed) free_constant_data(gcal);
        q8_load_options lo = {.input_shapes = o->input_shapes, .n_input_shapes = o->n_input_shapes,
                              .input_values = binds.v, .n_input_values = binds.n};
        s = q8_onnx_load(onnx_path, &g, err);
        if (s == Q8_OK) s = q8_passes_run_for_quantize(g, &lo, err);
        /* the weights as pruned (and re-fitted) and equalized at the
         * calibration shapes */
        if (s == Q8_OK) s = q8_prune_copy(g, gcal, &o->prune, &meta, err);
        if (s == Q8_OK && o->quant.equalize) s = q8_equalize_copy(g, gcal, o->quant.equalize_through, err);
        if (s == Q8_OK) s = q8_round_weights_copy(g, gcal, &rq, err);
        if (changed) free_constant_data(gcal);
        if (s == Q8_OK) s = q8_calibration_by_name(&cal, gcal, g, &moved, err);
        if (s == Q8_OK) {
            q8_calibration_free(&cal);
            cal = moved;
        }
    } else if (s == Q8_OK) {
        g = gcal;
        gcal = NULL;
    }
    if (s == Q8_OK) {
        r->fp32_arena_bytes = plan_arena(g, &plan, err);
        q8_plan_free(&plan);
    }
    if (s == Q8_OK) s = q8_quantize_graph(g, &cal, &bc.quant, &meta, err);
    /* the weights were rounded in the graph: the layers left FP32 get
     * theirs back, as trained */
    if (s == Q8_OK && q8_wround_restore_fp32(g, &wsaved) < 0)
        s = q8_fail(err, Q8_ERR_IO, "cannot read back the FP32 layers' weights from the "
                    "temporary file");
    q8_wround_saved_free(&wsaved);
    if (s == Q8_OK) s = q8_pass_fuse_ewchains(g, err);
    if (s == Q8_OK) s = q8_plan_build(g, NULL, NULL, &plan, err);
    char shapes_s[1024];
    if (s == Q8_OK) {
        r->q8_arena_bytes = plan.arena_bytes;
        shapes_string(g, shapes_s, sizeof shapes_s);
        const char *slash = strrchr(onnx_path, '/');
        const char *pm = o->prune.mode == Q8_PRUNE_2_4 ? "2:4"
                         : o->prune.mode == Q8_PRUNE_UNSTRUCTURED ? "unstructured" : "none";
        s = q8_meta_set_str(&meta, "producer", "q8 " Q8_VERSION_STRING, err);
        if (s == Q8_OK) s = q8_meta_set_str(&meta, "source.name", slash ? slash + 1 : onnx_path, err);
        if (s == Q8_OK) s = q8_meta_set_str(&meta, "source.sha256", sha, err);
        if (s == Q8_OK) s = q8_meta_set_str(&meta, "input.shapes", shapes_s, err);
        if (s == Q8_OK) s = q8_meta_set_str(&meta, "calib.method", method_name(o->method), err);
        if (s == Q8_OK && (o->method == Q8_CALIB_PERCENTILE || o->method == Q8_CALIB_AUTO))
            s = q8_meta_set_float(&meta, "calib.percentile", o->percentile, err);
        if (s == Q8_OK && o->method == Q8_CALIB_AUTO)
            s = q8_meta_set_str(&meta, "calib.chosen", method_name(r->calib_chosen), err);
        if (s == Q8_OK) s = q8_meta_set_int(&meta, "calib.samples", samples.n_samples, err);
        if (s == Q8_OK && o->quant.wide_int8) s = q8_meta_set_str(&meta, "quant.wide_range", "int8", err);
        if (s == Q8_OK) s = q8_meta_set_str(&meta, "prune.mode", pm, err);
        if (s == Q8_OK)
            s = q8_meta_set_float(&meta, "prune.fraction",
                                  o->prune.mode == Q8_PRUNE_2_4 ? 0.5 : o->prune.mode ? o->prune.fraction : 0, err);
        const char *scope = o->prune.mode == Q8_PRUNE_UNSTRUCTURED && o->prune.sensitivity
                                ? "sensitivity" : o->prune.global ? "global" : "layer";
        if (s == Q8_OK) s = q8_meta_set_str(&meta, "prune.scope", scope, err);
        if (s == Q8_OK && o->prune.mode)
            s = q8_meta_set_int(&meta, "prune.refit", o->prune.refit, err);
        for (int i = 0; s == Q8_OK && o->extra_meta && i < o->extra_meta->n; i++) {
            const q8_meta_entry *e = &o->extra_meta->e[i];
            s = e->type == Q8_META_STR ? q8_meta_set_str(&meta, e->key, e->s, err)
                : e->type == Q8_META_INT ? q8_meta_set_int(&meta, e->key, e->i, err)
                                         : q8_meta_set_float(&meta, e->key, e->f, err);
        }
    }
    for (int i = 0; s == Q8_OK && i < g->n_nodes; i++) {
        /* q8.EwChain is float arithmetic (with a quantize at its end) */
        if (!strcmp(g->nodes[i]->domain, "q8") && strcmp(g->nodes[i]->op_type, "EwChain"))
            r->n_quantized++;
        q8_op_id op = g->nodes[i]->op;
        r->n_onnx_integer += op == Q8_OP_CONV_INTEGER || op == Q8_OP_MATMUL_INTEGER ||
                             op == Q8_OP_QLINEAR_CONV || op == Q8_OP_QLINEAR_MATMUL;
    }
    r->n_int8_tables = meta_count(&meta, "quant.int8_tables");
    r->n_int8_added_tables = meta_count(&meta, "quant.int8_added_tables");
    r->n_equalized = meta_count(&meta, "equalize.pairs");
    r->n_equalized_through = meta_count(&meta, "equalize.through");
    q8_file_options fo = {.deflate_all = o->compress == Q8_COMPRESS_ON ||
                                         (o->compress == Q8_COMPRESS_AUTO && o->prune.mode)};
    if (s == Q8_OK) s = q8_file_write_opts(out_path, g, &meta, &fo, err);
    if (s == Q8_OK) {
        struct stat st;
        r->q8_bytes = stat(out_path, &st) == 0 ? (size_t)st.st_size : 0;
        r->n_samples = samples.n_samples;
    }
    q8_plan_free(&plan);
    q8_calibration_free(&cal);
    free(with_heads);
    q8_name_list_free(&heads);
    q8_binds_free(&binds); /* before the samples: it names their inputs */
    q8_samples_free(&samples);
    q8_meta_free(&meta);
    q8_graph_free(g);
    q8_graph_free(gcal);
    r->seconds = now_s() - t0;
    return s;
}
