#define _GNU_SOURCE
/* Loop and Scan with iteration counts known at load, unrolled into the flat
 * graph (src/passes/loop.c). Checked against plain C references: loop-carried
 * values, the iteration number, scan outputs, Scan's axes and directions,
 * a .q8 round trip, INT8 in the body; bad Loops refused naming the node. */
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "model.h"
#include "npy.h"
#include "passes.h"
#include "q8file.h"
#include "quantize.h"
#include "testutil.h"

/* ---- a graph builder: tensors by name ---- */

#define T q8t_tensor

static void input(q8_graph *g, const char *name, q8_dtype dt, int ndim, const int64_t *dims) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], dt, dims, ndim);
    g->inputs = realloc(g->inputs, sizeof(int) * (size_t)(g->n_inputs + 1));
    g->inputs[g->n_inputs++] = t;
}

static void output(q8_graph *g, const char *name) {
    g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
    g->outputs[g->n_outputs++] = T(g, name);
}

static void constant(q8_graph *g, const char *name, q8_dtype dt, int ndim, const int64_t *dims,
                     const void *v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], dt, dims, ndim);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, q8_tensor_nbytes(g->tensors[t]));
}

/* node(g, "Op", "a,b", "y"); an empty name is an absent input */
static q8_node *node(q8_graph *g, const char *op, const char *ins, const char *outs) {
    int in[16], out[8], ni = 0, no = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", ins);
    for (char *p = buf, *e; p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        in[ni++] = *p ? T(g, p) : -1;
    }
    snprintf(buf, sizeof buf, "%s", outs);
    for (char *p = buf, *e; p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        out[no++] = T(g, p);
    }
    char name[64];
    snprintf(name, sizeof name, "%s_%s", op, outs);
    int k = q8_graph_add_node(g, name, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, ni, out, no, NULL), Q8_OK);
    return g->nodes[k];
}

/* The body graph of n: inputs listed in ins ("i,c,y"), outer names in outer. */
static q8_graph *body(q8_graph *parent, q8_node *n, const char *ins, const char *outer) {
    q8_graph *b = q8_graph_new();
    b->parent = parent;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", ins);
    for (char *p = buf, *e; p && *p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        b->inputs = realloc(b->inputs, sizeof(int) * (size_t)(b->n_inputs + 1));
        b->inputs[b->n_inputs++] = T(b, p);
    }
    snprintf(buf, sizeof buf, "%s", outer);
    for (char *p = buf, *e; p && *p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        int t = T(b, p);
        b->tensors[t]->outer = true;
    }
    q8_node_set_attr(n, "body", Q8_ATTR_GRAPH)->g = b;
    return b;
}

/* ---- Loop: y_{i+1} = y_i * x + i, scan output y_{i+1} ---- */

#define N 4

typedef enum { COND_PASS, COND_NONE, COND_CONST, COND_DATA } cond_kind;

/* m_const: M a constant (else a graph input "m"); cond as kind says. */
static q8_graph *loop_graph(int64_t trips, bool m_const, cond_kind ck) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {1, N};
    input(g, "x", Q8_F32, 2, d);
    float y0[N] = {1, -1, 0.5f, 2};
    constant(g, "y0", Q8_F32, 2, d, y0);
    if (m_const) constant(g, "m", Q8_I64, 0, NULL, &trips);
    else input(g, "m", Q8_I64, 0, NULL);
    uint8_t yes = 1;
    constant(g, "c0", Q8_BOOL, 0, NULL, &yes);
    q8_node *n = node(g, "Loop", ck == COND_NONE ? "m,,y0" : "m,c0,y0", "y,ys");
    q8_graph *b = body(g, n, "i,c_in,y_in", "x");
    node(b, "Mul", "y_in,x", "p");
    q8_node_set_attr(node(b, "Cast", "i", "fi"), "to", Q8_ATTR_INT)->i = 1; /* FLOAT */
    node(b, "Add", "p,fi", "y_out");
    node(b, "Identity", "y_out", "scan");
    if (ck == COND_DATA) {
        q8_node_set_attr(node(b, "ReduceSum", "y_out", "s"), "keepdims", Q8_ATTR_INT)->i = 0;
        float lim = 100;
        constant(b, "lim", Q8_F32, 0, NULL, &lim);
        node(b, "Less", "s,lim", "c_out");
    } else if (ck == COND_CONST) {
        constant(b, "c_out", Q8_BOOL, 0, NULL, &yes);
    } else {
        node(b, "Identity", "c_in", "c_out");
    }
    output(b, "c_out");
    output(b, "y_out");
    output(b, "scan");
    output(g, "y");
    output(g, "ys");
    return g;
}

