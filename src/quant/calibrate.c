#include "calibrate.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "calib_choose.h"
#include "calib_span.h"
#include "control.h"
#include "model.h"

/* ---- calibration ---- */

typedef struct observe_ctx {
    q8_calibration *c;
    int pass;       /* 1: range, 2: histogram */
    bool kept;      /* the sample being run counts in the histograms */
    bool *ran;      /* per If branch scope (src/core/control.h): some node of it ran */
} observe_ctx;

static void observe_tensor(observe_ctx *o, const q8_graph *g, int t, const void *data) {
    q8_hist *h = o->c->hist[t];
    if (!h || !data) return;
    int64_t n = q8_tensor_numel(g->tensors[t]);
    if (o->pass == 1) q8_hist_range(h, data, n, o->kept);
    else q8_hist_add(h, data, n);
}

static void observer(void *arg, const q8_graph *g, const q8_node *n, void *const *ptr) {
    observe_ctx *o = arg;
    if (o->ran) o->ran[n->scope] = true;
    for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) observe_tensor(o, g, n->outputs[k], ptr[n->outputs[k]]);
}

void q8_calibration_free(q8_calibration *c) {
    for (int i = 0; c->hist && i < c->n_tensors; i++) free(c->hist[i]);
    free(c->hist);
    free(c->threshold);
    free(c->wide);
    memset(c, 0, sizeof *c);
}

static void warn(const q8_calib_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(const q8_calib_options *o, const char *fmt, ...) {
    if (!o->warn) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->warn(o->warn_arg, msg);
}

/* ---- pass 0: the samples' inputs, before the model runs ---- */

/* Largest |x| of the finite values; *bad counts the others. */
static double abs_max(const float *x, int64_t n, int64_t *bad) {
    double a = 0;
    *bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) (*bad)++;
        else if (fabsf(x[i]) > a) a = fabsf(x[i]);
    }
    return a;
}

static int cmp_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Outlier samples of one input: with S samples, up to 1 + S/100 of them may
 * be left out of the histograms, those whose largest |x| is more than
 * Q8_CALIB_OUTLIER_FACTOR times the largest of all the others but that
 * many. At least 3 samples must remain to compare with. */
static void mark_outliers(const double *amax, int S, bool *out, double *ref_out) {
    int allow = 1 + S / 100;
    *ref_out = 0;
    if (S - allow < 3) return;
    double *sorted = malloc(sizeof(double) * (size_t)S);
    if (!sorted) return; /* no screening without memory: every sample counts */
    memcpy(sorted, amax, sizeof(double) * (size_t)S);
    qsort(sorted, (size_t)S, sizeof(double), cmp_desc);
    double ref = sorted[allow];
    free(sorted);
    if (!(ref > 0)) return;
    for (int i = 0; i < S; i++)
        if (amax[i] > ref * Q8_CALIB_OUTLIER_FACTOR) out[i] = true;
    *ref_out = ref;
}

/* The graph input (or bound input) sample column k is for. */
static const char *sample_name(const q8_graph *g, const q8_sample_set *s, int k) {
    return s->names ? s->names[k] : g->tensors[g->inputs[k]]->name;
}

/* Refuse samples that cannot calibrate anything (no values, NaN or inf in
 * an input, an input that is 0 in every sample), and mark outlier samples.
 * Each sample is read once more here; the model has not run yet. */
