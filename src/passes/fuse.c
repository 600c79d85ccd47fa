/* Fusion: an activation that follows a GEMM-like node (Conv, ConvTranspose,
 * Gemm, MatMul) moves into that node's epilogue, applied while the output
 * tile is still in cache. The producer carries it as internal attributes
 * _act ("Relu", "Clip", "LeakyRelu", and for FP32 graphs "HardSwish",
 * "HardSigmoid", "Sigmoid") with _act_min/_act_max/_act_alpha/_act_beta.
 * In INT8 graphs an int8 Relu after a q8.QAdd (a residual block's sum)
 * moves into the sum's clamp the same way (_act = "Relu"), and so does an
 * int8 Relu after a MaxPool of a q8.QConv's output (Conv -> MaxPool -> Relu,
 * a VGG-style block): max commutes with the clamp at 0, so the conv's
 * clamp gives the same bytes and the Relu's pass over the pooled map goes. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "passes.h"

static bool is_op(const q8_node *n, const char *op) {
    return !*n->domain && strcmp(n->op_type, op) == 0;
}

/* The int8 tensor t's per-tensor scale, or 0. */
static float i8_scale(const q8_graph *g, int t) {
    const q8_tensor *x = g->tensors[t];
    return x->dtype == Q8_I8 && x->q.n == 1 && x->q.zero_point == 0 ? x->q.scale[0] : 0.0f;
}

/* Relu a reads the one output of a MaxPool that reads the one int8 output
 * of a q8.QConv without an activation, each read only there, all three
 * tensors on one scale: that QConv, else NULL. */
static q8_node *qconv_under_pool(const q8_graph *g, const q8_node *a, const int *uses) {
    int x = a->inputs[0];
    const q8_node *mp = g->nodes[g->tensors[x]->producer];
    if (!is_op(a, "Relu") || !is_op(mp, "MaxPool") || mp->dead || mp->outputs[0] != x) return NULL;
    if (mp->n_outputs > 1 && mp->outputs[1] >= 0) return NULL; /* Indices */
    int c = mp->inputs[0];
    if (c < 0 || g->tensors[c]->producer < 0 || uses[c] != 1 || q8_graph_is_output(g, c))
        return NULL;
    q8_node *qc = g->nodes[g->tensors[c]->producer];
    if (qc->dead || strcmp(qc->domain, "q8") || strcmp(qc->op_type, "QConv") ||
        qc->outputs[0] != c || q8_attr_find(qc, "_act"))
        return NULL;
    float s = i8_scale(g, c);
    if (s <= 0 || i8_scale(g, x) != s || i8_scale(g, a->outputs[0]) != s) return NULL;
    return qc;
}

/* The int8 value of Clip a's bound input i (1: min, 2: max), or dflt when
 * absent; false if it is not an int8 constant scalar. */
static bool i8_bound(const q8_graph *g, const q8_node *a, int i, int32_t dflt, int32_t *v) {
    *v = dflt;
    if (a->n_inputs <= i || a->inputs[i] < 0) return true;
    const q8_tensor *t = g->tensors[a->inputs[i]];
    if (!t->data || t->dtype != Q8_I8 || q8_tensor_numel(t) != 1) return false;
    *v = *(const int8_t *)t->data;
    return true;
}

/* An int8 Clip with int8 constant bounds that reads, at its own scale s, the
 * one int8 output of a q8.QConv or q8.QGemm (read only there) whose clamp is
 * none, Relu or Clip: the producer's clamp becomes the intersection of
 * both, and the Clip's pass over the map goes: the same bytes. The epilogue
 * makes its integer bounds as round(bound / s), which does not decrease as
 * the bound grows, so the larger of two float lower bounds (the smaller of
 * two upper ones) rounds to the larger of their integers; a Clip's integer
 * bound k is written as k * s, within k * 2^-24 of k steps, so it rounds
 * back to k. FaceRes writes its 25 ReLU6 as Relu -> Min(6): in INT8 a
 * QConv with a Relu clamp and an int8 Clip after it. Returns the producer
 * (*flo, *fhi: its new bounds), or NULL. */
