/* quantize --equalize (equalize.h): Conv -> [Relu] -> depthwise Conv pairs,
 * their channel ranges measured on the samples, weights rescaled; and
 * Conv -> elementwise activations -> depthwise Conv pairs, rescaled around
 * the activations by per-channel Mul nodes that the INT8 rewrite folds into
 * a per-channel table (q8.QLut). */
#include "equalize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "passes.h"
#include "quantize.h"
#include "sample_run.h"

/* A channel whose range is below this share of the largest is left alone:
 * it is (nearly) dead, and dividing by ~0 would blow up P's weights. */
#define Q8_EQ_MIN_SHARE 1e-3

/* A pair through activations is rescaled only when its two int8 tensors
 * gain this many bits together, averaged over the channels (sum of
 * -log2 u_c and -log2 v_c over C): each distinct channel table costs 256
 * bytes in the file. Measured on the kit (docs/accuracy.md, "Equalization
 * through activations"): CenterNet's pairs gain 4.7-6.5 bits, Selfie's
 * 2.1-4.6, the angle classifier's 0.7-3.3 (one pair of eight over 2). */
#define Q8_EQ_THROUGH_MIN_BITS 2.0

/* ... and its factors are powers of two no smaller than this: at most 4 x 4
 * distinct tables per pair (4 KiB), where channels 1/8 of the largest and
 * smaller gain 3 bits (on the kit, tables to 1/1024 gave no better
 * results: docs/accuracy.md). */
#define Q8_EQ_MIN_POW2 0.125

typedef struct eq_pair {
    int p, d;       /* node indices: the producing Conv, the depthwise Conv */
    int x;          /* the tensor D reads (P's output, or its Relu's) */
    int z;          /* through: P's output (x is the last activation's) */
    bool through;   /* activations that do not commute with a scale between */
    int64_t c;      /* channels */
    float *amax;    /* per channel, over the samples: of x */
    float *zmax;    /* through: of z */
} eq_pair;

/* An elementwise activation a pair may pass through (each becomes part of
 * one per-channel table in INT8): the rewrite's table ops, Relu and Clip,
 * the activation input 0 and any other input a scalar constant (Clip's
 * bounds, the scalar of an Add/Sub/Mul/Div). */
static bool chain_op(const q8_graph *g, const q8_node *n) {
    if (*n->domain || n->n_outputs != 1 || n->n_inputs < 1) return false;
    if (!q8_is_table_op(n) && strcmp(n->op_type, "Relu") && strcmp(n->op_type, "Clip"))
        return false;
    for (int k = 1; k < n->n_inputs; k++) {
        const q8_tensor *t = q8_in(g, n, k);
        if (t && (!t->data || t->dtype != Q8_F32 || q8_tensor_numel(t) != 1)) return false;
    }
    return true;
}

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
 * constant weights of its own; its producer chain (activations) ends at a
 * Conv P with constant weights (and bias) of its own, every link read by
 * the next node alone (x itself too, unless through). */
