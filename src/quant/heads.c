/* The model's heads: the layers that write its outputs (quantize
 * --fp32-heads, quantize.h). */
#include <stdlib.h>
#include <string.h>

#include "quantize.h"

static bool is_op(const q8_node *n, const char *op) { return strcmp(n->op_type, op) == 0; }

/* A layer with constant weights: what the INT8 rewrite quantizes. */
static bool weighted_layer(const q8_graph *g, const q8_node *n) {
    if (!(is_op(n, "Conv") || is_op(n, "ConvTranspose") || is_op(n, "Gemm") ||
          is_op(n, "MatMul")) ||
        n->n_inputs < 2 || n->inputs[1] < 0)
        return false;
    const q8_tensor *w = g->tensors[n->inputs[1]];
    return w->data != NULL;
}

static int64_t weight_elems(const q8_graph *g, const q8_node *n) {
    return q8_tensor_numel(g->tensors[n->inputs[1]]);
}

typedef struct walk {
    const q8_graph *g;
    const int *prod;    /* producing node of each tensor, or -1 */
    char *seen;         /* [tensor] bit d: pushed at depth d */
    char *head;         /* [node] */
    int *stack;         /* (tensor, depth) pairs; each pushed once */
    int top;
} walk;

static void push(walk *w, int t, int depth) {
    if (t < 0 || (w->seen[t] & (1 << depth))) return;
    w->seen[t] |= (char)(1 << depth);
    w->stack[w->top++] = t;
    w->stack[w->top++] = depth;
}

/* Back from the outputs through anything but a weighted layer; such a
 * layer is a head, and from a head at depth 0 the layers its input comes
 * from are heads too (depth 1). An explicit stack: a long chain of float
 * ops before an output would take the C stack as deep. */
static void walk_back(walk *w) {
    while (w->top > 0) {
        int depth = w->stack[--w->top], t = w->stack[--w->top];
        int ni = w->prod[t];
        if (ni < 0) continue;
        const q8_node *n = w->g->nodes[ni];
        if (weighted_layer(w->g, n)) {
            w->head[ni] = 1;
            if (depth == 0) push(w, n->inputs[0], 1);
            continue;
        }
        for (int i = 0; i < n->n_inputs; i++) {
            int in = n->inputs[i];
            if (in >= 0 && !w->g->tensors[in]->data) push(w, in, depth);
        }
    }
}

q8_status q8_head_layers(const q8_graph *g, double max_share, q8_name_list *out, q8_error *err) {
    out->v = NULL;
    out->n = 0;
    walk w = {.g = g};
    int *prod = malloc(sizeof(int) * (size_t)(g->n_tensors + 1));
    w.seen = calloc((size_t)g->n_tensors + 1, 1);
    w.head = calloc((size_t)g->n_nodes + 1, 1);
    w.stack = malloc(sizeof(int) * 4 * (size_t)(g->n_tensors + 1));
    if (!prod || !w.seen || !w.head || !w.stack) {
        free(prod);
        free(w.seen);
        free(w.head);
        free(w.stack);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int t = 0; t < g->n_tensors; t++) prod[t] = -1;
    /* the graph's own nodes only (scope 0): a branch's outputs are not the
     * model's */
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead || n->scope != 0) continue;
        for (int o = 0; o < n->n_outputs; o++)
            if (n->outputs[o] >= 0) prod[n->outputs[o]] = i;
    }
    w.prod = prod;
    for (int k = 0; k < g->n_outputs; k++) push(&w, g->outputs[k], 0);
    walk_back(&w);
    int64_t all = 0, heads = 0;
    int count = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead || !weighted_layer(g, n)) continue;
        all += weight_elems(g, n);
        if (w.head[i]) heads += weight_elems(g, n), count++;
    }
    q8_status st = Q8_OK;
    if (count > 0 && (double)heads <= max_share * (double)all) {
        out->v = calloc((size_t)count, sizeof(char *));
        if (!out->v) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        for (int i = 0; st == Q8_OK && i < g->n_nodes; i++) {
            if (!w.head[i] || g->nodes[i]->dead) continue;
            if (!(out->v[out->n] = q8_strdup(g->nodes[i]->name)))
                st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            else out->n++;
        }
    }
    free(prod);
    free(w.seen);
    free(w.head);
    free(w.stack);
    if (st != Q8_OK) q8_name_list_free(out);
    return st;
}

void q8_name_list_free(q8_name_list *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
