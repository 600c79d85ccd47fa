#include "model.h"

#include <string.h>


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


q8_status q8_model_input_info(const q8_model *m, int i, q8_tensor_info *info, q8_error *err) {
    if (!m || !info) return q8_fail(err, Q8_ERR_ARG, "q8_model_input_info: NULL argument");
    if (i < 0 || i >= m->g->n_inputs)
        return q8_fail(err, Q8_ERR_ARG, "input %d: the model has %d inputs", i, m->g->n_inputs);
    q8_tensor_info_fill(m->g->tensors[m->g->inputs[i]], info);
    return Q8_OK;
}

q8_status q8_model_output_info(const q8_model *m, int i, q8_tensor_info *info, q8_error *err) {
    if (!m || !info) return q8_fail(err, Q8_ERR_ARG, "q8_model_output_info: NULL argument");
    if (i < 0 || i >= m->g->n_outputs)
        return q8_fail(err, Q8_ERR_ARG, "output %d: the model has %d outputs", i, m->g->n_outputs);
    q8_tensor_info_fill(m->g->tensors[m->g->outputs[i]], info);
    return Q8_OK;
}

int q8_model_num_bound(const q8_model *m) { return m ? m->g->n_bound : 0; }

q8_status q8_model_bound_info(const q8_model *m, int i, q8_tensor_info *info, const void **data,
                              q8_error *err) {
    if (!m || !info || !data) return q8_fail(err, Q8_ERR_ARG, "q8_model_bound_info: NULL argument");
    if (i < 0 || i >= m->g->n_bound)
        return q8_fail(err, Q8_ERR_ARG, "bound input %d: the model has %d", i, m->g->n_bound);
    const q8_tensor *t = m->g->tensors[m->g->bound[i]];
    q8_tensor_info_fill(t, info);
    *data = t->data;
    return Q8_OK;
}