static bool find_pair(const q8_graph *g, const int *cons, int di, bool through, eq_pair *pr) {
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
    if (q8_graph_is_output(g, xt) || x->producer < 0) return false;
    /* back through single-reader activations to P */
    const q8_node *p = g->nodes[x->producer];
    int links = 0;
    bool relu_only = true;
    while (chain_op(g, p) && links < 8) {
        relu_only &= !strcmp(p->op_type, "Relu");
        int r = p->inputs[0];
        if (r < 0 || cons[r] != 1 || q8_graph_is_output(g, r) || g->tensors[r]->producer < 0 ||
            g->tensors[r]->dtype != Q8_F32)
            return false;
        p = g->nodes[g->tensors[r]->producer];
        links++;
    }
    if (!is_conv(p) || p->n_inputs < 2 || p->n_outputs != 1 || !own_const(g, cons, p, 1) ||
        !scale_commutes(p) || p->scope != d->scope)
        return false;
    pr->through = !(relu_only && links <= 1);
    if (pr->through && !through) return false;
    /* x rescaled in place needs D as its only reader; through an activation
     * x keeps its value and D alone reads the rescaled copy, so others may
     * read x too (a residual sum: MobileNetV3's first block) */
    if (!pr->through && cons[xt] != 1) return false;
    pr->z = p->outputs[0];
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

static void channel_max(const q8_tensor *x, const float *v, int64_t c, float *amax) {
    int64_t inner = 1;
    for (int j = 2; j < x->ndim; j++) inner *= x->dims[j];
    for (int64_t b = 0; b < x->dims[0]; b++)
        for (int64_t ch = 0; ch < c; ch++) {
            const float *row = v + (b * c + ch) * inner;
            float a = amax[ch];
            for (int64_t i = 0; i < inner; i++)
                if (isfinite(row[i])) a = fmaxf(a, fabsf(row[i]));
            amax[ch] = a;
        }
}

static void observe(void *arg, const q8_graph *g, const q8_node *n, void *const *ptr) {
    eq_ctx *e = arg;
    if (!n || n->n_outputs < 1) return;
    int t = n->outputs[0];
    if (t < 0 || !ptr[t]) return;
    for (int k = 0; k < e->n; k++) {
        eq_pair *pr = &e->pairs[k];
        if (t == pr->x) channel_max(g->tensors[t], ptr[t], pr->c, pr->amax);
        if (pr->through && t == pr->z) channel_max(g->tensors[t], ptr[t], pr->c, pr->zmax);
    }
}

/* Channel ch of a tensor laid out [channels, per...]: multiplied by f. */
static void scale_rows(q8_tensor *t, int64_t ch, int64_t rows_per_ch, double f) {
    int64_t per = q8_tensor_numel(t) / t->dims[0];
    float *v = (float *)t->data + ch * rows_per_ch * per;
    for (int64_t i = 0; i < rows_per_ch * per; i++) v[i] = (float)(v[i] * f);
}

/* Per-channel factors that bring each channel's range to the largest:
 * s_c = amax_c / top, 1 where the channel is (nearly) dead or the largest;
 * false when nothing was measured. pow2: s_c rounded up to a power of two,
 * at least Q8_EQ_MIN_POW2 (the channel then spans more than half the range,
 * or 1/8 of it; scaling by it is exact in float, and channels share
 * factors, so their tables too). */
static bool factors(const float *amax, int64_t c, bool pow2, double *s) {
    float top = 0;
    for (int64_t ch = 0; ch < c; ch++) top = fmaxf(top, amax[ch]);
    if (!(top > 0) || !isfinite(top)) return false;
    for (int64_t ch = 0; ch < c; ch++) {
        s[ch] = amax[ch] / top;
        if (!(s[ch] >= Q8_EQ_MIN_SHARE) || s[ch] >= 1) s[ch] = 1;
        else if (pow2) s[ch] = fmax(exp2(ceil(log2(s[ch]))), Q8_EQ_MIN_POW2);
    }
    return true;
}

/* P's output channel c divided by u_c (weights and bias), D's weights of
 * channel c multiplied by v_c. */
static void scale_weights(q8_graph *g, const eq_pair *pr, const double *u, const double *v) {
    const q8_node *p = g->nodes[pr->p], *d = g->nodes[pr->d];
    q8_tensor *pw = q8_in(g, p, 1), *dw = q8_in(g, d, 1);
    q8_tensor *pb = p->n_inputs > 2 && p->inputs[2] >= 0 ? q8_in(g, p, 2) : NULL;
    int64_t mult = dw->dims[0] / pr->c;
    for (int64_t ch = 0; ch < pr->c; ch++) {
        if (u[ch] != 1) {
            scale_rows(pw, ch, 1, 1 / u[ch]);
            if (pb) ((float *)pb->data)[ch] = (float)(((float *)pb->data)[ch] / u[ch]);
        }
        if (v[ch] != 1) scale_rows(dw, ch, mult, v[ch]);
    }
}

/* The name of the per-channel factors stored for rescaled tensor base. */
static void eq_scale_name(char *name, size_t size, const char *base) {
    snprintf(name, size, "%s_eq_scale", base);
}

/* A float constant [1, C, 1, ...] (the rank of tensor like) named base +
 * "_eq_scale" holding k; -1 on failure. */
static int channel_const(q8_graph *g, int like, const char *base, const float *k, int64_t c) {
    char name[512];
    eq_scale_name(name, sizeof name, base);
    if (q8_graph_find(g, name) >= 0) return -1;
    int t = q8_graph_add_tensor(g, name, NULL);
    if (t < 0) return -1;
    int64_t dims[Q8_MAX_DIMS];
    int nd = g->tensors[like]->ndim;
    for (int j = 0; j < nd; j++) dims[j] = j == 1 ? c : 1;
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, nd);
    if (q8_tensor_alloc_data(g->tensors[t], NULL) != Q8_OK) return -1;
    memcpy(g->tensors[t]->data, k, sizeof(float) * (size_t)c);
    return t;
}

/* Node "<base>_eq_mul" = Mul(in, k) -> out, marked _eq (quantize makes it
 * part of a per-channel table), in scope. */
