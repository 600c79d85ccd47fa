/* Fixed input shapes, shape inference, constant folding and If inlining. */
#include <string.h>

#include "backend.h"
#include "op.h"
#include "passes.h"

/* Compute a node whose inputs are all constants, through the host backend.
 * ptr: n_tensors entries, all NULL; left all NULL again. */
/* A branch or body tensor moved into the graph: its dtype, shape and
 * data (the data now owned by t). */
static void take_tensor(q8_tensor *t, q8_tensor *bt) {
    t->dtype = bt->dtype;
    t->ndim = bt->ndim;
    memcpy(t->dims, bt->dims, sizeof t->dims);
    t->shape_known = bt->shape_known;
    t->data = bt->data;
    t->owns_data = bt->owns_data;
    bt->data = NULL;
    bt->owns_data = false;
}

static q8_status fold_node(q8_graph *g, q8_node *n, void **ptr, q8_error *err) {
    q8_status s = Q8_OK;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0) ptr[n->inputs[i]] = g->tensors[n->inputs[i]]->data;
    for (int i = 0; i < n->n_outputs && s == Q8_OK; i++) {
        if (n->outputs[i] < 0) continue;
        q8_tensor *t = g->tensors[n->outputs[i]];
        s = q8_tensor_alloc_data(t, err);
        if (s == Q8_OK) ptr[n->outputs[i]] = t->data;
    }
    if (s == Q8_OK) s = q8_backend_host()->eval_node(g, n, ptr, err);
    if (s != Q8_OK)
        for (int i = 0; i < n->n_outputs; i++)
            if (n->outputs[i] >= 0) q8_tensor_free_data(g->tensors[n->outputs[i]]);
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0) ptr[n->inputs[i]] = NULL;
    for (int i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] >= 0) ptr[n->outputs[i]] = NULL;
    return s;
}

/* Insert count nodes at position pos. */
static q8_status insert_nodes(q8_graph *g, int pos, q8_node **nodes, int count, q8_error *err) {
    if (g->n_nodes + count > g->cap_nodes) {
        int cap = g->n_nodes + count + 64;
        q8_node **nn = realloc(g->nodes, sizeof *nn * (size_t)cap);
        if (!nn) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        g->nodes = nn;
        g->cap_nodes = cap;
    }
    memmove(g->nodes + pos + count, g->nodes + pos, sizeof *g->nodes * (size_t)(g->n_nodes - pos));
    memcpy(g->nodes + pos, nodes, sizeof *nodes * (size_t)count);
    g->n_nodes += count;
    return Q8_OK;
}

/* Replace an If node at position pos, whose condition is constant, by the
 * chosen branch's nodes followed by Identity nodes onto the If's outputs. */
