/* Tests of the recurrent layers RNN, GRU and LSTM against a plain reference
 * written here from the ONNX spec (loops in double, one batch row and one
 * step at a time), on seeded random data and awkward shapes (batch 1 and 3,
 * hidden 1, 5 and 17, one step and seven), every direction, both layouts,
 * sequence_lens shorter than the sequence (and 0), initial states, biases,
 * peepholes, clip, every activation, W and R as constants (packed) and as
 * graph inputs; run with 1 and 3 threads, which must agree bit for bit; and
 * the errors. */
#include <string.h>

#include "testutil.h"

typedef struct rc_case {
    const char *op;             /* "RNN", "GRU", "LSTM" */
    int dir;                    /* 0 forward, 1 reverse, 2 bidirectional */
    int layout;
    int64_t S, N, I, H;
    bool bias, h0, c0, peep, lbr, input_forget, const_w;
    const int32_t *lens;        /* NULL: absent */
    float clip;                 /* 0: absent */
    float wrange;               /* W and R uniform in [-wrange, wrange] (0: 0.5) */
    int nact;
    const char *acts[6];
    int nalpha, nbeta;
    float alpha[6], beta[6];
    unsigned outs;              /* bit k: output k requested (0: all) */
} rc_case;

static const char *const dir_names[] = {"forward", "reverse", "bidirectional"};

static int gates_of(const rc_case *c) {
    return !strcmp(c->op, "LSTM") ? 4 : !strcmp(c->op, "GRU") ? 3 : 1;
}
static bool is_lstm(const rc_case *c) { return !strcmp(c->op, "LSTM"); }
static int ndirs(const rc_case *c) { return c->dir == 2 ? 2 : 1; }
static int n_outputs(const rc_case *c) { return is_lstm(c) ? 3 : 2; }
static unsigned out_mask(const rc_case *c) { return c->outs ? c->outs : (1u << n_outputs(c)) - 1; }

/* The case's tensors, seeded. */
typedef struct rc_data {
    float *x, *w, *r, *b, *h0, *c0, *p;
} rc_data;

static float *rnd(q8t_rng *g, int64_t n, float lim) {
    float *v = malloc(sizeof(float) * (size_t)n);
    q8t_fill(g, v, n, -lim, lim);
    return v;
}

static rc_data rc_make(const rc_case *c, uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    int64_t D = ndirs(c), GH = gates_of(c) * c->H;
    float lim = c->wrange > 0 ? c->wrange : 0.5f;
    rc_data d = {rnd(&g, c->S * c->N * c->I, 1.0f), rnd(&g, D * GH * c->I, lim),
                 rnd(&g, D * GH * c->H, lim), rnd(&g, D * 2 * GH, lim),
                 rnd(&g, D * c->N * c->H, 1.0f), rnd(&g, D * c->N * c->H, 1.0f),
                 rnd(&g, D * 3 * c->H, lim)};
    return d;
}

static void rc_free(rc_data *d) {
    free(d->x), free(d->w), free(d->r), free(d->b), free(d->h0), free(d->c0), free(d->p);
}

/* ---------------------------------------------------------------- the graph */

static void set_strings(q8_graph *g, const char *name, const char *const *v, int n) {
    q8_attr *a = q8_node_set_attr(g->nodes[g->n_nodes - 1], name, Q8_ATTR_STRINGS);
    cr_assert(a);
    a->n = n;
    a->strings = calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++) a->strings[i] = q8_strdup(v[i]);
}

/* Inputs in ONNX order, absent ones unnamed; graph inputs (non-constant)
 * get data in this order too (rc_feed). */
