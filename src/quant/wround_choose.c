/* Q8_WROUND_AUTO (wround_choose.h). */
#include "wround_choose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "output_eval.h"

/* GPTQ's statistics and rounding cost about this many multiply-adds at most
 * before auto leaves it out (sums taken): a large model's GPTQ takes
 * minutes where its whole quantization takes seconds. */
#define Q8_WROUND_AUTO_MAX_MACS 2.0e11

static int held_out(int n) {
    int h = n / 4;
    return h < 2 ? 2 : h > 8 ? 8 : h;
}

static q8_status fail_restore(q8_error *err) {
    return q8_fail(err, Q8_ERR_IO, "cannot read back the weights as trained from the temporary "
                   "file");
}

/* The candidate as it would be written: the layers it leaves FP32 compute
 * with their weights as trained (sv holds them), as q8_quantize_model's
 * last steps make them; scored with those rounded, a candidate that keeps
 * layers FP32 (the wide-range rule, fallbacks) lost for rounding it does
 * not do. */
static q8_status score(q8_out_eval *e, q8_wround_build_fn build, void *arg,
                       q8_weight_rounding wr, const q8_wround_saved *sv, double *db,
                       q8_error *err) {
    q8_graph *q = NULL;
    Q8_TRY(build(arg, wr, &q, err));
    if (q8_wround_restore_fp32_owned(q, sv) < 0) {
        q8_graph_free(q);
        return fail_restore(err);
    }
    return q8_out_eval_score(e, q, db, err);
}

q8_status q8_wround_choose(q8_graph *g, const q8_quant_options *o, const q8_sample_set *s,
                           int n_threads, q8_wround_build_fn build, void *arg,
                           q8_wround_saved *saved, q8_meta *meta, q8_wround_choice *out,
                           q8_error *err) {
    *out = (q8_wround_choice){.chosen = Q8_WROUND_SUMS, .db = {NAN, NAN}};
    if (s->n_samples < Q8_WROUND_AUTO_MIN_SAMPLES) {
        snprintf(out->note, sizeof out->note, "%d calibration samples (gptq is compared from %d)",
                 s->n_samples, Q8_WROUND_AUTO_MIN_SAMPLES);
        return Q8_OK;
    }
    double macs = q8_wround_gptq_macs(g, o);
    if (macs > Q8_WROUND_AUTO_MAX_MACS) {
        snprintf(out->note, sizeof out->note,
                 "gptq would take about %.0fe9 multiply-adds (over %.0fe9): not compared",
                 macs / 1e9, Q8_WROUND_AUTO_MAX_MACS / 1e9);
        return Q8_OK;
    }
    int n_score = held_out(s->n_samples), n_fit = s->n_samples - n_score;
    bool *skip = calloc((size_t)s->n_samples, sizeof(bool));
    if (!skip) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n_fit; i++) skip[i] = true;
    /* the reference: the FP32 model with its weights as trained, its
     * outputs kept (g's weights change below) */
    q8_status st = q8_wround_restore_all(g, saved) < 0 ? fail_restore(err) : Q8_OK;
    q8_out_eval e = {0};
    if (st == Q8_OK)
        st = q8_out_eval_open(g, s, skip, n_score, n_threads, Q8_OUT_EVAL_REFS_KEEP, &e, err);
    free(skip);
    q8_quant_options ro = *o;
    ro.weight_rounding = Q8_WROUND_SUMS;
    if (st == Q8_OK) st = q8_round_weights(g, &ro, s, n_threads, meta, NULL, err);
    if (st == Q8_OK) st = score(&e, build, arg, Q8_WROUND_SUMS, saved, &out->db[0], err);
    /* gptq from the weights as trained, fit on the samples not scored */
    q8_wround_saved gsaved = {0};
    q8_sample_set fit = *s;
    fit.n_samples = n_fit;
    ro.weight_rounding = Q8_WROUND_GPTQ;
    if (st == Q8_OK && q8_wround_restore_all(g, saved) < 0) st = fail_restore(err);
    if (st == Q8_OK) {
        st = q8_round_weights(g, &ro, &fit, n_threads, meta, &gsaved, err);
        if (st == Q8_ERR_UNSUPPORTED) { /* a model GPTQ cannot fit: sums, said why */
            snprintf(out->note, sizeof out->note, "gptq: %s", err->msg);
            st = Q8_OK;
            out->db[1] = NAN;
        } else if (st == Q8_OK) {
            st = score(&e, build, arg, Q8_WROUND_GPTQ, &gsaved, &out->db[1], err);
        }
    }
    out->n_scored = e.n_samples;
    q8_out_eval_close(&e);
    /* two exact candidates (inf and inf) are a tie: sums */
    if (st == Q8_OK && out->db[1] >= out->db[0] + Q8_WROUND_AUTO_MARGIN_DB &&
        out->db[1] > out->db[0]) {
        out->chosen = Q8_WROUND_GPTQ;
        q8_wround_saved_free(saved);
        *saved = gsaved;
        return Q8_OK;
    }
    /* sums: again from the weights as trained (gsaved holds every tensor
     * gptq rounded, saved the ones sums rounds) */
    ro.weight_rounding = Q8_WROUND_SUMS;
    if (st == Q8_OK && q8_wround_restore_all(g, &gsaved) < 0) st = fail_restore(err);
    if (st == Q8_OK) st = q8_round_weights(g, &ro, s, n_threads, meta, NULL, err);
    q8_wround_saved_free(&gsaved);
    return st;
}
