/* Canonical form: every ai.onnx node rewritten into the form its op has at
 * opset Q8_OPSET_CANONICAL (src/core/graph.h), so that each op schema knows
 * one form and a graph means the same whatever opset it was written for.
 *
 * q8_pass_canonicalize runs first on an imported graph and does what needs
 * nothing but the node itself:
 *   - attributes that became inputs become constant inputs: Clip min / max
 *     (opset < 11, with Clip-6's defaults), Pad pads (< 11), Slice starts /
 *     ends / axes (< 10), Squeeze / Unsqueeze axes and Split split (< 13),
 *     Reshape shape (< 5), Dropout ratio (< 12), DFT axis (< 20, default
 *     1), Reduce* axes (at any opset: q8 has always taken both forms);
 *   - Upsample becomes Resize; Resize-10 gets an empty roi and asymmetric
 *     coordinates;
 *   - the Dropout-7 mask (data's type) becomes a CastLike of the bool mask;
 *   - attributes that no longer exist go: broadcast / axis (< 7),
 *     BatchNormalization spatial (< 9);
 *   - a form invalid at the model's opset, or one q8 does not support, is
 *     reported, naming the node.
 * What depends on an input's dtype, shape or constant value cannot be done
 * before shape inference: the pass leaves an internal `_canon_*` attribute
 * on the node and q8_pass_infer calls q8_canon_finish when the node's
 * inputs are known, just before the node's own infer:
 *   - Softmax / LogSoftmax < 13 (dims [axis, rank) normalized together):
 *     the same node when the dims after axis are all 1, else Flatten,
 *     Softmax(axis -1), Reshape;
 *   - broadcast=1 with axis (< 7): B reshaped with trailing 1s;
 *   - PRelu < 7: a 1-D slope as long as X's dim 1 reshaped to [C, 1, ...];
 *   - nearest Resize-10 / Upsample (floor where a dim grows, ceil where it
 *     shrinks): nearest_mode floor or ceil, or two Resize nodes;
 *   - the Clip < 11 bounds and the Pad < 11 value in the data's dtype;
 *   - BatchNormalization < 9 with spatial=0: its arithmetic as nodes;
 *   - QuantizeLinear / DequantizeLinear < 13: per-axis scales are an error.
 * Every completed form computes the same bytes as the old form did. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "op.h"
#include "ops/split.h"
#include "passes.h"

/* The marks q8_canon_finish completes (a node has at most one). */
#define TAG_PREFIX "_canon_"
#define TAG_SOFTMAX "_canon_softmax"         /* int: 1 */
#define TAG_BCAST "_canon_bcast_axis"        /* int: the axis attribute */
#define TAG_PRELU "_canon_prelu"             /* int: 1 */
#define TAG_NEAREST "_canon_nearest_v10"     /* int: 1 */
#define TAG_CLIP "_canon_clip"               /* int: 1 */
#define TAG_PAD "_canon_pad_value"           /* float: the value attribute */
#define TAG_BN "_canon_bn_spatial0"          /* int: 1 */
#define TAG_QDQ "_canon_qdq_opset"           /* int: the model's opset */

static bool is_op(const q8_node *n, const char *op) { return strcmp(n->op_type, op) == 0; }

