#include "op.h"

#include <string.h>

static const q8_op_schema *const schemas[Q8_OP_COUNT] = {
#define Q8_OP_ENTRY_(ID, sym, domain, name) [Q8_OP_##ID] = &q8_schema_##sym,
    Q8_OP_LIST(Q8_OP_ENTRY_)
#undef Q8_OP_ENTRY_
};

static const char *const names[Q8_OP_COUNT] = {
#define Q8_OP_ENTRY_(ID, sym, domain, name) [Q8_OP_##ID] = name,
    Q8_OP_LIST(Q8_OP_ENTRY_)
#undef Q8_OP_ENTRY_
};

static const char *const domains[Q8_OP_COUNT] = {
#define Q8_OP_ENTRY_(ID, sym, domain, name) [Q8_OP_##ID] = domain,
    Q8_OP_LIST(Q8_OP_ENTRY_)
#undef Q8_OP_ENTRY_
};

const q8_op_schema *q8_op_schema_of(q8_op_id id) {
    Q8_ASSERT(id > Q8_OP_NONE && id < Q8_OP_COUNT);
    return schemas[id];
}

const char *q8_op_name(q8_op_id id) {
    return id > Q8_OP_NONE && id < Q8_OP_COUNT ? names[id] : "?";
}

const char *q8_op_domain(q8_op_id id) {
    return id > Q8_OP_NONE && id < Q8_OP_COUNT ? domains[id] : "";
}

q8_op_id q8_op_lookup(const char *domain, const char *op_type) {
    if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
    for (int i = 1; i < Q8_OP_COUNT; i++)
        if (strcmp(names[i], op_type) == 0 && strcmp(domains[i], domain) == 0) return (q8_op_id)i;
    return Q8_OP_NONE;
}

q8_status q8_check_io(const q8_node *n, int min_in, int max_in, int min_out, int max_out,
                      q8_error *err) {
    if (n->n_inputs < min_in || n->n_inputs > max_in)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has %d inputs, expected %d to %d", n->n_inputs,
                            min_in, max_in);
    if (n->n_outputs < min_out || n->n_outputs > max_out)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has %d outputs, expected %d to %d",
                            n->n_outputs, min_out, max_out);
    for (int i = 0; i < min_in; i++)
        if (n->inputs[i] < 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "required input %d is missing", i);
    if (min_out > 0 && n->outputs[0] < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "output 0 has no name");
    return Q8_OK;
}

q8_status q8_check_input(const q8_graph *g, const q8_node *n, int i, q8_dtype dtype,
                         q8_error *err) {
    const q8_tensor *t = q8_in(g, n, i);
    if (!t) return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", i);
    if (!t->shape_known)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has no known shape", t->name);
    if (dtype != Q8_UNDEFINED && t->dtype != dtype)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input '%s' is %s, only %s is supported",
                            t->name, q8_dtype_name(t->dtype), q8_dtype_name(dtype));
    return Q8_OK;
}

q8_status q8_broadcast_shape(const q8_node *n, const int64_t *a, int na, const int64_t *b,
                             int nb, int64_t *out, int *nout, q8_error *err) {
    int r = na > nb ? na : nb;
    for (int i = 0; i < r; i++) {
        int64_t da = i - (r - na) >= 0 ? a[i - (r - na)] : 1;
        int64_t db = i - (r - nb) >= 0 ? b[i - (r - nb)] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[96], sb[96];
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "shapes %s and %s do not broadcast",
                                q8_shape_str(a, na, sa, sizeof sa), q8_shape_str(b, nb, sb, sizeof sb));
        }
        out[i] = da == 1 ? db : da;
    }
    *nout = r;
    return Q8_OK;
}

q8_status q8_set_output(q8_graph *g, const q8_node *n, int i, q8_dtype dtype,
                        const int64_t *dims, int ndim, q8_error *err) {
    q8_tensor *t = q8_out(g, n, i);
    if (!t) return Q8_OK; /* optional output not requested */
    if (ndim < 0 || ndim > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", ndim,
                            Q8_MAX_DIMS);
    int64_t numel;
    if (!q8_shape_numel(dims, ndim, &numel)) {
        char sb[128];
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "output '%s' would have shape %s (negative or too large)",
                            t->name, q8_shape_str(dims, ndim, sb, sizeof sb));
    }
    q8_tensor_set_shape(t, dtype, dims, ndim);
    return Q8_OK;
}

void *q8_node_params(q8_node *n, size_t bytes, q8_error *err) {
    free(n->params);
    n->params = calloc(1, bytes);
    if (!n->params) q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    return n->params;
}

void q8_axis_split(const q8_tensor *x, int axis, int64_t *outer, int64_t *len, int64_t *inner) {
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++) *outer *= x->dims[d];
    for (int d = axis + 1; d < x->ndim; d++) *inner *= x->dims[d];
    *len = x->dims[axis];
}
