#define _GNU_SOURCE
/* Control flow: an If whose condition is computed at run time becomes
 * branch scopes of the graph (src/core/control.h). Checked against plain C
 * references: both sides taken in one session, nested Ifs, the planner
 * sharing the two sides' bytes, .q8 round trips, INT8 inside branches, and
 * malformed graphs and files refused with the node named. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "control.h"
#include "model.h"
#include "passes.h"
#include "planner.h"
#include "prune_fit.h"
#include "q8file.h"
#include "quantize.h"
#include "npy.h"
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

static void cf(q8_graph *g, const char *name, int ndim, const int64_t *dims, const float *v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], Q8_F32, dims, ndim);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, q8_tensor_nbytes(g->tensors[t]));
}

static void scalar(q8_graph *g, const char *name, float v) { cf(g, name, 0, NULL, &v); }

/* node(g, "Op", "a,b", "y") */
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

/* A branch graph of If node n (attribute which) reading the outer names
 * listed in outer ("x,t1"). */
static q8_graph *branch(q8_graph *parent, q8_node *n, const char *which, const char *outer) {
    q8_graph *b = q8_graph_new();
    b->parent = parent;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", outer);
    for (char *p = buf, *e; p && *p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        int t = T(b, p); /* before reading b->tensors: T may move it */
        b->tensors[t]->outer = true;
    }
    q8_node_set_attr(n, which, Q8_ATTR_GRAPH)->g = b;
    return b;
}

/* cond = ReduceSum(name) > 0, a run-time condition */
static void sum_positive(q8_graph *g, const char *x, const char *cond) {
    char s[64];
    snprintf(s, sizeof s, "%s_sum", cond);
    q8_node_set_attr(node(g, "ReduceSum", x, s), "keepdims", Q8_ATTR_INT)->i = 0;
    scalar(g, "zero", 0);
    char in[160];
    snprintf(in, sizeof in, "%s,zero", s);
    node(g, "Greater", in, cond);
}

/* cond = ReduceSum(x) > thr, in g */
static void sum_greater(q8_graph *g, const char *x, const char *cond, float thr) {
    char s[64], t[64], in[160];
    snprintf(s, sizeof s, "%s_sum", cond);
    snprintf(t, sizeof t, "%s_thr", cond);
    q8_node_set_attr(node(g, "ReduceSum", x, s), "keepdims", Q8_ATTR_INT)->i = 0;
    scalar(g, t, thr);
    snprintf(in, sizeof in, "%s,%s", s, t);
    node(g, "Greater", in, cond);
}

/* out = Reshape(x, [rows, -1]) (fails for 2x3 x when 6 % rows), named out */
static void reshape_rows(q8_graph *g, int64_t rows, const char *out) {
    int64_t shape[2] = {rows, -1}, two = 2;
    char nm[64];
    snprintf(nm, sizeof nm, "%s_shape", out);
    int k = T(g, nm);
    q8_tensor_set_shape(g->tensors[k], Q8_I64, &two, 1);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[k], NULL), Q8_OK);
    memcpy(g->tensors[k]->data, shape, sizeof shape);
    char in[160];
    snprintf(in, sizeof in, "x,%s", nm);
    node(g, "Reshape", in, out);
}

/* A 2x3 input x and y = If(sum(x) > thr) with branches *tb and *eb (each
 * reading x) for the caller to fill. */
static q8_graph *if_on_x(float thr, q8_graph **tb, q8_graph **eb) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {2, 3};
    input(g, "x", Q8_F32, 2, d);
    sum_greater(g, "x", "cond", thr);
    q8_node *n = node(g, "If", "cond", "y");
    *tb = branch(g, n, "then_branch", "x");
    *eb = branch(g, n, "else_branch", "x");
    output(g, "y");
    return g;
}

/* y = sum(x) > 0 ? 2 relu(x) : 1 - x; with nested, the then side is
 * max(relu(x)) > 3 ? sqrt(relu(x)) : relu(x)^2, times 2. */
