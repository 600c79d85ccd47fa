/* The INT8 rewrite (see docs/int8-ops.md and docs/quantization.md).
 *
 * 1. Classify nodes: QCOMPUTE (Conv, ConvTranspose, Gemm and MatMul with a
 *    constant weight, MatMul of two activations), PASS (ops that carry int8
 *    unchanged: Relu, Clip, MaxPool, views, Transpose, Slice, Pad, Concat,
 *    nearest and linear Resize),
 *    LUT (elementwise functions of one int8 input, run as a table: the
 *    lut_ops, and Add/Sub/Mul/Div by a constant scalar), QBIN (the Add of
 *    two activations of one shape, or their Mul, one side possibly a
 *    per-channel gate, whose result an int8 layer reads: residual sums,
 *    squeeze-excite scaling), QPOOL (GlobalAveragePool of an int8 tensor
 *    that an int8 layer reads: squeeze-excite's squeeze, a classifier's
 *    pooling), FP32 (the rest, and --fp32-layers).
 * 2. Walk the nodes in order and decide which tensors exist in int8: the
 *    outputs of QCOMPUTE nodes that some consumer can take in int8, and the
 *    outputs of PASS nodes whose input is int8.
 * 3. Rewrite: the int8 version of tensor t is a new tensor "t_q8"; the FP32
 *    name t stays for the float version (made by DequantizeLinear where a
 *    float consumer or the graph output needs it), so graph outputs keep
 *    their names. FP32 inputs of QCOMPUTE nodes get a QuantizeLinear.
 */
#include "quantize.h"

#include "calib_span.h"

#include <math.h>
#include <string.h>

#include "control.h"
#include "op.h"
#include "ops/ewchain_kinds.h"
#include "ops/qmul.h"
#include "ops/resize.h"
#include "passes.h"
#include "scale16.h"

enum { K_FP32 = 0, K_QCOMPUTE, K_PASS, K_LUT, K_QBIN, K_QPOOL };

/* Elementwise float functions that run on int8 as a 256-entry table. */
static const char *const lut_ops[] = {"HardSwish", "HardSigmoid", "Sigmoid", "Tanh", "Gelu",
                                      "LeakyRelu", "Elu", "Selu", "Softplus", "Softsign"};

/* Elementwise binary ops that run on int8 as a table when the other input is
 * a constant scalar (scale-and-shift blocks: PP-LCNetV3's learnable affine
 * Mul + Add around every activation). */
static const char *const lut_scalar_ops[] = {"Add", "Sub", "Mul", "Div"};

/* The int8 weights made from a constant, and what they were made for: a
 * node of the same op and weight attributes reuses them (the copies of an
 * unrolled Loop body share one weight tensor). */
struct wkey {
    int wq;             /* 0: none yet (tensor 0 is never a quantized weight) */
    char op[16];
    int64_t transb, group;
    float alpha;
};

typedef struct qctx {
    q8_graph *g;
    const q8_calibration *cal;
    q8_meta *meta;
    q8_error *err;
    int n_orig_tensors;
    int *kind;          /* per original node */
    int *q8ver;         /* per original tensor: index of its int8 version, -1 */
    bool *need_f32;     /* per original tensor: some FP32 consumer or output reads it */
    int *order;         /* new node order (node indices) */
    int n_order;
    int *consumers;     /* per tensor: number of live consumers */
    float *forced;      /* per tensor: output scale imposed by a Concat, or 0 */
    struct wkey *wq_of; /* per original tensor: the int8 weights made from it */
    /* per original tensor made by a table: its 256 values before rounding and
     * the int8 tensor they are indexed by, so that a table reading only it
     * composes with it in float (one rounding for a chain, not one per op) */
    float **lut_f;
    int *lut_src;
    int64_t *lut_c;     /* per tensor made by a table: its channels (1: one table) */
    float *tail_thr;    /* per tensor: a range that replaces the calibrated one, or 0
                           (output_ranges_full) */
} qctx;

static bool is_op(const q8_node *n, const char *op) {
    return !*n->domain && strcmp(n->op_type, op) == 0;
}

static bool listed(const q8_quant_options *o, const char *name) {
    for (int i = 0; o && i < o->n_fp32_layers; i++)
        if (strcmp(o->fp32_layers[i], name) == 0) return true;
    return false;
}

static float threshold(const qctx *c, int t) {
    if (t >= 0 && t < c->cal->n_tensors && c->tail_thr && c->tail_thr[t] > 0) return c->tail_thr[t];
    return t >= 0 && t < c->cal->n_tensors ? c->cal->threshold[t] : 0.0f;
}

static bool calibrated(const qctx *c, int t) { return threshold(c, t) > 0; }

static bool const_f32(const q8_tensor *t) { return t && t->data && t->dtype == Q8_F32; }

static bool f32_act(const q8_tensor *t) { return t && !t->data && t->dtype == Q8_F32; }

static bool same_shape(const q8_tensor *a, const q8_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}


/* The input of a QBIN Mul that has the output's shape (A of q8.QMul). */
static int qmul_a(const q8_graph *g, const q8_node *n) {
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1), *y = q8_out(g, n, 0);
    if (same_shape(x, y) && q8_qmul_broadcasts(x, w, NULL)) return 0;
    return same_shape(w, y) && q8_qmul_broadcasts(w, x, NULL) ? 1 : -1;
}

/* ---- classification ---- */

/* A float q8.EwChain of one SiLU step (quantize's graph makes them:
 * q8_pass_fuse_swish): x * sigmoid(x), a function of one tensor, so one
 * table instead of the Sigmoid's table and a product of two activations. */
static bool is_swish(const q8_node *n) {
    if (strcmp(n->domain, "q8") || strcmp(n->op_type, "EwChain") || n->n_inputs != 1 ||
        q8_attr_find(n, "x_scale") || q8_attr_find(n, "y_scale"))
        return false;
    const q8_attr *st = q8_attr_find(n, "steps");
    return st && st->type == Q8_ATTR_INTS && st->n == 1 && st->ints[0] == Q8_EW_SWISH;
}

bool q8_is_table_op(const q8_node *n) {
    for (size_t i = 0; i < sizeof lut_ops / sizeof lut_ops[0]; i++)
        if (is_op(n, lut_ops[i])) return true;
    for (size_t i = 0; i < sizeof lut_scalar_ops / sizeof lut_scalar_ops[0]; i++)
        if (is_op(n, lut_scalar_ops[i])) return true;
    return false;
}

bool q8_is_quant_layer(const q8_node *n) {
    if (is_op(n, "Conv") || is_op(n, "ConvTranspose") || is_op(n, "Gemm") || is_op(n, "MatMul") ||
        is_op(n, "Gather")) /* Gather: an embedding table (gather_tables.c) */
        return true;
    if (is_swish(n)) return true; /* a SiLU, by its Sigmoid's name */
    for (size_t i = 0; i < sizeof lut_ops / sizeof lut_ops[0]; i++)
        if (is_op(n, lut_ops[i])) return true;
    return false;
}

/* The activation input of a table op: 0 for the unary ones; for a binary op
 * with a constant scalar on one side, the other side (else -1). */
static int lut_input(const q8_graph *g, const q8_node *n) {
    /* equalize.c's per-channel Muls and the activations it put between
     * them: input 0, the other inputs constants */
    if (q8_attr_int(n, "_eq", 0)) return 0;
    if (n->n_inputs == 1 || is_op(n, "PRelu")) return 0;
    if (n->n_inputs != 2) return -1;
    for (int k = 0; k < 2; k++) {
        const q8_tensor *a = q8_in(g, n, k), *b = q8_in(g, n, 1 - k);
        if (f32_act(a) && const_f32(b) && q8_tensor_numel(b) == 1) return k;
    }
    return -1;
}

bool q8_has_prelu(const q8_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        if (is_op(g->nodes[i], "PRelu")) return true;
    return false;
}

bool q8_has_scalar_ops(const q8_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < sizeof lut_scalar_ops / sizeof lut_scalar_ops[0]; k++)
            if (is_op(g->nodes[i], lut_scalar_ops[k]) && lut_input(g, g->nodes[i]) >= 0)
                return true;
    return false;
}

/* A Resize carries int8 at its input's scale when it copies values
 * (nearest: U-Net's upsampling between INT8 convolutions) or interpolates
 * them (linear over at most two dims: integer weights, a convex combination
 * that stays inside the input's range; src/core/ops/resize.h), and its roi,
 * scales and sizes are constants. tf_crop_and_resize stays FP32 (its
 * extrapolation_value is a float outside the input). */
static bool int8_resize(const q8_graph *g, const q8_node *n) {
    const char *mode = q8_attr_str(n, "mode", "nearest");
    bool linear = strcmp(mode, "linear") == 0;
    if ((!linear && strcmp(mode, "nearest") != 0) ||
        strcmp(q8_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
               "tf_crop_and_resize") == 0 || !f32_act(q8_in(g, n, 0)))
        return false;
    for (int i = 1; i < n->n_inputs; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        if (t && !t->data) return false;
    }
    if (!linear) return true;
    const q8_resize_params *p = n->params; /* set by shape inference */
    if (!p) return false;
    int interp = 0;
    for (int d = 0; d < p->rank; d++) interp += p->taps[d] > 1;
    return interp <= Q8_RESIZE_INT_MAX_DIMS;
}

/* Is t written by a MatMul that took in its bias Add (fold_matmul_biases:
 * the only MatMul with a third input)? Its readers keep what they did
 * behind the float Add: a table or a pass-through op that changes values
 * (Relu, Clip, MaxPool, Slice, Pad, Concat, Resize) stays FP32, since int8
 * there would round at the sum's scale first (the MNIST ViT's Gelu table:
 * logits SQNR 32.05 -> 31.90 dB, top-1 980 -> 979 of 1000); views (reshape,
 * transpose) carry the same values at the same scale either way. And t does
 * not count as an int8 source that makes an Add, Mul, pooling or linear
 * Resize int8 (it did not behind the float Add): a transformer's residual
 * sum of the attention output would become a q8.QAdd and round the float
 * residual stream (transformer_tokens_op13: output SQNR 42.8 -> 36.7 dB). */
static bool from_folded(const q8_graph *g, int t) {
    int p = t >= 0 ? g->tensors[t]->producer : -1;
    return p >= 0 && is_op(g->nodes[p], "MatMul") && g->nodes[p]->n_inputs == 3;
}

