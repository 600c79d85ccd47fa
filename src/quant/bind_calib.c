/* Inputs bound from calibration (bind_calib.h). */
#include "bind_calib.h"

#include <string.h>

#include "control.h"
#include "onnx_import.h"
#include "passes.h"

void q8_binds_free(q8_binds *b) {
    for (int i = 0; i < b->n; i++) q8_tensor_free(b->owned[i]);
    memset(b, 0, sizeof *b);
}

static bool integer_like(q8_dtype t) {
    return t == Q8_I64 || t == Q8_I32 || t == Q8_I8 || t == Q8_U8 || t == Q8_BOOL ||
           t == Q8_I16 || t == Q8_U16 || t == Q8_U32 || t == Q8_U64;
}

/* Sample input k's value when every sample has the same one (and it is an
 * integer or bool tensor); else NULL. */
static q8_tensor *constant_input(const q8_sample_set *s, int k, q8_error *err, q8_status *st) {
    q8_tensor *first = NULL;
    *st = q8_sample_load(s, 0, k, &first, err);
    if (*st != Q8_OK) return NULL;
    bool same = integer_like(first->dtype);
    for (int i = 1; same && i < s->n_samples; i++) {
        q8_tensor *t = NULL;
        *st = q8_sample_load(s, i, k, &t, err);
        if (*st != Q8_OK) break;
        same = t->dtype == first->dtype && t->ndim == first->ndim &&
               memcmp(t->dims, first->dims, sizeof t->dims) == 0 &&
               memcmp(t->data, first->data, q8_tensor_nbytes(t)) == 0;
        q8_tensor_free(t);
    }
    if (*st != Q8_OK || !same) {
        q8_tensor_free(first);
        return NULL;
    }
    return first;
}

/* Does the condition of some q8.If depend on tensor t? */
static bool decides_if(const q8_graph *g, int t) {
    bool *mark = calloc((size_t)g->n_tensors + 1, sizeof(bool));
    if (!mark) return true; /* out of memory: keep it bound */
    for (int i = 0; i < g->n_nodes; i++)
        if (q8_node_is_if(g->nodes[i]) && g->nodes[i]->inputs[0] >= 0)
            mark[g->nodes[i]->inputs[0]] = true;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const q8_node *n = g->nodes[i];
        bool out = false;
        for (int k = 0; k < n->n_outputs; k++) out |= n->outputs[k] >= 0 && mark[n->outputs[k]];
        for (int k = 0; out && k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) mark[n->inputs[k]] = true;
    }
    bool r = t >= 0 && mark[t];
    free(mark);
    return r;
}

/* Import the model with the binds of b but the one at skip: does it build,
 * and is the skipped input free of every If condition? */
static bool can_stay_input(const char *path, const q8_load_options *lo, const q8_binds *b,
                           int skip) {
    q8_input_value v[Q8_MAX_BINDS];
    int n = 0;
    for (int i = 0; i < b->n; i++)
        if (i != skip) v[n++] = b->v[i];
    q8_load_options o = *lo;
    o.input_values = v;
    o.n_input_values = n;
    q8_graph *g = NULL;
    q8_error e = {0};
    bool ok = q8_onnx_load(path, &g, &e) == Q8_OK && q8_passes_run_for_quantize(g, &o, &e) == Q8_OK;
    if (ok) ok = !decides_if(g, q8_graph_find(g, b->v[skip].name));
    q8_graph_free(g);
    return ok;
}

q8_status q8_binds_from_samples(const char *onnx_path, const q8_sample_set *s,
                                const q8_load_options *lo, q8_binds *b, q8_error *err) {
    int first_auto = b->n;
    for (int k = 0; s->names && k < s->n_inputs && b->n < Q8_MAX_BINDS; k++) {
        bool given = false;
        for (int i = 0; i < b->n; i++) given |= strcmp(b->v[i].name, s->names[k]) == 0;
        if (given) continue;
        q8_status st;
        q8_tensor *t = constant_input(s, k, err, &st);
        if (st != Q8_OK) return st;
        if (!t) continue;
        b->owned[b->n] = t;
        b->from_samples[b->n] = true;
        b->v[b->n] = (q8_input_value){.name = s->names[k], .dtype = t->dtype, .ndim = t->ndim,
                                      .data = t->data};
        memcpy(b->v[b->n].dims, t->dims, sizeof t->dims);
        b->n++;
    }
    /* Unbind each candidate the model does not need bound. */
    for (int i = b->n - 1; i >= first_auto; i--) {
        if (!can_stay_input(onnx_path, lo, b, i)) continue;
        q8_tensor_free(b->owned[i]);
        for (int j = i; j + 1 < b->n; j++) {
            b->v[j] = b->v[j + 1];
            b->owned[j] = b->owned[j + 1];
            b->from_samples[j] = b->from_samples[j + 1];
        }
        b->n--;
    }
    return Q8_OK;
}

q8_status q8_binds_for_quantize(const char *onnx_path, const q8_sample_set *s,
                                const q8_input_shape *shapes, const q8_input_value *given,
                                int n_given, q8_binds *b, q8_error *err) {
    memset(b, 0, sizeof *b);
    if (n_given > Q8_MAX_BINDS)
        return q8_fail(err, Q8_ERR_ARG, "at most %d inputs can be bound", Q8_MAX_BINDS);
    for (int k = 0; k < n_given; k++) b->v[b->n++] = given[k];
    q8_load_options lo = {.input_shapes = shapes, .n_input_shapes = s->n_inputs};
    return q8_binds_from_samples(onnx_path, s, &lo, b, err);
}
