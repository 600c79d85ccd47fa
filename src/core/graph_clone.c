#include "graph_clone.h"

#include <string.h>

#include "shapes.h"

static bool dup_str(char **dst, const char *s) {
    if (!s) return true;
    return (*dst = q8_strdup(s)) != NULL;
}

static void *dup_mem(const void *p, size_t bytes) {
    if (!p) return NULL;
    void *q = malloc(bytes ? bytes : 1);
    if (q && bytes) memcpy(q, p, bytes);
    return q;
}

/* Everything of s but its name (dst has its own), into the fresh tensor d. */
static q8_status copy_tensor(q8_tensor *d, const q8_tensor *s, bool share, q8_error *err) {
    d->dtype = s->dtype;
    d->ndim = s->ndim;
    memcpy(d->dims, s->dims, sizeof d->dims);
    for (int i = 0; i < Q8_MAX_DIMS; i++)
        if (!dup_str(&d->dim_param[i], s->dim_param[i])) goto nomem;
    d->shape_known = s->shape_known;
    d->layout = s->layout;
    d->producer = s->producer;
    d->outer = s->outer;
    d->io_dtype = s->io_dtype;
    d->q = s->q;
    d->q.scale = NULL;
    if (s->q.scale && !(d->q.scale = dup_mem(s->q.scale, sizeof(float) * (size_t)s->q.n)))
        goto nomem;
    if (!s->data) return Q8_OK;
    if (share) {
        d->data = s->data;
        d->owns_data = false;
        return Q8_OK;
    }
    size_t nb = q8_tensor_nbytes(s);
    if (!(d->data = q8_aligned_alloc(nb))) goto nomem;
    memcpy(d->data, s->data, nb);
    d->owns_data = true;
    return Q8_OK;
nomem:
    return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying tensor '%s'", s->name);
}

static q8_status copy_attr(q8_attr *d, const q8_attr *s, bool share, q8_error *err) {
    d->type = s->type;
    d->f = s->f;
    d->i = s->i;
    d->n = s->n;
    if (!dup_str(&d->name, s->name) || !dup_str(&d->s, s->s)) goto nomem;
    if (s->floats && !(d->floats = dup_mem(s->floats, sizeof(float) * (size_t)s->n))) goto nomem;
    if (s->ints && !(d->ints = dup_mem(s->ints, sizeof(int64_t) * (size_t)s->n))) goto nomem;
    if (s->strings) {
        if (!(d->strings = calloc((size_t)s->n + 1, sizeof(char *)))) goto nomem;
        for (int i = 0; i < s->n; i++)
            if (!dup_str(&d->strings[i], s->strings[i])) goto nomem;
    }
    if (s->t) {
        if (!(d->t = calloc(1, sizeof *d->t)) || !dup_str(&d->t->name, s->t->name)) goto nomem;
        Q8_TRY(copy_tensor(d->t, s->t, share, err));
    }
    /* the passes inline or flatten every subgraph (If branches become
     * scopes, loops are unrolled): what is left to copy has none */
    if (s->g)
        return q8_fail(err, Q8_ERR_UNSUPPORTED,
                       "cannot copy a graph with subgraphs (attribute '%s'): run the passes "
                       "first", s->name ? s->name : "");
    return Q8_OK;
nomem:
    return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying attribute '%s'",
                   s->name ? s->name : "");
}

static q8_status copy_node(q8_node *d, const q8_node *s, bool share, q8_error *err) {
    free(d->domain);
    d->domain = NULL;
    if (!dup_str(&d->domain, s->domain))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying node '%s'", s->name);
    Q8_TRY(q8_node_set_io(d, s->inputs, s->n_inputs, s->outputs, s->n_outputs, err));
    d->op = s->op;
    d->dead = s->dead;
    d->scope = s->scope;
    if (s->n_attrs) {
        if (!(d->attrs = calloc((size_t)s->n_attrs, sizeof *d->attrs)))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying node '%s'", s->name);
        /* counted before it is filled, so that a failed copy is freed too */
        for (int k = 0; k < s->n_attrs; k++) {
            d->n_attrs++;
            Q8_TRY(copy_attr(&d->attrs[k], &s->attrs[k], share, err));
        }
    }
    return Q8_OK;
}

static int *dup_ints(const int *p, int n, bool *ok) {
    if (!n) return NULL;
    int *q = dup_mem(p, sizeof(int) * (size_t)n);
    if (!q) *ok = false;
    return q;
}

static q8_status clone_into(const q8_graph *src, bool share, q8_graph *g, q8_error *err) {
    for (int i = 0; i < src->n_tensors; i++) {
        if (q8_graph_add_tensor(g, src->tensors[i]->name, NULL) != i)
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying a graph");
        Q8_TRY(copy_tensor(g->tensors[i], src->tensors[i], share, err));
    }
    for (int i = 0; i < src->n_nodes; i++) {
        const q8_node *s = src->nodes[i];
        if (q8_graph_add_node(g, s->name, s->op_type) != i)
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying a graph");
        Q8_TRY(copy_node(g->nodes[i], s, share, err));
    }
    bool ok = dup_str(&g->name, src->name);
    g->inputs = dup_ints(src->inputs, src->n_inputs, &ok);
    g->n_inputs = src->n_inputs;
    g->outputs = dup_ints(src->outputs, src->n_outputs, &ok);
    g->n_outputs = src->n_outputs;
    g->bound = dup_ints(src->bound, src->n_bound, &ok);
    g->n_bound = src->n_bound;
    g->opset = src->opset;
    if (!ok) return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying a graph");
    return Q8_OK;
}

q8_status q8_graph_clone(const q8_graph *src, bool share_constants, q8_graph **out,
                         q8_error *err) {
    *out = NULL;
    q8_graph *g = q8_graph_new();
    if (!g) return q8_fail(err, Q8_ERR_NOMEM, "out of memory copying a graph");
    g->parent = src->parent;
    q8_status s = clone_into(src, share_constants, g, err);
    /* node params are private to each node: made again from the shapes */
    if (s == Q8_OK) s = q8_graph_infer_shapes(g, err);
    if (s != Q8_OK) {
        q8_graph_free(g);
        return s;
    }
    *out = g;
    return Q8_OK;
}
