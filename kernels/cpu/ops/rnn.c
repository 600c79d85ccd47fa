/* RNN, GRU and LSTM on the CPU (params: src/core/ops/rnn.h). The input
 * projection X W^T (with the biases) of every step and both directions is
 * one q8_sgemm; each step then runs H R^T as a small GEMM (a GEMV for one
 * batch row) and the gates elementwise, batch rows split over the threads.
 * Constant W and R are packed once per session in prepare. */
#include <math.h>
#include <string.h>

#include "clones.h"
#include "cpu_op.h"
#include "ops/rnn.h"
#include "sgemm.h"
#include "vmath.h"
#include "vmath_x86.h"

/* Offsets in the prepare blob of packed weights (0: not packed). */
typedef struct rnn_prep {
    size_t w;           /* W: [D*G*H, I] as op(B) = W^T */
    size_t r[2];        /* per direction, R's rows of the first step GEMM */
    size_t rh[2];       /* GRU without linear_before_reset: Rh, the second one */
} rnn_prep;

/* GRU without linear_before_reset needs the reset gate before Rh: its
 * steps run two GEMMs, z and r first. */
static bool split_step(const q8_rnn_params *p) {
    return p->cell == Q8_RNN_GRU && !p->linear_before_reset;
}

static int64_t step_cols(const q8_rnn_params *p) {
    return split_step(p) ? 2 * p->hidden : p->gates * p->hidden;
}

static const float *dir_r(const q8_rnn_params *p, const float *r, int d) {
    return r + (int64_t)d * p->gates * p->hidden * p->hidden;
}

static const void *packed(const void *prep, size_t off) {
    return prep && off ? (const char *)prep + off : NULL;
}

static q8_sgemm_op input_op(const q8_rnn_params *p, const void *wp, const float *x,
                            const float *w, const float *bias, float *xw) {
    int64_t cols = p->dirs * p->gates * p->hidden;
    return (q8_sgemm_op){.m = p->seq * p->batch, .n = cols, .k = p->input, .trans_b = true,
                         .alpha = 1, .a = x, .lda = p->input, .b = w, .ldb = p->input, .c = xw,
                         .ldc = cols, .b_packed = wp, .bias = bias, .bias_per_col = true};
}

/* rec[:, 0:cols] = h R^T (R with ldb H), rec rows G*H apart. */
static q8_sgemm_op step_op(const q8_rnn_params *p, const void *rp, const float *h,
                           const float *r, int64_t cols, float *rec) {
    return (q8_sgemm_op){.m = p->batch, .n = cols, .k = p->hidden, .trans_b = true, .alpha = 1,
                         .a = h, .lda = p->hidden, .b = r, .ldb = p->hidden, .c = rec,
                         .ldc = p->gates * p->hidden, .b_packed = rp};
}

static q8_status rnn_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                             void **prep, size_t *bytes, q8_error *err) {
    const q8_rnn_params *p = n->params;
    const q8_tensor *w = q8_in(g, n, Q8_RNN_IN_W), *r = q8_in(g, n, Q8_RNN_IN_R);
    int64_t H = p->hidden, cols = p->dirs * p->gates * H;
    rnn_prep off = {0};
    size_t total = q8_align_up(sizeof off, Q8_ALIGN), wb = 0, rb = 0, rhb = 0;
    if (w->data && p->seq * p->batch > 1) wb = q8_sgemm_packed_b_bytes(p->input, cols, 1, 0);
    if (r->data && p->batch > 1) {
        rb = q8_sgemm_packed_b_bytes(H, step_cols(p), 1, 0);
        if (split_step(p)) rhb = q8_sgemm_packed_b_bytes(H, H, 1, 0);
    }
    if (!wb && !rb && !rhb) return Q8_OK;
    if (wb) off.w = total, total += q8_align_up(wb, Q8_ALIGN);
    for (int d = 0; d < p->dirs; d++) {
        if (rb) off.r[d] = total, total += q8_align_up(rb, Q8_ALIGN);
        if (rhb) off.rh[d] = total, total += q8_align_up(rhb, Q8_ALIGN);
    }
    char *blob = q8_aligned_alloc(total);
    if (!blob) return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing %s weights", n->op_type);
    memcpy(blob, &off, sizeof off);
    if (wb) q8_sgemm_pack_b(blob + off.w, true, p->input, cols, w->data, p->input, 1, 0, 0);
    for (int d = 0; rb && d < p->dirs; d++) {
        const float *rd = dir_r(p, r->data, d);
        if (rb) q8_sgemm_pack_b(blob + off.r[d], true, H, step_cols(p), rd, H, 1, 0, 0);
        if (rhb) q8_sgemm_pack_b(blob + off.rh[d], true, H, H, rd + 2 * H * H, H, 1, 0, 0);
    }
    *prep = blob;
    *bytes = total;
    return Q8_OK;
}