static bool is_onnx(const q8_node *n) {
    return !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static bool is_one_of(const q8_node *n, const char *const *ops, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (is_op(n, ops[i])) return true;
    return false;
}

static q8_status nomem(q8_error *err) { return q8_fail(err, Q8_ERR_NOMEM, "out of memory"); }

/* ---- graph editing ---- */

/* A new tensor "<node>_<what>", unique in the whole tree of graphs g is in
 * (inlining an If moves its branch's tensors into the parent). */
static q8_status new_tensor(q8_graph *g, const q8_node *n, const char *what, int *out,
                            q8_error *err) {
    *out = q8_graph_add_tensor_unique_in_tree(g, *n->name ? n->name : n->op_type, "_", what);
    return *out < 0 ? nomem(err) : Q8_OK;
}

/* A new constant of dtype dt and shape dims (nd) holding bytes. */
static q8_status new_const(q8_graph *g, const q8_node *n, const char *what, q8_dtype dt,
                           const int64_t *dims, int nd, const void *bytes, int *out,
                           q8_error *err) {
    Q8_TRY(new_tensor(g, n, what, out, err));
    q8_tensor *t = g->tensors[*out];
    q8_tensor_set_shape(t, dt, dims, nd);
    Q8_TRY(q8_tensor_alloc_data(t, err));
    size_t nb = q8_tensor_nbytes(t);
    if (nb) memcpy(t->data, bytes, nb);
    return Q8_OK;
}

static q8_status const_i64(q8_graph *g, const q8_node *n, const char *what, const int64_t *v,
                           int count, int *out, q8_error *err) {
    int64_t len = count;
    return new_const(g, n, what, Q8_I64, &len, 1, v, out, err);
}

static q8_status scalar_f32(q8_graph *g, const q8_node *n, const char *what, float v, int *out,
                            q8_error *err) {
    return new_const(g, n, what, Q8_F32, NULL, 0, &v, out, err);
}

/* Make tensor t input i of n (inputs in between are absent). */
static q8_status set_input(q8_node *n, int i, int t, q8_error *err) {
    if (i >= n->n_inputs) {
        int *in = realloc(n->inputs, sizeof(int) * (size_t)(i + 1));
        if (!in) return nomem(err);
        for (int k = n->n_inputs; k < i; k++) in[k] = -1;
        n->inputs = in;
        n->n_inputs = i + 1;
    }
    n->inputs[i] = t;
    return Q8_OK;
}

static void drop_attr(q8_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++) {
        if (strcmp(n->attrs[i].name, name) != 0) continue;
        q8_attr_clear(&n->attrs[i]);
        memmove(&n->attrs[i], &n->attrs[i + 1], sizeof *n->attrs * (size_t)(n->n_attrs - i - 1));
        n->n_attrs--;
        return;
    }
}

static void drop_all_attrs(q8_node *n) {
    for (int i = 0; i < n->n_attrs; i++) q8_attr_clear(&n->attrs[i]);
    n->n_attrs = 0;
}

static q8_status set_int(q8_node *n, const char *name, int64_t v, q8_error *err) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_INT);
    if (!a) return nomem(err);
    a->i = v;
    return Q8_OK;
}

static q8_status set_float(q8_node *n, const char *name, float v, q8_error *err) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_FLOAT);
    if (!a) return nomem(err);
    a->f = v;
    return Q8_OK;
}

static q8_status set_str(q8_node *n, const char *name, const char *v, q8_error *err) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_STRING);
    if (!a || !(a->s = q8_strdup(v))) return nomem(err);
    return Q8_OK;
}

/* Copy the scalar, string and list attributes of src to dst. */
static q8_status copy_attrs(q8_node *dst, const q8_node *src, q8_error *err) {
    for (int k = 0; k < src->n_attrs; k++) Q8_TRY(q8_node_copy_attr(dst, &src->attrs[k], err));
    return Q8_OK;
}

/* A new node "<like>_<what>": op(in) -> out, at position pos of g (the
 * nodes from pos on move up by one). */
static q8_status insert_node(q8_graph *g, int pos, const q8_node *like, const char *what,
                             const char *op, const int *in, int n_in, int out, q8_node **made,
                             q8_error *err) {
    size_t len = strlen(like->name) + strlen(what) + 2;
    char *name = malloc(len);
    if (!name) return nomem(err);
    snprintf(name, len, "%s_%s", like->name, what);
    int ni = q8_graph_add_node(g, name, op);
    free(name);
    if (ni < 0) return nomem(err);
    q8_node *n = g->nodes[ni];
    n->scope = like->scope; /* in the branch of the node it completes */
    Q8_TRY(q8_node_set_io(n, in, n_in, &out, 1, err));
    memmove(g->nodes + pos + 1, g->nodes + pos, sizeof *g->nodes * (size_t)(ni - pos));
    g->nodes[pos] = n;
    if (made) *made = n;
    return Q8_OK;
}

/* Insert, at *pos, a Reshape of tensor t to dims (nd) and advance *pos;
 * *out gets the reshaped tensor. */
static q8_status insert_reshape(q8_graph *g, int *pos, const q8_node *like, const char *what,
                                int t, const int64_t *dims, int nd, int *out, q8_error *err) {
    int shape;
    char sname[64];
    snprintf(sname, sizeof sname, "%s_shape", what);
    Q8_TRY(const_i64(g, like, sname, dims, nd, &shape, err));
    Q8_TRY(new_tensor(g, like, what, out, err));
    int in[2] = {t, shape};
    q8_node *r;
    Q8_TRY(insert_node(g, *pos, like, what, "Reshape", in, 2, *out, &r, err));
    (*pos)++;
    return set_int(r, "allowzero", 1, err); /* the dims are literal, 0 included */
}

/* ---- checks of the old forms ---- */

