/* Memory plan: no two tensors alive at the same time share bytes (unless
 * they alias by design: views, in-place, a Concat's inputs inside its
 * output), every read finds its tensor's values, and the peak matches hand
 * counts on small graphs. */
#include <string.h>

#include "model.h"
#include "ops/concat.h"
#include "passes.h"
#include "planner.h"
#include "q8_tools.h"
#include "testutil.h"

/* Check the plan against the graph: every live tensor has an offset with
 * its bytes inside the arena; tensors of different buffers whose lifetimes
 * overlap do not overlap in memory; scratch likewise. */
static void check_plan(const q8_graph *g, const q8_plan *p) {
    for (int a = 0; a < g->n_tensors; a++) {
        if (p->buffer[a] < 0) continue;
        const q8_tensor *ta = g->tensors[a];
        size_t sa = q8_tensor_nbytes(ta), oa = p->offset[a];
        cr_assert(oa % Q8_ALIGN == 0, "tensor %s misaligned", ta->name);
        cr_assert(oa + sa <= p->arena_bytes, "tensor %s past the arena", ta->name);
        for (int b = a + 1; b < g->n_tensors; b++) {
            if (p->buffer[b] < 0 || p->buffer[b] == p->buffer[a]) continue;
            int ba = p->buffer[a], bb = p->buffer[b];
            bool time = !(p->last[ba] < p->first[bb] || p->last[bb] < p->first[ba]);
            size_t sb = q8_tensor_nbytes(g->tensors[b]), ob = p->offset[b];
            bool mem = sa && sb && oa < ob + sb && ob < oa + sa;
            cr_assert(!(time && mem), "tensors %s and %s overlap while both alive", ta->name,
                      g->tensors[b]->name);
        }
    }
}

static void check_plan_values(const q8_graph *g, const q8_plan *p);

/* g's plan, no passes but sorting and shapes, checked both ways. */
static void plan_checked(q8_graph *g, q8_plan *p) {
    q8_error err = {0};
    cr_assert_eq(q8_graph_toposort(g, &err), Q8_OK);
    cr_assert_eq(q8_pass_infer(g, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_plan_build(g, NULL, NULL, p, &err), Q8_OK);
    check_plan(g, p);
    check_plan_values(g, p);
}

/* x -> Relu -> Relu -> ... -> y, each 1000 floats. */
static q8_graph *relu_chain(int len) {
    q8_graph *g = q8_graph_new();
    int64_t dims[1] = {1000};
    int prev = q8_graph_add_tensor(g, "x", NULL);
    q8_tensor_set_shape(g->tensors[prev], Q8_F32, dims, 1);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = prev;
    for (int i = 0; i < len; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "t%d", i);
        int t = q8_graph_add_tensor(g, nm, NULL);
        int ni = q8_graph_add_node(g, nm, "Relu");
        q8_node_set_io(g->nodes[ni], &prev, 1, &t, 1, NULL);
        prev = t;
    }
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = prev;
    return g;
}

Test(planner, inplace_chain_uses_two_buffers) {
    q8_graph *g = relu_chain(6);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_plan p;
    cr_assert_eq(q8_plan_build(g, NULL, NULL, &p, &err), Q8_OK);
    check_plan(g, &p);
    /* The input is never overwritten (it may be reused across runs); every
     * Relu after the first runs in place: 2 x 4000 bytes (64-aligned). */
    cr_assert_eq(p.arena_bytes, 2 * 4032, "arena %zu", p.arena_bytes);
    q8_plan_free(&p);
    q8_graph_free(g);
}

Test(planner, views_alias_their_source) {
    /* x -> Relu -> a -> Identity -> b (output): b is a view of a. */
    q8_graph *g = relu_chain(1);
    int a = g->outputs[0];
    int b = q8_graph_add_tensor(g, "b", NULL);
    int ni = q8_graph_add_node(g, "id", "Identity");
    q8_node_set_io(g->nodes[ni], &a, 1, &b, 1, NULL);
    g->outputs[0] = b;
    q8_plan p;
    plan_checked(g, &p);
    cr_assert_eq(p.buffer[a], p.buffer[b]);
    cr_assert_eq(p.offset[a], p.offset[b]);
    q8_plan_free(&p);
    q8_graph_free(g);
}

