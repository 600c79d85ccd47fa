/* Shape and data-movement ops: each compared with a plain reference written
 * here (index loops over bytes, independent of the kernels) on seeded random
 * data, several element sizes (float32, int64, uint8/bool, float16 bytes),
 * awkward shapes, opset variants, 1 and 3 threads. Every run goes two ways:
 * directly through the op with guard bytes around each buffer, and through
 * the passes + planner + CPU session (q8t_run). */
#include <float.h>
#include <string.h>

#include "cpu_op.h"
#include "model.h"
#include "passes.h"
#include "planner.h"
#include "testutil.h"

#define GUARD 64
#define MAXO 8

/* ---- harness ---------------------------------------------------------- */

typedef struct want {
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
    const void *data;
} want;

typedef q8_graph *(*build_fn)(const void *ctx);

static int64_t numel_of(const int64_t *d, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= d[i];
    return p;
}

static size_t nbytes_of(q8_dtype dt, const int64_t *d, int n) {
    return (size_t)numel_of(d, n) * q8_dtype_size(dt);
}

/* Passes, then every node's run on separately allocated buffers with guard
 * bytes on both sides (views alias their input, as the planner does). */
static q8_status run_direct(q8_graph *g, const void *const *in, int n_threads, void **outs,
                            q8_tensor_info *infos, int max_out, q8_error *err) {
    q8_status s = q8_passes_run(g, NULL, err);
    if (s != Q8_OK) {
        q8_graph_free(g);
        return s;
    }
    int nt = g->n_tensors;
    void **ptr = calloc((size_t)nt, sizeof *ptr);
    uint8_t **raw = calloc((size_t)nt, sizeof *raw);
    size_t *nb = calloc((size_t)nt, sizeof *nb);
    for (int t = 0; t < nt; t++) {
        q8_tensor *tt = g->tensors[t];
        if (tt->data) {
            ptr[t] = tt->data;
            continue;
        }
        if (!tt->shape_known) continue;
        nb[t] = q8_tensor_nbytes(tt);
        raw[t] = malloc(nb[t] + 2 * GUARD);
        memset(raw[t], 0xA5, nb[t] + 2 * GUARD);
        ptr[t] = raw[t] + GUARD;
    }
    for (int i = 0; i < g->n_inputs; i++) {
        int t = g->inputs[i];
        if (nb[t]) memcpy(ptr[t], in[i], nb[t]);
    }
    q8_pool *pool = n_threads > 1 ? q8_pool_create(n_threads) : NULL;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (q8_op_flags(n->op) & Q8_OPF_VIEW) {
            ptr[n->outputs[0]] = ptr[n->inputs[0]];
            continue;
        }
        const q8_cpu_op *op = q8_cpu_ops[n->op];
        void *prep = NULL;
        size_t prep_bytes;
        if (op->prepare) cr_assert_eq(op->prepare(g, n, &(q8_prep_env){0}, &prep, &prep_bytes, err), Q8_OK);
        size_t sb = op->scratch ? op->scratch(g, n, prep, n_threads) : 0;
        void *scratch = sb ? q8_aligned_alloc(sb) : NULL;
        q8_exec x = {.g = g, .ptr = ptr, .pool = pool, .scratch = scratch, .prep = prep};
        op->run(&x, n);
        q8_aligned_free(scratch);
        q8_aligned_free(prep);
    }
    q8_pool_free(pool);
    for (int t = 0; t < nt; t++) {
        if (!raw[t]) continue;
        for (size_t k = 0; k < GUARD; k++) {
            cr_assert_eq(raw[t][k], 0xA5, "write before tensor '%s'", g->tensors[t]->name);
            cr_assert_eq(raw[t][GUARD + nb[t] + k], 0xA5, "write after tensor '%s'",
                         g->tensors[t]->name);
        }
    }
    for (int k = 0; k < g->n_outputs && k < max_out; k++) {
        const q8_tensor *t = g->tensors[g->outputs[k]];
        infos[k].dtype = t->dtype;
        infos[k].ndim = t->ndim;
        memcpy(infos[k].dims, t->dims, sizeof infos[k].dims);
        size_t n = q8_tensor_nbytes(t);
        outs[k] = malloc(n ? n : 1);
        if (n) memcpy(outs[k], ptr[g->outputs[k]], n);
    }
    for (int t = 0; t < nt; t++) free(raw[t]);
    free(raw);
    free(nb);
    free(ptr);
    q8_graph_free(g);
    return Q8_OK;
}

/* Build, run four ways (direct / session x 1 / 3 threads), compare bytes. */
static void check_runs(build_fn build, const void *ctx, const void *const *in, const want *w,
                       int nw, const char *what) {
    for (int way = 0; way < 4; way++) {
        int th = way & 1 ? 3 : 1;
        q8_graph *g = build(ctx);
        void *outs[MAXO] = {0};
        q8_tensor_info info[MAXO];
        q8_error err = {0};
        q8_status s = way < 2 ? run_direct(g, in, th, outs, info, nw, &err)
                              : q8t_run(g, in, th, outs, info, nw, &err);
        cr_assert_eq(s, Q8_OK, "%s (%s, %d threads): %s", what, way < 2 ? "direct" : "session", th,
                     err.msg);
        for (int k = 0; k < nw; k++) {
            char a[96], b[96];
            cr_assert_eq(info[k].dtype, w[k].dtype, "%s: output %d dtype %s, want %s", what, k,
                         q8_dtype_name(info[k].dtype), q8_dtype_name(w[k].dtype));
            bool same = info[k].ndim == w[k].ndim;
            for (int d = 0; same && d < w[k].ndim; d++) same = info[k].dims[d] == w[k].dims[d];
            cr_assert(same, "%s: output %d shape %s, want %s", what, k,
                      q8_shape_str(info[k].dims, info[k].ndim, a, sizeof a),
                      q8_shape_str(w[k].dims, w[k].ndim, b, sizeof b));
            size_t n = nbytes_of(w[k].dtype, w[k].dims, w[k].ndim);
            cr_assert(n == 0 || memcmp(outs[k], w[k].data, n) == 0,
                      "%s (%s, %d threads): output %d differs from the reference", what,
                      way < 2 ? "direct" : "session", th, k);
            free(outs[k]);
        }
    }
}

/* Expect infer to fail with a message containing `needle`. */
static void check_fails(q8_graph *g, const char *needle, const char *what) {
    q8_error err = {0};
    q8_status s = q8_passes_run(g, NULL, &err);
    cr_assert_neq(s, Q8_OK, "%s: expected an error", what);
    cr_assert(strstr(err.msg, needle), "%s: message '%s' lacks '%s'", what, err.msg, needle);
    q8_graph_free(g);
}

/* ---- data ------------------------------------------------------------- */

static const q8_dtype dtypes[] = {Q8_F32, Q8_I64, Q8_U8, Q8_F16, Q8_BOOL};
#define N_DTYPES 5

static void *rand_bytes(q8t_rng *r, q8_dtype dt, int64_t n) {
    size_t nb = (size_t)n * q8_dtype_size(dt);
    uint8_t *p = malloc(nb ? nb : 1);
    if (dt == Q8_F32) {
        q8t_fill(r, (float *)p, n, -10, 10);
    } else if (dt == Q8_BOOL) {
        for (int64_t i = 0; i < n; i++) p[i] = q8t_next(r) & 1;
    } else {
        for (size_t i = 0; i < nb; i++) p[i] = (uint8_t)(q8t_next(r) >> 24);
    }
    return p;
}

static int64_t rand_dim(q8t_rng *r, bool allow_zero) {
    static const int64_t pick[] = {1, 2, 3, 4, 5, 7, 9, 13};
    if (allow_zero && q8t_next(r) % 10 == 0) return 0;
    return pick[q8t_next(r) % 8];
}

/* A random shape of rank nd with at most ~max elements. */
static void rand_shape(q8t_rng *r, int nd, int64_t *dims, bool allow_zero, int64_t max) {
    for (;;) {
        for (int i = 0; i < nd; i++) dims[i] = rand_dim(r, allow_zero);
        if (numel_of(dims, nd) <= max) return;
    }
}

static void unravel(int64_t i, const int64_t *dims, int nd, int64_t *idx) {
    for (int k = nd - 1; k >= 0; k--) {
        idx[k] = dims[k] ? i % dims[k] : 0;
        i = dims[k] ? i / dims[k] : 0;
    }
}

static int64_t ravel(const int64_t *idx, const int64_t *dims, int nd) {
    int64_t o = 0;
    for (int k = 0; k < nd; k++) o = o * dims[k] + idx[k];
    return o;
}

/* A one-node graph from input specs; const_data entries become constants. */
static q8_graph *graph1(const char *op, int opset, const q8t_in *ins, int n_in, int n_out) {
    q8_graph *g = q8t_graph1(op, ins, n_in, n_out);
    g->opset = opset;
    return g;
}

static q8t_in in_spec(const char *name, q8_dtype dt, int nd, const int64_t *dims,
                      const void *data) {
    q8t_in s = {name, dt, nd, {0}, data};
    for (int i = 0; i < nd; i++) s.dims[i] = dims[i];
    return s;
}

static q8t_in in_i64(const char *name, int n, const int64_t *v) {
    int64_t d[1] = {n};
    return in_spec(name, Q8_I64, 1, d, v);
}

static size_t esz(q8_dtype dt) { return q8_dtype_size(dt); }

static void row_strides(const int64_t *dims, int nd, int64_t *st) {
    int64_t s = 1;
    for (int k = nd - 1; k >= 0; k--) {
        st[k] = s;
        s *= dims[k];
    }
}

static void rand_perm(q8t_rng *r, int n, int64_t *perm) {
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(q8t_next(r) % (uint64_t)(i + 1));
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* ---- Transpose -------------------------------------------------------- */

typedef struct tp_case {
    q8_dtype dt;
    int nd;
    int64_t dims[Q8_MAX_DIMS], perm[Q8_MAX_DIMS];
    bool has_perm;
} tp_case;

static q8_graph *build_transpose(const void *ctx) {
    const tp_case *c = ctx;
    q8t_in in = in_spec("x", c->dt, c->nd, c->dims, NULL);
    q8_graph *g = graph1("Transpose", 13, &in, 1, 1);
    if (c->has_perm) q8t_attr_ints(g, "perm", c->perm, c->nd);
    return g;
}

static void ref_transpose(const tp_case *c, const uint8_t *x, uint8_t *y, int64_t *odims) {
    size_t es = esz(c->dt);
    int64_t perm[Q8_MAX_DIMS], ist[Q8_MAX_DIMS], idx[Q8_MAX_DIMS];
    for (int k = 0; k < c->nd; k++) perm[k] = c->has_perm ? c->perm[k] : c->nd - 1 - k;
    for (int k = 0; k < c->nd; k++) odims[k] = c->dims[perm[k]];
    row_strides(c->dims, c->nd, ist);
    int64_t n = numel_of(c->dims, c->nd);
    for (int64_t o = 0; o < n; o++) {
        unravel(o, odims, c->nd, idx);
        int64_t off = 0;
        for (int k = 0; k < c->nd; k++) off += idx[k] * ist[perm[k]];
        memcpy(y + o * (int64_t)es, x + off * (int64_t)es, es);
    }
}

static void transpose_case(const tp_case *c, q8t_rng *r, const char *what) {
    int64_t n = numel_of(c->dims, c->nd);
    void *x = rand_bytes(r, c->dt, n);
    void *y = malloc((size_t)n * esz(c->dt) + 1);
    want w = {c->dt, c->nd, {0}, y};
    ref_transpose(c, x, y, w.dims);
    const void *in[] = {x};
    check_runs(build_transpose, c, in, &w, 1, what);
    free(x);
    free(y);
}

Test(tensor_transpose, random_perms_dtypes_ranks) {
    q8t_rng r = q8t_seed(11);
    for (int it = 0; it < 72; it++) {
        tp_case c = {.dt = dtypes[it % N_DTYPES], .nd = 1 + it % 6, .has_perm = it % 7 != 0};
        rand_shape(&r, c.nd, c.dims, true, 6000);
        rand_perm(&r, c.nd, c.perm);
        char what[64];
        snprintf(what, sizeof what, "transpose case %d", it);
        transpose_case(&c, &r, what);
    }
}

Test(tensor_transpose, fast_paths) {
    /* 2-D, NCHW->NHWC, NHWC->NCHW, last-two swap, big enough for many
     * tiles and thread chunks, with every element size. */
    static const tp_case shapes[] = {
        {Q8_F32, 2, {9, 7}, {1, 0}, true},
        {Q8_F32, 2, {130, 257}, {1, 0}, true},
        {Q8_F32, 4, {2, 13, 9, 7}, {0, 2, 3, 1}, true},
        {Q8_F32, 4, {2, 9, 7, 13}, {0, 3, 1, 2}, true},
        {Q8_F32, 4, {3, 5, 33, 65}, {0, 1, 3, 2}, true},
        {Q8_F32, 4, {1, 64, 1, 40}, {0, 3, 2, 1}, true},
        {Q8_F32, 3, {70, 3, 50}, {2, 0, 1}, true},
        {Q8_F32, 5, {3, 4, 5, 6, 7}, {4, 2, 0, 3, 1}, true},
        /* NHWC -> NCHW with 3 channels: one block of rows, the pixels in
         * chunks over the threads (the last one partial, every dtype) */
        {Q8_F32, 4, {1, 160, 170, 3}, {0, 3, 1, 2}, true},
        {Q8_F32, 4, {2, 33, 70, 4}, {0, 3, 1, 2}, true}, /* RGBA, two images */
        /* a detection head's NCHW -> NHWC and its anchors' [85][HW] ->
         * [HW][85]: 16 x 16 blocks with partial ones on both edges */
        {Q8_F32, 4, {1, 85, 20, 21}, {0, 2, 3, 1}, true},
        {Q8_F32, 3, {3, 85, 400}, {0, 2, 1}, true},
        {Q8_F32, 3, {2, 17, 5}, {0, 2, 1}, true},
    };
    static const q8_dtype dts[] = {Q8_U8, Q8_F16, Q8_F32, Q8_I64};
    q8t_rng r = q8t_seed(12);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int d = 0; d < 4; d++) {
            tp_case c = shapes[s];
            c.dt = dts[d];
            char what[64];
            snprintf(what, sizeof what, "transpose shape %zu %s", s, q8_dtype_name(c.dt));
            transpose_case(&c, &r, what);
        }
}

Test(tensor_transpose, errors) {
    int64_t dims[3] = {2, 3, 4};
    q8t_in in = in_spec("x", Q8_F32, 3, dims, NULL);
    q8_graph *g = graph1("Transpose", 13, &in, 1, 1);
    q8t_attr_ints(g, "perm", (int64_t[]){0, 0, 1}, 3);
    check_fails(g, "not a permutation", "repeated perm");
    g = graph1("Transpose", 13, &in, 1, 1);
    q8t_attr_ints(g, "perm", (int64_t[]){1, 0}, 2);
    check_fails(g, "[1, 0] is not a permutation of 0..2", "short perm");
    g = graph1("Transpose", 13, &in, 1, 1);
    q8t_attr_ints(g, "perm", (int64_t[]){0, 3, 1}, 3);
    check_fails(g, "not a permutation", "perm out of range");
}

/* ---- views: Reshape, Flatten, Squeeze, Unsqueeze ----------------------- */

typedef struct view_case {
    const char *op;
    int opset;
    q8_dtype dt;
    int nd;
    int64_t dims[Q8_MAX_DIMS];
    int nshape;             /* Reshape shape / axes; -1: none */
    int64_t shape[Q8_MAX_DIMS];
    int64_t axis;           /* Flatten */
    int allowzero;
} view_case;

static q8_graph *build_view(const void *ctx) {
    const view_case *c = ctx;
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL), in_i64("s", c->nshape, c->shape)};
    bool as_input = c->nshape >= 0 && strcmp(c->op, "Flatten") != 0 &&
                    (strcmp(c->op, "Reshape") == 0 ? c->opset >= 5 : c->opset >= 13);
    q8_graph *g = graph1(c->op, c->opset, ins, as_input ? 2 : 1, 1);
    if (c->nshape >= 0 && !as_input)
        q8t_attr_ints(g, strcmp(c->op, "Reshape") == 0 ? "shape" : "axes", c->shape, c->nshape);
    if (strcmp(c->op, "Flatten") == 0) q8t_attr_int(g, "axis", c->axis);
    if (c->allowzero) q8t_attr_int(g, "allowzero", 1);
    return g;
}

/* A view's output holds the input bytes unchanged, in the given shape. */
static void view_case_run(const view_case *c, int ond, const int64_t *odims, q8t_rng *r) {
    for (int d = 0; d < N_DTYPES; d++) {
        view_case cc = *c;
        cc.dt = dtypes[d];
        int64_t n = numel_of(c->dims, c->nd);
        void *x = rand_bytes(r, cc.dt, n);
        want w = {cc.dt, ond, {0}, x};
        memcpy(w.dims, odims, sizeof(int64_t) * (size_t)ond);
        const void *in[] = {x};
        char what[96], sb[64];
        snprintf(what, sizeof what, "%s-%d of %s (%s)", c->op, c->opset,
                 q8_shape_str(c->dims, c->nd, sb, sizeof sb), q8_dtype_name(cc.dt));
        check_runs(build_view, &cc, in, &w, 1, what);
        free(x);
    }
}

