/* Accuracy of quantized models against their FP32 source, one sample at a
 * time, through the node observer:
 *
 * 1. FP32 run: the observer copies every activation some quantized model
 *    has a counterpart of (buffers allocated once: one sample's worth).
 * 2. Each quantized model, normal run: its layers' outputs are compared
 *    with those copies as they are produced ("in the model": the error the
 *    layer's output carries, including everything upstream); then its graph
 *    outputs with the FP32 outputs (cosine, max error, SQNR, argmax).
 * 3. Each quantized model again, the observer now overwriting every tensor
 *    it sees with its FP32 value (quantized to the tensor's int8 scale where
 *    it is int8) after comparing the layer outputs: each layer then reads
 *    FP32 values, so its error is its own ("alone").
 *
 * Tensors map by name: the quantizer keeps FP32 names; the int8 version of
 * tensor t is "t_q8" (or "t_q8__K" when that name was taken). */
#include <math.h>
#include <string.h>

#include "report.h"
#include "report_outputs.h"

/* ---- error statistics ---- */

void q8_err_stats_f32(q8_err_stats *s, const float *ref, const float *q, int64_t n) {
    double ref2 = 0, q2 = 0, dot = 0, err2 = 0, mx = s->max_abs;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = q[i];
        if (!isfinite(r) || !isfinite(v)) {
            bad++;
            continue;
        }
        double d = v - r;
        ref2 += r * r;
        q2 += v * v;
        dot += r * v;
        err2 += d * d;
        if (fabs(d) > mx) mx = fabs(d);
    }
    s->ref2 += ref2;
    s->q2 += q2;
    s->dot += dot;
    s->err2 += err2;
    s->max_abs = mx;
    s->n += n - bad;
    s->nonfinite += bad;
}

void q8_err_stats_i8(q8_err_stats *s, const float *ref, const int8_t *q, float scale, int64_t n) {
    double ref2 = 0, q2 = 0, dot = 0, err2 = 0, mx = s->max_abs;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = (double)scale * q[i];
        if (!isfinite(r) || !isfinite(v)) {
            bad++;
            continue;
        }
        double d = v - r;
        ref2 += r * r;
        q2 += v * v;
        dot += r * v;
        err2 += d * d;
        if (fabs(d) > mx) mx = fabs(d);
    }
    s->ref2 += ref2;
    s->q2 += q2;
    s->dot += dot;
    s->err2 += err2;
    s->max_abs = mx;
    s->n += n - bad;
    s->nonfinite += bad;
}

double q8_err_sqnr_db(const q8_err_stats *s) {
    if (s->n == 0) return NAN;
    if (s->err2 == 0) return INFINITY;
    return 10.0 * log10(s->ref2 / s->err2);
}

double q8_err_cosine(const q8_err_stats *s) {
    if (s->n == 0 || s->ref2 == 0 || s->q2 == 0) return NAN;
    return s->dot / (sqrt(s->ref2) * sqrt(s->q2));
}

/* ---- the models being compared ---- */

typedef struct ref_set {
    const q8_graph *g;      /* FP32 graph */
    void **buf;             /* per tensor: owned copy of this sample's value, or NULL */
    const void **ref;       /* per tensor: this sample's FP32 value (copy, constant or input) */
} ref_set;

typedef struct qmodel {
    const q8_model *m;
    q8_session *sess;
    int *fmap;              /* per tensor: FP32 tensor index, or -1 */
    int *layer_of;          /* per node: layer index, or -1 */
    int *out_f;             /* per graph output: FP32 graph output index */
    q8_output_acc *out_acc; /* per graph output: its per-channel sums */
    float **factor;         /* per tensor: NULL, or per-channel factors from FP32's value
                             * to this model's (equalized tensors, report_equalized.c) */
    float *scaled;          /* scratch: an FP32 value times its factors */
    q8_report_model *rep;
    const ref_set *refs;
    bool alone;             /* the injecting run */
    int only;               /* >= 0: the run that corrects this layer's output alone */
    bool record;            /* the alone run keeps each layer's own error in own_err */
    float **own_err;        /* per layer: its output in the alone run minus FP32's */
    q8_err_stats base;      /* float outputs with no layer exact, on the gain samples */
    int next_node;          /* observer: expected node index */
} qmodel;

static bool is_layer(const q8_node *n) {
    return !strcmp(n->domain, "q8") && n->n_outputs >= 1 && n->outputs[0] >= 0;
}

