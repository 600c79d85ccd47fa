/* Small edits of a node, and a constant read, that the fusion passes and
 * the quantizer's rewrite share (passes.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

q8_status q8_node_copy_attr(q8_node *dst, const q8_attr *a, q8_error *err) {
    if (a->type != Q8_ATTR_FLOAT && a->type != Q8_ATTR_INT && a->type != Q8_ATTR_STRING &&
        a->type != Q8_ATTR_INTS && a->type != Q8_ATTR_FLOATS)
        return Q8_OK;
    q8_attr *b = q8_node_set_attr(dst, a->name, a->type);
    if (!b) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    b->f = a->f;
    b->i = a->i;
    b->n = a->n;
    if (a->type == Q8_ATTR_STRING && !(b->s = q8_strdup(a->s ? a->s : "")))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (a->type == Q8_ATTR_INTS && a->n) {
        if (!(b->ints = malloc(sizeof(int64_t) * (size_t)a->n)))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        memcpy(b->ints, a->ints, sizeof(int64_t) * (size_t)a->n);
    }
    if (a->type == Q8_ATTR_FLOATS && a->n) {
        if (!(b->floats = malloc(sizeof(float) * (size_t)a->n)))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        memcpy(b->floats, a->floats, sizeof(float) * (size_t)a->n);
    }
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
