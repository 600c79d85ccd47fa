/* Small edits of a node, and a constant read, that the fusion passes and
 * the quantizer's rewrite share (passes.h). */
#include <math.h>
#include <stdlib.h>

#include "passes.h"

q8_status q8_node_make_q8_op(q8_node *n, const char *op, bool clear_attrs, q8_error *err) {
    char *o = q8_strdup(op), *d = q8_strdup("q8");
    if (!o || !d) {
        free(o);
        free(d);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    free(n->op_type);
    free(n->domain);
    n->op_type = o;
    n->domain = d;
    for (int k = 0; clear_attrs && k < n->n_attrs; k++) q8_attr_clear(&n->attrs[k]);
    if (clear_attrs) n->n_attrs = 0;
    return Q8_OK;
}

q8_status q8_node_attr_float(q8_node *n, const char *name, float v, q8_error *err) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_FLOAT);
    if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    a->f = v;
    return Q8_OK;
}

q8_status q8_node_attr_int(q8_node *n, const char *name, int64_t v, q8_error *err) {
    q8_attr *a = q8_node_set_attr(n, name, Q8_ATTR_INT);
    if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    a->i = v;
    return Q8_OK;
}

bool q8_const_scale(const q8_graph *g, int t, float *v) {
    const q8_tensor *s = t >= 0 ? q8_graph_tensor(g, t) : NULL;
    if (!s || !s->data || s->dtype != Q8_F32 || q8_tensor_numel(s) != 1) return false;
    *v = *(const float *)s->data;
    return *v > 0 && isfinite(*v);
}