static bool view_op(const q8_node *n) {
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                        "Transpose", "Identity"};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        if (is_op(n, views[i])) return true;
    return false;
}

static int classify(const qctx *c, const q8_node *n, const q8_quant_options *o);

/* A PRelu slope q8.QPRelu takes: a float32 constant of one value, or of one
 * value per channel of x (dim 1) that broadcasts along that dim only. */
static bool prelu_slope(const q8_tensor *x, const q8_tensor *s) {
    if (!const_f32(s) || s->ndim > x->ndim) return false;
    int64_t n = q8_tensor_numel(s);
    if (n == 1) return true;
    if (x->ndim < 2 || n != x->dims[1]) return false;
    for (int d = 0; d < s->ndim; d++)
        if (s->dims[d] != 1 && x->ndim - s->ndim + d != 1) return false;
    return true;
}

/* Whether the depthwise Conv at the end of the through-activation chain that
 * equalize.c's node n is part of stays FP32 (--fp32-layers, or the search's
 * fallback). Then the chain must not become int8 tables: its first table's
 * output (P's output times u, before the activations) would be rounded at
 * one scale for all channels, the very rounding the equalization is there to
 * avoid, and feed the float D (CenterNet with its first such D in FP32:
 * output SQNR 5.7 -> 2.8 dB). Computed in float from P's equalized int8
 * output instead. */
static bool eq_chain_ends_fp32(const qctx *c, const q8_node *n, const q8_quant_options *o) {
    const q8_graph *g = c->g;
    int t = n->outputs[0];
    for (int step = 0; step < g->n_nodes && t >= 0; step++) {
        int next = -1;
        for (int i = 0; i < g->n_nodes; i++) {
            const q8_node *m = g->nodes[i];
            if (m->dead || m->n_inputs < 1 || m->inputs[0] != t) continue;
            if (q8_attr_int(m, "_eq", 0)) next = m->outputs[0];
            else if (is_op(m, "Conv") && classify(c, m, o) != K_QCOMPUTE) return true;
        }
        t = next;
    }
    return false;
}

static int classify(const qctx *c, const q8_node *n, const q8_quant_options *o) {
    const q8_graph *g = c->g;
    if ((*n->domain && !is_swish(n)) || n->n_outputs < 1 || n->outputs[0] < 0) return K_FP32;
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1), *y = q8_out(g, n, 0);
    bool ok_io = f32_act(x) && y && y->dtype == Q8_F32 && calibrated(c, n->inputs[0]) &&
                 calibrated(c, n->outputs[0]);
    if (is_op(n, "Conv") || is_op(n, "ConvTranspose")) {
        const q8_tensor *b = q8_in(g, n, 2);
        if (listed(o, n->name)) return K_FP32;
        if (ok_io && const_f32(w) && (w->ndim == 3 || w->ndim == 4) && (!b || const_f32(b)))
            return K_QCOMPUTE;
        return K_FP32;
    }
    if (is_op(n, "Gemm")) {
        const q8_tensor *cc = q8_in(g, n, 2);
        if (listed(o, n->name) || !ok_io || !const_f32(w) || w->ndim != 2) return K_FP32;
        if (q8_attr_int(n, "transA", 0) || x->ndim != 2) return K_FP32;
        int64_t N = q8_attr_int(n, "transB", 0) ? w->dims[0] : w->dims[1];
        if (cc && (!const_f32(cc) || !(q8_tensor_numel(cc) == N || q8_tensor_numel(cc) == 1)))
            return K_FP32;
        return K_QCOMPUTE;
    }
    if (is_op(n, "MatMul")) {
        if (listed(o, n->name) || !ok_io || !w) return K_FP32;
        if (const_f32(w) && w->ndim == 2 && x->ndim >= 1) return K_QCOMPUTE;
        if (f32_act(w) && calibrated(c, n->inputs[1]) && x->ndim >= 2 && w->ndim >= 2)
            return K_QCOMPUTE;
        return K_FP32;
    }
    if (q8_attr_int(n, "_eq", 0) && eq_chain_ends_fp32(c, n, o))
        return K_FP32; /* no table of its own either: it would round the same way */
    if (q8_attr_int(n, "_eq", 0) && f32_act(x) && x->ndim >= 3 && y && y->dtype == Q8_F32 &&
        calibrated(c, n->outputs[0]) && !listed(o, n->name))
        return K_LUT; /* part of a per-channel table (equalize.c) */
    bool unary_table = is_swish(n);
    for (size_t i = 0; i < sizeof lut_ops / sizeof lut_ops[0]; i++)
        unary_table |= is_op(n, lut_ops[i]);
    if (unary_table && n->n_inputs == 1 && f32_act(x) && y && y->dtype == Q8_F32 &&
        calibrated(c, n->outputs[0]) && !listed(o, n->name) && !from_folded(g, n->inputs[0]))
        return K_LUT;
    bool prelu = o && o->int8_prelu == Q8_INT8_PRELU_ON; /* AUTO is decided before */
    if (prelu && is_op(n, "PRelu") && n->n_inputs == 2 && ok_io && prelu_slope(x, w) && !listed(o, n->name) &&
        !from_folded(g, n->inputs[0]))
        return K_LUT; /* q8.QPRelu: rewrite_lut */
    if (is_op(n, "GlobalAveragePool") && ok_io && x->ndim >= 2 && !listed(o, n->name))
        return K_QPOOL;
    bool gates = o && o->int8_gates;
    if ((is_op(n, "Add") || (gates && is_op(n, "Mul"))) && n->n_inputs == 2 && ok_io &&
        f32_act(w) && calibrated(c, n->inputs[1]) && !listed(o, n->name) &&
        (is_op(n, "Add") ? same_shape(x, w) && same_shape(x, y) : qmul_a(g, n) >= 0))
        return K_QBIN;
    bool tables = o && o->scalar_tables == Q8_SCALAR_TABLES_ON; /* AUTO is decided before */
    for (size_t i = 0; tables && i < sizeof lut_scalar_ops / sizeof lut_scalar_ops[0]; i++)
        if (is_op(n, lut_scalar_ops[i]) && lut_input(g, n) >= 0 && y && y->dtype == Q8_F32 &&
            q8_tensor_numel(y) == q8_tensor_numel(q8_in(g, n, lut_input(g, n))) &&
            calibrated(c, n->outputs[0]) && !listed(o, n->name) &&
            !from_folded(g, n->inputs[lut_input(g, n)]))
            return K_LUT;
    for (int k = 0; !view_op(n) && k < n->n_inputs; k++)
        if (from_folded(g, n->inputs[k])) return K_FP32;
    if (is_op(n, "Resize")) return int8_resize(g, n) ? K_PASS : K_FP32;
    /* PASS candidates: all other inputs must be constants */
    static const char *const pass_ops[] = {"Relu", "MaxPool", "Reshape", "Flatten", "Squeeze",
                                           "Unsqueeze", "Transpose", "Slice", "Identity",
                                           "Concat", "Clip", "Pad"};
    bool pass = false;
    for (size_t i = 0; i < sizeof pass_ops / sizeof pass_ops[0]; i++) pass |= is_op(n, pass_ops[i]);
    if (!pass || !f32_act(x)) return K_FP32;
    if (is_op(n, "MaxPool") && n->n_outputs > 1 && n->outputs[1] >= 0) return K_FP32;
    if (is_op(n, "Pad")) {
        if (strcmp(q8_attr_str(n, "mode", "constant"), "constant") != 0) return K_FP32;
        const q8_tensor *v = q8_in(g, n, 2);
        if (v && (!v->data || v->dtype != Q8_F32 || *(const float *)v->data != 0.0f)) return K_FP32;
    }
    for (int i = 1; i < n->n_inputs; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        if (t && !t->data && !is_op(n, "Concat")) return K_FP32;
    }
    return K_PASS;
}

/* A constant bias of a [..., N] result: N values along the last axis. */
static bool last_axis_bias(const q8_tensor *b, const q8_tensor *y, int64_t N) {
    if (!const_f32(b) || b->ndim < 1 || b->ndim > y->ndim || b->dims[b->ndim - 1] != N)
        return false;
    for (int d = 0; d < b->ndim - 1; d++)
        if (b->dims[d] != 1) return false;
    return true;
}

/* A MatMul by a constant weight that becomes a q8.QGemm, read only by an
 * Add of a constant bias (PyTorch exports nn.Linear on a rank-3 input so:
 * the MNIST ViT's 12 linear layers): the bias moves into the QGemm, int32
 * in its accumulator (a varint of 2-3 bytes a channel in the file instead
 * of a float), the Add goes, and the QGemm writes the Add's output at its
 * calibrated scale. Before classification: the MatMul carries the bias as a
 * third input, which only the rewrite reads. */
static q8_status fold_matmul_biases(qctx *c, const q8_quant_options *o) {
    q8_graph *g = c->g;
    int *uses = calloc((size_t)g->n_tensors + 1, sizeof(int));
    if (!uses) return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
    q8_graph_consumers(g, uses);
    bool folded = false;
    q8_status s = Q8_OK;
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        q8_node *m = g->nodes[i];
        if (m->dead || !is_op(m, "MatMul") || m->n_inputs != 2 || !const_f32(q8_in(g, m, 1)) ||
            classify(c, m, o) != K_QCOMPUTE)
            continue;
        int y = m->outputs[0];
        if (uses[y] != 1 || q8_graph_is_output(g, y)) continue;
        q8_node *a = NULL;
        for (int j = i + 1; j < g->n_nodes && !a; j++)
            for (int k = 0; k < g->nodes[j]->n_inputs; k++)
                if (g->nodes[j]->inputs[k] == y) a = g->nodes[j];
        if (!a || a->dead || !is_op(a, "Add") || a->n_inputs != 2 || a->n_outputs != 1 ||
            a->outputs[0] < 0 || a->scope != m->scope || listed(o, a->name))
            continue;
        int bi = a->inputs[0] == y ? a->inputs[1] : a->inputs[0];
        const q8_tensor *yt = g->tensors[y], *zt = q8_out(g, a, 0);
        if (!last_axis_bias(g->tensors[bi], yt, q8_in(g, m, 1)->dims[1]) ||
            zt->dtype != Q8_F32 || !same_shape(yt, zt) || !calibrated(c, a->outputs[0]))
            continue;
        int in[3] = {m->inputs[0], m->inputs[1], bi}, out = a->outputs[0];
        s = q8_node_set_io(m, in, 3, &out, 1, c->err);
        a->dead = true;
        folded = true;
    }
    free(uses);
    if (folded) q8_graph_compact(g);
    return s;
}