static q8_status inline_if(q8_graph *g, int pos, q8_error *err) {
    q8_node *n = g->nodes[pos];
    const q8_tensor *cond = q8_in(g, n, 0);
    /* Check the size before reading the value. */
    if (q8_tensor_numel(cond) != 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "condition must hold one value");
    bool c = false;
    switch (cond->dtype) {
    case Q8_BOOL: case Q8_U8: case Q8_I8: c = *(const uint8_t *)cond->data != 0; break;
    case Q8_I32: c = *(const int32_t *)cond->data != 0; break;
    case Q8_F32: c = *(const float *)cond->data != 0.0f; break; /* -0.0 is false */
    case Q8_I64: c = *(const int64_t *)cond->data != 0; break;
    default: return q8_node_fail(err, Q8_ERR_FORMAT, n, "condition has dtype %s", q8_dtype_name(cond->dtype));
    }
    const char *which = c ? "then_branch" : "else_branch";
    q8_attr *a = (q8_attr *)q8_attr_find(n, which);
    if (!a || a->type != Q8_ATTR_GRAPH || !a->g)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "missing %s", which);
    q8_graph *b = a->g;
    if (b->n_outputs != n->n_outputs)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s has %d outputs, the node %d", which,
                            b->n_outputs, n->n_outputs);
    int *map = malloc(sizeof(int) * (size_t)(b->n_tensors ? b->n_tensors : 1));
    if (!map) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status s = Q8_OK;
    /* Tensors: outer names resolve in g; the branch's own move into g. */
    for (int i = 0; i < b->n_tensors && s == Q8_OK; i++) {
        q8_tensor *bt = b->tensors[i];
        if (bt->outer) {
            map[i] = q8_graph_find(g, bt->name);
            if (map[i] < 0)
                s = q8_node_fail(err, Q8_ERR_FORMAT, n, "%s uses '%s', which is not defined",
                                 which, bt->name);
            continue;
        }
        bool dup;
        map[i] = q8_graph_add_tensor(g, bt->name, &dup);
        if (map[i] < 0) {
            s = dup ? q8_node_fail(err, Q8_ERR_FORMAT, n, "%s redefines the name '%s'", which, bt->name)
                    : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        take_tensor(g->tensors[map[i]], bt);
    }
    /* Nodes: moved, indices remapped, nested subgraphs re-parented. */
    int nb = b->n_nodes, total = nb + n->n_outputs;
    q8_node **moved = calloc((size_t)(total ? total : 1), sizeof *moved);
    if (s == Q8_OK && !moved) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int j = 0; j < nb && s == Q8_OK; j++) {
        q8_node *bn = b->nodes[j];
        for (int k = 0; k < bn->n_inputs; k++)
            if (bn->inputs[k] >= 0) bn->inputs[k] = map[bn->inputs[k]];
        for (int k = 0; k < bn->n_outputs; k++)
            if (bn->outputs[k] >= 0) bn->outputs[k] = map[bn->outputs[k]];
        for (int k = 0; k < bn->n_attrs; k++)
            if (bn->attrs[k].type == Q8_ATTR_GRAPH && bn->attrs[k].g) bn->attrs[k].g->parent = g;
        bn->scope = n->scope; /* an If inside a branch: its nodes stay in that branch */
        moved[j] = bn;
    }
    for (int k = 0; k < n->n_outputs && s == Q8_OK; k++) {
        q8_node *id = calloc(1, sizeof *id);
        if (!id || !(id->name = q8_strdup(n->name)) || !(id->op_type = q8_strdup("Identity")) ||
            !(id->domain = q8_strdup(""))) {
            if (id) q8_node_free_contents(id);
            free(id);
            s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        moved[nb + k] = id;
        id->scope = n->scope;
        int in = map[b->outputs[k]], out = n->outputs[k];
        s = q8_node_set_io(id, &in, 1, &out, out >= 0 ? 1 : 0, err);
    }
    if (s == Q8_OK) {
        s = insert_nodes(g, pos + 1, moved, total, err);
        if (s == Q8_OK) {
            b->n_nodes = 0; /* now owned by g */
            n->dead = true;
        }
    }
    if (s != Q8_OK) {
        for (int k = 0; moved && k < n->n_outputs; k++)
            if (moved[nb + k]) {
                q8_node_free_contents(moved[nb + k]);
                free(moved[nb + k]);
            }
    }
    free(moved);
    free(map);
    return s;
}

/* The branch graph `which` of If node n, checked. */
static q8_status branch_of(q8_node *n, const char *which, q8_graph **out, q8_error *err) {
    const q8_attr *a = q8_attr_find(n, which);
    if (!a || a->type != Q8_ATTR_GRAPH || !a->g)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "missing %s", which);
    if (a->g->n_outputs != n->n_outputs)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s has %d outputs, the node %d", which,
                            a->g->n_outputs, n->n_outputs);
    *out = a->g;
    return Q8_OK;
}

/* Move branch b's tensors into g (map[i]: index in g; outer names resolve
 * in g) and its nodes into nodes[] with the given scope. */
