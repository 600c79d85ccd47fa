/* The canonicalize pass (src/passes/canonicalize.c): each old opset form is
 * rewritten into the form of Q8_OPSET_CANONICAL. For every rewrite a graph
 * in the old form and one written directly in the canonical form run on the
 * same data and must give the same output bytes; the old forms' errors stay
 * errors, naming the node. */
#include <float.h>
#include <string.h>

#include "passes.h"
#include "testutil.h"

/* ---- a tiny graph builder: tensors by name ---- */

#define T q8t_tensor

static q8_graph *graph(int opset) {
    q8_graph *g = q8_graph_new();
    cr_assert(g);
    g->opset = opset;
    return g;
}

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

static void cdata(q8_graph *g, const char *name, q8_dtype dt, int ndim, const int64_t *dims,
                  const void *v) {
    int t = T(g, name);
    q8_tensor_set_shape(g->tensors[t], dt, dims, ndim);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memcpy(g->tensors[t]->data, v, q8_tensor_nbytes(g->tensors[t]));
}

static void ci(q8_graph *g, const char *name, int n, const int64_t *v) {
    int64_t d = n;
    cdata(g, name, Q8_I64, 1, &d, v);
}

static void cf(q8_graph *g, const char *name, int n, const float *v) {
    int64_t d = n;
    cdata(g, name, Q8_F32, 1, &d, v);
}

static void scalar(q8_graph *g, const char *name, q8_dtype dt, const void *v) {
    cdata(g, name, dt, 0, NULL, v);
}

/* node(g, "Op", "a,b", "y"): "" entries are absent optional inputs */
static q8_node *node(q8_graph *g, const char *op, const char *ins, const char *outs) {
    int in[16], out[8], ni = 0, no = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", ins);
    for (char *p = buf, *e; p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        if (*p || e) in[ni++] = *p ? T(g, p) : -1;
    }
    snprintf(buf, sizeof buf, "%s", outs);
    for (char *p = buf, *e; p; p = e ? e + 1 : NULL) {
        e = strchr(p, ',');
        if (e) *e = 0;
        out[no++] = *p ? T(g, p) : -1;
    }
    int k = q8_graph_add_node(g, op, op);
    cr_assert(k >= 0);
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, ni, out, no, NULL), Q8_OK);
    return g->nodes[k];
}

static void a_int(q8_node *n, const char *name, int64_t v) {
    q8_node_set_attr(n, name, Q8_ATTR_INT)->i = v;
}
static void a_float(q8_node *n, const char *name, float v) {
    q8_node_set_attr(n, name, Q8_ATTR_FLOAT)->f = v;
}
static void a_str(q8_node *n, const char *name, const char *v) {
    q8_node_set_attr(n, name, Q8_ATTR_STRING)->s = q8_strdup(v);
}
static void a_ints(q8_node *n, const char *name, const int64_t *v, int count) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_INTS);
    a->n = count;
    a->ints = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
    if (count) memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
}
static void a_floats(q8_node *n, const char *name, const float *v, int count) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_FLOATS);
    a->n = count;
    a->floats = malloc(sizeof(float) * (size_t)(count ? count : 1));
    if (count) memcpy(a->floats, v, sizeof(float) * (size_t)count);
}

/* ---- running and comparing ---- */

#define MAX_OUT 4

typedef struct outs {
    int n;
    void *d[MAX_OUT];
    q8_tensor_info info[MAX_OUT];
} outs;

static size_t info_bytes(const q8_tensor_info *in) {
    int64_t n = 1;
    for (int i = 0; i < in->ndim; i++) n *= in->dims[i];
    return (size_t)n * q8_dtype_size(in->dtype);
}

static void run(q8_graph *g, const void *const *data, outs *o, const char *what) {
    q8_error err = {0};
    o->n = g->n_outputs;
    cr_assert(o->n <= MAX_OUT);
    q8_status s = q8t_run(g, data, 2, o->d, o->info, MAX_OUT, &err);
    cr_assert_eq(s, Q8_OK, "%s: %s", what, err.msg);
}

static void outs_free(outs *o) {
    for (int k = 0; k < o->n; k++) free(o->d[k]);
}

/* The old form and the canonical one (both consumed) give the same output
 * bytes; with same_shape, the same shapes too. */
static void same(q8_graph *old, q8_graph *canon, const void *const *data, bool same_shape,
                 const char *what) {
    outs a, b;
    run(old, data, &a, what);
    run(canon, data, &b, what);
    cr_assert_eq(a.n, b.n, "%s: output count", what);
    for (int k = 0; k < a.n; k++) {
        cr_assert_eq(a.info[k].dtype, b.info[k].dtype, "%s: output %d dtype", what, k);
        size_t nb = info_bytes(&a.info[k]);
        cr_assert_eq(nb, info_bytes(&b.info[k]), "%s: output %d size", what, k);
        if (same_shape) {
            cr_assert_eq(a.info[k].ndim, b.info[k].ndim, "%s: output %d rank", what, k);
            for (int d = 0; d < a.info[k].ndim; d++)
                cr_assert_eq(a.info[k].dims[d], b.info[k].dims[d], "%s: output %d dim %d", what,
                             k, d);
        }
        cr_assert(memcmp(a.d[k], b.d[k], nb) == 0, "%s: output %d bytes differ", what, k);
    }
    outs_free(&a);
    outs_free(&b);
}

/* The graph (consumed) fails with a message containing substr, which names
 * the node. */
