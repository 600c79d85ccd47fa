/* Structural clean-ups: Identity removal, dead-node removal, unused
 * constants. */
#include <string.h>

#include "control.h"
#include "op.h"
#include "passes.h"

static bool same_shape(const q8_tensor *a, const q8_tensor *b) {
    return a && b && a->dtype == b->dtype && a->ndim == b->ndim &&
           !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->ndim);
}

/* A view op (Reshape, Squeeze, Unsqueeze, Flatten: the bytes of input 0). */
static bool is_view(const q8_node *n) {
    return n->op != Q8_OP_NONE && (q8_op_flags(n->op) & Q8_OPF_VIEW) && n->n_inputs >= 1 &&
           n->n_outputs == 1 && n->inputs[0] >= 0;
}

static bool is_passthrough(const q8_graph *g, const q8_node *n) {
    if (strcmp(n->op_type, "Identity") == 0) return n->n_inputs == 1 && n->n_outputs == 1;
    /* a view back to its input's shape (a Squeeze undone by an Unsqueeze,
     * once remove_identity has made the pair one view) */
    if (!*n->domain && is_view(n)) return same_shape(q8_in(g, n, 0), q8_out(g, n, 0));
    if (strcmp(n->op_type, "Cast") == 0 && n->n_inputs == 1 && n->n_outputs == 1) {
        /* a Cast to the dtype it already has (widened float16 models) */
        const q8_tensor *x = q8_in(g, n, 0), *y = q8_out(g, n, 0);
        return x && y && x->dtype == y->dtype;
    }
    if (strcmp(n->op_type, "Dropout") == 0) {
        /* Inference Dropout is Identity unless its mask is read or training
         * mode is on. */
        if (n->n_outputs > 1 && n->outputs[1] >= 0) return false;
        const q8_tensor *tm = q8_in(g, n, 2);
        if (tm && (!tm->data || *(const uint8_t *)tm->data)) return false;
        return n->n_inputs >= 1 && n->n_outputs >= 1;
    }
    return false;
}

static int resolve(const int *alias, int t, int limit) {
    for (int k = 0; t >= 0 && alias[t] != t; k++) {
        Q8_ASSERT(k < limit); /* aliases follow the (acyclic) graph */
        t = alias[t];
    }
    return t;
}

/* One pass in node order with a tensor alias map instead of rewriting every
 * use at each removal (which made a chain of N Identity nodes O(N^2): a
 * 1.4 MB model took a minute). An optimization only: skipped if out of
 * memory. */
void q8_pass_remove_identity(q8_graph *g) {
    int nt = g->n_tensors;
    int *alias = malloc(sizeof(int) * (size_t)(nt + 1));
    int *producer = malloc(sizeof(int) * (size_t)(nt + 1));
    bool *is_out = calloc((size_t)nt + 1, sizeof(bool));
    bool *is_in = calloc((size_t)nt + 1, sizeof(bool));
    if (!alias || !producer || !is_out || !is_in) goto out;
    for (int t = 0; t < nt; t++) {
        alias[t] = t;
        producer[t] = g->tensors[t]->producer;
    }
    for (int i = 0; i < g->n_outputs; i++) is_out[g->outputs[i]] = true;
    for (int i = 0; i < g->n_inputs; i++) is_in[g->inputs[i]] = true;
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int j = 0; j < n->n_inputs; j++) n->inputs[j] = resolve(alias, n->inputs[j], nt);
        /* a view of a view reads the first one's input (MoveNet's image:
         * Squeeze, Unsqueeze, Squeeze, Unsqueeze, then elementwise ops) */
        const q8_node *pv = !*n->domain && is_view(n) && producer[n->inputs[0]] >= 0
                                ? g->nodes[producer[n->inputs[0]]]
                                : NULL; /* is_view: inputs[0] >= 0 */
        if (pv && !pv->dead && !*pv->domain && is_view(pv) &&
            same_shape(q8_in(g, pv, 0), q8_out(g, n, 0)))
            n->inputs[0] = pv->inputs[0];
        if (*n->domain || !is_passthrough(g, n)) continue;
        int x = n->inputs[0], y = n->outputs[0];
        if (x < 0 || y < 0) continue;
        if (!is_out[y]) {
            alias[y] = x; /* readers of y read x */
            n->dead = true;
            continue;
        }
        /* y is a graph output: rename the producer's output x to y instead,
         * when x is an ordinary intermediate value. */
        const q8_tensor *xt = g->tensors[x];
        if (xt->data || is_in[x] || is_out[x] || producer[x] < 0) continue;
        q8_node *p = g->nodes[producer[x]];
        for (int k = 0; k < p->n_outputs; k++)
            if (p->outputs[k] == x) p->outputs[k] = y;
        producer[y] = producer[x];
        producer[x] = -1;
        alias[x] = y; /* readers of x, before or after this node, read y */
        n->dead = true;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int j = 0; j < n->n_inputs; j++) n->inputs[j] = resolve(alias, n->inputs[j], nt);
    }
