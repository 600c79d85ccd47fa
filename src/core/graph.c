#include "graph.h"

#include "control.h"
#include "half.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

/* ---- name map: open addressing, FNV-1a ---- */

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int map_get(const q8_name_map *m, const char *key) {
    if (!m->cap) return -1;
    size_t mask = m->cap - 1;
    for (size_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
        if (!m->keys[i]) return -1;
        if (strcmp(m->keys[i], key) == 0) return m->vals[i];
    }
}

static bool map_grow(q8_name_map *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    char **keys = calloc(cap, sizeof *keys);
    int *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    for (size_t j = 0; j < m->cap; j++) {
        if (!m->keys[j]) continue;
        size_t i = hash_str(m->keys[j]) & (cap - 1);
        while (keys[i]) i = (i + 1) & (cap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return true;
}

/* key is borrowed (owned by the tensor). */
static bool map_put(q8_name_map *m, char *key, int val) {
    if ((m->count + 1) * 2 > m->cap && !map_grow(m)) return false;
    size_t mask = m->cap - 1;
    size_t i = hash_str(key) & mask;
    while (m->keys[i]) i = (i + 1) & mask;
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return true;
}

/* ---- graph ---- */

q8_graph *q8_graph_new(void) {
    q8_graph *g = calloc(1, sizeof *g);
    if (g) g->opset = Q8_OPSET_CANONICAL;
    return g;
}

void q8_attr_clear(q8_attr *a) {
    free(a->name);
    free(a->s);
    free(a->floats);
    free(a->ints);
    for (int i = 0; a->strings && i < a->n; i++) free(a->strings[i]);
    free(a->strings);
    if (a->t) q8_tensor_free(a->t);
    if (a->g) q8_graph_free(a->g);
    memset(a, 0, sizeof *a);
}

void q8_node_free_contents(q8_node *n) {
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->inputs);
    free(n->outputs);
    for (int i = 0; i < n->n_attrs; i++) q8_attr_clear(&n->attrs[i]);
    free(n->attrs);
    free(n->params);
    memset(n, 0, sizeof *n);
}

static void *released_page;
static pthread_once_t released_once = PTHREAD_ONCE_INIT;

static void map_released_page(void) {
    void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static _Alignas(Q8_ALIGN) uint8_t fallback[Q8_ALIGN];
    released_page = p == MAP_FAILED ? fallback : p;
}

void q8_tensor_release_data(q8_tensor *t) {
    pthread_once(&released_once, map_released_page);
    q8_tensor_free_data(t);
    t->data = released_page;
}

bool q8_tensor_released(const q8_tensor *t) { return t->data && t->data == released_page; }

void q8_tensor_free_data(q8_tensor *t) {
    if (t->owns_data) q8_aligned_free(t->data);
    t->data = NULL;
    t->owns_data = false;
    t->layout = 0;
}

void q8_tensor_free(q8_tensor *t) {
    if (!t) return;
    free(t->name);
    for (int i = 0; i < Q8_MAX_DIMS; i++) free(t->dim_param[i]);
    q8_tensor_free_data(t);
    free(t->q.scale);
    free(t);
}

void q8_graph_free(q8_graph *g) {
    if (!g) return;
    for (int i = 0; i < g->n_tensors; i++) q8_tensor_free(g->tensors[i]);
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node_free_contents(g->nodes[i]);
        free(g->nodes[i]);
    }
    free(g->tensors);
    free(g->nodes);
    free(g->inputs);
    free(g->bound);
    free(g->outputs);
    free(g->name);
    free(g->names.keys);
    free(g->names.vals);
    free(g);
}

int q8_graph_find(const q8_graph *g, const char *name) {
    return map_get(&g->names, name);
}

const q8_node *q8_graph_find_node(const q8_graph *g, const char *name) {
    for (int i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i]->dead && strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    return NULL;
}

