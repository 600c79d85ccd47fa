/* Output-aware sensitivity curves for pruning. A layer's curve (prune_layer.c)
 * is the error at the layer's own output relative to that output; how much
 * of it reaches the model's outputs differs by layer: a head whose output is
 * the model's, a layer whose error the next ones amplify, a layer the next
 * one all but ignores. Each eligible layer is pruned alone at the probe
 * sparsity, as the final pruning would prune it (re-fitted), the model run
 * on a few calibration samples, and its curve scaled to pass through the
 * output error measured there. The allocation then shares the budget out
 * by what the outputs lose. Bounded: the probe runs the model once per
 * layer and sample, so the samples are capped by a multiply-add budget,
 * and a model too large for even one is left to the layer curves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prune_fit.h"

static double model_macs(const q8_graph *g, const q8_pfit_layer *l, int n, int *eligible) {
    double macs = 0;
    *eligible = 0;
    for (int i = 0; i < n; i++) {
        macs += (double)q8_pfit_macs(g, &l[i]);
        *eligible += l[i].eligible;
    }
    return macs;
}

q8_status q8_pfit_probe_open(const q8_graph *g, const q8_pfit_layer *l, int n,
                             const q8_sample_set *s, double fraction, int n_threads,
                             q8_pfit_probe *p, q8_error *err) {
    memset(p, 0, sizeof *p);
    int eligible;
    double macs = model_macs(g, l, n, &eligible);
    double per_sample = macs * (eligible ? eligible : 1);
    double fit = per_sample > 0 ? floor(Q8_PFIT_PROBE_MACS / per_sample) : Q8_PFIT_PROBE_SAMPLES;
    int ns = fit < Q8_PFIT_PROBE_SAMPLES ? (int)fit : Q8_PFIT_PROBE_SAMPLES;
    if (ns > s->n_samples) ns = s->n_samples;
    if (ns < 1 || eligible == 0) return Q8_OK; /* off: the layer curves as they are */
    int gi = (int)lround(fraction * (Q8_PFIT_GRID - 1));
    p->grid = gi < 1 ? 1 : gi > Q8_PFIT_GRID - 2 ? Q8_PFIT_GRID - 2 : gi;
    Q8_TRY(q8_out_eval_open(g, s, NULL, ns, n_threads, Q8_OUT_EVAL_REFS_KEEP, &p->e, err));
    p->on = true;
    p->n_samples = p->e.n_samples;
    return Q8_OK;
}

q8_status q8_pfit_probe_layer(q8_graph *g, q8_pfit_layer *l, bool refit, q8_pfit_probe *p,
                              q8_error *err) {
    if (!p->on || !l->eligible || !(l->err[p->grid] > 0)) return Q8_OK;
    float *w = g->tensors[l->wt]->data;
    size_t bytes = sizeof(float) * (size_t)l->numel;
    float *dense = malloc(bytes + sizeof(float));
    if (!dense) return q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
    memcpy(dense, w, bytes);
    int64_t count = l->count;
    l->count = l->cnt[p->grid];
    q8_status s = q8_pfit_apply(g, l, NULL, refit, err);
    l->count = count;
    double rel = 0;
    if (s == Q8_OK) s = q8_out_eval_rel_error(&p->e, g, &rel, err);
    memcpy(w, dense, bytes);
    free(dense);
    /* no error at the outputs on these samples (a branch they never take):
     * nothing learnt, the layer curve stays */
    if (s == Q8_OK && rel > 0 && isfinite(rel)) {
        double f = rel / l->err[p->grid];
        for (int gi = 0; gi < Q8_PFIT_GRID; gi++) l->err[gi] *= f;
        p->n_probed++;
    }
    return s;
}

void q8_pfit_probe_close(q8_pfit_probe *p) {
    if (p->on) q8_out_eval_close(&p->e);
    memset(p, 0, sizeof *p);
}
