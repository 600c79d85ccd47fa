/* Recognize decomposed ops that exporters emit and replace each with the
 * single op: LayerNormalization from ReduceMean/Sub/Pow/ReduceMean/Add/
 * Sqrt/Div[/Mul/Add], Gelu from the Erf formula, HardSwish from
 * x * HardSigmoid(x), HardSigmoid and HardSwish from Clip(x + 3, 0, 6) / 6
 * and x * Clip(x + 3, 0, 6) / 6, Clip from Max / Min with a constant
 * scalar, GlobalAveragePool from an AveragePool over the whole map. One op is faster and quantizes as one unit. The last node of a
 * pattern is rewritten in place, which keeps the node order topological. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "passes.h"

typedef struct pctx {
    q8_graph *g;
    int *uses;
} pctx;

static bool is_op(const q8_node *n, const char *op) {
    return n && !n->dead && !*n->domain && strcmp(n->op_type, op) == 0;
}

static q8_node *producer(const pctx *c, int t) {
    if (t < 0) return NULL;
    int p = c->g->tensors[t]->producer;
    return p >= 0 ? c->g->nodes[p] : NULL;
}

/* An intermediate value of a pattern: read by exactly n nodes, not an output. */
static bool internal(const pctx *c, int t, int n) {
    return t >= 0 && c->uses[t] == n && !q8_graph_is_output(c->g, t);
}

static bool const_scalar(const q8_graph *g, int t, float *v) {
    const q8_tensor *tt = q8_graph_tensor(g, t);
    if (!tt || !tt->data || tt->dtype != Q8_F32 || q8_tensor_numel(tt) != 1) return false;
    *v = *(const float *)tt->data;
    return true;
}

static bool near(float a, float b) { return fabsf(a - b) <= 1e-4f * fabsf(b); }

/* The input that is not t (binary op). */
static int other_input(const q8_node *n, int t) {
    return n->inputs[0] == t ? n->inputs[1] : n->inputs[0];
}

/* Reduction axes of a ReduceMean as a normalized list; false if unknown. */
static bool reduce_axes(const q8_graph *g, const q8_node *n, int rank, int *first, int *count) {
    if (q8_attr_int(n, "keepdims", 1) != 1) return false;
    const q8_tensor *t = q8_in(g, n, 1);
    if (!t || !t->data || t->dtype != Q8_I64 || q8_tensor_numel(t) > Q8_MAX_DIMS) return false;
    int na = (int)q8_tensor_numel(t);
    const int64_t *ax = t->data;
    if (na < 1) return false;
    /* must be the trailing axes, in order */
    int norm[Q8_MAX_DIMS];
    for (int i = 0; i < na; i++)
        if (!q8_norm_axis(ax[i], rank, &norm[i])) return false;
    for (int i = 0; i < na; i++)
        if (norm[i] != rank - na + i) return false;
    *first = rank - na;
    *count = na;
    return true;
}

/* Turn node n into op_type with the given inputs, no attributes. */
static q8_status rewrite(q8_graph *g, q8_node *n, const char *op_type, const int *in, int n_in,
                         q8_error *err) {
    char *op = q8_strdup(op_type);
    if (!op) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    free(n->op_type);
    n->op_type = op;
    for (int i = 0; i < n->n_attrs; i++) q8_attr_clear(&n->attrs[i]);
    n->n_attrs = 0;
    int out = n->outputs[0];
    Q8_TRY(q8_node_set_io(n, in, n_in, &out, 1, err));
    n->op = q8_op_lookup("", op_type);
    Q8_ASSERT(n->op != Q8_OP_NONE);
    return Q8_OK;
}