/* Scratch of 1 MB on every node must not overlap live activations. */
static size_t big_scratch(const q8_graph *g, int i, void *ctx) {
    return 1 << 20;
}

Test(planner, scratch_is_planned_without_overlap) {
    q8_graph *g = relu_chain(4);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_plan p;
    cr_assert_eq(q8_plan_build(g, big_scratch, NULL, &p, &err), Q8_OK);
    check_plan(g, &p);
    for (int i = 0; i < g->n_nodes; i++) {
        cr_assert_eq(p.scratch_bytes[i], 1u << 20);
        size_t so = p.scratch_offset[i], se = so + (1 << 20);
        for (int t = 0; t < g->n_tensors; t++) {
            if (p.buffer[t] < 0) continue;
            int b = p.buffer[t];
            if (p.last[b] < i + 1 || p.first[b] > i + 1) continue;
            size_t to = p.offset[t], te = to + q8_tensor_nbytes(g->tensors[t]);
            cr_assert(se <= to || te <= so, "scratch of node %d overlaps %s", i, g->tensors[t]->name);
        }
    }
    /* Peak: 1 MB scratch + the two activation buffers. */
    cr_assert_eq(p.arena_bytes, (1 << 20) + 2 * 4032, "arena %zu", p.arena_bytes);
    q8_plan_free(&p);
    q8_graph_free(g);
}

Test(planner, session_reports_the_planned_arena) {
    q8_graph *g = relu_chain(3);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "chain", &m, &err), Q8_OK);
    q8_session *s;
    q8_session_options o = {.n_threads = 1};
    cr_assert_eq(q8_session_create(m, &o, &s, &err), Q8_OK, "%s", err.msg);
    q8_memory_info mi;
    q8_session_memory(s, &mi);
    cr_assert_eq(mi.arena_bytes, 2 * 4032);
    cr_assert_eq(mi.weights_bytes, 0);
    q8_session_free(s);
    q8_model_free(m);
}

/* Scratch on every node but the first: free space appears where the input
 * was once its only reader is done. */
static size_t later_scratch(const q8_graph *g, int i, void *ctx) {
    return i == 0 ? 0 : 1 << 20;
}

/* Inputs are set once and must survive repeated runs: no other tensor may
 * reuse their bytes, even after their last reader (a reuse made q8run
 * --bench compute on garbage from its second run on). */
Test(planner, graph_inputs_are_never_reused) {
    q8_graph *g = relu_chain(5);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_plan p;
    /* per-node scratch appears after the input's last reader: it must not
     * land on the input */
    cr_assert_eq(q8_plan_build(g, later_scratch, NULL, &p, &err), Q8_OK);
    int x = g->inputs[0];
    size_t xo = p.offset[x], xe = xo + q8_tensor_nbytes(g->tensors[x]);
    for (int t = 0; t < g->n_tensors; t++) {
        if (t == x || p.buffer[t] < 0 || p.buffer[t] == p.buffer[x]) continue;
        size_t o = p.offset[t], e = o + q8_tensor_nbytes(g->tensors[t]);
        cr_assert(e <= xo || xe <= o, "tensor %s reuses the input's bytes", g->tensors[t]->name);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        size_t o = p.scratch_offset[i], e = o + p.scratch_bytes[i];
        cr_assert(e <= xo || xe <= o, "node %d's scratch reuses the input's bytes", i);
    }
    q8_plan_free(&p);
    q8_graph_free(g);
}

