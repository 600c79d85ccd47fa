/* Binding inputs to values known at load (bind.h). */
#include "bind.h"

#include <string.h>

int q8_graph_find_bound(const q8_graph *g, const char *name) {
    for (int i = 0; name && i < g->n_bound; i++)
        if (strcmp(g->tensors[g->bound[i]]->name, name) == 0) return g->bound[i];
    return -1;
}

/* Element i of data as text. */
static int elem_str(q8_dtype dt, const void *data, int64_t i, char *buf, size_t size) {
    switch (dt) {
    case Q8_F32: return snprintf(buf, size, "%g", (double)((const float *)data)[i]);
    case Q8_F64: return snprintf(buf, size, "%g", ((const double *)data)[i]);
    case Q8_I64: return snprintf(buf, size, "%lld", (long long)((const int64_t *)data)[i]);
    case Q8_I32: return snprintf(buf, size, "%d", ((const int32_t *)data)[i]);
    case Q8_I8: return snprintf(buf, size, "%d", ((const int8_t *)data)[i]);
    case Q8_U8: case Q8_BOOL: return snprintf(buf, size, "%u", ((const uint8_t *)data)[i]);
    default: return snprintf(buf, size, "?");
    }
}

/* "16000", "[1, 2, 3]", "[1, 2, 3, 4, ...] (10 values)": for messages. */
static void value_str(q8_dtype dt, const void *data, int64_t n, char *buf, size_t size) {
    size_t used = 0;
#define PUT(...) used += used < size ? (size_t)snprintf(buf + used, size - used, __VA_ARGS__) : 0
    if (n != 1) PUT("[");
    for (int64_t i = 0; i < n && i < 4; i++) {
        if (i) PUT(", ");
        if (used < size) used += (size_t)elem_str(dt, data, i, buf + used, size - used);
    }
    if (n > 4) PUT(", ...");
    if (n != 1) PUT("]");
    if (n > 4) PUT(" (%lld values)", (long long)n);
#undef PUT
}

q8_status q8_bound_check(const q8_tensor *t, q8_dtype dtype, const int64_t *dims, int ndim,
                         const void *data, q8_error *err) {
    bool same = dtype == t->dtype && ndim == t->ndim;
    for (int d = 0; same && d < ndim; d++) same = dims[d] == t->dims[d];
    char a[160], b[160];
    if (!same)
        return q8_fail(err, Q8_ERR_ARG, "input '%s' is bound to a %s %s value in this model; got "
                       "%s %s", t->name, q8_dtype_name(t->dtype),
                       q8_shape_str(t->dims, t->ndim, a, sizeof a), q8_dtype_name(dtype),
                       q8_shape_str(dims, ndim, b, sizeof b));
    if (memcmp(data, t->data, q8_tensor_nbytes(t)) == 0) return Q8_OK;
    value_str(t->dtype, t->data, q8_tensor_numel(t), a, sizeof a);
    value_str(dtype, data, q8_tensor_numel(t), b, sizeof b);
    return q8_fail(err, Q8_ERR_ARG, "input '%s' is bound to %s in this model (it decides shapes or "
                   "branches, folded when the model was built); this run gives %s: build the "
                   "model for that value", t->name, a, b);
}

static q8_status bind_one(q8_graph *g, const q8_input_value *v, q8_error *err) {
    if (!v->name || (!v->data && v->ndim >= 0) || v->ndim < 0 || v->ndim > Q8_MAX_DIMS)
        return q8_fail(err, Q8_ERR_ARG, "an input value needs a name, data and a rank 0 to %d",
                       Q8_MAX_DIMS);
    int64_t numel;
    if (!q8_shape_numel(v->dims, v->ndim, &numel))
        return q8_fail(err, Q8_ERR_ARG, "input '%s': bad value dims", v->name);
    int b = q8_graph_find_bound(g, v->name);
    if (b >= 0) return q8_bound_check(g->tensors[b], v->dtype, v->dims, v->ndim, v->data, err);
    int k = -1;
    for (int i = 0; i < g->n_inputs; i++)
        if (strcmp(g->tensors[g->inputs[i]]->name, v->name) == 0) k = i;
    if (k < 0)
        return q8_fail(err, Q8_ERR_ARG, "the model has no input named '%s' to bind", v->name);
    q8_tensor *t = g->tensors[g->inputs[k]];
    if (t->dtype != v->dtype || t->io_dtype != Q8_UNDEFINED)
        return q8_fail(err, Q8_ERR_ARG, "input '%s' is %s; the value to bind it to is %s", t->name,
                       q8_dtype_name(t->io_dtype != Q8_UNDEFINED ? t->io_dtype : t->dtype),
                       q8_dtype_name(v->dtype));
    if (t->ndim >= 0) {
        bool ok = t->ndim == v->ndim;
        for (int d = 0; ok && d < v->ndim; d++) ok = t->dims[d] < 0 || t->dims[d] == v->dims[d];
        char a[96], c[96];
        if (!ok)
            return q8_fail(err, Q8_ERR_SHAPE, "input '%s' has shape %s; the value to bind it to "
                           "is %s", t->name, q8_shape_str(t->dims, t->ndim, a, sizeof a),
                           q8_shape_str(v->dims, v->ndim, c, sizeof c));
    }
    int *nb = realloc(g->bound, sizeof(int) * ((size_t)g->n_bound + 1));
    if (!nb) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    g->bound = nb;
    q8_tensor_set_shape(t, v->dtype, v->dims, v->ndim);
    Q8_TRY(q8_tensor_alloc_data(t, err));
    memcpy(t->data, v->data, q8_tensor_nbytes(t));
    g->bound[g->n_bound++] = g->inputs[k];
    memmove(g->inputs + k, g->inputs + k + 1, sizeof(int) * (size_t)(g->n_inputs - k - 1));
    g->n_inputs--;
    return Q8_OK;
}

q8_status q8_graph_bind_inputs(q8_graph *g, const q8_load_options *opts, q8_error *err) {
    for (int i = 0; opts && i < opts->n_input_values; i++)
        Q8_TRY(bind_one(g, &opts->input_values[i], err));
    return Q8_OK;
}