static q8_graph *if_graph(bool nested) {
    q8_graph *tb, *eb, *g = if_on_x(0, &tb, &eb);
    node(tb, "Relu", "x", "t1");
    scalar(tb, "two", 2);
    if (nested) {
        q8_node_set_attr(node(tb, "ReduceMax", "t1", "m"), "keepdims", Q8_ATTR_INT)->i = 0;
        scalar(tb, "three", 3);
        node(tb, "Greater", "m,three", "c2");
        q8_node *n2 = node(tb, "If", "c2", "t2");
        q8_graph *t2 = branch(tb, n2, "then_branch", "t1");
        node(t2, "Sqrt", "t1", "r");
        output(t2, "r");
        q8_graph *e2 = branch(tb, n2, "else_branch", "t1");
        node(e2, "Mul", "t1,t1", "sq");
        output(e2, "sq");
        node(tb, "Mul", "t2,two", "ty");
    } else {
        node(tb, "Mul", "t1,two", "ty");
    }
    output(tb, "ty");
    node(eb, "Neg", "x", "e1");
    scalar(eb, "one", 1);
    node(eb, "Add", "e1,one", "ey");
    output(eb, "ey");
    return g;
}

static void reference(const float *x, bool nested, float *y) {
    float s = 0, m = 0;
    for (int i = 0; i < 6; i++) s += x[i];
    for (int i = 0; i < 6; i++) m = fmaxf(m, fmaxf(x[i], 0));
    for (int i = 0; i < 6; i++) {
        float r = fmaxf(x[i], 0);
        if (s > 0) y[i] = 2 * (!nested ? r : m > 3 ? sqrtf(r) : r * r);
        else y[i] = 1 - x[i];
    }
}

static q8_model *model_of(q8_graph *g) {
    q8_error err = {0};
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "t", &m, &err), Q8_OK, "%s", err.msg);
    return m;
}

/* Run session s on x (2x3) and compare output 0 with the reference. */
static void run_check(q8_session *s, const float *x, bool nested, float tol) {
    q8_error err = {0};
    int64_t d[2] = {2, 3};
    cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *o;
    cr_assert_eq(q8_session_output(s, 0, &info, &o, &err), Q8_OK);
    float want[6];
    reference(x, nested, want);
    q8t_assert_close(o, want, 6, tol, tol, "If output");
}

/* Inputs that take each way: then (sum > 0, max relu 5 or 2), else. */
static const float X_THEN_BIG[6] = {5, -1, 2, 0.5f, 1, 1};
static const float X_THEN_SMALL[6] = {2, -1, 1, 0.5f, 1, 1};
static const float X_ELSE[6] = {-5, 1, -2, 0.5f, -1, 1};

static void both_ways(q8_model *m, bool nested, float tol) {
    q8_error err = {0};
    q8_session *s;
    q8_session_options so = {.n_threads = 2};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    for (int rep = 0; rep < 2; rep++) { /* then, else, then again: nothing left over */
        run_check(s, X_THEN_BIG, nested, tol);
        run_check(s, X_ELSE, nested, tol);
        run_check(s, X_THEN_SMALL, nested, tol);
    }
    q8_session_free(s);
}

Test(control, if_runs_the_side_its_condition_picks) {
    q8_graph *g = if_graph(false);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    int ifs = 0, branch_nodes = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        ifs += g->nodes[i]->op == Q8_OP_IF;
        branch_nodes += g->nodes[i]->scope != 0;
    }
    cr_assert_eq(ifs, 1);
    cr_assert_geq(branch_nodes, 3, "both sides are nodes of the graph");
    q8_model *m = model_of(g);
    both_ways(m, false, 0);
    q8_model_free(m);
}

Test(control, nested_if_with_a_condition_computed_in_a_branch) {
    q8_graph *g = if_graph(true);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    int ifs = 0;
    for (int i = 0; i < g->n_nodes; i++) ifs += g->nodes[i]->op == Q8_OP_IF;
    cr_assert_eq(ifs, 2);
    q8_model *m = model_of(g);
    both_ways(m, true, 1e-6f);
    q8_model_free(m);
}