/* ---- scratch: the GEMMs' scratch, then the float buffers ---- */

typedef struct rnn_bufs {
    size_t gemm, xw, bias, rec, h, c, rh, lens, total;
} rnn_bufs;

static size_t gemm_scratch_max(const q8_rnn_params *p, const void *prep, int n_threads) {
    const rnn_prep *o = prep;
    q8_sgemm_op in = input_op(p, packed(prep, o ? o->w : 0), NULL, NULL, NULL, NULL);
    size_t need = q8_sgemm_scratch_bytes(&in, n_threads);
    for (int d = 0; d < p->dirs; d++) {
        q8_sgemm_op s1 = step_op(p, packed(prep, o ? o->r[d] : 0), NULL, NULL, step_cols(p), NULL);
        size_t b = q8_sgemm_scratch_bytes(&s1, n_threads);
        need = b > need ? b : need;
        if (split_step(p)) {
            const void *rh = packed(prep, o ? o->rh[d] : 0);
            q8_sgemm_op s2 = step_op(p, rh, NULL, NULL, p->hidden, NULL);
            b = q8_sgemm_scratch_bytes(&s2, n_threads);
            need = b > need ? b : need;
        }
    }
    return need;
}

static rnn_bufs bufs_of(const q8_rnn_params *p, const void *prep, int n_threads) {
    rnn_bufs b;
    int64_t GH = p->gates * p->hidden, NH = p->batch * p->hidden;
    size_t at = 0;
#define TAKE(field, nbytes) (b.field = at, at += q8_align_up((size_t)(nbytes), Q8_ALIGN))
    TAKE(gemm, gemm_scratch_max(p, prep, n_threads));
    TAKE(xw, sizeof(float) * (size_t)(p->seq * p->batch * p->dirs * GH));
    TAKE(bias, sizeof(float) * (size_t)(p->dirs * GH));
    TAKE(rec, sizeof(float) * (size_t)(p->batch * GH));
    TAKE(h, sizeof(float) * (size_t)NH);
    TAKE(c, sizeof(float) * (size_t)NH);
    TAKE(rh, sizeof(float) * (size_t)NH);
    TAKE(lens, sizeof(int32_t) * (size_t)p->batch);
#undef TAKE
    b.total = at;
    return b;
}

static size_t rnn_scratch(const q8_graph *g, const q8_node *n, const void *prep, int n_threads) {
    (void)g;
    return bufs_of(n->params, prep, n_threads).total;
}

/* ---- activations ---- */

/* The activations, vectorized per ISA: vmath.h's sigmoid, tanh and expm1
 * (branch-free; rnn.c is built without trapping math or FMA contraction,
 * CMakeLists.txt, so every clone rounds alike). libm's tanhf per element was
 * most of an LSTM's time. */
Q8_CLONES static void act_apply(const q8_rnn_act *a, float *v, int64_t n) {
    float al = a->alpha, be = a->beta;
    switch (a->kind) {
    case Q8_RNN_ACT_SIGMOID: q8_sigmoid_f32(v, v, n); break;
    case Q8_RNN_ACT_TANH: for (int64_t i = 0; i < n; i++) v[i] = q8_vtanh(v[i]); break;
    case Q8_RNN_ACT_RELU: for (int64_t i = 0; i < n; i++) v[i] = v[i] > 0 ? v[i] : 0; break;
    case Q8_RNN_ACT_AFFINE: for (int64_t i = 0; i < n; i++) v[i] = al * v[i] + be; break;
    case Q8_RNN_ACT_LEAKY_RELU:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] >= 0 ? v[i] : al * v[i];
        break;
    case Q8_RNN_ACT_THRESHOLDED_RELU:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] > al ? v[i] : 0;
        break;
    case Q8_RNN_ACT_SCALED_TANH:
        for (int64_t i = 0; i < n; i++) v[i] = al * q8_vtanh(be * v[i]);
        break;
    case Q8_RNN_ACT_HARD_SIGMOID:
        for (int64_t i = 0; i < n; i++) v[i] = fminf(fmaxf(al * v[i] + be, 0.0f), 1.0f);
        break;
    case Q8_RNN_ACT_ELU:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] >= 0 ? v[i] : al * q8_vexpm1(v[i]);
        break;
    case Q8_RNN_ACT_SOFTSIGN:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] / (1 + fabsf(v[i]));
        break;
    case Q8_RNN_ACT_SOFTPLUS: /* log(1 + e^x) without overflow */
        for (int64_t i = 0; i < n; i++)
            v[i] = v[i] > 0 ? v[i] + log1pf(expf(-v[i])) : log1pf(expf(v[i]));
        break;
    }
}