Test(tensor_reshape, shapes) {
    q8t_rng r = q8t_seed(21);
    struct {
        int nd;
        int64_t dims[4];
        int ns;
        int64_t shape[4];
        int allowzero, ond;
        int64_t odims[4];
    } cases[] = {
        {3, {2, 3, 4}, 2, {4, -1}, 0, 2, {4, 6}},
        {3, {2, 3, 4}, 3, {0, 0, -1}, 0, 3, {2, 3, 4}},
        {3, {2, 3, 4}, 1, {-1}, 0, 1, {24}},
        {3, {2, 3, 4}, 4, {2, 0, 2, 2}, 0, 4, {2, 3, 2, 2}},
        {3, {2, 3, 4}, 4, {-1, 1, 3, 1}, 0, 4, {8, 1, 3, 1}},
        {1, {1}, 0, {0}, 0, 0, {0}},
        {3, {9, 1, 7}, 2, {7, 9}, 0, 2, {7, 9}},
        {2, {0, 3}, 2, {3, 0}, 1, 2, {3, 0}},
        {3, {2, 0, 4}, 2, {0, -1}, 0, 2, {2, 0}},
        {2, {13, 5}, 3, {5, -1, 13}, 0, 3, {5, 1, 13}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        view_case c = {"Reshape", i % 2 ? 14 : 13, Q8_F32, cases[i].nd, {0}, cases[i].ns, {0}, 0,
                       cases[i].allowzero};
        memcpy(c.dims, cases[i].dims, sizeof cases[i].dims);
        memcpy(c.shape, cases[i].shape, sizeof cases[i].shape);
        view_case_run(&c, cases[i].ond, cases[i].odims, &r);
    }
    /* Reshape-1..4: the shape attribute */
    view_case c = {"Reshape", 4, Q8_F32, 2, {6, 4}, 3, {2, -1, 4}, 0, 0};
    view_case_run(&c, 3, (int64_t[]){2, 3, 4}, &r);
}

Test(tensor_reshape, output_aliases_input) {
    /* x -> Relu -> r -> Reshape -> y -> Relu -> z: y must be planned at r's
     * bytes, and the run must still be right. */
    q8_graph *g = q8_graph_new();
    g->inputs = malloc(sizeof(int) * 4);
    g->outputs = malloc(sizeof(int) * 4);
    int x = q8_graph_add_tensor(g, "x", NULL), rr = q8_graph_add_tensor(g, "r", NULL);
    int s = q8_graph_add_tensor(g, "s", NULL), y = q8_graph_add_tensor(g, "y", NULL);
    int z = q8_graph_add_tensor(g, "z", NULL);
    q8_tensor_set_shape(g->tensors[x], Q8_F32, (int64_t[]){2, 3, 4}, 3);
    q8_tensor_set_shape(g->tensors[s], Q8_I64, (int64_t[]){2}, 1);
    cr_assert(q8_tensor_alloc_data(g->tensors[s], NULL) == Q8_OK);
    memcpy(g->tensors[s]->data, (int64_t[]){4, -1}, 16);
    g->inputs[g->n_inputs++] = x;
    g->outputs[g->n_outputs++] = z;
    int n0 = q8_graph_add_node(g, "relu0", "Relu"), n1 = q8_graph_add_node(g, "reshape", "Reshape");
    int n2 = q8_graph_add_node(g, "relu1", "Relu");
    q8_node_set_io(g->nodes[n0], &x, 1, &rr, 1, NULL);
    q8_node_set_io(g->nodes[n1], (int[]){rr, s}, 2, &y, 1, NULL);
    q8_node_set_io(g->nodes[n2], &y, 1, &z, 1, NULL);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->n_nodes, 3);
    q8_plan p;
    cr_assert_eq(q8_plan_build(g, NULL, NULL, &p, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(p.buffer[rr], p.buffer[y], "Reshape output has its own buffer");
    cr_assert_eq(p.offset[rr], p.offset[y]);
    cr_assert_neq(p.offset[rr], Q8_PLAN_NONE);
    q8_plan_free(&p);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "t", &m, &err), Q8_OK);
    q8_session *sess;
    q8_session_options so = {.n_threads = 3};
    cr_assert_eq(q8_session_create(m, &so, &sess, &err), Q8_OK, "%s", err.msg);
    float xv[24];
    q8t_rng r = q8t_seed(22);
    q8t_fill(&r, xv, 24, -1, 1);
    cr_assert_eq(q8_session_set_input(sess, "x", Q8_F32, (int64_t[]){2, 3, 4}, 3, xv, &err), Q8_OK);
    cr_assert_eq(q8_session_run(sess, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *d;
    q8_session_output(sess, 0, &info, &d, NULL);
    cr_assert(info.ndim == 2 && info.dims[0] == 4 && info.dims[1] == 6);
    for (int i = 0; i < 24; i++) cr_assert_eq(((const float *)d)[i], xv[i] > 0 ? xv[i] : 0.0f);
    q8_session_free(sess);
    q8_model_free(m);
}

Test(tensor_reshape, errors) {
    int64_t dims[3] = {2, 3, 4};
    q8t_in ins[2] = {in_spec("x", Q8_F32, 3, dims, NULL), in_i64("s", 3, (int64_t[]){-1, 2, -1})};
    check_fails(graph1("Reshape", 13, ins, 2, 1), "more than one -1", "two -1");
    ins[1] = in_i64("s", 2, (int64_t[]){5, 5});
    check_fails(graph1("Reshape", 13, ins, 2, 1), "cannot reshape 2x3x4 (24 elements) to [5, 5]",
                "size mismatch");
    ins[1] = in_i64("s", 2, (int64_t[]){5, -1});
    check_fails(graph1("Reshape", 13, ins, 2, 1), "-1 cannot be inferred", "-1 not divisible");
    ins[1] = in_i64("s", 2, (int64_t[]){-2, 12});
    check_fails(graph1("Reshape", 13, ins, 2, 1), "invalid value -2", "-2");
    ins[1] = in_i64("s", 4, (int64_t[]){0, 0, 0, 0});
    check_fails(graph1("Reshape", 13, ins, 2, 1), "has rank 3", "copy past the rank");
    /* shape not constant */
    ins[1].data = NULL;
    check_fails(graph1("Reshape", 13, ins, 2, 1), "must be a constant", "runtime shape");
}

Test(tensor_flatten, axes) {
    q8t_rng r = q8t_seed(31);
    int64_t dims[4] = {2, 3, 0, 5};
    for (int zero = 0; zero < 2; zero++) {
        dims[2] = zero ? 0 : 4;
        for (int64_t axis = -4; axis <= 4; axis++) {
            int a = (int)(axis < 0 ? axis + 4 : axis);
            int64_t od[2] = {numel_of(dims, a), numel_of(dims + a, 4 - a)};
            view_case c = {"Flatten", axis < 0 ? 13 : 9, Q8_F32, 4, {0}, -1, {0}, axis, 0};
            memcpy(c.dims, dims, sizeof dims);
            view_case_run(&c, 2, od, &r);
        }
    }
    q8t_in in = in_spec("x", Q8_F32, 4, dims, NULL);
    q8_graph *g = graph1("Flatten", 13, &in, 1, 1);
    q8t_attr_int(g, "axis", 5);
    check_fails(g, "axis 5 is out of range for rank 4", "flatten axis");
}

Test(tensor_squeeze, opsets_and_axes) {
    q8t_rng r = q8t_seed(41);
    for (int opset = 11; opset <= 13; opset += 2) {
        view_case c = {"Squeeze", opset, Q8_F32, 5, {1, 3, 1, 7, 1}, 2, {0, -1}, 0, 0};
        view_case_run(&c, 3, (int64_t[]){3, 1, 7}, &r);
        c.nshape = -1; /* no axes: all size-1 dims */
        view_case_run(&c, 2, (int64_t[]){3, 7}, &r);
        view_case u = {"Unsqueeze", opset, Q8_F32, 2, {3, 7}, 3, {0, -1, 2}, 0, 0};
        view_case_run(&u, 5, (int64_t[]){1, 3, 1, 7, 1}, &r);
        view_case u2 = {"Unsqueeze", opset, Q8_F32, 0, {0}, 1, {0}, 0, 0};
        view_case_run(&u2, 1, (int64_t[]){1}, &r);
        view_case u3 = {"Unsqueeze", opset, Q8_F32, 2, {0, 4}, 2, {3, 1}, 0, 0};
        view_case_run(&u3, 4, (int64_t[]){0, 1, 4, 1}, &r);
    }
    int64_t dims[3] = {1, 3, 1};
    q8t_in ins[2] = {in_spec("x", Q8_F32, 3, dims, NULL), in_i64("a", 1, (int64_t[]){1})};
    check_fails(graph1("Squeeze", 13, ins, 2, 1), "its size is 3, not 1", "squeeze non-1");
    ins[1] = in_i64("a", 2, (int64_t[]){0, -3});
    check_fails(graph1("Squeeze", 13, ins, 2, 1), "names axis 0 twice", "squeeze repeated");
    ins[1] = in_i64("a", 2, (int64_t[]){0, -5});
    check_fails(graph1("Unsqueeze", 13, ins, 2, 1), "names axis 0 twice", "unsqueeze repeated");
    ins[1] = in_i64("a", 1, (int64_t[]){5});
    check_fails(graph1("Unsqueeze", 13, ins, 2, 1), "out of range for rank 4", "unsqueeze range");
    q8_graph *g = graph1("Unsqueeze", 13, ins, 1, 1);
    q8t_attr_ints(g, "axes", (int64_t[]){0}, 1);
    check_fails(g, "is an input since opset 13", "attribute at opset 13");
    check_fails(graph1("Unsqueeze", 11, ins, 1, 1), "axes are missing", "no axes");
}

/* ---- Concat ----------------------------------------------------------- */

typedef struct cat_case {
    q8_dtype dt;
    int nd, nin;
    int64_t axis;
    int64_t dims[4][Q8_MAX_DIMS];
} cat_case;

static q8_graph *build_concat(const void *ctx) {
    const cat_case *c = ctx;
    q8t_in ins[4];
    static const char *names[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < c->nin; i++) ins[i] = in_spec(names[i], c->dt, c->nd, c->dims[i], NULL);
    q8_graph *g = graph1("Concat", 13, ins, c->nin, 1);
    q8t_attr_int(g, "axis", c->axis);
    return g;
}

static void concat_check(const cat_case *c, q8t_rng *r, const char *what) {
    int ax = (int)(c->axis < 0 ? c->axis + c->nd : c->axis);
    int64_t od[Q8_MAX_DIMS];
    memcpy(od, c->dims[0], sizeof od);
    od[ax] = 0;
    for (int i = 0; i < c->nin; i++) od[ax] += c->dims[i][ax];
    size_t es = esz(c->dt);
    void *x[4];
    for (int i = 0; i < c->nin; i++) x[i] = rand_bytes(r, c->dt, numel_of(c->dims[i], c->nd));
    int64_t on = numel_of(od, c->nd), idx[Q8_MAX_DIMS];
    uint8_t *y = malloc((size_t)on * es + 1);
    for (int64_t o = 0; o < on; o++) {
        unravel(o, od, c->nd, idx);
        int i = 0;
        while (idx[ax] >= c->dims[i][ax]) idx[ax] -= c->dims[i++][ax];
        memcpy(y + o * (int64_t)es, (uint8_t *)x[i] + ravel(idx, c->dims[i], c->nd) * (int64_t)es,
               es);
    }
    want w = {c->dt, c->nd, {0}, y};
    memcpy(w.dims, od, sizeof od);
    check_runs(build_concat, c, (const void *const *)x, &w, 1, what);
    for (int i = 0; i < c->nin; i++) free(x[i]);
    free(y);
}

Test(tensor_concat, random) {
    q8t_rng r = q8t_seed(51);
    for (int it = 0; it < 60; it++) {
        cat_case c = { .dt = dtypes[it % N_DTYPES],
                       .nd = 1 + it % 5,
                       .nin = 1 + (int)(q8t_next(&r) % 4) };
        int ax = (int)(q8t_next(&r) % (uint64_t)c.nd);
        c.axis = it % 2 ? ax - c.nd : ax;
        rand_shape(&r, c.nd, c.dims[0], true, 3000);
        for (int i = 1; i < c.nin; i++) memcpy(c.dims[i], c.dims[0], sizeof c.dims[0]);
        for (int i = 0; i < c.nin; i++)
            c.dims[i][ax] = q8t_next(&r) % 5 == 0 ? 0 : rand_dim(&r, false);
        char what[64];
        snprintf(what, sizeof what, "concat case %d", it);
        concat_check(&c, &r, what);
    }
}

/* Short rows (a box decoder joining [1, N, 2] halves on the last axis:
 * every input's pieces copied by one task) in every element size, with
 * rows of 1 to 64 bytes a piece and a size-0 input. */
Test(tensor_concat, short_rows) {
    q8t_rng r = q8t_seed(53);
    static const int64_t last[][3] = {{2, 2, 0}, {1, 3, 1}, {4, 4, 4}, {2, 0, 2}, {16, 8, 1}};
    for (int it = 0; it < 5 * N_DTYPES; it++) {
        const int64_t *l = last[it % 5];
        cat_case c = {.dt = dtypes[it / 5], .nd = 3, .nin = l[2] ? 3 : 2, .axis = -1};
        for (int i = 0; i < c.nin; i++) {
            c.dims[i][0] = 1 + it % 2;
            c.dims[i][1] = 37 + it;
            c.dims[i][2] = l[i];
        }
        char what[64];
        snprintf(what, sizeof what, "short rows case %d", it);
        concat_check(&c, &r, what);
    }
}

/* A constant input of zeros (a TF export's channel padding) is filled, not
 * read: a session that owns its model releases it, and the output is the
 * same; a constant with a nonzero byte is still read and kept. */
Test(tensor_concat, zero_constant_is_released) {
    for (int nonzero = 0; nonzero < 2; nonzero++) {
        int64_t xd[4] = {1, 3, 4, 4}, zd[4] = {1, 61, 4, 4};
        float x[48], *z = calloc(61 * 16, sizeof(float));
        for (int i = 0; i < 48; i++) x[i] = (float)i - 20.5f;
        if (nonzero) z[61 * 16 - 1] = -0.0f; /* a sign bit: not zero bytes */
        q8t_in ins[2] = {in_spec("a", Q8_F32, 4, xd, NULL), in_spec("b", Q8_F32, 4, zd, z)};
        q8_graph *g = graph1("Concat", 13, ins, 2, 1);
        q8t_attr_int(g, "axis", 1);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_model *m = NULL;
        q8_session *s = NULL;
        q8_session_options so = {.n_threads = 1, .device = Q8_DEVICE_CPU};
        cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_create_owning(m, &so, &s, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_set_input(s, "a", Q8_F32, xd, 4, x, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
        q8_tensor_info info;
        const void *y;
        cr_assert_eq(q8_session_output(s, 0, &info, &y, &err), Q8_OK, "%s", err.msg);
        cr_assert(memcmp(y, x, sizeof x) == 0);
        cr_assert(memcmp((const float *)y + 48, z, 61 * 16 * sizeof(float)) == 0);
        q8_memory_info mi;
        q8_session_memory(s, &mi);
        if (nonzero) cr_assert_geq(mi.weights_bytes, 61 * 16 * sizeof(float));
        else cr_assert_lt(mi.weights_bytes, 64, "%zu weight bytes", mi.weights_bytes);
        q8_session_free(s);
        free(z);
    }
}

Test(tensor_concat, errors) {
    cat_case c = {Q8_F32, 2, 2, 1, {{2, 3}, {3, 3}}};
    check_fails(build_concat(&c),
                "input 1 ('b') has shape 3x3, input 0 has 2x3: all dims but axis 1 must match",
                "mismatched dims");
    c.axis = 2;
    check_fails(build_concat(&c), "axis 2 is out of range for rank 2", "axis range");
    cat_case c2 = {Q8_F32, 2, 2, 0, {{2, 3}, {3}}};
    q8_graph *g = build_concat(&c2);
    g->tensors[q8_graph_find(g, "b")]->ndim = 1;
    check_fails(g, "must match", "rank mismatch");
}

/* ---- Split ------------------------------------------------------------ */

typedef struct split_case {
    q8_dtype dt;
    int opset, nd, nout;
    int64_t axis;
    int64_t dims[Q8_MAX_DIMS];
    int nsplit;             /* -1: none */
    int64_t split[8];
    int64_t num_outputs;    /* 0: no attribute */
} split_case;

static q8_graph *build_split(const void *ctx) {
    const split_case *c = ctx;
    q8t_in ins[2] = { in_spec("x", c->dt, c->nd, c->dims, NULL),
                      in_i64("split", c->nsplit, c->split) };
    bool as_input = c->nsplit >= 0 && c->opset >= 13;
    q8_graph *g = graph1("Split", c->opset, ins, as_input ? 2 : 1, c->nout);
    if (c->nsplit >= 0 && !as_input) q8t_attr_ints(g, "split", c->split, c->nsplit);
    if (c->num_outputs) q8t_attr_int(g, "num_outputs", c->num_outputs);
    q8t_attr_int(g, "axis", c->axis);
    return g;
}

static void split_check(const split_case *c, const int64_t *sizes, q8t_rng *r, const char *what) {
    int ax = (int)(c->axis < 0 ? c->axis + c->nd : c->axis);
    size_t es = esz(c->dt);
    int64_t n = numel_of(c->dims, c->nd), idx[Q8_MAX_DIMS];
    uint8_t *x = rand_bytes(r, c->dt, n);
    want w[8];
    void *ys[8];
    int64_t start = 0;
    for (int k = 0; k < c->nout; k++) {
        w[k].dtype = c->dt;
        w[k].ndim = c->nd;
        memcpy(w[k].dims, c->dims, sizeof w[k].dims);
        w[k].dims[ax] = sizes[k];
        int64_t on = numel_of(w[k].dims, c->nd);
        uint8_t *y = malloc((size_t)on * es + 1);
        for (int64_t o = 0; o < on; o++) {
            unravel(o, w[k].dims, c->nd, idx);
            idx[ax] += start;
            memcpy(y + o * (int64_t)es, x + ravel(idx, c->dims, c->nd) * (int64_t)es, es);
        }
        start += sizes[k];
        ys[k] = y;
        w[k].data = y;
    }
    const void *in[] = {x};
    check_runs(build_split, c, in, w, c->nout, what);
    for (int k = 0; k < c->nout; k++) free(ys[k]);
    free(x);
}

Test(tensor_split, forms) {
    q8t_rng r = q8t_seed(61);
    for (int d = 0; d < N_DTYPES; d++) {
        q8_dtype dt = dtypes[d];
        /* explicit sizes, attribute (11) and input (13), with a 0-size part */
        for (int opset = 11; opset <= 13; opset += 2) {
            split_case c = {dt, opset, 3, 3, -2, {4, 13, 5}, 3, {6, 0, 7}, 0};
            split_check(&c, c.split, &r, "split sizes");
        }
        /* equal parts, default axis 0 */
        split_case e = {dt, 13, 2, 3, 0, {9, 7}, -1, {0}, 0};
        split_check(&e, (int64_t[]){3, 3, 3}, &r, "split equal");
        /* opset 18 num_outputs, uneven: 7 -> 3, 3, 1 */
        split_case u = {dt, 18, 2, 3, 1, {2, 7}, -1, {0}, 3};
        split_check(&u, (int64_t[]){3, 3, 1}, &r, "split num_outputs");
        /* one output, last axis, rank 6 */
        split_case one = {dt, 13, 6, 1, 5, {2, 1, 3, 1, 2, 5}, -1, {0}, 0};
        split_check(&one, (int64_t[]){5}, &r, "split one");
    }
    split_case c = {Q8_F32, 13, 2, 2, 1, {2, 7}, -1, {0}, 0};
    check_fails(build_split(&c), "cannot be split into 2 equal parts", "uneven");
    c.nsplit = 2;
    c.split[0] = 3;
    c.split[1] = 3;
    check_fails(build_split(&c), "split [3, 3] sums to 6, but axis 1 has size 7", "bad sum");
    c.nsplit = 3;
    check_fails(build_split(&c), "split has 3 values for 2 outputs", "count");
    c.opset = 11;
    c.nsplit = 2;
    c.split[0] = 8;
    c.split[1] = -1;
    check_fails(build_split(&c), "negative size", "negative");
}

/* ---- Slice ------------------------------------------------------------ */

typedef struct slice_case {
    q8_dtype dt;
    int opset, nd, n;
    int64_t dims[Q8_MAX_DIMS];
    int64_t starts[Q8_MAX_DIMS], ends[Q8_MAX_DIMS], axes[Q8_MAX_DIMS], steps[Q8_MAX_DIMS];
    bool has_axes, has_steps;
} slice_case;

static q8_graph *build_slice(const void *ctx) {
    const slice_case *c = ctx;
    if (c->opset < 10) {
        q8t_in in = in_spec("x", c->dt, c->nd, c->dims, NULL);
        q8_graph *g = graph1("Slice", c->opset, &in, 1, 1);
        q8t_attr_ints(g, "starts", c->starts, c->n);
        q8t_attr_ints(g, "ends", c->ends, c->n);
        if (c->has_axes) q8t_attr_ints(g, "axes", c->axes, c->n);
        return g;
    }
    q8t_in ins[5] = {in_spec("x", c->dt, c->nd, c->dims, NULL), in_i64("starts", c->n, c->starts),
                     in_i64("ends", c->n, c->ends), in_i64("axes", c->n, c->axes),
                     in_i64("steps", c->n, c->steps)};
    int nin = c->has_steps ? 5 : c->has_axes ? 4 : 3;
    if (!c->has_axes) ins[3].name = NULL;
    return graph1("Slice", c->opset, ins, nin, 1);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The spec, literally: per axis the list of selected indices. */
static void slice_ref(const slice_case *c, const uint8_t *x, uint8_t **yp, want *w) {
    static int64_t list[Q8_MAX_DIMS][64];
    int64_t cnt[Q8_MAX_DIMS];
    for (int d = 0; d < c->nd; d++) {
        cnt[d] = c->dims[d];
        for (int64_t i = 0; i < c->dims[d]; i++) list[d][i] = i;
    }
    for (int i = 0; i < c->n; i++) {
        int d = (int)(c->has_axes ? (c->axes[i] < 0 ? c->axes[i] + c->nd : c->axes[i]) : i);
        int64_t dim = c->dims[d], s = c->starts[i], e = c->ends[i];
        int64_t st = c->has_steps ? c->steps[i] : 1;
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        cnt[d] = 0;
        if (st > 0) {
            s = clamp64(s, 0, dim);
            e = clamp64(e, 0, dim);
            for (int64_t v = s; v < e; v += st) list[d][cnt[d]++] = v;
        } else {
            s = clamp64(s, 0, dim - 1);
            e = clamp64(e, -1, dim - 1);
            for (int64_t v = s; v > e && v >= 0 && v < dim; v += st) list[d][cnt[d]++] = v;
        }
    }
    size_t es = esz(c->dt);
    w->dtype = c->dt;
    w->ndim = c->nd;
    memcpy(w->dims, cnt, sizeof cnt);
    int64_t on = numel_of(cnt, c->nd), idx[Q8_MAX_DIMS], src[Q8_MAX_DIMS];
    uint8_t *y = malloc((size_t)on * es + 1);
    for (int64_t o = 0; o < on; o++) {
        unravel(o, cnt, c->nd, idx);
        for (int d = 0; d < c->nd; d++) src[d] = list[d][idx[d]];
        memcpy(y + o * (int64_t)es, x + ravel(src, c->dims, c->nd) * (int64_t)es, es);
    }
    *yp = y;
    w->data = y;
}

static void slice_check(const slice_case *c, q8t_rng *r, const char *what) {
    uint8_t *x = rand_bytes(r, c->dt, numel_of(c->dims, c->nd)), *y;
    want w;
    slice_ref(c, x, &y, &w);
    const void *in[] = {x};
    check_runs(build_slice, c, in, &w, 1, what);
    free(x);
    free(y);
}

Test(tensor_slice, random) {
    q8t_rng r = q8t_seed(71);
    static const int64_t steps[] = {-3, -2, -1, 1, 2, 3};
    for (int it = 0; it < 120; it++) {
        slice_case c = { .dt = dtypes[it % N_DTYPES],
                         .opset = it % 4 == 0 ? 9 : 13,
                         .nd = 1 + it % 4 };
        rand_shape(&r, c.nd, c.dims, true, 4000);
        c.n = 1 + (int)(q8t_next(&r) % (uint64_t)c.nd);
        c.has_axes = q8t_next(&r) % 3 != 0;
        c.has_steps = c.opset >= 10 && q8t_next(&r) % 4 != 0;
        int64_t perm[Q8_MAX_DIMS];
        rand_perm(&r, c.nd, perm);
        for (int i = 0; i < c.n; i++) {
            int64_t dim = c.dims[c.has_axes ? perm[i] : i];
            c.axes[i] = q8t_next(&r) % 2 ? perm[i] - c.nd : perm[i];
            c.starts[i] = (int64_t)(q8t_next(&r) % (uint64_t)(2 * dim + 7)) - dim - 3;
            c.ends[i] = (int64_t)(q8t_next(&r) % (uint64_t)(2 * dim + 7)) - dim - 3;
            c.steps[i] = c.has_steps ? steps[q8t_next(&r) % 6] : 1;
            uint64_t k = q8t_next(&r) % 8;
            if (k == 0) c.ends[i] = c.steps[i] > 0 ? INT64_MAX : INT64_MIN;
            if (k == 1) c.starts[i] = c.steps[i] > 0 ? INT64_MIN : INT64_MAX;
        }
        if (!c.has_axes)
            for (int i = 0; i < c.n; i++) c.axes[i] = i;
        char what[64];
        snprintf(what, sizeof what, "slice case %d", it);
        slice_check(&c, &r, what);
    }
}

/* A box decoder's halves ([1, N, 4] -> [..., 0:2] and [..., 2:4]): the
 * contiguous inner run of 2-16 bytes copied as one wider element; runs at
 * an odd offset ([..., 1:3]), steps and whole rows stay element copies. */
Test(tensor_slice, short_inner_runs) {
    q8t_rng r = q8t_seed(73);
    static const int64_t se[][4] = {{0, 2, 1, 4}, {2, 4, 1, 4}, {1, 3, 1, 4}, {0, 4, 1, 8},
                                    {4, 8, 1, 8}, {0, 1, 1, 3}, {0, 4, 2, 8}, {6, 8, 1, 8}};
    for (int it = 0; it < 8 * N_DTYPES; it++) {
        const int64_t *q = se[it % 8];
        slice_case c = {.dt = dtypes[it / 8], .opset = 13, .nd = 3, .n = 1, .has_axes = true,
                        .has_steps = true};
        c.dims[0] = 1 + it % 2;
        c.dims[1] = 21 + it % 37; /* slice_ref lists at most 64 a dim */
        c.dims[2] = q[3];
        c.axes[0] = 2;
        c.starts[0] = q[0];
        c.ends[0] = q[1];
        c.steps[0] = q[2];
        char what[64];
        snprintf(what, sizeof what, "short run case %d", it);
        slice_check(&c, &r, what);
    }
}

Test(tensor_slice, spec_examples_and_extremes) {
    q8t_rng r = q8t_seed(72);
    /* ONNX example 1: [[1,2,3,4],[5,6,7,8]], axes [0,1], starts [1,0],
     * ends [2,3], steps [1,2] -> [[5,7]] */
    slice_case c = {Q8_I64, 13, 2, 2, {2, 4}, {1, 0}, {2, 3}, {0, 1}, {1, 2}, true, true};
    int64_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y1[2] = {5, 7};
    want w = {Q8_I64, 2, {1, 2}, y1};
    const void *in[] = {x};
    check_runs(build_slice, &c, in, &w, 1, "example 1");
    /* example 2: starts [0,1], ends [-1,1000] -> [[2,3,4]] */
    slice_case c2 = {Q8_I64, 13, 2, 2, {2, 4}, {0, 1}, {-1, 1000}, {0}, {0}, false, false};
    int64_t y2[3] = {2, 3, 4};
    want w2 = {Q8_I64, 2, {1, 3}, y2};
    check_runs(build_slice, &c2, in, &w2, 1, "example 2");
    /* reverse everything with INT64_MIN ends, and huge steps */
    slice_case c3 = {Q8_I64, 13, 2, 2, {2, 4}, {-1, -1}, {INT64_MIN, INT64_MIN}, {0, 1}, {-1, -1},
                     true, true};
    int64_t y3[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    want w3 = {Q8_I64, 2, {2, 4}, y3};
    check_runs(build_slice, &c3, in, &w3, 1, "reverse");
    slice_case c4 = {Q8_I64, 13, 2, 2, {2, 4}, {0, 1}, {INT64_MAX, INT64_MAX}, {0, 1},
                     {INT64_MAX, INT64_MAX}, true, true};
    int64_t y4[1] = {2};
    want w4 = {Q8_I64, 2, {1, 1}, y4};
    check_runs(build_slice, &c4, in, &w4, 1, "huge step");
    slice_case c5 = {Q8_I64, 13, 2, 1, {2, 4}, {-1}, {INT64_MIN}, {1}, {INT64_MIN}, true, true};
    int64_t y5[2] = {4, 8};
    want w5 = {Q8_I64, 2, {2, 1}, y5};
    check_runs(build_slice, &c5, in, &w5, 1, "INT64_MIN step");
    /* size-0 dim with a negative step */
    slice_case c6 = {Q8_F32, 13, 2, 1, {0, 3}, {-1}, {INT64_MIN}, {0}, {-1}, true, true};
    slice_check(&c6, &r, "empty reverse");
    /* rank 6, opset 10 */
    slice_case c7 = {Q8_U8, 10, 6, 3, {2, 3, 1, 4, 2, 5}, {1, 0, -2}, {2, 5, 0}, {0, -1, 3},
                     {1, 2, -1}, true, true};
    slice_check(&c7, &r, "rank 6");
}

Test(tensor_slice, errors) {
    slice_case c = {Q8_F32, 13, 2, 2, {4, 4}, {0, 0}, {2, 2}, {1, -1}, {1, 1}, true, true};
    check_fails(build_slice(&c), "axes names axis 1 twice", "repeated axes");
    c.axes[1] = 0;
    c.steps[0] = 0;
    check_fails(build_slice(&c), "steps[0] is 0", "zero step");
    c.steps[0] = 1;
    c.axes[1] = 2;
    check_fails(build_slice(&c), "out of range for rank 2", "axis range");
    q8_graph *g = build_slice(&c);
    q8t_attr_ints(g, "starts", c.starts, 2);
    check_fails(g, "is an input since opset 10", "attribute form at 13");
}

/* ---- Gather ----------------------------------------------------------- */

typedef struct gather_case {
    q8_dtype dt, it;
    int nd, ni;
    int64_t axis;
    int64_t dims[Q8_MAX_DIMS], idims[Q8_MAX_DIMS];
    const void *cidx;   /* constant indices, or NULL: a graph input */
} gather_case;

static q8_graph *build_gather(const void *ctx) {
    const gather_case *c = ctx;
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL),
                     in_spec("i", c->it, c->ni, c->idims, c->cidx)};
    q8_graph *g = graph1("Gather", 13, ins, 2, 1);
    q8t_attr_int(g, "axis", c->axis);
    return g;
}

static int64_t idx_val(q8_dtype it, const void *p, int64_t i) {
    return it == Q8_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

Test(tensor_gather, random) {
    q8t_rng r = q8t_seed(81);
    for (int it = 0; it < 80; it++) {
        gather_case c = {.dt = dtypes[it % N_DTYPES], .it = it % 3 ? Q8_I64 : Q8_I32,
                         .nd = 1 + it % 4, .ni = (int)(q8t_next(&r) % 3)};
        int ax = (int)(q8t_next(&r) % (uint64_t)c.nd);
        c.axis = it % 2 ? ax - c.nd : ax;
        rand_shape(&r, c.nd, c.dims, true, 3000);
        if (c.dims[ax] == 0) c.dims[ax] = 5;
        rand_shape(&r, c.ni, c.idims, true, 30);
        int64_t nidx = numel_of(c.idims, c.ni), dim = c.dims[ax];
        void *idx = malloc((size_t)nidx * 8 + 8);
        for (int64_t i = 0; i < nidx; i++) {
            int64_t v = (int64_t)(q8t_next(&r) % (uint64_t)(2 * dim)) - dim;
            if (c.it == Q8_I64) ((int64_t *)idx)[i] = v;
            else ((int32_t *)idx)[i] = (int32_t)v;
        }
        bool cst = it % 4 < 2;
        c.cidx = cst ? idx : NULL;
        size_t es = esz(c.dt);
        uint8_t *x = rand_bytes(&r, c.dt, numel_of(c.dims, c.nd));
        want w = {c.dt, c.nd - 1 + c.ni, {0}, NULL};
        int k = 0;
        for (int d = 0; d < ax; d++) w.dims[k++] = c.dims[d];
        for (int d = 0; d < c.ni; d++) w.dims[k++] = c.idims[d];
        for (int d = ax + 1; d < c.nd; d++) w.dims[k++] = c.dims[d];
        int64_t on = numel_of(w.dims, w.ndim), oi[Q8_MAX_DIMS], xi[Q8_MAX_DIMS];
        uint8_t *y = malloc((size_t)on * es + 1);
        for (int64_t o = 0; o < on; o++) {
            unravel(o, w.dims, w.ndim, oi);
            for (int d = 0; d < ax; d++) xi[d] = oi[d];
            int64_t v = idx_val(c.it, idx, ravel(oi + ax, c.idims, c.ni));
            xi[ax] = v < 0 ? v + dim : v;
            for (int d = ax + 1; d < c.nd; d++) xi[d] = oi[d + c.ni - 1];
            memcpy(y + o * (int64_t)es, x + ravel(xi, c.dims, c.nd) * (int64_t)es, es);
        }
        w.data = y;
        const void *in[] = {x, idx};
        char what[64];
        snprintf(what, sizeof what, "gather case %d", it);
        check_runs(build_gather, &c, in, &w, 1, what);
        free(x);
        free(y);
        free(idx);
    }
}

Test(tensor_gather, runtime_out_of_range_gives_zeros) {
    /* Documented behaviour: a bad index in a non-constant tensor reads
     * nothing and yields a zero block. */
    gather_case c = {Q8_F32, Q8_I64, 2, 1, 0, {3, 4}, {3}, NULL};
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i + 1;
    int64_t idx[3] = {5, -1, -4};
    float y[12] = {0, 0, 0, 0, 9, 10, 11, 12, 0, 0, 0, 0};
    want w = {Q8_F32, 2, {3, 4}, y};
    const void *in[] = {x, idx};
    check_runs(build_gather, &c, in, &w, 1, "out of range");
}

Test(tensor_gather, errors) {
    int64_t bad[2] = {1, 3};
    gather_case c = {Q8_F32, Q8_I64, 2, 1, 1, {2, 3}, {2}, bad};
    check_fails(build_gather(&c),
                "index 3 (at position 1 of 'i') is out of range for axis 1 of size 3",
                "constant index");
    bad[1] = -4;
    check_fails(build_gather(&c), "index -4", "negative constant index");
    c.axis = -3;
    check_fails(build_gather(&c), "axis -3 is out of range", "axis");
    c.axis = 0;
    c.it = Q8_F32;
    c.cidx = NULL;
    check_fails(build_gather(&c), "expected int32 or int64", "float indices");
}

/* ---- Pad -------------------------------------------------------------- */

typedef struct pad_case {
    q8_dtype dt;
    int opset, nd;
    int64_t dims[Q8_MAX_DIMS];
    int64_t pb[Q8_MAX_DIMS], pe[Q8_MAX_DIMS];
    const char *mode;
    bool has_value, value_runtime;
    uint8_t value[8];       /* one element of dt */
    float fvalue;           /* opset < 11 */
    int naxes;              /* opset 18: pads only for these axes */
    int64_t axes[Q8_MAX_DIMS];
} pad_case;

static q8_graph *build_pad(const void *ctx) {
    const pad_case *c = ctx;
    int64_t pads[2 * Q8_MAX_DIMS];
    int na = c->naxes ? c->naxes : c->nd;
    for (int i = 0; i < na; i++) {
        int d = c->naxes ? (int)(c->axes[i] < 0 ? c->axes[i] + c->nd : c->axes[i]) : i;
        pads[i] = c->pb[d];
        pads[na + i] = c->pe[d];
    }
    if (c->opset < 11) {
        q8t_in in = in_spec("x", c->dt, c->nd, c->dims, NULL);
        q8_graph *g = graph1("Pad", c->opset, &in, 1, 1);
        q8t_attr_ints(g, "pads", pads, 2 * na);
        if (c->mode) q8t_attr_str(g, "mode", c->mode);
        if (c->has_value) q8t_attr_float(g, "value", c->fvalue);
        return g;
    }
    q8t_in ins[4] = {in_spec("x", c->dt, c->nd, c->dims, NULL), in_i64("pads", 2 * na, pads),
                     in_spec("v", c->dt, 0, NULL, c->value_runtime ? NULL : c->value),
                     in_i64("axes", c->naxes, c->axes)};
    if (!c->has_value) ins[2].name = NULL;
    q8_graph *g = graph1("Pad", c->opset, ins, c->naxes ? 4 : c->has_value ? 3 : 2, 1);
    if (c->mode) q8t_attr_str(g, "mode", c->mode);
    return g;
}

static void pad_check(const pad_case *c, q8t_rng *r, const char *what) {
    size_t es = esz(c->dt);
    uint8_t *x = rand_bytes(r, c->dt, numel_of(c->dims, c->nd));
    want w = {c->dt, c->nd, {0}, NULL};
    for (int d = 0; d < c->nd; d++) w.dims[d] = c->dims[d] + c->pb[d] + c->pe[d];
    uint8_t zero[8] = {0};
    const uint8_t *val = !c->has_value   ? zero
                         : c->opset < 11 ? (const uint8_t *)&c->fvalue
                                         : c->value;
    const char *mode = c->mode ? c->mode : "constant";
    int64_t on = numel_of(w.dims, c->nd), oi[Q8_MAX_DIMS], xi[Q8_MAX_DIMS];
    uint8_t *y = malloc((size_t)on * es + 1);
    for (int64_t o = 0; o < on; o++) {
        unravel(o, w.dims, c->nd, oi);
        bool fill = false;
        for (int d = 0; d < c->nd; d++) {
            int64_t v = oi[d] - c->pb[d], n = c->dims[d];
            if (v < 0 || v >= n) {
                if (strcmp(mode, "constant") == 0) fill = true;
                else if (strcmp(mode, "edge") == 0) v = v < 0 ? 0 : n - 1;
                else v = v < 0 ? -v : 2 * (n - 1) - v; /* reflect */
            }
            xi[d] = v;
        }
        memcpy(y + o * (int64_t)es, fill ? val : x + ravel(xi, c->dims, c->nd) * (int64_t)es, es);
    }
    w.data = y;
    const void *in[] = {x, c->value};
    check_runs(build_pad, c, in, &w, 1, what);
    free(x);
    free(y);
}

Test(tensor_pad, random_modes_opsets) {
    q8t_rng r = q8t_seed(91);
    static const char *modes[] = {NULL, "constant", "edge", "reflect"};
    for (int it = 0; it < 120; it++) {
        pad_case c = {.dt = dtypes[it % N_DTYPES], .nd = 1 + it % 4, .mode = modes[(it / 5) % 4]};
        static const int opsets[] = {9, 11, 13, 18};
        c.opset = opsets[(it / 2) % 4];
        bool constant = !c.mode || strcmp(c.mode, "constant") == 0;
        rand_shape(&r, c.nd, c.dims, constant, 2000);
        for (int d = 0; d < c.nd; d++) {
            int64_t n = c.dims[d];
            if (constant) { /* may crop */
                c.pb[d] = (int64_t)(q8t_next(&r) % 5) - 1;
                c.pe[d] = (int64_t)(q8t_next(&r) % 5) - 1;
                if (c.pb[d] < -n) c.pb[d] = -n;
                if (c.pe[d] < -n - c.pb[d]) c.pe[d] = -n - c.pb[d];
            } else if (strcmp(c.mode, "edge") == 0) {
                c.pb[d] = (int64_t)(q8t_next(&r) % 4);
                c.pe[d] = (int64_t)(q8t_next(&r) % 4);
            } else {
                c.pb[d] = (int64_t)(q8t_next(&r) % (uint64_t)n);
                c.pe[d] = (int64_t)(q8t_next(&r) % (uint64_t)n);
            }
        }
        c.has_value = constant && it % 3 != 0 && (c.opset >= 11 || c.dt == Q8_F32);
        c.fvalue = 2.5f;
        for (int k = 0; k < 8; k++) c.value[k] = (uint8_t)(q8t_next(&r) >> 32);
        if (c.dt == Q8_BOOL) c.value[0] &= 1;
        c.value_runtime = c.has_value && c.opset >= 11 && it % 4 == 1;
        if (c.opset >= 18 && it % 3 == 0) { /* pads for a subset of axes, one negative */
            int64_t perm[Q8_MAX_DIMS];
            rand_perm(&r, c.nd, perm);
            c.naxes = 1 + (int)(q8t_next(&r) % (uint64_t)c.nd);
            bool keep[Q8_MAX_DIMS] = {0};
            for (int i = 0; i < c.naxes; i++) {
                keep[perm[i]] = true;
                c.axes[i] = i == 0 ? perm[i] - c.nd : perm[i];
            }
            for (int d = 0; d < c.nd; d++)
                if (!keep[d]) c.pb[d] = c.pe[d] = 0;
        }
        char what[64];
        snprintf(what, sizeof what, "pad case %d (%s, opset %d)", it, c.mode ? c.mode : "default",
                 c.opset);
        pad_check(&c, &r, what);
    }
}

Test(tensor_pad, nchw_and_errors) {
    q8t_rng r = q8t_seed(92);
    pad_case c = {.dt = Q8_F32, .opset = 13, .nd = 4, .dims = {2, 13, 9, 7}, .pb = {0, 0, 2, 1},
                  .pe = {0, 0, 1, 3}, .mode = "reflect"};
    pad_check(&c, &r, "reflect NCHW");
    c.mode = "edge";
    pad_check(&c, &r, "edge NCHW");
    c.pb[2] = 9;
    c.mode = "reflect";
    check_fails(build_pad(&c), "reflect pads 9, 1 of axis 2 need at most size - 1 = 8",
                "reflect too big");
    c.mode = "constant";
    c.pb[2] = -12;
    check_fails(build_pad(&c), "crop more than axis 2's size 9", "crop too much");
    c.pb[2] = 0;
    c.mode = "mirror";
    check_fails(build_pad(&c), "mode 'mirror' is not supported", "bad mode");
    pad_case e = {.dt = Q8_F32, .opset = 13, .nd = 2, .dims = {0, 3}, .pb = {1, 0}, .mode = "edge"};
    check_fails(build_pad(&e), "edge padding of axis 0, which has size 0", "edge of empty");
    q8t_in ins[2] = { in_spec("x", Q8_F32, 2, (int64_t[]){ 2, 3 }, NULL),
                      in_i64("p", 3, (int64_t[]){ 1, 1, 1 }) };
    check_fails(graph1("Pad", 13, ins, 2, 1), "has 3 values, expected 4", "pads count");
}

/* ---- Tile ------------------------------------------------------------- */

typedef struct tile_case {
    q8_dtype dt;
    int nd;
    int64_t dims[Q8_MAX_DIMS], rep[Q8_MAX_DIMS];
} tile_case;

static q8_graph *build_tile(const void *ctx) {
    const tile_case *c = ctx;
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL), in_i64("r", c->nd, c->rep)};
    return graph1("Tile", 13, ins, 2, 1);
}

Test(tensor_tile, random) {
    q8t_rng r = q8t_seed(101);
    for (int it = 0; it < 40; it++) {
        tile_case c = {.dt = dtypes[it % N_DTYPES], .nd = 1 + it % 4};
        rand_shape(&r, c.nd, c.dims, true, 300);
        for (int d = 0; d < c.nd; d++) c.rep[d] = (int64_t)(q8t_next(&r) % 4);
        if (it % 5 != 0)
            for (int d = 0; d < c.nd; d++) c.rep[d] += c.rep[d] == 0;
        size_t es = esz(c.dt);
        uint8_t *x = rand_bytes(&r, c.dt, numel_of(c.dims, c.nd));
        want w = {c.dt, c.nd, {0}, NULL};
        for (int d = 0; d < c.nd; d++) w.dims[d] = c.dims[d] * c.rep[d];
        int64_t on = numel_of(w.dims, c.nd), oi[Q8_MAX_DIMS];
        uint8_t *y = malloc((size_t)on * es + 1);
        for (int64_t o = 0; o < on; o++) {
            unravel(o, w.dims, c.nd, oi);
            for (int d = 0; d < c.nd; d++) oi[d] %= c.dims[d];
            memcpy(y + o * (int64_t)es, x + ravel(oi, c.dims, c.nd) * (int64_t)es, es);
        }
        w.data = y;
        const void *in[] = {x};
        char what[64];
        snprintf(what, sizeof what, "tile case %d", it);
        check_runs(build_tile, &c, in, &w, 1, what);
        free(x);
        free(y);
    }
    tile_case c = {Q8_F32, 2, {2, 3}, {1, -1}};
    check_fails(build_tile(&c), "value -1 is invalid", "negative repeat");
}

/* ---- Shape, Size, ConstantOfShape, Range ----------------------------- */

Test(tensor_shape, start_end_and_size) {
    int64_t dims[4] = {2, 3, 0, 5};
    struct {
        int opset;
        int64_t start, end;
        bool has_start, has_end;
        int n;
        int64_t want[4];
    } cases[] = {
        {13, 0, 0, false, false, 4, {2, 3, 0, 5}},
        {15, 1, 0, true, false, 3, {3, 0, 5}},
        {15, -1, 0, true, false, 1, {5}},
        {15, 0, -1, false, true, 3, {2, 3, 0}},
        {15, 1, 2, true, true, 1, {3}},
        {15, -10, 10, true, true, 4, {2, 3, 0, 5}},
        {15, 3, 1, true, true, 0, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int th = 1; th <= 3; th += 2) {
            q8t_in in = in_spec("x", Q8_F32, 4, dims, NULL);
            q8_graph *g = graph1("Shape", cases[i].opset, &in, 1, 1);
            if (cases[i].has_start) q8t_attr_int(g, "start", cases[i].start);
            if (cases[i].has_end) q8t_attr_int(g, "end", cases[i].end);
            void *out[1];
            q8_tensor_info info[1];
            q8_error err = {0};
            float dummy[1];
            const void *data[] = {dummy};
            cr_assert_eq(q8t_run(g, data, th, out, info, 1, &err), Q8_OK, "%s", err.msg);
            cr_assert_eq(info[0].dtype, Q8_I64);
            cr_assert(info[0].ndim == 1 && info[0].dims[0] == cases[i].n, "shape case %zu", i);
            cr_assert(cases[i].n == 0 || memcmp(out[0], cases[i].want, 8 * (size_t)cases[i].n) == 0,
                      "shape case %zu values", i);
            free(out[0]);
        }
    }
    for (int z = 0; z < 2; z++) {
        dims[2] = z ? 4 : 0;
        q8t_in in = in_spec("x", Q8_U8, 4, dims, NULL);
        q8_graph *g = graph1("Size", 13, &in, 1, 1);
        /* Shape-only ops fold away even though x is not constant. */
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, 0);
        const q8_tensor *t = g->tensors[g->outputs[0]];
        cr_assert(t->data && t->dtype == Q8_I64 && t->ndim == 0);
        cr_assert_eq(*(const int64_t *)t->data, z ? 120 : 0);
        q8_graph_free(g);
    }
}

Test(tensor_constantofshape, values_and_dtypes) {
    struct {
        q8_dtype dt;
        bool has_value;
        int ns;
        int64_t shape[3];
    } cases[] = {
        {Q8_F32, false, 3, {2, 3, 4}}, {Q8_F32, true, 2, {9, 7}}, {Q8_I64, true, 1, {13}},
        {Q8_I32, true, 1, {0}},        {Q8_BOOL, true, 2, {2, 2}}, {Q8_U8, true, 0, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        q8t_in in = in_i64("s", cases[i].ns, cases[i].shape);
        q8_graph *g = graph1("ConstantOfShape", 13, &in, 1, 1);
        uint8_t val[8];
        for (int k = 0; k < 8; k++) val[k] = (uint8_t)(0x11 * (k + 1) + i);
        if (cases[i].dt == Q8_BOOL) val[0] = 1;
        if (cases[i].has_value) {
            q8_node *n = g->nodes[0];
            n->attrs = realloc(n->attrs, sizeof(q8_attr) * (size_t)(n->n_attrs + 1));
            q8_attr *a = &n->attrs[n->n_attrs++];
            memset(a, 0, sizeof *a);
            a->name = q8_strdup("value");
            a->type = Q8_ATTR_TENSOR;
            a->t = calloc(1, sizeof(q8_tensor));
            a->t->name = q8_strdup("value");
            q8_tensor_set_shape(a->t, cases[i].dt, (int64_t[]){1}, 1);
            cr_assert(q8_tensor_alloc_data(a->t, NULL) == Q8_OK);
            memcpy(a->t->data, val, q8_dtype_size(cases[i].dt));
        } else {
            memset(val, 0, sizeof val);
        }
        void *out[1];
        q8_tensor_info info[1];
        q8_error err = {0};
        cr_assert_eq(q8t_run(g, NULL, 1, out, info, 1, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(info[0].dtype, cases[i].dt);
        cr_assert_eq(info[0].ndim, cases[i].ns);
        int64_t n = numel_of(cases[i].shape, cases[i].ns);
        size_t es = q8_dtype_size(cases[i].dt);
        for (int64_t k = 0; k < n; k++)
            cr_assert(memcmp((uint8_t *)out[0] + k * (int64_t)es, val, es) == 0, "cos %zu[%lld]", i,
                      (long long)k);
        free(out[0]);
    }
    q8t_in in = in_spec("s", Q8_I64, 1, (int64_t[]){2}, NULL);
    check_fails(graph1("ConstantOfShape", 13, &in, 1, 1), "must be a constant", "runtime shape");
    in = in_i64("s", 2, (int64_t[]){2, -3});
    check_fails(graph1("ConstantOfShape", 13, &in, 1, 1), "negative dim", "negative dim");
}

static void range_case(q8_dtype dt, const void *s, const void *l, const void *d, int64_t n,
                       const void *want_data, const char *what) {
    q8t_in ins[3] = {in_spec("s", dt, 0, NULL, s), in_spec("l", dt, 0, NULL, l),
                     in_spec("d", dt, 0, NULL, d)};
    q8_graph *g = graph1("Range", 13, ins, 3, 1);
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(g, NULL, 1, out, info, 1, &err), Q8_OK, "%s: %s", what, err.msg);
    cr_assert(info[0].dtype == dt && info[0].ndim == 1 && info[0].dims[0] == n,
              "%s: got %lld elements, want %lld", what, (long long)info[0].dims[0], (long long)n);
    cr_assert(n == 0 || memcmp(out[0], want_data, (size_t)n * q8_dtype_size(dt)) == 0, "%s values",
              what);
    free(out[0]);
}

Test(tensor_range, float_and_int) {
    float fs = 1, fl = 5, fd = 2, fw[2] = {1, 3};
    range_case(Q8_F32, &fs, &fl, &fd, 2, fw, "float 1..5 by 2");
    float fs2 = 0, fl2 = 1, fd2 = 0.25f, fw2[4] = {0, 0.25f, 0.5f, 0.75f};
    range_case(Q8_F32, &fs2, &fl2, &fd2, 4, fw2, "float quarters");
    float fs3 = 3, fl3 = 1, fd3 = 1;
    range_case(Q8_F32, &fs3, &fl3, &fd3, 0, NULL, "float empty");
    int32_t is = 10, il = 4, id = -3, iw[2] = {10, 7};
    range_case(Q8_I32, &is, &il, &id, 2, iw, "int32 negative delta");
    int64_t ls = 3, ll = 9, ld = 3, lw[2] = {3, 6};
    range_case(Q8_I64, &ls, &ll, &ld, 2, lw, "int64 example 1");
    int64_t ls2 = -5, ll2 = 6, ld2 = 4, lw2[3] = {-5, -1, 3};
    range_case(Q8_I64, &ls2, &ll2, &ld2, 3, lw2, "int64 ceil");
    double ds = 0.5, dl = -1.0, dd = -0.5, dw[3] = {0.5, 0.0, -0.5};
    range_case(Q8_F64, &ds, &dl, &dd, 3, dw, "double");
    int16_t ss = 0, sl = 5, sd = 2, sw[3] = {0, 2, 4};
    range_case(Q8_I16, &ss, &sl, &sd, 3, sw, "int16");

    q8t_in ins[3] = {in_spec("s", Q8_I64, 0, NULL, NULL), in_spec("l", Q8_I64, 0, NULL, &ll),
                     in_spec("d", Q8_I64, 0, NULL, &ld)};
    check_fails(graph1("Range", 13, ins, 3, 1), "start ('s') must be a constant", "runtime start");
    int64_t zero = 0;
    ins[0].data = &ls;
    ins[2].data = &zero;
    check_fails(graph1("Range", 13, ins, 3, 1), "delta is 0", "zero delta");
    ins[2] = in_spec("d", Q8_I32, 0, NULL, &is);
    check_fails(graph1("Range", 13, ins, 3, 1), "delta is int32 but start is int64", "mixed types");
}

/* ---- Dropout ---------------------------------------------------------- */

typedef struct drop_case {
    int opset, nout;
    int64_t dims[3];
    const uint8_t *training;    /* constant training_mode, or NULL */
    const float *ratio;
} drop_case;

static q8_graph *build_dropout(const void *ctx) {
    const drop_case *c = ctx;
    q8t_in ins[3] = { in_spec("x", Q8_F32, 3, c->dims, NULL),
                      in_spec("r", Q8_F32, 0, NULL, c->ratio),
                      in_spec("t", Q8_BOOL, 0, NULL, c->training) };
    if (!c->ratio) ins[1].name = NULL;
    int nin = c->training ? 3 : c->ratio ? 2 : 1;
    q8_graph *g = graph1("Dropout", c->opset, ins, nin, c->nout);
    if (c->opset < 12) q8t_attr_float(g, "ratio", 0.3f);
    return g;
}

Test(tensor_dropout, inference_and_mask) {
    q8t_rng r = q8t_seed(111);
    float x[9 * 7 * 2];
    q8t_fill(&r, x, 126, -3, 3);
    uint8_t mask_bool[126];
    float mask_f[126];
    for (int i = 0; i < 126; i++) {
        mask_bool[i] = 1;
        mask_f[i] = 1.0f;
    }
    const void *in[] = {x};
    static const uint8_t off = 0, on = 1;
    static const float zero = 0.0f, half = 0.5f;
    drop_case cases[] = {
        {13, 1, {2, 9, 7}, NULL, NULL},   {13, 2, {2, 9, 7}, NULL, NULL},
        {12, 2, {2, 9, 7}, &off, &half},  {13, 2, {2, 9, 7}, &on, &zero},
        {9, 2, {2, 9, 7}, NULL, NULL},    {7, 1, {2, 9, 7}, NULL, NULL},
        {10, 2, {2, 9, 7}, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool float_mask = cases[i].opset < 10;
        want w[2] = {{Q8_F32, 3, {2, 9, 7}, x},
                     {float_mask ? Q8_F32 : Q8_BOOL, 3, {2, 9, 7},
                      float_mask ? (const void *)mask_f : mask_bool}};
        char what[64];
        snprintf(what, sizeof what, "dropout case %zu", i);
        check_runs(build_dropout, &cases[i], in, w, cases[i].nout, what);
    }
    /* constant data, run-time ratio: no fold, no view of a constant */
    q8t_in cin[2] = { in_spec("x", Q8_F32, 3, (int64_t[]){ 2, 9, 7 }, x),
                      in_spec("r", Q8_F32, 0, NULL, NULL) };
    const void *rin[] = {&half};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(graph1("Dropout", 13, cin, 2, 1), rin, 1, out, info, 1, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert(memcmp(out[0], x, sizeof x) == 0, "dropout of a constant");
    free(out[0]);

    drop_case t = {13, 1, {2, 9, 7}, &on, &half};
    check_fails(build_dropout(&t), "training-mode Dropout", "training");
    t.ratio = NULL;
    check_fails(build_dropout(&t), "training-mode Dropout", "training default ratio");
    drop_case t2 = {13, 1, {2, 9, 7}, NULL, NULL};
    q8_graph *g = build_dropout(&t2);
    /* training_mode as a graph input: not constant */
    int ti = q8_graph_add_tensor(g, "tm", NULL);
    q8_tensor_set_shape(g->tensors[ti], Q8_BOOL, NULL, 0);
    g->inputs[g->n_inputs++] = ti;
    q8_node *n = g->nodes[0];
    q8_node_set_io(n, (int[]){n->inputs[0], -1, ti}, 3, n->outputs, n->n_outputs, NULL);
    check_fails(g, "input 2 ('tm') must be a constant", "runtime training_mode");
}

Test(tensor_dropout, mask_variant_in_place) {
    /* x -> Relu -> r -> Dropout(mask) -> y, m: r dies at the Dropout, so y
     * may take r's buffer (in place). */
    q8_graph *g = q8_graph_new();
    g->inputs = malloc(sizeof(int) * 4);
    g->outputs = malloc(sizeof(int) * 4);
    int x = q8_graph_add_tensor(g, "x", NULL), rr = q8_graph_add_tensor(g, "r", NULL);
    int y = q8_graph_add_tensor(g, "y", NULL), m = q8_graph_add_tensor(g, "m", NULL);
    q8_tensor_set_shape(g->tensors[x], Q8_F32, (int64_t[]){13, 9}, 2);
    g->inputs[g->n_inputs++] = x;
    g->outputs[g->n_outputs++] = y;
    g->outputs[g->n_outputs++] = m;
    int n0 = q8_graph_add_node(g, "relu", "Relu"), n1 = q8_graph_add_node(g, "drop", "Dropout");
    q8_node_set_io(g->nodes[n0], &x, 1, &rr, 1, NULL);
    q8_node_set_io(g->nodes[n1], &rr, 1, (int[]){y, m}, 2, NULL);
    float xv[117], yv[117];
    uint8_t mv[117];
    q8t_rng r = q8t_seed(112);
    q8t_fill(&r, xv, 117, -1, 1);
    for (int i = 0; i < 117; i++) {
        yv[i] = xv[i] > 0 ? xv[i] : 0;
        mv[i] = 1;
    }
    void *outs[2];
    q8_tensor_info info[2];
    q8_error err = {0};
    const void *in[] = {xv};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_plan p;
    cr_assert_eq(q8_plan_build(g, NULL, NULL, &p, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(p.buffer[rr], p.buffer[y], "Dropout output is not in place");
    q8_plan_free(&p);
    /* q8t_run runs the passes again: they must be idempotent. */
    cr_assert_eq(q8t_run(g, in, 3, outs, info, 2, &err), Q8_OK, "%s", err.msg);
    cr_assert(memcmp(outs[0], yv, sizeof yv) == 0);
    cr_assert(memcmp(outs[1], mv, sizeof mv) == 0);
    free(outs[0]);
    free(outs[1]);
}

/* ---- constant folding of a shape subgraph ----------------------------- */

static int tix(q8_graph *g, const char *name) {
    int t = q8_graph_find(g, name);
    if (t < 0) t = q8_graph_add_tensor(g, name, NULL);
    cr_assert(t >= 0);
    return t;
}

static void cnst(q8_graph *g, const char *name, int nd, const int64_t *dims, const int64_t *v) {
    q8_tensor *t = g->tensors[tix(g, name)];
    q8_tensor_set_shape(t, Q8_I64, dims, nd);
    cr_assert(q8_tensor_alloc_data(t, NULL) == Q8_OK);
    memcpy(t->data, v, q8_tensor_nbytes(t));
}

static q8_node *node(q8_graph *g, const char *op, int nin, const char *const *ins,
                     const char *out) {
    int in[8], o = tix(g, out);
    for (int i = 0; i < nin; i++) in[i] = tix(g, ins[i]);
    int k = q8_graph_add_node(g, out, op);
    cr_assert(q8_node_set_io(g->nodes[k], in, nin, &o, 1, NULL) == Q8_OK);
    return g->nodes[k];
}

/* PyTorch's flatten export: x.view(x.size(0), -1) as
 * Shape -> Gather(0) -> Unsqueeze -> Concat(with [-1]) -> Reshape. */
static q8_graph *build_flatten_export(int opset) {
    q8_graph *g = q8_graph_new();
    g->opset = opset;
    g->inputs = malloc(sizeof(int) * 2);
    g->outputs = malloc(sizeof(int) * 2);
    int x = tix(g, "x");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, (int64_t[]){2, 3, 4, 5}, 4);
    g->inputs[g->n_inputs++] = x;
    cnst(g, "zero", 0, NULL, (int64_t[]){0});
    cnst(g, "minus1", 1, (int64_t[]){1}, (int64_t[]){-1});
    cnst(g, "axes0", 1, (int64_t[]){1}, (int64_t[]){0});
    node(g, "Shape", 1, (const char *[]){"x"}, "shape");
    q8_node *ga = node(g, "Gather", 2, (const char *[]){"shape", "zero"}, "n");
    (void)ga;
    q8t_attr_int(g, "axis", 0);
    if (opset >= 13) {
        node(g, "Unsqueeze", 2, (const char *[]){"n", "axes0"}, "n1");
    } else {
        node(g, "Unsqueeze", 1, (const char *[]){"n"}, "n1");
        q8t_attr_ints(g, "axes", (int64_t[]){0}, 1);
    }
    node(g, "Concat", 2, (const char *[]){"n1", "minus1"}, "newshape");
    q8t_attr_int(g, "axis", 0);
    node(g, "Reshape", 2, (const char *[]){"x", "newshape"}, "y");
    g->outputs[g->n_outputs++] = tix(g, "y");
    return g;
}

Test(tensor_fold, pytorch_flatten_chain_becomes_one_reshape) {
    for (int opset = 9; opset <= 13; opset += 4) {
        q8_graph *g = build_flatten_export(opset);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_nodes, 1, "opset %d: %d nodes left", opset, g->n_nodes);
        const q8_node *n = g->nodes[0];
        cr_assert_str_eq(n->op_type, "Reshape");
        const q8_tensor *s = q8_in(g, n, 1);
        cr_assert(s->data && s->dtype == Q8_I64 && s->ndim == 1 && s->dims[0] == 2);
        cr_assert(((const int64_t *)s->data)[0] == 2 && ((const int64_t *)s->data)[1] == -1);
        const q8_tensor *y = q8_out(g, n, 0);
        cr_assert(y->ndim == 2 && y->dims[0] == 2 && y->dims[1] == 60);
        q8_graph_free(g);

        float x[120];
        q8t_rng r = q8t_seed(121);
        q8t_fill(&r, x, 120, -1, 1);
        void *out[1];
        q8_tensor_info info[1];
        const void *in[] = {x};
        cr_assert_eq(q8t_run(build_flatten_export(opset), in, 3, out, info, 1, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert(info[0].ndim == 2 && info[0].dims[0] == 2 && info[0].dims[1] == 60);
        cr_assert(memcmp(out[0], x, sizeof x) == 0);
        free(out[0]);
    }
}

/* ---- large inputs: many parallel chunks, chunks starting mid-row ------- */

Test(tensor_large, multi_chunk) {
    q8t_rng r = q8t_seed(131);
    cat_case cc = {Q8_F32, 2, 3, 1, {{1000, 10}, {1000, 3}, {1000, 7}}};
    concat_check(&cc, &r, "large concat");
    cat_case cc0 = {Q8_U8, 3, 2, 0, {{300, 20, 30}, {200, 20, 30}}};
    concat_check(&cc0, &r, "large concat axis 0");
    split_case sc = {Q8_F32, 13, 2, 3, 1, {1000, 20}, 3, {10, 3, 7}, 0};
    split_check(&sc, sc.split, &r, "large split");
    slice_case sl = { Q8_F32,   13,        3,    2,   { 64, 50, 40 }, { 1, -1 }, { 64, INT64_MIN },
                      { 0, 2 }, { 2, -3 }, true, true };
    slice_check(&sl, &r, "large slice");
    pad_case pc = {.dt = Q8_F32, .opset = 13, .nd = 3, .dims = {40, 50, 60}, .pb = {1, 2, 3},
                   .pe = {2, 1, 0}, .mode = "reflect"};
    pad_check(&pc, &r, "large reflect pad");
    pc.mode = "constant";
    pc.pb[2] = -2;
    pad_check(&pc, &r, "large constant pad");
    tp_case tc = {Q8_F32, 4, {8, 30, 20, 40}, {2, 0, 3, 1}, true};
    transpose_case(&tc, &r, "large transpose tiled");
    tp_case tc2 = {Q8_I64, 4, {8, 30, 20, 40}, {1, 2, 0, 3}, true};
    transpose_case(&tc2, &r, "large transpose rows");

    /* Gather with many small blocks, indices at run time */
    gather_case gc = {Q8_F32, Q8_I32, 2, 2, 1, {500, 40}, {30, 20}, NULL};
    int32_t idx[600];
    for (int i = 0; i < 600; i++) idx[i] = (int32_t)(q8t_next(&r) % 80) - 40;
    float *x = rand_bytes(&r, Q8_F32, 500 * 40), *y = malloc(sizeof(float) * 500 * 600);
    for (int o = 0; o < 500; o++)
        for (int j = 0; j < 600; j++)
            y[o * 600 + j] = x[o * 40 + (idx[j] < 0 ? idx[j] + 40 : idx[j])];
    want w = {Q8_F32, 3, {500, 30, 20}, y};
    const void *in[] = {x, idx};
    check_runs(build_gather, &gc, in, &w, 1, "large gather");
    free(x);
    free(y);

    tile_case tl = {Q8_U8, 3, {13, 9, 7}, {3, 20, 11}};
    int64_t on = 39 * 180 * 77, oi[3];
    uint8_t *tx = rand_bytes(&r, Q8_U8, 13 * 9 * 7), *ty = malloc((size_t)on);
    for (int64_t o = 0; o < on; o++) {
        unravel(o, (int64_t[]){39, 180, 77}, 3, oi);
        ty[o] = tx[(oi[0] % 13) * 63 + (oi[1] % 9) * 7 + oi[2] % 7];
    }
    want tw = {Q8_U8, 3, {39, 180, 77}, ty};
    const void *tin[] = {tx};
    check_runs(build_tile, &tl, tin, &tw, 1, "large tile");
    free(tx);
    free(ty);
}

/* ---- GatherElements, GatherND ----------------------------------------- */

typedef struct ge_case {
    const char *op;
    q8_dtype dt, it;
    int nd, ni;
    int64_t axis;           /* GatherElements axis / GatherND batch_dims */
    int64_t dims[Q8_MAX_DIMS], idims[Q8_MAX_DIMS];
    const void *cidx;
} ge_case;

static q8_graph *build_ge(const void *ctx) {
    const ge_case *c = ctx;
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL),
                     in_spec("i", c->it, c->ni, c->idims, c->cidx)};
    q8_graph *g = graph1(c->op, 13, ins, 2, 1);
    q8t_attr_int(g, strcmp(c->op, "GatherND") == 0 ? "batch_dims" : "axis", c->axis);
    return g;
}

static void *rand_indices(q8t_rng *r, q8_dtype it, int64_t n, const int64_t *range, int nr) {
    void *idx = malloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++) {
        int64_t dim = range[i % nr], v = (int64_t)(q8t_next(r) % (uint64_t)(2 * dim)) - dim;
        if (it == Q8_I64) ((int64_t *)idx)[i] = v;
        else ((int32_t *)idx)[i] = (int32_t)v;
    }
    return idx;
}

Test(tensor_gather_elements, random) {
    q8t_rng r = q8t_seed(141);
    for (int it = 0; it < 50; it++) {
        ge_case c = { .op = "GatherElements",
                      .dt = dtypes[it % N_DTYPES],
                      .it = it % 3 ? Q8_I64 : Q8_I32,
                      .nd = 1 + it % 4 };
        c.ni = c.nd;
        int ax = (int)(q8t_next(&r) % (uint64_t)c.nd);
        c.axis = it % 2 ? ax - c.nd : ax;
        rand_shape(&r, c.nd, c.dims, true, 3000);
        if (c.dims[ax] == 0) c.dims[ax] = 4;
        for (int d = 0; d < c.nd; d++)
            c.idims[d] =
                d == ax ? rand_dim(&r, true) : (int64_t)(q8t_next(&r) % (uint64_t)(c.dims[d] + 1));
        int64_t on = numel_of(c.idims, c.nd), oi[Q8_MAX_DIMS];
        void *idx = rand_indices(&r, c.it, on, &c.dims[ax], 1);
        c.cidx = it % 4 < 2 ? idx : NULL;
        size_t es = esz(c.dt);
        uint8_t *x = rand_bytes(&r, c.dt, numel_of(c.dims, c.nd)), *y = malloc((size_t)on * es + 1);
        for (int64_t o = 0; o < on; o++) {
            unravel(o, c.idims, c.nd, oi);
            int64_t v = idx_val(c.it, idx, o);
            oi[ax] = v < 0 ? v + c.dims[ax] : v;
            memcpy(y + o * (int64_t)es, x + ravel(oi, c.dims, c.nd) * (int64_t)es, es);
        }
        want w = {c.dt, c.nd, {0}, y};
        memcpy(w.dims, c.idims, sizeof w.dims);
        const void *in[] = {x, idx};
        char what[64];
        snprintf(what, sizeof what, "gather_elements case %d", it);
        check_runs(build_ge, &c, in, &w, 1, what);
        free(x);
        free(y);
        free(idx);
    }
    int64_t bad[4] = {0, 1, 2, 3};
    ge_case e = {"GatherElements", Q8_F32, Q8_I64, 2, 2, 1, {2, 3}, {2, 2}, bad};
    check_fails(build_ge(&e), "index 3 (at position 3 of 'i') is out of range for axis 1", "range");
    e.idims[0] = 3;
    e.cidx = NULL;
    check_fails(build_ge(&e), "exceed data 2x3 in dim 0", "indices too big");
}

Test(tensor_gathernd, random) {
    q8t_rng r = q8t_seed(151);
    for (int it = 0; it < 50; it++) {
        ge_case c = {.op = "GatherND", .dt = dtypes[it % N_DTYPES], .it = it % 3 ? Q8_I64 : Q8_I32,
                     .nd = 1 + it % 4};
        rand_shape(&r, c.nd, c.dims, false, 3000);
        int b = (int)(q8t_next(&r) % (uint64_t)c.nd);
        int k = 1 + (int)(q8t_next(&r) % (uint64_t)(c.nd - b));
        c.axis = b;
        c.ni = b + 1 + (int)(q8t_next(&r) % 2) + 1;
        for (int d = 0; d < b; d++) c.idims[d] = c.dims[d];
        for (int d = b; d < c.ni - 1; d++) c.idims[d] = rand_dim(&r, true);
        c.idims[c.ni - 1] = k;
        if (c.nd - 1 - k + c.ni > Q8_MAX_DIMS) continue;
        int64_t ni = numel_of(c.idims, c.ni);
        void *idx = rand_indices(&r, c.it, ni, &c.dims[b], k);
        c.cidx = it % 4 < 2 ? idx : NULL;
        size_t es = esz(c.dt);
        want w = {c.dt, 0, {0}, NULL};
        for (int d = 0; d < c.ni - 1; d++) w.dims[w.ndim++] = c.idims[d];
        for (int d = b + k; d < c.nd; d++) w.dims[w.ndim++] = c.dims[d];
        int64_t on = numel_of(w.dims, w.ndim), oi[2 * Q8_MAX_DIMS], xi[Q8_MAX_DIMS];
        uint8_t *x = rand_bytes(&r, c.dt, numel_of(c.dims, c.nd)), *y = malloc((size_t)on * es + 1);
        for (int64_t o = 0; o < on; o++) {
            unravel(o, w.dims, w.ndim, oi);
            int64_t tuple = ravel(oi, c.idims, c.ni - 1);
            for (int d = 0; d < b; d++) xi[d] = oi[d];
            for (int j = 0; j < k; j++) {
                int64_t v = idx_val(c.it, idx, tuple * k + j);
                xi[b + j] = v < 0 ? v + c.dims[b + j] : v;
            }
            for (int d = b + k; d < c.nd; d++) xi[d] = oi[c.ni - 1 + d - b - k];
            memcpy(y + o * (int64_t)es, x + ravel(xi, c.dims, c.nd) * (int64_t)es, es);
        }
        w.data = y;
        const void *in[] = {x, idx};
        char what[64];
        snprintf(what, sizeof what, "gathernd case %d (b %d, k %d)", it, b, k);
        check_runs(build_ge, &c, in, &w, 1, what);
        free(x);
        free(y);
        free(idx);
    }
    int64_t bad[4] = {0, 1, 1, -3};
    ge_case e = {"GatherND", Q8_F32, Q8_I64, 2, 2, 0, {2, 2}, {2, 2}, bad};
    check_fails(build_ge(&e),
                "index -3 (at position 3 of 'i') is out of range for axis 1 of size 2", "range");
    e.idims[1] = 3;
    e.idims[0] = 1;
    check_fails(build_ge(&e), "last dim 3 must be in 1..2", "k too big");
    /* run time: a bad tuple gives a zero slice */
    ge_case rt = {"GatherND", Q8_F32, Q8_I64, 2, 2, 0, {2, 3}, {2, 1}, NULL};
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0, 0, 0, 4, 5, 6};
    int64_t idx[2] = {2, -1};
    want w = {Q8_F32, 2, {2, 3}, y};
    const void *in[] = {x, idx};
    check_runs(build_ge, &rt, in, &w, 1, "gathernd run-time range");
}

/* ---- Trilu ------------------------------------------------------------- */

typedef struct trilu_case {
    q8_dtype dt;
    int nd;
    int64_t dims[Q8_MAX_DIMS];
    int upper;         /* -1: attribute absent (default 1) */
    int k_form;        /* 0: no k, 1: constant, 2: graph input */
    int64_t k;
} trilu_case;

static q8_graph *build_trilu(const void *ctx) {
    const trilu_case *c = ctx;
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL),
                     in_spec("k", Q8_I64, 0, NULL, c->k_form == 1 ? &c->k : NULL)};
    q8_graph *g = graph1("Trilu", 14, ins, c->k_form ? 2 : 1, 1);
    if (c->upper >= 0) q8t_attr_int(g, "upper", c->upper);
    return g;
}

Test(tensor_trilu, random_dtypes_k_forms) {
    q8t_rng r = q8t_seed(211);
    static const int64_t ks[] = {0, 1, -1, 2, -3, 7, -9, INT64_MAX, INT64_MIN};
    for (int it = 0; it < 60; it++) {
        trilu_case c = {.dt = dtypes[it % N_DTYPES], .nd = 2 + it % 3, .upper = it % 3 - 1,
                        .k_form = (it / 3) % 3, .k = ks[q8t_next(&r) % 9]};
        rand_shape(&r, c.nd, c.dims, true, 400);
        int64_t k = c.k_form ? c.k : 0, rows = c.dims[c.nd - 2], cols = c.dims[c.nd - 1];
        bool upper = c.upper != 0;
        size_t es = esz(c.dt);
        int64_t n = numel_of(c.dims, c.nd);
        uint8_t *x = rand_bytes(&r, c.dt, n), *y = calloc((size_t)n * es + 1, 1);
        for (int64_t e = 0; e < n; e++) {
            int64_t j = e % cols, i = (e / cols) % rows;
            /* in 128 bits: j - i - k cannot overflow */
            __int128 d = (__int128)j - i - k;
            if (upper ? d >= 0 : d <= 0) memcpy(y + e * (int64_t)es, x + e * (int64_t)es, es);
        }
        want w = {c.dt, c.nd, {0}, y};
        memcpy(w.dims, c.dims, sizeof c.dims);
        const void *in[2] = {x, &c.k};
        char what[96];
        snprintf(what, sizeof what, "trilu case %d (upper %d, k %lld, form %d)", it, c.upper,
                 (long long)c.k, c.k_form);
        check_runs(build_trilu, &c, in, &w, 1, what);
        free(x);
        free(y);
    }
}

Test(tensor_trilu, errors) {
    trilu_case c = {Q8_F32, 1, {5}, -1, 0, 0};
    check_fails(build_trilu(&c), "rank 1, expected >= 2", "rank 1");
    c = (trilu_case){Q8_F32, 2, {3, 3}, 2, 0, 0};
    check_fails(build_trilu(&c), "upper is 2", "bad upper");
}

/* ---- DepthToSpace, SpaceToDepth ---------------------------------------- */

typedef struct ds_case {
    q8_dtype dt;
    const char *op, *mode;   /* mode NULL: the attribute absent */
    int64_t dims[4], b;
} ds_case;

static q8_graph *build_ds(const void *ctx) {
    const ds_case *c = ctx;
    q8t_in in = in_spec("x", c->dt, 4, c->dims, NULL);
    q8_graph *g = graph1(c->op, 13, &in, 1, 1);
    q8t_attr_int(g, "blocksize", c->b);
    if (c->mode) q8t_attr_str(g, "mode", c->mode);
    return g;
}

/* The spec's definition, literally: a reshape to 6 dims, a transpose, a
 * reshape; here as the 6-dim index map of each form. */
static void ds_reference(const ds_case *c, const uint8_t *x, uint8_t *y, int64_t *od) {
    int64_t N = c->dims[0], C = c->dims[1], H = c->dims[2], W = c->dims[3], b = c->b;
    size_t es = esz(c->dt);
    bool s2d = !strcmp(c->op, "SpaceToDepth"), crd = c->mode && !strcmp(c->mode, "CRD");
    int64_t oc = s2d ? C * b * b : C / (b * b), oh = s2d ? H / b : H * b, ow = s2d ? W / b : W * b;
    od[0] = N, od[1] = oc, od[2] = oh, od[3] = ow;
    int64_t out = 0;
    if (s2d) { /* tmp[n][i][j][c][h][w] = x[n][c][h*b + i][w*b + j] */
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < b; i++)
                for (int64_t j = 0; j < b; j++)
                    for (int64_t cc = 0; cc < C; cc++)
                        for (int64_t h = 0; h < oh; h++)
                            for (int64_t w = 0; w < ow; w++, out++) {
                                int64_t src = ((n * C + cc) * H + h * b + i) * W + w * b + j;
                                memcpy(y + out * (int64_t)es, x + src * (int64_t)es, es);
                            }
        return;
    }
    /* y[n][c][h][i][w][j] = x[n][i][j][c][h][w] (DCR) or x[n][c][i][j][h][w] (CRD) */
    for (int64_t n = 0; n < N; n++)
        for (int64_t cc = 0; cc < oc; cc++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t i = 0; i < b; i++)
                    for (int64_t w = 0; w < W; w++)
                        for (int64_t j = 0; j < b; j++, out++) {
                            int64_t ch = crd ? (cc * b + i) * b + j : (i * b + j) * oc + cc;
                            int64_t src = ((n * C + ch) * H + h) * W + w;
                            memcpy(y + out * (int64_t)es, x + src * (int64_t)es, es);
                        }
}

Test(tensor_depth_space, random_modes_dtypes) {
    q8t_rng r = q8t_seed(223);
    static const char *modes[3] = {NULL, "DCR", "CRD"};
    for (int it = 0; it < 48; it++) {
        ds_case c = {.dt = dtypes[it % N_DTYPES], .b = 1 + (int64_t)(q8t_next(&r) % 3)};
        bool s2d = it % 4 == 3;
        c.op = s2d ? "SpaceToDepth" : "DepthToSpace";
        c.mode = s2d ? NULL : modes[it % 3];
        c.dims[0] = 1 + (int64_t)(q8t_next(&r) % 2);
        c.dims[1] = (1 + (int64_t)(q8t_next(&r) % 3)) * (s2d ? 1 : c.b * c.b);
        c.dims[2] = (1 + (int64_t)(q8t_next(&r) % 4)) * (s2d ? c.b : 1);
        c.dims[3] = (1 + (int64_t)(q8t_next(&r) % 5)) * (s2d ? c.b : 1);
        int64_t n = numel_of(c.dims, 4);
        uint8_t *x = rand_bytes(&r, c.dt, n), *y = malloc((size_t)n * esz(c.dt) + 1);
        want w = {c.dt, 4, {0}, y};
        ds_reference(&c, x, y, w.dims);
        const void *in[1] = {x};
        char what[96];
        snprintf(what, sizeof what, "%s case %d (b %lld, mode %s)", c.op, it, (long long)c.b,
                 c.mode ? c.mode : "default");
        check_runs(build_ds, &c, in, &w, 1, what);
        free(x);
        free(y);
    }
}

Test(tensor_depth_space, errors) {
    ds_case c = {Q8_F32, "DepthToSpace", NULL, {1, 6, 2, 2}, 2};
    check_fails(build_ds(&c), "6 channels are not a multiple of blocksize^2 = 4", "channels");
    c = (ds_case){Q8_F32, "SpaceToDepth", NULL, {1, 2, 3, 4}, 2};
    check_fails(build_ds(&c), "must be multiples of the blocksize 2", "H");
    c = (ds_case){Q8_F32, "DepthToSpace", "XYZ", {1, 4, 2, 2}, 2};
    check_fails(build_ds(&c), "mode 'XYZ'", "mode");
    c = (ds_case){Q8_F32, "DepthToSpace", NULL, {1, 4, 2, 2}, 0};
    check_fails(build_ds(&c), "blocksize 0", "blocksize");
    /* a zero dim does not let a huge one through (the output's dims would overflow) */
    c = (ds_case){Q8_F32, "SpaceToDepth", NULL, {1, (int64_t)1 << 40, 0, 0}, 4096};
    check_fails(build_ds(&c), "", "huge channels beside a zero dim");
}

/* ---- CumSum ------------------------------------------------------------ */

typedef struct cumsum_case {
    q8_dtype dt;
    int nd;
    int64_t dims[Q8_MAX_DIMS], axis;
    int exclusive, reverse;
} cumsum_case;

static q8_graph *build_cumsum(const void *ctx) {
    const cumsum_case *c = ctx;
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL),
                     in_spec("axis", Q8_I64, 0, NULL, &c->axis)};
    q8_graph *g = graph1("CumSum", 14, ins, 2, 1);
    if (c->exclusive) q8t_attr_int(g, "exclusive", 1);
    if (c->reverse) q8t_attr_int(g, "reverse", 1);
    return g;
}