static void loop_reference(const float *x, int trips, float *y, float *ys) {
    float v[N] = {1, -1, 0.5f, 2};
    for (int i = 0; i < trips; i++)
        for (int k = 0; k < N; k++) {
            v[k] = v[k] * x[k] + (float)i;
            ys[i * N + k] = v[k];
        }
    memcpy(y, v, sizeof v);
}

static q8_model *model_of(q8_graph *g) {
    q8_error err = {0};
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "t", &m, &err), Q8_OK, "%s", err.msg);
    return m;
}

/* Write g to a .q8 file and load it back through the runtime. */
static q8_model *through_file(q8_graph *g) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/q8loop%d.q8", (int)getpid());
    q8_error err = {0};
    cr_assert_eq(q8_file_write(path, g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_graph_free(g);
    q8_model *m = NULL;
    cr_assert_eq(q8_model_load(path, NULL, &m, &err), Q8_OK, "%s", err.msg);
    unlink(path);
    return m;
}

/* Run m on x (1xN); outputs 0 and 1 into y and ys (counts checked). */
static void run_loop(q8_model *m, const float *x, int trips, float *y, float *ys) {
    q8_error err = {0};
    q8_session *s;
    cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
    int64_t d[2] = {1, N};
    cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *o;
    cr_assert_eq(q8_session_output(s, 0, &info, &o, &err), Q8_OK);
    cr_assert_eq(info.ndim, 2);
    memcpy(y, o, sizeof(float) * N);
    cr_assert_eq(q8_session_output(s, 1, &info, &o, &err), Q8_OK);
    cr_assert_eq(info.ndim, 3, "scan outputs stack along a new axis 0");
    cr_assert_eq(info.dims[0], trips);
    cr_assert_eq(info.dims[2], N);
    memcpy(ys, o, sizeof(float) * (size_t)(trips * N));
    q8_session_free(s);
}

static void check_loop(q8_model *m, int trips) {
    q8t_rng r = q8t_seed(3);
    for (int rep = 0; rep < 3; rep++) {
        float x[N], y[N], ys[8 * N], want[N], wants[8 * N];
        q8t_fill(&r, x, N, -1.5f, 1.5f);
        run_loop(m, x, trips, y, ys);
        loop_reference(x, trips, want, wants);
        q8t_assert_close(y, want, N, 1e-6f, 1e-6f, "loop-carried y");
        q8t_assert_close(ys, wants, trips * N, 1e-6f, 1e-6f, "scan output");
    }
}

Test(loop, carried_values_iteration_number_and_scan_outputs_match_a_reference) {
    cond_kind kinds[3] = {COND_PASS, COND_NONE, COND_CONST};
    for (int k = 0; k < 3; k++)
        for (int trips = 1; trips <= 5; trips += 2) {
            q8_graph *g = loop_graph(trips, true, kinds[k]);
            q8_error err = {0};
            cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
            for (int i = 0; i < g->n_nodes; i++)
                cr_assert_str_neq(g->nodes[i]->op_type, "Loop", "unrolled");
            q8_model *m = model_of(g);
            check_loop(m, trips);
            q8_model_free(m);
        }
}

Test(loop, a_bound_trip_count_unrolls_and_survives_a_q8_file) {
    q8_graph *g = loop_graph(0, false, COND_PASS);
    int64_t three = 3;
    q8_input_value v = {.name = "m", .dtype = Q8_I64, .ndim = 0, .data = &three};
    q8_load_options lo = {.input_values = &v, .n_input_values = 1};
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, &lo, &err), Q8_OK, "%s", err.msg);
    q8_model *m = through_file(g);
    check_loop(m, 3);
    q8_model_free(m);
}

