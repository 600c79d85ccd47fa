/* Chains of elementwise float32 steps become one q8.EwChain
 * (src/core/ops/ewchain.h): Mul / Add / Sub / Div by a constant scalar (or
 * a constant of one value repeated), Relu, LeakyRelu, Clip with constant
 * bounds, HardSigmoid and HardSwish, a Sigmoid with the Mul of its input by
 * it (SiLU), each step's output read only by the next, with the DequantizeLinear (int8 or uint8, per tensor) or the Cast
 * to float (of int8, uint8 or int32: MoveNet's image) that feeds the first
 * and the QuantizeLinear that reads the last taken in. The op computes the same float operations in
 * the same order: the same bits, in one pass instead of one per node
 * (PP-OCR recognition: six passes after most of its convolutions). A
 * BatchNormalization no convolution took in (DenseNet's and other
 * pre-activation nets' BN -> Relu before each convolution) may lead a chain
 * as its per-channel x * k + m. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "ops/batchnorm.h"
#include "ops/clip.h"
#include "ops/ewchain.h"
#include "ops/unary.h"
#include "passes.h"

static bool is_onnx_op(const q8_node *n, const char *op) {
    return n && !n->dead && !*n->domain && !strcmp(n->op_type, op);
}

static bool same_shape(const q8_tensor *a, const q8_tensor *b) {
    return a->ndim == b->ndim && !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->ndim);
}

/* The value of a constant float32 tensor whose values are all one (a
 * scalar; or MoveNet's [1, 1, 1, 3] of 0.00784302 three times: each
 * element then meets that value, as under the broadcast: the same bits).
 * Values compared as bits: -0 and +0, or two NaNs, are not taken for one. */
static bool const_scalar(const q8_graph *g, int t, float *v) {
    const q8_tensor *c = t >= 0 ? g->tensors[t] : NULL;
    if (!c || !c->data || c->dtype != Q8_F32) return false;
    const float *d = c->data;
    int64_t n = q8_tensor_numel(c);
    if (n < 1) return false;
    for (int64_t i = 1; i < n; i++)
        if (memcmp(&d[i], &d[0], sizeof(float)) != 0) return false;
    *v = d[0];
    return true;
}

/* Node m as a step on its float32 input v (same shape out): *s. */
static bool as_step(const q8_graph *g, const q8_node *m, int v, q8_ew_step *s) {
    if (!m || m->dead || m->n_outputs != 1) return false;
    const q8_tensor *vt = g->tensors[v], *yt = g->tensors[m->outputs[0]];
    if (vt->dtype != Q8_F32 || yt->dtype != Q8_F32 || !same_shape(vt, yt)) return false;
    *s = (q8_ew_step){0, 0.0f, 0.0f};
    static const struct {
        const char *op;
        int32_t left, right; /* kind with v as the left / right operand */
    } bin[] = {{"Mul", Q8_EW_MUL, Q8_EW_MUL}, {"Add", Q8_EW_ADD, Q8_EW_ADD},
               {"Sub", Q8_EW_SUB, Q8_EW_RSUB}, {"Div", Q8_EW_DIV, Q8_EW_RDIV}};
    for (size_t b = 0; b < sizeof bin / sizeof bin[0]; b++) {
        if (!is_onnx_op(m, bin[b].op)) continue;
        if (m->n_inputs != 2) return false;
        int vi = m->inputs[0] == v ? 0 : m->inputs[1] == v ? 1 : -1;
        if (vi < 0 || m->inputs[0] == m->inputs[1] || !const_scalar(g, m->inputs[1 - vi], &s->c0))
            return false;
        s->kind = vi == 0 ? bin[b].left : bin[b].right;
        return true;
    }
    if (m->n_inputs < 1 || m->inputs[0] != v) return false;
    if (is_onnx_op(m, "Clip")) {
        const q8_clip_params *cp = m->params;
        s->kind = Q8_EW_CLIP;
        s->c0 = -INFINITY; /* clip.c's bounds when an input is absent */
        s->c1 = INFINITY;
        if (!cp || (cp->has_lo && !const_scalar(g, m->inputs[1], &s->c0)) ||
            (cp->has_hi && !const_scalar(g, m->inputs[2], &s->c1)))
            return false;
        return true;
    }
    if (m->n_inputs != 1 || !m->params) return false;
    const q8_unary_params *up = m->params;
    if (is_onnx_op(m, "Relu")) s->kind = Q8_EW_RELU;
    else if (is_onnx_op(m, "LeakyRelu")) s->kind = Q8_EW_LEAKY_RELU;
    else if (is_onnx_op(m, "HardSigmoid")) s->kind = Q8_EW_HARD_SIGMOID;
    else if (is_onnx_op(m, "HardSwish")) s->kind = Q8_EW_HARD_SWISH;
    else return false;
    s->c0 = up->alpha;
    s->c1 = up->beta;
    return true;
}