static q8_status move_branch(q8_graph *g, const q8_node *n, const char *which, q8_graph *b,
                             int scope, int *map, q8_node **nodes, q8_error *err) {
    for (int i = 0; i < b->n_tensors; i++) {
        q8_tensor *bt = b->tensors[i];
        if (bt->outer) {
            map[i] = q8_graph_find(g, bt->name);
            if (map[i] < 0)
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s uses '%s', which is not defined",
                                    which, bt->name);
            continue;
        }
        bool dup;
        map[i] = q8_graph_add_tensor(g, bt->name, &dup);
        if (map[i] < 0)
            return dup ? q8_node_fail(err, Q8_ERR_FORMAT, n, "%s redefines the name '%s'", which,
                                      bt->name)
                       : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        take_tensor(g->tensors[map[i]], bt);
    }
    for (int j = 0; j < b->n_nodes; j++) {
        q8_node *bn = b->nodes[j];
        for (int k = 0; k < bn->n_inputs; k++)
            if (bn->inputs[k] >= 0) bn->inputs[k] = map[bn->inputs[k]];
        for (int k = 0; k < bn->n_outputs; k++)
            if (bn->outputs[k] >= 0) bn->outputs[k] = map[bn->outputs[k]];
        for (int k = 0; k < bn->n_attrs; k++)
            if (bn->attrs[k].type == Q8_ATTR_GRAPH && bn->attrs[k].g) bn->attrs[k].g->parent = g;
        bn->scope = scope;
        nodes[j] = bn;
    }
    return Q8_OK;
}

/* A scope id no node or If of g uses yet. */
static int fresh_scope(const q8_graph *g) {
    int64_t max = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->scope > max) max = n->scope;
        if (strcmp(n->domain, "q8") == 0 && strcmp(n->op_type, "If") == 0) {
            int64_t t = q8_attr_int(n, "then_scope", 0), e = q8_attr_int(n, "else_scope", 0);
            if (t > max) max = t;
            if (e > max) max = e;
        }
    }
    return (int)max + 1;
}

/* An If whose condition is computed at run time, at position pos: its
 * branches' nodes go before it in scopes of their own, and it becomes the
 * q8.If that picks its outputs (src/core/control.h). */
static q8_status flatten_if(q8_graph *g, int pos, q8_error *err) {
    q8_node *n = g->nodes[pos];
    q8_graph *tb = NULL, *eb = NULL;
    Q8_TRY(branch_of(n, "then_branch", &tb, err));
    Q8_TRY(branch_of(n, "else_branch", &eb, err));
    int k_out = n->n_outputs, nt = tb->n_nodes, ne = eb->n_nodes;
    int ts = fresh_scope(g), es = ts + 1;
    int *tmap = malloc(sizeof(int) * ((size_t)tb->n_tensors + 1));
    int *emap = malloc(sizeof(int) * ((size_t)eb->n_tensors + 1));
    q8_node **moved = malloc(sizeof *moved * ((size_t)(nt + ne) + 1));
    int *in = malloc(sizeof(int) * (2 * (size_t)k_out + 1));
    q8_status s = tmap && emap && moved && in ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (s == Q8_OK) s = move_branch(g, n, "then_branch", tb, ts, tmap, moved, err);
    if (s == Q8_OK) s = move_branch(g, n, "else_branch", eb, es, emap, moved + nt, err);
    if (s == Q8_OK) {
        in[0] = n->inputs[0];
        for (int k = 0; k < k_out; k++) {
            in[1 + k] = tmap[tb->outputs[k]];
            in[1 + k_out + k] = emap[eb->outputs[k]];
        }
        int *outs = malloc(sizeof(int) * ((size_t)k_out + 1));
        if (!outs) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        else memcpy(outs, n->outputs, sizeof(int) * (size_t)k_out);
        if (s == Q8_OK) s = q8_node_set_io(n, in, 1 + 2 * k_out, outs, k_out, err);
        free(outs);
    }
    char *dom = s == Q8_OK ? q8_strdup("q8") : NULL;
    /* one at a time: adding an attribute may move the others */
    q8_attr *a = NULL;
    if (s == Q8_OK && dom && (a = q8_node_set_attr(n, "then_scope", Q8_ATTR_INT))) a->i = ts;
    if (a && (a = q8_node_set_attr(n, "else_scope", Q8_ATTR_INT))) a->i = es;
    if (s == Q8_OK && !a) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (s == Q8_OK) {
        free(n->domain);
        n->domain = dom;
        dom = NULL;
        s = insert_nodes(g, pos, moved, nt + ne, err);
    }
    if (s == Q8_OK) {
        tb->n_nodes = eb->n_nodes = 0; /* now owned by g */
        /* the branch graphs are empty now: drop them */
        for (int k = n->n_attrs - 1; k >= 0; k--)
            if (n->attrs[k].type == Q8_ATTR_GRAPH) {
                q8_attr_clear(&n->attrs[k]);
                n->attrs[k] = n->attrs[--n->n_attrs];
            }
    }
    free(dom);
    free(tmap);
    free(emap);
    free(moved);
    free(in);
    return s;
}

