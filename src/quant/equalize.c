/* quantize --equalize (equalize.h): Conv -> [Relu] -> depthwise Conv pairs,
 * their channel ranges measured on the samples, weights rescaled. */
#include "equalize.h"

#include <math.h>
#include <string.h>

#include "sample_run.h"

/* A channel whose range is below this share of the largest is left alone:
 * it is (nearly) dead, and dividing by ~0 would blow up P's weights. */
#define Q8_EQ_MIN_SHARE 1e-3

typedef struct eq_pair {
    int p, d;       /* node indices: the producing Conv, the depthwise Conv */
    int x;          /* the tensor D reads (P's output, or its Relu's) */
    int64_t c;      /* channels */
    float *amax;    /* per channel, over the samples */
} eq_pair;

static bool is_conv(const q8_node *n) { return !*n->domain && !strcmp(n->op_type, "Conv"); }

/* An activation fused into P (src/passes/fuse.c) must commute with a
 * positive per-channel scale: Relu, LeakyRelu, or a Clip that is one of
 * those (no finite upper bound, lower bound 0 or none); Clip(0, 6) is not. */
static bool scale_commutes(const q8_node *p) {
    const char *act = q8_attr_str(p, "_act", NULL);
    if (!act || !strcmp(act, "Relu") || !strcmp(act, "LeakyRelu")) return true;
    if (strcmp(act, "Clip")) return false;
    float lo = q8_attr_float(p, "_act_min", -INFINITY), hi = q8_attr_float(p, "_act_max", INFINITY);
    return (lo == 0 || lo == -INFINITY) && hi == INFINITY;
}

static bool own_const(const q8_graph *g, const int *cons, const q8_node *n, int i) {
    const q8_tensor *t = q8_in(g, n, i);
    return t && t->data && t->dtype == Q8_F32 && cons[n->inputs[i]] == 1;
}

/* D: a depthwise Conv (one input channel per group) on NCHW x with
 * constant weights of its own; its producer chain (Relu optional) ends at
 * a Conv P with constant weights (and bias) of its own, every link read by
 * the next node alone. */
static bool find_pair(const q8_graph *g, const int *cons, int di, eq_pair *pr) {
    const q8_node *d = g->nodes[di];
    if (!is_conv(d) || d->n_inputs < 2 || !own_const(g, cons, d, 1)) return false;
    if (d->n_inputs > 2 && d->inputs[2] >= 0 && !q8_in(g, d, 2)->data) return false;
    const q8_tensor *x = q8_in(g, d, 0), *w = q8_in(g, d, 1);
    if (!x || x->data || x->dtype != Q8_F32 || x->ndim < 3 || w->ndim != x->ndim) return false;
    for (int j = 0; j < x->ndim; j++)
        if (x->dims[j] < 1) return false;
    int64_t c = x->dims[1], group = q8_attr_int(d, "group", 1);
    if (c < 2 || group != c || w->dims[1] != 1 || w->dims[0] % c) return false;
    int xt = d->inputs[0];
    if (cons[xt] != 1 || q8_graph_is_output(g, xt) || x->producer < 0) return false;
    const q8_node *p = g->nodes[x->producer];
    if (!*p->domain && !strcmp(p->op_type, "Relu")) {
        int r = p->inputs[0];
        if (r < 0 || cons[r] != 1 || q8_graph_is_output(g, r) || g->tensors[r]->producer < 0)
            return false;
        p = g->nodes[g->tensors[r]->producer];
    }
    if (!is_conv(p) || p->n_inputs < 2 || p->n_outputs != 1 || !own_const(g, cons, p, 1) ||
        !scale_commutes(p))
        return false;
    if (p->n_inputs > 2 && p->inputs[2] >= 0 && !own_const(g, cons, p, 2)) return false;
    const q8_tensor *pw = q8_in(g, p, 1);
    if (pw->dims[0] != c) return false;
    pr->p = g->tensors[p->outputs[0]]->producer;
    pr->d = di;
    pr->x = xt;
    pr->c = c;
    return pr->p >= 0;
}

typedef struct eq_ctx {
    eq_pair *pairs;
    int n;
} eq_ctx;

static void observe(void *arg, const q8_graph *g, const q8_node *n, void *const *ptr) {
    eq_ctx *e = arg;
    for (int k = 0; k < e->n; k++) {
        eq_pair *pr = &e->pairs[k];
        if (!n || n->n_outputs < 1 || n->outputs[0] != pr->x || !ptr[pr->x]) continue;
        const q8_tensor *x = g->tensors[pr->x];
        const float *v = ptr[pr->x];
        int64_t inner = 1;
        for (int j = 2; j < x->ndim; j++) inner *= x->dims[j];
        for (int64_t b = 0; b < x->dims[0]; b++)
            for (int64_t ch = 0; ch < pr->c; ch++) {
                const float *row = v + (b * pr->c + ch) * inner;
                float a = pr->amax[ch];
                for (int64_t i = 0; i < inner; i++)
                    if (isfinite(row[i])) a = fmaxf(a, fabsf(row[i]));
                pr->amax[ch] = a;
            }
    }
}