static q8_graph *rc_build(const rc_case *c, const rc_data *d) {
    int64_t D = ndirs(c), G = gates_of(c), H = c->H, N = c->N;
    const void *wdata = c->const_w ? d->w : NULL, *rdata = c->const_w ? d->r : NULL;
    q8t_in ins[8] = {
        {"X", Q8_F32, 3, {c->layout ? N : c->S, c->layout ? c->S : N, c->I}, NULL},
        {"W", Q8_F32, 3, {D, G * H, c->I}, wdata},
        {"R", Q8_F32, 3, {D, G * H, H}, rdata},
        {c->bias ? "B" : NULL, Q8_F32, 2, {D, 2 * G * H}, c->const_w ? d->b : NULL},
        {c->lens ? "lens" : NULL, Q8_I32, 1, {N}, NULL},
        {c->h0 ? "h0" : NULL, Q8_F32, 3, {c->layout ? N : D, c->layout ? D : N, H}, NULL},
        {c->c0 ? "c0" : NULL, Q8_F32, 3, {c->layout ? N : D, c->layout ? D : N, H}, NULL},
        {c->peep ? "P" : NULL, Q8_F32, 2, {D, 3 * H}, NULL},
    };
    int n_in = is_lstm(c) ? 8 : 6;
    while (n_in > 3 && !ins[n_in - 1].name) n_in--;
    q8_graph *g = q8t_graph1(c->op, ins, n_in, n_outputs(c));
    q8t_attr_str(g, "direction", dir_names[c->dir]);
    q8t_attr_int(g, "hidden_size", H);
    if (c->layout) q8t_attr_int(g, "layout", 1);
    if (c->clip > 0) q8t_attr_float(g, "clip", c->clip);
    if (c->lbr) q8t_attr_int(g, "linear_before_reset", 1);
    if (c->input_forget) q8t_attr_int(g, "input_forget", 1);
    if (c->nact) set_strings(g, "activations", c->acts, c->nact);
    if (c->nalpha) q8t_attr_floats(g, "activation_alpha", c->alpha, c->nalpha);
    if (c->nbeta) q8t_attr_floats(g, "activation_beta", c->beta, c->nbeta);
    /* unrequested outputs: unnamed in the node, not graph outputs */
    q8_node *n = g->nodes[g->n_nodes - 1];
    int kept = 0;
    for (int k = 0; k < n_outputs(c); k++) {
        if (out_mask(c) >> k & 1) g->outputs[kept++] = n->outputs[k];
        else n->outputs[k] = -1;
    }
    g->n_outputs = kept;
    return g;
}

/* Data of the graph inputs, in the order rc_build made them. */
static int rc_feed(const rc_case *c, const rc_data *d, const void **data) {
    int k = 0;
    data[k++] = d->x;
    if (!c->const_w) data[k++] = d->w, data[k++] = d->r;
    if (c->bias && !c->const_w) data[k++] = d->b;
    if (c->lens) data[k++] = c->lens;
    if (c->h0) data[k++] = d->h0;
    if (c->c0 && is_lstm(c)) data[k++] = d->c0;
    if (c->peep && is_lstm(c)) data[k++] = d->p;
    return k;
}

/* ---------------------------------------------------------------- reference */

typedef struct ref_act {
    const char *name;
    double a, b;
} ref_act;

/* The spec's activations; alpha and beta as rnn.h documents: taken in
 * order by the activations that use them, else the ONNX op's default. */
static void ref_acts(const rc_case *c, int per, ref_act out[2][3]) {
    static const char *const def[3][3] = {
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    int cell = per - 1;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < per; k++) out[d][k] = (ref_act){def[cell][k], 0, 0};
    int ia = 0, ib = 0;
    for (int i = 0; i < c->nact; i++) {
        ref_act *r = &out[i / per][i % per];
        r->name = c->acts[i];
        const char *n = r->name;
        bool ua = !strcmp(n, "Affine") || !strcmp(n, "LeakyRelu") ||
                  !strcmp(n, "ThresholdedRelu") || !strcmp(n, "ScaledTanh") ||
                  !strcmp(n, "HardSigmoid") || !strcmp(n, "Elu");
        bool ub = !strcmp(n, "Affine") || !strcmp(n, "ScaledTanh") || !strcmp(n, "HardSigmoid");
        double da = !strcmp(n, "LeakyRelu") ? 0.01 : !strcmp(n, "HardSigmoid") ? 0.2 : 1.0;
        double db = !strcmp(n, "HardSigmoid") ? 0.5 : !strcmp(n, "ScaledTanh") ? 1.0 : 0.0;
        r->a = ua ? (ia < c->nalpha ? c->alpha[ia++] : da) : 0;
        r->b = ub ? (ib < c->nbeta ? c->beta[ib++] : db) : 0;
    }
    if (c->nact == per)
        for (int k = 0; k < per; k++) out[1][k] = out[0][k];
}