/* The number of inputs of the old form (outputs are checked by the op). */
static q8_status check_inputs(const q8_node *n, int min_in, int max_in, q8_error *err) {
    return q8_check_io(n, min_in, max_in, 0, INT_MAX, err);
}

static q8_status reject_attr(const q8_graph *g, const q8_node *n, const char *name, int since,
                             q8_error *err) {
    if (!q8_attr_find(n, name)) return Q8_OK;
    return q8_node_fail(err, Q8_ERR_FORMAT, n,
                        "'%s' is an input since opset %d, not an attribute (model opset %d)",
                        name, since, g->opset);
}

/* Int list attribute `name`, if given, becomes constant int64 input
 * `input`: at most max values. */
static q8_status ints_to_input(q8_graph *g, q8_node *n, const char *name, int input, int max,
                               bool *present, q8_error *err) {
    const q8_attr *a = q8_attr_find(n, name);
    if (present) *present = a != NULL;
    if (!a) return Q8_OK;
    if (a->type != Q8_ATTR_INTS)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute '%s' must be a list of ints", name);
    if (a->n > max)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "'%s' has %d values, at most %d supported",
                            name, a->n, max);
    int t;
    Q8_TRY(const_i64(g, n, name, a->ints, a->n, &t, err));
    drop_attr(n, name);
    return set_input(n, input, t, err);
}

/* ---- the pass ---- */

static const char *const legacy_bcast_ops[] = {
    "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Equal", "Greater", "Less", "GreaterOrEqual",
    "LessOrEqual", "And", "Or", "Xor"};

static const char *const reduce_ops[] = {
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};

/* Upsample (any opset): Resize with asymmetric coordinates. */
static q8_status canon_upsample(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(check_inputs(n, 1, 2, err));
    const char *m = q8_attr_str(n, "mode", "nearest"), *mode = NULL;
    if (strcmp(m, "nearest") == 0) mode = "nearest";
    else if (strcmp(m, "linear") == 0 || strcmp(m, "bilinear") == 0) mode = "linear";
    if (!mode)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "mode is '%s', expected nearest, linear", m);
    int scales;
    if (n->n_inputs > 1 && n->inputs[1] >= 0) {
        scales = n->inputs[1];
    } else {
        int cnt;
        const float *s = q8_attr_floats(n, "scales", &cnt);
        if (!s)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "Upsample needs scales (attribute or input)");
        int64_t len = cnt;
        Q8_TRY(new_const(g, n, "scales", Q8_F32, &len, 1, s, &scales, err));
    }
    char *op = q8_strdup("Resize");
    if (!op) return nomem(err);
    free(n->op_type);
    n->op_type = op;
    int in[3] = {n->inputs[0], -1, scales};
    Q8_TRY(q8_node_set_io(n, in, 3, n->outputs, n->n_outputs, err));
    drop_all_attrs(n);
    Q8_TRY(set_str(n, "mode", mode, err));
    Q8_TRY(set_str(n, "coordinate_transformation_mode", "asymmetric", err));
    Q8_TRY(set_str(n, "nearest_mode", "floor", err));
    return strcmp(mode, "nearest") == 0 ? set_int(n, TAG_NEAREST, 1, err) : Q8_OK;
}

/* The node at *pos of g (ai.onnx), at the graph's opset v; nodes it adds
 * after itself are skipped by advancing *pos. */