int q8_graph_add_tensor(q8_graph *g, const char *name, bool *dup) {
    if (dup) *dup = false;
    if (q8_graph_find(g, name) >= 0) {
        if (dup) *dup = true;
        return -1;
    }
    if (g->n_tensors == g->cap_tensors) {
        int cap = g->cap_tensors ? g->cap_tensors * 2 : 64;
        q8_tensor **t = realloc(g->tensors, (size_t)cap * sizeof *t);
        if (!t) return -1;
        g->tensors = t;
        g->cap_tensors = cap;
    }
    q8_tensor *t = calloc(1, sizeof *t);
    if (!t) return -1;
    t->name = q8_strdup(name);
    t->producer = -1;
    t->q.axis = -1;
    if (!t->name || !map_put(&g->names, t->name, g->n_tensors)) {
        q8_tensor_free(t);
        return -1;
    }
    g->tensors[g->n_tensors] = t;
    return g->n_tensors++;
}

int q8_graph_add_tensor_unique(q8_graph *g, const char *base) {
    size_t len = strlen(base) + 24;
    char *buf = malloc(len);
    if (!buf) return -1;
    snprintf(buf, len, "%s", base);
    for (int k = 1; q8_graph_find(g, buf) >= 0; k++) snprintf(buf, len, "%s__%d", base, k);
    int idx = q8_graph_add_tensor(g, buf, NULL);
    free(buf);
    return idx;
}

static bool name_in_tree(const q8_graph *g, const char *name) {
    if (q8_graph_find(g, name) >= 0) return true;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i]->n_attrs; k++)
            if (g->nodes[i]->attrs[k].g && name_in_tree(g->nodes[i]->attrs[k].g, name))
                return true;
    return false;
}

int q8_graph_add_tensor_unique_in_tree(q8_graph *g, const char *base, const char *sep,
                                       const char *tag) {
    const q8_graph *root = g;
    while (root->parent) root = root->parent;
    size_t len = strlen(base) + strlen(sep) + strlen(tag) + 32;
    char *buf = malloc(len);
    if (!buf) return -1;
    snprintf(buf, len, "%s%s%s", base, sep, tag);
    for (int k = 1; name_in_tree(root, buf); k++)
        snprintf(buf, len, "%s%s%s__%d", base, sep, tag, k);
    int idx = q8_graph_add_tensor(g, buf, NULL);
    free(buf);
    return idx;
}

int q8_graph_add_node(q8_graph *g, const char *name, const char *op_type) {
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        q8_node **nn = realloc(g->nodes, (size_t)cap * sizeof *nn);
        if (!nn) return -1;
        g->nodes = nn;
        g->cap_nodes = cap;
    }
    q8_node *n = calloc(1, sizeof *n);
    if (!n) return -1;
    n->name = q8_strdup(name ? name : "");
    n->op_type = q8_strdup(op_type);
    n->domain = q8_strdup("");
    if (!n->name || !n->op_type || !n->domain) {
        q8_node_free_contents(n);
        free(n);
        return -1;
    }
    g->nodes[g->n_nodes] = n;
    return g->n_nodes++;
}

