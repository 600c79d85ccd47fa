#include "calibrate.h"

#include <string.h>

#include "model.h"

/* ---- calibration ---- */

typedef struct observe_ctx {
    q8_calibration *c;
    int pass; /* 1: range, 2: histogram */
} observe_ctx;

static void observe_tensor(observe_ctx *o, const q8_graph *g, int t, const void *data) {
    q8_hist *h = o->c->hist[t];
    if (!h || !data) return;
    int64_t n = q8_tensor_numel(g->tensors[t]);
    if (o->pass == 1) q8_hist_range(h, data, n);
    else q8_hist_add(h, data, n);
}

static void observer(void *arg, const q8_graph *g, const q8_node *n, void *const *ptr) {
    observe_ctx *o = arg;
    for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) observe_tensor(o, g, n->outputs[k], ptr[n->outputs[k]]);
}

void q8_calibration_free(q8_calibration *c) {
    for (int i = 0; c->hist && i < c->n_tensors; i++) free(c->hist[i]);
    free(c->hist);
    free(c->threshold);
    memset(c, 0, sizeof *c);
}

q8_status q8_calibrate(const q8_graph *g, const q8_sample_set *s, const q8_calib_options *o,
                       q8_calibration *out, q8_error *err) {
    memset(out, 0, sizeof *out);
    if (s->n_inputs != g->n_inputs)
        return q8_fail(err, Q8_ERR_ARG, "calibration samples have %d inputs, the model %d",
                       s->n_inputs, g->n_inputs);
    out->n_tensors = g->n_tensors;
    out->n_samples = s->n_samples;
    out->hist = calloc((size_t)g->n_tensors + 1, sizeof(q8_hist *));
    out->threshold = calloc((size_t)g->n_tensors + 1, sizeof(float));
    if (!out->hist || !out->threshold) {
        q8_calibration_free(out);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    /* Observe every float activation: node outputs and graph inputs. */
    bool *want = calloc((size_t)g->n_tensors + 1, sizeof(bool));
    if (!want) {
        q8_calibration_free(out);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i]->n_outputs; k++)
            if (g->nodes[i]->outputs[k] >= 0) want[g->nodes[i]->outputs[k]] = true;
    for (int i = 0; i < g->n_inputs; i++) want[g->inputs[i]] = true;
    q8_status st = Q8_OK;
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
    if (st == Q8_OK) st = q8_session_create(&tmp, &so, &sess, err);
    if (st == Q8_OK) st = q8_session_set_observer(sess, observer, &oc, err);
    for (int pass = 1; pass <= 2 && st == Q8_OK; pass++) {
        oc.pass = pass;
        for (int i = 0; i < s->n_samples && st == Q8_OK; i++) {
            for (int k = 0; k < s->n_inputs && st == Q8_OK; k++) {
                q8_tensor *t = NULL;
                st = q8_sample_load(s, i, k, &t, err);
                const q8_tensor *in = g->tensors[g->inputs[k]];
                if (st == Q8_OK)
                    st = q8_session_set_input(sess, in->name, t->dtype, t->dims, t->ndim, t->data, err);
                if (st == Q8_OK && t->dtype == Q8_F32) observe_tensor(&oc, g, g->inputs[k], t->data);
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
    for (int t = 0; st == Q8_OK && t < g->n_tensors; t++)
        if (out->hist[t]) out->threshold[t] = q8_calib_threshold(out->hist[t], o->method, o->percentile);
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
    if (!out->threshold || !out->hist) {
        q8_calibration_free(out);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int t = 0; t < dst->n_tensors; t++) {
        int k = q8_graph_find(src, dst->tensors[t]->name);
        if (k >= 0 && k < from->n_tensors) out->threshold[t] = from->threshold[k];
    }
    return Q8_OK;
}
