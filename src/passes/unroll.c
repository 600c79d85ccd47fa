/* Unrolling a body subgraph into the flat graph, N times (Loop and Scan,
 * src/passes/loop.c): each iteration clones the body's nodes with fresh
 * tensor names, reading the tensors the caller binds to the body's inputs;
 * the body's constants are moved into the graph once and shared. */
#include <string.h>

#include "unroll.h"

static q8_status nomem(q8_error *err) { return q8_fail(err, Q8_ERR_NOMEM, "out of memory"); }

/* A new tensor of u->g named "<base>~<tag>", unique in the whole tree of
 * graphs (If branches not yet flattened move their names in later). */
static int new_tensor(q8_unroll *u, const char *base, const char *tag) {
    return q8_graph_add_tensor_unique_in_tree(u->g, base, "~", tag);
}

q8_status q8_unroll_init(q8_unroll *u, q8_graph *g, const q8_node *n, q8_graph *b,
                         q8_error *err) {
    memset(u, 0, sizeof *u);
    u->g = g;
    u->n = n;
    u->b = b;
    for (int j = 0; j < b->n_nodes; j++)
        for (int k = 0; k < b->nodes[j]->n_attrs; k++)
            if (b->nodes[j]->attrs[k].type == Q8_ATTR_GRAPH)
                return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "its body's node '%s' (%s) has "
                                    "a subgraph of its own; nested control flow in a %s body "
                                    "is not supported", b->nodes[j]->name,
                                    b->nodes[j]->op_type, n->op_type);
    u->consts = malloc(sizeof(int) * ((size_t)b->n_tensors + 1));
    if (!u->consts) return nomem(err);
    /* The body's constants: moved into g once, read by every iteration. */
    for (int i = 0; i < b->n_tensors; i++) {
        q8_tensor *bt = b->tensors[i];
        u->consts[i] = -1;
        if (bt->outer || !bt->data) continue;
        int t = new_tensor(u, bt->name, "const");
        if (t < 0) return nomem(err);
        q8_tensor *gt = g->tensors[t];
        q8_tensor_set_shape(gt, bt->dtype, bt->dims, bt->ndim);
        gt->data = bt->data;
        gt->owns_data = bt->owns_data;
        bt->data = NULL;
        bt->owns_data = false;
        u->consts[i] = t;
    }
    return Q8_OK;
}

void q8_unroll_free(q8_unroll *u) {
    for (int i = 0; i < u->count; i++) {
        q8_node_free_contents(u->nodes[i]);
        free(u->nodes[i]);
    }
    free(u->nodes);
    free(u->consts);
    memset(u, 0, sizeof *u);
}

static q8_status push(q8_unroll *u, q8_node *nn, q8_error *err) {
    if (u->count == u->cap) {
        int cap = u->cap ? 2 * u->cap : 64;
        q8_node **p = realloc(u->nodes, sizeof *p * (size_t)cap);
        if (!p) {
            q8_node_free_contents(nn);
            free(nn);
            return nomem(err);
        }
        u->nodes = p;
        u->cap = cap;
    }
    u->nodes[u->count++] = nn;
    return Q8_OK;
}

/* A new node "<loop>/<what>" of op type op, in the Loop's scope, queued. */
static q8_status new_node(q8_unroll *u, const char *what, const char *op, q8_node **out,
                          q8_error *err) {
    q8_node *nn = calloc(1, sizeof *nn);
    size_t len = strlen(u->n->name) + strlen(what) + 2;
    char *name = malloc(len);
    if (name) snprintf(name, len, "%s/%s", u->n->name, what);
    if (!nn || !name || !(nn->op_type = q8_strdup(op)) || !(nn->domain = q8_strdup(""))) {
        if (nn) q8_node_free_contents(nn);
        free(nn);
        free(name);
        return nomem(err);
    }
    nn->name = name;
    nn->scope = u->n->scope; /* a Loop inside an If branch: its iterations stay there */
    *out = nn;
    return push(u, nn, err);
}