q8_status q8_node_set_io(q8_node *n, const int *in, int n_in, const int *out,
                         int n_out, q8_error *err) {
    int *ni = malloc(sizeof(int) * (size_t)(n_in ? n_in : 1));
    int *no = malloc(sizeof(int) * (size_t)(n_out ? n_out : 1));
    if (!ni || !no) {
        free(ni);
        free(no);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    if (n_in) memcpy(ni, in, sizeof(int) * (size_t)n_in);
    if (n_out) memcpy(no, out, sizeof(int) * (size_t)n_out);
    free(n->inputs);
    free(n->outputs);
    n->inputs = ni;
    n->n_inputs = n_in;
    n->outputs = no;
    n->n_outputs = n_out;
    return Q8_OK;
}

/* ---- tensors ---- */

void q8_tensor_set_shape(q8_tensor *t, q8_dtype dtype, const int64_t *dims, int ndim) {
    Q8_ASSERT(ndim >= 0 && ndim <= Q8_MAX_DIMS);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->dims[i] = dims[i];
    t->shape_known = true;
}

int64_t q8_tensor_numel(const q8_tensor *t) {
    int64_t n = 0;
    Q8_ASSERT(t->shape_known && q8_shape_numel(t->dims, t->ndim, &n));
    return n;
}

size_t q8_tensor_nbytes(const q8_tensor *t) {
    return (size_t)q8_tensor_numel(t) * q8_dtype_size(t->dtype);
}

q8_status q8_tensor_alloc_data(q8_tensor *t, q8_error *err) {
    q8_tensor_free_data(t);
    size_t nb = q8_tensor_nbytes(t);
    t->data = q8_aligned_alloc(nb);
    if (!t->data)
        return q8_fail(err, Q8_ERR_NOMEM, "cannot allocate %zu bytes for tensor '%s'",
                       nb, t->name);
    t->owns_data = true;
    return Q8_OK;
}

/* ---- attributes ---- */

const q8_attr *q8_attr_find(const q8_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t q8_attr_int(const q8_node *n, const char *name, int64_t def) {
    const q8_attr *a = q8_attr_find(n, name);
    return a && a->type == Q8_ATTR_INT ? a->i : def;
}

float q8_attr_float(const q8_node *n, const char *name, float def) {
    const q8_attr *a = q8_attr_find(n, name);
    if (!a) return def;
    if (a->type == Q8_ATTR_FLOAT) return a->f;
    if (a->type == Q8_ATTR_INT) return (float)a->i;
    return def;
}

const char *q8_attr_str(const q8_node *n, const char *name, const char *def) {
    const q8_attr *a = q8_attr_find(n, name);
    return a && a->type == Q8_ATTR_STRING && a->s ? a->s : def;
}

const int64_t *q8_attr_ints(const q8_node *n, const char *name, int *count) {
    const q8_attr *a = q8_attr_find(n, name);
    if (!a || a->type != Q8_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->n;
    return a->ints ? a->ints : (const int64_t *)"";
}

const float *q8_attr_floats(const q8_node *n, const char *name, int *count) {
    const q8_attr *a = q8_attr_find(n, name);
    if (!a || a->type != Q8_ATTR_FLOATS) {
        *count = 0;
        return NULL;
    }
    *count = a->n;
    return a->floats ? a->floats : (const float *)"";
}

q8_attr *q8_node_set_attr(q8_node *n, const char *name, q8_attr_type type) {
    q8_attr *a = (q8_attr *)q8_attr_find(n, name);
    if (!a) {
        q8_attr *na = realloc(n->attrs, sizeof *na * (size_t)(n->n_attrs + 1));
        if (!na) return NULL;
        n->attrs = na;
        a = &n->attrs[n->n_attrs];
        memset(a, 0, sizeof *a);
        if (!(a->name = q8_strdup(name))) return NULL;
        n->n_attrs++;
    } else {
        char *keep = a->name;
        a->name = NULL;
        q8_attr_clear(a);
        a->name = keep;
    }
    a->type = type;
    return a;
}

q8_status q8_node_fail(q8_error *err, q8_status st, const q8_node *n,
                       const char *fmt, ...) {
    if (!err) return st;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return q8_fail(err, st, "node '%.60s' (%.40s): %s", n->name, n->op_type, msg);
}

q8_status q8_const_ints(const q8_graph *g, const q8_node *n, int input,
                        int64_t *out, int max, int *count, q8_error *err) {
    const q8_tensor *t = q8_in(g, n, input);
    if (!t) return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", input);
    if (!t->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input %d ('%s') must be a constant (it decides a shape)",
                            input, t->name);
    if (t->dtype != Q8_I64 && t->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d ('%s') must be int64, not %s",
                            input, t->name, q8_dtype_name(t->dtype));
    int64_t num = q8_tensor_numel(t);
    if (num > max)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d ('%s') has %lld values, at most %d expected",
                            input, t->name, (long long)num, max);
    for (int64_t i = 0; i < num; i++)
        out[i] = t->dtype == Q8_I64 ? ((const int64_t *)t->data)[i]
                                    : ((const int32_t *)t->data)[i];
    *count = (int)num;
    return Q8_OK;
}

q8_status q8_const_floats(const q8_graph *g, const q8_node *n, int input,
                          float *out, int max, int *count, q8_error *err) {
    const q8_tensor *t = q8_in(g, n, input);
    if (!t) return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", input);
    if (!t->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') must be a constant",
                            input, t->name);
    int64_t num = q8_tensor_numel(t);
    if (num > max)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d ('%s') has %lld values, at most %d expected",
                            input, t->name, (long long)num, max);
    for (int64_t i = 0; i < num; i++) {
        switch (t->dtype) {
        case Q8_F32: out[i] = ((const float *)t->data)[i]; break;
        case Q8_F64: out[i] = (float)((const double *)t->data)[i]; break;
        case Q8_I64: out[i] = (float)((const int64_t *)t->data)[i]; break;
        case Q8_I32: out[i] = (float)((const int32_t *)t->data)[i]; break;
        case Q8_I8: out[i] = ((const int8_t *)t->data)[i]; break;
        case Q8_U8: out[i] = ((const uint8_t *)t->data)[i]; break;
        default:
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') has dtype %s",
                                input, t->name, q8_dtype_name(t->dtype));
        }
    }
    *count = (int)num;
    return Q8_OK;
}