/* A Loop's load fails with a message holding want. */
static void refused(q8_graph *g, const char *want) {
    q8_error err = {0};
    cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK);
    cr_assert(strstr(err.msg, want), "message: %s", err.msg);
    cr_assert(strstr(err.msg, "node 'Loop_y,ys' (Loop)"), "names the node: %s", err.msg);
    q8_graph_free(g);
}

Test(loop, loops_whose_trip_count_depends_on_run_time_data_are_refused) {
    refused(loop_graph(3, false, COND_PASS),
            "input 0 ('m') must be a constant: the trip count M decides how many times");
    refused(loop_graph(3, true, COND_DATA), "its body computes the loop condition ('c_out')");
    q8_graph *g = loop_graph(3, true, COND_PASS);
    g->nodes[0]->inputs[0] = -1; /* no M */
    refused(g, "has no trip count (M)");
    refused(loop_graph(1 << 20, true, COND_PASS), "more than the 65536 nodes q8 unrolls");
    g = loop_graph(0, true, COND_PASS);
    refused(g, "runs zero times, so its scan outputs have no shape");
}

/* ---- Scan: two scan inputs (one reversed, one along axis 1), a running
 * sum as state, scan outputs along axis 0 and (reversed) axis 1 ---- */

#define L 3
#define W 2

static q8_graph *scan_graph(void) {
    q8_graph *g = q8_graph_new();
    int64_t da[2] = {L, W}, db[2] = {W, L}, ds[1] = {W};
    input(g, "a", Q8_F32, 2, da);
    input(g, "b", Q8_F32, 2, db);
    float s0[W] = {0.25f, -1};
    constant(g, "s0", Q8_F32, 1, ds, s0);
    q8_node *n = node(g, "Scan", "s0,a,b", "s,z,w");
    q8_node_set_attr(n, "num_scan_inputs", Q8_ATTR_INT)->i = 2;
    q8_attr *a = q8_node_set_attr(n, "scan_input_axes", Q8_ATTR_INTS);
    a->n = 2;
    a->ints = calloc(2, sizeof(int64_t));
    a->ints[1] = -1; /* b along its last axis */
    a = q8_node_set_attr(n, "scan_input_directions", Q8_ATTR_INTS);
    a->n = 2;
    a->ints = calloc(2, sizeof(int64_t));
    a->ints[0] = 1; /* a from its end */
    a = q8_node_set_attr(n, "scan_output_axes", Q8_ATTR_INTS);
    a->n = 2;
    a->ints = calloc(2, sizeof(int64_t));
    a->ints[1] = 1;
    a = q8_node_set_attr(n, "scan_output_directions", Q8_ATTR_INTS);
    a->n = 2;
    a->ints = calloc(2, sizeof(int64_t));
    a->ints[1] = 1;
    q8_graph *bd = body(g, n, "s_in,ai,bi", "");
    node(bd, "Mul", "ai,bi", "ab");
    node(bd, "Add", "s_in,ab", "s_out");
    node(bd, "Sub", "ai,bi", "d");
    node(bd, "Identity", "s_out", "z_t");
    output(bd, "s_out");
    output(bd, "z_t");
    output(bd, "d");
    output(g, "s");
    output(g, "z");
    output(g, "w");
    return g;
}

/* s: final sum; z[t][w]: the sums; w_[w][t]: a - b, stacked reversed */
static void scan_reference(const float *a, const float *b, float *s, float *z, float *w_) {
    float acc[W] = {0.25f, -1};
    for (int t = 0; t < L; t++)
        for (int k = 0; k < W; k++) {
            float ai = a[(L - 1 - t) * W + k], bi = b[k * L + t];
            acc[k] += ai * bi;
            z[t * W + k] = acc[k];
            w_[k * L + (L - 1 - t)] = ai - bi;
        }
    memcpy(s, acc, sizeof acc);
}

