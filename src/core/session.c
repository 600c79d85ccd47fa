/* Sessions: a model bound to one backend (picked through the registry),
 * its inputs, runs and outputs. */
#include <string.h>

#include "bind.h"
#include "half.h"
#include "layout.h"
#include "model.h"

/* Buffers for the inputs and outputs a float16 model exchanges as float16
 * while computing in float32 (src/passes/fp16.c): allocated once here, so
 * running allocates nothing. */
static q8_status alloc_conversions(q8_session *s, q8_error *err) {
    const q8_graph *g = s->m->g;
    s->in_conv = calloc((size_t)g->n_inputs + 1, sizeof(void *));
    s->out_conv = calloc((size_t)g->n_outputs + 1, sizeof(void *));
    if (!s->in_conv || !s->out_conv) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int k = 0; k < g->n_inputs + g->n_outputs; k++) {
        bool in = k < g->n_inputs;
        const q8_tensor *t = g->tensors[in ? g->inputs[k] : g->outputs[k - g->n_inputs]];
        if (t->io_dtype != Q8_F16) continue;
        /* a name declared float16 as an output and int64 as an input, say */
        if (t->dtype != Q8_F32)
            return q8_fail(err, Q8_ERR_FORMAT,
                           "%s '%s' is exchanged as float16 but computed as %s: the model "
                           "declares it with two types", in ? "input" : "output", t->name,
                           q8_dtype_name(t->dtype));
        size_t bytes = (size_t)q8_tensor_numel(t) * (in ? 4 : 2);
        void *p = q8_aligned_alloc(bytes ? bytes : 1);
        if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        if (in) s->in_conv[k] = p;
        else s->out_conv[k - g->n_inputs] = p;
    }
    return Q8_OK;
}

static void free_conversions(q8_session *s) {
    const q8_graph *g = s->m->g;
    for (int k = 0; s->in_conv && k < g->n_inputs; k++) q8_aligned_free(s->in_conv[k]);
    for (int k = 0; s->out_conv && k < g->n_outputs; k++) q8_aligned_free(s->out_conv[k]);
    free(s->in_conv);
    free(s->out_conv);
}

static bool is_bound_or_output(const q8_graph *g, int t) {
    for (int i = 0; i < g->n_bound; i++)
        if (g->bound[i] == t) return true;
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t) return true;
    return false;
}

/* q8_release for a session that owns its model: frees what the model
 * allocated (weights in a mapped .q8 cost nothing to keep); bound values
 * and constant outputs are read through the model, never by the backend. */
static void release_constant(void *arg, int t) {
    q8_session *s = arg;
    q8_graph *g = s->owned->g;
    q8_tensor *tt = g->tensors[t];
    if (!tt->data || !tt->owns_data || is_bound_or_output(g, t)) return;
    s->released_bytes += q8_tensor_stored_bytes(tt);
    q8_tensor_release_data(tt);
}

static q8_status create(const q8_model *m, q8_model *owned, const q8_session_options *opts,
                        q8_session **out, q8_error *err) {
    if (!m || !out) return q8_fail(err, Q8_ERR_ARG, "q8_session_create: NULL argument");
    *out = NULL;
    q8_session_options o = {0};
    if (opts) o = *opts;
    const q8_backend *be = q8_backend_for(o.device);
    if (!be)
        return q8_fail(err, Q8_ERR_UNSUPPORTED,
                       "this build of q8 has no %s backend (rebuild with -DQ8_CUDA=ON)",
                       o.device == Q8_DEVICE_CUDA ? "CUDA" : "such");
    if (m->taken)
        return q8_fail(err, Q8_ERR_ARG, "the model belongs to a session "
                                        "(q8_session_create_owning): load it again");
    char why[256];
    if (!be->available(why, sizeof why)) return q8_fail(err, Q8_ERR_BACKEND, "%s", why);
    const q8_graph *g = m->g;
    /* a node the device cannot run goes to the host, unless told not to */
    bool host_nodes = be->host_nodes && !o.strict_device;
    for (int i = 0; i < g->n_nodes; i++) {
        q8_error why = {0}; /* err is the caller's only if the session fails */
        q8_status cs = be->check_node(g, g->nodes[i], &why);
        if (cs == Q8_ERR_UNSUPPORTED && host_nodes && q8_host_node_ok(g->nodes[i])) continue;
        if (cs != Q8_OK) {
            if (err) *err = why;
            return cs;
        }
    }
    q8_session *s = calloc(1, sizeof *s);
    if (!s) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    s->m = m;
    s->owned = owned;
    s->backend = be;
    s->input_set = calloc((size_t)g->n_inputs + 1, sizeof(bool));
    q8_status st = s->input_set ? alloc_conversions(s, err)
                                : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_release rel = {.fn = release_constant, .arg = s};
    if (owned) owned->taken = true;
    if (st == Q8_OK) st = be->create(g, &o, &m->map, owned ? &rel : NULL, &s->ctx, err);
    if (owned) q8_heap_trim();
    if (st != Q8_OK) {
        free_conversions(s);
        free(s->input_set);
        free(s);
        return st;
    }
    *out = s;
    return Q8_OK;
}

q8_status q8_session_create(const q8_model *m, const q8_session_options *opts,
                            q8_session **out, q8_error *err) {
    return create(m, NULL, opts, out, err);
}

q8_status q8_session_create_owning(q8_model *m, const q8_session_options *opts,
                                   q8_session **out, q8_error *err) {
    q8_status st = create(m, m, opts, out, err);
    if (st != Q8_OK) q8_model_free(m);
    return st;
}

void q8_session_free(q8_session *s) {
    if (!s) return;
    s->backend->destroy(s->ctx);
    free_conversions(s);
    free(s->input_set);
    q8_model_free(s->owned);
    free(s);
}