static int eq_mul(q8_graph *g, const char *base, int in, int k, int out, int scope) {
    char name[512];
    snprintf(name, sizeof name, "%s_eq_mul", base);
    int ni = q8_graph_add_node(g, name, "Mul");
    int io[2] = {in, k};
    if (ni < 0 || q8_node_set_io(g->nodes[ni], io, 2, &out, 1, NULL) != Q8_OK) return -1;
    g->nodes[ni]->scope = scope;
    q8_attr *a = q8_node_set_attr(g->nodes[ni], "_eq", Q8_ATTR_INT);
    if (!a) return -1;
    a->i = 1;
    return ni;
}

/* A float activation tensor named base + "_eq" shaped like tensor like. */
static int twin(q8_graph *g, int like, const char *base) {
    char name[512];
    snprintf(name, sizeof name, "%s_eq", base);
    if (q8_graph_find(g, name) >= 0) return -1;
    int t = q8_graph_add_tensor(g, name, NULL);
    if (t < 0) return -1;
    const q8_tensor *l = g->tensors[like];
    q8_tensor_set_shape(g->tensors[t], Q8_F32, l->dims, l->ndim);
    return t;
}

/* Through pair: P -> z' = z / u, Mul(z', u) -> z, the activations (marked
 * _eq) -> x, Mul(x, 1 / v) -> x' = x / v, D reads x'. Every tensor that had a
 * name keeps its FP32 value; the rescaled ones are new (reports compare the
 * named ones with the FP32 model). ku = u, kv = 1 / v as stored. */
static q8_status insert_through(q8_graph *g, const eq_pair *pr, const float *ku, const float *kv,
                                q8_error *err) {
    char zb[400], xb[400];
    snprintf(zb, sizeof zb, "%s", g->tensors[pr->z]->name);
    snprintf(xb, sizeof xb, "%s", g->tensors[pr->x]->name);
    int scope = g->nodes[pr->d]->scope;
    int zq = twin(g, pr->z, zb), xq = twin(g, pr->x, xb);
    int cu = zq < 0 ? -1 : channel_const(g, pr->z, zb, ku, pr->c);
    int cv = cu < 0 || xq < 0 ? -1 : channel_const(g, pr->x, xb, kv, pr->c);
    int m1 = cv < 0 ? -1 : eq_mul(g, zb, zq, cu, pr->z, scope);
    int m2 = m1 < 0 ? -1 : eq_mul(g, xb, pr->x, cv, xq, scope);
    if (m2 < 0)
        return q8_fail(err, Q8_ERR_NOMEM, "equalization: cannot add the scale nodes after '%s'",
                       zb);
    g->nodes[pr->p]->outputs[0] = zq;
    g->nodes[pr->d]->inputs[0] = xq;
    /* the activations between become one table with the Muls */
    for (int t = pr->x; t != pr->z;) {
        q8_node *a = g->nodes[g->tensors[t]->producer];
        q8_attr *at = q8_node_set_attr(a, "_eq", Q8_ATTR_INT);
        if (!at) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        at->i = 1;
        t = a->inputs[0];
    }
    return Q8_OK;
}

/* Bits the two tensors of a through pair gain, averaged over the channels. */
static double bits_gained(const double *u, const double *v, int64_t c) {
    double b = 0;
    for (int64_t ch = 0; ch < c; ch++) b -= log2(u[ch]) + log2(v[ch]);
    return b / (double)c;
}

static q8_status apply(q8_graph *g, const eq_pair *pr, int *done, q8_error *err) {
    double *u = malloc(sizeof(double) * 2 * (size_t)pr->c);
    float *ku = malloc(sizeof(float) * 2 * (size_t)pr->c);
    q8_status st = u && ku ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    double *v = st == Q8_OK ? u + pr->c : NULL;
    float *kv = st == Q8_OK ? ku + pr->c : NULL;
    if (st == Q8_OK && factors(pr->amax, pr->c, pr->through, v)) {
        if (!pr->through) {
            scale_weights(g, pr, v, v);
            ++*done;
        } else if (factors(pr->zmax, pr->c, true, u) && bits_gained(u, v, pr->c) >= Q8_EQ_THROUGH_MIN_BITS) {
            for (int64_t ch = 0; ch < pr->c; ch++) ku[ch] = (float)u[ch], kv[ch] = (float)(1 / v[ch]);
            scale_weights(g, pr, u, v);
            st = insert_through(g, pr, ku, kv, err);
            ++*done;
        }
    }
    free(u);
    free(ku);
    return st;
}

