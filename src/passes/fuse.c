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
        if (p->dead || q8_attr_find(p, "_act") || (!pool && p->outputs[0] != x)) continue;
        bool qadd_relu = xt->dtype == Q8_I8 && is_op(a, "Relu") && !strcmp(p->domain, "q8") &&
                         !strcmp(p->op_type, "QAdd");
        if (!pool && !qadd_relu && (xt->dtype != Q8_F32 || !gemm_like(p))) continue;
        /* each set may move the attribute array: use the pointer at once */
        q8_attr *at = q8_node_set_attr(p, "_act", Q8_ATTR_STRING);
        if (!at || !(at->s = q8_strdup(a->op_type))) {
            s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        const char *names[4] = {"_act_min", "_act_max", "_act_alpha", "_act_beta"};
        float vals[4] = {lo, hi, alpha, beta};
        for (int k = 0; k < 4 && s == Q8_OK; k++) {
            q8_attr *v = q8_node_set_attr(p, names[k], Q8_ATTR_FLOAT);
            if (!v) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            else v->f = vals[k];
        }
        if (s != Q8_OK) break;
        /* the Relu's output becomes its producer's (the pool's, if any) */
        q8_node *last = pool ? pool : p;
        last->outputs[0] = a->outputs[0];
        g->tensors[a->outputs[0]]->producer = xt->producer;
        a->dead = true;
        s = q8_node_reinfer(g, p, err);
        if (s == Q8_OK && pool) s = q8_node_reinfer(g, pool, err);
    }
    free(uses);
    q8_graph_compact(g);
    return s;
}