static double act(const ref_act *f, double x) {
    const char *n = f->name;
    double a = f->a, b = f->b;
    if (!strcmp(n, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(n, "Tanh")) return tanh(x);
    if (!strcmp(n, "Sigmoid")) return 1 / (1 + exp(-x));
    if (!strcmp(n, "Affine")) return a * x + b;
    if (!strcmp(n, "LeakyRelu")) return x >= 0 ? x : a * x;
    if (!strcmp(n, "ThresholdedRelu")) return x > a ? x : 0;
    if (!strcmp(n, "ScaledTanh")) return a * tanh(b * x);
    if (!strcmp(n, "HardSigmoid")) return fmin(fmax(a * x + b, 0), 1);
    if (!strcmp(n, "Elu")) return x >= 0 ? x : a * expm1(x);
    if (!strcmp(n, "Softsign")) return x / (1 + fabs(x));
    if (!strcmp(n, "Softplus")) return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    cr_assert_fail("unknown activation %s", n);
    return 0;
}

static double clipd(const rc_case *c, double v) {
    if (c->clip > 0) v = fmin(fmax(v, -c->clip), c->clip);
    return v;
}

/* sum_i v[i] * m[row][i] for a row-major m with `cols` columns. */
static double dot(const float *m, int64_t row, int64_t cols, const double *v) {
    double s = 0;
    for (int64_t i = 0; i < cols; i++) s += (double)m[row * cols + i] * v[i];
    return s;
}

/* Y, Y_h, Y_c of the spec, in double, written to y/yh/yc (layout 0 shapes
 * [S, D, N, H] and [D, N, H]; the caller maps layout 1). */
static void reference(const rc_case *c, const rc_data *dd, double *y, double *yh, double *yc) {
    int64_t S = c->S, N = c->N, I = c->I, H = c->H, D = ndirs(c), G = gates_of(c), GH = G * H;
    int per = G == 1 ? 1 : G == 3 ? 2 : 3;
    ref_act acts[2][3];
    ref_acts(c, per, acts);
    double *xt = malloc(sizeof(double) * (size_t)I), *h = malloc(sizeof(double) * (size_t)H);
    double *cs = malloc(sizeof(double) * (size_t)H), *g = malloc(sizeof(double) * (size_t)(GH * 2));
    double *rh = malloc(sizeof(double) * (size_t)H), *hn = malloc(sizeof(double) * (size_t)H);
    memset(y, 0, sizeof(double) * (size_t)(S * D * N * H));
    for (int64_t d = 0; d < D; d++) {
        bool rev = c->dir == 1 || d == 1;
        const float *W = dd->w + d * GH * I, *R = dd->r + d * GH * H;
        const float *Wb = c->bias ? dd->b + d * 2 * GH : NULL, *Rb = Wb ? Wb + GH : NULL;
        const float *P = c->peep ? dd->p + d * 3 * H : NULL;
        const ref_act *f = &acts[d][0], *ga = &acts[d][1], *ha = &acts[d][2];
        for (int64_t n = 0; n < N; n++) {
            int64_t L = c->lens ? c->lens[n] : S;
            for (int64_t j = 0; j < H; j++) {
                int64_t at = c->layout ? (n * D + d) * H + j : (d * N + n) * H + j;
                h[j] = c->h0 ? dd->h0[at] : 0;
                cs[j] = c->c0 ? dd->c0[at] : 0;
            }
            for (int64_t s = 0; s < L; s++) {
                int64_t t = rev ? L - 1 - s : s;
                for (int64_t i = 0; i < I; i++)
                    xt[i] = dd->x[(c->layout ? n * S + t : t * N + n) * I + i];
                /* g[k] = x W_k^T + Wb_k, g[GH + k] = h R_k^T + Rb_k */
                for (int64_t k = 0; k < GH; k++) {
                    g[k] = dot(W, k, I, xt) + (Wb ? Wb[k] : 0);
                    g[GH + k] = dot(R, k, H, h) + (Rb ? Rb[k] : 0);
                }
                if (G == 1) {
                    for (int64_t j = 0; j < H; j++) hn[j] = act(f, clipd(c, g[j] + g[GH + j]));
                } else if (G == 3) { /* z r h */
                    for (int64_t j = 0; j < H; j++)
                        rh[j] = act(f, clipd(c, g[H + j] + g[GH + H + j])) * h[j];
                    for (int64_t j = 0; j < H; j++) {
                        double z = act(f, clipd(c, g[j] + g[GH + j]));
                        double r = act(f, clipd(c, g[H + j] + g[GH + H + j]));
                        double pre;
                        if (c->lbr) pre = g[2 * H + j] + r * g[GH + 2 * H + j];
                        else
                            pre = g[2 * H + j] + dot(R + 2 * H * H, j, H, rh) +
                                  (Rb ? Rb[2 * H + j] : 0);
                        hn[j] = (1 - z) * act(ga, clipd(c, pre)) + z * h[j];
                    }
                } else { /* i o f c */
                    for (int64_t j = 0; j < H; j++) {
                        double i_ = act(f, clipd(c, g[j] + g[GH + j] + (P ? P[j] * cs[j] : 0)));
                        double f_ = c->input_forget
                                        ? 1 - i_
                                        : act(f, clipd(c, g[2 * H + j] + g[GH + 2 * H + j] +
                                                              (P ? P[2 * H + j] * cs[j] : 0)));
                        double c_ = act(ga, clipd(c, g[3 * H + j] + g[GH + 3 * H + j]));
                        cs[j] = f_ * cs[j] + i_ * c_;
                        double o_ = act(f, clipd(c, g[H + j] + g[GH + H + j] +
                                                       (P ? P[H + j] * cs[j] : 0)));
                        hn[j] = o_ * act(ha, clipd(c, cs[j]));
                    }
                }
                memcpy(h, hn, sizeof(double) * (size_t)H);
                for (int64_t j = 0; j < H; j++) y[((t * D + d) * N + n) * H + j] = h[j];
            }
            for (int64_t j = 0; j < H; j++) {
                yh[(d * N + n) * H + j] = L > 0 ? h[j] : 0;
                yc[(d * N + n) * H + j] = L > 0 ? cs[j] : 0;
            }
        }
    }
    free(xt), free(h), free(cs), free(g), free(rh), free(hn);
}

/* ---------------------------------------------------------------- checks */

static void compare(const rc_case *c, const char *what, const float *got, const double *want,
                    int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double tol = 3e-5 + 1e-4 * fabs(want[i]);
        cr_assert(fabs(got[i] - want[i]) <= tol,
                  "%s %s dir %d layout %d S%lld N%lld I%lld H%lld: %s[%lld] is %.7g, want %.7g",
                  c->op, c->lbr ? "lbr" : "", c->dir, c->layout, (long long)c->S, (long long)c->N,
                  (long long)c->I, (long long)c->H, what, (long long)i, got[i], want[i]);
    }
}

