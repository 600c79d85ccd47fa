/* --calib-method auto (calib_choose.h): candidate ranges scored by the
 * output SQNR of the INT8 model on the calibration samples. */
#include "calib_choose.h"

#include <math.h>
#include <string.h>

#include "output_eval.h"

static const q8_calib_method candidates[Q8_CHOOSE_N_CANDIDATES] = {Q8_CALIB_PERCENTILE,
                                                                   Q8_CALIB_MSE};

/* Scoring runs the model 1 + N_CANDIDATES times per scored sample:
 * fewer samples for larger models, so that the choice costs at most about
 * this many activation values written. */
#define Q8_CHOOSE_BUDGET 4.0e9

static int scored_samples(const q8_graph *g, const q8_calibration *c, int kept) {
    double elems = 0;
    for (int t = 0; t < c->n_tensors; t++)
        if (c->hist[t]) elems += (double)q8_tensor_numel(g->tensors[t]);
    int runs = 1 + Q8_CHOOSE_N_CANDIDATES;
    double fit = elems > 0 ? Q8_CHOOSE_BUDGET / (elems * runs) : kept;
    int n = fit < 2 ? 2 : fit > Q8_CHOOSE_MAX_SAMPLES ? Q8_CHOOSE_MAX_SAMPLES : (int)fit;
    return n < kept ? n : kept;
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
    q8_status st = Q8_OK;
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
                                           Q8_OUT_EVAL_REFS_AUTO, &e, err);
    int best = 0;
    for (int k = 0; st == Q8_OK && k < Q8_CHOOSE_N_CANDIDATES; k++) {
        st = score(o, &e, cand[k], &c->score_db[k], err);
        if (st == Q8_OK && k && c->score_db[k] > c->score_db[best]) best = k;
    }
    if (st == Q8_OK) memcpy(c->threshold, cand[best], sizeof(float) * (size_t)T);
    c->chosen = candidates[best];
    c->n_scored = e.n_samples;
    q8_out_eval_close(&e);
    for (int k = 0; k < Q8_CHOOSE_N_CANDIDATES; k++) free(cand[k]);
    return st;
}