/* Folding computes a node at load into a constant. A node whose output is
 * far larger than its inputs (ConstantOfShape, Expand, MelWeightMatrix of a
 * few scalars) is folded only while that output is at most
 * Q8_FOLD_GROWTH_FREE bytes, and all folds together stay within
 * Q8_FOLD_BUDGET_FREE plus 4x the model's constants: a tiny file cannot
 * make the loader allocate gigabytes. Such a node stays in the graph and
 * runs with the session (where its output is planned like any other); data
 * movement of the model's own weights (Transpose, Cast, Reshape) always
 * folds. */
#define Q8_FOLD_GROWTH_FREE ((size_t)64 << 20)
#define Q8_FOLD_BUDGET_FREE ((size_t)512 << 20)

typedef struct fold_budget {
    size_t left;
} fold_budget;

static bool foldable(const q8_graph *g, const q8_node *n, fold_budget *fb) {
    if (q8_op_flags(n->op) & Q8_OPF_NO_FOLD) return false;
    if (q8_op_flags(n->op) & Q8_OPF_SHAPE_ONLY) return true;
    size_t in = 0, out = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0) continue;
        const q8_tensor *t = g->tensors[n->inputs[i]];
        if (!t->data) return false;
        in += q8_tensor_nbytes(t);
    }
    for (int i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] >= 0) out += q8_tensor_nbytes(g->tensors[n->outputs[i]]);
    bool grows = out > Q8_FOLD_GROWTH_FREE && out / 4 > in;
    if (grows || out > fb->left) return false;
    fb->left -= out;
    return true;
}

static fold_budget fold_budget_of(const q8_graph *g) {
    size_t consts = 0;
    for (int i = 0; i < g->n_tensors; i++)
        if (g->tensors[i]->data) consts += q8_tensor_nbytes(g->tensors[i]);
    return (fold_budget){Q8_FOLD_BUDGET_FREE + (consts > SIZE_MAX / 8 ? SIZE_MAX / 2 : 4 * consts)};
}

/* One pointer table for all the folds of the pass: a fresh one per node made
 * a graph of N constant nodes O(N^2). It grows when If inlining adds
 * tensors. */
typedef struct fold_table {
    void **ptr;
    int cap;
} fold_table;

static q8_status fold_table_fit(fold_table *ft, int n_tensors, q8_error *err) {
    if (n_tensors <= ft->cap) return Q8_OK;
    int cap = n_tensors + n_tensors / 2 + 16;
    void **p = realloc(ft->ptr, sizeof(void *) * (size_t)cap);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    memset(p + ft->cap, 0, sizeof(void *) * (size_t)(cap - ft->cap));
    ft->ptr = p;
    ft->cap = cap;
    return Q8_OK;
}

/* Scopes that cannot run at the model's shapes. A run-time If's side one
 * of whose nodes fails its own shape inference (Q8_ERR_SHAPE: Silero VAD
 * v5's 8 kHz side, given a 16 kHz chunk) is dropped, not the model: its
 * If keeps the other side, with zeros of that side's shapes in the dropped
 * side's place (never read) and the failure in _then_fails / _else_fails;
 * a run whose condition picks it stops with that message
 * (kernels/cpu/backend.c). Both sides failing drops the If's own side in
 * turn, and is the load's error at the top. Any other error (an
 * unsupported op, a malformed branch) stays the load's error wherever it
 * is. */
#define MAX_FAILED_SCOPES 64

typedef struct failed_scopes {
    int n;
    int scope[MAX_FAILED_SCOPES];
    char msg[MAX_FAILED_SCOPES][512];
    /* parent[s]: the scope of the q8.If that opens scope s, recorded as
     * the Ifs are flattened (-1: not known, then looked up) */
    int *parent;
    int cap;
} failed_scopes;

