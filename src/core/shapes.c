/* Shapes of a graph for fixed input shapes: the inputs' dims from the model
 * and the caller, then every node's schema infer in order. This is all a
 * .q8 file needs at load (its graph is already optimized); the ONNX path
 * adds folding and rewrites (src/passes). */
#include <string.h>

#include "bind.h"
#include "op.h"
#include "shapes.h"

q8_status q8_graph_fix_inputs(q8_graph *g, const q8_load_options *opts, q8_error *err) {
    Q8_TRY(q8_graph_bind_inputs(g, opts, err));
    int n_opt = opts ? opts->n_input_shapes : 0, positional = 0;
    for (int k = 0; k < n_opt; k++) {
        const q8_input_shape *is = &opts->input_shapes[k];
        int ti = -1, b = q8_graph_find_bound(g, is->name);
        if (b >= 0) { /* a bound input: its value fixed its shape */
            const q8_tensor *t = g->tensors[b];
            bool same = t->ndim == is->ndim;
            for (int d = 0; same && d < is->ndim; d++) same = t->dims[d] == is->dims[d];
            char a[96], c[96];
            if (!same)
                return q8_fail(err, Q8_ERR_SHAPE, "input '%s' is bound to a value of shape %s; "
                               "got shape %s", t->name, q8_shape_str(t->dims, t->ndim, a, sizeof a),
                               q8_shape_str(is->dims, is->ndim, c, sizeof c));
            continue;
        }
        if (!is->name) {
            /* The k-th unnamed entry fixes the k-th graph input. */
            if (positional >= g->n_inputs)
                return q8_fail(err, Q8_ERR_ARG, "%d unnamed inputs given, the model has %d inputs",
                               positional + 1, g->n_inputs);
            ti = g->inputs[positional++];
        } else {
            ti = q8_graph_find(g, is->name);
            bool is_input = false;
            for (int i = 0; i < g->n_inputs; i++) is_input |= g->inputs[i] == ti;
            if (!is_input)
                return q8_fail(err, Q8_ERR_ARG, "the model has no input named '%s'", is->name);
        }
        const char *nm = g->tensors[ti]->name;
        if (is->ndim < 0 || is->ndim > Q8_MAX_DIMS)
            return q8_fail(err, Q8_ERR_ARG, "input '%s': bad rank %d", nm, is->ndim);
        q8_tensor *t = g->tensors[ti];
        int64_t numel;
        if (!q8_shape_numel(is->dims, is->ndim, &numel))
            return q8_fail(err, Q8_ERR_ARG, "input '%s': dims must be >= 0 and not too large", nm);
        if (t->ndim >= 0 && t->ndim != is->ndim)
            return q8_fail(err, Q8_ERR_SHAPE, "input '%s': the model wants rank %d, got rank %d",
                           nm, t->ndim, is->ndim);
        for (int d = 0; t->ndim >= 0 && d < is->ndim; d++)
            if (t->dims[d] >= 0 && t->dims[d] != is->dims[d])
                return q8_fail(err, Q8_ERR_SHAPE,
                               "input '%s': the model fixes dim %d to %lld, got %lld",
                               nm, d, (long long)t->dims[d], (long long)is->dims[d]);
        q8_tensor_set_shape(t, t->dtype, is->dims, is->ndim);
    }
    for (int i = 0; i < g->n_inputs; i++) {
        q8_tensor *t = g->tensors[g->inputs[i]];
        if (t->shape_known) continue;
        if (t->ndim < 0)
            return q8_fail(err, Q8_ERR_SHAPE,
                           "input '%s' has no shape in the model; give one with --input-shape %s=DIMS",
                           t->name, t->name);
        char dyn[256] = "";
        size_t used = 0;
        for (int d = 0; d < t->ndim; d++)
            if (t->dims[d] < 0 && used < sizeof dyn)
                used += (size_t)snprintf(dyn + used, sizeof dyn - used, "%s%d ('%s')",
                                         used ? ", " : "", d, t->dim_param[d] ? t->dim_param[d] : "?");
        /* shapes given for fewer inputs than the model has: this input
         * was most likely forgotten, not meant to stay dynamic */
        if (n_opt > 0 && n_opt < g->n_inputs)
            return q8_fail(err, Q8_ERR_SHAPE,
                           "the model has %d inputs and %d %s given: input '%s' is missing (its "
                           "dims %s are dynamic: give the input, or fix them with --input-shape "
                           "%s=DxDx...)", g->n_inputs, n_opt, n_opt == 1 ? "was" : "were",
                           t->name, dyn, t->name);
        return q8_fail(err, Q8_ERR_SHAPE,
                       "input '%s' has dynamic dims %s; fix them with --input-shape %s=DxDx...",
                       t->name, dyn, t->name);
    }
    return Q8_OK;
}

/* An int8 output of an ordinary op (Relu, MaxPool, Reshape, Concat, ...)
 * carries its int8 input's scale; ops that set scales themselves (the
 * quantizing ones) have done so in infer. */
static void inherit_qparams(q8_graph *g, const q8_node *n) {
    q8_tensor *out = q8_out(g, n, 0);
    const q8_tensor *in = q8_in(g, n, 0);
    if (!out || !in || out->dtype != Q8_I8 || in->dtype != Q8_I8 || out->q.n || in->q.n != 1)
        return;
    float *s = malloc(sizeof(float));
    if (!s) return; /* the op consuming it reports the missing scale */
    s[0] = in->q.scale[0];
    out->q.scale = s;
    out->q.n = 1;
    out->q.axis = -1;
    out->q.zero_point = in->q.zero_point;
}

q8_status q8_node_reinfer(q8_graph *g, q8_node *n, q8_error *err) {
    for (int i = 0; i < n->n_inputs; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        if (t && !t->shape_known)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has no known shape", t->name);
    }
    free(n->params);
    n->params = NULL;
    Q8_TRY(q8_op_schema_of(n->op)->infer(g, n, err));
    for (int i = 0; i < n->n_outputs; i++) {
        const q8_tensor *t = q8_out(g, n, i);
        Q8_ASSERT(!t || t->shape_known);
    }
    inherit_qparams(g, n);
    return Q8_OK;
}

q8_status q8_graph_infer_shapes(q8_graph *g, q8_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        n->op = q8_op_lookup(n->domain, n->op_type);
        if (n->op == Q8_OP_NONE)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "op %s%s%s is not supported",
                                n->domain, *n->domain ? "." : "", n->op_type);
        Q8_TRY(q8_node_reinfer(g, n, err));
    }
    return Q8_OK;
}