Test(planner, repeated_runs_without_new_inputs_agree) {
    q8_error err = {0};
    q8_input_shape sh = {.name = NULL, .ndim = 4, .dims = {1, 1, 28, 28}};
    q8_load_options lo = {.input_shapes = &sh, .n_input_shapes = 1};
    q8_model *m;
    cr_assert_eq(q8_model_open(Q8_SOURCE_DIR "/models/mnist/cnn.onnx", &lo, &m, &err), Q8_OK, "%s", err.msg);
    q8_session *s;
    q8_session_options so = {.n_threads = 2};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    float x[784];
    q8t_rng r = q8t_seed(2);
    q8t_fill(&r, x, 784, -0.4f, 2.8f);
    cr_assert_eq(q8_session_set_input(s, NULL, Q8_F32, sh.dims, 4, x, &err), Q8_OK, "%s", err.msg);
    float first[10];
    for (int run = 0; run < 3; run++) {
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
        q8_tensor_info info;
        const float *y;
        q8_session_output(s, 0, &info, (const void **)&y, NULL);
        if (run == 0) memcpy(first, y, sizeof first);
        else cr_assert_eq(memcmp(first, y, sizeof first), 0, "run %d differs from run 0", run);
    }
    q8_session_free(s);
    q8_model_free(m);
}

/* ---- Concat inputs planned inside the Concat's output ----------------------- */

/* Byte k of tensor t is a copy of byte *ob of tensor (the return): through
 * views to their source and through a Concat (nothing before its axis) to
 * the input holding it. */
static int value_origin(const q8_graph *g, int t, size_t k, size_t *ob) {
    for (;;) {
        int pi = g->tensors[t]->producer;
        const q8_node *n = pi >= 0 ? g->nodes[pi] : NULL;
        if (n && (q8_op_flags(n->op) & Q8_OPF_VIEW) && n->inputs[0] >= 0 &&
            !g->tensors[n->inputs[0]]->data) {
            t = n->inputs[0];
            continue;
        }
        if (n && n->op == Q8_OP_CONCAT) {
            const q8_tensor *y = g->tensors[t];
            int axis = ((const q8_concat_params *)n->params)->axis;
            int64_t outer = 1;
            for (int d = 0; d < axis; d++) outer *= y->dims[d];
            if (outer == 1) {
                size_t at = 0;
                int j = 0;
                for (; j < n->n_inputs; j++) {
                    size_t nb = q8_tensor_nbytes(g->tensors[n->inputs[j]]);
                    if (k < at + nb) break;
                    at += nb;
                }
                if (!g->tensors[n->inputs[j]]->data) {
                    t = n->inputs[j];
                    k -= at;
                    continue;
                }
            }
        }
        *ob = k;
        return t;
    }
}

/* Runs the plan over the arena byte by byte: each node's scratch and
 * outputs take their bytes; every read (and the graph outputs at the end)
 * must find bytes that hold its tensor's values: written as that tensor, a
 * view of it, or a Concat of it. Catches any byte overwritten while still
 * needed, whatever the planner's rules. */
