/* RNN, GRU and LSTM (see rnn.h): the node checked against the ONNX spec,
 * the shapes of Y, Y_h, Y_c and the params. */
#include "ops/rnn.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "op.h"

static const struct {
    const char *name;
    q8_rnn_act_kind kind;
    bool alpha, beta;           /* takes alpha / beta from activation_alpha / _beta */
    float def_alpha, def_beta;  /* the ONNX op's defaults */
} act_table[] = {
    {"Relu", Q8_RNN_ACT_RELU, false, false, 0, 0},
    {"Tanh", Q8_RNN_ACT_TANH, false, false, 0, 0},
    {"Sigmoid", Q8_RNN_ACT_SIGMOID, false, false, 0, 0},
    {"Affine", Q8_RNN_ACT_AFFINE, true, true, 1.0f, 0.0f},
    {"LeakyRelu", Q8_RNN_ACT_LEAKY_RELU, true, false, 0.01f, 0},
    {"ThresholdedRelu", Q8_RNN_ACT_THRESHOLDED_RELU, true, false, 1.0f, 0},
    {"ScaledTanh", Q8_RNN_ACT_SCALED_TANH, true, true, 1.0f, 1.0f},
    {"HardSigmoid", Q8_RNN_ACT_HARD_SIGMOID, true, true, 0.2f, 0.5f},
    {"Elu", Q8_RNN_ACT_ELU, true, false, 1.0f, 0},
    {"Softsign", Q8_RNN_ACT_SOFTSIGN, false, false, 0, 0},
    {"Softplus", Q8_RNN_ACT_SOFTPLUS, false, false, 0, 0},
};

/* activations / activation_alpha / activation_beta into p->act. The alpha
 * and beta lists are consumed in the order of the activations, one value
 * by each activation that takes one (ONNX Runtime's reading); a missing
 * value is the op's default. One direction's list for a bidirectional node
 * serves both. */
static q8_status parse_acts(const q8_node *n, q8_rnn_params *p, q8_error *err) {
    static const q8_rnn_act_kind defaults[3][3] = {
        [Q8_RNN_SIMPLE] = {Q8_RNN_ACT_TANH},
        [Q8_RNN_GRU] = {Q8_RNN_ACT_SIGMOID, Q8_RNN_ACT_TANH},
        [Q8_RNN_LSTM] = {Q8_RNN_ACT_SIGMOID, Q8_RNN_ACT_TANH, Q8_RNN_ACT_TANH},
    };
    int per = p->cell == Q8_RNN_SIMPLE ? 1 : p->cell == Q8_RNN_GRU ? 2 : 3;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < per; k++) p->act[d][k] = (q8_rnn_act){defaults[p->cell][k], 0, 0};
    const q8_attr *a = q8_attr_find(n, "activations");
    if (!a) return Q8_OK;
    if (a->type != Q8_ATTR_STRINGS)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "activations must be a list of strings");
    if (a->n != per * p->dirs && a->n != per)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "%d activations given, expected %d (%d per direction)", a->n,
                            per * p->dirs, per);
    int na, nb;
    const float *al = q8_attr_floats(n, "activation_alpha", &na);
    const float *be = q8_attr_floats(n, "activation_beta", &nb);
    int ia = 0, ib = 0;
    for (int i = 0; i < a->n; i++) {
        size_t k = 0, count = sizeof act_table / sizeof act_table[0];
        while (k < count && strcasecmp(a->strings[i], act_table[k].name) != 0) k++;
        if (k == count)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "activation '%.40s' is not one the ONNX recurrent ops allow",
                                a->strings[i]);
        q8_rnn_act *x = &p->act[i / per][i % per];
        x->kind = act_table[k].kind;
        x->alpha = act_table[k].alpha && ia < na ? al[ia++] : act_table[k].def_alpha;
        x->beta = act_table[k].beta && ib < nb ? be[ib++] : act_table[k].def_beta;
    }
    if (a->n == per)
        for (int k = 0; k < per; k++) p->act[1][k] = p->act[0][k];
    return Q8_OK;
}

/* Input i, when present, must be float32 with exactly these dims. */
static q8_status check_shape(const q8_graph *g, const q8_node *n, int i, q8_dtype dt,
                             const int64_t *dims, int nd, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, i, dt, err));
    const q8_tensor *t = q8_in(g, n, i);
    bool same = t->ndim == nd;
    for (int k = 0; same && k < nd; k++) same = t->dims[k] == dims[k];
    if (!same) {
        char got[96], want[96];
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has shape %s, expected %s", t->name,
                            q8_shape_str(t->dims, t->ndim, got, sizeof got),
                            q8_shape_str(dims, nd, want, sizeof want));
    }
    return Q8_OK;
}

/* A constant sequence_lens must lie in [0, S]. */
static q8_status check_lens(const q8_graph *g, const q8_node *n, const q8_rnn_params *p,
                            q8_error *err) {
    const q8_tensor *t = q8_in(g, n, Q8_RNN_IN_LENS);
    if (!t->data) return Q8_OK;
    for (int64_t b = 0; b < p->batch; b++) {
        int32_t v = ((const int32_t *)t->data)[b];
        if (v < 0 || v > p->seq)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "sequence_lens[%lld] is %d, outside [0, %lld] (the sequence "
                                "length)",
                                (long long)b, (int)v, (long long)p->seq);
    }
    return Q8_OK;
}

