/* Data movement that exporters leave around convolutions, folded away at
 * load (each was a full pass over a feature map at run time):
 * - a zero Pad of the spatial axes read only by a Conv becomes the Conv's
 *   own padding (Keras/TF exports pad explicitly for "same" convolutions);
 * - a Transpose read only by a Reduce that drops axes (keepdims 0) is
 *   folded into the Reduce's axes when the kept axes stay in order (NHWC
 *   heads: Transpose to NHWC, then ReduceMean over H and W);
 * - two Transposes in a row compose into one, or into nothing when they
 *   cancel (NCHW -> NHWC -> NCHW around layout-agnostic ops);
 * - Transpose -> Reshape -> Transpose, where the Reshape only splits and
 *   merges axes, becomes Reshape -> one Transpose -> Reshape (a TF export's
 *   detection head: to NHWC, [.., 255] split into 3 anchors x 85, anchors
 *   moved ahead of the pixels: two passes over the map, now one; the
 *   Reshapes are views).
 * The results are the same values: padding reads the same zeros, and a
 * reduction sums the same elements (in another order: the last bits of a
 * float sum may differ). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "ops/pad.h"
#include "passes.h"

static bool is_onnx(const q8_node *n, const char *op) {
    return !n->dead && !*n->domain && strcmp(n->op_type, op) == 0;
}

/* The live node that writes t and t's only reader is the node at hand. */
static q8_node *single_use_producer(q8_graph *g, int t, const int *uses) {
    if (t < 0 || uses[t] != 1 || q8_graph_is_output(g, t)) return NULL;
    int p = g->tensors[t]->producer;
    return p >= 0 && !g->nodes[p]->dead ? g->nodes[p] : NULL;
}

static bool is_const_zero(const q8_tensor *t) {
    if (!t || !t->data || q8_tensor_numel(t) != 1) return false;
    switch (t->dtype) {
    case Q8_F32: return *(const float *)t->data == 0.0f;
    case Q8_I8: case Q8_U8: return *(const uint8_t *)t->data == 0;
    default: return false;
    }
}

/* ---- Pad -> Conv ---- */

static q8_status fold_pad(q8_graph *g, q8_node *conv, const int *uses, bool *done,
                          q8_error *err) {
    q8_node *pad = single_use_producer(g, conv->inputs[0], uses);
    if (!pad || !is_onnx(pad, "Pad") || !pad->params) return Q8_OK;
    const q8_pad_params *pp = pad->params;
    if (pp->mode != Q8_PAD_CONSTANT) return Q8_OK;
    if (pp->value_input && !is_const_zero(q8_in(g, pad, 2))) return Q8_OK;
    const q8_tensor *x = q8_in(g, pad, 0), *y = q8_out(g, pad, 0);
    int r = x->ndim, ns = r - 2;
    if (r < 3 || y->ndim != r || x->dtype != Q8_F32) return Q8_OK;
    const char *ap = q8_attr_str(conv, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0) return Q8_OK;
    int64_t add[2 * Q8_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        int64_t b = pp->pb[d], e = y->dims[d] - x->dims[d] - b;
        if (b < 0 || e < 0) return Q8_OK;          /* a crop is not padding */
        if (d < 2 && (b || e)) return Q8_OK;       /* batch and channels stay */
        if (d >= 2) {
            add[d - 2] = b;
            add[ns + d - 2] = e;
        }
    }
    int np = 0;
    const int64_t *old = q8_attr_ints(conv, "pads", &np);
    if (old && np != 2 * ns) return Q8_OK;
    int64_t pads[2 * Q8_MAX_DIMS];
    for (int i = 0; i < 2 * ns; i++) pads[i] = (old ? old[i] : 0) + add[i];
    q8_attr *a = q8_node_set_attr(conv, "pads", Q8_ATTR_INTS);
    if (!a || !(a->ints = malloc(sizeof(int64_t) * (size_t)(2 * ns))))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    memcpy(a->ints, pads, sizeof(int64_t) * (size_t)(2 * ns));
    a->n = 2 * ns;
    conv->inputs[0] = pad->inputs[0];
    pad->dead = *done = true;
    return q8_node_reinfer(g, conv, err);
}

/* ---- Transpose -> Reduce (keepdims 0) ---- */