/* The FP32 tensor that quantized tensor t stands for, or -1. */
static int counterpart(const q8_graph *f, const q8_tensor *t) {
    if (t->data || !t->shape_known) return -1;
    char name[600];
    snprintf(name, sizeof name, "%s", t->name);
    if (t->dtype == Q8_I8) {
        if (t->q.n != 1 || !t->q.scale || !(t->q.scale[0] > 0)) return -1;
        size_t len = strlen(name);
        char *k = strstr(name, "_q8__");
        if (len > 3 && !strcmp(name + len - 3, "_q8")) {
            name[len - 3] = 0;
        } else if (k) {
            char *last = k;
            while ((k = strstr(k + 1, "_q8__"))) last = k;
            if (!last[5] || strspn(last + 5, "0123456789") != strlen(last + 5)) return -1;
            *last = 0;
        } else {
            return -1;
        }
    } else if (t->dtype != Q8_F32) {
        return -1;
    }
    int i = q8_graph_find(f, name);
    size_t len = strlen(name);
    if (i < 0 && len > 3 && !strcmp(name + len - 3, "_eq")) {
        /* rescaled by equalize.c through an activation: compared with the
         * FP32 tensor NAME only once its factors are known (setup_qmodel) */
        name[len - 3] = 0;
        i = q8_graph_find(f, name);
    }
    if (i < 0) return -1;
    const q8_tensor *ft = f->tensors[i];
    if (ft->dtype != Q8_F32 || !ft->shape_known || q8_tensor_numel(ft) != q8_tensor_numel(t))
        return -1;
    return i;
}

static int node_index(qmodel *c, const q8_graph *g, const q8_node *n) {
    int i = c->next_node;
    if (i < 0 || i >= g->n_nodes || g->nodes[i] != n)
        for (i = 0; i < g->n_nodes && g->nodes[i] != n; i++) {}
    c->next_node = i + 1;
    return i < g->n_nodes ? i : -1;
}

static void compare_tensor(q8_err_stats *s, const q8_tensor *t, const void *data,
                           const float *ref) {
    int64_t n = q8_tensor_numel(t);
    if (t->dtype == Q8_I8) q8_err_stats_i8(s, ref, data, t->q.scale[0], n);
    else q8_err_stats_f32(s, ref, data, n);
}

static void inject(const q8_tensor *t, void *data, const float *ref) {
    int64_t n = q8_tensor_numel(t);
    if (t->dtype == Q8_F32) {
        if (data != (const void *)ref) memcpy(data, ref, sizeof(float) * (size_t)n);
        return;
    }
    int8_t *q = data;
    float inv = 1.0f / t->q.scale[0];
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(ref[i] * inv);
        q[i] = (int8_t)(v >= 127 ? 127 : v <= -128 ? -128 : v == v ? v : 0);
    }
}

/* The FP32 value of tensor t (FP32 index f >= 0) in this model's terms, or NULL. */
static const float *ref_of(qmodel *c, const q8_graph *g, int t, int f) {
    const float *ref = f >= 0 ? c->refs->ref[f] : NULL;
    if (!ref || !c->factor[t]) return ref;
    q8_report_apply_factors(g->tensors[t], c->factor[t], ref, c->scaled);
    return c->scaled;
}

/* *e (allocated on first use) = t's value - ref: the layer's own error. */
static void own_error(const q8_tensor *t, const void *data, const float *ref, float **e) {
    int64_t n = q8_tensor_numel(t);
    if (!*e && !(*e = malloc(sizeof(float) * (size_t)n + 1))) return; /* no gain measured */
    for (int64_t i = 0; i < n; i++) {
        float v = t->dtype == Q8_I8 ? t->q.scale[0] * ((const int8_t *)data)[i]
                                    : ((const float *)data)[i];
        (*e)[i] = v - ref[i];
    }
}

/* t's value minus e, in place (int8: rounded to t's scale again). */
static void subtract(const q8_tensor *t, void *data, const float *e) {
    int64_t n = q8_tensor_numel(t);
    if (t->dtype == Q8_F32) {
        float *v = data;
        for (int64_t i = 0; i < n; i++) v[i] -= e[i];
        return;
    }
    int8_t *q = data;
    float s = t->q.scale[0], inv = 1.0f / s;
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf((s * q[i] - e[i]) * inv);
        q[i] = (int8_t)(v >= 127 ? 127 : v <= -128 ? -128 : v == v ? v : 0);
    }
}

static void q_observer(void *arg, const q8_graph *g, const q8_node *n, void *const *ptr) {
    qmodel *c = arg;
    int ni = node_index(c, g, n);
    if (ni < 0) return;
    int li = c->layer_of[ni];
    if (c->only >= 0) {
        int t = n->outputs[0];
        if (li == c->only && c->own_err[li] && ptr[t])
            subtract(g->tensors[t], ptr[t], c->own_err[li]);
        return;
    }
    if (li >= 0) {
        int t = n->outputs[0], f = c->fmap[t];
        const float *ref = ref_of(c, g, t, f);
        q8_report_layer *L = &c->rep->layers[li];
        if (ref && ptr[t])
            compare_tensor(c->alone ? &L->alone : &L->in_model, g->tensors[t], ptr[t], ref);
        if (ref && ptr[t] && c->record) own_error(g->tensors[t], ptr[t], ref, &c->own_err[li]);
    }
    if (!c->alone) return;
    for (int k = 0; k < n->n_outputs; k++) {
        int t = n->outputs[k];
        int f = t >= 0 ? c->fmap[t] : -1;
        const float *ref = f >= 0 && ptr[t] ? ref_of(c, g, t, f) : NULL;
        if (ref) inject(g->tensors[t], ptr[t], ref);
    }
}