/* Does node n read tensor t as an int8-capable data input? */
static bool takes_int8(const qctx *c, const q8_node *n, int ni, int t) {
    if (c->kind[ni] == K_QCOMPUTE) {
        if (n->inputs[0] == t) return true;
        return is_op(n, "MatMul") && n->n_inputs > 1 && n->inputs[1] == t && !c->g->tensors[t]->data;
    }
    if (c->kind[ni] == K_LUT) return n->inputs[lut_input(c->g, n)] == t;
    if (c->kind[ni] == K_QBIN) return n->inputs[0] == t || n->inputs[1] == t;
    if (c->kind[ni] == K_QPOOL) return n->inputs[0] == t;
    if (c->kind[ni] == K_PASS) {
        if (is_op(n, "Concat")) {
            for (int k = 0; k < n->n_inputs; k++)
                if (n->inputs[k] == t) return true;
            return false;
        }
        return n->inputs[0] == t;
    }
    return false;
}

/* ---- helpers that add things ---- */

static int add_tensor(qctx *c, const char *base, const char *suffix) {
    char name[600];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    int t = q8_graph_add_tensor_unique(c->g, name);
    if (t < 0) q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
    return t;
}

static q8_status set_scale(q8_tensor *t, float scale, q8_error *err) {
    free(t->q.scale);
    t->q.scale = malloc(sizeof(float));
    if (!t->q.scale) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    t->q.scale[0] = scale;
    t->q.n = 1;
    t->q.axis = -1;
    t->q.zero_point = 0;
    return Q8_OK;
}

static int scalar_const(qctx *c, const char *base, const char *suffix, q8_dtype dt, double v) {
    int t = add_tensor(c, base, suffix);
    if (t < 0) return -1;
    q8_tensor *tt = c->g->tensors[t];
    int64_t one = 1;
    q8_tensor_set_shape(tt, dt, &one, 0);
    if (q8_tensor_alloc_data(tt, c->err) != Q8_OK) return -1;
    if (dt == Q8_F32) *(float *)tt->data = (float)v;
    else if (dt == Q8_I8) *(int8_t *)tt->data = (int8_t)v;
    return t;
}

/* The scope (src/core/control.h) a new node converting tensor t goes in:
 * t's producer's, so that it runs whenever t is computed. */
static int scope_of(const qctx *c, int t) {
    int p = c->g->tensors[t]->producer;
    return p >= 0 ? c->g->nodes[p]->scope : 0;
}

static int new_node(qctx *c, const char *name, const char *op, const int *in, int n_in, int out,
                    int scope) {
    int ni = q8_graph_add_node(c->g, name, op);
    if (ni < 0 || q8_node_set_io(c->g->nodes[ni], in, n_in, &out, 1, c->err) != Q8_OK) {
        q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
        return -1;
    }
    c->g->nodes[ni]->scope = scope;
    c->order[c->n_order++] = ni;
    return ni;
}

static float act_scale(const qctx *c, int t) {
    float s = threshold(c, t) / 127.0f;
    return s > 0 && isfinite(s) ? s : 1.0f;
}

/* The int8 version of float tensor t: existing, or a new QuantizeLinear. */
static int int8_of(qctx *c, int t) {
    if (c->q8ver[t] >= 0) return c->q8ver[t];
    const char *nm = c->g->tensors[t]->name;
    float s = act_scale(c, t);
    int sc = scalar_const(c, nm, "_q8_scale", Q8_F32, s), zp = scalar_const(c, nm, "_q8_zp", Q8_I8, 0);
    int q = add_tensor(c, nm, "_q8");
    if (sc < 0 || zp < 0 || q < 0 || set_scale(c->g->tensors[q], s, c->err) != Q8_OK) return -1;
    nm = c->g->tensors[t]->name; /* tensors may have moved */
    int in[3] = {t, sc, zp};
    char node[600];
    snprintf(node, sizeof node, "%s_quantize", nm);
    if (new_node(c, node, "QuantizeLinear", in, 3, q, scope_of(c, t)) < 0) return -1;
    c->q8ver[t] = q;
    return q;
}

/* After the producer of int8 tensor q (the int8 version of t) is placed:
 * a DequantizeLinear back to t when a float reader needs it. */
static q8_status dequant_if_needed(qctx *c, int t, int q) {
    if (!c->need_f32[t]) return Q8_OK;
    const char *nm = c->g->tensors[t]->name;
    int sc = scalar_const(c, nm, "_dq_scale", Q8_F32, c->g->tensors[q]->q.scale[0]);
    int zp = scalar_const(c, nm, "_dq_zp", Q8_I8, 0);
    if (sc < 0 || zp < 0) return c->err->status;
    char node[600];
    snprintf(node, sizeof node, "%s_dequantize", c->g->tensors[t]->name);
    int in[3] = {q, sc, zp};
    return new_node(c, node, "DequantizeLinear", in, 3, t, scope_of(c, t)) < 0 ? c->err->status
                                                                                : Q8_OK;
}

/* ---- weights ---- */

float q8_weight_scale(float amax) {
    /* an all-zero (or denormal-only) channel keeps scale 1: q = 0; the
     * scale rounds up (<= 2^-11, nothing clipped) to the 16-bit form the
     * file stores in 2 bytes */
    return amax >= 1e-30f ? q8_scale16_ceil(amax / 127.0f) : 1.0f;
}