static q8_node *i8_clip_into_producer(const q8_graph *g, const q8_node *a, const int *uses,
                                      float *flo, float *fhi) {
    if (!is_op(a, "Clip") || a->n_outputs != 1) return NULL;
    int x = a->inputs[0];
    const q8_tensor *xt = g->tensors[x];
    float sc = i8_scale(g, x);
    if (sc <= 0 || i8_scale(g, a->outputs[0]) != sc || xt->producer < 0 || uses[x] != 1 ||
        q8_graph_is_output(g, x))
        return NULL;
    int32_t clo, chi;
    if (!i8_bound(g, a, 1, -128, &clo) || !i8_bound(g, a, 2, 127, &chi) || clo > chi)
        return NULL;
    q8_node *p = g->nodes[xt->producer];
    if (p->dead || strcmp(p->domain, "q8") ||
        (strcmp(p->op_type, "QConv") && strcmp(p->op_type, "QGemm")) || p->outputs[0] != x)
        return NULL;
    const char *act = q8_attr_str(p, "_act", NULL);
    float lo = -INFINITY, hi = INFINITY;
    if (act && !strcmp(act, "Relu")) {
        lo = 0;
    } else if (act && !strcmp(act, "Clip")) {
        lo = q8_attr_float(p, "_act_min", -INFINITY);
        hi = q8_attr_float(p, "_act_max", INFINITY);
    } else if (act) {
        return NULL;
    }
    float l = (float)clo * sc, h = (float)chi * sc;
    *flo = l > lo ? l : lo;
    *fhi = h < hi ? h : hi;
    return *flo <= *fhi ? p : NULL; /* false too for a NaN bound */
}

/* p's fused activation: _act = op, _act_min/_act_max/_act_alpha/_act_beta
 * = v[0..3]. */
