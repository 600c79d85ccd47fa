#include "model.h"

#include <string.h>

#include "onnx_import.h"
#include "passes.h"

q8_status q8_model_from_graph(q8_graph *g, const char *path, q8_model **out, q8_error *err) {
    q8_model *m = calloc(1, sizeof *m);
    if (!m || !(m->path = q8_strdup(path ? path : ""))) {
        free(m);
        q8_graph_free(g);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    m->g = g;
    *out = m;
    return Q8_OK;
}

/* A .q8 file: map it, parse, then resolve ops and check every shape again;
 * the shapes the file states must agree with what inference derives. */
static q8_status load_q8(const char *path, const q8_load_options *opts, q8_model **out,
                         q8_error *err) {
    q8_mapping map;
    Q8_TRY(q8_file_map(path, &map, err));
    q8_meta meta = {0};
    q8_graph *g = NULL;
    q8_status s = q8_file_parse(map.base, map.size, &g, &meta, NULL, err);
    int64_t(*dims)[Q8_MAX_DIMS] = NULL;
    int *ndim = NULL;
    if (s == Q8_OK) {
        dims = malloc(sizeof *dims * ((size_t)g->n_tensors + 1));
        ndim = malloc(sizeof *ndim * ((size_t)g->n_tensors + 1));
        if (!dims || !ndim) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    if (s == Q8_OK) {
        for (int i = 0; i < g->n_tensors; i++) {
            ndim[i] = g->tensors[i]->ndim;
            memcpy(dims[i], g->tensors[i]->dims, sizeof dims[i]);
        }
        s = q8_graph_toposort(g, err);
    }
    if (s == Q8_OK) s = q8_pass_fix_inputs(g, opts, err);
    if (s == Q8_OK) s = q8_pass_infer(g, err);
    for (int i = 0; s == Q8_OK && i < g->n_tensors; i++) {
        const q8_tensor *t = g->tensors[i];
        if (t->producer < 0 || !t->shape_known) continue;
        bool same = t->ndim == ndim[i];
        for (int d = 0; same && d < t->ndim; d++) same = t->dims[d] == dims[i][d];
        if (!same) {
            char a[96], b[96];
            s = q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': the file says shape %s, the graph gives %s",
                        t->name, q8_shape_str(dims[i], ndim[i], a, sizeof a),
                        q8_shape_str(t->dims, t->ndim, b, sizeof b));
        }
    }
    free(dims);
    free(ndim);
    if (s == Q8_OK) s = q8_model_from_graph(g, path, out, err);
    else q8_graph_free(g);
    if (s != Q8_OK) {
        q8_fail_prefix(err, "%s", path);
        q8_meta_free(&meta);
        q8_file_unmap(&map);
        return s;
    }
    (*out)->meta = meta;
    (*out)->map = map;
    (*out)->quantized = true;
    return Q8_OK;
}

static bool has_q8_magic(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    uint8_t head[8];
    bool q8 = fread(head, 1, 8, f) == 8 && q8_file_is_q8(head, 8);
    fclose(f);
    return q8;
}

q8_status q8_model_load(const char *path, const q8_load_options *opts, q8_model **out,
                        q8_error *err) {
    if (!path || !out) return q8_fail(err, Q8_ERR_ARG, "q8_model_load: NULL argument");
    *out = NULL;
    if (has_q8_magic(path)) return load_q8(path, opts, out, err);
    q8_graph *g = NULL;
    Q8_TRY(q8_onnx_load(path, &g, err));
    q8_status s = q8_passes_run(g, opts, err);
    if (s != Q8_OK) {
        q8_fail_prefix(err, "%s", path);
        q8_graph_free(g);
        return s;
    }
    return q8_model_from_graph(g, path, out, err);
}

void q8_model_free(q8_model *m) {
    if (!m) return;
    q8_graph_free(m->g);
    q8_meta_free(&m->meta);
    q8_file_unmap(&m->map);
    free(m->path);
    free(m);
}

int q8_model_num_inputs(const q8_model *m) { return m->g->n_inputs; }
int q8_model_num_outputs(const q8_model *m) { return m->g->n_outputs; }

static void fill_info(const q8_tensor *t, q8_tensor_info *info) {
    info->name = t->name;
    info->dtype = t->dtype;
    info->ndim = t->ndim;
    memcpy(info->dims, t->dims, sizeof info->dims);
}

q8_status q8_model_input_info(const q8_model *m, int i, q8_tensor_info *info) {
    if (i < 0 || i >= m->g->n_inputs) return Q8_ERR_ARG;
    fill_info(m->g->tensors[m->g->inputs[i]], info);
    return Q8_OK;
}

q8_status q8_model_output_info(const q8_model *m, int i, q8_tensor_info *info) {
    if (i < 0 || i >= m->g->n_outputs) return Q8_ERR_ARG;
    fill_info(m->g->tensors[m->g->outputs[i]], info);
    return Q8_OK;
}

/* ---- session ---- */

static const q8_backend *pick_backend(q8_device d) {
#ifdef Q8_HAVE_CUDA
    if (d == Q8_DEVICE_CUDA) return &q8_backend_cuda;
#endif
    return d == Q8_DEVICE_CPU ? &q8_backend_cpu : NULL;
}

q8_status q8_session_create(const q8_model *m, const q8_session_options *opts,
                            q8_session **out, q8_error *err) {
    if (!m || !out) return q8_fail(err, Q8_ERR_ARG, "q8_session_create: NULL argument");
    q8_session_options o = {0};
    if (opts) o = *opts;
    const q8_backend *be = pick_backend(o.device);
    if (!be)
        return q8_fail(err, Q8_ERR_UNSUPPORTED,
                       "this build of q8 has no CUDA backend (rebuild with -DQ8_CUDA=ON)");
    const q8_graph *g = m->g;
    for (int i = 0; i < g->n_nodes; i++) {
        if (be->check_op) {
            Q8_TRY(be->check_op(g, g->nodes[i], err));
            continue;
        }
        if (!be->supports_op(g, g->nodes[i]))
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, g->nodes[i], "not supported by the %s backend",
                                be->name);
    }
    q8_session *s = calloc(1, sizeof *s);
    if (!s) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    s->m = m;
    s->backend = be;
    s->input_set = calloc((size_t)g->n_inputs + 1, sizeof(bool));
    if (!s->input_set) {
        free(s);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    q8_status st = be->create_mapped
                       ? be->create_mapped(g, &o, m->map.base, m->map.size, &s->ctx, err)
                       : be->create(g, &o, &s->ctx, err);
    if (st != Q8_OK) {
        free(s->input_set);
        free(s);
        return st;
    }
    *out = s;
    return Q8_OK;
}

void q8_session_free(q8_session *s) {
    if (!s) return;
    s->backend->destroy(s->ctx);
    free(s->input_set);
    free(s);
}

q8_status q8_session_set_input(q8_session *s, const char *name, q8_dtype dtype,
                               const int64_t *dims, int ndim, const void *data,
                               q8_error *err) {
    const q8_graph *g = s->m->g;
    int idx = -1;
    for (int i = 0; i < g->n_inputs; i++)
        if (name ? strcmp(g->tensors[g->inputs[i]]->name, name) == 0 : g->n_inputs == 1) idx = i;
    if (idx < 0 && name) return q8_fail(err, Q8_ERR_ARG, "the model has no input named '%s'", name);
    if (idx < 0)
        return q8_fail(err, Q8_ERR_ARG, "the model has %d inputs: name the input", g->n_inputs);
    const q8_tensor *t = g->tensors[g->inputs[idx]];
    char a[96], b[96];
    if (dtype != t->dtype)
        return q8_fail(err, Q8_ERR_SHAPE, "input '%s': got %s data, the model wants %s", t->name,
                       q8_dtype_name(dtype), q8_dtype_name(t->dtype));
    bool same = ndim == t->ndim;
    for (int i = 0; same && i < ndim; i++) same = dims[i] == t->dims[i];
    if (!same)
        return q8_fail(err, Q8_ERR_SHAPE, "input '%s': got shape %s, the model wants %s", t->name,
                       q8_shape_str(dims, ndim, a, sizeof a), q8_shape_str(t->dims, t->ndim, b, sizeof b));
    Q8_TRY(s->backend->set_input(s->ctx, g->inputs[idx], data, q8_tensor_nbytes(t), err));
    s->input_set[idx] = true;
    return Q8_OK;
}

q8_status q8_session_run(q8_session *s, q8_error *err) {
    const q8_graph *g = s->m->g;
    for (int i = 0; i < g->n_inputs; i++)
        if (!s->input_set[i])
            return q8_fail(err, Q8_ERR_ARG, "input '%s' was not set", g->tensors[g->inputs[i]]->name);
    Q8_TRY(s->backend->run(s->ctx, err));
    return s->backend->sync(s->ctx, err);
}

q8_status q8_session_output(const q8_session *s, int i, q8_tensor_info *info, const void **data) {
    const q8_graph *g = s->m->g;
    if (i < 0 || i >= g->n_outputs) return Q8_ERR_ARG;
    const q8_tensor *t = g->tensors[g->outputs[i]];
    fill_info(t, info);
    *data = t->data ? t->data : s->backend->tensor_data(s->ctx, g->outputs[i]);
    return Q8_OK;
}

q8_status q8_session_set_observer(q8_session *s, q8_node_observer fn, void *arg, q8_error *err) {
    if (!s->backend->set_observer)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "the %s backend cannot observe nodes", s->backend->name);
    s->backend->set_observer(s->ctx, fn, arg);
    return Q8_OK;
}

int q8_session_num_nodes(const q8_session *s) { return s->m->g->n_nodes; }

q8_status q8_session_node_profile(const q8_session *s, int i, const char **name,
                                  const char **op_type, double *total_ms) {
    const q8_graph *g = s->m->g;
    if (i < 0 || i >= g->n_nodes) return Q8_ERR_ARG;
    *name = g->nodes[i]->name;
    *op_type = g->nodes[i]->op_type;
    *total_ms = s->backend->node_ms ? s->backend->node_ms(s->ctx, i) : -1;
    return Q8_OK;
}

void q8_session_memory(const q8_session *s, q8_memory_info *mi) {
    memset(mi, 0, sizeof *mi);
    s->backend->memory(s->ctx, mi);
}