void q8_quantize_weights(const float *w, int64_t channels, int64_t per, int8_t *q, float *scales) {
    for (int64_t ch = 0; ch < channels; ch++) {
        const float *wc = w + ch * per;
        float amax = 0;
        for (int64_t i = 0; i < per; i++) amax = fmaxf(amax, fabsf(wc[i]));
        float s = q8_weight_scale(amax);
        scales[ch] = s;
        for (int64_t i = 0; i < per; i++) {
            float v = nearbyintf(wc[i] / s); /* round half to even */
            q[ch * per + i] = v != v ? 0 : (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
        }
    }
}

/* A channel whose weights are tiny beside its bias (one that BatchNorm
 * folding left dead: weights ~1e-13, bias -1.6; PoseNet's MobileNetV1 has
 * 16) asks, at the weight scale its weights alone give, for an INT32 bias
 * far past the accumulator's range: clamped, the bias was wrong (a channel
 * that FP32 holds at act(bias) came out elsewhere) and the sum next to it
 * wrapped around (the dead channel read as noise; a depthwise weight of 224
 * downstream made that 6.0 where FP32 has 0). Such a channel's weight scale
 * is raised until its bias fits with room for every product of the row
 * (|sum| <= 127 * 383 * per: signed and unsigned-shifted inputs); its
 * weights, worth less than a level of the bias, round to a few levels or
 * to zero. Only for weights made for this node (shared ones keep theirs). */
static const float *weights_rows(const q8_graph *g, const q8_node *n, int64_t r0, int64_t nr,
                                 int64_t per, float *buf);

static q8_status fit_bias_scales(qctx *c, int ni, int wq, const float *b, bool scalar_b,
                                 float beta, float sx) {
    q8_graph *g = c->g;
    q8_tensor *wt = g->tensors[wq];
    int64_t ch = wt->dims[0], per = ch > 0 ? q8_tensor_numel(wt) / ch : 0;
    double room = 2147483647.0 - 127.0 * 383.0 * (double)per;
    if (room < 16777216.0) room = 16777216.0;
    float *buf = NULL;
    for (int64_t r = 0; r < ch && per > 0; r++) {
        double bv = fabs((double)beta * (scalar_b ? b[0] : b[r]));
        if (!isfinite(bv) || !(bv / ((double)sx * wt->q.scale[r]) > room)) continue;
        float s = q8_scale16_ceil((float)(bv / ((double)sx * room)));
        if (!isfinite(s) || !(s > wt->q.scale[r])) continue;
        if (!buf && !(buf = malloc(sizeof(float) * (size_t)per)))
            return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
        const float *w = weights_rows(g, g->nodes[ni], r, 1, per, buf);
        int8_t *q = (int8_t *)wt->data + r * per;
        for (int64_t i = 0; i < per; i++) {
            float v = nearbyintf(w[i] / s);
            q[i] = v != v ? 0 : (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
        }
        wt->q.scale[r] = s;
    }
    free(buf);
    return Q8_OK;
}

/* INT32 bias in the accumulator scale sx * sw[c]; NULL bias -> -1. */
static int bias_tensor(qctx *c, const char *base, const char *bname, const float *b, int64_t n,
                       bool scalar_b, float beta, float sx, const float *sw) {
    if (!b) return -1;
    int t = add_tensor(c, base, "_q8bias");
    if (t < 0) return -2;
    q8_tensor *tt = c->g->tensors[t];
    q8_tensor_set_shape(tt, Q8_I32, &n, 1);
    if (q8_tensor_alloc_data(tt, c->err) != Q8_OK) return -2;
    int32_t *q = tt->data;
    for (int64_t i = 0; i < n; i++) {
        double v = (double)beta * (scalar_b ? b[0] : b[i]) / ((double)sx * sw[i]);
        if (!isfinite(v)) {
            q8_fail(c->err, Q8_ERR_FORMAT, "bias '%s' holds a non-finite value (%g at element "
                    "%lld): q8 cannot quantize it", bname, (double)(scalar_b ? b[0] : b[i]),
                    (long long)i);
            return -2;
        }
        v = nearbyint(v);
        q[i] = (int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
    }
    return t;
}

/* ---- rewriting one QCOMPUTE node ---- */

static void drop_attr(q8_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) {
            q8_attr_clear(&n->attrs[i]);
            n->attrs[i] = n->attrs[--n->n_attrs];
            return;
        }
}

static q8_status set_op(qctx *c, q8_node *n, const char *op) {
    return q8_node_make_q8_op(n, op, false, c->err);
}

/* Node n's weights as q8.* ops want them: a float [channels, per...]
 * matrix of shape dims (Conv's own; ConvTranspose's [M, C/g, k...]; Gemm's
 * and MatMul's [N, K], times Gemm's alpha). */
static void weights_shape(const q8_graph *g, const q8_node *n, int64_t *dims, int *nd,
                          float *alpha) {
    const q8_tensor *w = q8_in(g, n, 1);
    *alpha = 1.0f;
    *nd = w->ndim;
    memcpy(dims, w->dims, sizeof(int64_t) * (size_t)w->ndim);
    if (is_op(n, "ConvTranspose")) {
        int64_t grp = q8_attr_int(n, "group", 1);
        dims[0] = w->dims[1] * grp;
        dims[1] = w->dims[0] / grp;
    } else if (!is_op(n, "Conv")) {
        bool transb = is_op(n, "Gemm") && q8_attr_int(n, "transB", 0);
        *nd = 2;
        dims[0] = transb ? w->dims[0] : w->dims[1];
        dims[1] = transb ? w->dims[1] : w->dims[0];
        *alpha = is_op(n, "Gemm") ? q8_attr_float(n, "alpha", 1.0f) : 1.0f;
    }
}

/* Rows r0 .. r0 + nr of that matrix (per floats each): a pointer into the
 * weights when they are already laid out so, else written to buf. Made a
 * block at a time so that quantizing never holds a second float copy of a
 * whole weight. */
static const float *weights_rows(const q8_graph *g, const q8_node *n, int64_t r0, int64_t nr,
                                 int64_t per, float *buf) {
    const q8_tensor *w = q8_in(g, n, 1);
    const float *src = w->data;
    if (is_op(n, "Conv")) return src + r0 * per;
    if (is_op(n, "ConvTranspose")) {
        /* ONNX [C, M/g, k...] -> [M, C/g, k...] */
        int64_t Mg = w->dims[1], Cg = w->dims[0] / q8_attr_int(n, "group", 1), k = per / Cg;
        for (int64_t r = r0; r < r0 + nr; r++) {
            int64_t gi = r / Mg, j = r % Mg;
            for (int64_t ci = 0; ci < Cg; ci++)
                memcpy(&buf[((r - r0) * Cg + ci) * k], &src[((gi * Cg + ci) * Mg + j) * k],
                       sizeof(float) * (size_t)k);
        }
        return buf;
    }
    bool transb = is_op(n, "Gemm") && q8_attr_int(n, "transB", 0);
    float alpha = is_op(n, "Gemm") ? q8_attr_float(n, "alpha", 1.0f) : 1.0f;
    int64_t N = transb ? w->dims[0] : w->dims[1], K = per;
    if (transb) {
        for (int64_t i = 0; i < nr * K; i++) buf[i] = alpha * src[r0 * K + i];
    } else {
        for (int64_t k = 0; k < K; k++) /* along rows of src: contiguous reads */
            for (int64_t i = 0; i < nr; i++) buf[i * K + k] = alpha * src[k * N + r0 + i];
    }
    return buf;
}

/* New int8 weight tensor [channels, per...] of node n's weights (shape
 * dims, see weights_shape), per-channel scales on axis 0. */
static int weight_tensor(qctx *c, const q8_node *n, const char *base, const int64_t *dims,
                         int nd) {
    int t = add_tensor(c, base, "_q8");
    if (t < 0) return -1;
    q8_tensor *tt = c->g->tensors[t];
    q8_tensor_set_shape(tt, Q8_I8, dims, nd);
    if (q8_tensor_alloc_data(tt, c->err) != Q8_OK) return -1;
    int64_t ch = dims[0], per = q8_tensor_numel(tt) / (ch ? ch : 1);
    tt->q.scale = malloc(sizeof(float) * (size_t)(ch ? ch : 1));
    int64_t block = per > 0 && per < ((int64_t)1 << 20) ? ((int64_t)1 << 20) / per : 1;
    float *buf = malloc(sizeof(float) * (size_t)(block * per > 0 ? block * per : 1));
    if (!tt->q.scale || !buf) {
        free(buf);
        q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
        return -1;
    }
    tt->q.n = (int)ch;
    tt->q.axis = 0;
    for (int64_t r0 = 0; r0 < ch; r0 += block) {
        int64_t nr = ch - r0 < block ? ch - r0 : block;
        const float *w = weights_rows(c->g, n, r0, nr, per, buf);
        for (int64_t i = 0; i < nr * per; i++)
            if (!isfinite(w[i])) { /* q8_check_weights saw the initializers; this is derived */
                q8_node_fail(c->err, Q8_ERR_FORMAT, n,
                             "weight '%s' holds a non-finite value (%g at element %lld): q8 "
                             "cannot quantize non-finite weights", base, (double)w[i],
                             (long long)(r0 * per + i));
                free(buf);
                return -1;
            }
        q8_quantize_weights(w, nr, per, (int8_t *)tt->data + r0 * per, tt->q.scale + r0);
    }
    free(buf);
    return t;
}

static struct wkey weight_key(const q8_node *n, int wq) {
    struct wkey k = {.wq = wq, .transb = q8_attr_int(n, "transB", 0),
                     .group = q8_attr_int(n, "group", 1), .alpha = q8_attr_float(n, "alpha", 1)};
    snprintf(k.op, sizeof k.op, "%s", n->op_type);
    return k;
}

/* The int8 weights already made from constant src for a node like n, or -1. */
static int same_weights(const qctx *c, const q8_node *n, int src) {
    if (src >= c->n_orig_tensors || !c->wq_of[src].wq) return -1;
    struct wkey a = c->wq_of[src], b = weight_key(n, 0);
    bool same = strcmp(a.op, b.op) == 0 && a.transb == b.transb && a.group == b.group &&
                a.alpha == b.alpha;
    return same ? a.wq : -1;
}

static q8_status rewrite_qcompute(qctx *c, int ni) {
    q8_graph *g = c->g;
    q8_node *n = g->nodes[ni];
    int x = n->inputs[0], y = n->outputs[0];
    bool two_act = is_op(n, "MatMul") && !g->tensors[n->inputs[1]]->data;
    int xq = int8_of(c, x);
    if (xq < 0) return c->err->status;
    n = g->nodes[ni];
    float sx = g->tensors[xq]->q.scale[0];
    int in[3];
    int n_in;
    const char *op;
    if (two_act) {
        int bq = int8_of(c, n->inputs[1]);
        if (bq < 0) return c->err->status;
        n = g->nodes[ni];
        in[0] = xq;
        in[1] = bq;
        n_in = 2;
        op = "QMatMul";
    } else {
        int64_t dims[Q8_MAX_DIMS];
        int nd, src = n->inputs[1];
        float alpha;
        int wq = same_weights(c, n, src);
        bool made = wq < 0;
        if (wq >= 0) {
            nd = g->tensors[wq]->ndim;
            memcpy(dims, g->tensors[wq]->dims, sizeof dims);
        } else {
            weights_shape(g, n, dims, &nd, &alpha);
            wq = weight_tensor(c, n, g->tensors[src]->name, dims, nd);
            if (wq < 0) return c->err->status;
            if (src < c->n_orig_tensors) c->wq_of[src] = weight_key(g->nodes[ni], wq);
        }
        n = g->nodes[ni];
        const q8_tensor *b = q8_in(g, n, 2);
        float beta = is_op(n, "Gemm") ? q8_attr_float(n, "beta", 1.0f) : 1.0f;
        if (made && b && b->data && b->dtype == Q8_F32) {
            Q8_TRY(fit_bias_scales(c, ni, wq, b->data, q8_tensor_numel(b) == 1 && dims[0] != 1,
                                   beta, sx));
            n = g->nodes[ni];
            b = q8_in(g, n, 2);
        }
        int bq = bias_tensor(c, g->tensors[n->inputs[1]]->name, b ? b->name : "",
                             b ? b->data : NULL, dims[0],
                             b && q8_tensor_numel(b) == 1 && dims[0] != 1, beta, sx,
                             g->tensors[wq]->q.scale);
        if (bq == -2) return c->err->status;
        n = g->nodes[ni];
        in[0] = xq;
        in[1] = wq;
        in[2] = bq;
        n_in = bq >= 0 ? 3 : 2;
        op = is_op(n, "Conv") ? "QConv" : is_op(n, "ConvTranspose") ? "QConvTranspose" : "QGemm";
        drop_attr(n, "transA");
        drop_attr(n, "transB");
        drop_attr(n, "alpha");
        drop_attr(n, "beta");
    }
    /* output: int8 when an int8 consumer exists */
    int out = y;
    if (c->q8ver[y] == -2) { /* marked: emit int8 */
        out = add_tensor(c, g->tensors[y]->name, "_q8");
        if (out < 0) return c->err->status;
        n = g->nodes[ni];
        q8_attr *ys = q8_node_set_attr(n, "y_scale", Q8_ATTR_FLOAT);
        if (!ys) return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
        ys->f = c->forced[y] > 0 ? c->forced[y] : act_scale(c, y);
        Q8_TRY(set_scale(g->tensors[out], ys->f, c->err));
        c->q8ver[y] = out;
    }
    Q8_TRY(set_op(c, n, op));
    Q8_TRY(q8_node_set_io(n, in, n_in, &out, 1, c->err));
    c->order[c->n_order++] = ni;
    if (out != y) Q8_TRY(dequant_if_needed(c, y, out));
    return Q8_OK;
}

static bool zero_pad_concat(const qctx *c, const q8_node *n);
static int rescaled(qctx *c, int q, float s);

/* PASS node with an int8 input: same op on int8 tensors. */
static q8_status rewrite_pass(qctx *c, int ni) {
    q8_graph *g = c->g;
    q8_node *n = g->nodes[ni];
    int y = n->outputs[0];
    bool rescale = is_op(n, "Concat") && !zero_pad_concat(c, n); /* before the inputs change */
    float s = 0;
    for (int k = 0; k < n->n_inputs; k++) {
        int t = n->inputs[k];
        if (t < 0 || (k > 0 && !is_op(n, "Concat")) || g->tensors[t]->data) continue;
        n->inputs[k] = c->q8ver[t];
        s = g->tensors[c->q8ver[t]]->q.scale[0];
    }
    if (rescale) {
        /* the Concat's calibrated scale; inputs at another scale rescaled */
        s = act_scale(c, y);
        for (int k = 0; k < n->n_inputs; k++) {
            int q = g->nodes[ni]->inputs[k];
            if (q < 0 || g->tensors[q]->q.scale[0] == s) continue;
            int r = rescaled(c, q, s);
            if (r < 0) return c->err->status;
            g->nodes[ni]->inputs[k] = r;
        }
        n = g->nodes[ni];
    }
    for (int k = 0; is_op(n, "Concat") && k < n->n_inputs; k++) {
        const q8_tensor *z = q8_in(g, n, k);
        if (!z->data) continue;
        /* constant zeros (zero_pad_concat): the same shape in int8 */
        int t = add_tensor(c, z->name, "_q8");
        if (t < 0) return c->err->status;
        z = q8_in(g, n, k);
        q8_tensor *tt = g->tensors[t];
        q8_tensor_set_shape(tt, Q8_I8, z->dims, z->ndim);
        Q8_TRY(q8_tensor_alloc_data(tt, c->err));
        memset(tt->data, 0, (size_t)q8_tensor_numel(tt));
        Q8_TRY(set_scale(tt, s, c->err));
        n = g->nodes[ni];
        n->inputs[k] = t;
    }
    if (is_op(n, "Clip")) {
        /* bounds quantized with the input's scale, as int8 constants */
        for (int k = 1; k <= 2 && k < n->n_inputs; k++) {
            const q8_tensor *b = q8_in(g, n, k);
            if (!b) continue;
            double v = nearbyint(*(const float *)b->data / s);
            v = v != v ? 0 : v > 127 ? 127 : v < -128 ? -128 : v;
            int t = scalar_const(c, g->tensors[y]->name, k == 1 ? "_q8min" : "_q8max", Q8_I8, v);
            if (t < 0) return c->err->status;
            n = g->nodes[ni];
            n->inputs[k] = t;
        }
    }
    if (is_op(n, "Pad") && n->n_inputs > 2 && n->inputs[2] >= 0) {
        int t = scalar_const(c, g->tensors[y]->name, "_q8pad", Q8_I8, 0);
        if (t < 0) return c->err->status;
        n = g->nodes[ni];
        n->inputs[2] = t;
    }
    int out = add_tensor(c, g->tensors[y]->name, "_q8");
    if (out < 0) return c->err->status;
    n = g->nodes[ni];
    Q8_TRY(set_scale(g->tensors[out], s, c->err));
    n->outputs[0] = out;
    c->q8ver[y] = out;
    c->order[c->n_order++] = ni;
    return dequant_if_needed(c, y, out);
}

/* table[i] = y[i] / sy rounded half to even, saturated to int8, NaN 0:
 * QuantizeLinear's rule for the 256 values of a table. */
static void quantize_table(const float *y, float sy, int8_t *table) {
    for (int i = 0; i < 256; i++) {
        float v = y[i] / sy;
        v = v != v ? 0 : nearbyintf(v < -128 ? -128 : v > 127 ? 127 : v);
        table[i] = (int8_t)v;
    }
}

/* A new constant named base + suffix of dtype dt and shape dims, holding
 * the bytes at v; -1 on failure. */
static int const_tensor(qctx *c, const char *base, const char *suffix, q8_dtype dt,
                        const int64_t *dims, int nd, const void *v) {
    int t = add_tensor(c, base, suffix);
    if (t < 0) return -1;
    q8_tensor_set_shape(c->g->tensors[t], dt, dims, nd);
    if (q8_tensor_alloc_data(c->g->tensors[t], c->err) != Q8_OK) return -1;
    memcpy(c->g->tensors[t]->data, v, q8_tensor_nbytes(c->g->tensors[t]));
    return t;
}

/* The tables of ch channels (256 entries each) as constants named base +
 * suffix: one [256] table when all are the same, else the distinct ones
 * [k, 256] and each channel's index into them [ch] (uint8; *it set; at
 * most 256 distinct). Returns the table tensor, -1 on failure. */
static int channel_tables(qctx *c, const char *base, const char *suffix, const int8_t *table,
                          int64_t ch, int *it) {
    *it = -1;
    uint8_t *idx = malloc((size_t)ch);
    int8_t *uniq = malloc((size_t)ch * 256);
    if (!idx || !uniq) {
        free(idx);
        free(uniq);
        q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
        return -1;
    }
    int64_t k = 0;
    for (int64_t r = 0; r < ch && k <= 256; r++) {
        int64_t j = 0;
        while (j < k && memcmp(uniq + j * 256, table + r * 256, 256)) j++;
        if (j == k && k < 256) memcpy(uniq + k++ * 256, table + r * 256, 256);
        else if (j == k) k = 257; /* too many: checked below */
        idx[r] = (uint8_t)j;
    }
    int t = -1;
    if (k > 256) {
        q8_fail(c->err, Q8_ERR_UNSUPPORTED, "'%s': more than 256 distinct channel tables", base);
    } else {
        int64_t d[2] = {k, 256};
        t = k > 1 ? const_tensor(c, base, suffix, Q8_I8, d, 2, uniq)
                  : const_tensor(c, base, suffix, Q8_I8, d + 1, 1, uniq);
        if (t >= 0 && k > 1 && (*it = const_tensor(c, base, "_lut_index", Q8_U8, &ch, 1, idx)) < 0)
            t = -1;
    }
    free(idx);
    free(uniq);
    return t;
}

/* A 256-entry int8 constant named base + suffix holding table; -1 on
 * failure. */
static int table_tensor(qctx *c, const char *base, const char *suffix, const int8_t *table) {
    int64_t d = 256;
    return const_tensor(c, base, suffix, Q8_I8, &d, 1, table);
}

/* Node n becomes a q8.QLut writing scale sy (its attributes replaced). */
static q8_status make_qlut(qctx *c, q8_node *n, float sy) {
    for (int k = 0; k < n->n_attrs; k++) q8_attr_clear(&n->attrs[k]);
    n->n_attrs = 0;
    q8_attr *ys = q8_node_set_attr(n, "y_scale", Q8_ATTR_FLOAT);
    if (!ys) return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
    ys->f = sy;
    return set_op(c, n, "QLut");
}

/* T[ch][q + 128] = quantize(f_ch(q * sx), sy) for the FP32 op of node n,
 * computed by the op's own kernel (constant folding of a one-node graph):
 * xin holds ch rows of 256 inputs, laid out as a [1, ch, 1, ..., 256] tensor
 * of x's rank, so that a per-channel constant [1, ch, 1, ...] broadcasts
 * along its channel (ch 1: a [256] vector). Input xi is the activation; the
 * other inputs, constants (a scalar, per-channel factors, Clip's bounds),
 * are copied with their shapes. */
static q8_status lut_table(const qctx *c, const q8_node *n, int xi, const float *xin, int64_t ch,
                           float sy, int8_t *table, float *yout) {
    q8_graph *t = q8_graph_new();
    if (!t) return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
    int x = q8_graph_add_tensor(t, "x", NULL), y = q8_graph_add_tensor(t, "y", NULL);
    int ni = q8_graph_add_node(t, n->name, n->op_type);
    q8_status s = x < 0 || y < 0 || ni < 0 ? q8_fail(c->err, Q8_ERR_NOMEM, "out of memory") : Q8_OK;
    if (s == Q8_OK && *n->domain) /* q8.EwChain's SiLU */
        s = q8_node_make_q8_op(t->nodes[ni], n->op_type, false, c->err);
    int64_t total = ch * 256;
    if (s == Q8_OK) {
        int64_t d[Q8_MAX_DIMS];
        int rank = 1;
        d[0] = 256;
        if (ch > 1) {
            rank = q8_in(c->g, n, xi)->ndim;
            for (int j = 0; j < rank; j++) d[j] = j == 1 ? ch : 1;
            d[rank - 1] = 256;
        }
        q8_tensor_set_shape(t->tensors[x], Q8_F32, d, rank);
        s = q8_tensor_alloc_data(t->tensors[x], c->err);
    }
    int in[8];
    if (n->n_inputs > 8) s = q8_node_fail(c->err, Q8_ERR_UNSUPPORTED, n, "too many inputs for a table");
    for (int k = 0; s == Q8_OK && k < n->n_inputs; k++) {
        const q8_tensor *src = q8_in(c->g, n, k);
        if (k == xi || !src) {
            in[k] = k == xi ? x : -1;
            continue;
        }
        char nm[16];
        snprintf(nm, sizeof nm, "k%d", k);
        in[k] = q8_graph_add_tensor(t, nm, NULL);
        if (in[k] < 0) {
            s = q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        /* a scalar as a 0-d constant: broadcasting keeps y's shape */
        bool scalar = q8_tensor_numel(src) == 1;
        q8_tensor_set_shape(t->tensors[in[k]], src->dtype, src->dims, scalar ? 0 : src->ndim);
        s = q8_tensor_alloc_data(t->tensors[in[k]], c->err);
        if (s == Q8_OK) memcpy(t->tensors[in[k]]->data, src->data, q8_tensor_nbytes(src));
    }
    if (s == Q8_OK) {
        memcpy(t->tensors[x]->data, xin, (size_t)total * sizeof(float));
        s = q8_node_set_io(t->nodes[ni], in, n->n_inputs, &y, 1, c->err);
    }
    for (int a = 0; s == Q8_OK && a < n->n_attrs; a++)
        if (n->attrs[a].name[0] != '_') s = q8_node_copy_attr(t->nodes[ni], &n->attrs[a], c->err);
    if (s == Q8_OK) s = q8_pass_infer(t, c->err); /* folds the node: y becomes constant */
    if (s == Q8_OK) {
        const q8_tensor *yt = t->tensors[y];
        Q8_ASSERT(yt->data && yt->dtype == Q8_F32 && q8_tensor_numel(yt) == total);
        memcpy(yout, yt->data, (size_t)total * sizeof(float));
        for (int64_t r = 0; r < ch; r++) quantize_table((const float *)yt->data + r * 256, sy, table + r * 256);
    }
    q8_graph_free(t);
    return s;
}

/* Channels of the table node n computes: those of a per-channel constant
 * input, else of the table it composes with (cin), else 1. */
static int64_t lut_channels(const qctx *c, const q8_node *n, int xi, int64_t cin) {
    for (int k = 0; k < n->n_inputs; k++) {
        const q8_tensor *t = k == xi ? NULL : q8_in(c->g, n, k);
        if (t && t->data && q8_tensor_numel(t) > 1) return q8_in(c->g, n, xi)->dims[1];
    }
    return cin;
}

/* LUT node with an int8 input: becomes q8.QLut (one table per channel when
 * a per-channel constant is involved, equalize.c's). */
static q8_status rewrite_qprelu(qctx *c, int ni);

static q8_status rewrite_lut(qctx *c, int ni) {
    q8_graph *g = c->g;
    q8_node *n = g->nodes[ni];
    if (is_op(n, "PRelu")) return rewrite_qprelu(c, ni);
    int xi = lut_input(g, n), x = n->inputs[xi], y = n->outputs[0];
    int xq = c->q8ver[x];
    /* equalize.c's Mul after an activation that others read as well
     * composes anyway: the rescaled copy for the depthwise conv is computed
     * from the table's source, not from x rounded at its own scale */
    bool eq_copy = q8_attr_int(n, "_eq", 0) && c->lut_f[x];
    bool compose = c->lut_f[x] && ((c->consumers[x] == 1 && !c->need_f32[x] &&
                                    !q8_graph_is_output(g, x)) || eq_copy);
    int64_t cin = compose ? c->lut_c[x] : 1, ch = lut_channels(c, n, xi, cin);
    float sy = act_scale(c, y);
    float *xin = malloc(sizeof(float) * 256 * (size_t)ch);
    float *yout = malloc(sizeof(float) * 256 * (size_t)ch);
    int8_t *table = malloc(256 * (size_t)ch);
    if (!xin || !yout || !table) {
        free(xin);
        free(yout);
        free(table);
        return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
    }
    c->lut_f[y] = yout;
    c->lut_c[y] = ch;
    if (compose) {
        /* x is a table's output read only here: compose, reading its input
         * (one table's values for every channel if x had one) */
        for (int64_t r = 0; r < ch; r++)
            memcpy(xin + r * 256, c->lut_f[x] + (cin > 1 ? r * 256 : 0), 256 * sizeof(float));
        xq = c->lut_src[x];
    } else {
        float sx = g->tensors[xq]->q.scale[0];
        for (int64_t r = 0; r < ch; r++)
            for (int q = -128; q < 128; q++) xin[r * 256 + q + 128] = (float)q * sx;
    }
    c->lut_src[y] = xq;
    q8_status s = lut_table(c, n, xi, xin, ch, sy, table, yout);
    int it = -1, tt = s != Q8_OK ? -1 : channel_tables(c, g->tensors[y]->name, "_lut", table, ch, &it);
    free(xin);
    free(table);
    if (s != Q8_OK) return s;
    int out = tt < 0 ? -1 : add_tensor(c, g->tensors[y]->name, "_q8");
    if (tt < 0 || out < 0) return c->err->status;
    Q8_TRY(set_scale(g->tensors[out], sy, c->err));
    n = g->nodes[ni];
    Q8_TRY(make_qlut(c, n, sy));
    int in[3] = {xq, tt, it};
    Q8_TRY(q8_node_set_io(n, in, it >= 0 ? 3 : 2, &out, 1, c->err));
    c->q8ver[y] = out;
    c->order[c->n_order++] = ni;
    return dequant_if_needed(c, y, out);
}

/* Node ni becomes the q8 op `op` of int8 inputs in[] (its attributes
 * replaced by y_scale), writing int8 at its result's calibrated scale. */
static q8_status make_int8_node(qctx *c, int ni, const char *op, const int *in, int n_in) {
    q8_graph *g = c->g;
    int y = g->nodes[ni]->outputs[0];
    int out = add_tensor(c, g->tensors[y]->name, "_q8");
    if (out < 0) return c->err->status;
    q8_node *n = g->nodes[ni];
    float sy = act_scale(c, y);
    Q8_TRY(set_scale(g->tensors[out], sy, c->err));
    for (int k = 0; k < n->n_attrs; k++) q8_attr_clear(&n->attrs[k]);
    n->n_attrs = 0;
    q8_attr *ys = q8_node_set_attr(n, "y_scale", Q8_ATTR_FLOAT);
    if (!ys) return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
    ys->f = sy;
    Q8_TRY(set_op(c, n, op));
    Q8_TRY(q8_node_set_io(n, in, n_in, &out, 1, c->err));
    c->q8ver[y] = out;
    c->order[c->n_order++] = ni;
    return dequant_if_needed(c, y, out);
}

/* A PRelu with an int8 input: q8.QPRelu (its slope input kept as it is).
 * No table: a channel's table is made at run time where its plane is large
 * enough to pay for it (kernels/cpu/ops/qprelu.c), so the file keeps only
 * the slopes (FaceMesh: 2,192 channels of PRelu, 548 KB as tables). A
 * table reading its output does not compose with it (lut_f stays NULL). */
static q8_status rewrite_qprelu(qctx *c, int ni) {
    const q8_node *n = c->g->nodes[ni];
    int in[2] = {c->q8ver[n->inputs[0]], n->inputs[1]};
    return make_int8_node(c, ni, "QPRelu", in, 2);
}

/* QBIN node: q8.QAdd or q8.QMul (A: the full-shape side) of the int8
 * versions of both inputs (a float input gets a quantize). */
static q8_status rewrite_qbin(qctx *c, int ni) {
    q8_graph *g = c->g;
    bool mul = is_op(g->nodes[ni], "Mul");
    int ai = mul ? qmul_a(g, g->nodes[ni]) : 0;
    int aq = int8_of(c, g->nodes[ni]->inputs[ai]);
    int bq = aq < 0 ? -1 : int8_of(c, g->nodes[ni]->inputs[1 - ai]);
    if (aq < 0 || bq < 0) return c->err->status;
    int in[2] = {aq, bq};
    return make_int8_node(c, ni, mul ? "QMul" : "QAdd", in, 2);
}

/* QPOOL node whose input is int8: q8.QGlobalAveragePool. */
static q8_status rewrite_qpool(qctx *c, int ni) {
    int xq = c->q8ver[c->g->nodes[ni]->inputs[0]];
    return make_int8_node(c, ni, "QGlobalAveragePool", &xq, 1);
}

static bool all_zero(const q8_tensor *t) {
    if (!const_f32(t)) return false;
    const float *v = t->data;
    for (int64_t i = 0; i < q8_tensor_numel(t); i++)
        if (v[i] != 0.0f) return false;
    return true;
}

/* A Concat of one int8 tensor with constant zeros (BlazeFace pads channels
 * so before each residual sum): int8 at that tensor's scale, the zeros made
 * int8 (0 is exact at any scale). */
static bool zero_pad_concat(const qctx *c, const q8_node *n) {
    int act = 0;
    for (int k = 0; k < n->n_inputs; k++) {
        const q8_tensor *t = q8_in(c->g, n, k);
        if (!t) return false;
        if (t->data) {
            if (!all_zero(t)) return false;
        } else if (c->q8ver[n->inputs[k]] == -1 || act++) { /* -2: planned, >= 0: made */
            return false;
        }
    }
    return act == 1;
}

/* Concat stays int8 when it only pads one int8 tensor with zeros, or when
 * every input is int8 anyway: those produced by a QCOMPUTE node that feeds
 * nothing else write the Concat's scale; the others (a U-Net's skip
 * connection, which a pooling layer reads too) are rescaled to it by an
 * int8 table (rewrite_pass), the very rounding a dequantize and the FP32
 * Concat's quantize made. */
static bool concat_int8(qctx *c, const q8_node *n) {
    if (zero_pad_concat(c, n)) return true;
    if (!calibrated(c, n->outputs[0])) return false; /* no scale to rescale to */
    for (int k = 0; k < n->n_inputs; k++) {
        int t = n->inputs[k];
        if (t < 0 || c->q8ver[t] != -2) return false;
    }
    return n->n_inputs > 0;
}

/* Does QCOMPUTE output t feed only this Concat, so that it can write the
 * Concat's scale itself? */
static bool writes_concat_scale(const qctx *c, int t) {
    int p = c->g->tensors[t]->producer;
    return p >= 0 && c->kind[p] == K_QCOMPUTE && c->consumers[t] == 1 &&
           !q8_graph_is_output(c->g, t);
}

/* Int8 tensor q (scale sq) at scale s: a q8.QLut whose table is the
 * dequantize-quantize pair, computed as those ops compute it. Returns the
 * new tensor, or -1. */
static int rescaled(qctx *c, int q, float s) {
    float sq = c->g->tensors[q]->q.scale[0], x[256];
    for (int v = -128; v < 128; v++) x[v + 128] = (float)v * sq; /* DequantizeLinear */
    int8_t table[256];
    quantize_table(x, s, table);
    int tt = table_tensor(c, c->g->tensors[q]->name, "_rescale_lut", table);
    int out = tt < 0 ? -1 : add_tensor(c, c->g->tensors[q]->name, "_rescaled");
    if (out < 0 || set_scale(c->g->tensors[out], s, c->err) != Q8_OK) return -1;
    char node[600];
    snprintf(node, sizeof node, "%s_rescale", c->g->tensors[q]->name);
    int in[2] = {q, tt};
    int ni = new_node(c, node, "QLut", in, 2, out, scope_of(c, q));
    return ni < 0 || make_qlut(c, c->g->nodes[ni], s) != Q8_OK ? -1 : out;
}

/* A scalar Add/Sub/Mul/Div runs as a table only where every reader of its
 * output is an int8 node: between int8 layers it saves a dequantize, the FP32
 * op and a quantize; before an FP32 reader (attention's scaling before
 * Softmax) or an output it would only add a rounding. Repeated until no
 * change, since a demoted node demotes the table before it. */
static void keep_scalar_luts_between_int8(qctx *c) {
    const q8_graph *g = c->g;
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < g->n_nodes; i++) {
            const q8_node *n = g->nodes[i];
            if (c->kind[i] != K_LUT || n->n_inputs != 2) continue;
            int y = n->outputs[0];
            bool ok = !q8_graph_is_output(g, y) && c->consumers[y] > 0;
            for (int j = 0; j < g->n_nodes && ok; j++)
                for (int k = 0; k < g->nodes[j]->n_inputs; k++)
                    if (g->nodes[j]->inputs[k] == y && c->kind[j] == K_FP32) ok = false;
            if (!ok) {
                c->kind[i] = K_FP32;
                changed = true;
            }
        }
    }
}

/* Is activation t int8 whatever node `except` does: made by a table, a
 * pass-through op or an int8 Add / Mul, or by an INT8 layer another int8
 * node reads? (Else its INT8 layer would write float32 for `except`.) */
static bool int8_anyway(const qctx *c, int t, int except) {
    const q8_graph *g = c->g;
    int p = g->tensors[t]->producer;
    if (p < 0 || c->kind[p] == K_FP32 || from_folded(g, t)) return false; /* as before the fold */
    if (c->kind[p] != K_QCOMPUTE) return true;
    for (int j = 0; j < g->n_nodes; j++)
        if (j != except && c->kind[j] != K_FP32 && takes_int8(c, g->nodes[j], j, t)) return true;
    return false;
}

/* Node j is an int8 layer: it computes in int8 (a QCOMPUTE, table or
 * pooling node) or passes int8 on (a PASS node other than Concat). */
static bool is_int8_layer(const qctx *c, int j) {
    int k = c->kind[j];
    return k == K_QCOMPUTE || k == K_LUT || k == K_QPOOL ||
           (k == K_PASS && !is_op(c->g->nodes[j], "Concat"));
}

/* Is activation t int8 for a reader other than `except`, a pooling node or
 * a gate Mul? Those three may not justify each other: a squeeze-excite
 * block's GlobalAveragePool and its gate Mul both read the block output, and
 * an INT8 layer's output rounded only for them costs accuracy (see
 * keep_qbins_before_int8). */
static bool int8_for_others(const qctx *c, int t, int except) {
    const q8_graph *g = c->g;
    int p = g->tensors[t]->producer;
    if (p < 0 || c->kind[p] == K_FP32 || from_folded(g, t)) return false; /* as before the fold */
    if (c->kind[p] != K_QCOMPUTE) return true;
    for (int j = 0; j < g->n_nodes; j++) {
        int k = c->kind[j];
        bool gate = k == K_QBIN && is_op(g->nodes[j], "Mul");
        if (j == except || k == K_FP32 || k == K_QPOOL || gate) continue;
        if (takes_int8(c, g->nodes[j], j, t)) return true;
    }
    return false;
}

/* A GlobalAveragePool runs in int8 (q8.QGlobalAveragePool: exact int32
 * sums, one requantization) only where an int8 layer reads its result and
 * its input is int8 for another reader (int8_for_others): then it replaces
 * a dequantize of the whole plane, the float mean and a quantize. Its
 * input's producer is not made to round for it (an INT8 layer read only by
 * it and float ops keeps writing float32), and a result only float readers
 * take stays FP32. Returns whether a node changed. */
static bool keep_qpools_between_int8(qctx *c) {
    const q8_graph *g = c->g;
    bool changed = false;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (c->kind[i] != K_QPOOL) continue;
        int y = n->outputs[0];
        bool reader = false;
        for (int j = 0; j < g->n_nodes && !reader; j++)
            reader = is_int8_layer(c, j) && takes_int8(c, g->nodes[j], j, y);
        if (!reader || !int8_for_others(c, n->inputs[0], i)) {
            c->kind[i] = K_FP32;
            changed = true;
        }
    }
    return changed;
}

