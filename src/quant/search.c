/* quantize --max-drop: a greedy search over per-layer fallbacks.
 *
 * Trial 1 quantizes with the options as given. Each trial is measured on
 * the --data samples against the FP32 model (q8_report_compare): the drop
 * in top-1 (with labels) or the share of rows whose top-1 changed (without),
 * and every INT8 layer's sensitivity: what the float outputs gain when that
 * layer's outputs are FP32's (next_layer). While the drop is above the
 * limit, the next trial takes one step on the layer that gains the most per
 * byte: a pruned layer becomes dense (still INT8); a dense one is kept in
 * FP32. Once the limit is met, the steps that did not lower the drop go
 * back in one more trial, kept if it meets the limit too. The best trial
 * (smallest drop; the earliest on ties, i.e. the fewest fallbacks) is
 * written at the end with the user's shapes.
 *
 * Trials are built at the --data samples' shapes (so they can run on them);
 * calibration does not depend on that shape, so the model written at the
 * deployment shape (--input-shape) computes the same per-row results. */
#include "search.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bind_calib.h"
#include "report.h"
#include "tensor_file.h"

/* The gain of each layer is measured on the first samples only: one run
 * per layer and sample (ISNet: ~100 layers of ~1 s runs). */
#define Q8_SEARCH_GAIN_SAMPLES 8
/* What any layer kept in FP32 costs besides its weights, in bytes: ranks
 * weightless layers (attention matmuls, tables) after a small conv of the
 * same gain. */
#define Q8_SEARCH_LAYER_BYTES 4096.0
/* Gains below this are measurement noise, not a reason to fall back. */
#define Q8_SEARCH_MIN_GAIN_DB 0.05

typedef struct name_list {
    char **v;
    int n, cap;
} name_list;

static bool nl_has(const name_list *l, const char *s) {
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) return true;
    return false;
}

static q8_status nl_add(name_list *l, const char *s, q8_error *err) {
    if (nl_has(l, s)) return Q8_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, sizeof(char *) * (size_t)cap);
        if (!v) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = q8_strdup(s))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    l->n++;
    return Q8_OK;
}

static void nl_free(name_list *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static q8_status nl_copy(name_list *dst, const name_list *src, q8_error *err) {
    nl_free(dst);
    for (int i = 0; i < src->n; i++) Q8_TRY(nl_add(dst, src->v[i], err));
    return Q8_OK;
}

/* Removes s from l (if there). */
static void nl_remove(name_list *l, const char *s) {
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) {
            free(l->v[i]);
            l->v[i] = l->v[--l->n];
            return;
        }
}

/* The n names v joined by sep (malloc'd), or NULL when out of memory. */
static char *join_names(char *const *v, int n, const char *sep) {
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(v[i]) + strlen(sep);
    char *s = calloc(len, 1);
    for (int i = 0; s && i < n; i++) {
        if (i) strcat(s, sep);
        strcat(s, v[i]);
    }
    return s;
}

void q8_search_result_free(q8_search_result *r) {
    for (int i = 0; i < r->n_fp32_layers; i++) free(r->fp32_layers[i]);
    free(r->fp32_layers);
    for (int i = 0; i < r->n_dense_layers; i++) free(r->dense_layers[i]);
    free(r->dense_layers);
    memset(r, 0, sizeof *r);
}

void q8_quantize_pin_auto(q8_quantize_options *o, const q8_quantize_result *r) {
    if (o->method == Q8_CALIB_AUTO && r->calib_scored > 0) o->method = r->calib_chosen;
    if (o->quant.weight_rounding == Q8_WROUND_AUTO) o->quant.weight_rounding = r->wround_chosen;
    if (o->quant.scalar_tables == Q8_SCALAR_TABLES_AUTO && r->tables_scored > 0)
        o->quant.scalar_tables = r->tables_chosen ? Q8_SCALAR_TABLES_ON : Q8_SCALAR_TABLES_OFF;
    if (o->quant.int8_prelu == Q8_INT8_PRELU_AUTO && r->prelu_scored > 0)
        o->quant.int8_prelu = r->prelu_chosen ? Q8_INT8_PRELU_ON : Q8_INT8_PRELU_OFF;
    if (o->quant.fp32_heads == Q8_FP32_HEADS_AUTO)
        o->quant.fp32_heads = r->heads_chosen ? Q8_FP32_HEADS_ON : Q8_FP32_HEADS_OFF;
}