/* Sums in element order along the axis, in the dtype (unsigned for the
 * signed integers: wrapping). */
#define CUMSUM_REF(T, A)                                                                   \
    {                                                                                      \
        const T *xs = (const T *)x;                                                        \
        T *ys = (T *)y;                                                                    \
        for (int64_t o = 0; o < outer; o++)                                                \
            for (int64_t in = 0; in < inner; in++) {                                       \
                A s = 0;                                                                   \
                for (int64_t j = 0; j < len; j++) {                                        \
                    int64_t l = c.reverse ? len - 1 - j : j, e = (o * len + l) * inner + in; \
                    A v = (A)xs[e];                                                        \
                    if (c.exclusive) ys[e] = (T)s;                                         \
                    s += v;                                                                \
                    if (!c.exclusive) ys[e] = (T)s;                                        \
                }                                                                          \
            }                                                                              \
    }

Test(tensor_cumsum, random_dtypes_axes) {
    q8t_rng r = q8t_seed(227);
    static const q8_dtype dts[6] = {Q8_F32, Q8_F64, Q8_I32, Q8_I64, Q8_U32, Q8_U64};
    for (int it = 0; it < 48; it++) {
        cumsum_case c = {.dt = dts[it % 6], .nd = 1 + it % 3, .exclusive = (it / 6) % 2,
                         .reverse = (it / 12) % 2};
        rand_shape(&r, c.nd, c.dims, true, 500);
        c.axis = (int64_t)(q8t_next(&r) % (uint64_t)c.nd) - (it % 2 ? c.nd : 0);
        int ax = (int)(c.axis < 0 ? c.axis + c.nd : c.axis);
        int64_t outer = 1, inner = 1, len = c.dims[ax];
        for (int d = 0; d < ax; d++) outer *= c.dims[d];
        for (int d = ax + 1; d < c.nd; d++) inner *= c.dims[d];
        int64_t n = numel_of(c.dims, c.nd);
        size_t es = esz(c.dt);
        uint8_t *x = malloc((size_t)n * es + 1), *y = malloc((size_t)n * es + 1);
        for (int64_t i = 0; i < n; i++) {
            uint64_t u = q8t_next(&r);
            if (c.dt == Q8_F32) ((float *)x)[i] = (float)((int64_t)(u % 2001) - 1000) / 7.0f;
            else if (c.dt == Q8_F64) ((double *)x)[i] = (double)((int64_t)(u % 2001) - 1000) / 7.0;
            else if (es == 4) ((uint32_t *)x)[i] = (uint32_t)(u * 0x9E3779B97F4A7C15u >> 32);
            else ((uint64_t *)x)[i] = u * 0x9E3779B97F4A7C15u; /* wraps when summed */
        }
        switch (c.dt) {
        case Q8_F32: CUMSUM_REF(float, float) break;
        case Q8_F64: CUMSUM_REF(double, double) break;
        case Q8_I32: CUMSUM_REF(int32_t, uint32_t) break;
        case Q8_I64: CUMSUM_REF(int64_t, uint64_t) break;
        case Q8_U32: CUMSUM_REF(uint32_t, uint32_t) break;
        default: CUMSUM_REF(uint64_t, uint64_t) break;
        }
        want w = {c.dt, c.nd, {0}, y};
        memcpy(w.dims, c.dims, sizeof c.dims);
        const void *in[1] = {x};
        char what[96];
        snprintf(what, sizeof what, "cumsum case %d (%s, axis %lld, excl %d, rev %d)", it,
                 q8_dtype_name(c.dt), (long long)c.axis, c.exclusive, c.reverse);
        check_runs(build_cumsum, &c, in, &w, 1, what);
        free(x);
        free(y);
    }
}