/* The float outputs of c's session (all together) against fs's, added to s. */
static void float_outputs(qmodel *c, q8_session *fs, q8_err_stats *s) {
    const q8_graph *g = c->m->g;
    for (int j = 0; j < g->n_outputs; j++) {
        q8_tensor_info qi, fi;
        const void *qd, *fd;
        q8_session_output(c->sess, j, &qi, &qd, NULL);
        q8_session_output(fs, c->out_f[j], &fi, &fd, NULL);
        if (qi.dtype == Q8_F32)
            q8_err_stats_f32(s, fd, qd, q8_tensor_numel(g->tensors[g->outputs[j]]));
    }
}

static void ref_observer(void *arg, const q8_graph *g, const q8_node *n, void *const *ptr) {
    ref_set *r = arg;
    for (int k = 0; k < n->n_outputs; k++) {
        int t = n->outputs[k];
        if (t >= 0 && r->buf[t] && ptr[t])
            memcpy(r->buf[t], ptr[t], q8_tensor_nbytes(g->tensors[t]));
    }
}

static double meta_float(const q8_meta *m, const char *node, const char *what) {
    char key[700];
    snprintf(key, sizeof key, "layer.%s.%s", node, what);
    const q8_meta_entry *e = q8_meta_get(m, key);
    if (!e) return -1;
    return e->type == Q8_META_FLOAT ? e->f : e->type == Q8_META_INT ? (double)e->i : -1;
}

/* The range of a quantized layer's per-channel weight scales, from its
 * weight (input 1) when the file has no layer.<node>.weight_scale_* keys
 * (quantize stopped writing them: the scales say it); stays -1 otherwise. */
static void weight_scale_range(const q8_graph *g, const q8_node *n, double *lo, double *hi) {
    if (n->op != Q8_OP_QCONV && n->op != Q8_OP_QCONV_TRANSPOSE && n->op != Q8_OP_QGEMM) return;
    const q8_tensor *w = q8_in(g, n, 1);
    if (!w || w->q.n < 1) return;
    float a = w->q.scale[0], b = a;
    for (int i = 1; i < w->q.n; i++) {
        a = fminf(a, w->q.scale[i]);
        b = fmaxf(b, w->q.scale[i]);
    }
    *lo = a;
    *hi = b;
}

void q8_report_model_free(q8_report_model *m) {
    for (int i = 0; i < m->n_outputs; i++) {
        free(m->outputs[i].name);
        free(m->outputs[i].worst_sample_path);
    }
    free(m->outputs);
    for (int i = 0; i < m->n_layers; i++) {
        free(m->layers[i].node);
        free(m->layers[i].op);
        free(m->layers[i].tensor);
    }
    free(m->layers);
    for (int i = 0; i < m->n_fp32_layers; i++) free(m->fp32_layers[i]);
    free(m->fp32_layers);
    free(m->calib_method);
    free(m->prune_mode);
    free(m->search_metric);
    free(m->search_dense);
    free(m->path);
    memset(m, 0, sizeof *m);
}