bool q8_parse_max_drop(const char *s, double *points, char *msg, size_t n) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    bool unit = !strcmp(end, "pt") || !strcmp(end, "%") || !strcmp(end, "points");
    if (end == s || errno || (*end && !unit) || !isfinite(v)) {
        snprintf(msg, n, "--max-drop wants percentage points, e.g. 0.5 (half a point), not '%s'",
                 s);
        return false;
    }
    if (v < 0 || v > 100) {
        snprintf(msg, n, "--max-drop %s: the drop in percentage points must be in [0, 100]", s);
        return false;
    }
    if (!unit && v > 0 && v < 0.1) {
        snprintf(msg, n,
                 "--max-drop %s is ambiguous: it is read in percentage points (0.5 = half a "
                 "point), and %s reads like a fraction; write %gpt for %g points, or %g for the "
                 "fraction %s",
                 s, s, v, v, 100 * v, s);
        return false;
    }
    *points = v;
    return true;
}

/* The model quantize just wrote at out, opened at the samples' shapes as
 * trial 1 (out_is_first), or NULL where it does not open so (other
 * deployment shapes): then trial 1 is quantized again. */
static q8_model *open_first(const char *out, const q8_input_shape *shapes, int n_shapes,
                            q8_quantize_result *qr) {
    q8_load_options lo = {.input_shapes = shapes, .n_input_shapes = n_shapes};
    q8_model *qm = NULL;
    q8_error e = {0};
    struct stat sb;
    if (stat(out, &sb) != 0 || q8_model_open(out, &lo, &qm, &e) != Q8_OK) return NULL;
    memset(qr, 0, sizeof *qr); /* the caller pinned auto's choices already */
    qr->q8_bytes = (size_t)sb.st_size;
    return qm;
}

/* Quantize with the current fallbacks and measure it. rep[0..1] are filled
 * (the caller frees them). The trial file is removed as soon as it is
 * mapped, so that a search stopped by a signal leaves (almost) nothing;
 * the first trial alone passes on calibration warnings (the others would
 * repeat them). */
static q8_status run_trial(const char *onnx, const char *path, const q8_quantize_options *base,
                           const q8_input_shape *shapes, int n_shapes, const name_list *fp32,
                           const name_list *dense, const q8_model *fm, const q8_sample_set *s,
                           const q8_tensor *labels, int n_threads, bool first,
                           const char *reuse, q8_report_model rep[2], q8_quantize_result *qr,
                           q8_error *err) {
    q8_model *qm = first && reuse ? open_first(reuse, shapes, n_shapes, qr) : NULL;
    if (!qm) {
        q8_quantize_options o = *base;
        o.input_shapes = shapes;
        o.n_input_shapes = n_shapes;
        o.prune.skip = (const char *const *)dense->v;
        o.prune.n_skip = dense->n;
        o.quant.fp32_layers = (const char *const *)fp32->v;
        o.quant.n_fp32_layers = fp32->n;
        o.extra_meta = NULL;
        if (!first) o.warn = NULL;
        Q8_TRY(q8_quantize_model(onnx, path, &o, qr, err));
        q8_load_options lo = {.input_shapes = shapes, .n_input_shapes = n_shapes};
        q8_status os = q8_model_open(path, &lo, &qm, err);
        unlink(path);
        Q8_TRY(os);
    }
    memset(rep, 0, 2 * sizeof *rep);
    q8_compare_options co = {.labels = labels, .per_layer = true, .per_layer_gain = true,
                             .gain_samples = Q8_SEARCH_GAIN_SAMPLES, .n_threads = n_threads};
    const q8_model *qs[1] = {qm};
    q8_status st = q8_report_compare(fm, qs, 1, s, &co, rep, err);
    q8_model_free(qm);
    return st;
}

