/* In an INT8 graph, DequantizeLinear -> Mul -> QuantizeLinear of two int8
 * activations (the quantizer's float path for a squeeze-excite gate, whose
 * integer requantization cost accuracy: rewrite.c keep_qbins_before_int8)
 * becomes one q8.QMulF (src/core/ops/qmul.h) computing the same float
 * operations in one pass: the same bytes, without the two float tensors
 * written and read back (MobileNetV3's gates: 18% of its INT8 time in the
 * three nodes). The dequantizes stay where something else reads them. */
#include <string.h>

#include "op.h"
#include "ops/qmul.h"
#include "passes.h"

static bool is_onnx_op(const q8_node *n, const char *op) {
    return n && !n->dead && !*n->domain && !strcmp(n->op_type, op);
}

/* Input 2 absent, or a constant int8 zero. */
static bool zero_point_0(const q8_graph *g, const q8_node *n) {
    if (n->n_inputs < 3 || n->inputs[2] < 0) return true;
    const q8_tensor *z = g->tensors[n->inputs[2]];
    return z->data && z->dtype == Q8_I8 && q8_tensor_numel(z) == 1 && *(const int8_t *)z->data == 0;
}

/* Float tensor t is DequantizeLinear(x8) of an int8 activation x8 whose
 * own per-tensor scale is the dequantize's: *x8 and *scale. */
static bool dequantized(const q8_graph *g, int t, int *x8, float *scale) {
    int p = g->tensors[t]->producer;
    const q8_node *d = p >= 0 ? g->nodes[p] : NULL;
    if (!is_onnx_op(d, "DequantizeLinear") || d->n_inputs < 2 || !zero_point_0(g, d) ||
        !q8_const_scale(g, d->inputs[1], scale))
        return false;
    const q8_tensor *x = g->tensors[d->inputs[0]];
    if (x->data || x->dtype != Q8_I8 || x->q.n != 1 || !x->q.scale || x->q.scale[0] != *scale ||
        x->q.zero_point != 0)
        return false;
    *x8 = d->inputs[0];
    return true;
}


static q8_status try_fuse(q8_graph *g, q8_node *q, const int *uses, q8_error *err) {
    float sy, s[2];
    int x8[2];
    if (q->n_inputs < 2 || q->n_outputs != 1 || !zero_point_0(g, q) ||
        !q8_const_scale(g, q->inputs[1], &sy) || q8_out(g, q, 0)->dtype != Q8_I8)
        return Q8_OK;
    int v = q->inputs[0];
    const q8_tensor *vt = g->tensors[v];
    q8_node *m = vt->producer >= 0 ? g->nodes[vt->producer] : NULL;
    if (!is_onnx_op(m, "Mul") || m->n_inputs != 2 || m->n_outputs != 1 || uses[v] != 1 ||
        q8_graph_is_output(g, v) || vt->dtype != Q8_F32)
        return Q8_OK;
    for (int k = 0; k < 2; k++)
        if (!dequantized(g, m->inputs[k], &x8[k], &s[k])) return Q8_OK;
    const q8_tensor *a = g->tensors[x8[0]], *b = g->tensors[x8[1]];
    int ai = a->ndim == vt->ndim && !memcmp(a->dims, vt->dims, sizeof(int64_t) * (size_t)a->ndim) &&
                     q8_qmul_broadcasts(a, b, NULL)
                 ? 0
             : b->ndim == vt->ndim && !memcmp(b->dims, vt->dims, sizeof(int64_t) * (size_t)b->ndim) &&
                     q8_qmul_broadcasts(b, a, NULL)
                 ? 1
                 : -1;
    if (ai < 0) return Q8_OK;
    /* the product is commutative in float: A is the full-shape side */
    int in[2] = {x8[ai], x8[1 - ai]}, out = q->outputs[0];
    Q8_TRY(q8_node_make_q8_op(m, "QMulF", true, err));
    Q8_TRY(q8_node_attr_float(m, "a_scale", s[ai], err));
    Q8_TRY(q8_node_attr_float(m, "b_scale", s[1 - ai], err));
    Q8_TRY(q8_node_attr_float(m, "y_scale", sy, err));
    Q8_TRY(q8_node_set_io(m, in, 2, &out, 1, err));
    g->tensors[out]->producer = vt->producer;
    g->tensors[v]->producer = -1; /* the float product is gone */
    q->dead = true;
    m->op = q8_op_lookup("q8", "QMulF");
    Q8_ASSERT(m->op != Q8_OP_NONE);
    return q8_node_reinfer(g, m, err);
}

q8_status q8_pass_fuse_float_muls(q8_graph *g, q8_error *err) {
    int *uses = calloc((size_t)g->n_tensors + 1, sizeof(int));
    if (!uses) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_graph_consumers(g, uses);
    q8_status s = Q8_OK;
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++)
        if (is_onnx_op(g->nodes[i], "QuantizeLinear")) s = try_fuse(g, g->nodes[i], uses, err);
    free(uses);
    q8_graph_compact(g);
    return s == Q8_OK ? q8_pass_dce(g, err) : s;
}