static q8_status canon_node(q8_graph *g, int *pos, q8_error *err) {
    q8_node *n = g->nodes[*pos];
    int v = g->opset;
    bool present;
    /* before opset 13 these work on the input flattened at axis (default 1) */
    if (is_op(n, "Softmax") || is_op(n, "LogSoftmax") || is_op(n, "Hardmax")) {
        if (v >= 13) return Q8_OK;
        Q8_TRY(set_int(n, "axis", q8_attr_int(n, "axis", 1), err)); /* the old default */
        return set_int(n, TAG_SOFTMAX, 1, err);
    }
    if (is_one_of(n, legacy_bcast_ops, sizeof legacy_bcast_ops / sizeof *legacy_bcast_ops)) {
        if (v >= 7) return Q8_OK;
        const q8_attr *ax = q8_attr_find(n, "axis");
        bool aligned = q8_attr_int(n, "broadcast", 0) == 1 && ax;
        int64_t axis = ax ? ax->i : 0;
        drop_attr(n, "broadcast");
        drop_attr(n, "axis");
        return aligned ? set_int(n, TAG_BCAST, axis, err) : Q8_OK;
    }
    if (is_op(n, "Gemm")) {
        if (v < 7) drop_attr(n, "broadcast"); /* C always broadcasts */
        return Q8_OK;
    }
    if (is_op(n, "PRelu")) return v < 7 ? set_int(n, TAG_PRELU, 1, err) : Q8_OK;
    if (is_op(n, "Clip")) {
        if (v >= 11) return Q8_OK;
        Q8_TRY(check_inputs(n, 1, 1, err));
        /* Clip-6's defaults: numeric_limits<float> lowest and max */
        float lo = q8_attr_float(n, "min", -FLT_MAX), hi = q8_attr_float(n, "max", FLT_MAX);
        int tl, th;
        Q8_TRY(scalar_f32(g, n, "min", lo, &tl, err));
        Q8_TRY(scalar_f32(g, n, "max", hi, &th, err));
        Q8_TRY(set_input(n, 1, tl, err));
        Q8_TRY(set_input(n, 2, th, err));
        drop_attr(n, "min");
        drop_attr(n, "max");
        return set_int(n, TAG_CLIP, 1, err);
    }
    if (is_op(n, "Pad")) {
        if (v >= 11) {
            if (v < 18) Q8_TRY(check_inputs(n, 2, 3, err));
            return reject_attr(g, n, "pads", 11, err);
        }
        Q8_TRY(check_inputs(n, 1, 1, err));
        Q8_TRY(ints_to_input(g, n, "pads", 1, 2 * Q8_MAX_DIMS, &present, err));
        if (!present) return q8_node_fail(err, Q8_ERR_FORMAT, n, "pads are missing");
        if (!q8_attr_find(n, "value")) return Q8_OK;
        float value = q8_attr_float(n, "value", 0.0f);
        drop_attr(n, "value");
        return set_float(n, TAG_PAD, value, err);
    }
    if (is_op(n, "Slice")) {
        static const char *const names[] = {"starts", "ends", "axes", "steps"};
        if (v >= 10) {
            for (int i = 0; i < 4; i++) Q8_TRY(reject_attr(g, n, names[i], 10, err));
            return Q8_OK;
        }
        Q8_TRY(check_inputs(n, 1, 1, err));
        bool has[3];
        for (int i = 0; i < 3; i++)
            Q8_TRY(ints_to_input(g, n, names[i], i + 1, Q8_MAX_DIMS, &has[i], err));
        if (!has[0] || !has[1])
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "starts and ends are required");
        return Q8_OK;
    }
    if (is_op(n, "Squeeze") || is_op(n, "Unsqueeze") || is_op(n, "Split")) {
        const char *name = is_op(n, "Split") ? "split" : "axes";
        if (v >= 13) return reject_attr(g, n, name, 13, err);
        Q8_TRY(check_inputs(n, 1, 1, err));
        int max = is_op(n, "Split") ? Q8_SPLIT_MAX_OUT : Q8_MAX_DIMS;
        return ints_to_input(g, n, name, 1, max, NULL, err);
    }
    if (is_one_of(n, reduce_ops, sizeof reduce_ops / sizeof *reduce_ops)) {
        const q8_attr *a = q8_attr_find(n, "axes");
        if (!a) return Q8_OK;
        if (n->n_inputs > 1 && n->inputs[1] >= 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "axes are given both as attribute and input");
        if (a->type != Q8_ATTR_INTS)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "axes must be a list of ints");
        return ints_to_input(g, n, "axes", 1, Q8_MAX_DIMS, NULL, err);
    }
    if (is_op(n, "Reshape")) {
        if (v >= 5) return Q8_OK;
        Q8_TRY(check_inputs(n, 1, 1, err));
        int ns;
        const int64_t *s = q8_attr_ints(n, "shape", &ns);
        if (!s) return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute 'shape' is missing");
        if (ns > Q8_MAX_DIMS)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "shape has %d dims, at most %d supported", ns, Q8_MAX_DIMS);
        return ints_to_input(g, n, "shape", 1, Q8_MAX_DIMS, NULL, err);
    }
    if (is_op(n, "Tile")) {
        if (v >= 6) return Q8_OK;
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "Tile-1 (tiles/axis inputs) is not supported");
    }
    if (is_op(n, "BatchNormalization")) {
        if (v >= 9) return Q8_OK;
        /* spatial=0 (opsets 7-8; older ones had it too): statistics per
         * element of C x D1 x ... x Dn */
        bool per_elem = q8_attr_int(n, "spatial", 1) == 0;
        drop_attr(n, "spatial");
        return per_elem ? set_int(n, TAG_BN, 1, err) : Q8_OK;
    }
    if (is_op(n, "Dropout")) {
        if (v >= 12) return Q8_OK;
        Q8_TRY(check_inputs(n, 1, 1, err));
        if (q8_attr_find(n, "ratio")) {
            int t;
            Q8_TRY(scalar_f32(g, n, "ratio", q8_attr_float(n, "ratio", 0.5f), &t, err));
            Q8_TRY(set_input(n, 1, t, err));
            drop_attr(n, "ratio");
        }
        if (v >= 10 || n->n_outputs < 2 || n->outputs[1] < 0) return Q8_OK;
        /* Dropout-7's mask has the data's type: cast from the bool one */
        int mask = n->outputs[1], b;
        Q8_TRY(new_tensor(g, n, "mask_bool", &b, err));
        n->outputs[1] = b;
        int in[2] = {b, n->inputs[0]};
        (*pos)++;
        return insert_node(g, *pos, n, "mask", "CastLike", in, 2, mask, NULL, err);
    }
    if (is_op(n, "Resize")) {
        if (v >= 11) return Q8_OK;
        Q8_TRY(check_inputs(n, 2, 2, err));
        int in[3] = {n->inputs[0], -1, n->inputs[1]};
        Q8_TRY(q8_node_set_io(n, in, 3, n->outputs, n->n_outputs, err));
        /* Resize-10: asymmetric; nearest rounds as Upsample (see TAG_NEAREST) */
        Q8_TRY(set_str(n, "coordinate_transformation_mode", "asymmetric", err));
        Q8_TRY(set_str(n, "nearest_mode", "floor", err));
        bool nearest = strcmp(q8_attr_str(n, "mode", "nearest"), "nearest") == 0;
        return nearest ? set_int(n, TAG_NEAREST, 1, err) : Q8_OK;
    }
    if (is_op(n, "Upsample")) return canon_upsample(g, n, err);
    if (is_op(n, "DFT")) {
        if (v >= 20) return reject_attr(g, n, "axis", 20, err);
        Q8_TRY(check_inputs(n, 1, 2, err));
        /* DFT-17's axis attribute (default 1) is input 2 since opset 20 */
        int64_t axis = q8_attr_int(n, "axis", 1);
        int t;
        Q8_TRY(new_const(g, n, "axis", Q8_I64, NULL, 0, &axis, &t, err));
        drop_attr(n, "axis");
        return set_input(n, 2, t, err);
    }
    if (is_op(n, "Scan") && v < 9) return set_int(n, Q8_SCAN8_ATTR, 1, err);
    if (is_op(n, "QuantizeLinear") || is_op(n, "DequantizeLinear"))
        return v < 13 ? set_int(n, TAG_QDQ, v, err) : Q8_OK;
    return Q8_OK;
}