/* An Add or Mul of two activations runs in int8 only where an int8 layer (a
 * QCOMPUTE, table or PASS node other than Concat) reads the result and at
 * least one side can come from int8: there it replaces two dequantizes, the
 * float op and a quantize. A result that only float readers or other such
 * ops read stays FP32 (a transformer's residual stream feeds LayerNorm:
 * int8 there would only add roundings, and the layer before it would have
 * to round its output too). A Mul (--int8-gates) also needs both sides int8
 * anyway: a squeeze-excite gate (< 1) makes the product's scale finer than
 * its input's, so rounding an INT8 layer's output only for the Mul costs more
 * than the float path (PP-OCR's angle classifier: output SQNR 43.7 -> 27.8
 * dB). */
static void keep_qbins_before_int8(qctx *c) {
    const q8_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (c->kind[i] != K_QBIN) continue;
        int y = n->outputs[0];
        bool reader = false, source = false;
        for (int j = 0; j < g->n_nodes && !reader; j++) {
            const q8_node *r = g->nodes[j];
            int k = c->kind[j];
            bool int8_layer =
                k == K_QCOMPUTE || k == K_LUT || (k == K_PASS && !is_op(r, "Concat"));
            reader = int8_layer && takes_int8(c, r, j, y);
        }
        bool mul = is_op(n, "Mul");
        for (int s = 0; s < 2; s++) {
            int p = g->tensors[n->inputs[s]]->producer;
            source |= p >= 0 && c->kind[p] != K_FP32 && !from_folded(g, n->inputs[s]);
            if (mul && !int8_anyway(c, n->inputs[s], i)) reader = false;
        }
        if (!reader || !source) c->kind[i] = K_FP32;
    }
}

