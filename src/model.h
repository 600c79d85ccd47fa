/* Internal view of q8_model and q8_session. */
#ifndef Q8_MODEL_H
#define Q8_MODEL_H

#include "backend.h"
#include "graph.h"

struct q8_model {
    q8_graph *g;
    char *path;
};

struct q8_session {
    const q8_model *m;
    const q8_backend *backend;
    void *ctx;
    bool *input_set;        /* per graph input */
};

/* Build a model around an already optimized graph (takes ownership). */
q8_status q8_model_from_graph(q8_graph *g, const char *path, q8_model **out, q8_error *err);

#endif