static q8_status note_parent(failed_scopes *fs, int s, int parent, q8_error *err) {
    if (s < 0 || s > INT32_MAX / 2) return Q8_OK;
    if (s >= fs->cap) {
        int cap = s + s / 2 + 16;
        int *p = realloc(fs->parent, sizeof(int) * (size_t)cap);
        if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        for (int k = fs->cap; k < cap; k++) p[k] = -1;
        fs->parent = p;
        fs->cap = cap;
    }
    fs->parent[s] = parent;
    return Q8_OK;
}

/* The scope of the q8.If that opens scope s (its parent), or -1. */
static int parent_scope(const q8_graph *g, const failed_scopes *fs, int s) {
    if (s < fs->cap && fs->parent[s] >= 0) return fs->parent[s];
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead || strcmp(n->op_type, "If") != 0 || strcmp(n->domain, "q8") != 0) continue;
        if (q8_attr_int(n, "then_scope", 0) == s || q8_attr_int(n, "else_scope", 0) == s)
            return n->scope;
    }
    return -1;
}

/* Whether scope s lies in a failed scope. */
static bool in_failed(const q8_graph *g, const failed_scopes *fs, int s) {
    for (int depth = 0; s > 0 && depth <= g->n_nodes; depth++) {
        for (int k = 0; k < fs->n; k++)
            if (fs->scope[k] == s) return true;
        s = parent_scope(g, fs, s);
    }
    return false;
}

static void add_failed(failed_scopes *fs, int scope, const char *msg) {
    fs->scope[fs->n] = scope;
    snprintf(fs->msg[fs->n++], sizeof fs->msg[0], "%s", msg);
}

static void remove_failed(failed_scopes *fs, int k) {
    fs->scope[k] = fs->scope[--fs->n];
    memcpy(fs->msg[k], fs->msg[fs->n], sizeof fs->msg[k]);
}

/* q8.If n before its inference: a side of it in fs gets zeros in place of
 * its outputs and keeps the message. *both: neither side can run (n is
 * left as it is; the message in err). */
static q8_status drop_failed_sides(q8_graph *g, q8_node *n, failed_scopes *fs, bool *both,
                                   q8_error *err) {
    *both = false;
    int64_t sc[2] = {q8_attr_int(n, "then_scope", 0), q8_attr_int(n, "else_scope", 0)};
    int k_out = n->n_outputs, hit[2] = {-1, -1};
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < fs->n; k++)
            if (fs->scope[k] == sc[side]) hit[side] = k;
    if (hit[0] < 0 && hit[1] < 0) return Q8_OK;
    if (hit[0] >= 0 && hit[1] >= 0) {
        *both = true;
        q8_status st = q8_node_fail(err, Q8_ERR_SHAPE, n, "neither branch can run: %s",
                                    fs->msg[hit[0]]);
        remove_failed(fs, hit[0] > hit[1] ? hit[0] : hit[1]);
        remove_failed(fs, hit[0] < hit[1] ? hit[0] : hit[1]);
        return st;
    }
    int bad = hit[0] >= 0 ? 0 : 1, k = hit[bad];
    if (n->n_inputs != 1 + 2 * k_out)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has %d inputs and %d outputs, expected "
                            "1 + 2 x outputs inputs", n->n_inputs, n->n_outputs);
    for (int o = 0; o < k_out; o++) {
        const q8_tensor *good = q8_in(g, n, 1 + (1 - bad) * k_out + o);
        if (!good || !good->shape_known)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "output %d of its runnable side has no "
                                "shape", o);
        char base[96];
        snprintf(base, sizeof base, "%s_unrunnable", good->name);
        int t = q8_graph_add_tensor_unique(g, base);
        if (t < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        good = q8_in(g, n, 1 + (1 - bad) * k_out + o); /* adding may move the tensors */
        q8_tensor_set_shape(g->tensors[t], good->dtype, good->dims, good->ndim);
        Q8_TRY(q8_tensor_alloc_data(g->tensors[t], err));
        n->inputs[1 + bad * k_out + o] = t;
    }
    q8_attr *a = q8_node_set_attr(n, bad ? "_else_fails" : "_then_fails", Q8_ATTR_STRING);
    if (!a || !(a->s = q8_strdup(fs->msg[k]))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    remove_failed(fs, k);
    return Q8_OK;
}