static void check_plan_values(const q8_graph *g, const q8_plan *p) {
    int *owner = malloc(sizeof(int) * (p->arena_bytes + 1));
    for (size_t a = 0; a < p->arena_bytes; a++) owner[a] = -1;
#define CPV_WRITE(T)                                                                  \
    for (size_t a_ = p->offset[T]; a_ < p->offset[T] + q8_tensor_nbytes(g->tensors[T]); a_++) \
        owner[a_] = (T);
#define CPV_READ(T, WHEN)                                                             \
    for (size_t a_ = p->offset[T]; a_ < p->offset[T] + q8_tensor_nbytes(g->tensors[T]); a_++) { \
        int o_ = owner[a_];                                                           \
        size_t kw_, kh_;                                                              \
        cr_assert(o_ >= 0, "%s: tensor %s byte %zu was overwritten by scratch or never "  \
                  "written", WHEN, g->tensors[T]->name, a_ - p->offset[T]);            \
        int w_ = value_origin(g, T, a_ - p->offset[T], &kw_);                          \
        int h_ = value_origin(g, o_, a_ - p->offset[o_], &kh_);                         \
        cr_assert(w_ == h_ && kw_ == kh_, "%s: tensor %s byte %zu holds %s's", WHEN,  \
                  g->tensors[T]->name, a_ - p->offset[T], g->tensors[o_]->name);       \
    }
    for (int i = 0; i < g->n_inputs; i++) CPV_WRITE(g->inputs[i]);
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        /* an output may share bytes with an input only by design: a view,
         * an elementwise op over exactly its input, a Concat's input at its
         * slice */
        for (int j = 0; j < n->n_inputs; j++) {
            int t = n->inputs[j];
            if (t < 0 || g->tensors[t]->data || p->buffer[t] < 0) continue;
            size_t ts = p->offset[t], te = ts + q8_tensor_nbytes(g->tensors[t]);
            for (int k = 0; k < n->n_outputs; k++) {
                int o = n->outputs[k];
                if (o < 0 || p->buffer[o] < 0) continue;
                size_t os = p->offset[o], oe = os + q8_tensor_nbytes(g->tensors[o]);
                if (!(ts < oe && os < te)) continue;
                bool ok = (q8_op_flags(n->op) & Q8_OPF_VIEW) ||
                          ((q8_op_flags(n->op) & Q8_OPF_INPLACE) && ts == os && te == oe);
                /* a Concat's input inside the output (its own slice, or
                 * inside an earlier join's): no slice the Concat copies
                 * into may overlap it */
                if (n->op == Q8_OP_CONCAT && !ok) {
                    ok = true;
                    size_t at = os;
                    for (int k = 0; k < n->n_inputs; k++) {
                        int u = n->inputs[k];
                        size_t nb = q8_tensor_nbytes(g->tensors[u]);
                        bool copied = g->tensors[u]->data || p->offset[u] != at;
                        if (copied && at < te && ts < at + nb) ok = false;
                        at += nb;
                    }
                }
                cr_assert(ok, "%s (%s): output %s [%zu, %zu) overlaps input %s [%zu, %zu)",
                          n->name, n->op_type, g->tensors[o]->name, os, oe, g->tensors[t]->name,
                          ts, te);
            }
        }
        if (p->scratch_bytes[i])
            for (size_t a = p->scratch_offset[i]; a < p->scratch_offset[i] + p->scratch_bytes[i]; a++)
                owner[a] = -2;
        for (int j = 0; j < n->n_inputs; j++) {
            int t = n->inputs[j];
            if (t < 0 || g->tensors[t]->data) continue;
            CPV_READ(t, n->name);
        }
        for (int j = 0; j < n->n_outputs; j++)
            if (n->outputs[j] >= 0) CPV_WRITE(n->outputs[j]);
    }
    for (int i = 0; i < g->n_outputs; i++)
        if (!g->tensors[g->outputs[i]]->data) CPV_READ(g->outputs[i], "the end");
#undef CPV_WRITE
#undef CPV_READ
    free(owner);
}

/* A random graph of float [1, C, 2, 8] maps (64 bytes a channel: every
 * slice aligned): graph inputs of 1-6 channels, Relu (in place where it
 * can), Add of two of the same channels, Mul by 0.5, Concat of 1-4 earlier
 * maps (repeats, joins of joins, a map in two joins), some maps graph
 * outputs. vals (NULL: not computed) gets every tensor's values by plain
 * loops, for the outputs' reference; chans each tensor's channel count. */
enum { RG_MAX = 48, RG_HW = 16 };
typedef struct rgraph {
    q8_graph *g;
    int n, chans[RG_MAX], tid[RG_MAX];
    float *vals[RG_MAX];
    int n_out, outs[RG_MAX];
} rgraph;

static void rg_add(rgraph *r, const char *op, const int *in, int n_in, int c) {
    char nm[16];
    snprintf(nm, sizeof nm, "t%d", r->n);
    int t = q8_graph_add_tensor(r->g, nm, NULL);
    int ins[8];
    for (int k = 0; k < n_in; k++) ins[k] = r->tid[in[k]];
    int ni = q8_graph_add_node(r->g, nm, op);
    q8_node_set_io(r->g->nodes[ni], ins, n_in, &t, 1, NULL);
    if (!strcmp(op, "Concat")) q8_node_set_attr(r->g->nodes[ni], "axis", Q8_ATTR_INT)->i = 1;
    float *v = malloc(sizeof(float) * (size_t)(c * RG_HW));
    const float *a = r->vals[in[0]], *b = n_in > 1 ? r->vals[in[1]] : NULL;
    if (!strcmp(op, "Relu"))
        for (int i = 0; i < c * RG_HW; i++) v[i] = a[i] < 0 ? 0.0f : a[i];
    else if (!strcmp(op, "Add"))
        for (int i = 0; i < c * RG_HW; i++) v[i] = a[i] + b[i];
    else if (!strcmp(op, "Mul"))
        for (int i = 0; i < c * RG_HW; i++) v[i] = a[i] * 0.5f;
    else
        for (int k = 0, at = 0; k < n_in; k++) {
            memcpy(v + at, r->vals[in[k]], sizeof(float) * (size_t)(r->chans[in[k]] * RG_HW));
            at += r->chans[in[k]] * RG_HW;
        }
    r->vals[r->n] = v;
    r->chans[r->n] = c;
    r->tid[r->n++] = t;
}

