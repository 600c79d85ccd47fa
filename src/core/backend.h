/* Backend interface (ggml-backend style): the session talks to a compute
 * backend only through this table. The CPU backend is always built; CUDA
 * registers when compiled in. */
#ifndef Q8_BACKEND_H
#define Q8_BACKEND_H

#include "graph.h"

/* Called after each node runs (calibration, per-layer reports): ptr holds
 * every tensor's data pointer, valid only during the call. */
typedef void (*q8_node_observer)(void *arg, const q8_graph *g, const q8_node *n,
                                 void *const *ptr);

typedef struct q8_backend {
    const char *name;
    /* Can this backend run the node? (checked for every node at create) */
    bool (*supports_op)(const q8_graph *g, const q8_node *n);
    /* Plan memory, allocate the arena, upload weights. */
    q8_status (*create)(const q8_graph *g, const q8_session_options *opts, void **ctx,
                        q8_error *err);
    void (*destroy)(void *ctx);
    /* Copy nbytes of host data into the tensor's buffer. */
    q8_status (*set_input)(void *ctx, int tensor, const void *data, size_t nbytes,
                           q8_error *err);
    q8_status (*run)(void *ctx, q8_error *err);
    /* Wait for the run to finish; make outputs readable on the host. */
    q8_status (*sync)(void *ctx, q8_error *err);
    /* Host pointer to a tensor's data after sync (valid until next run). */
    const void *(*tensor_data)(void *ctx, int tensor);
    void (*memory)(void *ctx, q8_memory_info *mi);
    /* Optional: milliseconds spent in node i so far (profiling), or -1. */
    double (*node_ms)(void *ctx, int node);
    /* Optional: observe every node's outputs during run (NULL to stop). */
    void (*set_observer)(void *ctx, q8_node_observer fn, void *arg);
    /* Optional: like supports_op, with the reason in err ("node 'x' (Op): ...");
     * the session uses it instead of supports_op when present. */
    q8_status (*check_op)(const q8_graph *g, const q8_node *n, q8_error *err);
    /* Optional: create, also told the read-only file mapping (.q8) the
     * constants may point into (map_base NULL: none), so that an integrated
     * GPU can read them in place. The session uses it instead of create. */
    q8_status (*create_mapped)(const q8_graph *g, const q8_session_options *opts,
                               const void *map_base, size_t map_size, void **ctx,
                               q8_error *err);
} q8_backend;

extern const q8_backend q8_backend_cpu;
#ifdef Q8_HAVE_CUDA
extern const q8_backend q8_backend_cuda;
#endif

#endif