/* ---- structure ---- */

void q8_graph_consumers(const q8_graph *g, int *counts) {
    memset(counts, 0, sizeof(int) * (size_t)g->n_tensors);
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] >= 0) counts[n->inputs[j]]++;
    }
}

bool q8_graph_is_input(const q8_graph *g, int t) {
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t) return true;
    return false;
}

bool q8_graph_is_output(const q8_graph *g, int t) {
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t) return true;
    return false;
}

void q8_graph_fix_producers(q8_graph *g) {
    for (int i = 0; i < g->n_tensors; i++) g->tensors[i]->producer = -1;
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_outputs; j++)
            if (g->nodes[i]->outputs[j] >= 0) g->tensors[g->nodes[i]->outputs[j]]->producer = i;
}

void q8_graph_compact(q8_graph *g) {
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i]->dead) {
            q8_node_free_contents(g->nodes[i]);
            free(g->nodes[i]);
        } else {
            g->nodes[k++] = g->nodes[i];
        }
    }
    g->n_nodes = k;
    q8_graph_fix_producers(g);
}

/* ---- topological sort ---- */

typedef struct edge_list {
    int *from, *to;
    size_t n, cap;
    bool oom;
} edge_list;

static void edge_add(edge_list *e, int from, int to) {
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        int *f = realloc(e->from, cap * sizeof *f);
        if (f) e->from = f;
        int *t = realloc(e->to, cap * sizeof *t);
        if (t) e->to = t;
        if (!f || !t) {
            e->oom = true;
            return;
        }
        e->cap = cap;
    }
    e->from[e->n] = from;
    e->to[e->n] = to;
    e->n++;
}

/* The tensor of g that an outer-scope name used in sub refers to: -1 when a
 * graph between sub and g defines the name itself. */
static int outer_ref(const q8_graph *g, const q8_graph *sub, const char *name) {
    for (const q8_graph *p = sub->parent; p && p != g; p = p->parent) {
        int t = q8_graph_find(p, name);
        if (t >= 0 && !p->tensors[t]->outer) return -1;
    }
    return q8_graph_find(g, name);
}

/* A node with subgraphs (If) depends on the producers of every value of g
 * its subgraphs read, at any depth. */