Test(tensor_cumsum, errors) {
    cumsum_case c = {Q8_F32, 2, {2, 3}, 2, 0, 0};
    check_fails(build_cumsum(&c), "axis must be one value in [-2, 2)", "axis");
    c = (cumsum_case){Q8_U8, 1, {4}, 0, 0, 0};
    check_fails(build_cumsum(&c), "dtype uint8 is not supported", "dtype");
    int64_t d[1] = {3};
    q8t_in ins[2] = {in_spec("x", Q8_F32, 1, d, NULL), in_spec("axis", Q8_I64, 0, NULL, NULL)};
    check_fails(graph1("CumSum", 14, ins, 2, 1), "must be a constant", "axis as an input");
}

/* ---- Hardmax ----------------------------------------------------------- */

typedef struct hardmax_case {
    int nd;
    int64_t dims[Q8_MAX_DIMS], axis;
    bool has_axis;
} hardmax_case;

static q8_graph *build_hardmax(const void *ctx) {
    const hardmax_case *c = ctx;
    q8t_in in = in_spec("x", Q8_F32, c->nd, c->dims, NULL);
    q8_graph *g = graph1("Hardmax", 13, &in, 1, 1);
    if (c->has_axis) q8t_attr_int(g, "axis", c->axis);
    return g;
}