static q8_status screen_inputs(const q8_graph *g, const q8_sample_set *s,
                               const q8_calib_options *o, bool *outlier, q8_error *err) {
    int S = s->n_samples, K = s->n_inputs;
    double *amax = calloc((size_t)S * (size_t)K + 1, sizeof(double));
    if (!amax) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status st = Q8_OK;
    for (int i = 0; i < S && st == Q8_OK; i++)
        for (int k = 0; k < K && st == Q8_OK; k++) {
            q8_tensor *t = NULL;
            const char *name = sample_name(g, s, k);
            if ((st = q8_sample_load(s, i, k, &t, err)) != Q8_OK) {
                q8_fail_prefix(err, "calibration sample %s", s->paths[i][k]);
                break;
            }
            int64_t n = q8_tensor_numel(t), bad = 0;
            char sb[128];
            if (n == 0)
                st = q8_fail(err, Q8_ERR_ARG,
                             "calibration sample %s: input '%s' has shape %s: no values to "
                             "measure", s->paths[i][k], name,
                             q8_shape_str(t->dims, t->ndim, sb, sizeof sb));
            if (st == Q8_OK && t->dtype == Q8_F32) {
                amax[(size_t)k * S + i] = abs_max(t->data, n, &bad);
                if (bad)
                    st = q8_fail(err, Q8_ERR_ARG,
                                 "calibration sample %s: input '%s' holds %lld NaN or infinite "
                                 "values of %lld: calibration needs real inputs",
                                 s->paths[i][k], name, (long long)bad, (long long)n);
            }
            q8_tensor_free(t);
        }
    for (int k = 0; k < K && st == Q8_OK; k++) {
        int ti = q8_graph_find(g, sample_name(g, s, k));
        const q8_tensor *in = ti >= 0 ? g->tensors[ti] : NULL;
        if (!in || in->dtype != Q8_F32 || in->data) continue;
        const double *a = amax + (size_t)k * S;
        double top = 0;
        for (int i = 0; i < S; i++) top = fmax(top, a[i]);
        if (top <= Q8_MIN_THRESHOLD) {
            st = q8_fail(err, Q8_ERR_ARG,
                         "calibration: input '%s' is 0 in all %d samples (no |x| above %g: "
                         "zeros or denormals only): the samples carry nothing to measure; "
                         "check the files in the calibration folder", in->name, S,
                         (double)Q8_MIN_THRESHOLD);
            break;
        }
        bool *mine = calloc((size_t)S, sizeof(bool));
        if (!mine) {
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        double ref;
        mark_outliers(a, S, mine, &ref);
        for (int i = 0; i < S; i++) {
            if (!mine[i]) continue;
            outlier[i] = true;
            warn(o, "calibration sample %s is an outlier: input '%s' reaches %g, %.3g times the "
                 "largest value of the other samples (%g); %s", s->paths[i][k], in->name, a[i],
                 a[i] / ref, ref,
                 o->method == Q8_CALIB_MINMAX
                     ? "minmax keeps it (see the ranges below)"
                     : "percentile and entropy leave it out of every range");
        }
        free(mine);
    }
    free(amax);
    return st;
}

/* ---- after the passes: what the person should know ---- */

#define MAX_NAMED 6

static void append_name(char *buf, size_t n, int *named, const char *name) {
    size_t used = strlen(buf);
    if (*named < MAX_NAMED && used < n)
        snprintf(buf + used, n - used, "%s'%s'", *named ? ", " : "", name);
    (*named)++;
}

static void finish_list(char *buf, size_t n, int named) {
    size_t used = strlen(buf);
    if (named > MAX_NAMED && used < n)
        snprintf(buf + used, n - used, " and %d more", named - MAX_NAMED);
}

/* Non-finite activations, activations that are 0 on every sample, and
 * (minmax) ranges that outlier samples alone decide. A tensor with no
 * finite value at all gets threshold 0: it stays in FP32. */
static void review(const q8_graph *g, q8_calibration *c, const q8_calib_options *o,
                   int n_outliers) {
    char nonfin[768] = "", zero[768] = "", wide[768] = "", dead[768] = "";
    int n_nonfin = 0, n_zero = 0, n_wide = 0, n_dead = 0;
    double worst_ratio = 0;
    const char *worst = NULL;
    for (int t = 0; t < g->n_tensors; t++) {
        const q8_hist *h = c->hist[t];
        if (!h) continue;
        const char *name = g->tensors[t]->name;
        if (h->seen == 0 && h->nonfinite > 0) {
            c->threshold[t] = 0;
            append_name(dead, sizeof dead, &n_dead, name);
            continue;
        }
        if (h->nonfinite > 0) append_name(nonfin, sizeof nonfin, &n_nonfin, name);
        if (h->seen > 0 && h->kept_amax == 0 && fmax(fabs(h->min), fabs(h->max)) == 0)
            append_name(zero, sizeof zero, &n_zero, name);
        double all = fmax(fabs(h->min), fabs(h->max));
        if (o->method == Q8_CALIB_MINMAX && n_outliers && isfinite(all) &&
            all > h->kept_amax * Q8_CALIB_OUTLIER_FACTOR) {
            append_name(wide, sizeof wide, &n_wide, name);
            double r = h->kept_amax > 0 ? all / h->kept_amax : INFINITY;
            if (r > worst_ratio) {
                worst_ratio = r;
                worst = name;
            }
        }
    }
    finish_list(dead, sizeof dead, n_dead);
    finish_list(nonfin, sizeof nonfin, n_nonfin);
    finish_list(zero, sizeof zero, n_zero);
    finish_list(wide, sizeof wide, n_wide);
    if (n_dead)
        warn(o, "calibration: every value of %d tensor%s was NaN or infinite on the samples: %s; "
             "%s in FP32", n_dead, n_dead == 1 ? "" : "s", dead, n_dead == 1 ? "it stays" :
             "they stay");
    if (n_nonfin)
        warn(o, "calibration: %d tensor%s held NaN or infinite values on the samples (left out "
             "of their ranges): %s", n_nonfin, n_nonfin == 1 ? "" : "s", nonfin);
    if (n_zero)
        warn(o, "calibration: %d tensor%s %s 0 on every sample, so %s INT8 range (%g) is a "
             "guess: %s", n_zero, n_zero == 1 ? "" : "s", n_zero == 1 ? "was" : "were",
             n_zero == 1 ? "its" : "their", (double)Q8_MIN_THRESHOLD, zero);
    if (n_wide)
        warn(o, "calibration (minmax): the outlier sample%s alone set%s the range of %d "
             "tensor%s: %s; in '%s' the INT8 step is %.3g times what the other samples need, "
             "so most of its values will quantize to 0: use --calib-method percentile or "
             "entropy, or remove the sample%s", n_outliers == 1 ? "" : "s",
             n_outliers == 1 ? "s" : "", n_wide, n_wide == 1 ? "" : "s", wide, worst,
             worst_ratio, n_outliers == 1 ? "" : "s");
}

/* Tensors whose per-sample range spans orders of magnitude (calib_span.h)
 * get threshold 0: no INT8 version, their layers stay FP32. Decided on
 * the threshold of the method asked for (auto: percentile, which is never
 * below MSE's, so the candidates agree). */
static void mark_wide(const q8_graph *g, q8_calibration *c, const q8_calib_options *o) {
    char names[768] = "";
    int named = 0;
    double worst = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const q8_hist *h = c->hist[t];
        if (!h || !(c->threshold[t] > 0) || !q8_span_is_wide(h, c->threshold[t])) continue;
        c->wide[t] = (float)q8_span_quiet_fraction(h, c->threshold[t], Q8_WIDE_RATIO);
        c->threshold[t] = 0;
        c->n_wide++;
        worst = fmax(worst, c->wide[t]);
        append_name(names, sizeof names, &named, g->tensors[t]->name);
    }
    finish_list(names, sizeof names, named);
    if (!c->n_wide) return;
    int inherited = q8_span_propagate(g, c);
    warn(o, "calibration: %d tensor%s range%s by orders of magnitude from sample to sample "
         "(up to %.0f%% of the samples below 1/%g of the INT8 range, where a static scale "
         "leaves them a few steps): %s; with the %d tensor%s computed from them by "
         "amplitude-carrying ops (linear layers, ReLU, pooling, sums, products), their layers "
         "stay FP32", c->n_wide, c->n_wide == 1 ? "'s" : "s'", c->n_wide == 1 ? " varies" :
         "s vary", 100 * worst, Q8_WIDE_RATIO, names, inherited, inherited == 1 ? "" : "s");
    c->n_wide += inherited;
}

