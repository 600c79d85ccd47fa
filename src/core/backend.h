/* The backend interface (ggml-backend style): sessions talk to a compute
 * backend only through this table, and src/core/registry.c is the one list
 * of the backends a build has. A backend also keeps its own table of ops by
 * q8_op_id (prepare, run, scratch); the core knows nothing of them. */
#ifndef Q8_BACKEND_H
#define Q8_BACKEND_H

#include "graph.h"

/* Bump when the table below changes; the registry refuses a backend built
 * for another version. */
#define Q8_BACKEND_ABI 4

/* Called after each node runs (calibration, per-layer reports): ptr holds
 * every tensor's data pointer, valid only during the call. */
typedef void (*q8_node_observer)(void *arg, const q8_graph *g, const q8_node *n,
                                 void *const *ptr);

/* A session that owns its model (q8_session_create_owning) lets create
 * free the graph's copy of a constant as soon as the session will not read
 * it again (its kernels hold their own form of it: packed, uploaded). */
typedef struct q8_release {
    void (*fn)(void *arg, int tensor);
    void *arg;
} q8_release;

typedef struct q8_backend {
    unsigned abi;           /* Q8_BACKEND_ABI */
    const char *name;       /* "cpu", "cuda" */
    q8_device device;
    /* Runs the nodes it has no kernel for through the host backend's
     * host_open (unless q8_session_options.strict_device). */
    bool host_nodes;
    /* Can this machine run it at all? Else false, with the reason in why
     * ("no CUDA device: ..."). Asked before any node is checked. */
    bool (*available)(char *why, size_t n);
    /* Can it run node n? Else the reason, naming the node. */
    q8_status (*check_node)(const q8_graph *g, const q8_node *n, q8_error *err);
    /* Plan memory, allocate, prepare every node (weights packed or
     * uploaded). Everything it starts is finished when it returns: the
     * first run may start at once. map may point into the constants' file
     * (base NULL when there is none). rel: NULL, or how to release a
     * constant the session no longer reads (the graph's data is then gone). */
    q8_status (*create)(const q8_graph *g, const q8_session_options *o, const q8_mapping *map,
                        const q8_release *rel, void **ctx, q8_error *err);
    void (*destroy)(void *ctx);
    /* Copy nbytes of host data into the tensor's buffer. */
    q8_status (*set_input)(void *ctx, int tensor, const void *data, size_t nbytes,
                           q8_error *err);
    q8_status (*run)(void *ctx, q8_error *err);
    /* Wait for the run to finish; make outputs readable on the host. */
    q8_status (*sync)(void *ctx, q8_error *err);
    /* Host pointer to a tensor's data after sync (valid until the next run). */
    const void *(*tensor_data)(void *ctx, int tensor);
    void (*memory)(void *ctx, q8_memory_info *mi);
    void (*stats)(void *ctx, q8_session_stats *st);
    /* Optional: milliseconds spent in node i so far (profiling), or -1. */
    double (*node_ms)(void *ctx, int node);
    /* Optional: observe every node's outputs during run (fn NULL to stop). */
    q8_status (*set_observer)(void *ctx, q8_node_observer fn, void *arg, q8_error *err);
    /* Optional: compute node n once on host buffers (ptr: per tensor), for
     * constant folding. */
    q8_status (*eval_node)(const q8_graph *g, const q8_node *n, void *const *ptr,
                           q8_error *err);
    /* Optional (the host backend): the nodes of g with which[i] set, each
     * prepared once, then run one at a time on the caller's buffers (ptr:
     * per tensor) as often as asked: the nodes a device backend has no
     * kernel for. *weights_bytes: what the prepares made. */
    q8_status (*host_open)(const q8_graph *g, const bool *which, int n_threads, void **ctx,
                           size_t *weights_bytes, q8_error *err);
    void (*host_run)(void *ctx, int node, void *const *ptr);
    void (*host_close)(void *ctx);
} q8_backend;

/* May a device backend hand node n to the host backend (host_open) when it
 * has no kernel for it? Not control flow: an If's branches are scopes of
 * the whole plan, not one node's work. */
static inline bool q8_host_node_ok(const q8_node *n) {
    return n->op != Q8_OP_NONE && n->op != Q8_OP_IF;
}

/* The backend for a device, or NULL when this build has none. */
const q8_backend *q8_backend_for(q8_device d);
/* The backend that computes on host memory (folding, references). */
const q8_backend *q8_backend_host(void);
/* Every backend of this build: i in [0, count). */
int q8_backend_count(void);
const q8_backend *q8_backend_at(int i);

#endif