static void subgraph_deps(const q8_graph *g, const q8_graph *sub, const int *producer, int node,
                          edge_list *e) {
    for (int i = 0; i < sub->n_tensors; i++) {
        if (!sub->tensors[i]->outer) continue;
        int t = outer_ref(g, sub, sub->tensors[i]->name);
        if (t >= 0 && producer[t] >= 0) edge_add(e, producer[t], node);
    }
    for (int i = 0; i < sub->n_nodes; i++)
        for (int k = 0; k < sub->nodes[i]->n_attrs; k++)
            if (sub->nodes[i]->attrs[k].g)
                subgraph_deps(g, sub->nodes[i]->attrs[k].g, producer, node, e);
}

/* A branch node (control.h) comes after the conditions of its Ifs and
 * before its own If. */
static q8_status control_deps(const q8_graph *g, const int *producer, edge_list *e,
                              q8_error *err) {
    if (!q8_graph_has_control(g)) return Q8_OK;
    q8_scopes s;
    Q8_TRY(q8_scopes_build(g, &s, err));
    for (int i = 0; i < g->n_nodes; i++)
        for (int p = g->nodes[i]->scope; p > 0; p = s.parent[p]) {
            const q8_node *f = g->nodes[s.owner[p]];
            if (p == g->nodes[i]->scope) edge_add(e, i, s.owner[p]);
            if (f->n_inputs > 0 && f->inputs[0] >= 0 && producer[f->inputs[0]] >= 0)
                edge_add(e, producer[f->inputs[0]], i);
        }
    q8_scopes_free(&s);
    return Q8_OK;
}

/* Compressed adjacency: the edges of node v are idx[start[v] .. start[v+1]). */
static bool csr_build(int nn, const edge_list *e, bool by_from, int **start, int **idx) {
    *start = calloc((size_t)nn + 1, sizeof(int));
    *idx = malloc(sizeof(int) * (e->n ? e->n : 1));
    if (!*start || !*idx) return false;
    for (size_t k = 0; k < e->n; k++) (*start)[(by_from ? e->from : e->to)[k] + 1]++;
    for (int v = 0; v < nn; v++) (*start)[v + 1] += (*start)[v];
    int *fill = malloc(sizeof(int) * ((size_t)nn + 1));
    if (!fill) return false;
    memcpy(fill, *start, sizeof(int) * ((size_t)nn + 1));
    for (size_t k = 0; k < e->n; k++) {
        int v = (by_from ? e->from : e->to)[k];
        (*idx)[fill[v]++] = (by_from ? e->to : e->from)[k];
    }
    free(fill);
    return true;
}

static void heap_push(int *h, int *n, int v) {
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, int *n) {
    int top = h[0], v = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
    return top;
}

/* Kahn's algorithm, stable: among ready nodes the earliest in file order goes
 * first, so an already sorted graph keeps its order. O((N + E) log N).
 * Subgraphs are sorted too. */