q8_status q8_pass_canonicalize(q8_graph *g, q8_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].type == Q8_ATTR_GRAPH && n->attrs[k].g)
                Q8_TRY(q8_pass_canonicalize(n->attrs[k].g, err));
        if (!n->dead && is_onnx(n)) Q8_TRY(canon_node(g, &i, err));
    }
    g->opset = Q8_OPSET_CANONICAL;
    return Q8_OK;
}

/* ---- completion, once the inputs are known ---- */

bool q8_canon_pending(const q8_node *n) {
    for (int k = 0; k < n->n_attrs; k++)
        if (strncmp(n->attrs[k].name, TAG_PREFIX, sizeof TAG_PREFIX - 1) == 0) return true;
    return false;
}

static bool known(const q8_tensor *t) { return t && t->shape_known; }

static int64_t prod(const int64_t *dims, int b, int e) {
    int64_t p = 1;
    for (int i = b; i < e; i++) p *= dims[i];
    return p;
}

/* Softmax < 13 over dims [axis, rank) of x: when the dims after axis are
 * not all 1, Flatten(axis) -> Softmax(-1) -> Reshape back (the same rows). */
static q8_status finish_softmax(q8_graph *g, int i, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_tensor *x = q8_in(g, n, 0);
    int ax;
    if (!known(x) || x->ndim < 1 || n->n_outputs < 1 || n->outputs[0] < 0 ||
        !q8_norm_axis(q8_attr_int(n, "axis", 1), x->ndim, &ax) ||
        prod(x->dims, ax + 1, x->ndim) == 1)
        return Q8_OK; /* the op's infer reports what is wrong */
    int xi = n->inputs[0], y = n->outputs[0], flat, rows, shape;
    Q8_TRY(new_tensor(g, n, "flat", &flat, err));
    Q8_TRY(new_tensor(g, n, "rows", &rows, err));
    Q8_TRY(const_i64(g, n, "shape", x->dims, x->ndim, &shape, err));
    q8_node *f, *r;
    Q8_TRY(insert_node(g, i, n, "flatten", "Flatten", &xi, 1, flat, &f, err));
    Q8_TRY(set_int(f, "axis", ax, err));
    n->inputs[0] = flat;
    n->outputs[0] = rows;
    Q8_TRY(set_int(n, "axis", -1, err));
    int in[2] = {rows, shape};
    Q8_TRY(insert_node(g, i + 2, n, "reshape", "Reshape", in, 2, y, &r, err));
    return set_int(r, "allowzero", 1, err);
}