/* Node si = Sigmoid(v) whose output only a Mul of v by it reads: x *
 * sigmoid(x) (SiLU, Swish: YOLOv5's activation) as one step, in the Mul's
 * operand order (c0 1: the sigmoid first). The Mul's index, or -1. */
static int swish_mul(const q8_graph *g, const int *uses, const int *reader, int si, int v,
                     q8_ew_step *s) {
    const q8_node *m = si >= 0 ? g->nodes[si] : NULL;
    if (!is_onnx_op(m, "Sigmoid") || m->n_inputs != 1 || m->inputs[0] != v ||
        m->n_outputs != 1)
        return -1;
    int t = m->outputs[0];
    int r = uses[t] == 1 && !q8_graph_is_output(g, t) ? reader[t] : -1;
    const q8_node *mul = r >= 0 ? g->nodes[r] : NULL;
    if (!is_onnx_op(mul, "Mul") || mul->n_inputs != 2 || mul->n_outputs != 1 ||
        mul->scope != m->scope)
        return -1;
    bool sig_first = mul->inputs[0] == t && mul->inputs[1] == v;
    if (!sig_first && !(mul->inputs[0] == v && mul->inputs[1] == t)) return -1;
    const q8_tensor *vt = g->tensors[v], *yt = g->tensors[mul->outputs[0]];
    if (vt->dtype != Q8_F32 || g->tensors[t]->dtype != Q8_F32 || yt->dtype != Q8_F32 ||
        !same_shape(vt, yt))
        return -1;
    *s = (q8_ew_step){Q8_EW_SWISH, sig_first ? 1.0f : 0.0f, 0.0f};
    return r;
}

/* A constant per-tensor scale > 0 and zero point (absent: 0) of a
 * DequantizeLinear / QuantizeLinear q whose integer side has dtype dt. */
static bool qdq_params(const q8_graph *g, const q8_node *q, q8_dtype dt, float *s, int32_t *z) {
    if (q->n_inputs < 2 || !q8_const_scale(g, q->inputs[1], s)) return false;
    *z = 0;
    if (q->n_inputs < 3 || q->inputs[2] < 0) return dt == Q8_U8 || dt == Q8_I8;
    const q8_tensor *zt = g->tensors[q->inputs[2]];
    if (!zt->data || zt->dtype != dt || q8_tensor_numel(zt) != 1) return false;
    *z = dt == Q8_I8 ? *(const int8_t *)zt->data : *(const uint8_t *)zt->data;
    return true;
}

/* A BatchNormalization (inference) with constant statistics, which a
 * chain may start with: its params, or NULL. */
static const q8_batchnorm_params *bn_head(const q8_graph *g, const q8_node *m) {
    if (!is_onnx_op(m, "BatchNormalization") || !m->params || m->n_inputs != 5 ||
        m->n_outputs < 1 || m->outputs[0] < 0)
        return NULL;
    for (int j = 1; j < m->n_outputs; j++)
        if (m->outputs[j] >= 0) return NULL;
    for (int j = 1; j < 5; j++)
        if (m->inputs[j] < 0 || !g->tensors[m->inputs[j]]->data) return NULL;
    return m->params;
}

typedef struct chain {
    /* the nodes replaced, in order (a swish step is two; a DequantizeLinear,
     * a BatchNormalization and a QuantizeLinear one each) */
    int nodes[2 * Q8_EWCHAIN_MAX_STEPS + 4], n_nodes;
    int bn;                /* the BatchNormalization first, or -1 */
    q8_ew_step steps[Q8_EWCHAIN_MAX_STEPS];
    int n_steps;
    int x, y;              /* the chain's input and output tensors */
    bool deq, quant;       /* a DequantizeLinear / QuantizeLinear taken in */
    float xs, ys;
    int32_t xz, yz;
    q8_dtype ydt;
} chain;