static void rgraph_build(rgraph *r, uint64_t seed, int n_inputs, const float *const *xs) {
    q8t_rng rng = q8t_seed(seed);
    memset(r, 0, sizeof *r);
    r->g = q8_graph_new();
    r->g->opset = 13;
    r->g->inputs = malloc(sizeof(int) * (size_t)n_inputs);
    int half = q8_graph_add_tensor(r->g, "half", NULL);
    int64_t one = 1;
    q8_tensor_set_shape(r->g->tensors[half], Q8_F32, &one, 0);
    float *hv = q8_aligned_alloc(sizeof(float));
    *hv = 0.5f;
    r->g->tensors[half]->data = hv;
    r->g->tensors[half]->owns_data = true;
    for (int i = 0; i < n_inputs; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", i);
        int t = q8_graph_add_tensor(r->g, nm, NULL);
        int c = 1 + (int)(q8t_next(&rng) % 6);
        int64_t d[4] = {1, c, 2, 8};
        q8_tensor_set_shape(r->g->tensors[t], Q8_F32, d, 4);
        r->g->inputs[r->g->n_inputs++] = t;
        r->vals[r->n] = malloc(sizeof(float) * (size_t)(c * RG_HW));
        memcpy(r->vals[r->n], xs[i], sizeof(float) * (size_t)(c * RG_HW));
        r->chans[r->n] = c;
        r->tid[r->n++] = t;
    }
    while (r->n < RG_MAX - 1) {
        int kind = (int)(q8t_next(&rng) % 8);
        /* operands biased to recent maps */
        int a = r->n - 1 - (int)(q8t_next(&rng) % (uint64_t)(r->n < 6 ? r->n : 6));
        if (kind < 2) {
            rg_add(r, "Relu", &a, 1, r->chans[a]);
        } else if (kind == 2) {
            int b = -1;
            for (int k = r->n - 1; k >= 0 && b < 0; k--)
                if (k != a && r->chans[k] == r->chans[a] && q8t_next(&rng) % 2) b = k;
            int in[2] = {a, b < 0 ? a : b};
            rg_add(r, "Add", in, 2, r->chans[a]);
        } else if (kind == 3) {
            int in[2] = {a, -1};
            rg_add(r, "Mul", in, 1, r->chans[a]);
            q8_node *m = r->g->nodes[r->g->n_nodes - 1];
            int io[2] = {m->inputs[0], half};
            q8_node_set_io(m, io, 2, m->outputs, 1, NULL);
        } else {
            int k = 1 + (int)(q8t_next(&rng) % 4), in[4], c = 0;
            for (int j = 0; j < k; j++) {
                in[j] = j == 0 ? a : (int)(q8t_next(&rng) % (uint64_t)r->n);
                c += r->chans[in[j]];
            }
            if (c > 64) continue;
            rg_add(r, "Concat", in, k, c);
        }
    }
    r->g->outputs = malloc(sizeof(int) * 4);
    r->outs[r->n_out++] = r->n - 1;
    for (int k = 0; k < 2; k++) r->outs[r->n_out++] = (int)(q8t_next(&rng) % (uint64_t)r->n);
    for (int k = 0; k < r->n_out; k++) r->g->outputs[r->g->n_outputs++] = r->tid[r->outs[k]];
}

static void rgraph_free_vals(rgraph *r) {
    for (int k = 0; k < r->n; k++) free(r->vals[k]);
}