/* broadcast=1 with axis (< 7): B's dims align with A's from axis on, so B
 * gets trailing 1s up to rank(A) - axis. */
static q8_status finish_bcast(q8_graph *g, int i, int64_t axis, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (!known(a) || !known(b)) return Q8_OK;
    int ax;
    if (!q8_norm_axis(axis, a->ndim, &ax) || ax + b->ndim > a->ndim)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "axis %lld does not place B (rank %d) inside A (rank %d)",
                            (long long)axis, b->ndim, a->ndim);
    int nd = a->ndim - ax;
    if (nd == b->ndim) return Q8_OK;
    int64_t dims[Q8_MAX_DIMS];
    for (int d = 0; d < nd; d++) dims[d] = d < b->ndim ? b->dims[d] : 1;
    int pos = i, t;
    Q8_TRY(insert_reshape(g, &pos, n, "B_aligned", n->inputs[1], dims, nd, &t, err));
    n->inputs[1] = t;
    return Q8_OK;
}

/* PRelu < 7: a 1-D slope as long as X's dim 1 (C) is per channel. */
static q8_status finish_prelu(q8_graph *g, int i, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_tensor *x = q8_in(g, n, 0), *s = q8_in(g, n, 1);
    if (!known(x) || !known(s) || s->ndim != 1 || s->dims[0] <= 1 || x->ndim <= 2 ||
        s->dims[0] != x->dims[1])
        return Q8_OK;
    int64_t dims[Q8_MAX_DIMS];
    for (int d = 0; d < x->ndim - 1; d++) dims[d] = d ? 1 : s->dims[0];
    int pos = i, t;
    Q8_TRY(insert_reshape(g, &pos, n, "slope_channels", n->inputs[1], dims, x->ndim - 1, &t, err));
    n->inputs[1] = t;
    return Q8_OK;
}

/* Nearest Resize-10 and Upsample round down where a dim grows and up where
 * it shrinks (as onnxruntime): nearest_mode floor or ceil, or, when some
 * dims grow and others shrink, this node grows (floor) and a second one
 * shrinks (ceil). Nearest is separable, so the result is the same. */
static q8_status finish_nearest(q8_graph *g, int i, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_tensor *x = q8_in(g, n, 0), *s = q8_in(g, n, 2);
    if (!known(x) || !known(s) || !s->data || s->dtype != Q8_F32 ||
        q8_tensor_numel(s) != x->ndim || n->n_outputs < 1 || n->outputs[0] < 0)
        return Q8_OK; /* Resize's infer reports what is wrong */
    const float *sv = s->data;
    bool up = false, down = false;
    for (int d = 0; d < x->ndim; d++) {
        if (!(sv[d] > 0.0f) || isinf(sv[d])) return Q8_OK;
        up |= sv[d] > 1.0f;
        down |= sv[d] < 1.0f;
    }
    if (!down) return Q8_OK;
    if (!up) return set_str(n, "nearest_mode", "ceil", err);
    float grow[Q8_MAX_DIMS], shrink[Q8_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        grow[d] = sv[d] > 1.0f ? sv[d] : 1.0f;
        shrink[d] = sv[d] < 1.0f ? sv[d] : 1.0f;
    }
    int64_t r = x->ndim;
    int sg, ss, mid, y = n->outputs[0];
    Q8_TRY(new_const(g, n, "scales_grow", Q8_F32, &r, 1, grow, &sg, err));
    Q8_TRY(new_const(g, n, "scales_shrink", Q8_F32, &r, 1, shrink, &ss, err));
    Q8_TRY(new_tensor(g, n, "grown", &mid, err));
    n->inputs[2] = sg;
    n->outputs[0] = mid;
    int in[3] = {mid, -1, ss};
    q8_node *m;
    Q8_TRY(insert_node(g, i + 1, n, "shrink", "Resize", in, 3, y, &m, err));
    Q8_TRY(copy_attrs(m, n, err));
    return set_str(m, "nearest_mode", "ceil", err);
}

