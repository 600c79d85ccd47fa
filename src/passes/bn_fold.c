/* Fold an inference BatchNormalization into the Conv, ConvTranspose or Gemm
 * that feeds it: y = s*(x - mean) + beta with s = gamma/sqrt(var+eps) becomes
 * new weights W*s and bias (b - mean)*s + beta; a Mul or an Add of a
 * per-channel constant into the Conv that feeds it (try_fold_mul,
 * try_fold_add: a BatchNorm that TensorFlow exported as Mul and Add), or
 * into the Conv it feeds (try_fold_into_conv). */
#include <math.h>
#include <string.h>

#include "op.h"
#include "passes.h"

static bool const_f32(const q8_tensor *t) { return t && t->data && t->dtype == Q8_F32; }

/* A new constant tensor, copy of src (name derived from it). */
static int clone_const(q8_graph *g, int src, const char *suffix, q8_error *err) {
    char name[512];
    snprintf(name, sizeof name, "%s%s", g->tensors[src]->name, suffix);
    int ti = q8_graph_add_tensor_unique(g, name);
    if (ti < 0) {
        q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        return -1;
    }
    q8_tensor *s = g->tensors[src], *t = g->tensors[ti];
    q8_tensor_set_shape(t, s->dtype, s->dims, s->ndim);
    if (q8_tensor_alloc_data(t, err) != Q8_OK) return -1;
    memcpy(t->data, s->data, q8_tensor_nbytes(s));
    return ti;
}

static int new_vector(q8_graph *g, const char *base, int64_t len, q8_error *err) {
    int ti = q8_graph_add_tensor_unique(g, base);
    if (ti < 0) {
        q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        return -1;
    }
    q8_tensor_set_shape(g->tensors[ti], Q8_F32, &len, 1);
    if (q8_tensor_alloc_data(g->tensors[ti], err) != Q8_OK) return -1;
    return ti;
}

/* Try to fold bn (at index bi) into its producer; returns Q8_OK whether or
 * not it folded (errors only for out-of-memory). */