static inline float clipv(float v, float c) {
    if (c > 0) v = v < -c ? -c : v > c ? c : v;
    return v;
}

/* ---- one step of one direction, over batch rows ---- */

typedef struct step_args {
    const q8_rnn_params *p;
    const q8_rnn_act *act;      /* this direction's f, g, h */
    const int32_t *lens;
    const float *xw;            /* this direction's columns: row stride D*G*H */
    const float *rbh;           /* GRU with linear_before_reset: Rbh (NULL: none) */
    const float *peep;          /* LSTM: P of this direction (NULL: none) */
    float *rec, *h, *c, *rh;
    float *y;                   /* NULL: Y not requested */
    int d;
    int64_t s;                  /* step number */
    bool rev;
    bool reset_only;            /* GRU's first pass: rh = r .* H */
} step_args;

static int64_t x_row(const q8_rnn_params *p, int64_t t, int64_t n) {
    return p->batch_first ? n * p->seq + t : t * p->batch + n;
}

static void rnn_cell(const step_args *a, const float *x, float *rc, float *h) {
    const q8_rnn_params *p = a->p;
    for (int64_t j = 0; j < p->hidden; j++) rc[j] = clipv(x[j] + rc[j], p->clip);
    act_apply(&a->act[0], rc, p->hidden);
    memcpy(h, rc, sizeof(float) * (size_t)p->hidden);
}

/* Gates z, r, h at rc, rc + H, rc + 2H. */
static void gru_reset(const step_args *a, const float *x, float *rc) {
    const q8_rnn_params *p = a->p;
    int64_t H = p->hidden;
    for (int64_t j = 0; j < H; j++) rc[H + j] = clipv(x[H + j] + rc[H + j], p->clip);
    act_apply(&a->act[0], rc + H, H);
}

static void gru_cell(const step_args *a, const float *x, float *rc, float *h) {
    const q8_rnn_params *p = a->p;
    int64_t H = p->hidden;
    float *z = rc, *r = rc + H, *hh = rc + 2 * H;
    if (p->linear_before_reset) {
        gru_reset(a, x, rc);
        for (int64_t j = 0; j < H; j++)
            hh[j] = clipv(x[2 * H + j] + r[j] * (hh[j] + (a->rbh ? a->rbh[j] : 0)), p->clip);
    } else {
        for (int64_t j = 0; j < H; j++) hh[j] = clipv(x[2 * H + j] + hh[j], p->clip);
    }
    for (int64_t j = 0; j < H; j++) z[j] = clipv(x[j] + z[j], p->clip);
    act_apply(&a->act[0], z, H);
    act_apply(&a->act[1], hh, H);
    for (int64_t j = 0; j < H; j++) h[j] = (1 - z[j]) * hh[j] + z[j] * h[j];
}

/* Gates i, o, f, c at rc, rc + H, rc + 2H, rc + 3H; peepholes i, o, f. */
static void lstm_cell(const step_args *a, const float *x, float *rc, float *h, float *c) {
    const q8_rnn_params *p = a->p;
    int64_t H = p->hidden;
    float *gi = rc, *go = rc + H, *gf = rc + 2 * H, *gc = rc + 3 * H;
    const float *pi = a->peep, *po = a->peep ? a->peep + H : NULL;
    const float *pf = a->peep ? a->peep + 2 * H : NULL;
    for (int64_t j = 0; j < H; j++) gi[j] = clipv(x[j] + gi[j] + (pi ? pi[j] * c[j] : 0), p->clip);
    act_apply(&a->act[0], gi, H);
    if (p->input_forget) {
        for (int64_t j = 0; j < H; j++) gf[j] = 1 - gi[j];
    } else {
        for (int64_t j = 0; j < H; j++)
            gf[j] = clipv(x[2 * H + j] + gf[j] + (pf ? pf[j] * c[j] : 0), p->clip);
        act_apply(&a->act[0], gf, H);
    }
    for (int64_t j = 0; j < H; j++) gc[j] = clipv(x[3 * H + j] + gc[j], p->clip);
    act_apply(&a->act[1], gc, H);
    for (int64_t j = 0; j < H; j++) c[j] = gf[j] * c[j] + gi[j] * gc[j];
    for (int64_t j = 0; j < H; j++)
        go[j] = clipv(x[H + j] + go[j] + (po ? po[j] * c[j] : 0), p->clip);
    act_apply(&a->act[0], go, H);
    for (int64_t j = 0; j < H; j++) gc[j] = clipv(c[j], p->clip); /* h's input */
    act_apply(&a->act[2], gc, H);
    for (int64_t j = 0; j < H; j++) h[j] = go[j] * gc[j];
}