/* Maps, layers and outputs of quantized model c against FP32 graph f. */
static q8_status setup_qmodel(qmodel *c, const q8_graph *f, int n_samples, q8_error *err) {
    const q8_graph *g = c->m->g;
    c->fmap = malloc(sizeof(int) * ((size_t)g->n_tensors + 1));
    c->layer_of = malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    c->out_f = malloc(sizeof(int) * ((size_t)g->n_outputs + 1));
    c->rep->outputs = calloc((size_t)g->n_outputs + 1, sizeof(q8_report_output));
    c->out_acc = calloc((size_t)g->n_outputs + 1, sizeof(q8_output_acc));
    int nl = 0;
    for (int i = 0; i < g->n_nodes; i++) nl += is_layer(g->nodes[i]);
    c->rep->layers = calloc((size_t)nl + 1, sizeof(q8_report_layer));
    c->own_err = calloc((size_t)nl + 1, sizeof(float *));
    if (!c->fmap || !c->layer_of || !c->out_f || !c->rep->outputs || !c->rep->layers ||
        !c->own_err || !c->out_acc)
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int t = 0; t < g->n_tensors; t++) c->fmap[t] = counterpart(f, g->tensors[t]);
    c->factor = calloc((size_t)g->n_tensors + 1, sizeof(float *));
    if (!c->factor) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    const q8_meta_entry *eq = q8_meta_get(&c->m->meta, "equalize.pairs");
    if (eq && eq->type == Q8_META_INT && eq->i > 0)
        Q8_TRY(q8_report_channel_factors(g, f, c->fmap, c->factor, err));
    for (int t = 0; t < g->n_tensors; t++) /* a NAME_eq whose factors are not known */
        if (c->fmap[t] >= 0 && !c->factor[t] &&
            q8_report_is_eq_twin(g->tensors[t]->name, f->tensors[c->fmap[t]]->name))
            c->fmap[t] = -1;
    int64_t most = 0;
    for (int t = 0; t < g->n_tensors; t++)
        if (c->factor[t] && q8_tensor_numel(g->tensors[t]) > most)
            most = q8_tensor_numel(g->tensors[t]);
    if (most && !(c->scaled = malloc(sizeof(float) * (size_t)most)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        c->layer_of[i] = -1;
        if (!is_layer(n)) continue;
        q8_report_layer *L = &c->rep->layers[c->rep->n_layers];
        c->layer_of[i] = c->rep->n_layers;
        L->index = c->rep->n_layers++;
        const q8_tensor *y = g->tensors[n->outputs[0]];
        int fi = c->fmap[n->outputs[0]];
        L->node = q8_strdup(n->name);
        L->op = q8_strdup(n->op_type);
        L->tensor = fi >= 0 ? q8_strdup(f->tensors[fi]->name) : NULL;
        if (!L->node || !L->op || (fi >= 0 && !L->tensor))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        L->out_scale = y->dtype == Q8_I8 && y->q.n == 1 ? y->q.scale[0] : 0;
        L->sparsity = meta_float(&c->m->meta, n->name, "sparsity");
        L->w_scale_min = meta_float(&c->m->meta, n->name, "weight_scale_min");
        L->w_scale_max = meta_float(&c->m->meta, n->name, "weight_scale_max");
        if (L->w_scale_min < 0) weight_scale_range(g, n, &L->w_scale_min, &L->w_scale_max);
        bool weighted = n->op == Q8_OP_QCONV || n->op == Q8_OP_QCONV_TRANSPOSE ||
                        n->op == Q8_OP_QGEMM;
        const q8_tensor *w = weighted && n->n_inputs > 1 ? q8_in(g, n, 1) : NULL;
        L->weight_elems = w && w->data ? q8_tensor_numel(w) : 0;
    }
    /* Outputs: by name, else by position. */
    for (int i = 0; i < g->n_outputs; i++) {
        const q8_tensor *t = g->tensors[g->outputs[i]];
        int j = 0;
        while (j < f->n_outputs && strcmp(f->tensors[f->outputs[j]]->name, t->name)) j++;
        if (j == f->n_outputs) j = i < f->n_outputs ? i : -1;
        const q8_tensor *ft = j >= 0 ? f->tensors[f->outputs[j]] : NULL;
        if (!ft || ft->dtype != t->dtype || q8_tensor_numel(ft) != q8_tensor_numel(t)) {
            char a[96], b[96];
            return q8_fail(err, Q8_ERR_SHAPE,
                           "%s: output '%s' (%s %s) has no FP32 counterpart of the same type and "
                           "size%s%s", c->m->path, t->name, q8_dtype_name(t->dtype),
                           q8_shape_str(t->dims, t->ndim, a, sizeof a), ft ? ": FP32 has " : "",
                           ft ? q8_shape_str(ft->dims, ft->ndim, b, sizeof b) : "");
        }
        c->out_f[i] = j;
        c->rep->outputs[i].name = q8_strdup(t->name);
        if (!c->rep->outputs[i].name) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        c->rep->n_outputs++;
        Q8_TRY(q8_output_acc_init(&c->out_acc[i], t, n_samples, &c->rep->outputs[i], err));
    }
    return Q8_OK;
}

/* How output 0 is compared with FP32's: argmax over `classes` values at
 * stride `inner`, `outer` times (TOP1, PIXEL), or masks at 0.5 (MASK). */
typedef struct agree_plan {
    q8_agree_kind kind;
    int64_t outer, classes, inner;
} agree_plan;

static int64_t plan_positions(const agree_plan *p) { return p->outer * p->inner; }

static void argmax_positions(const float *v, const agree_plan *p, int64_t *out) {
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t j = 0; j < p->inner; j++) {
            const float *x = v + o * p->classes * p->inner + j;
            int64_t am = 0;
            for (int64_t i = 1; i < p->classes; i++) {
                float a = x[i * p->inner], b = x[am * p->inner];
                if (a > b || (b != b && a == a)) am = i;
            }
            out[o * p->inner + j] = am;
        }
}