/* Write g to a .q8 file and load it back through the runtime. */
static q8_model *through_file(q8_graph *g) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/q8ctl%d.q8", (int)getpid());
    q8_error err = {0};
    cr_assert_eq(q8_file_write(path, g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_graph_free(g);
    q8_model *m = NULL;
    cr_assert_eq(q8_model_load(path, NULL, &m, &err), Q8_OK, "%s", err.msg);
    unlink(path);
    return m;
}

Test(control, if_survives_a_q8_file) {
    for (int nested = 0; nested < 2; nested++) {
        q8_graph *g = if_graph(nested);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_model *m = through_file(g);
        both_ways(m, nested, 1e-6f);
        q8_model_free(m);
    }
}

Test(control, branches_of_different_shapes_are_refused_naming_the_node) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {2, 3};
    input(g, "x", Q8_F32, 2, d);
    sum_positive(g, "x", "cond");
    q8_node *n = node(g, "If", "cond", "y");
    free(n->name);
    n->name = q8_strdup("pick");
    q8_graph *tb = branch(g, n, "then_branch", "x");
    node(tb, "Relu", "x", "t1");
    output(tb, "t1");
    q8_graph *eb = branch(g, n, "else_branch", "x");
    int64_t one = 1;
    int st = T(eb, "flat");
    q8_tensor_set_shape(eb->tensors[st], Q8_I64, &one, 1);
    q8_tensor_alloc_data(eb->tensors[st], NULL);
    ((int64_t *)eb->tensors[st]->data)[0] = 6;
    node(eb, "Reshape", "x,flat", "e1");
    output(eb, "e1");
    output(g, "y");
    q8_error err = {0};
    cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK);
    cr_assert(strstr(err.msg, "'pick'") && strstr(err.msg, "then_branch gives float32 2x3") &&
                  strstr(err.msg, "else_branch float32 6"),
              "%s", err.msg);
    q8_graph_free(g);
}

/* then: two MatMuls, else: two MatMuls; the sides' last values may share
 * bytes since only one side runs. */
Test(control, the_two_sides_share_arena_bytes) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {1, 256}, wd[2] = {256, 256};
    input(g, "x", Q8_F32, 2, d);
    int64_t one = 1;
    input(g, "cond", Q8_BOOL, 0, &one);
    float *w = calloc(256 * 256, sizeof(float));
    cf(g, "w", 2, wd, w);
    free(w);
    q8_node *n = node(g, "If", "cond", "y");
    q8_graph *tb = branch(g, n, "then_branch", "x,w");
    node(tb, "MatMul", "x,w", "t1");
    node(tb, "MatMul", "t1,w", "t2");
    output(tb, "t2");
    q8_graph *eb = branch(g, n, "else_branch", "x,w");
    node(eb, "MatMul", "x,w", "e1");
    node(eb, "MatMul", "e1,w", "e2");
    output(eb, "e2");
    output(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_plan p;
    cr_assert_eq(q8_plan_build(g, NULL, NULL, &p, &err), Q8_OK, "%s", err.msg);
    int t2 = q8_graph_find(g, "t2"), e2 = q8_graph_find(g, "e2"), y = q8_graph_find(g, "y");
    cr_assert_eq(p.offset[t2], p.offset[e2], "the sides' outputs share bytes");
    cr_assert_neq(p.offset[y], p.offset[t2], "the If's output is apart from both");
    q8_plan_free(&p);
    q8_graph_free(g);
}

/* ---- malformed flat graphs, through the .q8 reader ---- */

/* x -> Relu (scope 1) -> a; q8.If(c, a, x) -> y; mutate, then load. */
typedef void (*mutate_fn)(q8_graph *g);

static q8_graph *flat_graph(void) {
    q8_graph *g = q8_graph_new();
    g->opset = Q8_OPSET_CANONICAL;
    int64_t d[1] = {4}, one = 1;
    input(g, "x", Q8_F32, 1, d);
    input(g, "c", Q8_BOOL, 0, &one);
    const char *vals[3] = {"a", "b", "y"};
    for (int k = 0; k < 3; k++) q8_tensor_set_shape(g->tensors[T(g, vals[k])], Q8_F32, d, 1);
    q8_node *r = node(g, "Relu", "x", "a");
    r->scope = 1;
    node(g, "Neg", "x", "b")->scope = 2;
    q8_node *f = node(g, "If", "c,a,b", "y");
    free(f->domain);
    f->domain = q8_strdup("q8");
    q8_node_set_attr(f, "then_scope", Q8_ATTR_INT)->i = 1;
    q8_node_set_attr(f, "else_scope", Q8_ATTR_INT)->i = 2;
    output(g, "y");
    for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->op = q8_op_lookup(g->nodes[i]->domain,
                                                                         g->nodes[i]->op_type);
    return g;
}