q8_status q8_session_set_input(q8_session *s, const char *name, q8_dtype dtype,
                               const int64_t *dims, int ndim, const void *data,
                               q8_error *err) {
    if (!s || (ndim > 0 && !dims) || !data)
        return q8_fail(err, Q8_ERR_ARG, "q8_session_set_input: NULL argument");
    if (ndim < 0 || ndim > Q8_MAX_DIMS)
        return q8_fail(err, Q8_ERR_ARG, "q8_session_set_input: rank %d (0 to %d)", ndim,
                       Q8_MAX_DIMS);
    const q8_graph *g = s->m->g;
    int idx = -1;
    for (int i = 0; i < g->n_inputs; i++)
        if (name ? strcmp(g->tensors[g->inputs[i]]->name, name) == 0 : g->n_inputs == 1) idx = i;
    int bound = idx < 0 ? q8_graph_find_bound(g, name) : -1;
    if (bound >= 0) /* folded when the model was built: only the same value runs */
        return q8_bound_check(g->tensors[bound], dtype, dims, ndim, data, err);
    if (idx < 0 && name) return q8_fail(err, Q8_ERR_ARG, "the model has no input named '%s'", name);
    if (idx < 0)
        return q8_fail(err, Q8_ERR_ARG, "the model has %d inputs: name the input", g->n_inputs);
    const q8_tensor *t = g->tensors[g->inputs[idx]];
    char a[96], b[96];
    /* a float16 model's input takes float16 (converted here) or float32 */
    bool convert = t->io_dtype == Q8_F16 && dtype == Q8_F16;
    if (dtype != t->dtype && !convert)
        return q8_fail(err, Q8_ERR_SHAPE, "input '%s': got %s data, the model wants %s", t->name,
                       q8_dtype_name(dtype),
                       q8_dtype_name(t->io_dtype != Q8_UNDEFINED ? t->io_dtype : t->dtype));
    bool same = ndim == t->ndim;
    for (int i = 0; same && i < ndim; i++) same = dims[i] == t->dims[i];
    if (!same)
        return q8_fail(err, Q8_ERR_SHAPE, "input '%s': got shape %s, the model wants %s", t->name,
                       q8_shape_str(dims, ndim, a, sizeof a), q8_shape_str(t->dims, t->ndim, b, sizeof b));
    if (convert) {
        q8_f16_to_f32_n(data, s->in_conv[idx], q8_tensor_numel(t));
        data = s->in_conv[idx];
    }
    Q8_TRY(s->backend->set_input(s->ctx, g->inputs[idx], data, q8_tensor_nbytes(t), err));
    s->input_set[idx] = true;
    return Q8_OK;
}

q8_status q8_session_run(q8_session *s, q8_error *err) {
    if (!s) return q8_fail(err, Q8_ERR_ARG, "q8_session_run: NULL session");
    const q8_graph *g = s->m->g;
    for (int i = 0; i < g->n_inputs; i++)
        if (!s->input_set[i])
            return q8_fail(err, Q8_ERR_ARG, "input '%s' was not set", g->tensors[g->inputs[i]]->name);
    Q8_TRY(s->backend->run(s->ctx, err));
    return s->backend->sync(s->ctx, err);
}

q8_status q8_session_output(const q8_session *s, int i, q8_tensor_info *info, const void **data,
                            q8_error *err) {
    if (!s || !info || !data) return q8_fail(err, Q8_ERR_ARG, "q8_session_output: NULL argument");
    const q8_graph *g = s->m->g;
    if (i < 0 || i >= g->n_outputs)
        return q8_fail(err, Q8_ERR_ARG, "output %d: the model has %d outputs", i, g->n_outputs);
    const q8_tensor *t = g->tensors[g->outputs[i]];
    q8_tensor_info_fill(t, info);
    *data = t->data ? t->data : s->backend->tensor_data(s->ctx, g->outputs[i]);
    if (s->out_conv[i] && *data) { /* float16 model: round the float32 result */
        q8_f32_to_f16_n(*data, s->out_conv[i], q8_tensor_numel(t));
        *data = s->out_conv[i];
    }
    return Q8_OK;
}

q8_status q8_session_set_observer(q8_session *s, q8_node_observer fn, void *arg, q8_error *err) {
    if (!s->backend->set_observer)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "the %s backend cannot observe nodes", s->backend->name);
    return s->backend->set_observer(s->ctx, fn, arg, err);
}

int q8_session_num_nodes(const q8_session *s) { return s->m->g->n_nodes; }

q8_status q8_session_node_profile(const q8_session *s, int i, const char **name,
                                  const char **op_type, double *total_ms, q8_error *err) {
    if (!s || !name || !op_type || !total_ms)
        return q8_fail(err, Q8_ERR_ARG, "q8_session_node_profile: NULL argument");
    const q8_graph *g = s->m->g;
    if (i < 0 || i >= g->n_nodes)
        return q8_fail(err, Q8_ERR_ARG, "node %d: the model has %d nodes", i, g->n_nodes);
    *name = g->nodes[i]->name;
    *op_type = g->nodes[i]->op_type;
    *total_ms = s->backend->node_ms ? s->backend->node_ms(s->ctx, i) : -1;
    return Q8_OK;
}

void q8_session_memory(const q8_session *s, q8_memory_info *mi) {
    memset(mi, 0, sizeof *mi);
    s->backend->memory(s->ctx, mi);
    mi->weights_bytes -= s->released_bytes < mi->weights_bytes ? s->released_bytes
                                                                : mi->weights_bytes;
}

void q8_session_stats_get(const q8_session *s, q8_session_stats *st) {
    memset(st, 0, sizeof *st);
    s->backend->stats(s->ctx, st);
}
