/* The CUDA plans of the float32 network ops: Softmax / LogSoftmax,
 * LayerNormalization, MaxPool (also int8 / uint8) / AveragePool,
 * GlobalAveragePool, ReduceSum / Mean / Max / Min, BatchNormalization and
 * Resize (nearest / linear over the last two dims). The attribute rules
 * follow the CPU ops (kernels/cpu/ops/softmax.c, layernorm.c, pool.c, reduce.c,
 * batchnorm.c, resize.c); infer has already validated them, so what is left
 * here is turning them into kernel parameters, and refusing the cases the
 * kernels do not cover. */
#include <math.h>
#include <string.h>

#include "backend_cuda.h"
#include "ops/softmax.h"

static bool has_input(const q8_node *n, int i) { return i < n->n_inputs && n->inputs[i] >= 0; }
static bool has_output(const q8_node *n, int i) { return i < n->n_outputs && n->outputs[i] >= 0; }

static q8_status f32_only(const q8_graph *g, const q8_node *n, q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32) return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(x->dtype));
    return Q8_OK;
}

#define PARAMS(T, var)                                                                 \
    T *var = q8_cu_params(nd, sizeof *var);                                            \
    if (!var) return q8_fail(err, Q8_ERR_NOMEM, "out of memory")

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

/* t broadcast to dims[0..nd) as len values (kernels/cpu/ops/layernorm.c's
 * bcast_strides + expand); false if it does not broadcast. */
static bool expand_to(const q8_tensor *t, const int64_t *dims, int nd, int64_t len, float *dst) {
    int64_t st[Q8_MAX_DIMS], s = 1;
    for (int i = 0; i < t->ndim - nd; i++)
        if (t->dims[i] != 1) return false;
    for (int i = nd - 1; i >= 0; i--) {
        int ti = t->ndim - (nd - i);
        int64_t td = ti >= 0 ? t->dims[ti] : 1;
        if (td == dims[i]) st[i] = td == 1 ? 0 : s;
        else if (td == 1) st[i] = 0;
        else return false;
        s *= td;
    }
    if (!dst) return true;
    const float *src = t->data;
    int64_t idx[Q8_MAX_DIMS] = {0}, off = 0;
    for (int64_t i = 0; i < len; i++) {
        dst[i] = src[off];
        for (int d = nd - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < dims[d]) break;
            off -= st[d] * idx[d];
            idx[d] = 0;
        }
    }
    return true;
}