static void load_fails(mutate_fn mutate, const char *substr) {
    q8_graph *g = flat_graph();
    if (mutate) mutate(g);
    char path[64];
    snprintf(path, sizeof path, "/tmp/q8ctlbad%d.q8", (int)getpid());
    q8_error err = {0};
    cr_assert_eq(q8_file_write(path, g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_graph_free(g);
    q8_model *m = NULL;
    q8_status s = q8_model_load(path, NULL, &m, &err);
    unlink(path);
    if (!substr) {
        cr_assert_eq(s, Q8_OK, "%s", err.msg);
        q8_model_free(m);
        return;
    }
    cr_assert_neq(s, Q8_OK, "expected a failure mentioning '%s'", substr);
    cr_assert(strstr(err.msg, substr), "message '%s' lacks '%s'", err.msg, substr);
}

static void orphan_scope(q8_graph *g) { g->nodes[0]->scope = 3; }
static void same_scopes(q8_graph *g) {
    ((q8_attr *)q8_attr_find(g->nodes[2], "else_scope"))->i = 1;
}
static void read_outside(q8_graph *g) { /* the else side reads the then side's value */
    g->nodes[1]->inputs[0] = q8_graph_find(g, "a");
}
static void if_in_its_branch(q8_graph *g) { g->nodes[2]->scope = 1; }
static void output_in_branch(q8_graph *g) { g->outputs[0] = q8_graph_find(g, "a"); }
static void huge_scope(q8_graph *g) { g->nodes[0]->scope = 1 << 30; }
static void sides_differ(q8_graph *g) {
    int64_t d[1] = {5};
    q8_tensor_set_shape(g->tensors[q8_graph_find(g, "b")], Q8_F32, d, 1);
    int z = T(g, "z");
    q8_tensor_set_shape(g->tensors[z], Q8_F32, d, 1);
    g->inputs[0] = q8_graph_find(g, "x"); /* keep x */
    g->nodes[1]->inputs[0] = z;
    g->inputs = realloc(g->inputs, sizeof(int) * 3);
    g->inputs[g->n_inputs++] = z;
}

Test(control, malformed_branch_scopes_in_a_file_are_refused) {
    load_fails(NULL, NULL); /* the unmutated graph loads */
    load_fails(orphan_scope, "is in scope 3, a branch of no If");
    load_fails(same_scopes, "must be distinct");
    load_fails(read_outside, "outside that branch");
    load_fails(if_in_its_branch, "inside itself");
    load_fails(output_in_branch, "graph output 'a' is computed inside a branch");
    load_fails(huge_scope, "out of range");
    load_fails(sides_differ, "both branches must give one dtype, shape and scale");
}

/* ---- INT8: nodes inside branches are quantized like any others ---- */

/* y = sum(x) > 0 ? relu(x W1) : x W2, x [1, 16] */
static q8_graph *mm_if_graph(void) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {1, 16}, wd[2] = {16, 16};
    input(g, "x", Q8_F32, 2, d);
    q8t_rng r = q8t_seed(3);
    float w[256];
    q8t_fill(&r, w, 256, -0.5f, 0.5f);
    cf(g, "w1", 2, wd, w);
    q8t_fill(&r, w, 256, -0.5f, 0.5f);
    cf(g, "w2", 2, wd, w);
    sum_positive(g, "x", "cond");
    q8_node *n = node(g, "If", "cond", "y");
    q8_graph *tb = branch(g, n, "then_branch", "x,w1");
    node(tb, "MatMul", "x,w1", "t1");
    node(tb, "Relu", "t1", "t2");
    output(tb, "t2");
    q8_graph *eb = branch(g, n, "else_branch", "x,w2");
    node(eb, "MatMul", "x,w2", "e1");
    output(eb, "e1");
    output(g, "y");
    return g;
}

/* n samples in a fresh folder: sums positive, or alternating when mixed */
static char *sample_dir(int n, bool mixed) {
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/q8ctl%dXXXXXX", (int)getpid());
    cr_assert(mkdtemp(dir));
    q8t_rng r = q8t_seed(11);
    int64_t d[2] = {1, 16};
    for (int i = 0; i < n; i++) {
        float x[16];
        q8t_fill(&r, x, 16, -1, 1);
        float bias = mixed && i % 2 ? -1.5f : 1.5f;
        for (int k = 0; k < 16; k++) x[k] += bias;
        char p[128];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 2, x, NULL), Q8_OK);
    }
    return dir;
}