/* The first node of c becomes the q8.EwChain; the others die. */
static q8_status rewrite(q8_graph *g, const chain *c, q8_error *err) {
    q8_node *h = g->nodes[c->nodes[0]];
    Q8_TRY(q8_node_make_q8_op(h, "EwChain", true, err));
    /* each set_attr may move the attributes: fill one before the next */
    q8_attr *st = q8_node_set_attr(h, "steps", Q8_ATTR_INTS);
    /* (no steps: a BatchNormalization alone; malloc(0) may be NULL) */
    if (!st || !(st->ints = malloc(sizeof(int64_t) * (size_t)(c->n_steps ? c->n_steps : 1))))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    st->n = c->n_steps;
    for (int k = 0; k < c->n_steps; k++) st->ints[k] = c->steps[k].kind;
    q8_attr *cs = q8_node_set_attr(h, "consts", Q8_ATTR_FLOATS);
    if (!cs || !(cs->floats = malloc(sizeof(float) * 2 * (size_t)(c->n_steps ? c->n_steps : 1))))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    cs->n = 2 * c->n_steps;
    for (int k = 0; k < c->n_steps; k++) {
        cs->floats[2 * k] = c->steps[k].c0;
        cs->floats[2 * k + 1] = c->steps[k].c1;
    }
    if (c->deq) {
        Q8_TRY(q8_node_attr_float(h, "x_scale", c->xs, err));
        if (c->xz) Q8_TRY(q8_node_attr_int(h, "x_zero_point", c->xz, err));
    }
    if (c->quant) {
        Q8_TRY(q8_node_attr_float(h, "y_scale", c->ys, err));
        Q8_TRY(q8_node_attr_int(h, "y_dtype", c->ydt == Q8_I8 ? 3 : 2, err));
        if (c->yz) Q8_TRY(q8_node_attr_int(h, "y_zero_point", c->yz, err));
    }
    int in[5] = {c->x}, out[1] = {c->y}, n_in = 1;
    if (c->bn >= 0) {
        const q8_node *b = g->nodes[c->bn];
        for (int j = 1; j < 5; j++) in[n_in++] = b->inputs[j];
        Q8_TRY(q8_node_attr_float(h, "bn_epsilon", ((const q8_batchnorm_params *)b->params)->eps,
                                  err));
    }
    Q8_TRY(q8_node_set_io(h, in, n_in, out, 1, err));
    for (int k = 1; k < c->n_nodes; k++) {
        q8_node *d = g->nodes[c->nodes[k]];
        for (int o = 0; o < d->n_outputs; o++)
            if (d->outputs[o] >= 0 && d->outputs[o] != c->y) g->tensors[d->outputs[o]]->producer = -1;
        d->dead = true;
    }
    g->tensors[c->y]->producer = c->nodes[0];
    h->op = q8_op_lookup("q8", "EwChain");
    Q8_ASSERT(h->op != Q8_OP_NONE);
    return q8_node_reinfer(g, h, err);
}

/* The node reading t, when it is t's only reader and t no graph output. */
static int sole_reader(const q8_graph *g, const int *uses, const int *reader, int t) {
    return uses[t] == 1 && !q8_graph_is_output(g, t) ? reader[t] : -1;
}