static q8_status try_fold(q8_graph *g, q8_node *bn, const int *uses, q8_error *err) {
    if (bn->n_inputs != 5 || (bn->n_outputs > 1 && bn->outputs[1] >= 0)) return Q8_OK;
    if (q8_attr_int(bn, "training_mode", 0)) return Q8_OK;
    int x = bn->inputs[0];
    const q8_tensor *xt = g->tensors[x];
    if (xt->producer < 0 || uses[x] != 1 || q8_graph_is_output(g, x)) return Q8_OK;
    q8_node *p = g->nodes[xt->producer];
    if (p->dead || *p->domain) return Q8_OK;
    bool conv = strcmp(p->op_type, "Conv") == 0;
    bool convt = strcmp(p->op_type, "ConvTranspose") == 0;
    bool gemm = strcmp(p->op_type, "Gemm") == 0;
    if (!conv && !convt && !gemm) return Q8_OK;
    const q8_tensor *gam = q8_in(g, bn, 1), *bet = q8_in(g, bn, 2), *mean = q8_in(g, bn, 3),
                    *var = q8_in(g, bn, 4);
    if (!const_f32(gam) || !const_f32(bet) || !const_f32(mean) || !const_f32(var)) return Q8_OK;
    const q8_tensor *w = q8_in(g, p, 1), *b = q8_in(g, p, 2);
    if (!const_f32(w) || (b && !const_f32(b)) || xt->ndim < 2) return Q8_OK;
    int64_t C = xt->dims[1];
    if (q8_tensor_numel(gam) != C || q8_tensor_numel(bet) != C || q8_tensor_numel(mean) != C ||
        q8_tensor_numel(var) != C)
        return Q8_OK;
    int64_t group = q8_attr_int(p, "group", 1);
    if (gemm) {
        /* Y[M,N] = alpha*A*B + beta*C; channel = N. */
        if (xt->ndim != 2 || w->ndim != 2) return Q8_OK;
        if (b && !(q8_tensor_numel(b) == C || q8_tensor_numel(b) == 1)) return Q8_OK;
        if (b && b->ndim == 2 && b->dims[0] != 1) return Q8_OK;
    } else {
        if (b && q8_tensor_numel(b) != C) return Q8_OK;
        if (group < 1) return Q8_OK;
    }
    float eps = q8_attr_float(bn, "epsilon", 1e-5f);
    float *s = malloc(sizeof(float) * (size_t)C);
    if (!s) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    const float *gv = gam->data, *bv = bet->data, *mv = mean->data, *vv = var->data;
    for (int64_t c = 0; c < C; c++) s[c] = gv[c] / sqrtf(vv[c] + eps);

    int wi = clone_const(g, p->inputs[1], "_bnfold", err);
    int bi = wi < 0 ? -1 : new_vector(g, "bias_bnfold", C, err);
    if (wi < 0 || bi < 0) {
        free(s);
        return err->status;
    }
    float *wn = g->tensors[wi]->data, *bn_new = g->tensors[bi]->data;
    int64_t wnum = q8_tensor_numel(w);
    float beta_g = gemm ? q8_attr_float(p, "beta", 1.0f) : 1.0f;
    if (conv) {
        int64_t per = wnum / C;
        for (int64_t i = 0; i < wnum; i++) wn[i] *= s[i / per];
    } else if (convt) {
        /* W is (C_in, C_out/group, k...); output channel of [ci, j] is
         * (ci / (C_in/group)) * (C_out/group) + j. */
        int64_t cin = w->dims[0], coutg = w->dims[1], k = wnum / (cin * coutg);
        int64_t cin_g = cin / group;
        for (int64_t ci = 0; ci < cin; ci++)
            for (int64_t j = 0; j < coutg; j++)
                for (int64_t e = 0; e < k; e++)
                    wn[(ci * coutg + j) * k + e] *= s[(ci / cin_g) * coutg + j];
    } else {
        bool transb = q8_attr_int(p, "transB", 0) != 0;
        int64_t rows = w->dims[0], cols = w->dims[1];
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++) wn[r * cols + c] *= s[transb ? r : c];
    }
    for (int64_t c = 0; c < C; c++) {
        float bo = 0;
        if (b) bo = q8_tensor_numel(b) == 1 ? ((const float *)b->data)[0] : ((const float *)b->data)[c];
        bn_new[c] = (beta_g * bo - mv[c]) * s[c] + bv[c];
    }
    free(s);
    int *in = malloc(sizeof(int) * 3);
    if (!in) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    in[0] = p->inputs[0];
    in[1] = wi;
    in[2] = bi;
    free(p->inputs);
    p->inputs = in;
    p->n_inputs = 3;
    if (gemm) {
        /* The bias now carries beta; set beta = 1. */
        q8_attr *a = (q8_attr *)q8_attr_find(p, "beta");
        if (a) {
            a->type = Q8_ATTR_FLOAT;
            a->f = 1.0f;
        }
    }
    /* The producer now writes the BN's output. */
    for (int k = 0; k < p->n_outputs; k++)
        if (p->outputs[k] == x) p->outputs[k] = bn->outputs[0];
    bn->outputs[0] = -1;
    bn->dead = true;
    q8_status st = q8_node_reinfer(g, p, err);
    q8_graph_fix_producers(g);
    return st;
}

/* Conv p's bias input becomes tensor bi (a third input added if needed). */
static q8_status set_bias(q8_node *p, int bi, q8_error *err) {
    if (p->n_inputs < 3) {
        int *in = realloc(p->inputs, sizeof(int) * 3);
        if (!in) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        p->inputs = in;
        p->n_inputs = 3;
    }
    p->inputs[2] = bi;
    return Q8_OK;
}

