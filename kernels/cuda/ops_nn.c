/* The CUDA plans of the float32 network ops: Conv (direct), Softmax / LogSoftmax,
 * LayerNormalization, MaxPool (also int8 / uint8) / AveragePool,
 * GlobalAveragePool, ReduceSum / Mean / Max / Min, BatchNormalization and
 * Resize (nearest / linear over the last two dims). Each reads the params
 * its core schema made (src/core/ops/), so what is left here is turning them
 * into kernel parameters, and refusing the cases the kernels do not cover. */
#include <math.h>

#include "backend_cuda.h"
#include "layout.h"
#include "bcast_expand.h"
#include "op.h"
#include "ops/argmax.h"
#include "ops/batchnorm.h"
#include "ops/conv.h"
#include "ops/global_pool.h"
#include "ops/layernorm.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/resize.h"
#include "ops/softmax.h"

static bool has_output(const q8_node *n, int i) { return i < n->n_outputs && n->outputs[i] >= 0; }

#define PARAMS(T, var)                                                                 \
    T *var = q8_cu_params(nd, sizeof *var);                                            \
    if (!var) return q8_fail(err, Q8_ERR_NOMEM, "out of memory")

/* ---- Conv (float32, direct) ------------------------------------------------------ */

static q8_status conv_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_conv_f32(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_conv_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    const q8_conv_params *cp = n->params;
    const q8_tensor *w = q8_in(g, n, 1);
    if (w->layout != Q8_LAYOUT_PLAIN)
        return q8_cu_unsupported(err, n, "a weight stored in layout %s", q8_layout_name(w->layout));
    static const int kinds[] = {
        [Q8_ACT_NONE] = Q8CU_ACT_NONE,       [Q8_ACT_RELU] = Q8CU_ACT_RELU,
        [Q8_ACT_CLIP] = Q8CU_ACT_CLIP,       [Q8_ACT_LEAKY_RELU] = Q8CU_ACT_LEAKY_RELU,
        [Q8_ACT_SIGMOID] = Q8CU_ACT_SIGMOID, [Q8_ACT_HARD_SIGMOID] = Q8CU_ACT_HARD_SIGMOID,
        [Q8_ACT_HARD_SWISH] = Q8CU_ACT_HARD_SWISH,
    };
    if ((unsigned)cp->act.kind >= sizeof kinds / sizeof kinds[0])
        return q8_cu_unsupported(err, n, "fused activation %d", (int)cp->act.kind);
    PARAMS(q8cu_conv_f32_args, p);
    p->n = cp->nb * cp->m * cp->out_sp;
    p->C = cp->c;
    p->M = cp->m;
    p->Cg = cp->cg;
    p->Mg = cp->mg;
    for (int d = 0; d < 3; d++) {
        p->in[d] = cp->geo.in[d];
        p->out[d] = cp->geo.out[d];
        p->k[d] = cp->geo.k[d];
        p->s[d] = cp->geo.s[d];
        p->dl[d] = cp->geo.d[d];
        p->pb[d] = cp->geo.pb[d];
    }
    p->act = kinds[cp->act.kind];
    p->p0 = cp->act.p0;
    p->p1 = cp->act.p1;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->w = q8_cu_tensor(pr, g, n->inputs[1]);
    p->b = cp->has_bias ? q8_cu_tensor(pr, g, n->inputs[2]) : NULL;
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = conv_run;
    return Q8_OK;
}

/* ---- Softmax / LogSoftmax ------------------------------------------------------ */

static q8_status softmax_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_softmax(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_softmax_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                              q8_error *err) {
    const q8_softmax_params *sp = n->params;
    PARAMS(q8cu_softmax_args, p);
    p->outer = sp->outer;
    p->len = sp->len;
    p->inner = sp->inner;
    p->log = sp->log;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = softmax_run;
    return Q8_OK;
}

/* ---- LayerNormalization --------------------------------------------------------- */

static q8_status ln_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_layernorm(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_ln_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                         q8_error *err) {
    const q8_layernorm_params *lp = n->params;
    PARAMS(q8cu_layernorm_args, p);
    for (int i = 1; i <= 2; i++) {
        if (!q8_has_input(n, i)) continue;
        const q8_tensor *t = q8_in(g, n, i);
        if (!t->data)
            return q8_cu_unsupported(err, n, "a %s that is not a float32 constant",
                                     i == 1 ? "Scale" : "B");
        const float *dev;
        if (i == 1 ? lp->s_full : lp->b_full) {
            dev = q8_cu_tensor(pr, g, n->inputs[i]);
        } else {
            /* broadcast: expanded once, here (the CPU does it per run) */
            void *host;
            dev = q8_cu_const(pr, sizeof(float) * (size_t)(lp->len ? lp->len : 1), &host);
            if (host)
                q8_bcast_expand(t->data, lp->dims, lp->nd, i == 1 ? lp->sstride : lp->bstride,
                                lp->len, host);
        }
        if (i == 1) p->scale = dev;
        else p->bias = dev;
    }
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    if (has_output(n, 1)) p->mean = q8_cu_tensor(pr, g, n->outputs[1]);
    if (has_output(n, 2)) p->inv = q8_cu_tensor(pr, g, n->outputs[2]);
    p->rows = lp->rows;
    p->len = lp->len;
    p->eps = lp->eps;
    nd->run = ln_run;
    return Q8_OK;
}