/* Run the case with 1 and 3 threads (same bits) and compare with the
 * reference. */
static void rc_check(const rc_case *c, uint64_t seed) {
    rc_data d = rc_make(c, seed);
    const void *data[8];
    rc_feed(c, &d, data);
    void *o1[3] = {0}, *o3[3] = {0};
    q8_tensor_info i1[3], i3[3];
    q8_error err = {0};
    q8_status st = q8t_run(rc_build(c, &d), data, 1, o1, i1, 3, &err);
    cr_assert_eq(st, Q8_OK, "%s: %s", c->op, err.msg);
    st = q8t_run(rc_build(c, &d), data, 3, o3, i3, 3, &err);
    cr_assert_eq(st, Q8_OK, "%s (3 threads): %s", c->op, err.msg);
    int64_t S = c->S, N = c->N, H = c->H, D = ndirs(c);
    double *y = malloc(sizeof(double) * (size_t)(S * D * N * H));
    size_t sbytes = sizeof(double) * (size_t)(D * N * H);
    double *yh = malloc(sbytes), *yc = malloc(sbytes);
    reference(c, &d, y, yh, yc);
    double *ly = malloc(sizeof(double) * (size_t)(S * D * N * H));
    double *lh = malloc(sbytes), *lc = malloc(sbytes);
    /* the reference in the case's layout */
    for (int64_t t = 0; t < S; t++)
        for (int64_t dd = 0; dd < D; dd++)
            for (int64_t n = 0; n < N; n++)
                for (int64_t j = 0; j < H; j++) {
                    int64_t src = ((t * D + dd) * N + n) * H + j;
                    int64_t dst = c->layout ? ((n * S + t) * D + dd) * H + j : src;
                    ly[dst] = y[src];
                    if (t == 0) {
                        int64_t s2 = (dd * N + n) * H + j;
                        int64_t d2 = c->layout ? (n * D + dd) * H + j : s2;
                        lh[d2] = yh[s2], lc[d2] = yc[s2];
                    }
                }
    const double *want[3] = {ly, lh, lc};
    const int64_t counts[3] = {S * D * N * H, D * N * H, D * N * H};
    const char *names[3] = {"Y", "Y_h", "Y_c"};
    int k = 0;
    for (int out = 0; out < n_outputs(c); out++) {
        if (!(out_mask(c) >> out & 1)) continue;
        int64_t nd = out == 0 ? 4 : 3;
        cr_assert_eq(i1[k].ndim, nd, "%s rank", names[out]);
        cr_assert(memcmp(o1[k], o3[k], sizeof(float) * (size_t)counts[out]) == 0,
                  "%s %s differs between 1 and 3 threads", c->op, names[out]);
        compare(c, names[out], o1[k], want[out], counts[out]);
        k++;
    }
    for (int i = 0; i < 3; i++) free(o1[i]), free(o3[i]);
    free(y), free(yh), free(yc), free(ly), free(lh), free(lc);
    rc_free(&d);
}

