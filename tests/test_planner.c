/* Memory plan: no two tensors alive at the same time share bytes (unless
 * they alias by design: views, in-place), and the peak matches hand counts
 * on small graphs. */
#include <string.h>

#include "model.h"
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
    q8_error err = {0};
    cr_assert_eq(q8_graph_toposort(g, &err), Q8_OK);
    cr_assert_eq(q8_pass_infer(g, &err), Q8_OK, "%s", err.msg);
    q8_plan p;
    cr_assert_eq(q8_plan_build(g, NULL, NULL, &p, &err), Q8_OK);
    check_plan(g, &p);
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
