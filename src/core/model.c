#include "model.h"

#include <string.h>

#include "onnx_import.h"
#include "q8file.h"
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
    Q8_TRY(q8_map_file(path, &map, err));
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
        q8_unmap_file(&map);
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
    q8_unmap_file(&m->map);
    free(m->path);
    free(m);
}

int q8_model_num_inputs(const q8_model *m) { return m->g->n_inputs; }
int q8_model_num_outputs(const q8_model *m) { return m->g->n_outputs; }


q8_status q8_model_input_info(const q8_model *m, int i, q8_tensor_info *info) {
    if (i < 0 || i >= m->g->n_inputs) return Q8_ERR_ARG;
    q8_tensor_info_fill(m->g->tensors[m->g->inputs[i]], info);
    return Q8_OK;
}

q8_status q8_model_output_info(const q8_model *m, int i, q8_tensor_info *info) {
    if (i < 0 || i >= m->g->n_outputs) return Q8_ERR_ARG;
    q8_tensor_info_fill(m->g->tensors[m->g->outputs[i]], info);
    return Q8_OK;
}
