/* The node names of --prune-skip and --fp32-layers, checked against the
 * model: a misspelled name used to be ignored, silently removing the
 * protection it was given for. */
#include <string.h>

#include "quantize.h"

static bool is_op(const q8_node *n, const char *op) {
    return !*n->domain && strcmp(n->op_type, op) == 0;
}

/* The layers pruning applies to (prune.c prunes those with constant
 * weights; naming one without is harmless). */
static bool prunable(const q8_node *n) {
    return is_op(n, "Conv") || is_op(n, "ConvTranspose") || is_op(n, "Gemm") ||
           is_op(n, "MatMul");
}

/* "'a', 'b', 'c' and 9 more" of the layers, for the message. */
static void some_layers(const q8_graph *g, bool (*is_layer)(const q8_node *), char *buf,
                        size_t n) {
    int named = 0, total = 0;
    buf[0] = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *nd = g->nodes[i];
        if (nd->dead || !is_layer(nd)) continue;
        size_t used = strlen(buf);
        if (named < 4 && used < n) {
            snprintf(buf + used, n - used, "%s'%s'", named ? ", " : "", nd->name);
            named++;
        }
        total++;
    }
    size_t used = strlen(buf);
    if (total > named && used < n) snprintf(buf + used, n - used, " and %d more", total - named);
    if (!total) snprintf(buf, n, "none");
}

/* The node named name in g or, before the passes (which move a run-time
 * If's branches into the graph), in the subgraphs of its nodes. */
static const q8_node *find_node(const q8_graph *g, const char *name, bool deep) {
    const q8_node *n = q8_graph_find_node(g, name);
    for (int i = 0; !n && deep && i < g->n_nodes; i++)
        for (int a = 0; !n && a < g->nodes[i]->n_attrs; a++)
            if (g->nodes[i]->attrs[a].type == Q8_ATTR_GRAPH && g->nodes[i]->attrs[a].g)
                n = find_node(g->nodes[i]->attrs[a].g, name, true);
    return n;
}

static q8_status check_list(const q8_graph *g, bool optimized, int n_bound, const char *flag,
                            const char *const *names, int count,
                            bool (*is_layer)(const q8_node *), const char *layer_kind,
                            q8_error *err) {
    for (int i = 0; i < count; i++) {
        const q8_node *n = find_node(g, names[i], !optimized);
        if (n && (!optimized || is_layer(n))) continue;
        char layers[300];
        some_layers(g, is_layer, layers, sizeof layers);
        if (!n && !optimized)
            return q8_fail(err, Q8_ERR_ARG, "%s: the model has no node named '%s' (its %s: %s)",
                           flag, names[i], layer_kind, layers);
        if (!n && n_bound)
            return q8_fail(err, Q8_ERR_ARG,
                           "%s: node '%s' does not survive the graph passes: it is folded or "
                           "fused into another node, or it is in the branch of an If that the "
                           "bound input%s removed (the %s: %s)",
                           flag, names[i], n_bound > 1 ? "s" : "", layer_kind, layers);
        if (!n)
            return q8_fail(err, Q8_ERR_ARG,
                           "%s: node '%s' does not survive the graph passes (it is folded or "
                           "fused into another node): name that node instead (the %s: %s)",
                           flag, names[i], layer_kind, layers);
        return q8_fail(err, Q8_ERR_ARG, "%s: node '%s' is a %s, not one of the %s (%s)", flag,
                       names[i], n->op_type, layer_kind, layers);
    }
    return Q8_OK;
}

q8_status q8_check_layer_names(const q8_graph *g, bool optimized, int n_bound,
                               const q8_prune_options *p, const q8_quant_options *q,
                               q8_error *err) {
    if (p) Q8_TRY(check_list(g, optimized, n_bound, "--prune-skip", p->skip, p->n_skip, prunable,
                             "layers q8 prunes", err));
    if (q) Q8_TRY(check_list(g, optimized, n_bound, "--fp32-layers", q->fp32_layers, q->n_fp32_layers,
                             q8_is_quant_layer, "layers q8 quantizes", err));
    return Q8_OK;
}