static void step_rows(void *arg, int64_t b, int64_t e, int thread) {
    (void)thread;
    const step_args *a = arg;
    const q8_rnn_params *p = a->p;
    int64_t H = p->hidden, GH = p->gates * H, D = p->dirs;
    for (int64_t n = b; n < e; n++) {
        float *h = a->h + n * H, *rc = a->rec + n * GH;
        if (a->s >= a->lens[n]) { /* finished: its state stays, its GEMM rows are unused */
            if (a->reset_only) memset(a->rh + n * H, 0, sizeof(float) * (size_t)H);
            continue;
        }
        int64_t t = a->rev ? a->lens[n] - 1 - a->s : a->s;
        const float *x = a->xw + x_row(p, t, n) * D * GH;
        if (a->reset_only) {
            gru_reset(a, x, rc);
            for (int64_t j = 0; j < H; j++) a->rh[n * H + j] = rc[H + j] * h[j];
            continue;
        }
        switch (p->cell) {
        case Q8_RNN_SIMPLE: rnn_cell(a, x, rc, h); break;
        case Q8_RNN_GRU: gru_cell(a, x, rc, h); break;
        case Q8_RNN_LSTM: lstm_cell(a, x, rc, h, a->c + n * H); break;
        }
        if (a->y) {
            int64_t at = p->batch_first ? (n * p->seq + t) * D + a->d
                                        : (t * D + a->d) * p->batch + n;
            memcpy(a->y + at * H, h, sizeof(float) * (size_t)H);
        }
    }
}

/* ---- run ---- */

/* Offset (in floats) of row n of direction d in initial_h / Y_h. */
static int64_t state_at(const q8_rnn_params *p, int d, int64_t n) {
    return (p->batch_first ? n * p->dirs + d : d * p->batch + n) * p->hidden;
}

static const void *opt_in(const q8_exec *x, const q8_node *n, int i, bool has) {
    return has ? Q8_IN_PTR(x, n, i) : NULL;
}

static float *opt_out(const q8_exec *x, const q8_node *n, int i) {
    return i < n->n_outputs && n->outputs[i] >= 0 ? Q8_OUT_PTR(x, n, i) : NULL;
}

/* Wb + Rb per direction and gate, added by the input GEMM; with
 * linear_before_reset, Rbh goes inside the reset product instead. */
static void fill_bias(const q8_rnn_params *p, const float *b, float *bias) {
    int64_t GH = p->gates * p->hidden;
    if (!b) {
        memset(bias, 0, sizeof(float) * (size_t)(p->dirs * GH));
        return;
    }
    for (int d = 0; d < p->dirs; d++)
        for (int64_t k = 0; k < GH; k++) {
            const float *bd = b + d * 2 * GH;
            bool rb_later = p->linear_before_reset && k >= 2 * p->hidden;
            bias[d * GH + k] = bd[k] + (rb_later ? 0 : bd[GH + k]);
        }
}

static void init_state(const q8_rnn_params *p, const float *init, int d, float *st) {
    for (int64_t n = 0; n < p->batch; n++) {
        float *dst = st + n * p->hidden;
        if (init) memcpy(dst, init + state_at(p, d, n), sizeof(float) * (size_t)p->hidden);
        else memset(dst, 0, sizeof(float) * (size_t)p->hidden);
    }
}

static void final_state(const q8_rnn_params *p, const int32_t *lens, const float *st, int d,
                        float *out) {
    if (!out) return;
    for (int64_t n = 0; n < p->batch; n++) {
        float *dst = out + state_at(p, d, n);
        if (lens[n] > 0) memcpy(dst, st + n * p->hidden, sizeof(float) * (size_t)p->hidden);
        else memset(dst, 0, sizeof(float) * (size_t)p->hidden);
    }
}

