/* Internal view of q8_model and q8_session. */
#ifndef Q8_MODEL_H
#define Q8_MODEL_H

#include "backend.h"
#include "graph.h"
#include "meta.h"

struct q8_model {
    q8_graph *g;
    char *path;
    q8_meta meta;           /* .q8 metadata (empty for ONNX) */
    q8_mapping map;         /* .q8: the mapped file constants point into */
    bool quantized;         /* loaded from a .q8 */
    bool taken;             /* owned by a session (q8_session_create_owning) */
};

struct q8_session {
    const q8_model *m;
    const q8_backend *backend;
    void *ctx;
    bool *input_set;        /* per graph input */
    /* float16 models: per graph input / output, a float32 (inputs) or
     * float16 (outputs) buffer for the conversion at the boundary, or NULL */
    void **in_conv, **out_conv;
    q8_model *owned;        /* q8_session_create_owning: the model, freed with the session */
    size_t released_bytes;  /* the model's weights freed because the backend holds its own */
};

/* Observe every node's outputs during q8_session_run (CPU backend). */
q8_status q8_session_set_observer(q8_session *s, q8_node_observer fn, void *arg, q8_error *err);

/* Build a model around an already optimized graph (takes ownership). */
q8_status q8_model_from_graph(q8_graph *g, const char *path, q8_model **out, q8_error *err);

#endif