Test(tensor_hardmax, ties_nan_axes) {
    q8t_rng r = q8t_seed(229);
    for (int it = 0; it < 40; it++) {
        hardmax_case c = {.nd = 1 + it % 4, .has_axis = it % 3 != 0};
        rand_shape(&r, c.nd, c.dims, false, 600);
        c.axis = c.has_axis ? (int64_t)(q8t_next(&r) % (uint64_t)c.nd) - (it % 2 ? c.nd : 0)
                            : -1;
        int ax = (int)(c.axis < 0 ? c.axis + c.nd : c.axis);
        int64_t outer = 1, inner = 1, len = c.dims[ax], n = numel_of(c.dims, c.nd);
        for (int d = 0; d < ax; d++) outer *= c.dims[d];
        for (int d = ax + 1; d < c.nd; d++) inner *= c.dims[d];
        float *x = malloc(sizeof(float) * (size_t)n), *y = calloc((size_t)n, sizeof(float));
        for (int64_t i = 0; i < n; i++) { /* few values: ties; some NaN */
            uint64_t u = q8t_next(&r);
            x[i] = u % 17 == 0 ? NAN : (float)(u % 5) - 2;
        }
        for (int64_t o = 0; o < outer; o++)
            for (int64_t in = 0; in < inner; in++) {
                int64_t best = -1;
                for (int64_t l = 0; l < len && (best < 0 || !isnan(x[(o * len + best) * inner + in])); l++) {
                    float v = x[(o * len + l) * inner + in];
                    if (best < 0 || isnan(v) || v > x[(o * len + best) * inner + in]) best = l;
                }
                y[(o * len + best) * inner + in] = 1;
            }
        want w = {Q8_F32, c.nd, {0}, y};
        memcpy(w.dims, c.dims, sizeof c.dims);
        const void *in[1] = {x};
        char what[64];
        snprintf(what, sizeof what, "hardmax case %d (axis %lld)", it, (long long)c.axis);
        check_runs(build_hardmax, &c, in, &w, 1, what);
        free(x);
        free(y);
    }
    hardmax_case c = {2, {2, 3}, 2, true};
    check_fails(build_hardmax(&c), "axis 2 is out of range for rank 2", "axis");
}