static q8_status fuse(q8_graph *g, bool swish_only, q8_error *err) {
    int nt = g->n_tensors;
    int *uses = calloc((size_t)nt + 1, sizeof(int)), *reader = malloc(sizeof(int) * ((size_t)nt + 1));
    if (!uses || !reader) {
        free(uses);
        free(reader);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    q8_graph_consumers(g, uses);
    for (int t = 0; t < nt; t++) reader[t] = -1;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; !g->nodes[i]->dead && k < g->nodes[i]->n_inputs; k++)
            if (g->nodes[i]->inputs[k] >= 0) reader[g->nodes[i]->inputs[k]] = i;
    q8_status s = Q8_OK;
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        q8_node *m = g->nodes[i];
        if (m->dead || m->n_inputs < 1) continue;
        chain c = {.n_nodes = 0, .bn = -1};
        /* a head (in graph order: a chain before it would have taken it) */
        int v = -1, swish = -1;
        if (!swish_only && bn_head(g, m)) {
            v = m->inputs[0];
            c.bn = i;
        }
        for (int k = 0; k < m->n_inputs && v < 0; k++) {
            int t = m->inputs[k];
            if (t < 0 || g->tensors[t]->data) continue;
            if (!swish_only && as_step(g, m, t, &c.steps[0])) v = t;
            else if ((swish = swish_mul(g, uses, reader, i, t, &c.steps[0])) >= 0) v = t;
        }
        if (v < 0) continue;
        int pv = g->tensors[v]->producer;
        c.x = v;
        /* a DequantizeLinear of an int8 / uint8 tensor, or a Cast to float
         * of an int8 / uint8 / int32 one (scale 1: exact), read only here */
        const q8_node *d = pv >= 0 ? g->nodes[pv] : NULL;
        if (d && d->scope == m->scope && sole_reader(g, uses, reader, v) == i) {
            const q8_tensor *xq = g->tensors[d->inputs[0]];
            bool ints = !xq->data && (xq->dtype == Q8_I8 || xq->dtype == Q8_U8);
            if (is_onnx_op(d, "DequantizeLinear") && ints &&
                qdq_params(g, d, xq->dtype, &c.xs, &c.xz)) {
                c.deq = true;
            } else if (is_onnx_op(d, "Cast") && !xq->data && d->n_inputs == 1 &&
                       (ints || xq->dtype == Q8_I32) && g->tensors[v]->dtype == Q8_F32) {
                c.deq = true;
                c.xs = 1.0f;
                c.xz = 0;
            }
            if (c.deq) {
                c.x = d->inputs[0];
                c.nodes[c.n_nodes++] = pv;
            }
        }
        c.nodes[c.n_nodes++] = i;
        if (swish >= 0) c.nodes[c.n_nodes++] = swish;
        c.n_steps = c.bn >= 0 ? 0 : 1;
        c.y = g->nodes[c.nodes[c.n_nodes - 1]]->outputs[0];
        /* swish_only: the SiLU alone (its input has two readers, so no
         * DequantizeLinear was taken in above either) */
        while (!swish_only) {
            /* a swish: c.y read by its Sigmoid and then its Mul (the last
             * reader in graph order), nothing else */
            int r = reader[c.y];
            if (c.n_steps < Q8_EWCHAIN_MAX_STEPS && uses[c.y] == 2 &&
                !q8_graph_is_output(g, c.y) && r >= 0 && g->nodes[r]->n_inputs == 2) {
                const q8_node *mul = g->nodes[r];
                int t = mul->inputs[mul->inputs[0] == c.y ? 1 : 0];
                int si = t >= 0 ? g->tensors[t]->producer : -1;
                if (si >= 0 && g->nodes[si]->scope == m->scope &&
                    swish_mul(g, uses, reader, si, c.y, &c.steps[c.n_steps]) == r) {
                    c.n_steps++;
                    c.nodes[c.n_nodes++] = si;
                    c.nodes[c.n_nodes++] = r;
                    c.y = mul->outputs[0];
                    continue;
                }
            }
            r = sole_reader(g, uses, reader, c.y);
            if (r < 0 || g->nodes[r]->scope != m->scope) break;
            q8_node *nx = g->nodes[r];
            if (c.n_steps < Q8_EWCHAIN_MAX_STEPS && as_step(g, nx, c.y, &c.steps[c.n_steps])) {
                c.n_steps++;
                c.nodes[c.n_nodes++] = r;
                c.y = nx->outputs[0];
                continue;
            }
            if (is_onnx_op(nx, "QuantizeLinear") && nx->n_outputs == 1 && nx->inputs[0] == c.y) {
                q8_dtype dt = nx->n_inputs >= 3 && nx->inputs[2] >= 0
                                  ? g->tensors[nx->inputs[2]]->dtype
                                  : Q8_U8;
                if (qdq_params(g, nx, dt, &c.ys, &c.yz)) {
                    c.quant = true;
                    c.ydt = dt;
                    c.nodes[c.n_nodes++] = r;
                    c.y = nx->outputs[0];
                }
            }
            break;
        }
        /* worth a node only where it saves a pass */
        if (c.n_nodes >= 2) s = rewrite(g, &c, err);
    }
    free(uses);
    free(reader);
    q8_graph_compact(g);
    return s == Q8_OK ? q8_pass_dce(g, err) : s;
}

q8_status q8_pass_fuse_ewchains(q8_graph *g, q8_error *err) { return fuse(g, false, err); }

q8_status q8_pass_fuse_swish(q8_graph *g, q8_error *err) { return fuse(g, true, err); }