/* every row non-negative and summing to 1: softmax probabilities */
static bool rows_are_distributions(const float *v, int64_t rows, int64_t row) {
    for (int64_t r = 0; r < rows; r++) {
        double sum = 0;
        for (int64_t i = 0; i < row; i++) {
            if (!(v[r * row + i] >= 0)) return false;
            sum += v[r * row + i];
        }
        if (fabs(sum - 1) > 1e-3) return false;
    }
    return true;
}

static bool all_in_unit_interval(const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (!(v[i] >= 0 && v[i] <= 1)) return false;
    return true;
}

/* An image, not a class map: 2 to 4 channels that rise and fall together
 * (every pair's correlation over the positions above 0.5: RGB's are 0.8 to
 * 0.95 on photographs), where competing class scores pull apart (a softmax's
 * are anti-correlated). A super-resolution or denoising net's RGB output
 * would otherwise be "compared" by its arg max over R, G and B. */
static bool channels_move_together(const float *v, const agree_plan *p) {
    if (p->classes < 2 || p->classes > 4) return false;
    int64_t n = p->outer * p->inner;
    double mean[4] = {0}, var[4] = {0}, cov[4][4] = {{0}};
    /* the means first, then the sums of the deviations' products */
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t j = 0; j < p->inner; j++)
            for (int64_t a = 0; a < p->classes; a++) {
                double xa = v[(o * p->classes + a) * p->inner + j];
                if (!isfinite(xa)) return false;
                mean[a] += xa / (double)n;
            }
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t j = 0; j < p->inner; j++) {
            double d[4];
            for (int64_t a = 0; a < p->classes; a++)
                d[a] = v[(o * p->classes + a) * p->inner + j] - mean[a];
            for (int64_t a = 0; a < p->classes; a++) {
                var[a] += d[a] * d[a];
                for (int64_t b = a + 1; b < p->classes; b++) cov[a][b] += d[a] * d[b];
            }
        }
    for (int64_t a = 0; a < p->classes; a++)
        for (int64_t b = a + 1; b < p->classes; b++)
            if (!(var[a] > 0 && var[b] > 0 && cov[a][b] > 0.5 * sqrt(var[a] * var[b])))
                return false;
    return true;
}

/* Landmarks, not class scores: rows of K points' x, y (and z), period 2
 * or 3. Points listed along a contour or a finger lie close together, so
 * values one period apart differ far less than neighbours (an x beside a
 * y) do: 0.14-0.40 of it on FaceMesh, the hand and a 68-point face model,
 * 0.95-1.7 on logits, embeddings and pose bins. */
static bool rows_are_points(const float *v, int64_t rows, int64_t row) {
    for (int64_t p = 2; p <= 3; p++) {
        if (row % p || row / p < 16) continue; /* fewer points: logits can look so by chance */
        double apart = 0, next = 0;
        for (int64_t r = 0; r < rows; r++) {
            const float *x = v + r * row;
            for (int64_t i = 0; i + p < row; i++) apart += fabs((double)x[i + p] - x[i]);
            for (int64_t i = 0; i + 1 < row; i++) next += fabs((double)x[i + 1] - x[i]);
        }
        apart /= (double)(rows * (row - p));
        next /= (double)(rows * (row - 1));
        if (isfinite(apart) && apart < 0.5 * next) return true;
    }
    return false;
}

/* Class scores where classes are the last axis of [N, C] (probabilities,
 * or not landmarks: rows_are_points) or of [N, T, C] when the rows are probabilities or C is
 * vocabulary-sized, or axis 1 of a 4-D [N, C, H, W] (axis 3 when it is the
 * smallest: N, H, W, C); a one-channel 4-D map in [0, 1] is a mask (not
 * [1, 1, 17, 3] keypoints); anything else (box regressors, images:
 * channels_move_together) has no class structure. An embedding [N, C]
 * still reads as class scores. v: FP32's output 0. */
