/* LayerNormalization (opset 17): each row of X over dims [axis, rank) is
 * normalized to zero mean and unit variance, then scaled and shifted:
 * Y = (X - mean) / sqrt(var + epsilon) * Scale + B. Scale and the optional B
 * broadcast (numpy rules, right-aligned) to X.shape[axis:]; when they are not
 * already that full shape they are expanded once per run into scratch. Mean
 * and variance are summed in double, in order, one row per work item. The
 * optional outputs Mean and InvStdDev have shape X.shape[:axis] + [1,...]. */
#include <math.h>
#include <string.h>

#include "cpu_op.h"

typedef struct ln_params {
    int64_t rows, len; /* outer rows, normalized elements per row */
    float eps;
    int nd;                                             /* normalized dims */
    int64_t dims[Q8_MAX_DIMS];                          /* X.shape[axis:] */
    int64_t sstride[Q8_MAX_DIMS], bstride[Q8_MAX_DIMS]; /* 0 on broadcast dims */
    bool s_full, b_full, has_b; /* full: already X.shape[axis:] (no expansion) */
} ln_params;

/* Strides of t broadcast to dims[0..nd); false if it does not broadcast. */
static bool bcast_strides(const q8_tensor *t, const int64_t *dims, int nd, int64_t *st,
                          bool *full) {
    if (t->ndim > nd) {
        /* leading dims of size 1 beyond the normalized rank are harmless */
        for (int i = 0; i < t->ndim - nd; i++)
            if (t->dims[i] != 1) return false;
    }
    int64_t s = 1;
    *full = true;
    for (int i = nd - 1; i >= 0; i--) {
        int ti = t->ndim - (nd - i);
        int64_t td = ti >= 0 ? t->dims[ti] : 1;
        if (td == dims[i]) {
            st[i] = td == 1 ? 0 : s;
        } else if (td == 1) {
            st[i] = 0;
            *full = false;
        } else {
            return false;
        }
        s *= td;
    }
    return true;
}

static q8_status ln_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 3, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    bool has_b = n->n_inputs > 2 && n->inputs[2] >= 0;
    if (has_b) Q8_TRY(q8_check_input(g, n, 2, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t axis = q8_attr_int(n, "axis", -1);
    if (axis < -x->ndim || axis > x->ndim)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                            (long long)axis, x->ndim);
    if (axis < 0) axis += x->ndim;
    int64_t stash = q8_attr_int(n, "stash_type", 1);
    if (stash != 1)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "stash_type %lld is not supported (only 1, float32)", (long long)stash);
    float eps = q8_attr_float(n, "epsilon", 1e-5f);
    if (!(eps >= 0.0f))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "epsilon is %g, expected >= 0", eps);
    ln_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->eps = eps;
    p->nd = x->ndim - (int)axis;
    p->rows = p->len = 1;
    int64_t mdims[Q8_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        if (d < axis) {
            p->rows *= x->dims[d];
            mdims[d] = x->dims[d];
        } else {
            p->len *= x->dims[d];
            p->dims[d - axis] = x->dims[d];
            mdims[d] = 1;
        }
    }
    const q8_tensor *sc = q8_in(g, n, 1), *b = has_b ? q8_in(g, n, 2) : NULL;
    char s1[96], s2[96];
    if (!bcast_strides(sc, p->dims, p->nd, p->sstride, &p->s_full))
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "Scale has shape %s, which does not broadcast to %s",
                            q8_shape_str(sc->dims, sc->ndim, s1, sizeof s1),
                            q8_shape_str(p->dims, p->nd, s2, sizeof s2));
    p->has_b = has_b;
    p->b_full = true;
    if (b && !bcast_strides(b, p->dims, p->nd, p->bstride, &p->b_full))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "B has shape %s, which does not broadcast to %s",
                            q8_shape_str(b->dims, b->ndim, s1, sizeof s1),
                            q8_shape_str(p->dims, p->nd, s2, sizeof s2));
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err));
    Q8_TRY(q8_set_output(g, n, 1, Q8_F32, mdims, x->ndim, err));
    return q8_set_output(g, n, 2, Q8_F32, mdims, x->ndim, err);
}

static size_t ln_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                         int n_threads) {
    const ln_params *p = n->params;
    size_t one = q8_align_up((size_t)p->len * sizeof(float), Q8_ALIGN);
    return (p->s_full ? 0 : one) + (p->b_full ? 0 : one);
}

/* Expand a broadcast vector to len values. */
static void expand(const float *src, const ln_params *p, const int64_t *st, float *dst) {
    int64_t idx[Q8_MAX_DIMS] = {0}, off = 0;
    for (int64_t i = 0; i < p->len; i++) {
        dst[i] = src[off];
        for (int d = p->nd - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < p->dims[d]) break;
            off -= st[d] * idx[d];
            idx[d] = 0;
        }
    }
}

typedef struct ln_args {
    const ln_params *p;
    const float *x, *scale, *bias;
    float *y, *mean, *inv;
} ln_args;

static void ln_range(void *arg, int64_t b, int64_t e, int t) {
    const ln_args *a = arg;
    int64_t len = a->p->len;
    for (int64_t r = b; r < e; r++) {
        const float *x = a->x + r * len;
        float *y = a->y + r * len;
        double s = 0.0;
        for (int64_t i = 0; i < len; i++) s += x[i];
        double mean = len ? s / (double)len : 0.0;
        double v = 0.0;
        for (int64_t i = 0; i < len; i++) {
            double d = x[i] - mean;
            v += d * d;
        }
        float var = len ? (float)(v / (double)len) : 0.0f;
        float inv = 1.0f / sqrtf(var + a->p->eps), m = (float)mean;
        if (a->bias)
            for (int64_t i = 0; i < len; i++) y[i] = (x[i] - m) * inv * a->scale[i] + a->bias[i];
        else
            for (int64_t i = 0; i < len; i++) y[i] = (x[i] - m) * inv * a->scale[i];
        if (a->mean) a->mean[r] = m;
        if (a->inv) a->inv[r] = inv;
    }
}

static void ln_run(const q8_exec *x, const q8_node *n) {
    const ln_params *p = n->params;
    ln_args a = {p,
                 Q8_IN_PTR(x, n, 0),
                 Q8_IN_PTR(x, n, 1),
                 p->has_b ? Q8_IN_PTR(x, n, 2) : NULL,
                 Q8_OUT_PTR(x, n, 0),
                 NULL,
                 NULL};
    if (n->n_outputs > 1 && n->outputs[1] >= 0) a.mean = Q8_OUT_PTR(x, n, 1);
    if (n->n_outputs > 2 && n->outputs[2] >= 0) a.inv = Q8_OUT_PTR(x, n, 2);
    float *s = x->scratch;
    if (!p->s_full) {
        expand(a.scale, p, p->sstride, s);
        a.scale = s;
        s += q8_align_up((size_t)p->len * sizeof(float), Q8_ALIGN) / sizeof(float);
    }
    if (p->has_b && !p->b_full) {
        expand(a.bias, p, p->bstride, s);
        a.bias = s;
    }
    q8_parallel_for(x->pool, p->rows, p->len >= 8192 ? 1 : 8192 / (p->len ? p->len : 1), ln_range,
                    &a);
}

/* In place is safe: a row is read completely (twice) before it is written. */
const q8_op_schema q8_schema_layer_norm = {.infer = ln_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_layer_norm = {.run = ln_run, .scratch = ln_scratch};