/* A branch that no sample ran has no ranges: its nodes stay FP32; say so. */
static void note_untaken(const q8_graph *g, const q8_scopes *sc, const bool *ran,
                         const q8_calib_options *o, q8_calibration *out) {
    for (int k = 1; k < sc->n; k++) {
        if (sc->owner[k] < 0 || ran[k]) continue;
        int count = 0;
        for (int i = 0; i < g->n_nodes; i++) count += q8_scope_within(sc, g->nodes[i]->scope, k);
        if (!count) continue;
        char msg[256];
        snprintf(msg, sizeof msg, "If '%s': its %s (%d node%s) never ran on the calibration "
                 "samples, so it stays FP32", g->nodes[sc->owner[k]]->name,
                 sc->then_side[k] ? "then_branch" : "else_branch", count, count == 1 ? "" : "s");
        if (out->n_untaken < Q8_CALIB_MAX_NOTES)
            memcpy(out->untaken[out->n_untaken], msg, sizeof msg);
        out->n_untaken++;
        warn(o, "%s", msg);
    }
}

q8_status q8_calibrate(const q8_graph *g, const q8_sample_set *s, const q8_calib_options *o,
                       q8_calibration *out, q8_error *err) {
    memset(out, 0, sizeof *out);
    /* samples name their inputs: one may be bound now (its value checked) */
    if (!q8_samples_cover_inputs(s, g))
        return q8_fail(err, Q8_ERR_ARG, "calibration samples have %d inputs, the model %d",
                       s->n_inputs, g->n_inputs);
    out->n_tensors = g->n_tensors;
    out->n_samples = s->n_samples;
    out->hist = calloc((size_t)g->n_tensors + 1, sizeof(q8_hist *));
    out->threshold = calloc((size_t)g->n_tensors + 1, sizeof(float));
    out->wide = calloc((size_t)g->n_tensors + 1, sizeof(float));
    bool *outlier = calloc((size_t)s->n_samples + 1, sizeof(bool));
    if (!out->hist || !out->threshold || !out->wide || !outlier) {
        free(outlier);
        q8_calibration_free(out);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    q8_status st = screen_inputs(g, s, o, outlier, err);
    int n_outliers = 0;
    for (int i = 0; i < s->n_samples; i++) n_outliers += outlier[i];
    /* Observe every float activation: node outputs and graph inputs. */
    bool *want = calloc((size_t)g->n_tensors + 1, sizeof(bool));
    if (!want && st == Q8_OK) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; want && i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i]->n_outputs; k++)
            if (g->nodes[i]->outputs[k] >= 0) want[g->nodes[i]->outputs[k]] = true;
    for (int i = 0; want && i < g->n_inputs; i++) want[g->inputs[i]] = true;
    for (int t = 0; t < g->n_tensors && st == Q8_OK; t++) {
        if (!want[t] || g->tensors[t]->dtype != Q8_F32 || g->tensors[t]->data) continue;
        if (!(out->hist[t] = malloc(sizeof(q8_hist)))) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        else q8_hist_init(out->hist[t]);
    }
    free(want);
    q8_model tmp = {.g = (q8_graph *)g};
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = o->n_threads, .device = Q8_DEVICE_CPU};
    observe_ctx oc = {.c = out, .pass = 1};
    q8_scopes sc = {0};
    if (st == Q8_OK && q8_graph_has_control(g)) {
        st = q8_scopes_build(g, &sc, err);
        if (st == Q8_OK && !(oc.ran = calloc((size_t)sc.n, sizeof(bool))))
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    if (st == Q8_OK) st = q8_session_create(&tmp, &so, &sess, err);
    if (st == Q8_OK) st = q8_session_set_observer(sess, observer, &oc, err);
    for (int pass = 1; pass <= 2 && st == Q8_OK; pass++) {
        oc.pass = pass;
        for (int i = 0; i < s->n_samples && st == Q8_OK; i++) {
            oc.kept = !outlier[i];
            if (pass == 2 && !oc.kept) continue; /* outliers: minmax range only */
            for (int k = 0; k < s->n_inputs && st == Q8_OK; k++) {
                q8_tensor *t = NULL;
                st = q8_sample_load(s, i, k, &t, err);
                const char *name = sample_name(g, s, k);
                int ti = q8_graph_find(g, name);
                if (st == Q8_OK)
                    st = q8_session_set_input(sess, name, t->dtype, t->dims, t->ndim, t->data, err);
                if (st == Q8_OK && t->dtype == Q8_F32 && q8_graph_is_input(g, ti))
                    observe_tensor(&oc, g, ti, t->data);
                if (st != Q8_OK) q8_fail_prefix(err, "calibration sample %s", s->paths[i][k]);
                q8_tensor_free(t);
            }
            if (st == Q8_OK) st = q8_session_run(sess, err);
        }
        if (pass == 1)
            for (int t = 0; t < g->n_tensors; t++)
                if (out->hist[t]) q8_hist_freeze(out->hist[t]);
    }
    q8_session_free(sess);
    if (st == Q8_OK && sc.n) note_untaken(g, &sc, oc.ran, o, out);
    q8_scopes_free(&sc);
    free(oc.ran);
    /* a value no sample computed (an If branch never taken) has no range:
     * threshold 0 keeps its readers FP32; auto starts from percentile */
    q8_calib_method m = o->method == Q8_CALIB_AUTO ? Q8_CALIB_PERCENTILE : o->method;
    for (int t = 0; st == Q8_OK && t < g->n_tensors; t++) {
        const q8_hist *h = out->hist[t];
        if (h && (h->min <= h->max || h->nonfinite))
            out->threshold[t] = q8_calib_threshold(h, m, o->percentile);
    }
    if (st == Q8_OK) review(g, out, o, n_outliers);
    if (st == Q8_OK && !o->keep_wide) mark_wide(g, out, o);
    out->chosen = m;
    if (st == Q8_OK && o->method == Q8_CALIB_AUTO)
        st = q8_calib_choose(g, s, o, outlier, out, err);
    free(outlier);
    if (st != Q8_OK) q8_calibration_free(out);
    return st;
}

q8_status q8_calibration_by_name(const q8_calibration *from, const q8_graph *src,
                                 const q8_graph *dst, q8_calibration *out, q8_error *err) {
    memset(out, 0, sizeof *out);
    out->n_tensors = dst->n_tensors;
    out->n_samples = from->n_samples;
    out->threshold = calloc((size_t)dst->n_tensors + 1, sizeof(float));
    out->hist = calloc((size_t)dst->n_tensors + 1, sizeof(q8_hist *));
    out->wide = calloc((size_t)dst->n_tensors + 1, sizeof(float));
    if (!out->threshold || !out->hist || !out->wide) {
        q8_calibration_free(out);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int t = 0; t < dst->n_tensors; t++) {
        int k = q8_graph_find(src, dst->tensors[t]->name);
        if (k >= 0 && k < from->n_tensors) out->threshold[t] = from->threshold[k];
        if (k >= 0 && k < from->n_tensors && from->wide) out->wide[t] = from->wide[k];
    }
    out->n_wide = from->n_wide;
    return Q8_OK;
}