static q8_status set_act(q8_node *p, const char *op, const float v[4], q8_error *err) {
    /* each set may move the attribute array: use the pointer at once */
    q8_attr *at = q8_node_set_attr(p, "_act", Q8_ATTR_STRING);
    if (!at || !(at->s = q8_strdup(op))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    static const char *const names[4] = {"_act_min", "_act_max", "_act_alpha", "_act_beta"};
    for (int k = 0; k < 4; k++) {
        q8_attr *a = q8_node_set_attr(p, names[k], Q8_ATTR_FLOAT);
        if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        a->f = v[k];
    }
    return Q8_OK;
}

/* Activation a is gone: `last`, the producer of a's input, writes a's
 * output instead. */
static void take_output(q8_graph *g, q8_node *last, q8_node *a) {
    int producer = g->tensors[a->inputs[0]]->producer;
    last->outputs[0] = a->outputs[0];
    g->tensors[a->outputs[0]]->producer = producer;
    a->dead = true;
}

static bool gemm_like(const q8_node *n) {
    return is_op(n, "Conv") || is_op(n, "ConvTranspose") || is_op(n, "Gemm") || is_op(n, "MatMul");
}

/* Read the activation's parameters; false if it cannot be fused. Smooth
 * activations (HardSwish, HardSigmoid, Sigmoid) only when `smooth`: the
 * INT8 kernels' epilogues do Relu/Clip/LeakyRelu only, so the quantizer's
 * FP32 graph keeps the others as nodes (they become table lookups). */
static bool act_params(const q8_graph *g, const q8_node *a, bool smooth, float *lo, float *hi,
                       float *alpha, float *beta) {
    *lo = -INFINITY;
    *hi = INFINITY;
    *alpha = 0;
    *beta = 0;
    if (is_op(a, "Relu")) return a->n_inputs == 1;
    if (smooth && (is_op(a, "HardSwish") || is_op(a, "Sigmoid"))) return a->n_inputs == 1;
    if (smooth && is_op(a, "HardSigmoid")) {
        *alpha = q8_attr_float(a, "alpha", 0.2f);
        *beta = q8_attr_float(a, "beta", 0.5f);
        return a->n_inputs == 1;
    }
    if (is_op(a, "LeakyRelu")) {
        *alpha = q8_attr_float(a, "alpha", 0.01f);
        return a->n_inputs == 1;
    }
    if (is_op(a, "Clip")) {
        for (int i = 1; i <= 2; i++) {
            const q8_tensor *t = q8_in(g, a, i);
            if (!t) continue;
            if (!t->data || t->dtype != Q8_F32 || q8_tensor_numel(t) != 1) return false;
            *(i == 1 ? lo : hi) = *(const float *)t->data;
        }
        return true;
    }
    return false;
}

q8_status q8_pass_fuse_activations(q8_graph *g, bool smooth, q8_error *err) {
    int *uses = calloc((size_t)g->n_tensors + 1, sizeof(int));
    if (!uses) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_graph_consumers(g, uses);
    q8_status s = Q8_OK;
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        q8_node *a = g->nodes[i];
        if (a->dead || a->n_inputs < 1 || a->inputs[0] < 0 || a->n_outputs < 1) continue;
        float lo, hi, alpha, beta;
        q8_node *qp = i8_clip_into_producer(g, a, uses, &lo, &hi);
        if (qp) {
            s = set_act(qp, "Clip", (float[4]){lo, hi, 0, 0}, err);
            if (s != Q8_OK) break;
            take_output(g, qp, a);
            s = q8_node_reinfer(g, qp, err);
            continue;
        }
        if (!act_params(g, a, smooth, &lo, &hi, &alpha, &beta)) continue;
        int x = a->inputs[0];
        const q8_tensor *xt = g->tensors[x];
        if (xt->producer < 0 || uses[x] != 1 || q8_graph_is_output(g, x)) continue;
        q8_node *p = g->nodes[xt->producer];
        q8_node *pool = NULL;
        q8_node *qc = xt->dtype == Q8_I8 ? qconv_under_pool(g, a, uses) : NULL;
        if (qc) { /* the clamp goes to the conv under the pool */
            pool = p;
            p = qc;
        }
        /* quantize's graph: a Clip after a GEMM-like node with a fused Relu
         * joins it as one Clip(max(lo, 0), hi), so that calibration ranges
         * the clipped map (FaceRes writes ReLU6 as Relu -> Min(6): the int8
         * map took the unclipped range's coarser step). Not in a run's
         * graph, where the fused Relu makes a NaN 0 and a Clip keeps it. */
        bool relu_clip = !smooth && !pool && is_op(a, "Clip") &&
                         !strcmp(q8_attr_str(p, "_act", ""), "Relu") && (lo > 0 ? lo : 0) <= hi;
        if (relu_clip) lo = lo > 0 ? lo : 0;
        if (p->dead || (q8_attr_find(p, "_act") && !relu_clip) || (!pool && p->outputs[0] != x))
            continue;
        bool qadd_relu = xt->dtype == Q8_I8 && is_op(a, "Relu") && !strcmp(p->domain, "q8") &&
                         !strcmp(p->op_type, "QAdd");
        if (!pool && !qadd_relu && (xt->dtype != Q8_F32 || !gemm_like(p))) continue;
        s = set_act(p, a->op_type, (float[4]){lo, hi, alpha, beta}, err);
        if (s != Q8_OK) break;
        /* the Relu's output becomes its producer's (the pool's, if any) */
        take_output(g, pool ? pool : p, a);
        s = q8_node_reinfer(g, p, err);
        if (s == Q8_OK && pool) s = q8_node_reinfer(g, pool, err);
    }
    free(uses);
    q8_graph_compact(g);
    return s;
}