/* 60 random graphs: the plan keeps every value until its last read, and a
 * session computes what plain loops do (both thread counts). */
Test(planner, random_joins_keep_every_value) {
    float xs[4][6 * RG_HW];
    const float *xp[4] = {xs[0], xs[1], xs[2], xs[3]};
    q8t_rng r0 = q8t_seed(5);
    for (int i = 0; i < 4; i++) q8t_fill(&r0, xs[i], 6 * RG_HW, -2, 2);
    int in_place = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        rgraph r;
        rgraph_build(&r, seed, 1 + (int)(seed % 4), xp);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(r.g, NULL, &err), Q8_OK, "seed %llu: %s",
                     (unsigned long long)seed, err.msg);
        q8_plan p;
        cr_assert_eq(q8_plan_build(r.g, NULL, NULL, &p, &err), Q8_OK);
        check_plan(r.g, &p);
        check_plan_values(r.g, &p);
        for (int i = 0; i < r.g->n_nodes; i++) {
            const q8_node *n = r.g->nodes[i];
            if (n->op != Q8_OP_CONCAT) continue;
            for (int j = 0; j < n->n_inputs; j++)
                in_place += p.buffer[n->inputs[j]] == p.buffer[n->outputs[0]];
        }
        q8_plan_free(&p);
        q8_graph_free(r.g);
        for (int threads = 1; threads <= 2; threads++) {
            rgraph s;
            rgraph_build(&s, seed, 1 + (int)(seed % 4), xp);
            void *got[4];
            q8_tensor_info gi[4];
            int n_out = s.n_out;
            cr_assert_eq(q8t_run(s.g, (const void *const *)xp, threads, got, gi, n_out, &err),
                         Q8_OK, "seed %llu: %s", (unsigned long long)seed, err.msg);
            for (int k = 0; k < n_out; k++) {
                cr_assert(!memcmp(got[k], s.vals[s.outs[k]],
                                  sizeof(float) * (size_t)(s.chans[s.outs[k]] * RG_HW)),
                          "seed %llu output %d differs", (unsigned long long)seed, k);
                free(got[k]);
            }
            rgraph_free_vals(&s);
        }
        rgraph_free_vals(&r);
    }
    cr_assert_gt(in_place, 100, "only %d Concat inputs planned in place", in_place);
}

/* A node op(in) -> out (g->nodes read after the add: it may move them). */
static q8_node *add_node(q8_graph *g, const char *name, const char *op, const int *in, int n_in,
                         int out) {
    int ni = q8_graph_add_node(g, name, op);
    q8_node_set_io(g->nodes[ni], in, n_in, &out, 1, NULL);
    return g->nodes[ni];
}

/* Joins against the in-place rule (a review's cases): an elementwise op
 * whose output is a slice of a later join, or whose broadcast operand is a
 * slice of the join it would overwrite, does not take over its input's
 * buffer; the plan keeps every value (variants: x first or second in X;
 * the broadcast Mul). */