/* ---- TopK -------------------------------------------------------------- */

typedef struct topk_case {
    q8_dtype dt;
    int nd;
    int64_t dims[Q8_MAX_DIMS], axis, k;
    int largest;        /* -1: attribute absent (default 1) */
} topk_case;

static q8_graph *build_topk(const void *ctx) {
    const topk_case *c = ctx;
    int64_t one = 1;
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL),
                     in_spec("k", Q8_I64, 1, &one, &c->k)};
    q8_graph *g = graph1("TopK", 11, ins, 2, 2);
    q8t_attr_int(g, "axis", c->axis);
    if (c->largest >= 0) q8t_attr_int(g, "largest", c->largest);
    return g;
}

/* v as a double for ordering; NaN stays NaN */
static double topk_val(const topk_case *c, const void *x, int64_t i) {
    switch (c->dt) {
    case Q8_F32: return ((const float *)x)[i];
    case Q8_F64: return ((const double *)x)[i];
    case Q8_I32: return ((const int32_t *)x)[i];
    default: return (double)((const int64_t *)x)[i];
    }
}

Test(tensor_topk, ties_nan_dtypes_axes) {
    q8t_rng r = q8t_seed(233);
    static const q8_dtype dts[4] = {Q8_F32, Q8_F64, Q8_I32, Q8_I64};
    for (int it = 0; it < 64; it++) {
        topk_case c = {.dt = dts[it % 4], .nd = 1 + it % 3, .largest = it % 3 - 1};
        rand_shape(&r, c.nd, c.dims, false, 400);
        c.axis = (int64_t)(q8t_next(&r) % (uint64_t)c.nd) - (it % 2 ? c.nd : 0);
        int ax = (int)(c.axis < 0 ? c.axis + c.nd : c.axis);
        int64_t len = c.dims[ax], outer = 1, inner = 1, n = numel_of(c.dims, c.nd);
        /* every fourth case a k of at most len / 8: the kernel's heap selection */
        c.k = (int64_t)(q8t_next(&r) % (uint64_t)((it % 4 == 2 ? len / 8 : len) + 1));
        for (int d = 0; d < ax; d++) outer *= c.dims[d];
        for (int d = ax + 1; d < c.nd; d++) inner *= c.dims[d];
        size_t es = esz(c.dt);
        uint8_t *x = malloc((size_t)n * es + 1);
        for (int64_t i = 0; i < n; i++) { /* few values (ties), some NaN */
            uint64_t u = q8t_next(&r);
            double v = u % 13 == 0 && c.dt == Q8_F32 ? NAN : (double)(u % 7) - 3;
            if (c.dt == Q8_F32) ((float *)x)[i] = (float)v;
            else if (c.dt == Q8_F64) ((double *)x)[i] = v;
            else if (c.dt == Q8_I32) ((int32_t *)x)[i] = (int32_t)v;
            else ((int64_t *)x)[i] = (int64_t)v * 1000000000000LL; /* beyond float's 24 bits */
        }
        want w[2] = {{c.dt, c.nd, {0}, NULL}, {Q8_I64, c.nd, {0}, NULL}};
        memcpy(w[0].dims, c.dims, sizeof c.dims);
        w[0].dims[ax] = c.k;
        memcpy(w[1].dims, w[0].dims, sizeof c.dims);
        int64_t on = outer * c.k * inner;
        uint8_t *yv = malloc((size_t)on * es + 1);
        int64_t *yi = malloc(sizeof(int64_t) * (size_t)on + 1);
        bool largest = c.largest != 0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t in = 0; in < inner; in++) {
                /* selection: k times the best not yet taken (NaN is the largest) */
                bool *taken = calloc((size_t)len + 1, 1);
                for (int64_t j = 0; j < c.k; j++) {
                    int64_t best = -1;
                    for (int64_t l = 0; l < len; l++) {
                        if (taken[l]) continue;
                        if (best < 0) { best = l; continue; }
                        double v = topk_val(&c, x, (o * len + l) * inner + in),
                               b = topk_val(&c, x, (o * len + best) * inner + in);
                        bool better = largest ? (isnan(v) && !isnan(b)) || v > b
                                              : (!isnan(v) && isnan(b)) || v < b;
                        if (better) best = l;
                    }
                    taken[best] = true;
                    int64_t oe = (o * c.k + j) * inner + in;
                    memcpy(yv + oe * (int64_t)es, x + ((o * len + best) * inner + in) * (int64_t)es,
                           es);
                    yi[oe] = best;
                }
                free(taken);
            }
        w[0].data = yv;
        w[1].data = yi;
        const void *in[1] = {x};
        char what[96];
        snprintf(what, sizeof what, "topk case %d (%s, axis %lld, k %lld, largest %d)", it,
                 q8_dtype_name(c.dt), (long long)c.axis, (long long)c.k, c.largest);
        check_runs(build_topk, &c, in, w, 2, what);
        free(x);
        free(yv);
        free(yi);
    }
    topk_case c = {Q8_F32, 2, {2, 3}, 1, 4, -1};
    check_fails(build_topk(&c), "k must be one value in [0, 3]", "k too large");
}

