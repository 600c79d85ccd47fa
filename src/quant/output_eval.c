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

q8_status q8_out_eval_open(const q8_graph *fp32, const q8_sample_set *s, const bool *skip,
                           int max_samples, int n_threads, q8_out_eval *e, q8_error *err) {
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
    e->ref = calloc((size_t)e->n_samples * (size_t)e->n_outputs + 1, sizeof(float *));
    q8_model m = {.g = (q8_graph *)fp32};
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = n_threads, .device = Q8_DEVICE_CPU};
    q8_status st = e->ref ? q8_session_create(&m, &so, &sess, err)
                          : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    float *wide = NULL;
    for (int j = 0; st == Q8_OK && j < e->n_samples; j++) {
        st = run_sample(sess, fp32, s, e->sample[j], err);
        for (int o = 0; st == Q8_OK && o < e->n_outputs; o++) {
            int64_t n;
            const float *d = float_output(sess, o, &wide, &n);
            if (!d || n <= 0) continue;
            e->numel[o] = n; /* the samples share one shape: calibration's */
            float *copy = malloc(sizeof(float) * (size_t)n);
            if (!copy) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            else memcpy(copy, d, sizeof(float) * (size_t)n);
            e->ref[(size_t)j * e->n_outputs + o] = copy;
        }
    }
    q8_session_free(sess);
    free(wide);
    if (st != Q8_OK) q8_out_eval_close(e);
    return st;
}

q8_status q8_out_eval_score(q8_out_eval *e, q8_graph *g, double *db, q8_error *err) {
    *db = NAN;
    q8_model *m = NULL;
    Q8_TRY(q8_model_from_graph(g, "", &m, err));
    double *sig = calloc((size_t)e->n_outputs + 1, sizeof(double));
    double *noise = calloc((size_t)e->n_outputs + 1, sizeof(double));
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = e->n_threads, .device = Q8_DEVICE_CPU};
    q8_status st = sig && noise ? q8_session_create(m, &so, &sess, err)
                                : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    float *wide = NULL;
    for (int j = 0; st == Q8_OK && j < e->n_samples; j++) {
        st = run_sample(sess, m->g, e->s, e->sample[j], err);
        for (int o = 0; st == Q8_OK && o < e->n_outputs; o++) {
            const float *r = e->ref[(size_t)j * e->n_outputs + o];
            int64_t n;
            const float *q = float_output(sess, o, &wide, &n);
            if (!r || !q || n != e->numel[o]) continue;
            for (int64_t i = 0; i < n; i++) {
                if (!isfinite(r[i]) || !isfinite(q[i])) continue;
                double dv = (double)q[i] - r[i];
                sig[o] += (double)r[i] * r[i];
                noise[o] += dv * dv;
            }
        }
    }
    /* the worst float output decides */
    for (int o = 0; st == Q8_OK && o < e->n_outputs; o++) {
        if (e->numel[o] <= 0) continue;
        double v = noise[o] > 0 ? 10 * log10(sig[o] / noise[o]) : INFINITY;
        if (isnan(*db) || v < *db) *db = v;
    }
    free(wide);
    q8_session_free(sess);
    q8_model_free(m);
    free(sig);
    free(noise);
    return st;
}

void q8_out_eval_close(q8_out_eval *e) {
    for (int j = 0; e->ref && j < e->n_samples * e->n_outputs; j++) free(e->ref[j]);
    free(e->ref);
    free(e->numel);
    free(e->sample);
    memset(e, 0, sizeof *e);
}