/* ---- MaxPool / AveragePool ------------------------------------------------------- */

static q8_status pool_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_pool(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_pool_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    const q8_pool_params *pp = n->params;
    if (has_output(n, 1)) return q8_cu_unsupported(err, n, "the Indices output");
    PARAMS(q8cu_pool_args, p);
    p->avg = pp->avg;
    p->include_pad = pp->include_pad;
    p->dtype = pp->dtype == Q8_I8 ? Q8CU_I8 : pp->dtype == Q8_U8 ? Q8CU_U8 : Q8CU_F32;
    p->nc = pp->nc;
    for (int j = 0; j < 3; j++) {
        p->in[j] = pp->in[j];
        p->out[j] = pp->out[j];
        p->k[j] = pp->k[j];
        p->s[j] = pp->s[j];
        p->d[j] = pp->d[j];
        p->pb[j] = pp->pb[j];
        p->pe[j] = pp->pe[j];
    }
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = pool_run;
    return Q8_OK;
}

/* ---- GlobalAveragePool --------------------------------------------------------------- */

static q8_status rowmean_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_rowmean(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_gap_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    const q8_global_pool_params *gp = n->params;
    PARAMS(q8cu_rowmean_args, p);
    p->rows = gp->rows;
    p->len = gp->s;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = rowmean_run;
    return Q8_OK;
}

/* ---- ArgMax / ArgMin ----------------------------------------------------------------- */

static q8_status argmax_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_argmax(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_argmax_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    const q8_argmax_params *ap = n->params;
    if (ap->dtype != Q8_F32) return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(ap->dtype));
    PARAMS(q8cu_argmax_args, p);
    p->outer = ap->outer;
    p->len = ap->len;
    p->inner = ap->inner;
    p->min = ap->min;
    p->last = ap->last;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = argmax_run;
    return Q8_OK;
}

/* ---- ReduceSum / Mean / Max / Min --------------------------------------------------- */

static q8_status reduce_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_reduce(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_reduce_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    const q8_reduce_params *rp = n->params;
    if (rp->dtype != Q8_F32)
        return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(rp->dtype));
    if (rp->noop) return q8_cu_unsupported(err, n, "noop_with_empty_axes");
    PARAMS(q8cu_reduce_args, p);
    p->kind = rp->kind == Q8_REDUCE_SUM    ? Q8CU_R_SUM
              : rp->kind == Q8_REDUCE_MEAN ? Q8CU_R_MEAN
              : rp->kind == Q8_REDUCE_MAX  ? Q8CU_R_MAX
                                           : Q8CU_R_MIN;
    p->nk = rp->nk;
    p->nr = rp->nr;
    for (int i = 0; i < rp->nk; i++) {
        p->kdims[i] = rp->kdims[i];
        p->kstride[i] = rp->kstride[i];
    }
    for (int i = 0; i < rp->nr; i++) {
        p->rdims[i] = rp->rdims[i];
        p->rstride[i] = rp->rstride[i];
    }
    p->out_n = rp->out_numel;
    p->red_n = rp->red_numel;
    p->last_kept = rp->last_kept;
    if (p->out_n == 0) return Q8_OK;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = reduce_run;
    return Q8_OK;
}

/* ---- BatchNormalization ------------------------------------------------------------- */

static q8_status affine_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_affine(q8_cu_stream(c), p), n, n->op_type, err);
}

float *q8_cu_bn_consts(cu_prep *pr, const q8_graph *g, const q8_node *n, float eps, int64_t C) {
    void *host;
    float *dev = q8_cu_const(pr, sizeof(float) * 2 * (size_t)(C ? C : 1), &host);
    if (host) {
        const float *sc = q8_in(g, n, 1)->data, *bi = q8_in(g, n, 2)->data;
        const float *mu = q8_in(g, n, 3)->data, *var = q8_in(g, n, 4)->data;
        float *a = host, *b = a + C;
        for (int64_t c = 0; c < C; c++) q8_bn_channel(sc, bi, mu, var, eps, c, &a[c], &b[c]);
    }
    return dev;
}