/* Layers --fp32-layers can name (q8_is_quant_layer, on the FP32 graph f):
 * not the int8 Add, Mul and pooling that follow their neighbours'
 * precision, nor the scalar-op tables. */
static bool can_fall_back(const q8_graph *f, const q8_report_layer *L) {
    const q8_node *n = q8_graph_find_node(f, L->node);
    return n && q8_is_quant_layer(n);
}

/* The bytes a layer's next step adds to the file: un-pruning stores the
 * pruned weights (int8), FP32 widens every weight. */
static double step_bytes(const q8_report_layer *L, const name_list *dense) {
    bool unprune = L->sparsity > 0 && !nl_has(dense, L->node);
    return unprune ? L->sparsity * (double)L->weight_elems : 3.0 * (double)L->weight_elems;
}

/* The next step, from the layers of the trial just measured: the layer
 * whose exact output gains the model's float outputs the most SQNR per byte
 * its step adds (FP32: 3 bytes a weight more than INT8; un-pruning: 1 byte a
 * pruned weight; plus
 * Q8_SEARCH_LAYER_BYTES for what any FP32 layer costs: a conversion pair and
 * FP32 compute). The SQNR alone was the rank before: it does not say what a
 * layer costs the output (errors compound or cancel downstream; on ppocr_rec
 * the three lowest alone, kept FP32, moved the output by -0.6 to +0.1 dB).
 * Without a gain measured (no float output), the lowest SQNR alone. Only
 * steps that fit in `room` bytes are candidates. */
static const q8_report_layer *next_layer(const q8_graph *f, const q8_report_model *m,
                                         const name_list *fp32, const name_list *dense,
                                         bool by_gain, double room) {
    const q8_report_layer *best = NULL;
    double bs = -INFINITY;
    for (int i = 0; i < m->n_layers; i++) {
        const q8_report_layer *L = &m->layers[i];
        if (nl_has(fp32, L->node) || !can_fall_back(f, L)) continue;
        double bytes = step_bytes(L, dense);
        if (bytes > room) continue;
        double score;
        if (by_gain) {
            double gain = q8_err_sqnr_db(&L->exact_out) - q8_err_sqnr_db(&L->exact_base);
            if (L->exact_out.n == 0 || isnan(gain) || !(gain > Q8_SEARCH_MIN_GAIN_DB)) continue;
            if (isinf(gain)) gain = 1000; /* the output exact: nothing else is left */
            score = gain / (bytes + Q8_SEARCH_LAYER_BYTES);
        } else {
            double db = q8_err_sqnr_db(&L->alone);
            if (isnan(db)) continue;
            score = -db;
        }
        if (!best || score > bs) {
            best = L;
            bs = score;
        }
    }
    return best;
}

/* Whether the trial measured gains: some layer with exact_out counted. */
static bool has_gains(const q8_report_model *m) {
    for (int i = 0; i < m->n_layers; i++)
        if (m->layers[i].exact_out.n > 0 && !isnan(q8_err_sqnr_db(&m->layers[i].exact_base)))
            return true;
    return false;
}