static q8_status try_layernorm(pctx *c, q8_node *div, bool *hit, q8_error *err) {
    q8_graph *g = c->g;
    /* div = d / sqrt(mean(d^2) + eps), d = x - mean(x) */
    if (div->n_inputs != 2) return Q8_OK;
    int d = div->inputs[0], sd = div->inputs[1];
    q8_node *sub = producer(c, d), *sq = producer(c, sd);
    if (!is_op(sub, "Sub") || !is_op(sq, "Sqrt") || !internal(c, sd, 1)) return Q8_OK;
    q8_node *add_eps = producer(c, sq->inputs[0]);
    if (!is_op(add_eps, "Add") || !internal(c, sq->inputs[0], 1)) return Q8_OK;
    float eps;
    int var = -1;
    if (const_scalar(g, add_eps->inputs[1], &eps)) var = add_eps->inputs[0];
    else if (const_scalar(g, add_eps->inputs[0], &eps)) var = add_eps->inputs[1];
    q8_node *rm2 = producer(c, var);
    if (!is_op(rm2, "ReduceMean") || !internal(c, var, 1)) return Q8_OK;
    q8_node *pw = producer(c, rm2->inputs[0]);
    float two;
    if (!internal(c, rm2->inputs[0], 1)) return Q8_OK;
    if (is_op(pw, "Pow")) {
        if (pw->inputs[0] != d || !const_scalar(g, pw->inputs[1], &two) || two != 2.0f) return Q8_OK;
    } else if (is_op(pw, "Mul")) {
        if (pw->inputs[0] != d || pw->inputs[1] != d) return Q8_OK;
    } else {
        return Q8_OK;
    }
    /* d feeds the square and the division only */
    bool sq_twice = is_op(pw, "Mul");
    if (!internal(c, d, sq_twice ? 3 : 2)) return Q8_OK;
    int x = sub->inputs[0], mean = sub->inputs[1];
    q8_node *rm1 = producer(c, mean);
    if (!is_op(rm1, "ReduceMean") || rm1->inputs[0] != x || !internal(c, mean, 1)) return Q8_OK;
    const q8_tensor *xt = g->tensors[x];
    if (xt->dtype != Q8_F32) return Q8_OK;
    int f1, n1, f2, n2;
    if (!reduce_axes(g, rm1, xt->ndim, &f1, &n1) || !reduce_axes(g, rm2, xt->ndim, &f2, &n2) ||
        f1 != f2 || n1 != n2)
        return Q8_OK;
    /* optional * gamma + beta with constants over the normalized dims */
    int64_t norm_size = 1;
    for (int i = f1; i < xt->ndim; i++) norm_size *= xt->dims[i];
    q8_node *last = div, *mul = NULL, *addb = NULL;
    int gamma = -1, beta = -1;
    int out = div->outputs[0];
    for (int i = 0; i < g->n_nodes && internal(c, out, 1); i++) {
        q8_node *n = g->nodes[i];
        if (n->dead || n->n_inputs != 2 || (n->inputs[0] != out && n->inputs[1] != out)) continue;
        int o = other_input(n, out);
        const q8_tensor *ot = q8_graph_tensor(g, o);
        if (!ot || !ot->data || ot->dtype != Q8_F32 || q8_tensor_numel(ot) != norm_size ||
            ot->ndim > xt->ndim - f1)
            break;
        if (!mul && !addb && is_op(n, "Mul")) {
            mul = n;
            gamma = o;
        } else if (!addb && is_op(n, "Add")) {
            addb = n;
            beta = o;
        } else {
            break;
        }
        last = n;
        out = n->outputs[0];
        if (addb) break;
    }
    /* LayerNormalization needs a Scale input: make ones when absent. */
    if (gamma < 0) {
        gamma = q8_graph_add_tensor_unique(g, "layernorm_scale");
        if (gamma < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        q8_tensor *gt = g->tensors[gamma];
        q8_tensor_set_shape(gt, Q8_F32, &norm_size, 1);
        Q8_TRY(q8_tensor_alloc_data(gt, err));
        for (int64_t i = 0; i < norm_size; i++) ((float *)gt->data)[i] = 1.0f;
    }
    q8_node *dead[] = {rm1, sub, pw, rm2, add_eps, sq, div, mul, addb};
    for (size_t i = 0; i < sizeof dead / sizeof dead[0]; i++)
        if (dead[i] && dead[i] != last) dead[i]->dead = true;
    int in[3] = {x, gamma, beta};
    Q8_TRY(rewrite(g, last, "LayerNormalization", in, beta >= 0 ? 3 : 2, err));
    /* each set may move the attribute array: use the pointer at once */
    q8_attr *a = q8_node_set_attr(last, "axis", Q8_ATTR_INT);
    if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    a->i = f1;
    q8_attr *e = q8_node_set_attr(last, "epsilon", Q8_ATTR_FLOAT);
    if (!e) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    e->f = eps;
    *hit = true;
    return q8_node_reinfer(g, last, err);
}

/* y = 0.5 * x * (1 + erf(x / sqrt(2))), in the orders exporters write. */
static q8_status try_gelu(pctx *c, q8_node *erf, bool *hit, q8_error *err) {
    q8_graph *g = c->g;
    int a = erf->inputs[0];
    q8_node *scale = producer(c, a);
    float k;
    int x;
    if (!internal(c, a, 1) || !scale || scale->n_inputs != 2) return Q8_OK;
    if (is_op(scale, "Div") && const_scalar(g, scale->inputs[1], &k) && near(k, 1.41421356f)) {
        x = scale->inputs[0];
    } else if (is_op(scale, "Mul") && const_scalar(g, scale->inputs[1], &k) && near(k, 0.70710678f)) {
        x = scale->inputs[0];
    } else if (is_op(scale, "Mul") && const_scalar(g, scale->inputs[0], &k) && near(k, 0.70710678f)) {
        x = scale->inputs[1];
    } else {
        return Q8_OK;
    }
    int b = erf->outputs[0];
    q8_node *add1 = NULL;
    for (int i = 0; i < g->n_nodes && internal(c, b, 1); i++)
        if (is_op(g->nodes[i], "Add") && (g->nodes[i]->inputs[0] == b || g->nodes[i]->inputs[1] == b))
            add1 = g->nodes[i];
    float one;
    if (!add1 || !const_scalar(g, other_input(add1, b), &one) || one != 1.0f) return Q8_OK;
    int cc = add1->outputs[0];
    if (!internal(c, cc, 1)) return Q8_OK;
    q8_node *m1 = NULL;
    for (int i = 0; i < g->n_nodes; i++)
        if (is_op(g->nodes[i], "Mul") && (g->nodes[i]->inputs[0] == cc || g->nodes[i]->inputs[1] == cc))
            m1 = g->nodes[i];
    if (!m1) return Q8_OK;
    int o = other_input(m1, cc);
    q8_node *half_node = NULL, *last = NULL;
    float half;
    if (o == x) {
        /* (x * c) * 0.5 */
        int t = m1->outputs[0];
        if (!internal(c, t, 1)) return Q8_OK;
        for (int i = 0; i < g->n_nodes; i++)
            if (is_op(g->nodes[i], "Mul") && (g->nodes[i]->inputs[0] == t || g->nodes[i]->inputs[1] == t))
                half_node = g->nodes[i];
        if (!half_node || !const_scalar(g, other_input(half_node, t), &half) || half != 0.5f)
            return Q8_OK;
        last = half_node;
    } else {
        /* (x * 0.5) * c */
        half_node = producer(c, o);
        if (!is_op(half_node, "Mul") || !internal(c, o, 1)) return Q8_OK;
        int hx = -1;
        if (const_scalar(g, half_node->inputs[1], &half)) hx = half_node->inputs[0];
        else if (const_scalar(g, half_node->inputs[0], &half)) hx = half_node->inputs[1];
        if (hx != x || half != 0.5f) return Q8_OK;
        last = m1;
    }
    if (g->tensors[x]->dtype != Q8_F32) return Q8_OK;
    q8_node *dead[] = {scale, erf, add1, m1, half_node};
    for (size_t i = 0; i < sizeof dead / sizeof dead[0]; i++)
        if (dead[i] != last) dead[i]->dead = true;
    Q8_TRY(rewrite(g, last, "Gelu", &x, 1, err));
    *hit = true;
    return q8_node_reinfer(g, last, err);
}

/* x * HardSigmoid(x; 1/6, 1/2) is HardSwish(x) (opsets before 14 and
 * exporters that decompose it). */
static q8_status try_hardswish(pctx *c, q8_node *mul, bool *hit, q8_error *err) {
    if (mul->n_inputs != 2) return Q8_OK;
    for (int k = 0; k < 2; k++) {
        int hs = mul->inputs[k], x = mul->inputs[1 - k];
        q8_node *h = producer(c, hs);
        if (!is_op(h, "HardSigmoid") || h->inputs[0] != x || !internal(c, hs, 1)) continue;
        if (!near(q8_attr_float(h, "alpha", 0.2f), 1.0f / 6.0f) ||
            q8_attr_float(h, "beta", 0.5f) != 0.5f)
            continue;
        if (c->g->tensors[x]->dtype != Q8_F32) continue;
        h->dead = true;
        Q8_TRY(rewrite(c->g, mul, "HardSwish", &x, 1, err));
        *hit = true;
        return q8_node_reinfer(c->g, mul, err);
    }
    return Q8_OK;
}

/* Clip(x, 0, 6), bounds as inputs (opset 11+) or attributes. */
static bool clip_0_6(const pctx *c, const q8_node *n) {
    if (!is_op(n, "Clip")) return false;
    float lo = q8_attr_float(n, "min", -INFINITY), hi = q8_attr_float(n, "max", INFINITY);
    if (n->n_inputs > 1 && n->inputs[1] >= 0 && !const_scalar(c->g, n->inputs[1], &lo)) return false;
    if (n->n_inputs > 2 && n->inputs[2] >= 0 && !const_scalar(c->g, n->inputs[2], &hi)) return false;
    return lo == 0.0f && hi == 6.0f;
}

/* t = Clip(x + 3, 0, 6), read by `uses` nodes: x, else -1. */
static int relu6_shift3(const pctx *c, int t, int uses) {
    q8_node *clip = producer(c, t);
    if (!clip_0_6(c, clip) || !internal(c, t, uses)) return -1;
    q8_node *add = producer(c, clip->inputs[0]);
    float three;
    if (!is_op(add, "Add") || add->n_inputs != 2 || !internal(c, clip->inputs[0], 1)) return -1;
    for (int k = 0; k < 2; k++)
        if (const_scalar(c->g, add->inputs[k], &three) && three == 3.0f) {
            int x = add->inputs[1 - k];
            return c->g->tensors[x]->dtype == Q8_F32 ? x : -1;
        }
    return -1;
}

/* n = v / 6 or v * (1/6): v, else -1. */
static int sixth_of(const pctx *c, const q8_node *n) {
    float k;
    if (n->n_inputs != 2) return -1;
    if (is_op(n, "Div")) return const_scalar(c->g, n->inputs[1], &k) && k == 6.0f ? n->inputs[0] : -1;
    for (int i = 0; i < 2; i++)
        if (const_scalar(c->g, n->inputs[i], &k) && near(k, 1.0f / 6.0f)) return n->inputs[1 - i];
    return -1;
}

/* A new float scalar constant holding v; -1 on failure. */
static int new_scalar(q8_graph *g, const char *base, float v) {
    int t = q8_graph_add_tensor_unique(g, base);
    if (t < 0) return -1;
    q8_tensor_set_shape(g->tensors[t], Q8_F32, NULL, 0);
    if (q8_tensor_alloc_data(g->tensors[t], NULL) != Q8_OK) return -1;
    *(float *)g->tensors[t]->data = v;
    return t;
}

/* (k * x) * Clip(x + 3, 0, 6), tf2onnx's form of TensorFlow's hard_swish
 * (CenterNet's MobileNetV3: 20 of them): with k = 1/6, HardSwish(x), the Mul
 * `last` rewritten; with k a rounded 1/6 (CenterNet's is float16's,
 * 0.16662598), HardSwish(x) * 6k, the same function (Clip's node becomes
 * the HardSwish, `last` the Mul by the scalar 6k), so that the activation is
 * one op (an int8 table: a Mul by a scalar composes with it) and not four. */
static q8_status try_sixth_times_relu6(pctx *c, q8_node *last, bool *hit, q8_error *err) {
    if (last->n_inputs != 2) return Q8_OK;
    for (int k = 0; k < 2; k++) {
        int a = last->inputs[k], b = last->inputs[1 - k];
        q8_node *sixth = producer(c, a);
        float kv = 0;
        if (!sixth || !internal(c, a, 1) || !is_op(sixth, "Mul") || sixth->n_inputs != 2) continue;
        int ki = const_scalar(c->g, sixth->inputs[0], &kv) ? 0 : 1;
        if (ki == 1 && !const_scalar(c->g, sixth->inputs[1], &kv)) continue;
        int x = sixth->inputs[1 - ki];
        if (!(fabsf(kv * 6.0f - 1.0f) <= 1e-3f) || relu6_shift3(c, b, 1) != x) continue;
        q8_node *clip = producer(c, b);
        producer(c, clip->inputs[0])->dead = true;
        sixth->dead = true;
        if (near(kv, 1.0f / 6.0f)) {
            clip->dead = true;
            Q8_TRY(rewrite(c->g, last, "HardSwish", &x, 1, err));
        } else {
            char base[400];
            snprintf(base, sizeof base, "%s_scale", last->name);
            int kt = new_scalar(c->g, base, kv * 6.0f);
            if (kt < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            Q8_TRY(rewrite(c->g, clip, "HardSwish", &x, 1, err));
            Q8_TRY(q8_node_reinfer(c->g, clip, err));
            int in[2] = {b, kt};
            Q8_TRY(rewrite(c->g, last, "Mul", in, 2, err));
        }
        *hit = true;
        return q8_node_reinfer(c->g, last, err);
    }
    return Q8_OK;
}

/* HardSwish and HardSigmoid written out with Clip (paddle2onnx's, Keras'):
 * Clip(x + 3, 0, 6) / 6 is HardSigmoid(x; 1/6, 1/2) (and x times it is then
 * HardSwish, try_hardswish), x * Clip(x + 3, 0, 6) / 6 is HardSwish(x). The
 * last node, a Div by 6 or a Mul by 1/6, is rewritten. */
static q8_status try_relu6_forms(pctx *c, q8_node *last, bool *hit, q8_error *err) {
    int v = sixth_of(c, last);
    if (v < 0) return is_op(last, "Mul") ? try_sixth_times_relu6(c, last, hit, err) : Q8_OK;
    int x = relu6_shift3(c, v, 1);
    if (x >= 0) {
        q8_node *clip = producer(c, v);
        producer(c, clip->inputs[0])->dead = true;
        clip->dead = true;
        Q8_TRY(rewrite(c->g, last, "HardSigmoid", &x, 1, err));
        q8_attr *a = q8_node_set_attr(last, "alpha", Q8_ATTR_FLOAT);
        if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        a->f = 1.0f / 6.0f;
        *hit = true;
        return q8_node_reinfer(c->g, last, err);
    }
    q8_node *mul = producer(c, v);
    if (!is_op(mul, "Mul") || mul->n_inputs != 2 || !internal(c, v, 1)) return Q8_OK;
    for (int k = 0; k < 2; k++) {
        int r6 = mul->inputs[k];
        x = relu6_shift3(c, r6, 1);
        if (x < 0 || x != mul->inputs[1 - k]) continue;
        q8_node *clip = producer(c, r6);
        producer(c, clip->inputs[0])->dead = true;
        clip->dead = true;
        mul->dead = true;
        Q8_TRY(rewrite(c->g, last, "HardSwish", &x, 1, err));
        *hit = true;
        return q8_node_reinfer(c->g, last, err);
    }
    return Q8_OK;
}

static bool same_dims(const q8_tensor *a, const q8_tensor *b) {
    return a && b && a->shape_known && b->shape_known && a->ndim == b->ndim &&
           !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->ndim);
}

/* Whether no value of float tensor t is below 0 (NaN may be): a Relu's
 * output, a Clip of such a tensor whose upper bound is a constant >= +0, or
 * a Clip whose lower bound is above 0; depth bounds the walk. Max(t, 0) is
 * then t but for a -0, which it makes +0: the same value (q8's Relu itself
 * gives -0 for -0 as a node and +0 fused into a conv). */
static bool never_below_zero(const pctx *c, int t, int depth) {
    const q8_node *p = producer(c, t);
    const q8_tensor *tt = q8_graph_tensor(c->g, t);
    if (!p || depth <= 0 || !tt || tt->dtype != Q8_F32 || p->n_outputs != 1) return false;
    if (is_op(p, "Relu")) return p->n_inputs == 1;
    if (!is_op(p, "Clip") || p->n_inputs < 1) return false;
    float lo = -INFINITY, hi = INFINITY;
    if (p->n_inputs > 1 && p->inputs[1] >= 0 && !const_scalar(c->g, p->inputs[1], &lo))
        return false;
    if (p->n_inputs > 2 && p->inputs[2] >= 0 && !const_scalar(c->g, p->inputs[2], &hi))
        return false;
    if (!(hi >= 0) || signbit(hi) || lo != lo) return false; /* NaN, -0 or negative bound */
    if (lo > 0 && hi >= lo) return true;
    return never_below_zero(c, p->inputs[0], depth - 1);
}

/* Max(X, c) / Min(X, c) with a constant scalar c and X's shape: Clip(X,
 * min = c) / Clip(X, max = c) (TensorFlow exports write a clamp so: the
 * speech embedding's 19 Max(LeakyRelu(.), -0.4)). In INT8 a Clip runs on
 * the int8 values at X's scale, where the Max was an FP32 op between a
 * dequantized and a requantized tensor. Same values, NaN included (both
 * pass a NaN of X; c is not NaN); a tie of X and c gives X in Clip, and
 * in Max / Min the later input: with c second, only c = 0 (against -0 / +0)
 * would differ, so c = 0 second is left alone. */
static q8_status try_bound(pctx *c, q8_node *n, bool *hit, q8_error *err) {
    bool max = is_op(n, "Max");
    if (n->n_inputs != 2 || n->n_outputs != 1) return Q8_OK;
    for (int k = 0; k < 2; k++) {
        float v;
        int x = n->inputs[1 - k], ct = n->inputs[k];
        const q8_tensor *xt = q8_graph_tensor(c->g, x), *yt = q8_out(c->g, n, 0);
        if (max && k == 1 && const_scalar(c->g, ct, &v) && v == 0 && xt && same_dims(xt, yt) &&
            never_below_zero(c, x, 8)) {
            /* Max(X, 0) of an X never below 0: X itself (FaceRes's 27
             * Relu -> Min(6) -> Max(0), in INT8 a float Max between a
             * dequantize and a quantize each) */
            Q8_TRY(rewrite(c->g, n, "Identity", &x, 1, err));
            *hit = true;
            return Q8_OK;
        }
        if (!const_scalar(c->g, ct, &v) || v != v || (k == 1 && v == 0) || !xt || xt->data ||
            xt->dtype != Q8_F32 || !same_dims(xt, yt))
            continue;
        int in[3] = {x, max ? ct : -1, max ? -1 : ct};
        Q8_TRY(rewrite(c->g, n, "Clip", in, 3, err));
        *hit = true;
        return q8_node_reinfer(c->g, n, err);
    }
    return Q8_OK;
}

/* AveragePool whose window is the whole map (no pads, no dilation: one
 * output per plane): GlobalAveragePool, which sums in q8_row_sum16's
 * order in double where AveragePool sums the window in float in order.
 * Selfie segmentation's ten squeeze-excite pools (16 x 16 to 128 x 128
 * windows) are this; on an H200 they took 0.87 of its 2.4 ms, one thread
 * per window. The mean is as close to the exact one or closer; the last
 * bits differ from the AveragePool's. */
static q8_status try_whole_pool(pctx *c, q8_node *n, bool *hit, q8_error *err) {
    const q8_tensor *x = q8_graph_tensor(c->g, n->n_inputs == 1 ? n->inputs[0] : -1);
    if (!x || !x->shape_known || x->dtype != Q8_F32 || x->ndim < 3 || n->n_outputs != 1)
        return Q8_OK;
    int nsp = x->ndim - 2;
    const q8_attr *k = q8_attr_find(n, "kernel_shape"), *pads = q8_attr_find(n, "pads"),
                  *dil = q8_attr_find(n, "dilations");
    const char *ap = q8_attr_str(n, "auto_pad", "NOTSET");
    if (!k || k->type != Q8_ATTR_INTS || k->n != nsp) return Q8_OK;
    if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0) return Q8_OK;
    for (int d = 0; d < nsp; d++)
        if (k->ints[d] != x->dims[2 + d]) return Q8_OK;
    for (int d = 0; pads && d < pads->n; d++)
        if (pads->type != Q8_ATTR_INTS || pads->ints[d] != 0) return Q8_OK;
    for (int d = 0; dil && d < dil->n; d++)
        if (dil->type != Q8_ATTR_INTS || dil->ints[d] != 1) return Q8_OK;
    int in = n->inputs[0];
    Q8_TRY(rewrite(c->g, n, "GlobalAveragePool", &in, 1, err));
    *hit = true;
    return q8_node_reinfer(c->g, n, err);
}

