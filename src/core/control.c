/* The scope tree of a flat graph with If nodes, and its rules (control.h). */
#include "control.h"

#include <string.h>

bool q8_node_is_if(const q8_node *n) {
    return n->op == Q8_OP_IF ||
           (n->op == Q8_OP_NONE && strcmp(n->domain, "q8") == 0 && strcmp(n->op_type, "If") == 0);
}

bool q8_graph_has_control(const q8_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i]->dead && (q8_node_is_if(g->nodes[i]) || g->nodes[i]->scope)) return true;
    return false;
}

void q8_scopes_free(q8_scopes *s) {
    free(s->owner);
    free(s->then_side);
    free(s->parent);
    memset(s, 0, sizeof *s);
}

/* Scope ids are small: at most two per node (a file's are checked here
 * before anything is sized by them). */
static q8_status scope_id(const q8_graph *g, const q8_node *n, int64_t v, const char *what,
                          q8_error *err) {
    if (v < 0 || v > 2 * (int64_t)g->n_nodes + 2)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s %lld is out of range (0 to %lld)", what,
                            (long long)v, 2 * (long long)g->n_nodes + 2);
    return Q8_OK;
}

q8_status q8_scopes_build(const q8_graph *g, q8_scopes *s, q8_error *err) {
    memset(s, 0, sizeof *s);
    int64_t max = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead) continue;
        Q8_TRY(scope_id(g, n, n->scope, "scope", err));
        if (n->scope > max) max = n->scope;
        if (!q8_node_is_if(n)) continue;
        int64_t t = q8_attr_int(n, "then_scope", 0), e = q8_attr_int(n, "else_scope", 0);
        Q8_TRY(scope_id(g, n, t, "then_scope", err));
        Q8_TRY(scope_id(g, n, e, "else_scope", err));
        if (t < 1 || e < 1 || t == e)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "then_scope %lld and else_scope %lld must be distinct and > 0",
                                (long long)t, (long long)e);
        if (t > max) max = t;
        if (e > max) max = e;
    }
    s->n = (int)max + 1;
    s->owner = malloc(sizeof(int) * (size_t)s->n);
    s->parent = malloc(sizeof(int) * (size_t)s->n);
    s->then_side = calloc((size_t)s->n, sizeof(bool));
    if (!s->owner || !s->parent || !s->then_side) {
        q8_scopes_free(s);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < s->n; k++) s->owner[k] = s->parent[k] = -1;
    q8_status st = Q8_OK;
    for (int i = 0; i < g->n_nodes && st == Q8_OK; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead || !q8_node_is_if(n)) continue;
        for (int side = 0; side < 2 && st == Q8_OK; side++) {
            int id = (int)q8_attr_int(n, side ? "then_scope" : "else_scope", 0);
            if (s->owner[id] >= 0) {
                st = q8_node_fail(err, Q8_ERR_FORMAT, n, "scope %d is also a branch of node '%s'",
                                  id, g->nodes[s->owner[id]]->name);
                break;
            }
            s->owner[id] = i;
            s->then_side[id] = side;
            s->parent[id] = n->scope;
        }
    }
    for (int i = 0; i < g->n_nodes && st == Q8_OK; i++) {
        const q8_node *n = g->nodes[i];
        if (!n->dead && n->scope && s->owner[n->scope] < 0)
            st = q8_node_fail(err, Q8_ERR_FORMAT, n, "is in scope %d, a branch of no If", n->scope);
    }
    /* No scope inside itself: every walk up reaches 0 within n steps. */
    for (int k = 1; k < s->n && st == Q8_OK; k++) {
        if (s->owner[k] < 0) continue;
        int p = k, steps = 0;
        while (p > 0 && steps++ < s->n) p = s->parent[p];
        if (p != 0)
            st = q8_node_fail(err, Q8_ERR_FORMAT, g->nodes[s->owner[k]],
                              "its branch scope %d lies inside itself", k);
    }
    if (st != Q8_OK) q8_scopes_free(s);
    return st;
}

bool q8_scope_within(const q8_scopes *s, int inner, int outer) {
    for (int p = inner; p >= 0; p = p > 0 ? s->parent[p] : -1)
        if (p == outer) return true;
    return false;
}

int q8_scope_common(const q8_scopes *s, int a, int b) {
    for (int p = a; p > 0; p = s->parent[p])
        if (q8_scope_within(s, b, p)) return p;
    return 0;
}

bool q8_scope_exclusive(const q8_scopes *s, int a, int b) {
    for (int p = a; p > 0; p = s->parent[p])
        for (int q = b; q > 0; q = s->parent[q])
            if (p != q && s->owner[p] == s->owner[q]) return true;
    return false;
}