static q8_status ln_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_layernorm(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_ln_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                         q8_error *err) {
    Q8_TRY(f32_only(g, n, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t axis = q8_attr_int(n, "axis", -1);
    if (axis < 0) axis += x->ndim;
    if (axis < 0 || axis > x->ndim) return q8_cu_unsupported(err, n, "this axis");
    int nd_ = x->ndim - (int)axis;
    int64_t rows = 1, len = 1, dims[Q8_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        if (d < axis) rows *= x->dims[d];
        else len *= (dims[d - axis] = x->dims[d]);
    }
    PARAMS(q8cu_layernorm_args, p);
    for (int i = 1; i <= 2; i++) {
        if (!has_input(n, i)) continue;
        const q8_tensor *t = q8_in(g, n, i);
        if (!t->data || t->dtype != Q8_F32)
            return q8_cu_unsupported(err, n, "a %s that is not a float32 constant",
                                     i == 1 ? "Scale" : "B");
        const float *dev;
        if (q8_tensor_numel(t) == len) {
            dev = q8_cu_tensor(pr, g, n->inputs[i]);
        } else {
            void *host;
            dev = q8_cu_const(pr, sizeof(float) * (size_t)(len ? len : 1), &host);
            if (!expand_to(t, dims, nd_, len, host))
                return q8_cu_unsupported(err, n, "this %s shape", i == 1 ? "Scale" : "B");
        }
        if (i == 1) p->scale = dev;
        else p->bias = dev;
    }
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    if (has_output(n, 1)) p->mean = q8_cu_tensor(pr, g, n->outputs[1]);
    if (has_output(n, 2)) p->inv = q8_cu_tensor(pr, g, n->outputs[2]);
    p->rows = rows;
    p->len = len;
    p->eps = q8_attr_float(n, "epsilon", 1e-5f);
    nd->run = ln_run;
    return Q8_OK;
}

/* ---- MaxPool / AveragePool ------------------------------------------------------- */

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

static void ints_or(const q8_node *n, const char *name, int want, int64_t def, int64_t *out) {
    int cnt;
    const int64_t *v = q8_attr_ints(n, name, &cnt);
    for (int i = 0; i < want; i++) out[i] = v && cnt == want ? v[i] : def;
}

static q8_status pool_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_pool(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_pool_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0), *y = q8_out(g, n, 0);
    bool avg = strcmp(n->op_type, "AveragePool") == 0;
    if (x->dtype != Q8_F32 && (avg || (x->dtype != Q8_I8 && x->dtype != Q8_U8)))
        return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(x->dtype));
    if (has_output(n, 1)) return q8_cu_unsupported(err, n, "the Indices output");
    int nsp = x->ndim - 2;
    if (nsp < 1 || nsp > 3) return q8_cu_unsupported(err, n, "rank %d", x->ndim);
    int64_t k[3], s[3], d[3], pads[6];
    ints_or(n, "kernel_shape", nsp, 1, k);
    ints_or(n, "strides", nsp, 1, s);
    ints_or(n, "dilations", nsp, 1, d);
    ints_or(n, "pads", 2 * nsp, 0, pads);
    const char *ap = q8_attr_str(n, "auto_pad", "NOTSET");
    bool same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    bool valid = strcmp(ap, "VALID") == 0;
    PARAMS(q8cu_pool_args, p);
    p->avg = avg;
    p->include_pad = q8_attr_int(n, "count_include_pad", 0) == 1;
    p->dtype = x->dtype == Q8_I8 ? Q8CU_I8 : x->dtype == Q8_U8 ? Q8CU_U8 : Q8CU_F32;
    p->nc = x->dims[0] * x->dims[1];
    for (int i = 0; i < 3; i++) {
        p->in[i] = p->out[i] = p->k[i] = p->s[i] = p->d[i] = 1;
        p->pb[i] = p->pe[i] = 0;
    }
    for (int i = 0; i < nsp; i++) {
        int j = 3 - nsp + i;
        int64_t in = x->dims[2 + i], ek = (k[i] - 1) * d[i] + 1, pb = pads[i], pe = pads[nsp + i];
        int64_t out = y->dims[2 + i];
        if (same_upper || same_lower) { /* as kernels/cpu/ops/pool.c */
            int64_t total = (ceil_div(in, s[i]) - 1) * s[i] + ek - in;
            if (total < 0) total = 0;
            pb = same_lower ? (total + 1) / 2 : total / 2;
            pe = total - pb;
        } else if (valid) {
            pb = pe = 0;
        }
        p->in[j] = in;
        p->out[j] = out;
        p->k[j] = k[i];
        p->s[j] = s[i];
        p->d[j] = d[i];
        p->pb[j] = pb;
        p->pe[j] = pe;
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
    Q8_TRY(f32_only(g, n, err));
    const q8_tensor *x = q8_in(g, n, 0);
    PARAMS(q8cu_rowmean_args, p);
    p->rows = x->dims[0] * x->dims[1];
    p->len = 1;
    for (int d = 2; d < x->ndim; d++) p->len *= x->dims[d];
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    nd->run = rowmean_run;
    return Q8_OK;
}

/* ---- ReduceSum / Mean / Max / Min --------------------------------------------------- */

static q8_status reduce_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_reduce(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_reduce_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    Q8_TRY(f32_only(g, n, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, na = 0;
    int64_t axes[Q8_MAX_DIMS];
    if (has_input(n, 1)) {
        const q8_tensor *at = q8_in(g, n, 1);
        if (q8_tensor_numel(at) > 0) Q8_TRY(q8_const_ints(g, n, 1, axes, Q8_MAX_DIMS, &na, err));
    } else {
        const int64_t *v = q8_attr_ints(n, "axes", &na);
        if (v && na <= Q8_MAX_DIMS) memcpy(axes, v, sizeof(int64_t) * (size_t)na);
        else na = 0;
    }
    bool red[Q8_MAX_DIMS] = {false};
    for (int i = 0; i < na; i++) {
        int a;
        if (!q8_norm_axis(axes[i], r, &a)) return q8_cu_unsupported(err, n, "these axes");
        red[a] = true;
    }
    if (na == 0) {
        if (q8_attr_int(n, "noop_with_empty_axes", 0))
            return q8_cu_unsupported(err, n, "noop_with_empty_axes");
        for (int d = 0; d < r; d++) red[d] = true;
    }
    PARAMS(q8cu_reduce_args, p);
    const char *op = n->op_type;
    p->kind = strcmp(op, "ReduceSum") == 0    ? Q8CU_R_SUM
              : strcmp(op, "ReduceMean") == 0 ? Q8CU_R_MEAN
              : strcmp(op, "ReduceMax") == 0  ? Q8CU_R_MAX
                                              : Q8CU_R_MIN;
    /* merge: drop size-1 dims, join neighbours with the same role */
    int64_t md[Q8_MAX_DIMS], st[Q8_MAX_DIMS], stride = 1;
    bool mr[Q8_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < r; d++) {
        if (x->dims[d] == 1) continue;
        if (m > 0 && mr[m - 1] == red[d]) {
            md[m - 1] *= x->dims[d];
        } else {
            md[m] = x->dims[d];
            mr[m++] = red[d];
        }
    }
    for (int i = m - 1; i >= 0; i--) {
        st[i] = stride;
        stride *= md[i];
    }
    p->out_n = p->red_n = 1;
    for (int i = 0; i < m; i++) {
        if (mr[i]) {
            p->rdims[p->nr] = md[i];
            p->rstride[p->nr++] = st[i];
            p->red_n *= md[i];
        } else {
            p->kdims[p->nk] = md[i];
            p->kstride[p->nk++] = st[i];
            p->out_n *= md[i];
        }
    }
    p->last_kept = m == 0 || !mr[m - 1];
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

q8_status q8_cu_bn_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                         q8_error *err) {
    Q8_TRY(f32_only(g, n, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (g->opset < 9 && q8_attr_int(n, "spatial", 1) == 0)
        return q8_cu_unsupported(err, n, "spatial=0");
    for (int i = 1; i < 5; i++)
        if (!q8_in(g, n, i)->data)
            return q8_cu_unsupported(err, n, "computed statistics (input %d must be a constant)",
                                     i);
    int64_t C = x->dims[1], inner = 1;
    for (int d = 2; d < x->ndim; d++) inner *= x->dims[d];
    PARAMS(q8cu_affine_args, p);
    void *host;
    float *dev = q8_cu_const(pr, sizeof(float) * 2 * (size_t)(C ? C : 1), &host);
    if (host) {
        /* kernels/cpu/ops/batchnorm.c's per-channel k and m, the same float math */
        const float *sc = q8_in(g, n, 1)->data, *bi = q8_in(g, n, 2)->data;
        const float *mu = q8_in(g, n, 3)->data, *var = q8_in(g, n, 4)->data;
        float eps = q8_attr_float(n, "epsilon", 1e-5f), *a = host, *b = a + C;
        for (int64_t c = 0; c < C; c++) {
            float k = sc[c] / sqrtf(var[c] + eps);
            a[c] = k;
            b[c] = bi[c] - mu[c] * k;
        }
    }
    p->a = dev;
    p->b = dev ? dev + C : NULL;
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->n = q8_tensor_numel(x);
    p->inner = inner;
    p->C = C;
    nd->run = affine_run;
    return Q8_OK;
}

/* ---- Resize (nearest / linear, last two dims) ---------------------------------------- */

enum { M_NEAREST, M_LINEAR };
enum { C_HALF_PIXEL, C_PYTORCH_HALF_PIXEL, C_ALIGN_CORNERS, C_ASYMMETRIC, C_TF_HALF_PIXEL_FOR_NN };
enum { N_ROUND_PREFER_FLOOR, N_ROUND_PREFER_CEIL, N_FLOOR, N_CEIL, N_SIMPLE };

typedef struct rcfg {
    int mode, ctm, nearest;
} rcfg;

static int lookup(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* kernels/cpu/ops/resize.c to_original / nearest_index, for the modes kept here */
static double to_original(const rcfg *c, double x, double scale, int64_t in, int64_t out) {
    double len_f = scale * (double)in;
    switch (c->ctm) {
    case C_PYTORCH_HALF_PIXEL: return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case C_ALIGN_CORNERS: return len_f == 1.0 ? 0.0 : x * (double)(in - 1) / (len_f - 1.0);
    case C_ASYMMETRIC: return x / scale;
    case C_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / scale;
    default: return (x + 0.5) / scale - 0.5;
    }
}

static int64_t nearest_index(const rcfg *c, double x, double scale) {
    double f = floor(x);
    if (x == f) return (int64_t)f;
    double frac = x - f;
    switch (c->nearest) {
    case N_ROUND_PREFER_CEIL: return (int64_t)(frac < 0.5 ? f : f + 1.0);
    case N_FLOOR: return (int64_t)f;
    case N_CEIL: return (int64_t)f + 1;
    case N_SIMPLE: return scale < 1.0 ? (int64_t)f + 1 : (int64_t)(x < 0.0 ? f + 1.0 : f);
    default: return (int64_t)(frac <= 0.5 ? f : f + 1.0);
    }
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One dim's taps (kernels/cpu/ops/resize.c build_dim with stride 1), collapsed
 * to one weight-1 tap when every output has exactly one; returns the taps. */
static int build_dim(const rcfg *c, int64_t in, int64_t out, double scale, int64_t *idx,
                     float *w) {
    int t = c->mode == M_NEAREST ? 1 : 2;
    for (int64_t o = 0; o < out; o++) {
        double x = to_original(c, (double)o, scale, in, out);
        if (c->mode == M_NEAREST) {
            idx[o] = clamp64(nearest_index(c, x, scale), 0, in - 1);
            w[o] = 1.0f;
            continue;
        }
        double f = floor(x), r = x - f;
        int64_t x0 = (int64_t)f;
        idx[2 * o] = clamp64(x0, 0, in - 1);
        idx[2 * o + 1] = clamp64(x0 + 1, 0, in - 1);
        w[2 * o] = (float)(1.0 - r);
        w[2 * o + 1] = (float)r;
    }
    if (t == 1) return 1;
    for (int64_t o = 0; o < out; o++) {
        int nz = 0;
        for (int k = 0; k < t; k++) nz += w[o * t + k] != 0.0f;
        for (int k = 0; k < t && nz == 1; k++)
            if (w[o * t + k] != 0.0f && w[o * t + k] != 1.0f) nz = 0;
        if (nz != 1) return t;
    }
    for (int64_t o = 0; o < out; o++) {
        int k = 0;
        while (w[o * t + k] == 0.0f) k++;
        idx[o] = idx[o * t + k];
        w[o] = 1.0f;
    }
    return 1;
}

static q8_status resize_run(cu_ctx *c, const q8_node *n, void *p, q8_error *err) {
    return q8_cu_launch_check(q8cu_resize(q8_cu_stream(c), p), n, n->op_type, err);
}

q8_status q8_cu_resize_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0), *y = q8_out(g, n, 0);
    int r = x->ndim;
    bool v10 = g->opset < 11, ups = strcmp(n->op_type, "Upsample") == 0;
    static const char *const modes[] = {"nearest", "linear"};
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *ms = q8_attr_str(n, "mode", "nearest");
    rcfg c = {.mode = lookup(ms, modes, 2)};
    if (ups && strcmp(ms, "bilinear") == 0) c.mode = M_LINEAR;
    c.ctm = v10 || ups ? C_ASYMMETRIC
                       : lookup(q8_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
                                ctms, 5);
    c.nearest = v10 || ups ? N_SIMPLE
                           : lookup(q8_attr_str(n, "nearest_mode", "round_prefer_floor"), nms, 4);
    if (c.mode < 0 || c.ctm < 0 || c.nearest < 0)
        return q8_cu_unsupported(err, n, "mode '%s' with these coordinate / nearest modes "
                                 "(nearest and linear; no tf_crop_and_resize)", ms);
    if (q8_attr_find(n, "axes") || q8_attr_int(n, "antialias", 0))
        return q8_cu_unsupported(err, n, "the axes / antialias attributes");
    if (r < 2) return q8_cu_unsupported(err, n, "rank %d", r);
    if (c.mode == M_LINEAR && x->dtype != Q8_F32)
        return q8_cu_unsupported(err, n, "linear mode on %s", q8_dtype_name(x->dtype));
    size_t es = q8_dtype_size(x->dtype);
    if (es != 1 && es != 4 && es != 8)
        return q8_cu_unsupported(err, n, "%s data", q8_dtype_name(x->dtype));
    /* scales as given, or sizes / input (the CPU's rule) */
    double scale[Q8_MAX_DIMS];
    int si = ups || v10 ? 1 : 2;
    const q8_tensor *st = has_input(n, si) ? q8_in(g, n, si) : NULL;
    if (st && st->data && q8_tensor_numel(st) == r && st->dtype == Q8_F32) {
        for (int d = 0; d < r; d++) scale[d] = ((const float *)st->data)[d];
    } else if (ups && !st && q8_attr_floats(n, "scales", &si) && si == r) {
        const float *sv = q8_attr_floats(n, "scales", &si);
        for (int d = 0; d < r; d++) scale[d] = sv[d];
    } else {
        for (int d = 0; d < r; d++)
            scale[d] = x->dims[d] ? (double)y->dims[d] / (double)x->dims[d] : 1.0;
        const char *kp = q8_attr_str(n, "keep_aspect_ratio_policy", "stretch");
        if (strcmp(kp, "stretch") != 0)
            return q8_cu_unsupported(err, n, "keep_aspect_ratio_policy '%s'", kp);
    }
    int64_t H = x->dims[r - 2], W = x->dims[r - 1], OH = y->dims[r - 2], OW = y->dims[r - 1];
    int64_t rows = 1;
    for (int d = 0; d < r - 2; d++) rows *= y->dims[d];
    if (rows * OH * OW == 0) return Q8_OK;
    if (H == 0 || W == 0) return q8_cu_unsupported(err, n, "an empty input");
    /* leading dims must be left alone (one weight-1 tap, the same index) */
    for (int d = 0; d < r - 2; d++) {
        int64_t in = x->dims[d], out = y->dims[d];
        int64_t *ix = malloc(sizeof(int64_t) * 2 * (size_t)(out ? out : 1));
        float *wx = malloc(sizeof(float) * 2 * (size_t)(out ? out : 1));
        bool ok = ix && wx && out == in && build_dim(&c, in, out, scale[d], ix, wx) == 1;
        for (int64_t o = 0; ok && o < out; o++) ok = ix[o] == o && wx[o] == 1.0f;
        free(ix);
        free(wx);
        if (!ok) return q8_cu_unsupported(err, n, "resizing dims other than the last two");
    }
    PARAMS(q8cu_resize_args, p);
    int64_t *ih = malloc(sizeof(int64_t) * 2 * (size_t)OH);
    int64_t *iw = malloc(sizeof(int64_t) * 2 * (size_t)OW);
    float *wh = malloc(sizeof(float) * 2 * (size_t)OH);
    float *ww = malloc(sizeof(float) * 2 * (size_t)OW);
    if (!ih || !iw || !wh || !ww) {
        free(ih), free(iw), free(wh), free(ww);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    p->th = build_dim(&c, H, OH, scale[r - 2], ih, wh);
    p->tw = build_dim(&c, W, OW, scale[r - 1], iw, ww);
    /* the tables, one constant block: ih, iw (int64), wh, ww (float) */
    size_t nih = (size_t)(OH * p->th), niw = (size_t)(OW * p->tw);
    size_t bytes = 8 * (nih + niw) + 4 * (nih + niw);
    void *host;
    uint8_t *dev = q8_cu_const(pr, bytes, &host);
    if (host) {
        uint8_t *h = host;
        memcpy(h, ih, 8 * nih);
        memcpy(h + 8 * nih, iw, 8 * niw);
        memcpy(h + 8 * (nih + niw), wh, 4 * nih);
        memcpy(h + 8 * (nih + niw) + 4 * nih, ww, 4 * niw);
    }
    free(ih), free(iw), free(wh), free(ww);
    if (dev) {
        p->ih = (const int64_t *)dev;
        p->iw = (const int64_t *)(dev + 8 * nih);
        p->wh = (const float *)(dev + 8 * (nih + niw));
        p->ww = (const float *)(dev + 8 * (nih + niw) + 4 * nih);
    }
    p->x = q8_cu_tensor(pr, g, n->inputs[0]);
    p->y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->rows = rows;
    p->H = H;
    p->W = W;
    p->OH = OH;
    p->OW = OW;
    p->esize = (int)es;
    p->f32 = c.mode == M_LINEAR;
    nd->run = resize_run;
    return Q8_OK;
}
