#include "testutil.h"

#include <string.h>

#include "model.h"
#include "passes.h"

uint64_t q8t_next(q8t_rng *r) {
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return r->s = x;
}

float q8t_uniform(q8t_rng *r, float lo, float hi) {
    return lo + (hi - lo) * (float)((q8t_next(r) >> 40) / (double)(1ull << 24));
}

void q8t_fill(q8t_rng *r, float *x, int64_t n, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) x[i] = q8t_uniform(r, lo, hi);
}

q8_graph *q8t_graph1(const char *op_type, const q8t_in *ins, int n_in, int n_out) {
    q8_graph *g = q8_graph_new();
    cr_assert(g);
    int in_idx[32], out_idx[32];
    g->inputs = malloc(sizeof(int) * 32);
    g->outputs = malloc(sizeof(int) * 32);
    for (int i = 0; i < n_in; i++) {
        if (!ins[i].name) {
            in_idx[i] = -1;
            continue;
        }
        int t = q8_graph_add_tensor(g, ins[i].name, NULL);
        cr_assert(t >= 0);
        q8_tensor *tt = g->tensors[t];
        q8_tensor_set_shape(tt, ins[i].dtype, ins[i].dims, ins[i].ndim);
        if (ins[i].data) {
            cr_assert(q8_tensor_alloc_data(tt, NULL) == Q8_OK);
            memcpy(tt->data, ins[i].data, q8_tensor_nbytes(tt));
        } else {
            g->inputs[g->n_inputs++] = t;
        }
        in_idx[i] = t;
    }
    for (int i = 0; i < n_out; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "out%d", i);
        out_idx[i] = q8_graph_add_tensor(g, nm, NULL);
        g->outputs[g->n_outputs++] = out_idx[i];
    }
    int ni = q8_graph_add_node(g, "node", op_type);
    cr_assert(ni >= 0);
    cr_assert(q8_node_set_io(g->nodes[ni], in_idx, n_in, out_idx, n_out, NULL) == Q8_OK);
    return g;
}

static q8_attr *new_attr(q8_graph *g, const char *name, q8_attr_type type) {
    q8_node *n = g->nodes[g->n_nodes - 1];
    n->attrs = realloc(n->attrs, sizeof(q8_attr) * (size_t)(n->n_attrs + 1));
    q8_attr *a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    a->name = q8_strdup(name);
    a->type = type;
    return a;
}

void q8t_attr_int(q8_graph *g, const char *name, int64_t v) { new_attr(g, name, Q8_ATTR_INT)->i = v; }
void q8t_attr_float(q8_graph *g, const char *name, float v) { new_attr(g, name, Q8_ATTR_FLOAT)->f = v; }
void q8t_attr_str(q8_graph *g, const char *name, const char *v) {
    new_attr(g, name, Q8_ATTR_STRING)->s = q8_strdup(v);
}
void q8t_attr_ints(q8_graph *g, const char *name, const int64_t *v, int n) {
    q8_attr *a = new_attr(g, name, Q8_ATTR_INTS);
    a->n = n;
    a->ints = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (n) memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
}
void q8t_attr_floats(q8_graph *g, const char *name, const float *v, int n) {
    q8_attr *a = new_attr(g, name, Q8_ATTR_FLOATS);
    a->n = n;
    a->floats = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (n) memcpy(a->floats, v, sizeof(float) * (size_t)n);
}

q8_status q8t_run(q8_graph *g, const void *const *in_data, int n_threads, void **outs,
                  q8_tensor_info *infos, int max_out, q8_error *err) {
    q8_status s = q8_passes_run(g, NULL, err);
    if (s != Q8_OK) {
        q8_graph_free(g);
        return s;
    }
    q8_model *m;
    if ((s = q8_model_from_graph(g, "test", &m, err)) != Q8_OK) return s;
    q8_session *sess;
    q8_session_options so = {.n_threads = n_threads};
    if ((s = q8_session_create(m, &so, &sess, err)) != Q8_OK) {
        q8_model_free(m);
        return s;
    }
    for (int i = 0; i < m->g->n_inputs && s == Q8_OK; i++) {
        const q8_tensor *t = m->g->tensors[m->g->inputs[i]];
        s = q8_session_set_input(sess, t->name, t->dtype, t->dims, t->ndim, in_data[i], err);
    }
    if (s == Q8_OK) s = q8_session_run(sess, err);
    for (int k = 0; s == Q8_OK && k < m->g->n_outputs && k < max_out; k++) {
        const void *d;
        q8_session_output(sess, k, &infos[k], &d);
        int64_t numel;
        q8_shape_numel(infos[k].dims, infos[k].ndim, &numel);
        size_t nb = (size_t)numel * q8_dtype_size(infos[k].dtype);
        outs[k] = malloc(nb ? nb : 1);
        memcpy(outs[k], d, nb);
        infos[k].name = NULL; /* points into the model, which is freed */
    }
    q8_session_free(sess);
    q8_model_free(m);
    return s;
}

void q8t_assert_close(const float *got, const float *want, int64_t n, float rtol, float atol,
                      const char *what) {
    for (int64_t i = 0; i < n; i++) {
        if (isnan(want[i])) {
            cr_assert(isnan(got[i]), "%s[%lld]: got %g, want NaN", what, (long long)i, got[i]);
            continue;
        }
        float d = fabsf(got[i] - want[i]);
        cr_assert(d <= atol + rtol * fabsf(want[i]), "%s[%lld]: got %.9g, want %.9g", what,
                  (long long)i, got[i], want[i]);
    }
}