/* The Indices output left unnamed (the importer's -1): Values alone. */
Test(tensor_topk, values_only) {
    float x[6] = {3, 1, 2, -1, 5, 5}, expect[4] = {3, 2, 5, 5};
    topk_case c = {Q8_F32, 2, {2, 3}, 1, 2, -1};
    q8_graph *g = build_topk(&c);
    g->nodes[0]->outputs[1] = -1;
    g->n_outputs = 1;
    const void *in[1] = {x};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(g, in, 2, out, info, 1, &err), Q8_OK, "%s", err.msg);
    cr_assert(memcmp(out[0], expect, sizeof expect) == 0);
    free(out[0]);
}

/* ---- OneHot, IsNaN / IsInf, EyeLike ------------------------------------- */

typedef struct onehot_case {
    q8_dtype idt, vdt;
    int nd;
    int64_t dims[Q8_MAX_DIMS], axis, depth;
    bool has_axis;
} onehot_case;

static q8_graph *build_onehot(const void *ctx) {
    const onehot_case *c = ctx;
    int64_t two = 2;
    q8t_in ins[3] = {in_spec("i", c->idt, c->nd, c->dims, NULL),
                     in_spec("depth", Q8_I64, 0, NULL, &c->depth),
                     in_spec("values", c->vdt, 1, &two, NULL)};
    q8_graph *g = graph1("OneHot", 11, ins, 3, 1);
    if (c->has_axis) q8t_attr_int(g, "axis", c->axis);
    return g;
}

Test(tensor_onehot, axes_negative_and_out_of_range_indices) {
    q8t_rng r = q8t_seed(239);
    static const q8_dtype idts[3] = {Q8_I64, Q8_I32, Q8_F32};
    for (int it = 0; it < 36; it++) {
        onehot_case c = {.idt = idts[it % 3], .vdt = dtypes[it % N_DTYPES], .nd = 1 + it % 3,
                         .depth = 1 + (int64_t)(q8t_next(&r) % 6), .has_axis = it % 4 != 0};
        rand_shape(&r, c.nd, c.dims, true, 200);
        c.axis = c.has_axis ? (int64_t)(q8t_next(&r) % (uint64_t)(c.nd + 1)) - (it % 2 ? c.nd + 1 : 0)
                            : -1;
        int ax = (int)(c.axis < 0 ? c.axis + c.nd + 1 : c.axis);
        int64_t n = numel_of(c.dims, c.nd);
        int64_t *idx = malloc(sizeof(int64_t) * (size_t)n + 1);
        void *ind = malloc(sizeof(int64_t) * (size_t)n + 1);
        for (int64_t i = 0; i < n; i++) {
            idx[i] = (int64_t)(q8t_next(&r) % (uint64_t)(3 * c.depth)) - c.depth - c.depth / 2;
            if (c.idt == Q8_I64) ((int64_t *)ind)[i] = idx[i];
            else if (c.idt == Q8_I32) ((int32_t *)ind)[i] = (int32_t)idx[i];
            else ((float *)ind)[i] = (float)idx[i] + (idx[i] < 0 ? -0.5f : 0.5f); /* truncated */
        }
        size_t es = esz(c.vdt);
        uint8_t *vals = rand_bytes(&r, c.vdt, 2);
        want w = {c.vdt, c.nd + 1, {0}, NULL};
        int64_t outer = 1, inner = 1;
        for (int d = 0, s = 0; d <= c.nd; d++) {
            w.dims[d] = d == ax ? c.depth : c.dims[s++];
            if (d < ax) outer *= w.dims[d];
            else if (d > ax) inner *= w.dims[d];
        }
        uint8_t *y = malloc((size_t)(outer * c.depth * inner) * es + 1);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t d = 0; d < c.depth; d++)
                for (int64_t in = 0; in < inner; in++) {
                    int64_t k = idx[o * inner + in];
                    if (k < 0 && k >= -c.depth) k += c.depth;
                    memcpy(y + ((o * c.depth + d) * inner + in) * (int64_t)es,
                           vals + (k == d ? es : 0), es);
                }
        w.data = y;
        const void *in[2] = {ind, vals};
        char what[96];
        snprintf(what, sizeof what, "onehot case %d (axis %lld, depth %lld)", it,
                 (long long)c.axis, (long long)c.depth);
        check_runs(build_onehot, &c, in, &w, 1, what);
        free(idx);
        free(ind);
        free(vals);
        free(y);
    }
    onehot_case c = {Q8_I64, Q8_F32, 1, {3}, 0, 0, false};
    check_fails(build_onehot(&c), "depth 0: expected 1 to 1e9", "depth 0");
    c = (onehot_case){Q8_F16, Q8_F32, 1, {3}, 0, 4, false};
    check_fails(build_onehot(&c), "indices are float16", "float16 indices");
}

static q8_graph *build_isx(const void *ctx) {
    const int *form = ctx; /* 0 IsNaN, 1 IsInf, 2 IsInf negative only, 3 positive only */
    int64_t d[1] = {12};
    q8t_in in = in_spec("x", Q8_F32, 1, d, NULL);
    q8_graph *g = graph1(*form ? "IsInf" : "IsNaN", 20, &in, 1, 1);
    if (*form == 2) q8t_attr_int(g, "detect_positive", 0);
    if (*form == 3) q8t_attr_int(g, "detect_negative", 0);
    return g;
}

Test(tensor_isnan_isinf, every_form) {
    float x[12] = {0, -0.0f, 1, -1, NAN, -NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 1e-45f,
                   3};
    for (int form = 0; form < 4; form++) {
        uint8_t y[12];
        for (int i = 0; i < 12; i++)
            y[i] = form == 0 ? isnan(x[i]) != 0 /* (glibc's isinf(-inf) is -1) */
                   : form == 1 ? isinf(x[i]) != 0
                   : form == 2 ? isinf(x[i]) && x[i] < 0
                               : isinf(x[i]) && x[i] > 0;
        want w = {Q8_BOOL, 1, {12}, y};
        const void *in[1] = {x};
        check_runs(build_isx, &form, in, &w, 1, "IsNaN/IsInf");
    }
}

typedef struct eye_case {
    int64_t dims[2], k;
    int dtype;          /* ONNX code; 0: absent */
} eye_case;

static q8_graph *build_eye(const void *ctx) {
    const eye_case *c = ctx;
    q8t_in in = in_spec("x", Q8_I32, 2, c->dims, NULL);
    q8_graph *g = graph1("EyeLike", 9, &in, 1, 1);
    if (c->k) q8t_attr_int(g, "k", c->k);
    if (c->dtype) q8t_attr_int(g, "dtype", c->dtype);
    return g;
}

Test(tensor_eyelike, diagonals_and_dtypes) {
    static const eye_case cases[] = {{{3, 3}, 0, 0},  {{4, 6}, 2, 1},   {{5, 3}, -2, 7},
                                     {{3, 4}, 9, 9},  {{2, 2}, -5, 10}, {{4, 4}, 3, 11},
                                     {{1, 7}, INT64_MAX, 1}, {{3, 3}, INT64_MIN, 1}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const eye_case *c = &cases[ci];
        q8_dtype dt = c->dtype == 1 ? Q8_F32 : c->dtype == 7 ? Q8_I64 : c->dtype == 9 ? Q8_BOOL
                    : c->dtype == 10 ? Q8_F16 : c->dtype == 11 ? Q8_F64 : Q8_I32;
        size_t es = esz(dt);
        int64_t n = c->dims[0] * c->dims[1];
        uint8_t *y = calloc((size_t)n * es + 1, 1);
        uint8_t one[8] = {0};
        float f1 = 1;
        double d1 = 1;
        if (dt == Q8_F32) memcpy(one, &f1, 4);
        else if (dt == Q8_F64) memcpy(one, &d1, 8);
        else if (dt == Q8_F16) one[1] = 0x3C;
        else one[0] = 1;
        for (int64_t i = 0; i < c->dims[0]; i++)
            for (int64_t j = 0; j < c->dims[1]; j++)
                if ((__int128)j - i == c->k) memcpy(y + (i * c->dims[1] + j) * (int64_t)es, one, es);
        want w = {dt, 2, {c->dims[0], c->dims[1]}, y};
        int32_t *x = calloc((size_t)n, sizeof(int32_t));
        const void *in[1] = {x};
        char what[64];
        snprintf(what, sizeof what, "eyelike case %zu", ci);
        check_runs(build_eye, c, in, &w, 1, what);
        free(x);
        free(y);
    }
}

/* ---- ScatterElements, Scatter, ScatterND -------------------------------- */

typedef struct scat_case {
    const char *op, *reduction;     /* reduction NULL: absent */
    q8_dtype dt, idt;
    int nd, ni;                     /* data's rank; indices' rank */
    int64_t dims[Q8_MAX_DIMS], idims[Q8_MAX_DIMS], udims[Q8_MAX_DIMS], axis;
    int nu;
} scat_case;

static q8_graph *build_scatter(const void *ctx) {
    const scat_case *c = ctx;
    q8t_in ins[3] = {in_spec("data", c->dt, c->nd, c->dims, NULL),
                     in_spec("indices", c->idt, c->ni, c->idims, NULL),
                     in_spec("updates", c->dt, c->nu, c->udims, NULL)};
    q8_graph *g = graph1(c->op, 16, ins, 3, 1);
    if (strcmp(c->op, "ScatterND")) q8t_attr_int(g, "axis", c->axis);
    if (c->reduction) q8t_attr_str(g, "reduction", c->reduction);
    return g;
}

/* one element: dst (op) src, as the spec's reductions (float32, int64) */
static void scat_ref_apply(const scat_case *c, uint8_t *dst, const uint8_t *src) {
    const char *r = c->reduction ? c->reduction : "none";
    if (!strcmp(r, "none")) {
        memcpy(dst, src, esz(c->dt));
    } else if (c->dt == Q8_F32) {
        float a, b;
        memcpy(&a, dst, 4);
        memcpy(&b, src, 4);
        a = !strcmp(r, "add") ? a + b : !strcmp(r, "mul") ? a * b : !strcmp(r, "max") ? fmaxf(a, b)
                                                                                       : fminf(a, b);
        memcpy(dst, &a, 4);
    } else {
        int64_t a, b;
        memcpy(&a, dst, 8);
        memcpy(&b, src, 8);
        a = !strcmp(r, "add") ? (int64_t)((uint64_t)a + (uint64_t)b)
            : !strcmp(r, "mul") ? (int64_t)((uint64_t)a * (uint64_t)b)
            : !strcmp(r, "max") ? (a > b ? a : b) : (a < b ? a : b);
        memcpy(dst, &a, 8);
    }
}