/* The constant c of a per-channel Mul or Add on x (x's dims: N, C, ...):
 * one value, or C values along axis 1 once right-aligned against x (a
 * [C, 1, 1] or [1, C, 1, 1]). */
static bool channel_const(const q8_tensor *xt, const q8_tensor *c) {
    if (!const_f32(c) || c->ndim > xt->ndim) return false;
    int64_t n = q8_tensor_numel(c);
    if (n == 1) return true;
    if (n != xt->dims[1]) return false;
    for (int d = 0; d < c->ndim; d++)
        if (c->dims[d] != 1 && xt->ndim - c->ndim + d != 1) return false;
    return true;
}

/* Fold an Add of a constant that varies along the channel axis only (a
 * per-channel [C, 1, 1] or [1, C, 1, 1], or a scalar: TensorFlow's BiasAdd
 * after a bias-free Conv) into the Conv's bias: the bias then joins the sum
 * first instead of after it (other rounding in FP32, as ONNX Runtime's
 * FuseConvAdd), and in INT8 the conv, its activation and its int8 output
 * are one node instead of a float Add and Clip between a dequantize and a
 * quantize. Returns Q8_OK whether or not it folded. */
/* The one-output Conv whose float output x only node n reads, with the
 * per-channel (or scalar) constant on n's other side: *side is x's input
 * index in n. NULL when n is not such a node. */
static q8_node *sole_conv_producer(q8_graph *g, const q8_node *n, const int *uses, int *side) {
    if (n->n_inputs != 2 || n->n_outputs != 1) return NULL;
    for (int s = 0; s < 2; s++) {
        int x = n->inputs[s];
        const q8_tensor *xt = g->tensors[x];
        if (xt->producer < 0 || uses[x] != 1 || q8_graph_is_output(g, x) || xt->dtype != Q8_F32 ||
            xt->ndim < 3 || !xt->shape_known || !channel_const(xt, g->tensors[n->inputs[1 - s]]))
            continue;
        q8_node *p = g->nodes[xt->producer];
        if (p->dead || *p->domain || strcmp(p->op_type, "Conv") != 0 || p->n_outputs != 1)
            continue;
        const q8_tensor *w = q8_in(g, p, 1), *b = q8_in(g, p, 2);
        int64_t C = xt->dims[1];
        if (!const_f32(w) || w->ndim < 1 || w->dims[0] != C ||
            (b && (!const_f32(b) || q8_tensor_numel(b) != C)))
            continue;
        *side = s;
        return p;
    }
    return NULL;
}

/* Conv p now writes n's output and n is gone: n's output slot is cleared so
 * that p stays its producer (a later fold of the next node finds it). */
static q8_status absorb(q8_graph *g, q8_node *p, q8_node *n, q8_error *err) {
    p->outputs[0] = n->outputs[0];
    n->outputs[0] = -1;
    n->dead = true;
    q8_status st = q8_node_reinfer(g, p, err);
    q8_graph_fix_producers(g);
    return st;
}

/* Fold an Add of a constant that varies along the channel axis only (a
 * per-channel [C, 1, 1] or [1, C, 1, 1], or a scalar: TensorFlow's BiasAdd
 * after a bias-free Conv) into the Conv's bias: the bias then joins the sum
 * first instead of after it (other rounding in FP32, as ONNX Runtime's
 * FuseConvAdd), and in INT8 the conv, its activation and its int8 output
 * are one node instead of a float Add and Clip between a dequantize and a
 * quantize. Returns Q8_OK whether or not it folded. */