/* Clip < 11 bounds are float attributes, for float32 and float64 data only. */
static q8_status finish_clip(q8_graph *g, int i, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_tensor *x = q8_in(g, n, 0);
    if (!known(x) || x->dtype == Q8_F32) return Q8_OK;
    if (x->dtype != Q8_F64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(x->dtype));
    for (int k = 1; k <= 2; k++) {
        double d = *(const float *)q8_in(g, n, k)->data;
        int t;
        Q8_TRY(new_const(g, n, k == 1 ? "min_f64" : "max_f64", Q8_F64, NULL, 0, &d, &t, err));
        n->inputs[k] = t;
    }
    return Q8_OK;
}

/* The Pad < 11 `value` as one element of dtype dt. */
static q8_status value_bytes(const q8_node *n, q8_dtype dt, float v, uint8_t *out, q8_error *err) {
    memset(out, 0, 8);
    switch (dt) {
    case Q8_F32: memcpy(out, &v, 4); break;
    case Q8_F64: { double d = v; memcpy(out, &d, 8); break; }
    case Q8_I8: case Q8_U8: out[0] = (uint8_t)(int64_t)v; break;
    case Q8_BOOL: out[0] = v != 0.0f; break;
    case Q8_I16: case Q8_U16: { uint16_t x = (uint16_t)(int64_t)v; memcpy(out, &x, 2); break; }
    case Q8_I32: case Q8_U32: { uint32_t x = (uint32_t)(int64_t)v; memcpy(out, &x, 4); break; }
    case Q8_I64: case Q8_U64: { int64_t x = (int64_t)v; memcpy(out, &x, 8); break; }
    default:
        if (v != 0.0f)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "a pad value for %s data",
                                q8_dtype_name(dt));
    }
    return Q8_OK;
}

/* Pad < 11 `value`: the constant_value input, in the data's dtype (none
 * when it is all zero bytes, the default fill). */
static q8_status finish_pad(q8_graph *g, int i, float value, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_tensor *x = q8_in(g, n, 0);
    if (!known(x)) return Q8_OK;
    uint8_t b[8];
    Q8_TRY(value_bytes(n, x->dtype, value, b, err));
    size_t es = q8_dtype_size(x->dtype);
    bool zero = true;
    for (int k = 0; k < 8; k++) zero &= b[k] == 0;
    if (zero || es == 0 || es > 8) return Q8_OK;
    int t;
    Q8_TRY(new_const(g, n, "value", x->dtype, NULL, 0, b, &t, err));
    return set_input(n, 2, t, err);
}

/* BatchNormalization < 9 with spatial=0: statistics of shape C x D1 x ...
 * x Dn, per element of each sample. Its checks, then the arithmetic of its
 * kernel as nodes: k = scale / Sqrt(var + eps); y = (x - mean) * k + B. */