static void rm_dir(const char *dir, int n) {
    for (int i = 0; i < n; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/s%02d.npy", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

static int count_int8(const q8_graph *g, int scope) {
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++)
        c += g->nodes[i]->op == Q8_OP_QGEMM && g->nodes[i]->scope == scope;
    return c;
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

/* Quantize mm_if_graph on calibration samples taking one side or both. */
static q8_graph *quantized_mm(bool mixed, q8_calibration *cal_out) {
    q8_graph *g = mm_if_graph();
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    char *dir = sample_dir(8, mixed);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, g, &s, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 1};
    cr_assert_eq(q8_calibrate(g, &s, &co, cal_out, &err), Q8_OK, "%s", err.msg);
    q8_meta meta = {0};
    cr_assert_eq(q8_quantize_graph(g, cal_out, NULL, &meta, &err), Q8_OK, "%s", err.msg);
    q8_meta_free(&meta);
    q8_samples_free(&s);
    rm_dir(dir, 8);
    return g;
}

static void mm_reference(const float *x, float *y) {
    q8_graph *g = mm_if_graph();
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m = model_of(g);
    run_mm(m, x, y);
    q8_model_free(m);
}

Test(control, int8_quantizes_both_sides_when_calibration_takes_both) {
    q8_calibration cal;
    q8_graph *g = quantized_mm(true, &cal);
    cr_assert_eq(cal.n_untaken, 0);
    q8_calibration_free(&cal);
    int then_s = -1, else_s = -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == Q8_OP_IF) {
            then_s = (int)q8_attr_int(g->nodes[i], "then_scope", 0);
            else_s = (int)q8_attr_int(g->nodes[i], "else_scope", 0);
        }
    cr_assert_eq(count_int8(g, then_s), 1, "the then side's MatMul is INT8");
    cr_assert_eq(count_int8(g, else_s), 1, "the else side's MatMul is INT8");
    q8_model *m = through_file(g);
    q8t_rng r = q8t_seed(5);
    for (int k = 0; k < 4; k++) {
        float x[16], want[16], got[16];
        q8t_fill(&r, x, 16, -1, 1);
        for (int i = 0; i < 16; i++) x[i] += k % 2 ? -1.5f : 1.5f;
        mm_reference(x, want);
        run_mm(m, x, got);
        q8t_assert_close(got, want, 16, 0.05f, 0.05f, "INT8 vs FP32");
    }
    q8_model_free(m);
}

Test(control, int8_leaves_a_side_calibration_never_ran_in_fp32_with_a_warning) {
    q8_calibration cal;
    q8_graph *g = quantized_mm(false, &cal);
    cr_assert_eq(cal.n_untaken, 1);
    cr_assert(strstr(cal.untaken[0], "else_branch (1 node) never ran on the calibration"),
              "%s", cal.untaken[0]);
    q8_calibration_free(&cal);
    int q = 0, f = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        q += g->nodes[i]->op == Q8_OP_QGEMM;
        f += g->nodes[i]->op == Q8_OP_MATMUL && g->nodes[i]->scope != 0;
    }
    cr_assert_eq(q, 1, "the side that ran is INT8");
    cr_assert_eq(f, 1, "the side that never ran stays an FP32 MatMul");
    q8_model *m = through_file(g);
    float x[16], want[16], got[16];
    for (int i = 0; i < 16; i++) x[i] = -1 + 0.01f * (float)i;
    mm_reference(x, want);
    run_mm(m, x, got);
    q8t_assert_close(got, want, 16, 1e-5f, 1e-5f, "the FP32 side");
    q8_model_free(m);
}

/* ---- pruning statistics of a layer inside a branch ---- */

/* The then side's MatMul of mm_if_graph, with the condition's threshold
 * (sum(x) > thr) moved. */
static q8_graph *mm_if_threshold(float thr, int *node, int *wt) {
    q8_graph *g = mm_if_graph();
    *(float *)g->tensors[q8_graph_find(g, "zero")]->data = thr;
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    *node = -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, "MatMul_t1") == 0) *node = i;
    *wt = q8_graph_find(g, "w1");
    cr_assert(*node >= 0 && *wt >= 0);
    return g;
}

/* The dense-target re-fit of pruning pairs each row the pruned model feeds
 * a layer with the dense model's row of the same sample. Pruning upstream
 * can change which samples take a branch (a wake-word head's If on its own
 * score): rows then paired by count met another sample's row or one never
 * written, and the re-fit wrote NaN weights. Here the "dense" model takes
 * the then side on 4 of 8 samples and the "pruned" one on all 8: the
 * layer's rows come only from samples where it runs, and the cross term is
 * H over the 4 samples both ran. */