Test(scan, axes_and_directions_match_a_reference_and_survive_a_q8_file) {
    for (int file = 0; file < 2; file++) {
        q8_graph *g = scan_graph();
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_model *m = file ? through_file(g) : model_of(g);
        q8_session *s;
        cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
        q8t_rng r = q8t_seed(9);
        float a[L * W], b[W * L], want_s[W], want_z[L * W], want_w[W * L];
        q8t_fill(&r, a, L * W, -2, 2);
        q8t_fill(&r, b, W * L, -2, 2);
        int64_t da[2] = {L, W}, db[2] = {W, L};
        cr_assert_eq(q8_session_set_input(s, "a", Q8_F32, da, 2, a, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_set_input(s, "b", Q8_F32, db, 2, b, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
        scan_reference(a, b, want_s, want_z, want_w);
        q8_tensor_info info;
        const void *o;
        q8_session_output(s, 0, &info, &o, NULL);
        q8t_assert_close(o, want_s, W, 1e-6f, 1e-6f, "final state");
        q8_session_output(s, 1, &info, &o, NULL);
        cr_assert(info.ndim == 2 && info.dims[0] == L && info.dims[1] == W);
        q8t_assert_close(o, want_z, L * W, 1e-6f, 1e-6f, "scan output along axis 0");
        q8_session_output(s, 2, &info, &o, NULL);
        cr_assert(info.ndim == 2 && info.dims[0] == W && info.dims[1] == L);
        q8t_assert_close(o, want_w, W * L, 1e-6f, 1e-6f, "reversed scan output along axis 1");
        q8_session_free(s);
        q8_model_free(m);
    }
}

Test(scan, a_body_with_nested_control_flow_is_refused_naming_the_node) {
    q8_graph *g = scan_graph();
    q8_graph *bd = q8_attr_find(g->nodes[0], "body")->g;
    q8_node *n = node(bd, "If", "ai", "unused");
    q8_node_set_attr(n, "then_branch", Q8_ATTR_GRAPH)->g = q8_graph_new();
    q8_error err = {0};
    cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK);
    cr_assert(strstr(err.msg, "node 'Scan_s,z,w' (Scan): its body's node 'If_unused' (If) has "
                     "a subgraph of its own"), "%s", err.msg);
    q8_graph_free(g);
}

/* Scan of opset 8: batch axis 0 on every input, time axis 1, running sums
 * per batch row (the ONNX test_scan_sum, with two rows and a reversed
 * direction). */
static q8_graph *scan8_graph(bool with_lens) {
    q8_graph *g = q8_graph_new();
    g->opset = 8;
    int64_t ds[2] = {2, W}, dx[3] = {2, L, W}, dl[1] = {2};
    input(g, "s0", Q8_F32, 2, ds);
    input(g, "x", Q8_F32, 3, dx);
    int32_t lens[2] = {L, L};
    constant(g, "lens", Q8_I32, 1, dl, lens);
    q8_node *n = node(g, "Scan", with_lens ? "lens,s0,x" : ",s0,x", "s,z");
    q8_node_set_attr(n, "num_scan_inputs", Q8_ATTR_INT)->i = 1;
    q8_attr *a = q8_node_set_attr(n, "directions", Q8_ATTR_INTS);
    a->n = 1;
    a->ints = calloc(1, sizeof(int64_t));
    a->ints[0] = 1;
    q8_graph *bd = body(g, n, "s_in,xi", "");
    node(bd, "Add", "s_in,xi", "s_out");
    node(bd, "Identity", "s_out", "z_t");
    output(bd, "s_out");
    output(bd, "z_t");
    output(g, "s");
    output(g, "z");
    return g;
}

Test(scan, opset_8_batched_scan_runs_each_row_against_a_reference) {
    q8_graph *g = scan8_graph(false);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m = through_file(g);
    q8_session *s;
    cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
    q8t_rng r = q8t_seed(4);
    float s0[2 * W], x[2 * L * W], want_s[2 * W], want_z[2 * L * W];
    q8t_fill(&r, s0, 2 * W, -1, 1);
    q8t_fill(&r, x, 2 * L * W, -1, 1);
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < W; k++) {
            float acc = s0[b * W + k];
            for (int t = 0; t < L; t++) { /* reversed: the last step first */
                acc += x[(b * L + (L - 1 - t)) * W + k];
                want_z[(b * L + t) * W + k] = acc;
            }
            want_s[b * W + k] = acc;
        }
    int64_t ds[2] = {2, W}, dx[3] = {2, L, W};
    cr_assert_eq(q8_session_set_input(s, "s0", Q8_F32, ds, 2, s0, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, dx, 3, x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *o;
    q8_session_output(s, 0, &info, &o, NULL);
    cr_assert(info.ndim == 2 && info.dims[0] == 2 && info.dims[1] == W);
    q8t_assert_close(o, want_s, 2 * W, 1e-6f, 1e-6f, "final states per row");
    q8_session_output(s, 1, &info, &o, NULL);
    cr_assert(info.ndim == 3 && info.dims[0] == 2 && info.dims[1] == L && info.dims[2] == W);
    q8t_assert_close(o, want_z, 2 * L * W, 1e-6f, 1e-6f, "scan outputs per row");
    q8_session_free(s);
    q8_model_free(m);
    g = scan8_graph(true);
    cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK);
    cr_assert(strstr(err.msg, "node 'Scan_s,z' (Scan): sequence_lens is given"), "%s", err.msg);
    q8_graph_free(g);
}

/* ---- INT8: the body's MatMul quantized in every copy ---- */

static q8_graph *mm_loop_graph(void) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {1, 16}, dw[2] = {16, 16};
    input(g, "x", Q8_F32, 2, d);
    int64_t trips = 3;
    constant(g, "m", Q8_I64, 0, NULL, &trips);
    float w[256];
    q8t_rng r = q8t_seed(21);
    q8t_fill(&r, w, 256, -0.3f, 0.3f);
    q8_node *n = node(g, "Loop", "m,,x", "y");
    q8_graph *b = body(g, n, "i,c_in,h", "");
    constant(b, "w", Q8_F32, 2, dw, w);
    node(b, "MatMul", "h,w", "hw");
    node(b, "Tanh", "hw", "h_out");
    node(b, "Identity", "c_in", "c_out");
    output(b, "c_out");
    output(b, "h_out");
    output(g, "y");
    return g;
}

static void run_mm(q8_model *m, const float *x, float *y) {
    q8_error err = {0};
    q8_session *s;
    cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
    int64_t d[2] = {1, 16};
    cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *o;
    q8_session_output(s, 0, &info, &o, NULL);
    memcpy(y, o, sizeof(float) * 16);
    q8_session_free(s);
}

Test(loop, int8_quantizes_the_body_in_every_iteration) {
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/q8loop%dXXXXXX", (int)getpid());
    cr_assert(mkdtemp(dir));
    q8t_rng r = q8t_seed(11);
    int64_t d[2] = {1, 16};
    for (int i = 0; i < 8; i++) {
        float x[16];
        q8t_fill(&r, x, 16, -1, 1);
        char p[128];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 2, x, NULL), Q8_OK);
    }
    q8_graph *g = mm_loop_graph();
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 1};
    q8_calibration cal;
    cr_assert_eq(q8_calibrate(g, &s, &co, &cal, &err), Q8_OK, "%s", err.msg);
    q8_meta meta = {0};
    cr_assert_eq(q8_quantize_graph(g, &cal, NULL, &meta, &err), Q8_OK, "%s", err.msg);
    q8_meta_free(&meta);
    q8_calibration_free(&cal);
    q8_samples_free(&s);
    int qgemm = 0, w = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i]->op != Q8_OP_QGEMM) continue;
        qgemm++;
        if (w < 0) w = g->nodes[i]->inputs[1];
        cr_assert_eq(g->nodes[i]->inputs[1], w, "the copies share one int8 weight tensor");
    }
    cr_assert_eq(qgemm, 3, "one INT8 MatMul per iteration");
    q8_model *m = through_file(g);
    q8_graph *f = mm_loop_graph();
    cr_assert_eq(q8_passes_run(f, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *fm = model_of(f);
    for (int k = 0; k < 4; k++) {
        float x[16], want[16], got[16];
        q8t_fill(&r, x, 16, -1, 1);
        run_mm(fm, x, want);
        run_mm(m, x, got);
        q8t_assert_close(got, want, 16, 0.05f, 0.05f, "INT8 vs FP32");
    }
    q8_model_free(fm);
    q8_model_free(m);
    for (int i = 0; i < 8; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        unlink(p);
    }
    rmdir(dir);
}