out:
    free(alias);
    free(producer);
    free(is_out);
    free(is_in);
    q8_graph_compact(g);
}

q8_status q8_pass_dce(q8_graph *g, q8_error *err) {
    int *uses = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(int));
    if (!uses) return q8_fail(err, Q8_ERR_NOMEM, "out of memory removing dead nodes");
    q8_graph_consumers(g, uses);
    for (int i = 0; i < g->n_outputs; i++) uses[g->outputs[i]]++;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        q8_node *n = g->nodes[i];
        if (n->dead) continue;
        bool used = false;
        for (int j = 0; j < n->n_outputs; j++)
            if (n->outputs[j] >= 0 && uses[n->outputs[j]]) used = true;
        if (used) continue;
        n->dead = true;
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] >= 0) uses[n->inputs[j]]--;
    }
    free(uses);
    q8_graph_compact(g);
    return Q8_OK;
}

q8_status q8_pass_drop_unused_consts(q8_graph *g, q8_error *err) {
    int *uses = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(int));
    if (!uses) return q8_fail(err, Q8_ERR_NOMEM, "out of memory dropping unused constants");
    q8_graph_consumers(g, uses);
    for (int i = 0; i < g->n_outputs; i++) uses[g->outputs[i]]++;
    for (int i = 0; i < g->n_bound; i++) uses[g->bound[i]]++; /* a run checks them */
    for (int i = 0; i < g->n_tensors; i++)
        if (!uses[i] && g->tensors[i]->data) q8_tensor_free_data(g->tensors[i]);
    free(uses);
    return Q8_OK;
}

static q8_status pipeline(q8_graph *g, const q8_load_options *opts, bool smooth, q8_error *err) {
    Q8_TRY(q8_pass_canonicalize(g, err));
    Q8_TRY(q8_graph_toposort(g, err));
    Q8_TRY(q8_graph_fix_inputs(g, opts, err));
    Q8_TRY(q8_pass_infer(g, err));
    q8_pass_remove_identity(g);
    Q8_TRY(q8_pass_fold_bn(g, err));
    Q8_TRY(q8_pass_fold_layout(g, err));
    Q8_TRY(q8_pass_dce(g, err));
    Q8_TRY(q8_pass_fuse_patterns(g, err));
    q8_pass_remove_identity(g); /* the patterns' no-op Max nodes */
    Q8_TRY(q8_pass_fuse_activations(g, smooth, err));
    /* a run's graph only: quantize observes and rewrites the single steps */
    if (smooth) Q8_TRY(q8_pass_fuse_ewchains(g, err));
    else Q8_TRY(q8_pass_fuse_swish(g, err)); /* one table per SiLU (rewrite.c) */
    Q8_TRY(q8_pass_dce(g, err));
    Q8_TRY(q8_pass_drop_unused_consts(g, err));
    Q8_TRY(q8_graph_renumber_scopes(g, err));
    return q8_graph_check_control(g, err);
}

q8_status q8_passes_run(q8_graph *g, const q8_load_options *opts, q8_error *err) {
    return pipeline(g, opts, true, err);
}

q8_status q8_passes_run_for_quantize(q8_graph *g, const q8_load_options *opts, q8_error *err) {
    return pipeline(g, opts, false, err);
}