Test(tensor_scatter, elements_and_nd_reductions_duplicates) {
    q8t_rng r = q8t_seed(241);
    static const char *reds[6] = {NULL, "none", "add", "mul", "max", "min"};
    for (int it = 0; it < 72; it++) {
        const char *ops[3] = {"ScatterElements", "Scatter", "ScatterND"};
        scat_case c = {.op = ops[it % 3], .idt = it % 2 ? Q8_I32 : Q8_I64};
        bool nd = it % 3 == 2;
        c.reduction = it % 3 == 1 ? NULL : reds[(it / 3) % 6];
        c.dt = c.reduction && strcmp(c.reduction, "none") ? ((it / 2) % 2 ? Q8_F32 : Q8_I64)
                                                          : dtypes[it % N_DTYPES];
        c.nd = 1 + (it / 4) % 3;
        rand_shape(&r, c.nd, c.dims, false, 200);
        int64_t dn = numel_of(c.dims, c.nd), un, nidx;
        if (!nd) {
            c.ni = c.nu = c.nd;
            c.axis = (int64_t)(q8t_next(&r) % (uint64_t)c.nd) - (it % 2 ? c.nd : 0);
            int ax = (int)(c.axis < 0 ? c.axis + c.nd : c.axis);
            for (int d = 0; d < c.nd; d++) /* along the axis: more updates than places too */
                c.idims[d] = 1 + (int64_t)(q8t_next(&r) % (uint64_t)(c.dims[d] + (d == ax) * 3));
            memcpy(c.udims, c.idims, sizeof c.idims);
            un = nidx = numel_of(c.idims, c.ni);
        } else {
            int k = 1 + (int)(q8t_next(&r) % (uint64_t)c.nd), lead = 1 + (int)(q8t_next(&r) % 2);
            c.ni = lead + 1;
            for (int d = 0; d < lead; d++) c.idims[d] = 1 + (int64_t)(q8t_next(&r) % 4);
            c.idims[lead] = k;
            c.nu = lead + c.nd - k;
            for (int d = 0; d < lead; d++) c.udims[d] = c.idims[d];
            for (int d = k; d < c.nd; d++) c.udims[lead + d - k] = c.dims[d];
            nidx = numel_of(c.idims, c.ni);
            un = numel_of(c.udims, c.nu);
        }
        size_t es = esz(c.dt);
        uint8_t *data = rand_bytes(&r, c.dt, dn), *upd = rand_bytes(&r, c.dt, un);
        int64_t *iv = malloc(sizeof(int64_t) * (size_t)nidx + 1);
        void *ind = malloc(sizeof(int64_t) * (size_t)nidx + 1);
        for (int64_t i = 0; i < nidx; i++) {
            int dim = nd ? (int)(i % c.idims[c.ni - 1])
                         : (int)(c.axis < 0 ? c.axis + c.nd : c.axis);
            int64_t len = c.dims[dim];
            /* in range, negative, and now and then out of range (skipped) */
            iv[i] = (int64_t)(q8t_next(&r) % (uint64_t)(2 * len + 1)) - len;
            if (q8t_next(&r) % 17 == 0) iv[i] = len + 3;
            if (c.idt == Q8_I64) ((int64_t *)ind)[i] = iv[i];
            else ((int32_t *)ind)[i] = (int32_t)iv[i];
        }
        uint8_t *y = malloc((size_t)dn * es + 1);
        memcpy(y, data, (size_t)dn * es);
        if (!nd) {
            int ax = (int)(c.axis < 0 ? c.axis + c.nd : c.axis);
            int64_t pos[Q8_MAX_DIMS];
            for (int64_t u = 0; u < un; u++) {
                unravel(u, c.udims, c.nu, pos);
                int64_t v = iv[u] < 0 ? iv[u] + c.dims[ax] : iv[u];
                if (v < 0 || v >= c.dims[ax]) continue;
                pos[ax] = v;
                scat_ref_apply(&c, y + ravel(pos, c.dims, c.nd) * (int64_t)es,
                               upd + u * (int64_t)es);
            }
        } else {
            int k = (int)c.idims[c.ni - 1];
            int64_t tuples = nidx / k, slice = un / tuples, pos[Q8_MAX_DIMS] = {0};
            for (int64_t t = 0; t < tuples; t++) {
                bool ok = true;
                for (int j = 0; j < k; j++) {
                    int64_t v = iv[t * k + j];
                    pos[j] = v < 0 ? v + c.dims[j] : v;
                    ok = ok && pos[j] >= 0 && pos[j] < c.dims[j];
                }
                if (!ok) continue;
                for (int j = k; j < c.nd; j++) pos[j] = 0;
                int64_t base = ravel(pos, c.dims, c.nd);
                for (int64_t e = 0; e < slice; e++)
                    scat_ref_apply(&c, y + (base + e) * (int64_t)es,
                                   upd + (t * slice + e) * (int64_t)es);
            }
        }
        want w = {c.dt, c.nd, {0}, y};
        memcpy(w.dims, c.dims, sizeof c.dims);
        const void *in[3] = {data, ind, upd};
        char what[96];
        snprintf(what, sizeof what, "%s case %d (%s, reduction %s)", c.op, it,
                 q8_dtype_name(c.dt), c.reduction ? c.reduction : "-");
        check_runs(build_scatter, &c, in, &w, 1, what);
        free(data);
        free(upd);
        free(iv);
        free(ind);
        free(y);
    }
}

/* An index far out of range (INT64_MAX) is skipped: no arithmetic on it. */
Test(tensor_scatter, huge_indices_skipped) {
    float data[4] = {1, 2, 3, 4}, upd[2] = {9, 8}, expect[4] = {1, 2, 3, 8};
    int64_t ind[4] = {1, INT64_MAX, 1, 1};
    scat_case c = {"ScatterND", NULL, Q8_F32, Q8_I64, 2, 2, {2, 2}, {2, 2}, {2}, 0, 1};
    want w = {Q8_F32, 2, {2, 2}, expect};
    const void *in[3] = {data, ind, upd};
    check_runs(build_scatter, &c, in, &w, 1, "ScatterND INT64_MAX");
}

Test(tensor_scatter, errors) {
    scat_case c = {"ScatterElements", "sum", Q8_F32, Q8_I64, 1, 1, {4}, {2}, {2}, 0, 1};
    check_fails(build_scatter(&c), "reduction 'sum'", "reduction");
    c = (scat_case){"ScatterND", NULL, Q8_F32, Q8_I64, 2, 2, {4, 3}, {2, 3}, {2}, 0, 1};
    check_fails(build_scatter(&c), "indices' last dim 3", "k > rank");
    c = (scat_case){"ScatterND", "add", Q8_U8, Q8_I64, 1, 2, {4}, {2, 1}, {2}, 0, 1};
    check_fails(build_scatter(&c), "reduction 'add' on uint8 data", "reduction dtype");
}

/* ---- ReverseSequence --------------------------------------------------- */

typedef struct revseq_case {
    q8_dtype dt;
    int nd;
    int64_t dims[Q8_MAX_DIMS];
    bool batch_first;
} revseq_case;

static q8_graph *build_revseq(const void *ctx) {
    const revseq_case *c = ctx;
    int64_t nb = c->dims[c->batch_first ? 0 : 1];
    q8t_in ins[2] = {in_spec("x", c->dt, c->nd, c->dims, NULL), in_spec("l", Q8_I64, 1, &nb, NULL)};
    q8_graph *g = graph1("ReverseSequence", 10, ins, 2, 1);
    if (c->batch_first) {
        q8t_attr_int(g, "batch_axis", 0);
        q8t_attr_int(g, "time_axis", 1);
    }
    return g;
}

Test(tensor_reverse_sequence, both_layouts_and_lengths) {
    q8t_rng r = q8t_seed(257);
    for (int it = 0; it < 30; it++) {
        revseq_case c = {.dt = dtypes[it % N_DTYPES], .nd = 2 + it % 3, .batch_first = it % 2};
        rand_shape(&r, c.nd, c.dims, false, 300);
        int ta = c.batch_first ? 1 : 0, ba = 1 - ta;
        int64_t T = c.dims[ta], B = c.dims[ba], n = numel_of(c.dims, c.nd), idx[Q8_MAX_DIMS];
        int64_t *len = malloc(sizeof(int64_t) * (size_t)B);
        for (int64_t b = 0; b < B; b++) /* some out of [0, T]: clamped */
            len[b] = (int64_t)(q8t_next(&r) % (uint64_t)(T + 3)) - 1;
        size_t es = esz(c.dt);
        uint8_t *x = rand_bytes(&r, c.dt, n), *y = malloc((size_t)n * es + 1);
        for (int64_t e = 0; e < n; e++) {
            unravel(e, c.dims, c.nd, idx);
            int64_t l = len[idx[ba]] < 0 ? 0 : len[idx[ba]] > T ? T : len[idx[ba]];
            if (idx[ta] < l) idx[ta] = l - 1 - idx[ta];
            memcpy(y + e * (int64_t)es, x + ravel(idx, c.dims, c.nd) * (int64_t)es, es);
        }
        want w = {c.dt, c.nd, {0}, y};
        memcpy(w.dims, c.dims, sizeof c.dims);
        const void *in[2] = {x, len};
        char what[64];
        snprintf(what, sizeof what, "reverse_sequence case %d", it);
        check_runs(build_revseq, &c, in, &w, 1, what);
        free(x);
        free(y);
        free(len);
    }
}

/* Before opset 13 Hardmax works on the input flattened at axis (default 1):
 * one 1 in each flattened row. */
static q8_graph *build_hardmax11(const void *ctx) {
    const hardmax_case *c = ctx;
    q8t_in in = in_spec("x", Q8_F32, c->nd, c->dims, NULL);
    q8_graph *g = graph1("Hardmax", 11, &in, 1, 1);
    if (c->has_axis) q8t_attr_int(g, "axis", c->axis);
    return g;
}

Test(tensor_hardmax, opset11_flattens_at_axis) {
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)((i * 7) % 24); /* distinct */
    for (int form = 0; form < 2; form++) { /* default axis 1, then axis 2 */
        hardmax_case c = {4, {2, 3, 2, 2}, 2, form == 1};
        int64_t rows = 2, len = form ? 4 : 12;
        if (form) rows = 6;
        float y[24] = {0};
        for (int64_t r = 0; r < rows; r++) {
            int64_t best = 0;
            for (int64_t l = 1; l < len; l++)
                if (x[r * len + l] > x[r * len + best]) best = l;
            y[r * len + best] = 1;
        }
        want w = {Q8_F32, 4, {2, 3, 2, 2}, y};
        const void *in[1] = {x};
        check_runs(build_hardmax11, &c, in, &w, 1, form ? "Hardmax 11 axis 2" : "Hardmax 11");
    }
}

/* ---- TfIdfVectorizer ---------------------------------------------------- */

typedef struct tfidf_case {
    bool i64, rank1, weights;
    const char *mode;
    int64_t rows, cols, min_n, max_n, skip;
    int n_pool, n_counts, n_idx;
    int64_t pool[40], counts[3], idx[20];
    float w[32];
} tfidf_case;

static q8_graph *build_tfidf(const void *ctx) {
    const tfidf_case *c = ctx;
    int64_t dims[2] = {c->rows, c->cols};
    q8t_in ins[1] = {in_spec("x", c->i64 ? Q8_I64 : Q8_I32, c->rank1 ? 1 : 2,
                             c->rank1 ? dims + 1 : dims, NULL)};
    q8_graph *g = graph1("TfIdfVectorizer", 9, ins, 1, 1);
    q8t_attr_str(g, "mode", c->mode);
    q8t_attr_int(g, "min_gram_length", c->min_n);
    q8t_attr_int(g, "max_gram_length", c->max_n);
    q8t_attr_int(g, "max_skip_count", c->skip);
    q8t_attr_ints(g, "pool_int64s", c->pool, c->n_pool);
    q8t_attr_ints(g, "ngram_counts", c->counts, c->n_counts);
    q8t_attr_ints(g, "ngram_indexes", c->idx, c->n_idx);
    if (c->weights) q8t_attr_floats(g, "weights", c->w, 32);
    return g;
}

/* The reference, by brute force: every (skip, start, size) candidate is
 * compared with every pool n-gram of a counted size; the last equal one
 * gives the column. */
static void tfidf_ref(const tfidf_case *c, const int64_t *x, float *y, int64_t out) {
    for (int64_t r = 0; r < c->rows; r++) {
        float *yr = y + r * out;
        for (int64_t k = 0; k < out; k++) yr[k] = 0;
        for (int64_t s = 1; s <= c->skip + 1; s++)
            for (int64_t start = 0; start < c->cols; start++)
                for (int64_t n = c->min_n; n <= c->max_n; n++) {
                    if (n == 1 && s > 1) continue;
                    if (start + (n - 1) * s >= c->cols) continue;
                    int64_t col = -1, id = 0;
                    for (int i = 0; i < c->n_counts; i++) {
                        int64_t b = c->counts[i], e = i + 1 < c->n_counts ? c->counts[i + 1] : c->n_pool;
                        for (int64_t j = b; j + i + 1 <= e; j += i + 1, id++) {
                            if (i + 1 != n) continue;
                            bool eq = true;
                            for (int64_t t = 0; t < n; t++)
                                eq = eq && c->pool[j + t] == x[r * c->cols + start + t * s];
                            if (eq) col = c->idx[id];
                        }
                    }
                    if (col >= 0) yr[col] += 1;
                }
        for (int64_t k = 0; k < out; k++) {
            float f = yr[k], w = c->weights ? c->w[k] : 1;
            yr[k] = !strcmp(c->mode, "TF") ? f : !strcmp(c->mode, "IDF") ? (f > 0 ? w : 0) : w * f;
        }
    }
}

Test(tensor_tfidf, random_pools_skips_modes) {
    q8t_rng r = q8t_seed(277);
    static const char *const modes[3] = {"TF", "IDF", "TFIDF"};
    for (int it = 0; it < 60; it++) {
        tfidf_case c = {.i64 = it % 2, .rank1 = it % 5 == 0, .weights = (it / 3) % 2,
                        .mode = modes[it % 3], .n_counts = 3};
        c.rows = c.rank1 ? 1 : 1 + (int64_t)(q8t_next(&r) % 3);
        c.cols = 1 + (int64_t)(q8t_next(&r) % 12);
        c.min_n = 1 + (int64_t)(q8t_next(&r) % 3);
        c.max_n = c.min_n + (int64_t)(q8t_next(&r) % (4 - (uint64_t)c.min_n));
        c.skip = (int64_t)(q8t_next(&r) % 4);
        /* 1-grams, 2-grams, 3-grams over tokens 0..4 (repeats likely) */
        int64_t per[3] = {1 + (int64_t)(q8t_next(&r) % 5), (int64_t)(q8t_next(&r) % 6),
                          (int64_t)(q8t_next(&r) % 5)};
        c.counts[0] = 0;
        c.counts[1] = per[0];
        c.counts[2] = per[0] + 2 * per[1];
        c.n_pool = (int)(c.counts[2] + 3 * per[2]);
        for (int i = 0; i < c.n_pool; i++) c.pool[i] = (int64_t)(q8t_next(&r) % 5);
        c.n_idx = (int)(per[0] + per[1] + per[2]);
        for (int i = 0; i < c.n_idx; i++) c.idx[i] = (int64_t)(q8t_next(&r) % 9);
        c.idx[0] = 8; /* output_size 9 */
        for (int i = 0; i < 32; i++) c.w[i] = (float)(q8t_next(&r) % 50) / 10.0f;
        int64_t n = c.rows * c.cols, out = 9;
        int64_t *x = malloc(sizeof(int64_t) * (size_t)n);
        int32_t *x32 = malloc(sizeof(int32_t) * (size_t)n);
        for (int64_t i = 0; i < n; i++) x[i] = (int64_t)(q8t_next(&r) % 5), x32[i] = (int32_t)x[i];
        float *yw = malloc(sizeof(float) * (size_t)(c.rows * out));
        tfidf_ref(&c, x, yw, out);
        want w[1] = {{Q8_F32, c.rank1 ? 1 : 2, {0}, yw}};
        if (c.rank1) w[0].dims[0] = out;
        else w[0].dims[0] = c.rows, w[0].dims[1] = out;
        const void *in[1] = {c.i64 ? (const void *)x : x32};
        char what[96];
        snprintf(what, sizeof what, "tfidf case %d (%s, n %lld..%lld, skip %lld)", it, c.mode,
                 (long long)c.min_n, (long long)c.max_n, (long long)c.skip);
        check_runs(build_tfidf, &c, in, w, 1, what);
        free(x);
        free(x32);
        free(yw);
    }
}

Test(tensor_tfidf, errors) {
    tfidf_case c = {.mode = "BM25", .rows = 1, .cols = 4, .min_n = 1, .max_n = 1, .n_pool = 2,
                    .n_counts = 1, .n_idx = 2, .pool = {1, 2}, .counts = {0}, .idx = {0, 1}};
    check_fails(build_tfidf(&c), "mode 'BM25': expected TF, IDF or TFIDF", "mode");
    c.mode = "TF";
    c.n_idx = 1;
    check_fails(build_tfidf(&c), "ngram_indexes has 1 values, the pool 2 n-grams", "short indexes");
    c.n_idx = 2;
    c.counts[0] = 3;
    check_fails(build_tfidf(&c), "offsets must rise within the pool", "bad counts");
    c.counts[0] = 0;
    c.min_n = 2;
    check_fails(build_tfidf(&c), "expected 1 <= min <= max", "min > max");
}

/* Attributes far beyond the pool and the row: nothing to count, no wrap,
 * no long loop (a min_gram_length of 2^31 once became INT_MIN; a skip count
 * of INT64_MAX overflowed; 1-grams with a huge skip count looped cols^2). */
Test(tensor_tfidf, huge_lengths_and_skips) {
    int64_t x[6] = {1, 2, 3, 4, 1, 2};
    float zero[3] = {0, 0, 0}, ones[3] = {2, 2, 1};
    tfidf_case c = {.i64 = true, .rank1 = true, .mode = "TF", .rows = 1, .cols = 6,
                    .min_n = (int64_t)1 << 31, .max_n = (int64_t)1 << 32, .skip = INT64_MAX,
                    .n_pool = 3, .n_counts = 1, .n_idx = 3, .pool = {1, 2, 4},
                    .counts = {0}, .idx = {0, 1, 2}};
    const void *in[1] = {x};
    want w[1] = {{Q8_F32, 1, {3}, zero}};
    check_runs(build_tfidf, &c, in, w, 1, "min_gram_length 2^31");
    c.min_n = 1;
    w[0].data = ones;
    check_runs(build_tfidf, &c, in, w, 1, "1-grams, skip count INT64_MAX");
}