static agree_plan choose_plan(const q8_tensor *o, const float *v) {
    agree_plan p = {Q8_AGREE_NONE, 0, 0, 1};
    if (!o || o->dtype != Q8_F32 || q8_tensor_numel(o) == 0) return p;
    int64_t n = q8_tensor_numel(o);
    const int64_t *d = o->dims;
    int64_t last = d[o->ndim - 1];
    /* rows summing to 1 are probabilities, however smooth */
    if (o->ndim == 2 && last >= 2 &&
        (rows_are_distributions(v, d[0], last) || !rows_are_points(v, d[0], last)))
        p = (agree_plan){Q8_AGREE_TOP1, d[0], last, 1};
    if (o->ndim == 3 && last >= 2 &&
        (last >= 100 || rows_are_distributions(v, n / last, last)))
        p = (agree_plan){Q8_AGREE_TOP1, n / last, last, 1};
    if (o->ndim == 4) {
        if (d[1] >= 2 && d[1] < d[2] && d[1] < d[3])
            p = (agree_plan){Q8_AGREE_PIXEL, d[0], d[1], d[2] * d[3]};
        else if (d[3] >= 2 && d[3] < d[1] && d[3] < d[2])
            p = (agree_plan){Q8_AGREE_TOP1, n / d[3], d[3], 1};
        else if ((d[1] == 1 || d[3] == 1) && q8_report_channel_axis(o) < 0 &&
                 all_in_unit_interval(v, n))
            p = (agree_plan){Q8_AGREE_MASK, 1, 1, n};
        if (p.kind != Q8_AGREE_MASK && channels_move_together(v, &p))
            p = (agree_plan){Q8_AGREE_NONE, 0, 0, 1};
    }
    return p;
}

/* With --labels, output 0 is class scores over its last axis (one label per row). */
static agree_plan labels_plan(const q8_tensor *o) {
    agree_plan p = {Q8_AGREE_NONE, 0, 0, 1};
    if (o && o->dtype == Q8_F32 && o->ndim >= 1 && o->dims[o->ndim - 1] > 0)
        p = (agree_plan){Q8_AGREE_TOP1, q8_tensor_numel(o) / o->dims[o->ndim - 1],
                         o->dims[o->ndim - 1], 1};
    return p;
}

static int64_t label_at(const q8_tensor *l, int64_t i) {
    return l->dtype == Q8_I64 ? ((const int64_t *)l->data)[i] : ((const int32_t *)l->data)[i];
}

/* One sample's output 0 of a quantized model against FP32's (fd, and am_f
 * its argmax positions): agreement, and top-1 hits when labels are given. */
static void count_agreement(const agree_plan *p, const float *fd, const float *qd,
                            const int64_t *am_f, int64_t *am_q, q8_report_model *rep,
                            const q8_tensor *labels, int sample) {
    if (p->kind == Q8_AGREE_MASK) {
        for (int64_t i = 0; i < p->inner; i++) {
            bool a = fd[i] > 0.5f, b = qd[i] > 0.5f;
            rep->agree += a && b;
            rep->agree_of += a || b;
        }
        return;
    }
    if (p->kind == Q8_AGREE_NONE) return;
    argmax_positions(qd, p, am_q);
    int64_t np = plan_positions(p);
    for (int64_t r = 0; r < np; r++) rep->agree += am_q[r] == am_f[r];
    rep->agree_of += np;
    for (int64_t r = 0; r < p->outer && labels; r++)
        rep->top1_hits += am_q[r] == label_at(labels, sample * p->outer + r);
}

static int cmp_layers(const void *a, const void *b) {
    double x = q8_err_sqnr_db(&((const q8_report_layer *)a)->in_model);
    double y = q8_err_sqnr_db(&((const q8_report_layer *)b)->in_model);
    /* NaN (not compared) last; then ascending, +inf after every finite value */
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    if (x != y) return x < y ? -1 : 1;
    return ((const q8_report_layer *)a)->index - ((const q8_report_layer *)b)->index;
}