Test(planner, joins_and_in_place_ops_do_not_collide) {
    for (int variant = 0; variant < 3; variant++) {
        q8_graph *g = q8_graph_new();
        g->opset = 13;
        int64_t dx[4] = {1, 3, 2, 8}, dp[4] = {1, 1, 2, 8};
        int in1 = q8t_tensor(g, "in1"), in2 = q8t_tensor(g, "in2");
        q8_tensor_set_shape(g->tensors[in1], Q8_F32, variant == 2 ? dp : dx, 4);
        q8_tensor_set_shape(g->tensors[in2], Q8_F32, dp, 4);
        g->inputs = malloc(sizeof(int) * 2);
        g->inputs[g->n_inputs++] = in1;
        g->inputs[g->n_inputs++] = in2;
        int x = q8t_tensor(g, "x"), pp = q8t_tensor(g, "p"), X = q8t_tensor(g, "X");
        add_node(g, "x", "Relu", &in1, 1, x);
        add_node(g, "p", "Relu", &in2, 1, pp);
        int xp[2] = {variant == 1 ? pp : x, variant == 1 ? x : pp};
        q8_node_set_attr(add_node(g, "X", "Concat", xp, 2, X), "axis", Q8_ATTR_INT)->i = 1;
        g->outputs = malloc(sizeof(int));
        if (variant < 2) {
            /* q = mean of X over channels (X's last read: |q| = |p|); o =
             * Relu(x) (x's last read); Y = Concat(o, q) */
            int q = q8t_tensor(g, "q"), o = q8t_tensor(g, "o"), Y = q8t_tensor(g, "Y");
            q8_attr *axes = q8_node_set_attr(add_node(g, "q", "ReduceMean", &X, 1, q), "axes",
                                             Q8_ATTR_INTS);
            axes->ints = malloc(sizeof(int64_t));
            axes->ints[0] = 1;
            axes->n = 1;
            add_node(g, "o", "Relu", &x, 1, o);
            int oq[2] = {o, q};
            q8_node_set_attr(add_node(g, "Y", "Concat", oq, 2, Y), "axis", Q8_ATTR_INT)->i = 1;
            g->outputs[g->n_outputs++] = Y;
        } else {
            /* Mul(X, x): x, one channel, broadcast over X's two */
            int m = q8t_tensor(g, "m"), xm[2] = {X, x};
            add_node(g, "m", "Mul", xm, 2, m);
            g->outputs[g->n_outputs++] = m;
        }
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_plan p;
        cr_assert_eq(q8_plan_build(g, NULL, NULL, &p, &err), Q8_OK);
        check_plan(g, &p);
        check_plan_values(g, &p);
        q8_plan_free(&p);
        q8_graph_free(g);
    }
}

/* torchvision's DenseNet: each layer joins the block's input and every
 * feature map so far again, and reads the join (its BatchNormalization)
 * once. Every feature map is written where the last join holds it; the
 * joins copy nothing. A graph input, a misaligned slice and joins along an
 * axis with something before it stay copies. */
Test(planner, densenet_joins_are_written_in_place) {
    q8_graph *g = q8_graph_new();
    g->opset = 13;
    int64_t d[4] = {1, 4, 2, 8}, df[4] = {1, 2, 2, 8};
    int x = q8t_tensor(g, "x"), f0 = q8t_tensor(g, "f0");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, d, 4);
    q8_tensor_set_shape(g->tensors[f0], Q8_F32, df, 4);
    g->inputs = malloc(sizeof(int) * 2);
    g->inputs[g->n_inputs++] = x;
    g->inputs[g->n_inputs++] = f0;
    /* a = Relu(x); f_i = Relu(f0 + i) stand for the layers' convs */
    int a = q8t_tensor(g, "a");
    add_node(g, "a", "Relu", &x, 1, a);
    int feats[5] = {a}, joins[4], reads[4];
    for (int i = 1; i <= 4; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "f%d", 10 + i);
        int prev = i == 1 ? f0 : feats[i - 1], ins2[2] = {prev, prev};
        feats[i] = q8t_tensor(g, nm);
        add_node(g, nm, "Add", ins2, 2, feats[i]);
        snprintf(nm, sizeof nm, "join%d", i);
        joins[i - 1] = q8t_tensor(g, nm);
        q8_node_set_attr(add_node(g, nm, "Concat", feats, i + 1, joins[i - 1]), "axis",
                         Q8_ATTR_INT)->i = 1;
        snprintf(nm, sizeof nm, "bn%d", i);
        reads[i - 1] = q8t_tensor(g, nm);
        add_node(g, nm, "Relu", &joins[i - 1], 1, reads[i - 1]);
    }
    g->outputs = malloc(sizeof(int) * 4);
    for (int i = 0; i < 4; i++) g->outputs[g->n_outputs++] = reads[i];
    q8_plan p;
    plan_checked(g, &p);
    size_t at = p.offset[joins[3]];
    for (int i = 0; i <= 4; i++) {
        cr_assert_eq(p.offset[feats[i]], at, "feature map %d is not in the last join", i);
        at += q8_tensor_nbytes(g->tensors[feats[i]]);
    }
    for (int i = 0; i < 3; i++)
        cr_assert_eq(p.offset[joins[i]], p.offset[joins[3]], "join %d is not in the last", i);
    q8_plan_free(&p);
    q8_graph_free(g);

    /* copies: a graph input; a slice at 12 bytes; N = 2 */
    static const struct {
        int64_t n, h, w;
        bool input;
    } cases[] = {{1, 2, 8, true}, {1, 1, 3, false}, {2, 2, 8, false}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        g = q8_graph_new();
        g->opset = 13;
        int64_t dx[4] = {cases[k].n, 1, cases[k].h, cases[k].w};
        x = q8t_tensor(g, "x");
        q8_tensor_set_shape(g->tensors[x], Q8_F32, dx, 4);
        g->inputs = malloc(sizeof(int));
        g->inputs[g->n_inputs++] = x;
        int r1 = q8t_tensor(g, "r1"), r2 = q8t_tensor(g, "r2"), y = q8t_tensor(g, "y");
        add_node(g, "r1", "Relu", &x, 1, r1);
        add_node(g, "r2", "Relu", &r1, 1, r2);
        int ins[2] = {cases[k].input ? x : r1, r2};
        q8_node_set_attr(add_node(g, "cat", "Concat", ins, 2, y), "axis", Q8_ATTR_INT)->i = 1;
        g->outputs = malloc(sizeof(int));
        g->outputs[g->n_outputs++] = y;
        plan_checked(g, &p);
        cr_assert_neq(p.buffer[ins[k == 1 ? 1 : 0]], p.buffer[y], "case %zu planned in place", k);
        if (k == 1) cr_assert_eq(p.offset[r1], p.offset[y], "the aligned first slice is in place");
        q8_plan_free(&p);
        q8_graph_free(g);
    }
}