static q8_status finish_bn(q8_graph *g, int i, q8_error *err) {
    q8_node *n = g->nodes[i];
    Q8_TRY(q8_check_io(n, 5, 5, 1, 5, err));
    if (q8_attr_int(n, "training_mode", 0) != 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "training mode is not supported (training_mode=1); export the model "
                            "in eval mode");
    for (int k = 1; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "output %d (running or saved mean/var) is a training output and "
                                "is not supported; only Y can be computed in inference",
                                k);
    for (int k = 0; k < 5; k++) Q8_TRY(q8_check_input(g, n, k, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "X has rank %d, expected at least 2 (N x C x ...)", x->ndim);
    int64_t want = prod(x->dims, 1, x->ndim);
    static const char *const names[] = {"X", "scale", "B", "mean", "var"};
    for (int k = 1; k < 5; k++) {
        const q8_tensor *t = q8_in(g, n, k);
        if (q8_tensor_numel(t) != want) {
            char sb[96];
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "%s has shape %s (%lld values), expected %lld (C x D1 x ... for "
                                "spatial=0)",
                                names[k], q8_shape_str(t->dims, t->ndim, sb, sizeof sb),
                                (long long)q8_tensor_numel(t), (long long)want);
        }
    }
    float eps = q8_attr_float(n, "epsilon", 1e-5f);
    if (!(eps >= 0.0f))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "epsilon is %g, expected >= 0", eps);
    /* statistics shaped C x D1 x ... so that they broadcast against X */
    int pos = i, st[5], nd = x->ndim - 1;
    int64_t sd[Q8_MAX_DIMS];
    memcpy(sd, x->dims + 1, sizeof(int64_t) * (size_t)nd);
    for (int k = 1; k < 5; k++) {
        const q8_tensor *t = q8_in(g, n, k);
        st[k] = n->inputs[k];
        bool same = t->ndim == nd;
        for (int d = 0; same && d < nd; d++) same = t->dims[d] == sd[d];
        if (!same) {
            char what[32];
            snprintf(what, sizeof what, "%s_shaped", names[k]);
            Q8_TRY(insert_reshape(g, &pos, n, what, st[k], sd, nd, &st[k], err));
        }
    }
    int e, v_eps, root, k, centred, scaled;
    Q8_TRY(scalar_f32(g, n, "epsilon", eps, &e, err));
    Q8_TRY(new_tensor(g, n, "var_eps", &v_eps, err));
    Q8_TRY(new_tensor(g, n, "std", &root, err));
    Q8_TRY(new_tensor(g, n, "k", &k, err));
    Q8_TRY(new_tensor(g, n, "centred", &centred, err));
    Q8_TRY(new_tensor(g, n, "scaled", &scaled, err));
    int in_add[2] = {st[4], e}, in_div[2] = {st[1], root}, in_sub[2] = {n->inputs[0], st[3]},
        in_mul[2] = {centred, k};
    Q8_TRY(insert_node(g, pos++, n, "var_eps", "Add", in_add, 2, v_eps, NULL, err));
    Q8_TRY(insert_node(g, pos++, n, "std", "Sqrt", &v_eps, 1, root, NULL, err));
    Q8_TRY(insert_node(g, pos++, n, "k", "Div", in_div, 2, k, NULL, err));
    Q8_TRY(insert_node(g, pos++, n, "centred", "Sub", in_sub, 2, centred, NULL, err));
    Q8_TRY(insert_node(g, pos++, n, "scaled", "Mul", in_mul, 2, scaled, NULL, err));
    char *op = q8_strdup("Add");
    if (!op) return nomem(err);
    free(n->op_type);
    n->op_type = op;
    drop_all_attrs(n);
    int in_out[2] = {scaled, st[2]}, y = n->outputs[0];
    return q8_node_set_io(n, in_out, 2, &y, 1, err);
}

/* QuantizeLinear / DequantizeLinear < 13 are per tensor. */
static q8_status finish_qdq(q8_graph *g, int i, int64_t opset, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_tensor *s = q8_in(g, n, 1), *z = q8_in(g, n, 2);
    if (!known(s) || !s->data || s->dtype != Q8_F32) return Q8_OK;
    int64_t cnt = q8_tensor_numel(s);
    if (cnt == 1 || (known(z) && q8_tensor_numel(z) != cnt)) return Q8_OK;
    return q8_node_fail(err, Q8_ERR_FORMAT, n,
                        "scale '%s' has %lld values; per-axis scales need opset 13 (the model "
                        "has %lld)",
                        s->name, (long long)cnt, (long long)opset);
}

q8_status q8_canon_finish(q8_graph *g, int i, q8_error *err) {
    q8_node *n = g->nodes[i];
    const q8_attr *a;
    int64_t iv = 0;
    float fv = 0;
    /* Read a mark's value and drop it: the rest of the node is canonical. */
#define TAKE(tag) ((a = q8_attr_find(n, tag)) && (iv = a->i, fv = a->f, drop_attr(n, tag), true))
    if (TAKE(TAG_SOFTMAX)) return finish_softmax(g, i, err);
    if (TAKE(TAG_BCAST)) return finish_bcast(g, i, iv, err);
    if (TAKE(TAG_PRELU)) return finish_prelu(g, i, err);
    if (TAKE(TAG_NEAREST)) return finish_nearest(g, i, err);
    if (TAKE(TAG_CLIP)) return finish_clip(g, i, err);
    if (TAKE(TAG_PAD)) return finish_pad(g, i, fv, err);
    if (TAKE(TAG_BN)) return finish_bn(g, i, err);
    if (TAKE(TAG_QDQ)) return finish_qdq(g, i, iv, err);
#undef TAKE
    Q8_ASSERT(!q8_canon_pending(n)); /* only the pass makes marks */
    return Q8_OK;
}