/* ---------------------------------------------------------------- tests */

typedef struct shape {
    int64_t S, N, I, H;
} shape;

static const shape shapes[] = {
    {1, 1, 3, 1}, {7, 3, 4, 5}, {7, 1, 2, 17}, {1, 3, 5, 17}, {7, 3, 6, 1},
};

/* Every cell variant, direction and shape; layout, lengths, initial
 * states, bias and constant weights vary with the case number. */
static void sweep(const char *op, bool lbr, bool peep, bool input_forget) {
    static const int32_t lens7[3] = {7, 3, 0}, lens1[3] = {1, 0, 1}, lens7b[3] = {5, 7, 2};
    int k = 0;
    for (int dir = 0; dir < 3; dir++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++, k++) {
            rc_case c = {.op = op, .dir = dir, .layout = k % 2, .S = shapes[s].S,
                         .N = shapes[s].N, .I = shapes[s].I, .H = shapes[s].H, .lbr = lbr,
                         .peep = peep, .input_forget = input_forget};
            c.bias = k % 3 != 1;
            c.h0 = k % 2 == 0;
            c.c0 = k % 4 < 2;
            c.const_w = k % 3 != 2;
            if (c.N == 3 && k % 2 == 1) c.lens = c.S == 7 ? (k % 4 == 1 ? lens7 : lens7b) : lens1;
            rc_check(&c, 1000 + (uint64_t)k);
        }
}

Test(rnn, simple_every_direction_and_shape) { sweep("RNN", false, false, false); }
Test(gru, every_direction_and_shape) { sweep("GRU", false, false, false); }
Test(gru, linear_before_reset) { sweep("GRU", true, false, false); }
Test(lstm, every_direction_and_shape) { sweep("LSTM", false, false, false); }
Test(lstm, peepholes_and_input_forget) {
    sweep("LSTM", false, true, false);
    sweep("LSTM", false, true, true);
}