static q8_status find_all(const q8_graph *g, bool through, eq_ctx *e, q8_error *err) {
    int *cons = calloc((size_t)g->n_tensors + 1, sizeof(int));
    e->pairs = calloc((size_t)g->n_nodes + 1, sizeof(eq_pair));
    if (!cons || !e->pairs) {
        free(cons);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    q8_graph_consumers(g, cons);
    for (int i = 0; i < g->n_nodes; i++) {
        if (!find_pair(g, cons, i, through, &e->pairs[e->n])) continue;
        /* two depthwise convs reading one activation: P is rescaled for the
         * first only */
        bool again = false;
        for (int k = 0; k < e->n; k++) again |= e->pairs[k].p == e->pairs[e->n].p;
        if (!again) e->n++;
    }
    free(cons);
    return Q8_OK;
}

static void free_all(eq_ctx *e) {
    for (int k = 0; k < e->n; k++) {
        free(e->pairs[k].amax);
        free(e->pairs[k].zmax);
    }
    free(e->pairs);
}

/* Nodes were added after the pairs' D: put them in order, set producers,
 * resolve the new nodes' ops and params. */
static q8_status reorder(q8_graph *g, q8_error *err) {
    Q8_TRY(q8_graph_toposort(g, err));
    q8_graph_fix_producers(g);
    return q8_pass_infer(g, err);
}

q8_status q8_equalize(q8_graph *g, bool through, const q8_sample_set *s, int n_threads,
                      q8_meta *meta, q8_error *err) {
    eq_ctx e = {0};
    q8_status st = find_all(g, through, &e, err);
    int n_through = 0;
    for (int k = 0; st == Q8_OK && k < e.n; k++) {
        eq_pair *pr = &e.pairs[k];
        if (!(pr->amax = calloc((size_t)pr->c, sizeof(float))) ||
            (pr->through && !(pr->zmax = calloc((size_t)pr->c, sizeof(float)))))
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        n_through += pr->through;
    }
    if (st == Q8_OK && e.n) st = q8_run_samples(g, s, n_threads, observe, &e, err);
    int done = 0, done_through = 0;
    for (int k = 0; st == Q8_OK && k < e.n; k++) {
        int before = done;
        st = apply(g, &e.pairs[k], &done, err);
        done_through += e.pairs[k].through && done > before;
    }
    if (st == Q8_OK && n_through) st = reorder(g, err);
    if (st == Q8_OK) st = q8_meta_set_int(meta, "equalize.pairs", done, err);
    if (st == Q8_OK && done_through)
        st = q8_meta_set_int(meta, "equalize.through", done_through, err);
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

/* The per-channel constant src stored for tensor base of a through pair,
 * or NULL: with absent, *absent says src has none (not an error); else an
 * error is set in err. */
static const float *src_factors(const q8_graph *src, const char *base, int64_t c, bool *absent,
                                q8_error *err) {
    char name[512];
    eq_scale_name(name, sizeof name, base);
    int k = q8_graph_find(src, name);
    const q8_tensor *t = k >= 0 ? src->tensors[k] : NULL;
    if (absent && (*absent = !t)) return NULL;
    if (!t || !t->data || t->dtype != Q8_F32 || q8_tensor_numel(t) != c) {
        q8_fail(err, Q8_ERR_UNSUPPORTED,
                "equalization: '%s' differs between the calibration shapes and --input-shape",
                name);
        return NULL;
    }
    return t->data;
}

q8_status q8_equalize_copy(q8_graph *dst, const q8_graph *src, bool through, q8_error *err) {
    eq_ctx e = {0};
    q8_status st = find_all(dst, through, &e, err);
    int n_through = 0;
    for (int k = 0; st == Q8_OK && k < e.n; k++) {
        const eq_pair *pr = &e.pairs[k];
        const q8_node *p = dst->nodes[pr->p], *d = dst->nodes[pr->d];
        if (pr->through) {
            /* the same pair in src was rescaled only if it gained enough */
            bool absent;
            const float *ku = src_factors(src, dst->tensors[pr->z]->name, pr->c, &absent, err);
            if (absent) continue;
            const float *kv = ku ? src_factors(src, dst->tensors[pr->x]->name, pr->c, NULL, err)
                                 : NULL;
            st = kv ? insert_through(dst, pr, ku, kv, err) : err->status;
            n_through++;
        }
        if (st == Q8_OK) st = copy_data(dst, src, p->inputs[1], err);
        if (st == Q8_OK && p->n_inputs > 2) st = copy_data(dst, src, p->inputs[2], err);
        if (st == Q8_OK) st = copy_data(dst, src, d->inputs[1], err);
    }
    if (st == Q8_OK && n_through) st = reorder(dst, err);
    free_all(&e);
    return st;
}