q8_status q8_report_compare(const q8_model *fp32, const q8_model *const *q, int nq,
                            const q8_sample_set *s, const q8_compare_options *o,
                            q8_report_model *out, q8_error *err) {
    const q8_graph *f = fp32->g;
    q8_status st = Q8_OK;
    ref_set refs = {.g = f};
    qmodel *qm = calloc((size_t)nq + 1, sizeof(qmodel));
    q8_session *fs = NULL;
    q8_tensor **in = calloc((size_t)s->n_inputs + 1, sizeof(q8_tensor *));
    refs.buf = calloc((size_t)f->n_tensors + 1, sizeof(void *));
    refs.ref = calloc((size_t)f->n_tensors + 1, sizeof(void *));
    int64_t *am_f = NULL, *am_q = NULL;
    if (!qm || !in || !refs.buf || !refs.ref) {
        st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (!q8_samples_cover_inputs(s, f)) {
        st = q8_fail(err, Q8_ERR_ARG, "the samples have %d inputs, the model %d", s->n_inputs,
                     f->n_inputs);
        goto done;
    }
    q8_session_options so = {.n_threads = o->n_threads, .device = Q8_DEVICE_CPU};
    st = q8_session_create(fp32, &so, &fs, err);
    for (int k = 0; st == Q8_OK && k < nq; k++) {
        qm[k].m = q[k];
        qm[k].rep = &out[k + 1];
        qm[k].refs = &refs;
        qm[k].only = -1;
        st = setup_qmodel(&qm[k], f, s->n_samples, err);
        if (st == Q8_OK) st = q8_session_create(q[k], &so, &qm[k].sess, err);
        if (st == Q8_OK && o->per_layer)
            st = q8_session_set_observer(qm[k].sess, q_observer, &qm[k], err);
        if (st != Q8_OK) q8_fail_prefix(err, "%s", q[k]->path);
    }
    /* FP32 copies: every activation a quantized tensor maps to. */
    for (int k = 0; st == Q8_OK && o->per_layer && k < nq; k++)
        for (int t = 0; t < q[k]->g->n_tensors && st == Q8_OK; t++) {
            int fi = qm[k].fmap[t];
            const q8_tensor *ft = fi >= 0 ? f->tensors[fi] : NULL;
            if (!ft || refs.buf[fi]) continue;
            if (ft->data) {
                refs.ref[fi] = ft->data;
            } else if (ft->producer >= 0) {
                if (!(refs.buf[fi] = malloc(q8_tensor_nbytes(ft) + 1)))
                    st = q8_fail(err, Q8_ERR_NOMEM, "out of memory for the FP32 activations");
                refs.ref[fi] = refs.buf[fi];
            }
        }
    if (st == Q8_OK && o->per_layer) st = q8_session_set_observer(fs, ref_observer, &refs, err);
    if (st != Q8_OK) goto done;

    /* top-1 vs labels: output 0's last axis (checked before anything runs) */
    const q8_tensor *o0 = f->n_outputs ? f->tensors[f->outputs[0]] : NULL;
    agree_plan plan = {Q8_AGREE_NONE, 0, 0, 1};
    for (int k = 0; k <= nq; k++) out[k].top1_hits = out[k].agree = -1;
    if (o->labels) {
        plan = labels_plan(o0);
        int64_t rows = plan.outer, row = plan.classes;
        const q8_tensor *l = o->labels;
        if (plan.kind == Q8_AGREE_NONE) {
            st = q8_fail(err, Q8_ERR_ARG, "--labels: output '%s' is not a float score tensor",
                         o0 ? o0->name : "?");
            goto done;
        }
        if ((l->dtype != Q8_I64 && l->dtype != Q8_I32) ||
            q8_tensor_numel(l) != rows * s->n_samples) {
            st = q8_fail(err, Q8_ERR_SHAPE,
                         "--labels: %lld %s labels, expected %lld int64/int32 labels (one per row "
                         "of output '%s' over %d sample file(s))",
                         (long long)q8_tensor_numel(l), q8_dtype_name(l->dtype),
                         (long long)(rows * s->n_samples), o0->name, s->n_samples);
            goto done;
        }
        for (int64_t i = 0; i < rows * s->n_samples; i++)
            if (label_at(l, i) < 0 || label_at(l, i) >= row) {
                st = q8_fail(err, Q8_ERR_ARG,
                             "--labels: label %lld (row %lld) is not a class of output '%s' "
                             "(0 to %lld)", (long long)label_at(l, i), (long long)i, o0->name,
                             (long long)(row - 1));
                goto done;
            }
    }

    for (int i = 0; i < s->n_samples && st == Q8_OK; i++) {
        for (int k = 0; k < s->n_inputs; k++) {
            q8_tensor_free(in[k]);
            in[k] = NULL;
        }
        for (int k = 0; k < s->n_inputs && st == Q8_OK; k++) {
            const char *name = s->names ? s->names[k] : f->tensors[f->inputs[k]]->name;
            int ti = q8_graph_find(f, name);
            st = q8_sample_load(s, i, k, &in[k], err);
            if (st == Q8_OK)
                st = q8_session_set_input(fs, name, in[k]->dtype, in[k]->dims, in[k]->ndim,
                                          in[k]->data, err);
            for (int m = 0; m < nq && st == Q8_OK; m++)
                st = q8_session_set_input(qm[m].sess, name, in[k]->dtype, in[k]->dims, in[k]->ndim,
                                          in[k]->data, err);
            if (st == Q8_OK && in[k]->dtype == Q8_F32 && ti >= 0 && q8_graph_is_input(f, ti))
                refs.ref[ti] = in[k]->data;
            if (st != Q8_OK) q8_fail_prefix(err, "%s", s->paths[i][k]);
        }
        if (st == Q8_OK) st = q8_session_run(fs, err);
        if (st != Q8_OK) break;
        q8_tensor_info fi;
        const void *fd;
        q8_session_output(fs, 0, &fi, &fd, NULL);
        if (i == 0) {
            if (!o->labels && o0) plan = choose_plan(o0, fd);
            int64_t np = plan_positions(&plan);
            for (int k = 0; k <= nq; k++) {
                out[k].agree_kind = plan.kind;
                out[k].rows = plan.kind == Q8_AGREE_TOP1 ? plan.outer * s->n_samples : 0;
                if (o->labels) out[k].top1_hits = 0;
                if (k > 0 && plan.kind != Q8_AGREE_NONE) out[k].agree = out[k].agree_of = 0;
            }
            free(am_f);
            free(am_q);
            am_f = malloc(sizeof(int64_t) * ((size_t)np + 1));
            am_q = malloc(sizeof(int64_t) * ((size_t)np + 1));
            if (!am_f || !am_q) {
                st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
                break;
            }
        }
        if (plan.kind == Q8_AGREE_TOP1 || plan.kind == Q8_AGREE_PIXEL) {
            argmax_positions(fd, &plan, am_f);
            for (int64_t r = 0; r < plan.outer && o->labels; r++)
                out[0].top1_hits += am_f[r] == label_at(o->labels, i * plan.outer + r);
        }
        for (int m = 0; m < nq && st == Q8_OK; m++) {
            qmodel *c = &qm[m];
            c->alone = false;
            c->next_node = 0;
            st = q8_session_run(c->sess, err);
            if (st != Q8_OK) {
                q8_fail_prefix(err, "%s", c->m->path);
                break;
            }
            const q8_graph *g = c->m->g;
            for (int j = 0; j < g->n_outputs && st == Q8_OK; j++) {
                q8_tensor_info qi;
                const void *qd;
                q8_session_output(c->sess, j, &qi, &qd, NULL);
                q8_session_output(fs, c->out_f[j], &fi, &fd, NULL);
                if (qi.dtype != Q8_F32) continue;
                q8_report_output *ro = &c->rep->outputs[j];
                q8_err_stats one = {0};
                q8_err_stats_f32(&one, fd, qd, q8_tensor_numel(g->tensors[g->outputs[j]]));
                q8_err_stats_add(&ro->err, &one);
                if (c->out_acc[j].per_sample)
                    st = q8_output_sample(ro, &one, i, s->n_inputs ? s->paths[i][0] : NULL, err);
                q8_output_acc_add(&c->out_acc[j], fd, qd);
                if (c->out_f[j] == 0)
                    count_agreement(&plan, fd, qd, am_f, am_q, c->rep, o->labels, i);
            }
            if (st != Q8_OK) break;
            bool gain = o->per_layer && o->per_layer_gain &&
                        (o->gain_samples <= 0 || i < o->gain_samples);
            if (gain) float_outputs(c, fs, &c->base); /* before a run injects anything */
            if (o->per_layer) {
                c->alone = true;
                c->record = gain;
                c->next_node = 0;
                st = q8_session_run(c->sess, err);
                c->alone = c->record = false;
            }
            for (int l = 0; gain && st == Q8_OK && l < c->rep->n_layers; l++) {
                c->only = l;
                c->next_node = 0;
                st = q8_session_run(c->sess, err);
                c->only = -1;
                if (st == Q8_OK) float_outputs(c, fs, &c->rep->layers[l].exact_out);
            }
        }
    }
    for (int k = 0; st == Q8_OK && k < nq; k++)
        for (int l = 0; l < out[k + 1].n_layers; l++) out[k + 1].layers[l].exact_base = qm[k].base;
    for (int k = 0; st == Q8_OK && k < nq; k++)
        for (int j = 0; j < out[k + 1].n_outputs && st == Q8_OK; j++) {
            q8_report_output *ro = &out[k + 1].outputs[j];
            st = q8_output_acc_finish(&qm[k].out_acc[j], ro, err);
        }
    for (int k = 0; st == Q8_OK && k < nq; k++)
        qsort(out[k + 1].layers, (size_t)out[k + 1].n_layers, sizeof(q8_report_layer), cmp_layers);
done:
    for (int k = 0; qm && k < nq; k++) {
        q8_session_free(qm[k].sess);
        free(qm[k].fmap);
        free(qm[k].layer_of);
        free(qm[k].out_f);
        for (int j = 0; qm[k].out_acc && j < qm[k].m->g->n_outputs; j++)
            q8_output_acc_free(&qm[k].out_acc[j]);
        free(qm[k].out_acc);
        for (int t = 0; qm[k].factor && t < qm[k].m->g->n_tensors; t++) free(qm[k].factor[t]);
        free(qm[k].factor);
        for (int l = 0; qm[k].own_err && l < qm[k].rep->n_layers; l++) free(qm[k].own_err[l]);
        free(qm[k].own_err);
        free(qm[k].scaled);
    }
    free(qm);
    q8_session_free(fs);
    for (int k = 0; in && k < s->n_inputs; k++) q8_tensor_free(in[k]);
    free(in);
    for (int t = 0; refs.buf && t < f->n_tensors; t++) free(refs.buf[t]);
    free(refs.buf);
    free(refs.ref);
    free(am_f);
    free(am_q);
    return st;
}