static q8_status set_lists(q8_search_result *r, const name_list *fp32, const name_list *dense,
                           const name_list *user_dense, q8_error *err) {
    for (int i = 0; i < r->n_fp32_layers; i++) free(r->fp32_layers[i]);
    for (int i = 0; i < r->n_dense_layers; i++) free(r->dense_layers[i]);
    r->n_fp32_layers = r->n_dense_layers = 0;
    free(r->fp32_layers);
    free(r->dense_layers);
    r->fp32_layers = calloc((size_t)fp32->n + 1, sizeof(char *));
    r->dense_layers = calloc((size_t)dense->n + 1, sizeof(char *));
    if (!r->fp32_layers || !r->dense_layers) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; i < fp32->n; i++) {
        if (!(r->fp32_layers[i] = q8_strdup(fp32->v[i])))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        r->n_fp32_layers++;
    }
    /* only the layers the search made dense, not the user's --prune-skip, nor
     * those it then moved to FP32 */
    for (int i = 0; i < dense->n; i++) {
        if (nl_has(user_dense, dense->v[i]) || nl_has(fp32, dense->v[i])) continue;
        if (!(r->dense_layers[r->n_dense_layers] = q8_strdup(dense->v[i])))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        r->n_dense_layers++;
    }
    return Q8_OK;
}

/* The output SQNR of the worst float output (NaN if none). */
static double worst_sqnr(const q8_report_model *m) {
    double w = NAN;
    for (int i = 0; i < m->n_outputs; i++) {
        double db = q8_err_sqnr_db(&m->outputs[i].err);
        if (!isnan(db) && (isnan(w) || db < w)) w = db;
    }
    return w;
}

static q8_status search_meta(const q8_search_result *r, const q8_search_options *so, q8_meta *m,
                             q8_error *err) {
    if (so->by_sqnr) {
        Q8_TRY(q8_meta_set_float(m, "search.min_sqnr_db", so->min_sqnr_db, err));
        Q8_TRY(q8_meta_set_float(m, "search.sqnr_db", r->best.sqnr_db, err));
        Q8_TRY(q8_meta_set_str(m, "search.metric", "output SQNR vs FP32", err));
        if (so->max_added_bytes)
            Q8_TRY(q8_meta_set_int(m, "search.max_added_bytes", (int64_t)so->max_added_bytes,
                                   err));
    } else {
        Q8_TRY(q8_meta_set_float(m, "search.max_drop_points", so->max_drop, err));
        Q8_TRY(q8_meta_set_str(m, "search.metric",
                               r->labels ? "top-1 vs labels" : "top-1 agreement with FP32", err));
        Q8_TRY(q8_meta_set_float(m, "search.drop_points", r->best.drop, err));
    }
    if (so->automatic) Q8_TRY(q8_meta_set_int(m, "search.auto", 1, err));
    Q8_TRY(q8_meta_set_int(m, "search.met", r->met, err));
    Q8_TRY(q8_meta_set_int(m, "search.trials", r->trials, err));
    char *s = join_names(r->dense_layers, r->n_dense_layers, ",");
    if (!s) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status st = q8_meta_set_str(m, "search.dense_layers", s, err);
    free(s);
    return st;
}