q8_status q8_cu_bn_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                         q8_error *err) {
    const q8_batchnorm_params *bp = n->params;
    for (int i = 1; i < 5; i++)
        if (!q8_in(g, n, i)->data)
            return q8_cu_unsupported(err, n, "computed statistics (input %d must be a constant)",
                                     i);
    int64_t C = bp->c;
    PARAMS(q8cu_affine_args, p);
    float *dev = q8_cu_bn_consts(pr, g, n, bp->eps, C);
    p->a = dev;
    p->b = dev ? dev + C : NULL;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->n = bp->rows * bp->s;
    p->inner = bp->s;
    p->C = C;
    nd->run = affine_run;
    return Q8_OK;
}

/* ---- Resize (nearest / linear, last two dims) ---------------------------------------- */

static q8_status resize_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_resize(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_resize_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    const q8_resize_params *rp = n->params;
    int r = rp->rank;
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    if (rp->mode == Q8_RESIZE_CUBIC || rp->coord == Q8_RESIZE_TF_CROP_AND_RESIZE)
        return q8_cu_unsupported(err, n, "mode '%s' with these coordinate / nearest modes "
                                 "(nearest and linear; no tf_crop_and_resize)", modes[rp->mode]);
    if (r < 2) return q8_cu_unsupported(err, n, "rank %d", r);
    int64_t H = rp->in[r - 2], W = rp->in[r - 1], OH = rp->out[r - 2], OW = rp->out[r - 1];
    int64_t rows = 1;
    for (int d = 0; d < r - 2; d++) rows *= rp->out[d];
    if (rows * OH * OW == 0) return Q8_OK;
    if (H == 0 || W == 0) return q8_cu_unsupported(err, n, "an empty input");
    /* leading dims must be left alone (one weight-1 tap, the same index) */
    for (int d = 0; d < r - 2; d++) {
        int64_t out = rp->out[d];
        bool ok = out == rp->in[d] && rp->taps[d] == 1;
        if (ok) {
            int64_t *ix = malloc(sizeof(int64_t) * (size_t)out);
            float *wx = malloc(sizeof(float) * (size_t)out);
            ok = ix && wx;
            if (ok) q8_resize_dim_taps(rp, d, 1, ix, wx, NULL);
            for (int64_t o = 0; ok && o < out; o++) ok = ix[o] == o && wx[o] == 1.0f;
            free(ix);
            free(wx);
        }
        if (!ok) return q8_cu_unsupported(err, n, "resizing dims other than the last two");
    }
    PARAMS(q8cu_resize_args, p);
    p->th = rp->taps[r - 2];
    p->tw = rp->taps[r - 1];
    bool ilin = rp->mode == Q8_RESIZE_LINEAR && rp->dtype != Q8_F32;
    /* the tables, one constant block: ih, iw (int64), wh, ww (float), and
     * for int8 / uint8 linear iwh, iww (int32) */
    size_t nih = (size_t)(OH * p->th), niw = (size_t)(OW * p->tw);
    size_t fw = 8 * (nih + niw), iwo = fw + 4 * (nih + niw);
    size_t bytes = iwo + (ilin ? 4 * (nih + niw) : 0);
    void *host;
    uint8_t *dev = q8_cu_const(pr, bytes, &host);
    if (host) {
        uint8_t *h = host;
        q8_resize_dim_taps(rp, r - 2, 1, (int64_t *)h, (float *)(h + fw), NULL);
        q8_resize_dim_taps(rp, r - 1, 1, (int64_t *)(h + 8 * nih), (float *)(h + fw + 4 * nih),
                           NULL);
        if (ilin) {
            q8_resize_int_weights(rp, r - 2, (const float *)(h + fw), (int32_t *)(h + iwo));
            q8_resize_int_weights(rp, r - 1, (const float *)(h + fw + 4 * nih),
                                  (int32_t *)(h + iwo + 4 * nih));
        }
    }
    if (dev) {
        p->ih = (const int64_t *)dev;
        p->iw = (const int64_t *)(dev + 8 * nih);
        p->wh = (const float *)(dev + fw);
        p->ww = (const float *)(dev + fw + 4 * nih);
        if (ilin) {
            p->iwh = (const int32_t *)(dev + iwo);
            p->iww = (const int32_t *)(dev + iwo + 4 * nih);
        }
    }
    p->ilin = ilin ? (rp->dtype == Q8_I8 ? 1 : 2) : 0;
    p->shift = ilin ? q8_resize_int_shift(rp) : 0;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->rows = rows;
    p->H = H;
    p->W = W;
    p->OH = OH;
    p->OW = OW;
    p->esize = (int)q8_dtype_size(rp->dtype);
    p->f32 = rp->mode == Q8_RESIZE_LINEAR && !ilin;
    nd->run = resize_run;
    return Q8_OK;
}