/* Each activation in each slot, with and without alpha / beta given. */
Test(rnn, every_activation) {
    static const char *const names[] = {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu",
                                        "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
                                        "Softsign", "Softplus"};
    int na = (int)(sizeof names / sizeof *names);
    static const int32_t lens[3] = {7, 4, 6};
    for (int k = 0; k < na; k++) {
        const char *a = names[k], *b = names[(k + 1) % na], *c3 = names[(k + 5) % na];
        for (int given = 0; given < 2; given++) {
            rc_case rnn = {.op = "RNN", .dir = 2, .S = 7, .N = 3, .I = 4, .H = 5, .bias = true,
                           .h0 = true, .const_w = true, .lens = lens, .nact = 2, .acts = {a, b},
                           .wrange = 0.3f};
            rc_case gru = {.op = "GRU", .dir = 0, .S = 7, .N = 3, .I = 4, .H = 5, .bias = true,
                           .h0 = true, .nact = 2, .acts = {a, b}, .layout = 1, .wrange = 0.3f};
            rc_case lstm = {.op = "LSTM", .dir = 2, .S = 7, .N = 1, .I = 3, .H = 17,
                            .bias = true, .h0 = true, .c0 = true, .const_w = true, .nact = 6,
                            .acts = {a, b, c3, b, c3, a}, .wrange = 0.3f};
            if (given) {
                const float al[6] = {0.3f, 0.7f, 1.3f, -0.4f, 0.9f, 0.2f};
                const float be[6] = {0.25f, 1.5f, -0.5f, 0.6f, 0.1f, 0.8f};
                rc_case *cs[3] = {&rnn, &gru, &lstm};
                for (int i = 0; i < 3; i++) {
                    cs[i]->nalpha = cs[i]->nbeta = 6;
                    memcpy(cs[i]->alpha, al, sizeof al);
                    memcpy(cs[i]->beta, be, sizeof be);
                }
            }
            rc_check(&rnn, 50 + (uint64_t)k);
            rc_check(&gru, 70 + (uint64_t)k);
            rc_check(&lstm, 90 + (uint64_t)k);
        }
    }
}

/* Each activation alone, densely: an RNN with W = 1, R = 0 and one step
 * gives Y = f(x) for every batch row; magnitudes from 1e-38 to 90 (and
 * denormals, zeros, the tanh kernel's switch at 0.25), both signs, within
 * 1e-6 relative of the double value. */
Test(rnn, activation_accuracy) {
    enum { K = 4001 };
    float *x = malloc(sizeof(float) * K);
    for (int i = 0; i < K - 8; i++) {
        double mag = pow(10.0, -38.0 + 40.0 * (i / 2) / ((K - 8) / 2.0));
        x[i] = (float)(i % 2 ? -mag : mag);
    }
    const float extra[8] = {0.0f, -0.0f, 1e-45f, -3e-42f, 0.25f, nextafterf(0.25f, 0),
                            -nextafterf(0.25f, 1), 90.0f};
    memcpy(x + K - 8, extra, sizeof extra);
    const float one = 1, zero = 0;
    const char *const names[] = {"Tanh", "Sigmoid", "ScaledTanh", "Softplus", "Elu",
                                 "Softsign", "HardSigmoid", "LeakyRelu", "Affine"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        q8t_in ins[3] = {{"X", Q8_F32, 3, {1, K, 1}, NULL}, {"W", Q8_F32, 3, {1, 1, 1}, &one},
                         {"R", Q8_F32, 3, {1, 1, 1}, &zero}};
        q8_graph *g = q8t_graph1("RNN", ins, 3, 1);
        set_strings(g, "activations", &names[k], 1);
        const float al = 1.3f, be = 0.7f;
        q8t_attr_floats(g, "activation_alpha", &al, 1);
        q8t_attr_floats(g, "activation_beta", &be, 1);
        const void *data[1] = {x};
        void *out[1];
        q8_tensor_info info[1];
        q8_error err = {0};
        cr_assert_eq(q8t_run(g, data, 1, out, info, 1, &err), Q8_OK, "%s", err.msg);
        rc_case c = {.nact = 1, .acts = {names[k]}, .nalpha = 1, .nbeta = 1, .alpha = {al},
                     .beta = {be}};
        ref_act f[2][3];
        ref_acts(&c, 1, f);
        const float *y = out[0];
        for (int i = 0; i < K; i++) {
            double want = act(&f[0][0], (double)x[i]);
            /* a*x + b in float: relative to its terms, not to the sum */
            double scale = fabs(want) + (k >= 6 ? fabs(al * x[i]) + fabs(be) : 0);
            cr_assert(fabs(y[i] - want) <= 1e-6 * scale + 1e-44,
                      "%s(%.9g) is %.9g, want %.9g", names[k], x[i], y[i], want);
        }
        free(out[0]);
    }
    free(x);
}

/* One direction's activations serve both directions of a bidirectional
 * node. */
Test(rnn, one_activation_list_for_both_directions) {
    rc_case c = {.op = "GRU", .dir = 2, .S = 7, .N = 3, .I = 4, .H = 5, .bias = true,
                 .const_w = true, .nact = 2, .acts = {"HardSigmoid", "Softsign"}, .nalpha = 1,
                 .alpha = {0.3f}};
    rc_check(&c, 11);
}

