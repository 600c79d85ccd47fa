/* --calib-method auto (calib_choose.h): candidate ranges scored by the
 * output SQNR of the INT8 model on the calibration samples. */
#include "calib_choose.h"

#include <math.h>
#include <string.h>

#include "output_eval.h"

static const q8_calib_method candidates[Q8_CHOOSE_N_CANDIDATES] = {Q8_CALIB_PERCENTILE,
                                                                   Q8_CALIB_MSE};

/* Scoring runs the model 1 + N_CANDIDATES + GROUPS times per scored sample:
 * fewer samples for larger models, so that the choice costs at most about
 * this many activation values written. */
#define Q8_CHOOSE_BUDGET 4.0e9

static int scored_samples(const q8_graph *g, const q8_calibration *c, int kept) {
    double elems = 0;
    for (int t = 0; t < c->n_tensors; t++)
        if (c->hist[t]) elems += (double)q8_tensor_numel(g->tensors[t]);
    int runs = 1 + Q8_CHOOSE_N_CANDIDATES + Q8_CHOOSE_GROUPS;
    double fit = elems > 0 ? Q8_CHOOSE_BUDGET / (elems * runs) : kept;
    int n = fit < 2 ? 2 : fit > Q8_CHOOSE_MAX_SAMPLES ? Q8_CHOOSE_MAX_SAMPLES : (int)fit;
    return n < kept ? n : kept;
}

/* The tensors where the candidates disagree, in the order they are made
 * (graph inputs, then node outputs in execution order). */
static int differing(const q8_graph *g, const float *a, const float *b, int *order) {
    int n = 0;
    bool *seen = calloc((size_t)g->n_tensors + 1, sizeof(bool));
    if (!seen) return -1;
    for (int i = 0; i < g->n_inputs; i++) {
        int t = g->inputs[i];
        if (!seen[t] && a[t] != b[t]) order[n++] = t;
        seen[t] = true;
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i]->n_outputs; k++) {
            int t = g->nodes[i]->outputs[k];
            if (t < 0 || seen[t]) continue;
            seen[t] = true;
            if (a[t] != b[t]) order[n++] = t;
        }
    free(seen);
    return n;
}

static q8_status score(const q8_calib_options *o, q8_out_eval *e, const float *thr, double *db,
                       q8_error *err) {
    q8_graph *q = NULL;
    Q8_TRY(o->build(o->build_arg, thr, &q, err));
    return q8_out_eval_score(e, q, db, err);
}

q8_status q8_calib_choose(const q8_graph *g, const q8_sample_set *s, const q8_calib_options *o,
                          const bool *skip, q8_calibration *c, q8_error *err) {
    int T = c->n_tensors, kept = 0;
    for (int i = 0; i < s->n_samples; i++) kept += !skip || !skip[i];
    float *cand[Q8_CHOOSE_N_CANDIDATES] = {0};
    float *trial = calloc((size_t)T + 1, sizeof(float));
    int *order = calloc((size_t)T + 1, sizeof(int));
    q8_status st = trial && order ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int k = 0; st == Q8_OK && k < Q8_CHOOSE_N_CANDIDATES; k++) {
        if (!(cand[k] = calloc((size_t)T + 1, sizeof(float)))) {
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        for (int t = 0; t < T; t++) {
            const q8_hist *h = c->hist[t];
            /* tensors calibrate.c left at 0 (never computed, no finite value) stay FP32 */
            if (h && c->threshold[t] > 0)
                cand[k][t] = q8_calib_threshold(h, candidates[k], o->percentile);
        }
    }
    q8_out_eval e = {0};
    if (st == Q8_OK && !o->build)
        st = q8_fail(err, Q8_ERR_ARG, "calibration method auto needs a graph builder");
    if (st == Q8_OK) st = q8_out_eval_open(g, s, skip, scored_samples(g, c, kept), o->n_threads,
                                           &e, err);
    int best = 0;
    for (int k = 0; st == Q8_OK && k < Q8_CHOOSE_N_CANDIDATES; k++) {
        st = score(o, &e, cand[k], &c->score_db[k], err);
        if (st == Q8_OK && k && c->score_db[k] > c->score_db[best]) best = k;
    }
    double cur = st == Q8_OK ? c->score_db[best] : NAN;
    if (st == Q8_OK) memcpy(c->threshold, cand[best], sizeof(float) * (size_t)T);
    /* then group by group, the other candidate where it helps the output */
    const float *other = cand[best ? 0 : 1];
    int n_diff = st == Q8_OK ? differing(g, c->threshold, other, order) : 0;
    if (n_diff < 0) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    c->n_switched = 0;
    for (int j = 0; st == Q8_OK && !isnan(cur) && n_diff && j < Q8_CHOOSE_GROUPS; j++) {
        int lo = (int)((int64_t)n_diff * j / Q8_CHOOSE_GROUPS);
        int hi = (int)((int64_t)n_diff * (j + 1) / Q8_CHOOSE_GROUPS);
        if (lo == hi) continue;
        memcpy(trial, c->threshold, sizeof(float) * (size_t)T);
        for (int i = lo; i < hi; i++) trial[order[i]] = other[order[i]];
        double db;
        st = score(o, &e, trial, &db, err);
        if (st == Q8_OK && db > cur) {
            cur = db;
            memcpy(c->threshold, trial, sizeof(float) * (size_t)T);
            c->n_switched += hi - lo;
        }
    }
    c->chosen = candidates[best];
    c->chosen_db = cur;
    c->n_scored = e.n_samples;
    q8_out_eval_close(&e);
    for (int k = 0; k < Q8_CHOOSE_N_CANDIDATES; k++) free(cand[k]);
    free(trial);
    free(order);
    return st;
}