/* Channel ch of a tensor laid out [channels, per...]: multiplied by f. */
static void scale_rows(q8_tensor *t, int64_t ch, int64_t rows_per_ch, double f) {
    int64_t per = q8_tensor_numel(t) / t->dims[0];
    float *v = (float *)t->data + ch * rows_per_ch * per;
    for (int64_t i = 0; i < rows_per_ch * per; i++) v[i] = (float)(v[i] * f);
}

static int apply(q8_graph *g, const eq_pair *pr) {
    float top = 0;
    for (int64_t ch = 0; ch < pr->c; ch++) top = fmaxf(top, pr->amax[ch]);
    if (!(top > 0) || !isfinite(top)) return 0;
    const q8_node *p = g->nodes[pr->p], *d = g->nodes[pr->d];
    q8_tensor *pw = q8_in(g, p, 1), *dw = q8_in(g, d, 1);
    q8_tensor *pb = p->n_inputs > 2 && p->inputs[2] >= 0 ? q8_in(g, p, 2) : NULL;
    int64_t mult = dw->dims[0] / pr->c;
    for (int64_t ch = 0; ch < pr->c; ch++) {
        double s = pr->amax[ch] / top;
        if (!(s >= Q8_EQ_MIN_SHARE) || s >= 1) continue;
        scale_rows(pw, ch, 1, 1 / s);
        if (pb) ((float *)pb->data)[ch] = (float)(((float *)pb->data)[ch] / s);
        scale_rows(dw, ch, mult, s);
    }
    return 1;
}

static q8_status find_all(const q8_graph *g, eq_ctx *e, q8_error *err) {
    int *cons = calloc((size_t)g->n_tensors + 1, sizeof(int));
    e->pairs = calloc((size_t)g->n_nodes + 1, sizeof(eq_pair));
    if (!cons || !e->pairs) {
        free(cons);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    q8_graph_consumers(g, cons);
    for (int i = 0; i < g->n_nodes; i++)
        if (find_pair(g, cons, i, &e->pairs[e->n])) e->n++;
    free(cons);
    return Q8_OK;
}

static void free_all(eq_ctx *e) {
    for (int k = 0; k < e->n; k++) free(e->pairs[k].amax);
    free(e->pairs);
}

q8_status q8_equalize(q8_graph *g, const q8_sample_set *s, int n_threads, q8_meta *meta,
                      q8_error *err) {
    eq_ctx e = {0};
    q8_status st = find_all(g, &e, err);
    for (int k = 0; st == Q8_OK && k < e.n; k++)
        if (!(e.pairs[k].amax = calloc((size_t)e.pairs[k].c, sizeof(float))))
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (st == Q8_OK && e.n) st = q8_run_samples(g, s, n_threads, observe, &e, err);
    int done = 0;
    for (int k = 0; st == Q8_OK && k < e.n; k++) done += apply(g, &e.pairs[k]);
    if (st == Q8_OK) st = q8_meta_set_int(meta, "equalize.pairs", done, err);
    free_all(&e);
    return st;
}

static q8_status copy_data(q8_graph *dst, const q8_graph *src, int t, q8_error *err) {
    if (t < 0) return Q8_OK;
    q8_tensor *d = dst->tensors[t];
    int k = q8_graph_find(src, d->name);
    const q8_tensor *from = k >= 0 ? src->tensors[k] : NULL;
    if (!from || !from->data || from->dtype != Q8_F32 || !d->data ||
        q8_tensor_numel(from) != q8_tensor_numel(d))
        return q8_fail(err, Q8_ERR_UNSUPPORTED,
                       "equalization: weight '%s' differs between the calibration shapes and "
                       "--input-shape", d->name);
    memcpy(d->data, from->data, sizeof(float) * (size_t)q8_tensor_numel(d));
    return Q8_OK;
}

q8_status q8_equalize_copy(q8_graph *dst, const q8_graph *src, q8_error *err) {
    eq_ctx e = {0};
    q8_status st = find_all(dst, &e, err);
    for (int k = 0; st == Q8_OK && k < e.n; k++) {
        const q8_node *p = dst->nodes[e.pairs[k].p], *d = dst->nodes[e.pairs[k].d];
        st = copy_data(dst, src, p->inputs[1], err);
        if (st == Q8_OK && p->n_inputs > 2) st = copy_data(dst, src, p->inputs[2], err);
        if (st == Q8_OK) st = copy_data(dst, src, d->inputs[1], err);
    }
    free_all(&e);
    return st;
}