/* One node of infer_all at *ip (If, Loop and Scan expand in place: *ip is
 * set so that the loop infers what they became next). *shape_step: the
 * error, if any, is the node's own shape inference's. */
static q8_status infer_one(q8_graph *g, int *ip, fold_budget *fb, fold_table *ft,
                           failed_scopes *fs, bool *shape_step, q8_error *err) {
    int i = *ip;
    *shape_step = false;
    q8_node *n = g->nodes[i];
    if (q8_canon_pending(n)) {
        Q8_TRY(q8_canon_finish(g, i, err));
        n = g->nodes[i]; /* it may have inserted nodes before this one */
    }
    bool onnx_dom = !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
    if (onnx_dom && strcmp(n->op_type, "If") == 0) {
        const q8_tensor *cond = q8_in(g, n, 0);
        if (!cond) return q8_node_fail(err, Q8_ERR_FORMAT, n, "has no condition input");
        if (!cond->data) {
            Q8_TRY(flatten_if(g, i, err));
            Q8_TRY(note_parent(fs, (int)q8_attr_int(n, "then_scope", -1), n->scope, err));
            Q8_TRY(note_parent(fs, (int)q8_attr_int(n, "else_scope", -1), n->scope, err));
            *ip = i - 1; /* infer the branches' nodes, now from position i */
            return Q8_OK;
        }
        return inline_if(g, i, err);
    }
    if (onnx_dom && strcmp(n->op_type, "Loop") == 0)
        return q8_unroll_loop(g, i, err); /* the copies of its body follow it */
    if (onnx_dom && strcmp(n->op_type, "Scan") == 0) return q8_unroll_scan(g, i, err);
    n->op = q8_op_lookup(n->domain, n->op_type);
    if (n->op == Q8_OP_NONE) {
        if (onnx_dom)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "op %s is not supported", n->op_type);
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "op %s.%s is not supported", n->domain,
                            n->op_type);
    }
    q8_status st = q8_node_reinfer(g, n, err);
    if (st != Q8_OK) {
        *shape_step = st == Q8_ERR_SHAPE;
        return st;
    }
    if (foldable(g, n, fb)) {
        Q8_TRY(fold_table_fit(ft, g->n_tensors, err));
        Q8_TRY(fold_node(g, n, ft->ptr, err));
        n->dead = true;
    }
    return Q8_OK;
}

static q8_status infer_all(q8_graph *g, fold_table *ft, q8_error *err) {
    fold_budget fb = fold_budget_of(g);
    failed_scopes *fs = calloc(1, sizeof *fs);
    if (!fs) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status st = Q8_OK;
    q8_error e = {0}; /* a failure handled here leaves err as it was */
    for (int i = 0; i < g->n_nodes && st == Q8_OK; i++) {
        q8_node *n = g->nodes[i];
        if (n->dead) continue;
        if (n->scope > 0 && fs->n && in_failed(g, fs, n->scope)) {
            n->dead = true; /* in a side that cannot run */
            continue;
        }
        bool q8_if = !strcmp(n->op_type, "If") && !strcmp(n->domain, "q8"), both = false;
        bool shape_step = false;
        if (q8_if && fs->n) st = drop_failed_sides(g, n, fs, &both, &e);
        if (st == Q8_OK) st = infer_one(g, &i, &fb, ft, fs, &shape_step, &e);
        /* this node's side cannot run (or, both of an If's sides failing,
         * the If's own side): dropped, if it is a side */
        bool side_fails = (both || (shape_step && g->nodes[i] == n)) && n->scope > 0;
        if (st != Q8_OK && side_fails && fs->n < MAX_FAILED_SCOPES) {
            add_failed(fs, n->scope, e.msg);
            n->dead = true;
            st = Q8_OK;
        }
    }
    if (st != Q8_OK && err) *err = e;
    free(fs->parent);
    free(fs);
    return st;
}

q8_status q8_pass_infer(q8_graph *g, q8_error *err) {
    fold_table ft = {0};
    q8_status s = infer_all(g, &ft, err);
    free(ft.ptr);
    if (s == Q8_OK) q8_graph_compact(g);
    return s;
}