/* Does int8 tensor t reach int8 compute (an INT8 layer, an int8 Add / Mul
 * or pooling), directly or through pass-through nodes (and, with tables,
 * through tables too)? */
static bool feeds_int8_compute(const qctx *c, int t, bool tables, int depth) {
    const q8_graph *g = c->g;
    for (int j = 0; j < g->n_nodes; j++) {
        int k = c->kind[j];
        if (k == K_FP32 || (k == K_LUT && !tables) || !takes_int8(c, g->nodes[j], j, t))
            continue;
        if (k != K_PASS && k != K_LUT) return true;
        if (depth < 16 && feeds_int8_compute(c, g->nodes[j]->outputs[0], tables, depth + 1))
            return true;
    }
    return false;
}

/* Does int8 t reach a graph output as it is: an output itself, or through
 * tables and views (int8) to one? */
static bool reaches_output(const qctx *c, int t, int depth) {
    const q8_graph *g = c->g;
    if (q8_graph_is_output(g, t)) return true;
    for (int j = 0; j < g->n_nodes && depth < 16; j++) {
        const q8_node *n = g->nodes[j];
        int k = c->kind[j];
        if ((k == K_PASS || k == K_LUT) && takes_int8(c, n, j, t) &&
            reaches_output(c, n->outputs[0], depth + 1))
            return true;
    }
    return false;
}

