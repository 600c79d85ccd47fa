/* Structural clean-ups: Identity removal, dead-node removal, unused
 * constants. */
#include <string.h>

#include "op.h"
#include "passes.h"

void q8_graph_replace_uses(q8_graph *g, int from, int to) {
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] == from) n->inputs[j] = to;
    }
}

static bool is_graph_input(const q8_graph *g, int t) {
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t) return true;
    return false;
}

static bool is_passthrough(const q8_graph *g, const q8_node *n) {
    if (strcmp(n->op_type, "Identity") == 0) return n->n_inputs == 1 && n->n_outputs == 1;
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

void q8_pass_remove_identity(q8_graph *g) {
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        if (n->dead || *n->domain || !is_passthrough(g, n)) continue;
        int x = n->inputs[0], y = n->outputs[0];
        if (x < 0 || y < 0) continue;
        if (!q8_graph_is_output(g, y)) {
            q8_graph_replace_uses(g, y, x);
            n->dead = true;
            continue;
        }
        /* y is a graph output: rename the producer's output x to y instead,
         * when x is an ordinary intermediate value. */
        q8_tensor *xt = g->tensors[x];
        if (xt->data || is_graph_input(g, x) || q8_graph_is_output(g, x) || xt->producer < 0)
            continue;
        q8_node *p = g->nodes[xt->producer];
        for (int k = 0; k < p->n_outputs; k++)
            if (p->outputs[k] == x) p->outputs[k] = y;
        n->dead = true;
        q8_graph_replace_uses(g, x, y);
        q8_graph_fix_producers(g);
    }
    q8_graph_compact(g);
}

void q8_pass_dce(q8_graph *g) {
    int *uses = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(int));
    Q8_ASSERT(uses);
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
}

void q8_pass_drop_unused_consts(q8_graph *g) {
    int *uses = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(int));
    Q8_ASSERT(uses);
    q8_graph_consumers(g, uses);
    for (int i = 0; i < g->n_outputs; i++) uses[g->outputs[i]]++;
    for (int i = 0; i < g->n_tensors; i++)
        if (!uses[i] && g->tensors[i]->data) q8_tensor_free_data(g->tensors[i]);
    free(uses);
}

q8_status q8_passes_run(q8_graph *g, const q8_load_options *opts, q8_error *err) {
    Q8_TRY(q8_graph_toposort(g, err));
    Q8_TRY(q8_pass_fix_inputs(g, opts, err));
    Q8_TRY(q8_pass_infer(g, err));
    q8_pass_remove_identity(g);
    Q8_TRY(q8_pass_fold_bn(g, err));
    q8_pass_dce(g);
    Q8_TRY(q8_pass_fuse_patterns(g, err));
    Q8_TRY(q8_pass_fuse_activations(g, err));
    q8_pass_dce(g);
    q8_pass_drop_unused_consts(g);
    return Q8_OK;
}