bool q8_cond_value(const void *data, q8_dtype dt) {
    switch (dt) {
    case Q8_F32: return *(const float *)data != 0.0f; /* -0.0 is false */
    case Q8_I32: return *(const int32_t *)data != 0;
    case Q8_I64: return *(const int64_t *)data != 0;
    default: return *(const uint8_t *)data != 0; /* bool, uint8, int8 */
    }
}

/* The scope a node reads input k in: a q8.If reads its then outputs inside
 * its then branch, its else outputs inside its else branch. */
static int read_scope(const q8_node *n, int k) {
    if (!q8_node_is_if(n) || k == 0) return n->scope;
    int n_out = (n->n_inputs - 1) / 2;
    return (int)q8_attr_int(n, k <= n_out ? "then_scope" : "else_scope", 0);
}

static q8_status check_node(const q8_graph *g, const q8_scopes *s, const int *producer, int i,
                            q8_error *err) {
    const q8_node *n = g->nodes[i];
    for (int p = n->scope; p > 0; p = s->parent[p]) {
        int j = s->owner[p];
        const q8_node *f = g->nodes[j];
        if (j <= i)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "is in a branch of node '%s' but comes "
                                "after it", f->name);
        int c = f->n_inputs > 0 ? f->inputs[0] : -1;
        if (c >= 0 && producer[c] >= i)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "is in a branch of node '%s' but comes "
                                "before its condition is computed", f->name);
    }
    for (int k = 0; k < n->n_inputs; k++) {
        int t = n->inputs[k];
        if (t < 0 || producer[t] < 0) continue;
        int made = g->nodes[producer[t]]->scope, rs = read_scope(n, k);
        if (!q8_scope_within(s, rs, made))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "reads '%s', which a branch of node '%s' "
                                "computes, outside that branch", g->tensors[t]->name,
                                g->nodes[s->owner[made]]->name);
    }
    return Q8_OK;
}

q8_status q8_graph_check_control(const q8_graph *g, q8_error *err) {
    if (!q8_graph_has_control(g)) return Q8_OK;
    q8_scopes s;
    Q8_TRY(q8_scopes_build(g, &s, err));
    int *producer = malloc(sizeof(int) * ((size_t)g->n_tensors + 1));
    q8_status st = producer ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int t = 0; producer && t < g->n_tensors; t++) producer[t] = -1;
    for (int i = 0; st == Q8_OK && i < g->n_nodes; i++)
        for (int k = 0; !g->nodes[i]->dead && k < g->nodes[i]->n_outputs; k++)
            if (g->nodes[i]->outputs[k] >= 0) producer[g->nodes[i]->outputs[k]] = i;
    for (int i = 0; st == Q8_OK && i < g->n_nodes; i++)
        if (!g->nodes[i]->dead) st = check_node(g, &s, producer, i, err);
    for (int k = 0; st == Q8_OK && k < g->n_outputs; k++) {
        int t = g->outputs[k], p = producer[t];
        if (p >= 0 && g->nodes[p]->scope)
            st = q8_fail(err, Q8_ERR_FORMAT, "graph output '%s' is computed inside a branch of "
                         "node '%s'", g->tensors[t]->name,
                         g->nodes[s.owner[g->nodes[p]->scope]]->name);
    }
    free(producer);
    q8_scopes_free(&s);
    return st;
}

q8_status q8_graph_renumber_scopes(q8_graph *g, q8_error *err) {
    if (!q8_graph_has_control(g)) return Q8_OK;
    int64_t max = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->scope > max) max = n->scope;
        if (!q8_node_is_if(n)) continue;
        for (int side = 0; side < 2; side++) {
            int64_t v = q8_attr_int(n, side ? "then_scope" : "else_scope", 0);
            if (v > max) max = v;
        }
    }
    if (max > INT32_MAX / 2) return q8_fail(err, Q8_ERR_FORMAT, "scope ids out of range");
    int *map = calloc((size_t)max + 1, sizeof(int));
    if (!map) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int next = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        if (!q8_node_is_if(n)) continue;
        for (int side = 1; side >= 0; side--) {
            q8_attr *a = (q8_attr *)q8_attr_find(n, side ? "then_scope" : "else_scope");
            if (!a || a->type != Q8_ATTR_INT || a->i < 1) continue;
            if (!map[a->i]) map[a->i] = ++next;
            a->i = map[a->i];
        }
    }
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->scope) g->nodes[i]->scope = map[g->nodes[i]->scope];
    free(map);
    return Q8_OK;
}