static q8_tensor *clone_tensor(const q8_tensor *s) {
    q8_tensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->name = q8_strdup(s->name ? s->name : "");
    q8_tensor_set_shape(t, s->dtype, s->dims, s->ndim);
    t->shape_known = s->shape_known;
    t->producer = -1;
    t->q.axis = -1;
    if (!t->name || (s->data && q8_tensor_alloc_data(t, NULL) != Q8_OK)) {
        q8_tensor_free(t);
        return NULL;
    }
    if (s->data) memcpy(t->data, s->data, q8_tensor_nbytes(t));
    return t;
}

static bool clone_attr(q8_attr *d, const q8_attr *a) {
    *d = *a;
    d->name = q8_strdup(a->name);
    d->s = a->s ? q8_strdup(a->s) : NULL;
    d->floats = NULL;
    d->ints = NULL;
    d->strings = NULL;
    d->t = NULL;
    d->g = NULL;
    bool ok = d->name && (!a->s || d->s);
    if (ok && a->floats && a->n) {
        ok = (d->floats = malloc(sizeof(float) * (size_t)a->n)) != NULL;
        if (ok) memcpy(d->floats, a->floats, sizeof(float) * (size_t)a->n);
    }
    if (ok && a->ints && a->n) {
        ok = (d->ints = malloc(sizeof(int64_t) * (size_t)a->n)) != NULL;
        if (ok) memcpy(d->ints, a->ints, sizeof(int64_t) * (size_t)a->n);
    }
    if (ok && a->strings && a->n) {
        ok = (d->strings = calloc((size_t)a->n, sizeof(char *))) != NULL;
        for (int i = 0; ok && i < a->n; i++)
            ok = (d->strings[i] = q8_strdup(a->strings[i] ? a->strings[i] : "")) != NULL;
        if (!d->strings) d->n = 0;
    }
    if (ok && a->t) ok = (d->t = clone_tensor(a->t)) != NULL;
    return ok;
}

/* A copy of body node s, named "<loop>/<tag>/<s>", its tensors mapped. */
static q8_status clone_node(q8_unroll *u, const q8_node *s, const char *tag, const int *map,
                            q8_error *err) {
    size_t len = strlen(tag) + strlen(s->name) + 2;
    char *what = malloc(len);
    if (!what) return nomem(err);
    snprintf(what, len, "%s/%s", tag, s->name);
    q8_node *nn;
    q8_status st = new_node(u, what, s->op_type, &nn, err);
    free(what);
    if (st != Q8_OK) return st;
    free(nn->domain);
    if (!(nn->domain = q8_strdup(s->domain))) return nomem(err);
    int *in = malloc(sizeof(int) * ((size_t)s->n_inputs + 1));
    int *out = malloc(sizeof(int) * ((size_t)s->n_outputs + 1));
    st = in && out ? Q8_OK : nomem(err);
    for (int k = 0; st == Q8_OK && k < s->n_inputs; k++)
        in[k] = s->inputs[k] >= 0 ? map[s->inputs[k]] : -1;
    for (int k = 0; st == Q8_OK && k < s->n_outputs; k++)
        out[k] = s->outputs[k] >= 0 ? map[s->outputs[k]] : -1;
    if (st == Q8_OK) st = q8_node_set_io(nn, in, s->n_inputs, out, s->n_outputs, err);
    free(in);
    free(out);
    if (st != Q8_OK || !s->n_attrs) return st;
    if (!(nn->attrs = calloc((size_t)s->n_attrs, sizeof *nn->attrs))) return nomem(err);
    for (int k = 0; k < s->n_attrs; k++) {
        nn->n_attrs++;
        if (!clone_attr(&nn->attrs[k], &s->attrs[k])) return nomem(err);
    }
    return Q8_OK;
}