Test(control, prune_statistics_pair_branch_rows_by_sample) {
    q8_error err = {0};
    int node, wt, node1, wt1;
    q8_graph *dense = mm_if_threshold(0, &node, &wt);
    q8_graph *pruned = mm_if_threshold(-100, &node1, &wt1);
    cr_assert(node1 == node && wt1 == wt);
    char *dir = sample_dir(8, true);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, dense, &s, &err), Q8_OK, "%s", err.msg);
    q8_pfit_layer l;
    q8_pfit_describe(dense, node, wt, &l);
    cr_assert_eq(l.kind, Q8_PFIT_KN);
    cr_assert_eq(q8_pfit_capture(pruned, &l, 1, &s, 1, Q8_PFIT_H, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(l.n_rows, 8, "the branch runs on every sample there: %lld rows",
                 (long long)l.n_rows);
    free(l.h);
    l.h = NULL;
    cr_assert_eq(q8_pfit_capture(dense, &l, 1, &s, 1, Q8_PFIT_ROWS_KEEP, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(l.n_rows, 4, "rows only where the branch runs: %lld", (long long)l.n_rows);
    cr_assert_eq(q8_pfit_capture(pruned, &l, 1, &s, 1, Q8_PFIT_H_CROSS, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(l.n_rows, 4, "rows with a dense partner: %lld", (long long)l.n_rows);
    cr_assert(l.h && l.c);
    for (int64_t i = 0; i < l.k * l.k; i++) {
        cr_assert(isfinite(l.c[i]), "cross term %lld not finite", (long long)i);
        cr_assert_float_eq(l.c[i], l.h[i], 1e-4f * (1 + fabsf(l.h[i])),
                           "cross term %lld: %g, H %g", (long long)i, l.c[i], l.h[i]);
    }
    free(l.h);
    free(l.c);
    q8_pfit_drop_rows(&l);
    q8_samples_free(&s);
    rm_dir(dir, 8);
    q8_graph_free(dense);
    q8_graph_free(pruned);
}

/* ---- inputs bound to a value known at load ---- */

/* y = Reshape(x, shape) + (sr == 16000 ? 1 : 2): shape and sr are inputs. */
static q8_graph *bind_graph(void) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {2, 3}, two = 2;
    input(g, "x", Q8_F32, 2, d);
    input(g, "shape", Q8_I64, 1, &two);
    input(g, "sr", Q8_I64, 0, NULL);
    node(g, "Reshape", "x,shape", "r");
    int k = T(g, "k16");
    q8_tensor_set_shape(g->tensors[k], Q8_I64, NULL, 0);
    q8_tensor_alloc_data(g->tensors[k], NULL);
    *(int64_t *)g->tensors[k]->data = 16000;
    node(g, "Equal", "sr,k16", "is16");
    q8_node *n = node(g, "If", "is16", "add");
    q8_graph *tb = branch(g, n, "then_branch", "");
    scalar(tb, "one", 1);
    node(tb, "Identity", "one", "a1");
    output(tb, "a1");
    q8_graph *eb = branch(g, n, "else_branch", "");
    scalar(eb, "two", 2);
    node(eb, "Identity", "two", "a2");
    output(eb, "a2");
    node(g, "Add", "r,add", "y");
    output(g, "y");
    return g;
}

static const int64_t SHAPE32[2] = {3, 2}, SR16 = 16000, SR8 = 8000;

static q8_load_options bind_opts(q8_input_value *v, int64_t sr) {
    static int64_t srv;
    srv = sr;
    v[0] = (q8_input_value){.name = "shape", .dtype = Q8_I64, .ndim = 1, .dims = {2},
                            .data = SHAPE32};
    v[1] = (q8_input_value){.name = "sr", .dtype = Q8_I64, .ndim = 0, .data = &srv};
    return (q8_load_options){.input_values = v, .n_input_values = 2};
}

Test(control, inputs_that_decide_shapes_and_branches_fold_when_bound) {
    q8_graph *g = bind_graph();
    q8_error err = {0};
    cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK, "unbound, the shape is unknown");
    cr_assert(strstr(err.msg, "must be a constant (it decides a shape)"), "%s", err.msg);
    q8_graph_free(g);
    for (int k = 0; k < 2; k++) {
        g = bind_graph();
        q8_input_value v[2];
        q8_load_options lo = bind_opts(v, k ? SR8 : SR16);
        cr_assert_eq(q8_passes_run(g, &lo, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(g->n_inputs, 1);
        cr_assert_eq(g->n_bound, 2);
        for (int i = 0; i < g->n_nodes; i++)
            cr_assert_neq(g->nodes[i]->op, Q8_OP_IF, "the If on a bound input is inlined");
        q8_model *m = through_file(g);
        cr_assert_eq(q8_model_num_inputs(m), 1);
        cr_assert_eq(q8_model_num_bound(m), 2);
        q8_session *s;
        cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
        float x[6] = {1, 2, 3, 4, 5, 6};
        int64_t d[2] = {2, 3};
        cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
        int64_t two = 2;
        cr_assert_eq(q8_session_set_input(s, "shape", Q8_I64, &two, 1, SHAPE32, &err), Q8_OK,
                     "the bound value itself is accepted: %s", err.msg);
        int64_t other[2] = {6, 1};
        cr_assert_neq(q8_session_set_input(s, "shape", Q8_I64, &two, 1, other, &err), Q8_OK);
        cr_assert(strstr(err.msg, "input 'shape' is bound to [3, 2] in this model") &&
                      strstr(err.msg, "this run gives [6, 1]"),
                  "%s", err.msg);
        const int64_t *wrong_sr = k ? &SR16 : &SR8;
        cr_assert_neq(q8_session_set_input(s, "sr", Q8_I64, NULL, 0, wrong_sr, &err), Q8_OK);
        cr_assert(strstr(err.msg, k ? "bound to 8000" : "bound to 16000"), "%s", err.msg);
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
        q8_tensor_info info;
        const void *o;
        q8_session_output(s, 0, &info, &o, NULL);
        cr_assert_eq(info.ndim, 2);
        cr_assert_eq(info.dims[0], 3);
        for (int i = 0; i < 6; i++)
            cr_assert_float_eq(((const float *)o)[i], x[i] + (k ? 2.0f : 1.0f), 0);
        q8_session_free(s);
        /* loading the .q8 for another value is refused too */
        char path[64];
        snprintf(path, sizeof path, "/tmp/q8ctlb%d.q8", (int)getpid());
        q8_model_free(m);
        g = bind_graph();
        cr_assert_eq(q8_passes_run(g, &lo, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_file_write(path, g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_graph_free(g);
        q8_load_options other_sr = bind_opts(v, k ? SR16 : SR8);
        cr_assert_neq(q8_model_load(path, &other_sr, &m, &err), Q8_OK);
        cr_assert(strstr(err.msg, "input 'sr' is bound to"), "%s", err.msg);
        q8_input_value xv = {.name = "x", .dtype = Q8_F32, .ndim = 2, .dims = {2, 3}, .data = x};
        q8_load_options bind_x = {.input_values = &xv, .n_input_values = 1};
        cr_assert_neq(q8_model_load(path, &bind_x, &m, &err), Q8_OK);
        cr_assert(strstr(err.msg, "input 'x' was not bound when this .q8 was made"), "%s", err.msg);
        unlink(path);
    }
}

/* ---- a side that cannot run at the model's shapes ---- */

/* y = sum(x) > 0 ? x + 1 : Reshape(x, [4, -1]) + 0 (x is 2x3: 6 values do
 * not make 4 rows); with both_fail the then side reshapes to [5, -1]. */
static q8_graph *half_runnable_graph(bool both_fail) {
    q8_graph *tb, *eb, *g = if_on_x(0, &tb, &eb);
    if (both_fail) {
        reshape_rows(tb, 5, "r5");
        node(tb, "Identity", "r5", "t");
    } else {
        scalar(tb, "one", 1);
        node(tb, "Add", "x,one", "t");
    }
    output(tb, "t");
    reshape_rows(eb, 4, "r4");
    scalar(eb, "nil", 0);
    node(eb, "Add", "r4,nil", "e");
    output(eb, "e");
    return g;
}

Test(control, a_side_that_cannot_run_is_refused_when_taken_not_at_load) {
    q8_error err = {0};
    for (int file = 0; file < 2; file++) {
        q8_graph *g = half_runnable_graph(false);
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_model *m = file ? through_file(g) : model_of(g);
        q8_session *s;
        cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
        int64_t d[2] = {2, 3};
        float x[6] = {1, 2, 3, 4, 5, -6};
        cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
        q8_tensor_info info;
        const void *o;
        cr_assert_eq(q8_session_output(s, 0, &info, &o, &err), Q8_OK);
        for (int i = 0; i < 6; i++) cr_assert_float_eq(((const float *)o)[i], x[i] + 1, 0);
        float neg[6] = {-1, -2, -3, 4, 0, 0};
        cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, neg, &err), Q8_OK, "%s", err.msg);
        cr_assert_neq(q8_session_run(s, &err), Q8_OK, "the else side cannot run");
        cr_assert(strstr(err.msg, "picks its else branch, which cannot run at this model's "
                                  "shapes") && strstr(err.msg, "Reshape"),
                  "%s", err.msg);
        /* and the session runs the other side again afterwards */
        cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
        q8_session_free(s);
        q8_model_free(m);
    }
    q8_graph *g = half_runnable_graph(true);
    cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK, "neither side can run");
    cr_assert(strstr(err.msg, "Reshape"), "%s", err.msg);
    q8_graph_free(g);
}

/* y = sum(x) > 0 ? (sum(x) > 10 ? x + 1 : Reshape(x, [4, -1])) : x - 1;
 * inner_both: the inner then side reshapes to [5, -1] too (neither inner
 * side can run: the outer then side cannot). bad_op: the outer else side
 * has an op q8 does not have instead. */
static q8_graph *nested_graph(bool inner_both, bool bad_op) {
    q8_graph *tb, *eb, *g = if_on_x(0, &tb, &eb);
    sum_greater(tb, "x", "c2", 10);
    q8_node *inner = node(tb, "If", "c2", "t");
    output(tb, "t");
    q8_graph *itb = branch(tb, inner, "then_branch", "x");
    if (inner_both) {
        reshape_rows(itb, 5, "r5");
        node(itb, "Identity", "r5", "it");
    } else {
        scalar(itb, "one_in", 1);
        node(itb, "Add", "x,one_in", "it");
    }
    output(itb, "it");
    q8_graph *ieb = branch(tb, inner, "else_branch", "x");
    reshape_rows(ieb, 4, "r4");
    node(ieb, "Identity", "r4", "ie");
    output(ieb, "ie");
    scalar(eb, "one_out", 1);
    node(eb, bad_op ? "NoSuchOp" : "Sub", "x,one_out", "e");
    output(eb, "e");
    return g;
}

/* Runs x through s: Q8_OK with y = x + add, or the error's status. */
static q8_status run_nested(q8_session *s, const float *x, float add, q8_error *err) {
    int64_t d[2] = {2, 3};
    cr_assert_eq(q8_session_set_input(s, "x", Q8_F32, d, 2, x, err), Q8_OK, "%s", err->msg);
    q8_status st = q8_session_run(s, err);
    if (st != Q8_OK) return st;
    const void *o;
    q8_tensor_info info;
    cr_assert_eq(q8_session_output(s, 0, &info, &o, err), Q8_OK);
    for (int i = 0; i < 6; i++) cr_assert_float_eq(((const float *)o)[i], x[i] + add, 0);
    return Q8_OK;
}

static const float X_BIG[6] = {5, 5, 5, 1, 1, 1}, X_SMALL[6] = {1, 1, 1, 1, 1, 0},
                   X_NEG[6] = {-5, -1, 0, 0, 0, 0};

Test(control, a_failing_side_inside_a_nested_if_drops_that_side_only) {
    q8_error err = {0};
    q8_graph *g = nested_graph(false, false);
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m = model_of(g);
    q8_session *s;
    cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(run_nested(s, X_BIG, 1, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(run_nested(s, X_NEG, -1, &err), Q8_OK, "%s", err.msg);
    cr_assert_neq(run_nested(s, X_SMALL, 0, &err), Q8_OK);
    cr_assert(strstr(err.msg, "picks its else branch") && strstr(err.msg, "Reshape"), "%s",
              err.msg);
    q8_session_free(s);
    q8_model_free(m);
}

Test(control, a_nested_if_neither_side_of_which_runs_drops_its_own_side) {
    q8_error err = {0};
    q8_graph *g = nested_graph(true, false);
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m = model_of(g);
    q8_session *s;
    cr_assert_eq(q8_session_create(m, NULL, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(run_nested(s, X_NEG, -1, &err), Q8_OK, "%s", err.msg);
    cr_assert_neq(run_nested(s, X_BIG, 0, &err), Q8_OK);
    cr_assert(strstr(err.msg, "picks its then branch") && strstr(err.msg, "neither branch"),
              "%s", err.msg);
    q8_session_free(s);
    q8_model_free(m);
}

Test(control, other_errors_in_a_branch_still_fail_the_load) {
    q8_error err = {0};
    q8_graph *g = nested_graph(false, true);
    cr_assert_neq(q8_passes_run(g, NULL, &err), Q8_OK, "an op q8 lacks is the load's error");
    cr_assert(strstr(err.msg, "NoSuchOp is not supported"), "%s", err.msg);
    q8_graph_free(g);
    /* and a load that succeeds after dropping a side leaves no error behind */
    g = nested_graph(false, false);
    err = (q8_error){0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(err.status, Q8_OK, "err holds '%s' after a successful load", err.msg);
    cr_assert_eq(err.msg[0], 0, "err holds '%s' after a successful load", err.msg);
    q8_graph_free(g);
}