/* Bare buffers through the planner's placement: no two alive at the same
 * step share bytes; returns the most bytes alive at one step. */
static size_t check_placement(const size_t *size, const int64_t *first, const int64_t *last,
                              int n, const size_t *off, size_t arena) {
    size_t peak = 0;
    for (int64_t t = 0; t <= 64; t++) {
        size_t live = 0;
        for (int i = 0; i < n; i++) live += first[i] <= t && t <= last[i] ? size[i] : 0;
        if (live > peak) peak = live;
    }
    for (int i = 0; i < n; i++) {
        cr_assert(off[i] + size[i] <= arena, "buffer %d past the arena", i);
        for (int j = i + 1; j < n; j++) {
            bool time = !(last[i] < first[j] || last[j] < first[i]);
            bool mem = off[i] < off[j] + size[j] && off[j] < off[i] + size[i];
            cr_assert(!(time && mem), "buffers %d and %d overlap while both alive", i, j);
        }
    }
    return peak;
}

Test(planner, placement_reaches_the_live_peak) {
    /* Largest first puts the 3-unit buffer at 0, the long-lived one above
     * it, one short 2-unit one back at 0 and the other above the long one:
     * 7 units, where at most 6 are ever alive; another order fits 6. */
    const size_t U = 1024;
    size_t size[4] = {2 * U, 2 * U, 3 * U, 2 * U}, off[4];
    int64_t first[4] = {5, 5, 3, 2}, last[4] = {6, 6, 4, 6};
    size_t arena = q8_plan_place(size, first, last, 4, off);
    size_t peak = check_placement(size, first, last, 4, off, arena);
    cr_assert_eq(peak, 6 * U);
    cr_assert_eq(arena, peak, "arena %zu, live peak %zu", arena, peak);
    /* random lifetimes and sizes: never an overlap, never below the peak */
    q8t_rng r = q8t_seed(21);
    for (int it = 0; it < 200; it++) {
        enum { N = 24 };
        size_t sz[N], of[N];
        int64_t f[N], l[N];
        for (int i = 0; i < N; i++) {
            f[i] = (int64_t)(q8t_next(&r) % 40);
            l[i] = f[i] + (int64_t)(q8t_next(&r) % 20);
            sz[i] = Q8_ALIGN * (1 + q8t_next(&r) % 32);
        }
        size_t a = q8_plan_place(sz, f, l, N, of);
        cr_assert(a >= check_placement(sz, f, l, N, of, a));
    }
}