q8_status q8_unroll_body(q8_unroll *u, const char *tag, const int *in, int *out, q8_error *err) {
    const q8_graph *b = u->b;
    int *map = malloc(sizeof(int) * ((size_t)b->n_tensors + 1));
    if (!map) return nomem(err);
    for (int i = 0; i < b->n_tensors; i++) map[i] = u->consts[i];
    for (int k = 0; k < b->n_inputs; k++) map[b->inputs[k]] = in[k];
    q8_status st = Q8_OK;
    for (int i = 0; i < b->n_tensors && st == Q8_OK; i++) {
        const q8_tensor *bt = b->tensors[i];
        if (map[i] >= 0) continue;
        if (bt->outer) {
            map[i] = q8_graph_find(u->g, bt->name);
            if (map[i] < 0)
                st = q8_node_fail(err, Q8_ERR_FORMAT, u->n, "its body uses '%s', which is not "
                                  "defined", bt->name);
            continue;
        }
        map[i] = new_tensor(u, bt->name, tag);
        if (map[i] < 0) st = nomem(err);
    }
    for (int j = 0; j < b->n_nodes && st == Q8_OK; j++)
        st = clone_node(u, b->nodes[j], tag, map, err);
    for (int k = 0; k < b->n_outputs && st == Q8_OK; k++) out[k] = map[b->outputs[k]];
    free(map);
    return st;
}

q8_status q8_unroll_op(q8_unroll *u, const char *what, const char *op, const int *in, int n_in,
                       int out, q8_node **made, q8_error *err) {
    q8_node *nn;
    Q8_TRY(new_node(u, what, op, &nn, err));
    if (made) *made = nn;
    return q8_node_set_io(nn, in, n_in, &out, 1, err);
}

int q8_unroll_tensor(q8_unroll *u, const char *tag) {
    return new_tensor(u, u->n->name, tag);
}

int q8_unroll_const(q8_unroll *u, const char *tag, q8_dtype dt, const int64_t *dims, int nd,
                    const void *bytes) {
    int t = new_tensor(u, u->n->name, tag);
    if (t < 0) return -1;
    q8_tensor *gt = u->g->tensors[t];
    q8_tensor_set_shape(gt, dt, dims, nd);
    if (q8_tensor_alloc_data(gt, NULL) != Q8_OK) return -1;
    memcpy(gt->data, bytes, q8_tensor_nbytes(gt));
    return t;
}

q8_status q8_unroll_stack(q8_unroll *u, const char *what, const int *parts, int count,
                          int64_t axis, int out, q8_error *err) {
    int64_t dims[1] = {1};
    int ax = q8_unroll_const(u, "stack_axes", Q8_I64, dims, 1, &axis);
    int *cat = malloc(sizeof(int) * ((size_t)count + 1));
    if (ax < 0 || !cat) {
        free(cat);
        return nomem(err);
    }
    char tag[64];
    q8_status st = Q8_OK;
    for (int i = 0; i < count && st == Q8_OK; i++) {
        snprintf(tag, sizeof tag, "%s_%d", what, i);
        cat[i] = q8_unroll_tensor(u, tag);
        int in[2] = {parts[i], ax};
        st = cat[i] < 0 ? nomem(err) : q8_unroll_op(u, tag, "Unsqueeze", in, 2, cat[i], NULL, err);
    }
    q8_node *c = NULL;
    if (st == Q8_OK) st = q8_unroll_op(u, what, "Concat", cat, count, out, &c, err);
    q8_attr *a = st == Q8_OK ? q8_node_set_attr(c, "axis", Q8_ATTR_INT) : NULL;
    if (st == Q8_OK && !a) st = nomem(err);
    if (a) a->i = axis;
    free(cat);
    return st;
}

q8_status q8_unroll_finish(q8_unroll *u, int pos, q8_error *err) {
    q8_graph *g = u->g;
    if (g->n_nodes + u->count > g->cap_nodes) {
        int cap = g->n_nodes + u->count + 64;
        q8_node **nn = realloc(g->nodes, sizeof *nn * (size_t)cap);
        if (!nn) return nomem(err);
        g->nodes = nn;
        g->cap_nodes = cap;
    }
    memmove(g->nodes + pos + 1 + u->count, g->nodes + pos + 1,
            sizeof *g->nodes * (size_t)(g->n_nodes - pos - 1));
    memcpy(g->nodes + pos + 1, u->nodes, sizeof *u->nodes * (size_t)u->count);
    g->n_nodes += u->count;
    g->nodes[pos]->dead = true;
    u->count = 0; /* now owned by g */
    return Q8_OK;
}