/* Large weights so that clip bounds many gate inputs. */
Test(rnn, clip) {
    static const int32_t lens[3] = {6, 7, 1};
    const char *ops[3] = {"RNN", "GRU", "LSTM"};
    for (int o = 0; o < 3; o++)
        for (int lbr = 0; lbr < 2; lbr++) {
            rc_case c = {.op = ops[o], .dir = 2, .S = 7, .N = 3, .I = 4, .H = 5, .bias = true,
                         .h0 = true, .c0 = true, .peep = true, .lbr = lbr, .const_w = lbr,
                         .lens = lens, .clip = 0.7f, .wrange = 2.0f};
            rc_check(&c, 30 + (uint64_t)(o * 2 + lbr));
        }
}

/* Any subset of the outputs. */
Test(rnn, optional_outputs) {
    static const int32_t lens[3] = {2, 0, 7};
    for (unsigned m = 1; m < 8; m++) {
        rc_case l = {.op = "LSTM", .dir = 2, .S = 7, .N = 3, .I = 4, .H = 5, .bias = true,
                     .h0 = true, .c0 = true, .const_w = true, .lens = lens, .outs = m,
                     .layout = (int)(m % 2)};
        rc_check(&l, 200 + m);
        if (m < 4) {
            rc_case gc = {.op = "GRU", .dir = 1, .S = 7, .N = 3, .I = 4, .H = 5, .lens = lens,
                          .outs = m};
            rc_check(&gc, 300 + m);
        }
    }
}

/* Sequence lengths read at run time beyond [0, S] are clamped. */
Test(rnn, run_time_lengths_clamped) {
    static const int32_t bad[3] = {-3, 99, 4}, fixed[3] = {0, 7, 4};
    rc_case c = {.op = "LSTM", .dir = 2, .S = 7, .N = 3, .I = 4, .H = 5, .bias = true,
                 .const_w = true, .lens = bad};
    rc_data d = rc_make(&c, 5);
    const void *data[8];
    rc_feed(&c, &d, data);
    void *o1[3] = {0}, *o2[3] = {0};
    q8_tensor_info i1[3], i2[3];
    q8_error err = {0};
    cr_assert_eq(q8t_run(rc_build(&c, &d), data, 1, o1, i1, 3, &err), Q8_OK, "%s", err.msg);
    c.lens = fixed;
    rc_feed(&c, &d, data);
    cr_assert_eq(q8t_run(rc_build(&c, &d), data, 1, o2, i2, 3, &err), Q8_OK, "%s", err.msg);
    const size_t bytes[3] = {7 * 2 * 3 * 5, 2 * 3 * 5, 2 * 3 * 5};
    for (int k = 0; k < 3; k++) {
        cr_assert(memcmp(o1[k], o2[k], sizeof(float) * bytes[k]) == 0, "output %d", k);
        free(o1[k]), free(o2[k]);
    }
    rc_free(&d);
}

/* All inputs constant: the node is folded at load (one thread, no pool)
 * and gives what a session computes. */
Test(rnn, folded_at_load) {
    rc_case c = {.op = "LSTM", .dir = 2, .S = 7, .N = 3, .I = 4, .H = 5, .bias = true,
                 .const_w = true};
    rc_data d = rc_make(&c, 21);
    const void *data[8];
    rc_feed(&c, &d, data);
    void *o1[3] = {0}, *o2[3] = {0};
    q8_tensor_info i1[3], i2[3];
    q8_error err = {0};
    cr_assert_eq(q8t_run(rc_build(&c, &d), data, 2, o1, i1, 3, &err), Q8_OK, "%s", err.msg);
    q8_graph *g = rc_build(&c, &d);
    q8_tensor *x = g->tensors[g->inputs[0]];
    cr_assert_eq(q8_tensor_alloc_data(x, NULL), Q8_OK);
    memcpy(x->data, d.x, q8_tensor_nbytes(x));
    g->n_inputs = 0;
    cr_assert_eq(q8t_run(g, NULL, 1, o2, i2, 3, &err), Q8_OK, "%s", err.msg);
    const size_t count[3] = {7 * 2 * 3 * 5, 2 * 3 * 5, 2 * 3 * 5};
    for (int k = 0; k < 3; k++) {
        cr_assert(memcmp(o1[k], o2[k], sizeof(float) * count[k]) == 0, "output %d", k);
        free(o1[k]), free(o2[k]);
    }
    rc_free(&d);
}