static void fails(q8_graph *g, const void *const *data, const char *node_name,
                  const char *substr) {
    q8_error err = {0};
    outs o = {0};
    q8_status s = q8t_run(g, data, 1, o.d, o.info, MAX_OUT, &err);
    cr_assert_neq(s, Q8_OK, "expected an error containing '%s'", substr);
    cr_assert(strstr(err.msg, substr), "message '%s' lacks '%s'", err.msg, substr);
    char who[96];
    snprintf(who, sizeof who, "node '%s'", node_name);
    cr_assert(strstr(err.msg, who), "message '%s' does not name %s", err.msg, who);
}

static void fill(float *x, int64_t n, uint64_t seed) {
    q8t_rng r = q8t_seed(seed);
    q8t_fill(&r, x, n, -3, 3);
}

#define CANON Q8_OPSET_CANONICAL

/* ---- the pass itself ---- */

Test(canonicalize, attributes_become_constant_inputs_and_opset_is_canonical) {
    q8_graph *g = graph(11);
    int64_t d[3] = {2, 1, 3}, ax[1] = {1};
    input(g, "x", Q8_F32, 3, d);
    a_ints(node(g, "Squeeze", "x", "y"), "axes", ax, 1);
    q8_node *ms = node(g, "Squeeze", "y", "z"); /* another domain: left alone */
    free(ms->domain);
    ms->domain = q8_strdup("com.example");
    a_ints(ms, "axes", ax, 1);
    output(g, "z");
    q8_error err = {0};
    cr_assert_eq(q8_pass_canonicalize(g, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->opset, CANON);
    q8_node *n = g->nodes[0];
    cr_assert_eq(n->n_inputs, 2);
    cr_assert_null(q8_attr_find(n, "axes"));
    const q8_tensor *t = g->tensors[n->inputs[1]];
    cr_assert(t->data && t->dtype == Q8_I64 && t->ndim == 1 && t->dims[0] == 1);
    cr_assert_eq(((const int64_t *)t->data)[0], 1);
    cr_assert_eq(g->nodes[1]->n_inputs, 1);
    cr_assert_not_null(q8_attr_find(g->nodes[1], "axes"));
    /* a second run changes nothing */
    int nt = g->n_tensors;
    cr_assert_eq(q8_pass_canonicalize(g, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(g->n_tensors, nt);
    cr_assert_eq(g->nodes[0]->n_inputs, 2);
    q8_graph_free(g);
}

Test(canonicalize, subgraphs_too) {
    /* an If whose branches use Unsqueeze-11: inlined after canonicalization */
    for (int cond = 0; cond < 2; cond++) {
        q8_graph *g = graph(11);
        int64_t d[1] = {3}, ax[1] = {0};
        input(g, "x", Q8_F32, 1, d);
        uint8_t c = (uint8_t)cond;
        scalar(g, "cond", Q8_BOOL, &c);
        q8_node *n = node(g, "If", "cond", "y");
        const char *br[2] = {"else_branch", "then_branch"};
        for (int k = 0; k < 2; k++) {
            q8_graph *b = graph(11);
            b->parent = g;
            int xo = T(b, "x");
            b->tensors[xo]->outer = true;
            int64_t axk[1] = {k};
            a_ints(node(b, "Unsqueeze", "x", k ? "r1" : "r0"), "axes", k ? axk : ax, 1);
            output(b, k ? "r1" : "r0");
            q8_node_set_attr(n, br[k], Q8_ATTR_GRAPH)->g = b;
        }
        output(g, "y");
        float x[3] = {1, 2, 3};
        const void *data[1] = {x};
        outs o;
        run(g, data, &o, "If");
        cr_assert_eq(o.info[0].ndim, 2);
        cr_assert_eq(o.info[0].dims[0], cond ? 3 : 1);
        cr_assert(memcmp(o.d[0], x, sizeof x) == 0);
        outs_free(&o);
    }
}

/* ---- attributes that became inputs ---- */

Test(canonicalize, clip_bounds) {
    float x[8] = {-INFINITY, -5, -1, 0, 0.5f, 2, INFINITY, NAN};
    const void *data[1] = {x};
    int64_t d[1] = {8};
    /* min and max */
    q8_graph *o = graph(6), *c = graph(CANON);
    input(o, "x", Q8_F32, 1, d);
    q8_node *n = node(o, "Clip", "x", "y");
    a_float(n, "min", -1);
    a_float(n, "max", 1.5f);
    output(o, "y");
    float lo = -1, hi = 1.5f;
    input(c, "x", Q8_F32, 1, d);
    scalar(c, "lo", Q8_F32, &lo);
    scalar(c, "hi", Q8_F32, &hi);
    node(c, "Clip", "x,lo,hi", "y");
    output(c, "y");
    same(o, c, data, true, "Clip-6 min, max");
    /* none: Clip-6's defaults are the float range, so infinities are clipped */
    o = graph(6);
    c = graph(CANON);
    input(o, "x", Q8_F32, 1, d);
    node(o, "Clip", "x", "y");
    output(o, "y");
    lo = -FLT_MAX;
    hi = FLT_MAX;
    input(c, "x", Q8_F32, 1, d);
    scalar(c, "lo", Q8_F32, &lo);
    scalar(c, "hi", Q8_F32, &hi);
    node(c, "Clip", "x,lo,hi", "y");
    output(c, "y");
    same(o, c, data, true, "Clip-6 defaults");
    /* float64 data takes float64 bounds */
    double xd[4] = {-3, 0.25, 7, -0.5};
    const void *dd[1] = {xd};
    int64_t d4[1] = {4};
    o = graph(6);
    c = graph(CANON);
    input(o, "x", Q8_F64, 1, d4);
    a_float(node(o, "Clip", "x", "y"), "min", -0.5f);
    output(o, "y");
    double lo64 = -0.5, hi64 = FLT_MAX;
    input(c, "x", Q8_F64, 1, d4);
    scalar(c, "lo", Q8_F64, &lo64);
    scalar(c, "hi", Q8_F64, &hi64);
    node(c, "Clip", "x,lo,hi", "y");
    output(c, "y");
    same(o, c, dd, true, "Clip-6 float64");
}

Test(canonicalize, clip_errors) {
    int64_t d[1] = {4};
    int32_t xi[4] = {1, 2, 3, 4};
    const void *data[1] = {xi};
    q8_graph *g = graph(6);
    input(g, "x", Q8_I32, 1, d);
    node(g, "Clip", "x", "y");
    output(g, "y");
    fails(g, data, "Clip", "dtype int32 is not supported");
    g = graph(6);
    input(g, "x", Q8_F32, 1, d);
    float lo = 0;
    scalar(g, "lo", Q8_F32, &lo);
    node(g, "Clip", "x,lo", "y");
    output(g, "y");
    fails(g, data, "Clip", "has 2 inputs, expected 1 to 1");
}

static q8_graph *pad_old(q8_dtype dt, const char *mode, bool value, float v) {
    q8_graph *g = graph(2);
    int64_t d[2] = {3, 4}, pads[4] = {1, 0, 2, -1};
    input(g, "x", dt, 2, d);
    q8_node *n = node(g, "Pad", "x", "y");
    a_ints(n, "pads", pads, 4);
    if (mode) a_str(n, "mode", mode);
    if (value) a_float(n, "value", v);
    output(g, "y");
    return g;
}

static q8_graph *pad_canon(q8_dtype dt, const char *mode, const void *value) {
    q8_graph *g = graph(CANON);
    int64_t d[2] = {3, 4}, pads[4] = {1, 0, 2, -1};
    input(g, "x", dt, 2, d);
    ci(g, "pads", 4, pads);
    if (value) scalar(g, "v", dt, value);
    q8_node *n = node(g, "Pad", value ? "x,pads,v" : "x,pads", "y");
    if (mode) a_str(n, "mode", mode);
    output(g, "y");
    return g;
}

Test(canonicalize, pad_attributes) {
    float x[12];
    fill(x, 12, 1);
    const void *data[1] = {x};
    float v = 2.5f, nz = -0.0f;
    same(pad_old(Q8_F32, NULL, false, 0), pad_canon(Q8_F32, NULL, NULL), data, true, "Pad-2");
    same(pad_old(Q8_F32, "constant", true, 2.5f), pad_canon(Q8_F32, "constant", &v), data, true,
         "Pad-2 value");
    same(pad_old(Q8_F32, "constant", true, -0.0f), pad_canon(Q8_F32, "constant", &nz), data,
         true, "Pad-2 value -0");
    same(pad_old(Q8_F32, "constant", true, 0.0f), pad_canon(Q8_F32, "constant", NULL), data, true,
         "Pad-2 value 0");
    same(pad_old(Q8_F32, "reflect", false, 0), pad_canon(Q8_F32, "reflect", NULL), data, true,
         "Pad-2 reflect");
    same(pad_old(Q8_F32, "edge", false, 0), pad_canon(Q8_F32, "edge", NULL), data, true,
         "Pad-2 edge");
    /* the value in the data's dtype */
    int32_t xi[12], vi = 7;
    for (int i = 0; i < 12; i++) xi[i] = i * 3 - 5;
    const void *di[1] = {xi};
    same(pad_old(Q8_I32, NULL, true, 7.9f), pad_canon(Q8_I32, NULL, &vi), di, true,
         "Pad-2 int32 value");
}

Test(canonicalize, pad_errors) {
    float x[12] = {0};
    const void *data[1] = {x};
    q8_graph *g = graph(2);
    int64_t d[2] = {3, 4}, pads[4] = {1, 0, 2, 0};
    input(g, "x", Q8_F32, 2, d);
    node(g, "Pad", "x", "y");
    output(g, "y");
    fails(g, data, "Pad", "pads are missing");
    /* an attribute where opset 11 has an input */
    g = graph(11);
    input(g, "x", Q8_F32, 2, d);
    ci(g, "p", 4, pads);
    a_ints(node(g, "Pad", "x,p", "y"), "pads", pads, 4);
    output(g, "y");
    fails(g, data, "Pad", "'pads' is an input since opset 11, not an attribute (model opset 11)");
    /* the axes input is opset 18's */
    g = graph(13);
    int64_t axes[2] = {0, 1};
    input(g, "x", Q8_F32, 2, d);
    ci(g, "p", 4, pads);
    ci(g, "a", 2, axes);
    node(g, "Pad", "x,p,,a", "y");
    output(g, "y");
    fails(g, data, "Pad", "has 4 inputs, expected 2 to 3");
    /* a value float16 data cannot take */
    uint16_t h[12] = {0};
    const void *dh[1] = {h};
    g = pad_old(Q8_F16, NULL, true, 1.0f);
    fails(g, dh, "Pad", "a pad value for float16 data");
}

Test(canonicalize, slice_attributes) {
    float x[4 * 5];
    fill(x, 20, 2);
    const void *data[1] = {x};
    int64_t d[2] = {4, 5}, st[2] = {1, -4}, en[2] = {INT64_MAX, 4}, ax[2] = {0, 1};
    for (int with_axes = 0; with_axes < 2; with_axes++) {
        q8_graph *o = graph(1), *c = graph(CANON);
        input(o, "x", Q8_F32, 2, d);
        q8_node *n = node(o, "Slice", "x", "y");
        a_ints(n, "starts", st, 2);
        a_ints(n, "ends", en, 2);
        if (with_axes) a_ints(n, "axes", ax, 2);
        output(o, "y");
        input(c, "x", Q8_F32, 2, d);
        ci(c, "s", 2, st);
        ci(c, "e", 2, en);
        ci(c, "a", 2, ax);
        node(c, "Slice", with_axes ? "x,s,e,a" : "x,s,e", "y");
        output(c, "y");
        same(o, c, data, true, "Slice-1");
    }
}

Test(canonicalize, slice_errors) {
    float x[20] = {0};
    const void *data[1] = {x};
    int64_t d[2] = {4, 5}, st[1] = {1};
    q8_graph *g = graph(1);
    input(g, "x", Q8_F32, 2, d);
    a_ints(node(g, "Slice", "x", "y"), "starts", st, 1);
    output(g, "y");
    fails(g, data, "Slice", "starts and ends are required");
    g = graph(10);
    input(g, "x", Q8_F32, 2, d);
    ci(g, "s", 1, st);
    ci(g, "e", 1, st);
    a_ints(node(g, "Slice", "x,s,e", "y"), "axes", st, 1);
    output(g, "y");
    fails(g, data, "Slice", "'axes' is an input since opset 10, not an attribute");
    g = graph(1);
    input(g, "x", Q8_F32, 2, d);
    q8_node *n = node(g, "Slice", "x", "y");
    a_ints(n, "starts", st, 1);
    a_str(n, "ends", "4");
    output(g, "y");
    fails(g, data, "Slice", "attribute 'ends' must be a list of ints");
}

Test(canonicalize, squeeze_unsqueeze_axes) {
    float x[6];
    fill(x, 6, 3);
    const void *data[1] = {x};
    int64_t d[4] = {1, 2, 1, 3}, ax[2] = {0, -2}, uax[2] = {1, -1};
    const char *ops[2] = {"Squeeze", "Unsqueeze"};
    for (int k = 0; k < 2; k++)
        for (int given = 0; given < 2; given++) {
            if (k == 1 && !given) continue; /* Unsqueeze needs axes */
            q8_graph *o = graph(11), *c = graph(CANON);
            input(o, "x", Q8_F32, 4, d);
            q8_node *n = node(o, ops[k], "x", "y");
            if (given) a_ints(n, "axes", k ? uax : ax, 2);
            output(o, "y");
            input(c, "x", Q8_F32, 4, d);
            ci(c, "a", 2, k ? uax : ax);
            node(c, ops[k], given ? "x,a" : "x", "y");
            output(c, "y");
            same(o, c, data, true, ops[k]);
        }
    q8_graph *g = graph(13);
    input(g, "x", Q8_F32, 4, d);
    a_ints(node(g, "Squeeze", "x", "y"), "axes", ax, 2);
    output(g, "y");
    fails(g, data, "Squeeze",
          "'axes' is an input since opset 13, not an attribute (model opset 13)");
    g = graph(11);
    input(g, "x", Q8_F32, 4, d);
    node(g, "Unsqueeze", "x", "y");
    output(g, "y");
    fails(g, data, "Unsqueeze", "axes are missing");
}

Test(canonicalize, split_sizes) {
    float x[2 * 7];
    fill(x, 14, 4);
    const void *data[1] = {x};
    int64_t d[2] = {2, 7}, sp[3] = {2, 4, 1};
    for (int given = 0; given < 2; given++) {
        int64_t dd[2] = {2, given ? 7 : 6};
        q8_graph *o = graph(11), *c = graph(CANON);
        input(o, "x", Q8_F32, 2, dd);
        q8_node *n = node(o, "Split", "x", "a,b,c");
        a_int(n, "axis", 1);
        if (given) a_ints(n, "split", sp, 3);
        output(o, "a");
        output(o, "b");
        output(o, "c");
        input(c, "x", Q8_F32, 2, dd);
        ci(c, "s", 3, sp);
        a_int(node(c, "Split", given ? "x,s" : "x", "a,b,c"), "axis", 1);
        output(c, "a");
        output(c, "b");
        output(c, "c");
        same(o, c, data, true, "Split-11");
    }
    q8_graph *g = graph(13);
    input(g, "x", Q8_F32, 2, d);
    a_ints(node(g, "Split", "x", "a,b,c"), "split", sp, 3);
    output(g, "a");
    fails(g, data, "Split", "'split' is an input since opset 13, not an attribute");
}

Test(canonicalize, reduce_axes) {
    float x[2 * 3 * 4];
    fill(x, 24, 5);
    const void *data[1] = {x};
    int64_t d[3] = {2, 3, 4}, ax[2] = {-1, 0};
    const char *ops[3] = {"ReduceMean", "ReduceSum", "ReduceMax"};
    int opsets[3] = {13, 11, 17};
    for (int k = 0; k < 3; k++) {
        q8_graph *o = graph(opsets[k]), *c = graph(CANON);
        input(o, "x", Q8_F32, 3, d);
        q8_node *n = node(o, ops[k], "x", "y");
        a_ints(n, "axes", ax, 2);
        a_int(n, "keepdims", 0);
        output(o, "y");
        input(c, "x", Q8_F32, 3, d);
        ci(c, "a", 2, ax);
        a_int(node(c, ops[k], "x,a", "y"), "keepdims", 0);
        output(c, "y");
        same(o, c, data, true, ops[k]);
    }
    /* an empty list: everything, as without axes */
    q8_graph *o = graph(13), *c = graph(CANON);
    input(o, "x", Q8_F32, 3, d);
    a_ints(node(o, "ReduceMean", "x", "y"), "axes", ax, 0);
    output(o, "y");
    input(c, "x", Q8_F32, 3, d);
    node(c, "ReduceMean", "x", "y");
    output(c, "y");
    same(o, c, data, true, "ReduceMean axes []");
    q8_graph *g = graph(13);
    input(g, "x", Q8_F32, 3, d);
    ci(g, "a", 2, ax);
    a_ints(node(g, "ReduceMean", "x,a", "y"), "axes", ax, 2);
    output(g, "y");
    fails(g, data, "ReduceMean", "axes are given both as attribute and input");
    g = graph(13);
    input(g, "x", Q8_F32, 3, d);
    a_int(node(g, "ReduceMean", "x", "y"), "axes", 1);
    output(g, "y");
    fails(g, data, "ReduceMean", "axes must be a list of ints");
}

Test(canonicalize, reshape_shape) {
    float x[24];
    fill(x, 24, 6);
    const void *data[1] = {x};
    int64_t d[3] = {2, 3, 4}, sh[3] = {0, -1, 2};
    q8_graph *o = graph(1), *c = graph(CANON);
    input(o, "x", Q8_F32, 3, d);
    a_ints(node(o, "Reshape", "x", "y"), "shape", sh, 3);
    output(o, "y");
    input(c, "x", Q8_F32, 3, d);
    ci(c, "s", 3, sh);
    node(c, "Reshape", "x,s", "y");
    output(c, "y");
    same(o, c, data, true, "Reshape-1");
    q8_graph *g = graph(1);
    input(g, "x", Q8_F32, 3, d);
    node(g, "Reshape", "x", "y");
    output(g, "y");
    fails(g, data, "Reshape", "attribute 'shape' is missing");
    g = graph(4);
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 2, 3, 4};
    input(g, "x", Q8_F32, 3, d);
    a_ints(node(g, "Reshape", "x", "y"), "shape", nine, 9);
    output(g, "y");
    fails(g, data, "Reshape", "shape has 9 dims, at most 8 supported");
}

/* DFT < 20: the axis attribute (default 1) is input 2, a constant. */
Test(canonicalize, dft_axis) {
    float x[2 * 5 * 3 * 2];
    fill(x, 60, 20);
    const void *data[1] = {x};
    int64_t d[4] = {2, 5, 3, 2};
    for (int k = 0; k < 3; k++) {
        int64_t axis = k == 0 ? 1 : k == 1 ? 2 : -3; /* k 0: the attribute left out */
        q8_graph *o = graph(17), *c = graph(CANON);
        input(o, "x", Q8_F32, 4, d);
        q8_node *n = node(o, "DFT", "x", "y");
        if (k) a_int(n, "axis", axis);
        a_int(n, "onesided", 1);
        output(o, "y");
        input(c, "x", Q8_F32, 4, d);
        scalar(c, "axis", Q8_I64, &axis);
        a_int(node(c, "DFT", "x,,axis", "y"), "onesided", 1);
        output(c, "y");
        same(o, c, data, true, "DFT-17 axis");
    }
    q8_graph *g = graph(20);
    input(g, "x", Q8_F32, 4, d);
    a_int(node(g, "DFT", "x", "y"), "axis", 1);
    output(g, "y");
    fails(g, data, "DFT", "'axis' is an input since opset 20");
    g = graph(17);
    int64_t one = 1;
    input(g, "x", Q8_F32, 4, d);
    scalar(g, "axis", Q8_I64, &one);
    node(g, "DFT", "x,,axis", "y");
    output(g, "y");
    fails(g, data, "DFT", "has 3 inputs, expected 1 to 2");
}

Test(canonicalize, tile_1_is_unsupported) {
    float x[2] = {0};
    const void *data[1] = {x};
    int64_t d[1] = {2}, rep[1] = {2};
    q8_graph *g = graph(5);
    input(g, "x", Q8_F32, 1, d);
    ci(g, "r", 1, rep);
    node(g, "Tile", "x,r", "y");
    output(g, "y");
    fails(g, data, "Tile", "Tile-1 (tiles/axis inputs) is not supported");
}

Test(canonicalize, dropout_ratio_and_mask) {
    float x[6];
    fill(x, 6, 7);
    const void *data[1] = {x};
    int64_t d[2] = {2, 3};
    /* ratio attribute (< 12) and the bool mask (10, 11) */
    q8_graph *o = graph(10), *c = graph(CANON);
    input(o, "x", Q8_F32, 2, d);
    a_float(node(o, "Dropout", "x", "y,m"), "ratio", 0.25f);
    output(o, "y");
    output(o, "m");
    float r = 0.25f;
    input(c, "x", Q8_F32, 2, d);
    scalar(c, "r", Q8_F32, &r);
    node(c, "Dropout", "x,r", "y,m");
    output(c, "y");
    output(c, "m");
    same(o, c, data, true, "Dropout-10");
    /* Dropout-7's mask has the data's type: ones */
    o = graph(7);
    input(o, "x", Q8_F32, 2, d);
    node(o, "Dropout", "x", "y,m");
    output(o, "y");
    output(o, "m");
    outs got;
    run(o, data, &got, "Dropout-7");
    cr_assert_eq(got.info[1].dtype, Q8_F32);
    cr_assert(memcmp(got.d[0], x, sizeof x) == 0);
    for (int i = 0; i < 6; i++) cr_assert_eq(((float *)got.d[1])[i], 1.0f);
    outs_free(&got);
    q8_graph *g = graph(11);
    input(g, "x", Q8_F32, 2, d);
    scalar(g, "r", Q8_F32, &r);
    node(g, "Dropout", "x,r", "y");
    output(g, "y");
    fails(g, data, "Dropout", "has 2 inputs, expected 1 to 1");
}

/* ---- rewrites completed once shapes are known ---- */

Test(canonicalize, softmax_before_13) {
    float x[2 * 3 * 4];
    fill(x, 24, 8);
    const void *data[1] = {x};
    int64_t d[3] = {2, 3, 4}, d2[2] = {2, 12}, d1[2] = {6, 4};
    const char *ops[2] = {"Softmax", "LogSoftmax"};
    for (int k = 0; k < 2; k++) {
        /* default axis 1: rows of 3 x 4 values; the canonical op on [2, 12] */
        q8_graph *o = graph(11), *c = graph(CANON);
        input(o, "x", Q8_F32, 3, d);
        node(o, ops[k], "x", "y");
        output(o, "y");
        input(c, "x", Q8_F32, 2, d2);
        node(c, ops[k], "x", "y");
        output(c, "y");
        same(o, c, data, false, ops[k]);
        /* axis -1 (and 2): the same rows as the canonical op's */
        for (int a = 0; a < 2; a++) {
            o = graph(11);
            c = graph(CANON);
            input(o, "x", Q8_F32, 3, d);
            a_int(node(o, ops[k], "x", "y"), "axis", a ? 2 : -1);
            output(o, "y");
            input(c, "x", Q8_F32, 3, d);
            node(c, ops[k], "x", "y");
            output(c, "y");
            same(o, c, data, true, ops[k]);
        }
        /* axis -2 on [2, 3, 4]: rows of 12 on a 2-D view */
        o = graph(12);
        c = graph(CANON);
        input(o, "x", Q8_F32, 3, d);
        a_int(node(o, ops[k], "x", "y"), "axis", -2);
        output(o, "y");
        input(c, "x", Q8_F32, 2, d2);
        node(c, ops[k], "x", "y");
        output(c, "y");
        same(o, c, data, false, ops[k]);
        /* trailing dims of 1: one node, len = dims[axis] */
        int64_t d4[4] = {6, 4, 1, 1};
        o = graph(11);
        c = graph(CANON);
        input(o, "x", Q8_F32, 4, d4);
        node(o, ops[k], "x", "y");
        output(o, "y");
        input(c, "x", Q8_F32, 2, d1);
        node(c, ops[k], "x", "y");
        output(c, "y");
        same(o, c, data, false, ops[k]);
    }
    /* the output keeps the input's shape */
    q8_graph *o = graph(11);
    input(o, "x", Q8_F32, 3, d);
    node(o, "Softmax", "x", "y");
    output(o, "y");
    outs got;
    run(o, data, &got, "Softmax-11");
    cr_assert_eq(got.info[0].ndim, 3);
    cr_assert_eq(got.info[0].dims[2], 4);
    outs_free(&got);
    q8_graph *g = graph(11);
    input(g, "x", Q8_F32, 3, d);
    a_int(node(g, "Softmax", "x", "y"), "axis", 3);
    output(g, "y");
    fails(g, data, "Softmax", "axis 3 is out of range for rank 3");
}

Test(canonicalize, legacy_axis_broadcast) {
    float a[2 * 3 * 4], b[3];
    fill(a, 24, 9);
    fill(b, 3, 10);
    int64_t da[3] = {2, 3, 4}, db[1] = {3}, db2[2] = {3, 1};
    const char *ops[3] = {"Add", "Mul", "Sub"};
    for (int k = 0; k < 3; k++)
        for (int cst = 0; cst < 2; cst++) {
            /* B as a graph input (a Reshape node) or a constant (folded) */
            q8_graph *o = graph(6), *c = graph(CANON);
            input(o, "a", Q8_F32, 3, da);
            if (cst) cdata(o, "b", Q8_F32, 1, db, b);
            else input(o, "b", Q8_F32, 1, db);
            q8_node *n = node(o, ops[k], "a,b", "y");
            a_int(n, "broadcast", 1);
            a_int(n, "axis", 1);
            output(o, "y");
            input(c, "a", Q8_F32, 3, da);
            if (cst) cdata(c, "b", Q8_F32, 2, db2, b);
            else input(c, "b", Q8_F32, 2, db2);
            node(c, ops[k], "a,b", "y");
            output(c, "y");
            const void *data[2] = {a, b};
            same(o, c, data, true, ops[k]);
        }
    /* broadcast=1 without axis: numpy's trailing alignment */
    int64_t d4[1] = {4};
    float b4[4];
    fill(b4, 4, 17);
    q8_graph *o = graph(6), *c = graph(CANON);
    input(o, "a", Q8_F32, 3, da);
    input(o, "b", Q8_F32, 1, d4);
    a_int(node(o, "Add", "a,b", "y"), "broadcast", 1);
    output(o, "y");
    input(c, "a", Q8_F32, 3, da);
    input(c, "b", Q8_F32, 1, d4);
    node(c, "Add", "a,b", "y");
    output(c, "y");
    const void *data[2] = {a, b};
    const void *data4[2] = {a, b4};
    same(o, c, data4, true, "Add-6 trailing");
    q8_graph *g = graph(6);
    input(g, "a", Q8_F32, 3, da);
    input(g, "b", Q8_F32, 1, db);
    q8_node *n = node(g, "Add", "a,b", "y");
    a_int(n, "broadcast", 1);
    a_int(n, "axis", 3);
    output(g, "y");
    fails(g, data, "Add", "axis 3 does not place B (rank 1) inside A (rank 3)");
}

Test(canonicalize, prelu_channel_slope) {
    float x[2 * 3 * 4 * 5], s[3];
    fill(x, 120, 11);
    fill(s, 3, 12);
    const void *data[1] = {x};
    int64_t dx[4] = {2, 3, 4, 5}, ds[1] = {3}, ds3[3] = {3, 1, 1};
    q8_graph *o = graph(6), *c = graph(CANON);
    input(o, "x", Q8_F32, 4, dx);
    cdata(o, "s", Q8_F32, 1, ds, s);
    node(o, "PRelu", "x,s", "y");
    output(o, "y");
    input(c, "x", Q8_F32, 4, dx);
    cdata(c, "s", Q8_F32, 3, ds3, s);
    node(c, "PRelu", "x,s", "y");
    output(c, "y");
    same(o, c, data, true, "PRelu-6");
    /* a slope of W's length that is not C's: numpy's broadcast, as at 7 */
    float s5[5];
    fill(s5, 5, 13);
    int64_t ds5[1] = {5};
    o = graph(6);
    c = graph(CANON);
    input(o, "x", Q8_F32, 4, dx);
    cdata(o, "s", Q8_F32, 1, ds5, s5);
    node(o, "PRelu", "x,s", "y");
    output(o, "y");
    input(c, "x", Q8_F32, 4, dx);
    cdata(c, "s", Q8_F32, 1, ds5, s5);
    node(c, "PRelu", "x,s", "y");
    output(c, "y");
    same(o, c, data, true, "PRelu-6 numpy");
}

static q8_graph *resize_old(const char *op, int opset, const char *mode, const float *sc,
                            bool attr) {
    q8_graph *g = graph(opset);
    int64_t d[4] = {1, 2, 5, 6}, four[1] = {4};
    input(g, "x", Q8_F32, 4, d);
    if (!attr) cdata(g, "s", Q8_F32, 1, four, sc);
    q8_node *n = node(g, op, attr ? "x" : "x,s", "y");
    if (attr) a_floats(n, "scales", sc, 4);
    if (mode) a_str(n, "mode", mode);
    output(g, "y");
    return g;
}

static q8_graph *resize_canon(const char *mode, const char *nearest, const float *sc) {
    q8_graph *g = graph(CANON);
    int64_t d[4] = {1, 2, 5, 6};
    input(g, "x", Q8_F32, 4, d);
    cf(g, "s", 4, sc);
    q8_node *n = node(g, "Resize", "x,,s", "y");
    a_str(n, "mode", mode);
    a_str(n, "coordinate_transformation_mode", "asymmetric");
    a_str(n, "nearest_mode", nearest);
    output(g, "y");
    return g;
}

Test(canonicalize, resize_10_and_upsample) {
    float x[60];
    fill(x, 60, 14);
    const void *data[1] = {x};
    float up[4] = {1, 1, 2.5f, 3}, down[4] = {1, 1, 0.6f, 0.5f}, mixed[4] = {1, 1, 0.6f, 1.7f};
    /* nearest: floor where a dim grows, ceil where it shrinks */
    same(resize_old("Resize", 10, NULL, up, false), resize_canon("nearest", "floor", up), data,
         true, "Resize-10 nearest up");
    same(resize_old("Resize", 10, "nearest", down, false), resize_canon("nearest", "ceil", down),
         data, true, "Resize-10 nearest down");
    same(resize_old("Upsample", 7, NULL, up, true), resize_canon("nearest", "floor", up), data,
         true, "Upsample-7");
    same(resize_old("Upsample", 9, "nearest", down, false), resize_canon("nearest", "ceil", down),
         data, true, "Upsample-9 down");
    same(resize_old("Upsample", 9, "bilinear", up, false), resize_canon("linear", "floor", up),
         data, true, "Upsample-9 bilinear");
    same(resize_old("Resize", 10, "linear", mixed, false), resize_canon("linear", "floor", mixed),
         data, true, "Resize-10 linear");
    /* a dim that grows and one that shrinks: one Resize each, in turn */
    q8_graph *c = graph(CANON);
    int64_t d[4] = {1, 2, 5, 6};
    float grow[4] = {1, 1, 1, 1.7f}, shrink[4] = {1, 1, 0.6f, 1};
    input(c, "x", Q8_F32, 4, d);
    cf(c, "g", 4, grow);
    cf(c, "s", 4, shrink);
    q8_node *n = node(c, "Resize", "x,,g", "t");
    a_str(n, "coordinate_transformation_mode", "asymmetric");
    a_str(n, "nearest_mode", "floor");
    n = node(c, "Resize", "t,,s", "y");
    a_str(n, "coordinate_transformation_mode", "asymmetric");
    a_str(n, "nearest_mode", "ceil");
    output(c, "y");
    same(resize_old("Resize", 10, "nearest", mixed, false), c, data, true, "Resize-10 mixed");
}

Test(canonicalize, upsample_errors) {
    float x[60] = {0}, up[4] = {1, 1, 2, 2};
    const void *data[1] = {x};
    fails(resize_old("Upsample", 9, "cubic", up, false), data, "Upsample",
          "mode is 'cubic', expected nearest, linear");
    q8_graph *g = graph(7);
    int64_t d[4] = {1, 2, 5, 6};
    input(g, "x", Q8_F32, 4, d);
    node(g, "Upsample", "x", "y");
    output(g, "y");
    fails(g, data, "Upsample", "Upsample needs scales (attribute or input)");
    float three[3] = {1, 2, 2};
    g = graph(7);
    input(g, "x", Q8_F32, 4, d);
    a_floats(node(g, "Upsample", "x", "y"), "scales", three, 3);
    output(g, "y");
    fails(g, data, "Upsample", "scales has 3 values, expected 4");
    g = graph(10);
    input(g, "x", Q8_F32, 4, d);
    node(g, "Resize", "x", "y");
    output(g, "y");
    fails(g, data, "Resize", "has 1 inputs, expected 2 to 2");
}

Test(canonicalize, batchnorm_spatial) {
    float x[2 * 3 * 2 * 2], st[4][12];
    fill(x, 24, 15);
    for (int k = 0; k < 4; k++) fill(st[k], 12, 16 + (uint64_t)k);
    for (int i = 0; i < 12; i++) st[3][i] = fabsf(st[3][i]) + 0.1f; /* var */
    const void *data[1] = {x};
    int64_t dx[4] = {2, 3, 2, 2}, dc[1] = {3}, dp[3] = {3, 2, 2}, dflat[1] = {12};
    const char *names[4] = {"scale", "b", "mean", "var"};
    /* spatial=1 (the default): the canonical op */
    q8_graph *o = graph(7), *c = graph(CANON);
    input(o, "x", Q8_F32, 4, dx);
    input(c, "x", Q8_F32, 4, dx);
    for (int k = 0; k < 4; k++) {
        cdata(o, names[k], Q8_F32, 1, dc, st[k]);
        cdata(c, names[k], Q8_F32, 1, dc, st[k]);
    }
    a_int(node(o, "BatchNormalization", "x,scale,b,mean,var", "y"), "spatial", 1);
    node(c, "BatchNormalization", "x,scale,b,mean,var", "y");
    output(o, "y");
    output(c, "y");
    same(o, c, data, true, "BatchNormalization-7 spatial=1");
    /* spatial=0: statistics per element of C x H x W (given flat or shaped),
     * the same as the arithmetic in canonical ops */
    for (int flat = 0; flat < 2; flat++) {
        o = graph(7);
        c = graph(CANON);
        input(o, "x", Q8_F32, 4, dx);
        input(c, "x", Q8_F32, 4, dx);
        for (int k = 0; k < 4; k++) {
            cdata(o, names[k], Q8_F32, flat ? 1 : 3, flat ? dflat : dp, st[k]);
            cdata(c, names[k], Q8_F32, 3, dp, st[k]);
        }
        q8_node *n = node(o, "BatchNormalization", "x,scale,b,mean,var", "y");
        a_int(n, "spatial", 0);
        a_float(n, "epsilon", 1e-3f);
        output(o, "y");
        float eps = 1e-3f;
        scalar(c, "eps", Q8_F32, &eps);
        node(c, "Add", "var,eps", "ve");
        node(c, "Sqrt", "ve", "sd");
        node(c, "Div", "scale,sd", "k");
        node(c, "Sub", "x,mean", "xc");
        node(c, "Mul", "xc,k", "xs");
        node(c, "Add", "xs,b", "y");
        output(c, "y");
        same(o, c, data, true, "BatchNormalization-7 spatial=0");
    }
    /* and what it computes */
    o = graph(8);
    input(o, "x", Q8_F32, 4, dx);
    for (int k = 0; k < 4; k++) cdata(o, names[k], Q8_F32, 3, dp, st[k]);
    a_int(node(o, "BatchNormalization", "x,scale,b,mean,var", "y"), "spatial", 0);
    output(o, "y");
    outs got;
    run(o, data, &got, "BatchNormalization-8 spatial=0");
    float want[24];
    for (int i = 0; i < 24; i++) {
        int e = i % 12;
        want[i] = (x[i] - st[2][e]) * (st[0][e] / sqrtf(st[3][e] + 1e-5f)) + st[1][e];
    }
    q8t_assert_close(got.d[0], want, 24, 1e-6f, 1e-6f, "spatial=0");
    outs_free(&got);
    /* per-channel statistics are not per element */
    q8_graph *g = graph(7);
    input(g, "x", Q8_F32, 4, dx);
    for (int k = 0; k < 4; k++) cdata(g, names[k], Q8_F32, 1, dc, st[k]);
    a_int(node(g, "BatchNormalization", "x,scale,b,mean,var", "y"), "spatial", 0);
    output(g, "y");
    fails(g, data, "BatchNormalization",
          "scale has shape 3 (3 values), expected 12 (C x D1 x ... for spatial=0)");
}

Test(canonicalize, quantize_linear_per_axis_needs_13) {
    float x[2 * 3];
    fill(x, 6, 20);
    const void *data[1] = {x};
    int64_t d[2] = {2, 3}, d3[1] = {3};
    float s1 = 0.05f, s3[3] = {0.05f, 0.1f, 0.02f};
    int8_t z = 3, z3[3] = {0, 1, -1};
    q8_graph *o = graph(10), *c = graph(CANON);
    input(o, "x", Q8_F32, 2, d);
    input(c, "x", Q8_F32, 2, d);
    scalar(o, "s", Q8_F32, &s1);
    scalar(c, "s", Q8_F32, &s1);
    scalar(o, "z", Q8_I8, &z);
    scalar(c, "z", Q8_I8, &z);
    node(o, "QuantizeLinear", "x,s,z", "y");
    node(c, "QuantizeLinear", "x,s,z", "y");
    output(o, "y");
    output(c, "y");
    same(o, c, data, true, "QuantizeLinear-10");
    q8_graph *g = graph(10);
    input(g, "x", Q8_F32, 2, d);
    cdata(g, "s", Q8_F32, 1, d3, s3);
    cdata(g, "z", Q8_I8, 1, d3, z3);
    node(g, "QuantizeLinear", "x,s,z", "y");
    output(g, "y");
    fails(g, data, "QuantizeLinear",
          "scale 's' has 3 values; per-axis scales need opset 13 (the model has 10)");
    int8_t xq[6] = {1, 2, 3, 4, 5, 6};
    const void *dq[1] = {xq};
    g = graph(12);
    input(g, "x", Q8_I8, 2, d);
    cdata(g, "s", Q8_F32, 1, d3, s3);
    node(g, "DequantizeLinear", "x,s", "y");
    output(g, "y");
    fails(g, dq, "DequantizeLinear", "per-axis scales need opset 13 (the model has 12)");
}