static bool is_reduce(const q8_node *n) {
    static const char *const ops[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                      "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                                      "ReduceLogSum", "ReduceLogSumExp"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (is_onnx(n, ops[i])) return true;
    return false;
}

/* y = Transpose(x, perm): y's axis i is x's axis perm[i]. */
static bool transpose_perm(const q8_graph *g, const q8_node *t, int64_t *perm, int *r) {
    const q8_tensor *x = q8_in(g, t, 0);
    *r = x->ndim;
    int n = 0;
    const int64_t *p = q8_attr_ints(t, "perm", &n);
    if (!p) { /* default: reversed axes */
        for (int i = 0; i < *r; i++) perm[i] = *r - 1 - i;
        return true;
    }
    if (n != *r) return false;
    memcpy(perm, p, sizeof(int64_t) * (size_t)n);
    return true;
}

static int new_i64_tensor(q8_graph *g, const char *name, const int64_t *axes, int n,
                          q8_error *err) {
    int ti = q8_graph_add_tensor_unique(g, name);
    if (ti < 0) {
        q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        return -1;
    }
    int64_t len = n;
    q8_tensor_set_shape(g->tensors[ti], Q8_I64, &len, 1);
    if (q8_tensor_alloc_data(g->tensors[ti], err) != Q8_OK) return -1;
    memcpy(g->tensors[ti]->data, axes, sizeof(int64_t) * (size_t)n);
    return ti;
}

static q8_status fold_transpose_reduce(q8_graph *g, q8_node *red, const int *uses, bool *done,
                                       q8_error *err) {
    q8_node *t = single_use_producer(g, red->inputs[0], uses);
    if (!t || !is_onnx(t, "Transpose")) return Q8_OK;
    if (q8_attr_int(red, "keepdims", 1) || q8_attr_int(red, "noop_with_empty_axes", 0))
        return Q8_OK;
    int64_t perm[Q8_MAX_DIMS], axes[Q8_MAX_DIMS];
    int r, na = 0;
    if (!transpose_perm(g, t, perm, &r)) return Q8_OK;
    const q8_tensor *at = q8_in(g, red, 1);
    if (!at || !at->data) return Q8_OK; /* no axes: every axis, order irrelevant, but rare */
    q8_error e2 = {0};
    if (q8_const_ints(g, red, 1, axes, Q8_MAX_DIMS, &na, &e2) != Q8_OK || na == 0)
        return Q8_OK;
    bool reduced[Q8_MAX_DIMS] = {false};
    for (int i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r) return Q8_OK;
        reduced[a] = true;
    }
    /* the kept axes, in the order the Reduce's output has them, must be in
     * the input's order too */
    int64_t last = -1;
    for (int i = 0; i < r; i++) {
        if (reduced[i]) continue;
        if (perm[i] < last) return Q8_OK;
        last = perm[i];
    }
    int64_t mapped[Q8_MAX_DIMS];
    int nm = 0;
    for (int i = 0; i < r; i++)
        if (reduced[i]) mapped[nm++] = perm[i];
    int ai = new_i64_tensor(g, "axes_transpose_folded", mapped, nm, err);
    if (ai < 0) return err->status;
    red->inputs[0] = t->inputs[0];
    red->inputs[1] = ai;
    t->dead = *done = true;
    return q8_node_reinfer(g, red, err);
}

/* ---- Transpose -> Transpose ---- */

/* t's perm attribute becomes p (n axes). */
static q8_status set_perm(q8_node *t, const int64_t *p, int n, q8_error *err) {
    q8_attr *a = q8_node_set_attr(t, "perm", Q8_ATTR_INTS);
    if (!a || !(a->ints = malloc(sizeof(int64_t) * (size_t)n)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    memcpy(a->ints, p, sizeof(int64_t) * (size_t)n);
    a->n = n;
    return Q8_OK;
}

static void rename_input(q8_graph *g, int from, int to) {
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] == from) n->inputs[j] = to;
    }
}