static q8_status try_fold_add(q8_graph *g, q8_node *add, const int *uses, q8_error *err) {
    int side;
    q8_node *p = sole_conv_producer(g, add, uses, &side);
    if (!p) return Q8_OK;
    const q8_tensor *c = g->tensors[add->inputs[1 - side]], *b = q8_in(g, p, 2);
    int64_t C = g->tensors[p->outputs[0]]->dims[1], n = q8_tensor_numel(c);
    int bi = new_vector(g, "bias_addfold", C, err);
    if (bi < 0) return err->status;
    float *nb = g->tensors[bi]->data;
    const float *cv = c->data, *bv = b ? b->data : NULL;
    for (int64_t k = 0; k < C; k++) nb[k] = (bv ? bv[k] : 0.0f) + cv[n == 1 ? 0 : k];
    Q8_TRY(set_bias(p, bi, err));
    return absorb(g, p, add, err);
}

/* Fold a Mul by a per-channel constant k into the Conv that feeds it:
 * (X * W + b) * k = X * (W k) + b k per output channel, the folding ONNX
 * Runtime's FuseConvMul does (other rounding in FP32). A scalar k stays a
 * Mul: folded, PP-OCR recognition's INT8 output fell from 17.8 to 14.8 dB
 * (its hard-swish chains, conv -> k x + b -> HardSwish, then quantize
 * differently: `--weight-rounding auto` and `--scalar-tables auto` chose
 * otherwise), CER 0.82% -> 1.04%. FaceRes
 * writes each depthwise conv's BatchNorm as such a Mul and an Add: in INT8
 * both ran as float ops between a dequantize and a quantize (a fifth of the
 * model's time), and the conv's int8 output was rounded before the scale
 * that the weights can carry per channel. Returns Q8_OK whether or not it
 * folded. */
static q8_status try_fold_mul(q8_graph *g, q8_node *mul, const int *uses, q8_error *err) {
    int side;
    q8_node *p = sole_conv_producer(g, mul, uses, &side);
    const q8_tensor *c = p ? g->tensors[mul->inputs[1 - side]] : NULL;
    if (!p || q8_tensor_numel(c) == 1) return Q8_OK;
    int64_t C = g->tensors[p->outputs[0]]->dims[1];
    bool has_b = q8_in(g, p, 2) != NULL;
    int wi = clone_const(g, p->inputs[1], "_mulfold", err);
    int bi = wi < 0 || !has_b ? -1 : clone_const(g, p->inputs[2], "_mulfold", err);
    if (wi < 0 || (has_b && bi < 0)) return err->status;
    const float *k = c->data;
    float *wn = g->tensors[wi]->data;
    int64_t per = q8_tensor_numel(g->tensors[wi]) / C;
    for (int64_t i = 0; i < per * C; i++) wn[i] *= k[i / per];
    if (bi >= 0) {
        float *bn = g->tensors[bi]->data;
        for (int64_t m = 0; m < C; m++) bn[m] *= k[m];
    }
    p->inputs[1] = wi;
    if (bi >= 0) p->inputs[2] = bi;
    return absorb(g, p, mul, err);
}

/* Whether every pad of Conv n is 0 (explicit pads, no SAME auto_pad). */
static bool unpadded(const q8_node *n) {
    const char *ap = q8_attr_str(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0) return false;
    const q8_attr *pads = q8_attr_find(n, "pads");
    for (int d = 0; pads && d < pads->n; d++)
        if (pads->type != Q8_ATTR_INTS || pads->ints[d] != 0) return false;
    return true;
}

/* A Mul or Add of a per-channel (or scalar) constant whose output only the
 * one-group Conv `conv` reads folds into it: W (x k) = (W k) x per input
 * channel, W (x + b) = W x + sum(W b) into the bias (only unpadded: a
 * padded border would add 0, not b). PP-OCR recognition scales every
 * hard-swish by a learned scalar and shift before the next conv, and a
 * Keras BatchNorm after an activation is such a pair. Folds the nearest one
 * first, then the one before it; returns Q8_OK whether or not it folded. */
