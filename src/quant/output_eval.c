/* Scoring a candidate INT8 graph by its outputs: the FP32 outputs of the
 * scored samples are kept once; each candidate runs the same samples and
 * its error energy is summed per output over all of them. */
#include "output_eval.h"

#include <math.h>
#include <string.h>

#include "half.h"
#include "model.h"

static const char *input_name(const q8_graph *g, const q8_sample_set *s, int k) {
    return s->names ? s->names[k] : g->tensors[g->inputs[k]]->name;
}

static q8_status run_sample(q8_session *sess, const q8_graph *g, const q8_sample_set *s, int i,
                            q8_error *err) {
    for (int k = 0; k < s->n_inputs; k++) {
        q8_tensor *t = NULL;
        Q8_TRY(q8_sample_load(s, i, k, &t, err));
        q8_status st = q8_session_set_input(sess, input_name(g, s, k), t->dtype, t->dims,
                                            t->ndim, t->data, err);
        q8_tensor_free(t);
        Q8_TRY(st);
    }
    return q8_session_run(sess, err);
}

/* Output o of the run just made, if float (float16 outputs widened into
 * *buf, reallocated as needed): its values and element count. */
static const float *float_output(const q8_session *sess, int o, float **buf, int64_t *n) {
    q8_tensor_info info;
    const void *d;
    *n = 0;
    if (q8_session_output(sess, o, &info, &d, NULL) != Q8_OK ||
        (info.dtype != Q8_F32 && info.dtype != Q8_F16))
        return NULL;
    int64_t c = 1;
    for (int j = 0; j < info.ndim; j++) c *= info.dims[j];
    *n = c;
    if (info.dtype == Q8_F32) return d;
    float *w = realloc(*buf, sizeof(float) * (size_t)(c + 1));
    if (!w) return NULL;
    *buf = w;
    q8_f16_to_f32_n(d, w, c);
    return w;
}

/* The float outputs of the run just made, copied into dst (output after
 * output, e->numel[o] values each); numel is learnt on the first call. */
static q8_status copy_outputs(q8_out_eval *e, const q8_session *sess, float *dst, float **wide,
                              q8_error *err) {
    for (int o = 0; o < e->n_outputs; o++) {
        int64_t n;
        const float *d = float_output(sess, o, wide, &n);
        if (!d || n <= 0) continue;
        if (!e->numel[o]) e->numel[o] = n; /* the samples share one shape: calibration's */
        if (n != e->numel[o])
            return q8_fail(err, Q8_ERR_SHAPE, "output %d changed size between samples", o);
        memcpy(dst, d, sizeof(float) * (size_t)n);
        dst += n;
    }
    return Q8_OK;
}

static int64_t floats_per_sample(const q8_out_eval *e) {
    int64_t n = 0;
    for (int o = 0; o < e->n_outputs; o++) n += e->numel[o];
    return n;
}

/* Output o's values within a sample's outputs laid out by copy_outputs. */
static const float *output_in(const q8_out_eval *e, const float *all, int o) {
    if (e->numel[o] <= 0) return NULL;
    for (int k = 0; k < o; k++) all += e->numel[k];
    return all;
}

q8_status q8_out_eval_open(const q8_graph *fp32, const q8_sample_set *s, const bool *skip,
                           int max_samples, int n_threads, q8_out_eval_refs refs,
                           q8_out_eval *e, q8_error *err) {
    memset(e, 0, sizeof *e);
    e->s = s;
    e->n_outputs = fp32->n_outputs;
    e->n_threads = n_threads;
    e->sample = calloc((size_t)s->n_samples + 1, sizeof(int));
    e->numel = calloc((size_t)fp32->n_outputs + 1, sizeof(int64_t));
    if (!e->sample || !e->numel) {
        q8_out_eval_close(e);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < s->n_samples && e->n_samples < max_samples; i++)
        if (!skip || !skip[i]) e->sample[e->n_samples++] = i;
    /* the session points at its model: e keeps it, the session may outlive this call */
    e->fp32_model.g = (q8_graph *)fp32;
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = n_threads, .device = Q8_DEVICE_CPU};
    float *wide = NULL;
    q8_status st = q8_session_create(&e->fp32_model, &so, &sess, err);
    /* the first sample tells how large the outputs are */
    if (st == Q8_OK && e->n_samples) {
        st = run_sample(sess, fp32, s, e->sample[0], err);
        for (int o = 0; st == Q8_OK && o < e->n_outputs; o++) {
            int64_t n;
            if (float_output(sess, o, &wide, &n) && n > 0) e->numel[o] = n;
        }
    }
    size_t per = (size_t)floats_per_sample(e) * sizeof(float);
    size_t all = per * (size_t)e->n_samples;
    q8_memory_info mi = {0};
    if (sess) q8_session_memory(sess, &mi);
    bool again = refs == Q8_OUT_EVAL_REFS_RERUN ||
                 (refs == Q8_OUT_EVAL_REFS_AUTO && all > Q8_OUT_EVAL_REF_BUDGET &&
                  all > mi.weights_bytes + mi.arena_bytes);
    if (st == Q8_OK && again) {
        e->fp32 = sess;
        sess = NULL;
        if (!(e->one = malloc(per + sizeof(float))))
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    if (st == Q8_OK && !again &&
        !(e->ref = calloc((size_t)e->n_samples + 1, sizeof(float *))))
        st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int j = 0; st == Q8_OK && !again && j < e->n_samples; j++) {
        if (j) st = run_sample(sess, fp32, s, e->sample[j], err);
        float *copy = st == Q8_OK ? malloc(per + sizeof(float)) : NULL;
        if (st == Q8_OK && !copy) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        e->ref[j] = copy;
        if (st == Q8_OK) st = copy_outputs(e, sess, copy, &wide, err);
    }
    q8_session_free(sess);
    free(wide);
    if (st != Q8_OK) q8_out_eval_close(e);
    return st;
}

