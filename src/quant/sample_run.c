/* q8_run_samples (sample_run.h). */
#include "sample_run.h"

#include "model.h"

q8_status q8_run_samples(const q8_graph *g, const q8_sample_set *s, int n_threads,
                         q8_node_observer fn, void *arg, q8_error *err) {
    q8_model tmp = {.g = (q8_graph *)g};
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = n_threads, .device = Q8_DEVICE_CPU};
    void **ptr = calloc((size_t)g->n_tensors + 1, sizeof(void *));
    if (!ptr) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status st = q8_session_create(&tmp, &so, &sess, err);
    if (st == Q8_OK) st = q8_session_set_observer(sess, fn, arg, err);
    for (int i = 0; st == Q8_OK && i < s->n_samples; i++) {
        for (int k = 0; st == Q8_OK && k < s->n_inputs; k++) {
            q8_tensor *t = NULL;
            st = q8_sample_load(s, i, k, &t, err);
            const char *name = s->names ? s->names[k] : g->tensors[g->inputs[k]]->name;
            int ti = q8_graph_find(g, name);
            if (st == Q8_OK)
                st = q8_session_set_input(sess, name, t->dtype, t->dims, t->ndim, t->data, err);
            if (st == Q8_OK && ti >= 0 && t->dtype == Q8_F32) {
                ptr[ti] = t->data;
                fn(arg, g, NULL, ptr);
                ptr[ti] = NULL;
            }
            q8_tensor_free(t);
        }
        if (st == Q8_OK) st = q8_session_run(sess, err);
    }
    q8_session_free(sess);
    free(ptr);
    return st;
}