static q8_status fold_transpose_pair(q8_graph *g, q8_node *t2, const int *uses, bool *done,
                                     q8_error *err) {
    q8_node *t1 = single_use_producer(g, t2->inputs[0], uses);
    if (!t1 || !is_onnx(t1, "Transpose")) return Q8_OK;
    int64_t p1[Q8_MAX_DIMS], p2[Q8_MAX_DIMS], p[Q8_MAX_DIMS];
    int r1, r2;
    if (!transpose_perm(g, t1, p1, &r1) || !transpose_perm(g, t2, p2, &r2) || r1 != r2)
        return Q8_OK;
    bool identity = true;
    for (int i = 0; i < r2; i++) {
        p[i] = p1[p2[i]];
        identity &= p[i] == i;
    }
    int x = t1->inputs[0], y = t2->outputs[0];
    if (identity && !q8_graph_is_output(g, y)) {
        rename_input(g, y, x);
        t1->dead = t2->dead = *done = true;
        return Q8_OK;
    }
    Q8_TRY(set_perm(t2, p, r2, err));
    t2->inputs[0] = x;
    t1->dead = *done = true;
    return q8_node_reinfer(g, t2, err);
}

/* ---- Transpose -> Reshape -> Transpose ---- */

/* The coarsest axes ("atoms") that both dims a (na) and dims b (nb), of the
 * same element count, are made of: the union of their running products,
 * each one dividing the next. Axis i of a is atoms [ra[i], ra[i + 1]) (of
 * b: rb); size-1 axes hold none. False when no such atoms exist (a
 * Reshape that mixes axes) or a dim is 0. */
static bool common_atoms(const int64_t *a, int na, const int64_t *b, int nb, int64_t *atoms,
                         int *n_atoms, int *ra, int *rb) {
    int64_t cut[2 * Q8_MAX_DIMS + 1];
    int nc = 0, i = 0, j = 0;
    int64_t pa = 1, pb = 1;
    cut[nc++] = 1;
    ra[0] = rb[0] = 0;
    /* merge the two running products in increasing order */
    while (i < na || j < nb) {
        int64_t na_next = i < na ? pa * a[i] : INT64_MAX, nb_next = j < nb ? pb * b[j] : INT64_MAX;
        if ((i < na && a[i] <= 0) || (j < nb && b[j] <= 0)) return false;
        int64_t next = na_next < nb_next ? na_next : nb_next;
        if (next % cut[nc - 1]) return false;
        if (next != cut[nc - 1]) cut[nc++] = next;
        if (na_next == next) pa = na_next, ra[++i] = nc - 1;
        if (nb_next == next) pb = nb_next, rb[++j] = nc - 1;
    }
    *n_atoms = nc - 1;
    for (int k = 0; k + 1 < nc; k++) atoms[k] = cut[k + 1] / cut[k];
    return true;
}