/* quantize --output-ranges full: an INT8 layer's or table's int8 output
 * that reaches a graph output through tables and views (an output itself,
 * or under a Sigmoid, a Transpose, ...) and feeds no INT8 layer takes the
 * extremes observed on the calibration samples as its range. The methods'
 * ranges clip what is rare, and an output's rare values are often what it
 * is for: CenterNet's heat map (80 x 128 x 128 cells a crop, its objects a
 * few of them) came out under 0.11 with percentile ranges, below its 0.2
 * detection threshold. Layers inside the model keep their ranges. */
static q8_status output_ranges_full(qctx *c) {
    const q8_graph *g = c->g;
    const q8_calibration *cal = c->cal;
    int nt = g->n_tensors;
    if (!cal->hist) return Q8_OK;
    if (!(c->tail_thr = calloc((size_t)nt + 1, sizeof(float))))
        return q8_fail(c->err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        int k = c->kind[i], t = g->nodes[i]->outputs[0];
        if ((k != K_QCOMPUTE && k != K_LUT) || t < 0 || t >= cal->n_tensors ||
            c->q8ver[t] != -2 || !cal->hist[t] || !(cal->threshold[t] > 0))
            continue;
        if (feeds_int8_compute(c, t, true, 0) || !reaches_output(c, t, 0)) continue;
        double a = fmax(fabs(cal->hist[t]->min), fabs(cal->hist[t]->max));
        if (isfinite(a) && a > cal->threshold[t] && a < 3.0e38) c->tail_thr[t] = (float)a;
    }
    return Q8_OK;
}

/* quantize --int8-tails off: tables and views run in int8 only on the way
 * to an INT8 layer, sum or pool. Toward the model's outputs (or float ops)
 * they run in FP32, so the last INT8 layer writes its accumulators
 * dequantized, not rounded to an int8 step at a calibrated range (by
 * default they carry int8 as far as it flows): PoseNet's offsets came out in steps of
 * 0.74 px and its heat-map logits in steps of 0.59 (conv -> Transpose ->
 * output, the Transpose in int8), and CenterNet's heat map (conv ->
 * Sigmoid table -> Transpose) never exceeded 0.110, the percentile range of
 * a map whose peaks are a few cells of 1.3 million, so no object passed
 * its 0.2 threshold. Returns whether a node changed. */
static bool keep_tails_fp32(qctx *c) {
    const q8_graph *g = c->g;
    bool changed = false;
    for (int i = 0; i < g->n_nodes; i++) {
        if (c->kind[i] != K_PASS && c->kind[i] != K_LUT) continue;
        if (!feeds_int8_compute(c, g->nodes[i]->outputs[0], true, 0)) {
            c->kind[i] = K_FP32;
            changed = true;
        }
    }
    return changed;
}

/* A linear Resize carries int8 only toward int8 compute, and only when its
 * input is int8 anyway (int8_anyway: a table's, an int8 Add's, or an INT8
 * layer's that another int8 node reads). Its interpolation rounds at its
 * input's scale: with a float input it would add a rounding to the one the
 * float path has (the layer before it writes float32, a quantize follows
 * the Resize). M-LSD: the decoder's Resize of a conv output only it reads,
 * in int8, cost 1.5 dB of output SQNR; its head (last conv -> linear Resize
 * -> two Slices, one under a table: offsets and score logits in one int8
 * scale) took its line F1 from 0.83 to 0.39. Returns whether a node
 * changed. */
static bool keep_linear_resize_before_compute(qctx *c) {
    const q8_graph *g = c->g;
    bool changed = false;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (c->kind[i] != K_PASS || !is_op(n, "Resize") ||
            strcmp(q8_attr_str(n, "mode", "nearest"), "linear") != 0)
            continue;
        if (!int8_anyway(c, n->inputs[0], i) || !feeds_int8_compute(c, n->outputs[0], false, 0)) {
            c->kind[i] = K_FP32;
            changed = true;
        }
    }
    return changed;
}

/* Forward: mark (-2) the tensors that will exist in int8; PASS, LUT, QBIN
 * and QPOOL nodes without an int8 input become FP32. */
static void mark_int8(qctx *c) {
    q8_graph *g = c->g;
    int nn = g->n_nodes;
    for (int i = 0; i < nn; i++) {
        q8_node *n = g->nodes[i];
        int y = n->outputs[0];
        if (c->kind[i] == K_QCOMPUTE) {
            bool any = false;
            for (int j = 0; j < nn; j++)
                for (int k = 0; k < g->nodes[j]->n_inputs; k++)
                    if (g->nodes[j]->inputs[k] == y && takes_int8(c, g->nodes[j], j, y)) any = true;
            if (any) c->q8ver[y] = -2;
        } else if (c->kind[i] == K_QBIN) {
            if (c->q8ver[n->inputs[0]] == -2 || c->q8ver[n->inputs[1]] == -2) c->q8ver[y] = -2;
            else c->kind[i] = K_FP32;
        } else if (c->kind[i] == K_QPOOL) {
            if (c->q8ver[n->inputs[0]] == -2) c->q8ver[y] = -2;
            else c->kind[i] = K_FP32;
        } else if (c->kind[i] == K_PASS || c->kind[i] == K_LUT) {
            int xi = c->kind[i] == K_LUT ? lut_input(g, n) : 0;
            bool in8 = is_op(n, "Concat") ? concat_int8(c, n) : c->q8ver[n->inputs[xi]] == -2;
            if (in8) c->q8ver[y] = -2;
            else c->kind[i] = K_FP32;
        }
    }
}