static void rnn_run(const q8_exec *x, const q8_node *n) {
    const q8_rnn_params *p = n->params;
    const rnn_prep *o = x->prep;
    rnn_bufs bb = bufs_of(p, x->prep, q8_pool_size(x->pool));
    char *scr = x->scratch;
    void *gs = scr + bb.gemm;
    float *xw = (float *)(scr + bb.xw), *bias = (float *)(scr + bb.bias);
    int32_t *lens = (int32_t *)(scr + bb.lens);
    const float *w = Q8_IN_PTR(x, n, Q8_RNN_IN_W), *r = Q8_IN_PTR(x, n, Q8_RNN_IN_R);
    const float *b = opt_in(x, n, Q8_RNN_IN_B, p->has_b);
    const int32_t *lin = opt_in(x, n, Q8_RNN_IN_LENS, p->has_lens);
    const float *h0 = opt_in(x, n, Q8_RNN_IN_H0, p->has_h0);
    const float *c0 = opt_in(x, n, Q8_RNN_IN_C0, p->has_c0);
    const float *peep = opt_in(x, n, Q8_RNN_IN_P, p->has_p);
    float *y = opt_out(x, n, Q8_RNN_OUT_Y), *yh = opt_out(x, n, Q8_RNN_OUT_YH);
    float *yc = p->cell == Q8_RNN_LSTM ? opt_out(x, n, Q8_RNN_OUT_YC) : NULL;
    int64_t H = p->hidden, GH = p->gates * H, max_len = 0;
    bool short_rows = false;
    for (int64_t k = 0; k < p->batch; k++) { /* run-time values: clamped to [0, S] */
        int64_t v = lin ? lin[k] : p->seq;
        lens[k] = (int32_t)(v < 0 ? 0 : v > p->seq ? p->seq : v);
        max_len = lens[k] > max_len ? lens[k] : max_len;
        short_rows |= lens[k] < p->seq;
    }
    if (y && short_rows)
        memset(y, 0, sizeof(float) * (size_t)(p->seq * p->dirs * p->batch * H));
    fill_bias(p, b, bias);
    q8_sgemm_op in = input_op(p, packed(x->prep, o ? o->w : 0), Q8_IN_PTR(x, n, Q8_RNN_IN_X), w,
                              bias, xw);
    q8_sgemm_run(&in, x->pool, gs);
    step_args a = {.p = p, .lens = lens, .rec = (float *)(scr + bb.rec), .h = (float *)(scr + bb.h),
                   .c = (float *)(scr + bb.c), .rh = (float *)(scr + bb.rh), .y = y};
    int64_t grain = GH >= 8192 ? 1 : 8192 / GH;
    for (int d = 0; d < p->dirs; d++) {
        const float *rd = dir_r(p, r, d);
        a.d = d;
        a.act = p->act[d];
        a.rev = p->reverse || d == 1;
        a.xw = xw + d * GH;
        a.rbh = b && p->linear_before_reset ? b + d * 2 * GH + GH + 2 * H : NULL;
        a.peep = peep ? peep + d * 3 * H : NULL;
        init_state(p, h0, d, a.h);
        if (p->cell == Q8_RNN_LSTM) init_state(p, c0, d, a.c);
        q8_sgemm_op s1 = step_op(p, packed(x->prep, o ? o->r[d] : 0), a.h, rd, step_cols(p), a.rec);
        q8_sgemm_op s2 = step_op(p, packed(x->prep, o ? o->rh[d] : 0), a.rh, rd + 2 * H * H, H,
                                 a.rec + 2 * H);
        for (a.s = 0; a.s < max_len; a.s++) {
            q8_sgemm_run(&s1, x->pool, gs);
            if (split_step(p)) {
                a.reset_only = true;
                q8_parallel_for(x->pool, p->batch, grain, step_rows, &a);
                a.reset_only = false;
                q8_sgemm_run(&s2, x->pool, gs);
            }
            q8_parallel_for(x->pool, p->batch, grain, step_rows, &a);
        }
        final_state(p, lens, a.h, d, yh);
        if (p->cell == Q8_RNN_LSTM) final_state(p, lens, a.c, d, yc);
    }
}

const q8_cpu_op q8_cpu_rnn = {.prepare = rnn_prepare, .run = rnn_run, .scratch = rnn_scratch};
const q8_cpu_op q8_cpu_gru = {.prepare = rnn_prepare, .run = rnn_run, .scratch = rnn_scratch};
const q8_cpu_op q8_cpu_lstm = {.prepare = rnn_prepare, .run = rnn_run, .scratch = rnn_scratch};