static q8_status rnn_infer(q8_graph *g, q8_node *n, q8_error *err) {
    q8_rnn_cell cell = n->op == Q8_OP_LSTM ? Q8_RNN_LSTM
                       : n->op == Q8_OP_GRU ? Q8_RNN_GRU : Q8_RNN_SIMPLE;
    bool lstm = cell == Q8_RNN_LSTM;
    Q8_TRY(q8_check_io(n, 3, lstm ? 8 : 6, 0, lstm ? 3 : 2, err));
    for (int i = 0; i < 3; i++) Q8_TRY(q8_check_input(g, n, i, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1), *r = q8_in(g, n, 2);
    int64_t layout = q8_attr_int(n, "layout", 0);
    if (layout != 0 && layout != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "layout is %lld, must be 0 or 1",
                            (long long)layout);
    if (x->ndim != 3 || w->ndim != 3 || r->ndim != 3)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "X, W and R must have rank 3 (ranks %d, %d, %d)",
                            x->ndim, w->ndim, r->ndim);
    q8_rnn_params pp = {.cell = cell, .gates = lstm ? 4 : cell == Q8_RNN_GRU ? 3 : 1};
    q8_rnn_params *p = &pp;
    p->batch_first = layout == 1;
    p->seq = x->dims[p->batch_first ? 1 : 0];
    p->batch = x->dims[p->batch_first ? 0 : 1];
    p->input = x->dims[2];
    p->hidden = r->dims[2];
    const char *dir = q8_attr_str(n, "direction", "forward");
    if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "direction '%.40s' is not forward, reverse or bidirectional", dir);
    p->dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    p->reverse = strcmp(dir, "reverse") == 0;
    int64_t hs = q8_attr_int(n, "hidden_size", p->hidden);
    if (hs != p->hidden)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "hidden_size is %lld but R '%s' has %lld columns",
                            (long long)hs, r->name, (long long)p->hidden);
    if (p->seq <= 0 || p->batch <= 0 || p->input <= 0 || p->hidden <= 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "empty sizes (sequence %lld, batch %lld, input %lld, hidden %lld)",
                            (long long)p->seq, (long long)p->batch, (long long)p->input,
                            (long long)p->hidden);
    int64_t D = p->dirs, G = p->gates, H = p->hidden, N = p->batch;
    const int64_t wd[3] = {D, G * H, p->input}, rd[3] = {D, G * H, H}, bd[2] = {D, 2 * G * H};
    const int64_t ld[1] = {N}, pd[2] = {D, 3 * H};
    const int64_t hd[3] = {p->batch_first ? N : D, p->batch_first ? D : N, H};
    Q8_TRY(check_shape(g, n, Q8_RNN_IN_W, Q8_F32, wd, 3, err));
    Q8_TRY(check_shape(g, n, Q8_RNN_IN_R, Q8_F32, rd, 3, err));
    p->has_b = q8_has_input(n, Q8_RNN_IN_B);
    p->has_lens = q8_has_input(n, Q8_RNN_IN_LENS);
    p->has_h0 = q8_has_input(n, Q8_RNN_IN_H0);
    p->has_c0 = lstm && q8_has_input(n, Q8_RNN_IN_C0);
    p->has_p = lstm && q8_has_input(n, Q8_RNN_IN_P);
    if (p->has_b) Q8_TRY(check_shape(g, n, Q8_RNN_IN_B, Q8_F32, bd, 2, err));
    if (p->has_lens) Q8_TRY(check_shape(g, n, Q8_RNN_IN_LENS, Q8_I32, ld, 1, err));
    if (p->has_h0) Q8_TRY(check_shape(g, n, Q8_RNN_IN_H0, Q8_F32, hd, 3, err));
    if (p->has_c0) Q8_TRY(check_shape(g, n, Q8_RNN_IN_C0, Q8_F32, hd, 3, err));
    if (p->has_p) Q8_TRY(check_shape(g, n, Q8_RNN_IN_P, Q8_F32, pd, 2, err));
    if (p->has_lens) Q8_TRY(check_lens(g, n, p, err));
    const q8_attr *clip = q8_attr_find(n, "clip");
    if (clip) {
        if (!(clip->f > 0) || isinf(clip->f))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "clip is %g, must be positive and finite",
                                (double)clip->f);
        p->clip = clip->f;
    }
    int64_t lbr = cell == Q8_RNN_GRU ? q8_attr_int(n, "linear_before_reset", 0) : 0;
    int64_t inf = lstm ? q8_attr_int(n, "input_forget", 0) : 0;
    p->linear_before_reset = lbr != 0;
    if (inf != 0 && inf != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "input_forget is %lld, must be 0 or 1",
                            (long long)inf);
    p->input_forget = inf == 1;
    Q8_TRY(parse_acts(n, p, err));
    q8_rnn_params *out = q8_node_params(n, sizeof *out, err);
    if (!out) return Q8_ERR_NOMEM;
    *out = pp;
    const int64_t yd[4] = {p->batch_first ? N : p->seq, p->batch_first ? p->seq : D,
                           p->batch_first ? D : N, H};
    Q8_TRY(q8_set_output(g, n, Q8_RNN_OUT_Y, Q8_F32, yd, 4, err));
    Q8_TRY(q8_set_output(g, n, Q8_RNN_OUT_YH, Q8_F32, hd, 3, err));
    if (lstm) Q8_TRY(q8_set_output(g, n, Q8_RNN_OUT_YC, Q8_F32, hd, 3, err));
    return Q8_OK;
}

const q8_op_schema q8_schema_rnn = {.infer = rnn_infer};
const q8_op_schema q8_schema_gru = {.infer = rnn_infer};
const q8_op_schema q8_schema_lstm = {.infer = rnn_infer};