/* Multiply-adds of QCOMPUTE node n: output elements times the inputs each
 * one sums. */
static double layer_macs(const q8_graph *g, const q8_node *n) {
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1), *y = q8_out(g, n, 0);
    if (!w->data) return (double)q8_tensor_numel(y) * (double)x->dims[x->ndim - 1]; /* A x B */
    if (is_op(n, "ConvTranspose"))
        return (double)q8_tensor_numel(x) * (double)q8_tensor_numel(w) / (double)w->dims[0];
    int64_t m = is_op(n, "Conv") ? y->dims[1] : y->dims[y->ndim - 1];
    return (double)q8_tensor_numel(y) * (double)q8_tensor_numel(w) / (double)(m ? m : 1);
}

/* Is every int8 reader of t (and of what they make, depth levels deep) a
 * table or a one-input pass-through op? Then no other int8 layer or sum
 * takes int8 from t. */
static bool only_tables_read(const qctx *c, int t, int depth) {
    const q8_graph *g = c->g;
    for (int j = 0; j < g->n_nodes; j++)
        for (int k = 0; k < g->nodes[j]->n_inputs; k++) {
            const q8_node *d = g->nodes[j];
            if (d->inputs[k] != t || !takes_int8(c, d, j, t)) continue;
            bool kind_ok = c->kind[j] == K_LUT || (c->kind[j] == K_PASS && !is_op(d, "Concat"));
            if (!kind_ok || depth == 0 || !only_tables_read(c, d->outputs[0], depth - 1))
                return false;
        }
    return true;
}

/* A small INT8 island: layer i with fewer than Q8_MIN_ALONE_MACS
 * multiply-adds, its input not int8 already, its int8 output read only by
 * tables and views that end in FP32. It pays a QuantizeLinear, a
 * DequantizeLinear and its calls for less arithmetic than that costs in
 * FP32 (Silero VAD's 128 -> 1 decoder Conv and its Sigmoid:
 * docs/performance.md). The layer stays FP32 (layer.NAME.fp32_small: its
 * multiply-adds); the caller marks again, so its tables and views follow.
 * Not a MatMul that took in its bias (fold_matmul_biases): only the rewrite
 * reads that form. */
static q8_status keep_small_islands_fp32(qctx *c, q8_meta *meta, bool *demoted) {
    q8_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (c->kind[i] != K_QCOMPUTE || (is_op(n, "MatMul") && n->n_inputs > 2) ||
            c->q8ver[n->inputs[0]] == -2 || layer_macs(g, n) >= Q8_MIN_ALONE_MACS ||
            !only_tables_read(c, n->outputs[0], 8))
            continue;
        c->kind[i] = K_FP32;
        *demoted = true;
        char key[600];
        snprintf(key, sizeof key, "layer.%s.fp32_small", n->name);
        Q8_TRY(q8_meta_set_int(meta, key, (int64_t)layer_macs(g, n), c->err));
    }
    return Q8_OK;
}

q8_status q8_quantize_graph(q8_graph *g, const q8_calibration *cal, const q8_quant_options *o,
                            q8_meta *meta, q8_error *err) {
    qctx c = {.g = g, .cal = cal, .meta = meta, .err = err, .n_orig_tensors = g->n_tensors};
    q8_graph_fix_producers(g); /* the note names producers */
    Q8_TRY(q8_span_note(g, cal, meta, err)); /* before the rewrite renames and renumbers */
    Q8_TRY(fold_matmul_biases(&c, o));
    int nn = g->n_nodes, nt = g->n_tensors;
    c.kind = calloc((size_t)nn + 1, sizeof(int));
    c.q8ver = malloc(sizeof(int) * ((size_t)nt + 1));
    c.need_f32 = calloc((size_t)nt + 1, sizeof(bool));
    c.consumers = calloc((size_t)nt + 1, sizeof(int));
    c.forced = calloc((size_t)nt + 1, sizeof(float));
    c.wq_of = calloc((size_t)nt + 1, sizeof *c.wq_of);
    c.lut_f = calloc((size_t)nt + 1, sizeof *c.lut_f);
    c.lut_src = calloc((size_t)nt + 1, sizeof *c.lut_src);
    c.lut_c = calloc((size_t)nt + 1, sizeof *c.lut_c);
    /* every original node, plus at most a quantize per tensor and a
     * dequantize per node output */
    int64_t edges = 0; /* a Concat's inputs may each get a rescale */
    for (int i = 0; i < nn; i++) edges += g->nodes[i]->n_inputs;
    c.order = malloc(sizeof(int) * ((size_t)nn * 4 + (size_t)nt * 2 + (size_t)edges + 8));
    q8_status s = Q8_OK;
    if (!c.kind || !c.q8ver || !c.need_f32 || !c.consumers || !c.order || !c.forced ||
        !c.wq_of || !c.lut_f || !c.lut_src || !c.lut_c) {
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        goto out;
    }
    q8_graph_fix_producers(g);
    q8_graph_consumers(g, c.consumers);
    for (int t = 0; t < nt; t++) c.q8ver[t] = -1;
    for (int i = 0; i < nn; i++) c.kind[i] = classify(&c, g->nodes[i], o);
    bool again;
    do { /* each demotion can demote what reads or feeds it: until none changes */
        keep_qbins_before_int8(&c);
        keep_scalar_luts_between_int8(&c);
        keep_qbins_before_int8(&c); /* a table made FP32 may leave a sum no int8 reader */
        again = keep_qpools_between_int8(&c);
        again |= keep_linear_resize_before_compute(&c);
        if (o && o->fp32_tails) again |= keep_tails_fp32(&c);
    } while (again);

    mark_int8(&c);
    if (o && o->small_alone_fp32) {
        bool demoted = false;
        if ((s = keep_small_islands_fp32(&c, meta, &demoted)) != Q8_OK) goto out;
        for (int t = 0; demoted && t < nt; t++) c.q8ver[t] = -1;
        if (demoted) mark_int8(&c); /* what read the demoted layers' int8 is FP32 now */
    }
    if (o && o->output_ranges_full && (s = output_ranges_full(&c)) != Q8_OK) goto out;
    /* Concat scales: its QCOMPUTE inputs write the Concat's calibrated scale. */
    for (int i = 0; i < nn; i++)
        if (c.kind[i] == K_PASS && is_op(g->nodes[i], "Concat") &&
            !zero_pad_concat(&c, g->nodes[i]))
            for (int k = 0; k < g->nodes[i]->n_inputs; k++)
                if (writes_concat_scale(&c, g->nodes[i]->inputs[k]))
                    c.forced[g->nodes[i]->inputs[k]] = act_scale(&c, g->nodes[i]->outputs[0]);
    /* Which float versions are still read: by FP32 nodes, non-data inputs,
     * graph outputs. */
    for (int i = 0; i < nn; i++) {
        const q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int t = n->inputs[k];
            if (t >= 0 && c.q8ver[t] == -2 && !takes_int8(&c, n, i, t)) c.need_f32[t] = true;
        }
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (c.q8ver[g->outputs[i]] == -2) c.need_f32[g->outputs[i]] = true;

    /* Rewrite in order. */
    for (int i = 0; i < nn && s == Q8_OK; i++) {
        if (c.kind[i] == K_QCOMPUTE) {
            s = rewrite_qcompute(&c, i);
        } else if (c.kind[i] == K_PASS) {
            s = rewrite_pass(&c, i);
        } else if (c.kind[i] == K_LUT) {
            s = rewrite_lut(&c, i);
        } else if (c.kind[i] == K_QBIN) {
            s = rewrite_qbin(&c, i);
        } else if (c.kind[i] == K_QPOOL) {
            s = rewrite_qpool(&c, i);
        } else {
            c.order[c.n_order++] = i;
        }
    }
    if (s != Q8_OK) goto out;
    /* Reorder nodes as placed; mark fp32 layers in meta. */
    q8_node **nodes = malloc(sizeof(q8_node *) * ((size_t)c.n_order + 1));
    if (!nodes) {
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        goto out;
    }
    Q8_ASSERT(c.n_order == g->n_nodes);
    for (int i = 0; i < c.n_order; i++) nodes[i] = g->nodes[c.order[i]];
    memcpy(g->nodes, nodes, sizeof(q8_node *) * (size_t)c.n_order);
    free(nodes);
    q8_graph_fix_producers(g);
    for (int i = 0; o && i < o->n_fp32_layers && s == Q8_OK; i++) {
        char key[512];
        snprintf(key, sizeof key, "layer.%s.fp32", o->fp32_layers[i]);
        s = q8_meta_set_int(meta, key, 1, err);
    }
    if (s == Q8_OK && o && o->int8_embeddings) s = q8_quantize_gather_tables(g, o, meta, err);
    if (s == Q8_OK && o && o->int8_embeddings) s = q8_quantize_added_tables(g, meta, err);
    /* Re-infer everything in the new order: resolves the new ops, checks
     * every shape, sets int8 scales downstream. */
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        q8_node *n = g->nodes[i];
        n->op = q8_op_lookup(n->domain, n->op_type);
        Q8_ASSERT(n->op != Q8_OP_NONE); /* the rewrite only makes ops q8 has */
        s = q8_node_reinfer(g, n, err);
    }
    if (s == Q8_OK) s = q8_pass_dce(g, err);
    /* FP32 layers left FP32 take their Sigmoid / HardSwish / HardSigmoid
     * into the epilogue as an FP32 model's do (the quantizer's pipeline
     * keeps them apart for the tables) */
    if (s == Q8_OK) s = q8_pass_fuse_activations(g, true, err);
    if (s == Q8_OK) s = q8_pass_fuse_float_muls(g, err);
    if (s == Q8_OK) s = q8_pass_drop_unused_consts(g, err);
    if (s == Q8_OK) s = q8_graph_renumber_scopes(g, err);
    if (s == Q8_OK) s = q8_graph_check_control(g, err);
out:
    free(c.kind);
    free(c.q8ver);
    free(c.need_f32);
    free(c.consumers);
    free(c.forced);
    free(c.wq_of);
    for (int t = 0; c.lut_f && t < nt; t++) free(c.lut_f[t]);
    free(c.lut_f);
    free(c.lut_src);
    free(c.lut_c);
    free(c.tail_thr);
    free(c.order);
    return s;
}