q8_status q8_graph_toposort(q8_graph *g, q8_error *err) {
    int nn = g->n_nodes, nt = g->n_tensors;
    int *producer = malloc(sizeof(int) * (size_t)(nt ? nt : 1));
    int *order = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    int *indeg = calloc((size_t)(nn ? nn : 1), sizeof(int));
    int *heap = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    bool *done = calloc((size_t)(nn ? nn : 1), sizeof(bool));
    int *out_start = NULL, *out_idx = NULL, *in_start = NULL, *in_idx = NULL;
    edge_list e = {0};
    q8_status st = Q8_OK;
    if (!producer || !order || !indeg || !heap || !done) {
        st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < nn && st == Q8_OK; i++)
        for (int k = 0; k < g->nodes[i]->n_attrs && st == Q8_OK; k++)
            if (g->nodes[i]->attrs[k].g) st = q8_graph_toposort(g->nodes[i]->attrs[k].g, err);
    if (st != Q8_OK) goto out;
    for (int i = 0; i < nt; i++) producer[i] = -1;
    for (int i = 0; i < nn; i++) {
        const q8_node *n = g->nodes[i];
        for (int j = 0; j < n->n_outputs; j++) {
            int t = n->outputs[j];
            if (t < 0) continue;
            if (producer[t] >= 0) {
                st = q8_node_fail(err, Q8_ERR_FORMAT, n,
                                  "output '%s' is also produced by node '%s'",
                                  g->tensors[t]->name, g->nodes[producer[t]]->name);
                goto out;
            }
            if (g->tensors[t]->data) {
                st = q8_node_fail(err, Q8_ERR_FORMAT, n,
                                  "output '%s' has the name of an initializer",
                                  g->tensors[t]->name);
                goto out;
            }
            producer[t] = i;
        }
    }
    for (int i = 0; i < nn; i++) {
        const q8_node *n = g->nodes[i];
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] >= 0 && producer[n->inputs[j]] >= 0)
                edge_add(&e, producer[n->inputs[j]], i);
        for (int k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].g) subgraph_deps(g, n->attrs[k].g, producer, i, &e);
    }
    if ((st = control_deps(g, producer, &e, err)) != Q8_OK) goto out;
    if (e.oom || !csr_build(nn, &e, true, &out_start, &out_idx)) {
        st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < e.n; k++) indeg[e.to[k]]++;
    int placed = 0, nheap = 0;
    for (int i = 0; i < nn; i++)
        if (!indeg[i]) heap_push(heap, &nheap, i);
    while (nheap) {
        int v = heap_pop(heap, &nheap);
        done[v] = true;
        order[placed++] = v;
        for (int k = out_start[v]; k < out_start[v + 1]; k++)
            if (--indeg[out_idx[k]] == 0) heap_push(heap, &nheap, out_idx[k]);
    }
    if (placed < nn) {
        /* Walk back through unplaced predecessors: after nn steps the walk
         * is on a cycle, so the message names a node on it. */
        if (!csr_build(nn, &e, false, &in_start, &in_idx)) {
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            goto out;
        }
        int v = 0;
        while (done[v]) v++;
        for (int step = 0; step < nn; step++) {
            int next = -1;
            for (int k = in_start[v]; k < in_start[v + 1] && next < 0; k++)
                if (!done[in_idx[k]]) next = in_idx[k];
            if (next < 0) break;
            v = next;
        }
        st = q8_node_fail(err, Q8_ERR_FORMAT, g->nodes[v],
                          "the graph has a cycle through this node");
        goto out;
    }
    q8_node **sorted = malloc(sizeof *sorted * ((size_t)nn + 1));
    if (!sorted) {
        st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < nn; i++) sorted[i] = g->nodes[order[i]];
    if (nn) memcpy(g->nodes, sorted, sizeof *sorted * (size_t)nn);
    free(sorted);
    q8_graph_fix_producers(g);
out:
    free(producer);
    free(order);
    free(indeg);
    free(heap);
    free(done);
    free(e.from);
    free(e.to);
    free(out_start);
    free(out_idx);
    free(in_start);
    free(in_idx);
    return st;
}

q8_status q8_tensor_widen_f16(q8_tensor *t, q8_error *err) {
    int64_t n = q8_tensor_numel(t);
    float *f = q8_aligned_alloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!f) return q8_fail(err, Q8_ERR_NOMEM, "out of memory widening '%s' to float32", t->name);
    q8_f16_to_f32_n(t->data, f, n);
    q8_tensor_free_data(t);
    t->data = f;
    t->owns_data = true;
    t->dtype = Q8_F32;
    return Q8_OK;
}

void q8_tensor_info_fill(const q8_tensor *t, q8_tensor_info *info) {
    info->name = t->name;
    info->dtype = t->io_dtype != Q8_UNDEFINED ? t->io_dtype : t->dtype;
    info->ndim = t->ndim;
    memcpy(info->dims, t->dims, sizeof info->dims);
}