q8_status q8_pass_fuse_patterns(q8_graph *g, q8_error *err) {
    pctx c = {.g = g, .uses = calloc((size_t)g->n_tensors + 1, sizeof(int))};
    if (!c.uses) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status s = Q8_OK;
    q8_graph_consumers(g, c.uses);
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        q8_node *n = g->nodes[i];
        bool hit = false;
        if (is_op(n, "Div")) s = try_layernorm(&c, n, &hit, err);
        else if (is_op(n, "Erf") && n->n_inputs == 1) s = try_gelu(&c, n, &hit, err);
        else if (is_op(n, "Mul")) s = try_hardswish(&c, n, &hit, err);
        else if (is_op(n, "Max") || is_op(n, "Min")) s = try_bound(&c, n, &hit, err);
        else if (is_op(n, "AveragePool")) s = try_whole_pool(&c, n, &hit, err);
        if (s == Q8_OK && !hit && (is_op(n, "Div") || is_op(n, "Mul")))
            s = try_relu6_forms(&c, n, &hit, err);
        /* a rewrite changes who reads what (and may add a constant): count again */
        if (hit && s == Q8_OK) {
            int *u = realloc(c.uses, sizeof(int) * ((size_t)g->n_tensors + 1));
            if (!u) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            else q8_graph_consumers(g, c.uses = u);
        }
    }
    free(c.uses);
    q8_graph_compact(g);
    return s;
}