/* ---------------------------------------------------------------- errors */

static void replace_str(q8_graph *g, const char *name, const char *v) {
    q8_attr *a = q8_node_set_attr(g->nodes[g->n_nodes - 1], name, Q8_ATTR_STRING);
    cr_assert(a);
    a->s = q8_strdup(v);
}

static void replace_int(q8_graph *g, const char *name, int64_t v) {
    q8_attr *a = q8_node_set_attr(g->nodes[g->n_nodes - 1], name, Q8_ATTR_INT);
    cr_assert(a);
    a->i = v;
}

static void expect_err(q8_graph *g, const void *const *data, const char *substr) {
    void *outs[3] = {0};
    q8_tensor_info infos[3];
    q8_error err = {0};
    q8_status st = q8t_run(g, data, 1, outs, infos, 3, &err);
    for (int k = 0; k < 3; k++) free(outs[k]);
    cr_assert_neq(st, Q8_OK, "expected an error containing '%s'", substr);
    cr_assert(strstr(err.msg, substr), "message '%s' lacks '%s'", err.msg, substr);
}

Test(rnn, errors) {
    rc_case c = {.op = "LSTM", .S = 7, .N = 3, .I = 4, .H = 5, .const_w = true};
    rc_data d = rc_make(&c, 1);
    const void *data[8];
    rc_feed(&c, &d, data);
    q8_graph *g = rc_build(&c, &d);
    replace_str(g, "direction", "sideways");
    expect_err(g, data, "direction 'sideways' is not forward, reverse or bidirectional");
    g = rc_build(&c, &d);
    replace_int(g, "hidden_size", 6);
    expect_err(g, data, "hidden_size is 6 but R 'R' has 5 columns");
    g = rc_build(&c, &d);
    q8t_attr_int(g, "layout", 2);
    expect_err(g, data, "layout is 2, must be 0 or 1");
    g = rc_build(&c, &d);
    q8t_attr_float(g, "clip", -1.0f);
    expect_err(g, data, "clip is -1, must be positive");
    g = rc_build(&c, &d);
    q8t_attr_int(g, "input_forget", 3);
    expect_err(g, data, "input_forget is 3, must be 0 or 1");
    rc_case a = c;
    a.nact = 3;
    a.acts[0] = "Sigmoid", a.acts[1] = "Swish", a.acts[2] = "Tanh";
    expect_err(rc_build(&a, &d), data,
               "activation 'Swish' is not one the ONNX recurrent ops allow");
    a.nact = 2;
    expect_err(rc_build(&a, &d), data, "2 activations given, expected 3");
    /* W of the wrong shape: as a graph input of hidden 6 */
    data[1] = d.w, data[2] = d.r;
    q8t_in ins[3] = {{"X", Q8_F32, 3, {7, 3, 4}, NULL}, {"W", Q8_F32, 3, {1, 24, 4}, NULL},
                     {"R", Q8_F32, 3, {1, 20, 5}, NULL}};
    expect_err(q8t_graph1("LSTM", ins, 3, 2), data, "input 'W' has shape 1x24x4, expected 1x20x4");
    ins[0].dtype = Q8_F64;
    expect_err(q8t_graph1("GRU", ins, 3, 2), data, "input 'X' is float64, only float32");
    /* a constant sequence_lens beyond the sequence */
    static const int32_t lens[3] = {7, 8, 1};
    q8t_in li[5] = {{"X", Q8_F32, 3, {7, 3, 4}, NULL}, {"W", Q8_F32, 3, {1, 15, 4}, d.w},
                    {"R", Q8_F32, 3, {1, 15, 5}, d.r}, {NULL, Q8_F32, 0, {0}, NULL},
                    {"lens", Q8_I32, 1, {3}, lens}};
    expect_err(q8t_graph1("GRU", li, 5, 2), data, "sequence_lens[1] is 8, outside [0, 7]");
    rc_free(&d);
}