/* Signal and error energy per output of m's outputs against the FP32
 * ones over the scored samples; with center (per output), the signal's
 * energy about it. */
static q8_status energies(q8_out_eval *e, q8_model *m, const double *center, double *sig,
                          double *noise, q8_error *err) {
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = e->n_threads, .device = Q8_DEVICE_CPU};
    q8_status st = q8_session_create(m, &so, &sess, err);
    float *wide = NULL;
    for (int j = 0; st == Q8_OK && j < e->n_samples; j++) {
        const float *mine = e->ref ? e->ref[j] : e->one;
        if (!e->ref) {
            st = run_sample(e->fp32, e->fp32_model.g, e->s, e->sample[j], err);
            if (st == Q8_OK) st = copy_outputs(e, e->fp32, e->one, &wide, err);
        }
        if (st == Q8_OK) st = run_sample(sess, m->g, e->s, e->sample[j], err);
        for (int o = 0; st == Q8_OK && o < e->n_outputs; o++) {
            const float *r = output_in(e, mine, o);
            int64_t n;
            const float *q = float_output(sess, o, &wide, &n);
            if (!r || !q || n != e->numel[o]) continue;
            double mean = center ? center[o] : 0;
            for (int64_t i = 0; i < n; i++) {
                if (!isfinite(r[i]) || !isfinite(q[i])) continue;
                double dv = (double)q[i] - r[i], rv = (double)r[i] - mean;
                sig[o] += rv * rv;
                noise[o] += dv * dv;
            }
        }
    }
    free(wide);
    q8_session_free(sess);
    return st;
}

q8_status q8_out_eval_score(q8_out_eval *e, q8_graph *g, double *db, q8_error *err) {
    *db = NAN;
    q8_model *m = NULL;
    Q8_TRY(q8_model_from_graph(g, "", &m, err));
    double *sig = calloc((size_t)e->n_outputs + 1, sizeof(double));
    double *noise = calloc((size_t)e->n_outputs + 1, sizeof(double));
    q8_status st = sig && noise ? energies(e, m, NULL, sig, noise, err)
                                : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    /* the worst float output decides */
    for (int o = 0; st == Q8_OK && o < e->n_outputs; o++) {
        if (e->numel[o] <= 0) continue;
        double v = noise[o] > 0 ? 10 * log10(sig[o] / noise[o]) : INFINITY;
        if (isnan(*db) || v < *db) *db = v;
    }
    q8_model_free(m);
    free(sig);
    free(noise);
    return st;
}

/* Per output, the mean of the kept FP32 outputs over all scored samples
 * (0 without them): an output far from 0 (coordinates in pixels) is not
 * exact where its values move by a few, and a one-value output (a score)
 * still has a spread over the samples. */
static double *output_means(const q8_out_eval *e) {
    double *c = calloc((size_t)e->n_outputs + 1, sizeof(double));
    for (int o = 0; c && e->ref && o < e->n_outputs; o++) {
        int64_t k = 0;
        for (int j = 0; j < e->n_samples; j++) {
            const float *r = output_in(e, e->ref[j], o);
            for (int64_t i = 0; r && i < e->numel[o]; i++)
                if (isfinite(r[i])) c[o] += r[i], k++;
        }
        if (k) c[o] /= (double)k;
    }
    return c;
}

q8_status q8_out_eval_rel_error(q8_out_eval *e, const q8_graph *g, double *rel, q8_error *err) {
    *rel = 0;
    q8_model m = {.g = (q8_graph *)g};
    double *sig = calloc((size_t)e->n_outputs + 1, sizeof(double));
    double *noise = calloc((size_t)e->n_outputs + 1, sizeof(double));
    if (!e->mean) e->mean = output_means(e);
    q8_status st = sig && noise && e->mean ? energies(e, &m, e->mean, sig, noise, err)
                                           : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int n = 0;
    for (int o = 0; st == Q8_OK && o < e->n_outputs; o++) {
        if (e->numel[o] <= 0 || !(sig[o] > 0)) continue;
        *rel += noise[o] / sig[o];
        n++;
    }
    if (n) *rel /= n;
    free(sig);
    free(noise);
    return st;
}

void q8_out_eval_close(q8_out_eval *e) {
    for (int j = 0; e->ref && j < e->n_samples; j++) free(e->ref[j]);
    q8_session_free(e->fp32);
    free(e->one);
    free(e->mean);
    free(e->ref);
    free(e->numel);
    free(e->sample);
    memset(e, 0, sizeof *e);
}