q8_status q8_quantize_search(const char *onnx, const char *out, const q8_quantize_options *o,
                             const q8_search_options *so, q8_search_progress progress, void *arg,
                             q8_search_result *r, q8_error *err) {
    memset(r, 0, sizeof *r);
    if (!so->data_dir && !so->by_sqnr)
        return q8_fail(err, Q8_ERR_ARG, "--max-drop needs --data DIR to measure on");
    if (so->by_sqnr && so->labels_path)
        return q8_fail(err, Q8_ERR_ARG, "--min-sqnr compares with FP32: it takes no --labels");
    if (so->by_sqnr && !isfinite(so->min_sqnr_db))
        return q8_fail(err, Q8_ERR_ARG, "--min-sqnr must be a finite number of dB");
    if (so->max_trials < 1) return q8_fail(err, Q8_ERR_ARG, "--max-trials must be >= 1");
    if (!so->by_sqnr && !(so->max_drop >= 0 && so->max_drop <= 100))
        return q8_fail(err, Q8_ERR_ARG, "--max-drop must be in [0, 100] percentage points");
    if (q8_same_file(onnx, out))
        return q8_fail(err, Q8_ERR_ARG, "refusing to overwrite the input model '%s'", onnx);
    Q8_TRY(q8_check_output_path(out, err));

    q8_sample_set samples = {0};
    q8_tensor_info *inputs = NULL;
    q8_input_shape *shapes = NULL;
    q8_model *fm = NULL;
    q8_tensor *labels = NULL;
    name_list fp32 = {0}, dense = {0}, user_dense = {0};
    q8_report_model rep[2] = {{0}};
    q8_meta meta = {0};
    char *trial = malloc(strlen(out) + 16);
    int n_in = 0;
    q8_status st = trial ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    const char *data = so->data_dir ? so->data_dir : o->calib_dir;
    if (st == Q8_OK && !data) st = q8_fail(err, Q8_ERR_ARG, "--min-sqnr needs --calib DIR");
    if (st == Q8_OK)
        st = q8_report_open_samples(onnx, data, o->input_values, o->n_input_values, &samples,
                                    &inputs, &shapes, err);
    n_in = samples.n_inputs;
    /* the FP32 model with the inputs each trial binds (the .q8 files record
     * theirs) */
    q8_binds binds = {0};
    if (st == Q8_OK)
        st = q8_binds_for_quantize(onnx, &samples, shapes, o->input_values, o->n_input_values,
                                   &binds, err);
    q8_load_options lo = {.input_shapes = shapes, .n_input_shapes = n_in,
                          .input_values = binds.v, .n_input_values = binds.n};
    if (st == Q8_OK) st = q8_model_open(onnx, &lo, &fm, err);
    if (st == Q8_OK && so->labels_path) {
        st = q8_tensor_file_load(so->labels_path, &labels, err);
        if (st != Q8_OK) q8_fail_prefix(err, "--labels");
    }
    for (int i = 0; st == Q8_OK && i < o->quant.n_fp32_layers; i++)
        st = nl_add(&fp32, o->quant.fp32_layers[i], err);
    for (int i = 0; st == Q8_OK && i < o->prune.n_skip; i++) {
        st = nl_add(&dense, o->prune.skip[i], err);
        if (st == Q8_OK) st = nl_add(&user_dense, o->prune.skip[i], err);
    }
    if (st == Q8_OK) { /* a name beside out, held only while a trial is mapped */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned x = (unsigned)(ts.tv_nsec ^ getpid() * 40503);
        struct stat sb;
        int tries = 0;
        do { /* a name nothing has: the trial's write would replace a file there */
            x = x * 1103515245u + 12345u;
            snprintf(trial, strlen(out) + 16, "%s.trial%06x", out, x & 0xffffff);
        } while (lstat(trial, &sb) == 0 && ++tries < 100);
        if (tries == 100)
            st = q8_fail(err, Q8_ERR_IO, "cannot find a free file name next to '%s'", out);
    }
    r->labels = labels != NULL;
    r->best.drop = INFINITY;
    q8_search_action action = Q8_SEARCH_AS_ASKED;
    const char *changed = NULL;
    double changed_db = NAN, changed_gain = NAN;
    /* Steps after which the drop did not fall (greedy steps ranked by a
     * gain that misses interactions: fr_expression's first two FP32 layers
     * moved its output by 0.0 dB, the third by 18.6). Once the criterion is
     * met, one more trial takes them back to INT8 (or pruned), beyond
     * max_trials, and is kept if it meets the criterion too. */
    name_list idle = {0};
    char *idle_names = NULL;
    q8_search_trial prev = {.drop = INFINITY, .sqnr_db = NAN};
    bool undoing = false;
    double added = 0; /* the steps' bytes so far (max_added_bytes) */
    /* The ranges auto chooses on the first trial stay for the others and the
     * model written: choosing again per trial could flip the method and
     * undo what the fallbacks gained (measured on ppocr_rec). */
    q8_quantize_options tro = *o;
    while (st == Q8_OK && (r->trials < so->max_trials || undoing)) {
        q8_quantize_result qr;
        st = run_trial(onnx, trial, &tro, shapes, n_in, &fp32, &dense, fm, &samples, labels,
                       o->n_threads, r->trials == 0, so->out_is_first ? out : NULL, rep, &qr,
                       err);
        if (st != Q8_OK) break;
        /* and so do the weight rounding and the scalar tables auto took:
         * the tables chosen again per trial (on 8 samples where the ranges,
         * pinned, no longer score 32), the model written at the end was not
         * the best trial (Selfie --min-sqnr 20: tables on, 15.6 -> 13.3 dB
         * on held-out crops against the default's) */
        q8_quantize_pin_auto(&tro, &qr);
        if (rep[0].rows <= 0 && !so->by_sqnr) {
            st = q8_fail(err, Q8_ERR_ARG, "--max-drop measures top-1 on output 0, which is not a "
                         "float score tensor in this model");
            break;
        }
        r->trials++;
        r->rows = rep[0].rows;
        r->fp32_top1 = q8_report_top1(&rep[0]);
        q8_search_trial t = {.index = r->trials, .action = action, .node = changed,
                             .layer_sqnr_db = changed_db, .layer_gain_db = changed_gain,
                             .top1 = q8_report_top1(&rep[1]),
                             .agreement = q8_report_agreement(&rep[1]), .q8_bytes = qr.q8_bytes};
        t.sqnr_db = worst_sqnr(&rep[1]);
        if (so->by_sqnr) /* NaN (no float output) never meets it */
            t.drop = t.sqnr_db >= so->min_sqnr_db ? 0
                     : isnan(t.sqnr_db)           ? INFINITY
                                                  : so->min_sqnr_db - t.sqnr_db;
        else
            t.drop = labels ? (r->fp32_top1 - t.top1) * 100 : (1 - t.agreement) * 100;
        if (fabs(t.drop) < 1e-9) t.drop = 0;
        if (progress) progress(arg, &t);
        t.node = NULL; /* points into lists that change */
        if (r->trials == 1) r->first = t;
        bool met_now = t.drop <= (so->by_sqnr ? 0 : so->max_drop);
        if (undoing) {
            if (met_now) {
                r->best = t;
                st = set_lists(r, &fp32, &dense, &user_dense, err);
            }
            break;
        }
        if (t.drop < r->best.drop) {
            r->best = t;
            st = set_lists(r, &fp32, &dense, &user_dense, err);
        }
        /* (with by_sqnr the drop stops at 0: the SQNR says what a step gained) */
        double gained = so->by_sqnr ? t.sqnr_db - prev.sqnr_db : prev.drop - t.drop;
        bool idle_step = !(gained >= (!so->by_sqnr           ? 1e-9
                                      : so->idle_gain_db > 0 ? so->idle_gain_db
                                                             : Q8_SEARCH_MIN_GAIN_DB));
        /* by layer: a layer whose later step (dense, then FP32) gained is
         * not taken back */
        if (st == Q8_OK && changed && idle_step) st = nl_add(&idle, changed, err);
        else if (changed) nl_remove(&idle, changed);
        prev = t;
        if (st != Q8_OK) break;
        if (met_now && idle.n && idle.n < r->trials - 1) {
            for (int i = 0; i < idle.n; i++) {
                nl_remove(&fp32, idle.v[i]);
                if (!nl_has(&user_dense, idle.v[i])) nl_remove(&dense, idle.v[i]);
            }
            if (!(idle_names = join_names(idle.v, idle.n, ", "))) {
                st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
                break;
            }
            undoing = true;
            action = Q8_SEARCH_UNDO;
            changed = idle_names;
            changed_db = changed_gain = NAN;
            q8_report_model_free(&rep[0]);
            q8_report_model_free(&rep[1]);
            continue;
        }
        if (met_now || r->trials == so->max_trials) break;
        double room = so->max_added_bytes ? (double)so->max_added_bytes - added : INFINITY;
        const q8_report_layer *L =
            next_layer(fm->g, &rep[1], &fp32, &dense, has_gains(&rep[1]), room);
        /* No layer's exact output gains the model's: the measure misses
         * errors made after a layer's output, where its neighbours requantize
         * it (a small branch joined by Concat to a large one shares its scale;
         * made exact it is rounded again, kept FP32 it is not). The weakest
         * layer alone is then the step, as where no gain is measured. */
        if (!L && has_gains(&rep[1])) L = next_layer(fm->g, &rep[1], &fp32, &dense, false, room);
        if (!L) {
            r->exhausted = true;
            break;
        }
        double gain = has_gains(&rep[1])
            ? q8_err_sqnr_db(&L->exact_out) - q8_err_sqnr_db(&L->exact_base) : NAN;
        if (so->min_step_gain_db > 0 && !(gain >= so->min_step_gain_db)) {
            r->no_large_step = true;
            break;
        }
        added += step_bytes(L, &dense);
        if (L->sparsity > 0 && !nl_has(&dense, L->node)) {
            action = Q8_SEARCH_DENSE;
            st = nl_add(&dense, L->node, err);
        } else {
            action = Q8_SEARCH_FP32;
            st = nl_add(&fp32, L->node, err);
            if (st == Q8_OK && o->prune.mode != Q8_PRUNE_NONE) st = nl_add(&dense, L->node, err);
        }
        changed = st == Q8_OK
            ? (action == Q8_SEARCH_DENSE ? dense.v[dense.n - 1] : fp32.v[fp32.n - 1])
            : NULL;
        changed_db = q8_err_sqnr_db(&L->alone);
        changed_gain = gain;
        q8_report_model_free(&rep[0]);
        q8_report_model_free(&rep[1]);
    }
    q8_report_model_free(&rep[0]);
    q8_report_model_free(&rep[1]);
    r->met = st == Q8_OK && r->best.drop <= (so->by_sqnr ? 0 : so->max_drop);
    /* The best trial, at the deployment shapes, with the search's record
     * (unless out holds it already). */
    bool write = !(so->out_is_first && r->best.index == 1);
    if (st == Q8_OK && write) st = search_meta(r, so, &meta, err);
    if (st == Q8_OK && write) {
        r->written = true;
        q8_quantize_options fo = tro;
        name_list bf = {0}, bd = {0};
        for (int i = 0; st == Q8_OK && i < r->n_fp32_layers; i++)
            st = nl_add(&bf, r->fp32_layers[i], err);
        if (st == Q8_OK) st = nl_copy(&bd, &user_dense, err);
        for (int i = 0; st == Q8_OK && i < r->n_dense_layers; i++)
            st = nl_add(&bd, r->dense_layers[i], err);
        if (o->prune.mode != Q8_PRUNE_NONE)
            for (int i = 0; st == Q8_OK && i < r->n_fp32_layers; i++)
                st = nl_add(&bd, r->fp32_layers[i], err);
        fo.quant.fp32_layers = (const char *const *)bf.v;
        fo.quant.n_fp32_layers = bf.n;
        fo.prune.skip = (const char *const *)bd.v;
        fo.prune.n_skip = bd.n;
        fo.extra_meta = &meta;
        fo.warn = NULL; /* the first trial gave them */
        if (st == Q8_OK) st = q8_quantize_model(onnx, out, &fo, &r->q, err);
        nl_free(&bf);
        nl_free(&bd);
    }
    q8_meta_free(&meta);
    nl_free(&idle);
    free(idle_names);
    nl_free(&fp32);
    nl_free(&dense);
    nl_free(&user_dense);
    q8_tensor_free(labels);
    q8_model_free(fm);
    q8_binds_free(&binds); /* before the samples: it names their inputs */
    q8_report_inputs_free(inputs, n_in);
    free(shapes);
    q8_samples_free(&samples);
    free(trial);
    if (st != Q8_OK) q8_search_result_free(r);
    return st;
}