static q8_status fold_transpose_reshape(q8_graph *g, q8_node *t2, const int *uses, bool *done,
                                        q8_error *err) {
    q8_node *r = single_use_producer(g, t2->inputs[0], uses);
    if (!r || !is_onnx(r, "Reshape")) return Q8_OK;
    q8_node *t1 = single_use_producer(g, r->inputs[0], uses);
    if (!t1 || !is_onnx(t1, "Transpose")) return Q8_OK;
    int64_t p1[Q8_MAX_DIMS], p2[Q8_MAX_DIMS];
    int n1, n2;
    if (!transpose_perm(g, t1, p1, &n1) || !transpose_perm(g, t2, p2, &n2)) return Q8_OK;
    const q8_tensor *y = q8_out(g, t1, 0), *z = q8_out(g, r, 0);
    const q8_tensor *w = q8_out(g, t2, 0);
    if (y->ndim != n1 || z->ndim != n2 || w->ndim != n2) return Q8_OK;
    int64_t atoms[2 * Q8_MAX_DIMS];
    int na, ry[Q8_MAX_DIMS + 1], rz[Q8_MAX_DIMS + 1];
    if (!common_atoms(y->dims, n1, z->dims, n2, atoms, &na, ry, rz)) return Q8_OK;
    /* x's axis p1[i] is y's axis i: x in atoms is y's atoms, its axes'
     * groups in x's order; the output is z's atoms, z's axes' groups in
     * p2's order */
    int xa[2 * Q8_MAX_DIMS], oa[2 * Q8_MAX_DIMS], nx = 0, no = 0, inv1[Q8_MAX_DIMS];
    for (int i = 0; i < n1; i++) inv1[p1[i]] = i;
    for (int k = 0; k < n1; k++)
        for (int t = ry[inv1[k]]; t < ry[inv1[k] + 1]; t++) xa[nx++] = t;
    for (int i = 0; i < n2; i++)
        for (int t = rz[p2[i]]; t < rz[p2[i] + 1]; t++) oa[no++] = t;
    if (nx != na || no != na || na > Q8_MAX_DIMS) return Q8_OK;
    int64_t xdims[Q8_MAX_DIMS], perm[Q8_MAX_DIMS];
    for (int k = 0; k < na; k++) {
        xdims[k] = atoms[xa[k]];
        for (int m = 0; m < na; m++)
            if (xa[m] == oa[k]) perm[k] = m;
    }
    int64_t wn = w->ndim;
    int shape_out = new_i64_tensor(g, "shape_transpose_folded", w->dims, (int)wn, err);
    if (shape_out < 0) return err->status;
    bool identity = true;
    for (int k = 0; k < na; k++) identity &= perm[k] == k;
    if (identity) { /* the two cancel: one Reshape of x to w (a view) */
        r->inputs[0] = t1->inputs[0];
        r->inputs[1] = shape_out;
        r->outputs[0] = t2->outputs[0];
        t1->dead = t2->dead = *done = true;
        q8_graph_fix_producers(g);
        return q8_node_reinfer(g, r, err);
    }
    /* Reshape(x -> xdims) -> Transpose(perm) -> Reshape(-> w's dims), in the
     * nodes t1 (dead), r and t2 and one new Reshape after t2 */
    int shape_in = new_i64_tensor(g, "shape_transpose_folded", xdims, na, err);
    if (shape_in < 0) return err->status;
    int mid = q8_graph_add_tensor_unique(g, "transposed_folded");
    if (mid < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int pos = -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] == t2) pos = i;
    size_t len = strlen(t2->name) + 16;
    char *name = malloc(len);
    if (!name) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    snprintf(name, len, "%s_reshape", t2->name);
    int ni = q8_graph_add_node(g, name, "Reshape");
    free(name);
    if (ni < 0 || pos < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_node *rs = g->nodes[ni];
    rs->scope = t2->scope;
    rs->op = q8_op_lookup("", "Reshape");
    int rin[2] = {mid, shape_out}, wout = t2->outputs[0];
    Q8_TRY(q8_node_set_io(rs, rin, 2, &wout, 1, err));
    memmove(g->nodes + pos + 2, g->nodes + pos + 1, sizeof *g->nodes * (size_t)(ni - pos - 1));
    g->nodes[pos + 1] = rs;
    r->inputs[0] = t1->inputs[0];
    r->inputs[1] = shape_in;
    t2->outputs[0] = mid;
    Q8_TRY(set_perm(t2, perm, na, err));
    t1->dead = *done = true;
    q8_graph_fix_producers(g); /* the nodes after t2 moved up by one */
    Q8_TRY(q8_node_reinfer(g, r, err));
    Q8_TRY(q8_node_reinfer(g, t2, err));
    return q8_node_reinfer(g, rs, err);
}

q8_status q8_pass_fold_layout(q8_graph *g, q8_error *err) {
    q8_status s = Q8_OK;
    /* use counts go stale as nodes fold (and folds add tensors): recount
     * after each fold */
    for (bool changed = true; changed && s == Q8_OK;) {
        changed = false;
        int *uses = calloc((size_t)g->n_tensors + 1, sizeof(int));
        if (!uses) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        q8_graph_consumers(g, uses);
        for (int i = 0; i < g->n_nodes && s == Q8_OK && !changed; i++) {
            q8_node *n = g->nodes[i];
            if (is_onnx(n, "Conv")) s = fold_pad(g, n, uses, &changed, err);
            else if (is_reduce(n)) s = fold_transpose_reduce(g, n, uses, &changed, err);
            else if (is_onnx(n, "Transpose")) {
                s = fold_transpose_pair(g, n, uses, &changed, err);
                if (s == Q8_OK && !changed) s = fold_transpose_reshape(g, n, uses, &changed, err);
            }
        }
        free(uses);
    }
    q8_graph_compact(g);
    q8_graph_fix_producers(g);
    return s;
}