static q8_status try_fold_into_conv(q8_graph *g, q8_node *conv, const int *uses, q8_error *err) {
    for (int round = 0; round < 2; round++) {
        int x = conv->inputs[0];
        const q8_tensor *xt = g->tensors[x];
        if (conv->n_inputs < 2 || x < 0 || xt->producer < 0 || uses[x] != 1 ||
            q8_graph_is_output(g, x) || xt->dtype != Q8_F32 || !xt->shape_known || xt->ndim < 3 ||
            q8_attr_int(conv, "group", 1) != 1)
            return Q8_OK;
        q8_node *p = g->nodes[xt->producer];
        bool mul = !strcmp(p->op_type, "Mul"), add = !strcmp(p->op_type, "Add");
        if (p->dead || *p->domain || (!mul && !add) || p->n_inputs != 2 || p->n_outputs != 1 ||
            (add && !unpadded(conv)))
            return Q8_OK;
        int side = channel_const(xt, g->tensors[p->inputs[1]]) ? 1
                   : channel_const(xt, g->tensors[p->inputs[0]]) ? 0
                                                                  : -1;
        if (side < 0) return Q8_OK;
        int in = p->inputs[1 - side];
        const q8_tensor *c = g->tensors[p->inputs[side]], *w = q8_in(g, conv, 1),
                        *b = q8_in(g, conv, 2), *it = g->tensors[in];
        int64_t C = xt->dims[1];
        if (!const_f32(w) || w->ndim != xt->ndim || w->dims[1] != C || it->dtype != Q8_F32 ||
            !it->shape_known || it->ndim != xt->ndim ||
            memcmp(it->dims, xt->dims, sizeof(int64_t) * (size_t)xt->ndim) != 0 ||
            (b && (!const_f32(b) || q8_tensor_numel(b) != w->dims[0])))
            return Q8_OK;
        int64_t M = w->dims[0], taps = q8_tensor_numel(w) / (M * C);
        bool one = q8_tensor_numel(c) == 1;
        const float *k = c->data;
        if (mul) {
            int wi = clone_const(g, conv->inputs[1], "_mulfold", err);
            if (wi < 0) return err->status;
            float *wn = g->tensors[wi]->data;
            for (int64_t i = 0; i < M * C * taps; i++) wn[i] *= k[one ? 0 : (i / taps) % C];
            conv->inputs[1] = wi;
        } else {
            int bi = new_vector(g, "bias_addfold", M, err);
            if (bi < 0) return err->status;
            const float *wv = w->data, *bv = b ? b->data : NULL;
            float *nb = g->tensors[bi]->data;
            for (int64_t m = 0; m < M; m++) {
                double acc = bv ? bv[m] : 0.0;
                for (int64_t i = 0; i < C * taps; i++)
                    acc += (double)wv[m * C * taps + i] * k[one ? 0 : i / taps];
                nb[m] = (float)acc;
            }
            Q8_TRY(set_bias(conv, bi, err));
        }
        conv->inputs[0] = in;
        p->outputs[0] = -1;
        p->dead = true;
        Q8_TRY(q8_node_reinfer(g, conv, err));
        q8_graph_fix_producers(g);
    }
    return Q8_OK;
}

q8_status q8_pass_fold_bn(q8_graph *g, q8_error *err) {
    int *uses = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(int));
    if (!uses) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_graph_consumers(g, uses);
    q8_status s = Q8_OK;
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        q8_node *n = g->nodes[i];
        if (n->dead || *n->domain) continue;
        if (!strcmp(n->op_type, "BatchNormalization")) s = try_fold(g, n, uses, err);
        else if (!strcmp(n->op_type, "Mul")) s = try_fold_mul(g, n, uses, err);
        else if (!strcmp(n->op_type, "Add")) s = try_fold_add(g, n, uses, err);
        if (s == Q8_OK && !n->dead && !strcmp(n->op_type, "Conv"))
            s = try_fold_into_conv(g, n, uses, err);
    }
    free(uses);
    q8_graph_compact(g);
    return s;
}
