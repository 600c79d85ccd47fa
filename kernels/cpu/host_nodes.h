/* The CPU backend's host_open / host_run / host_close (backend.h). */
#ifndef Q8_CPU_HOST_NODES_H
#define Q8_CPU_HOST_NODES_H

#include "backend.h"

q8_status q8_cpu_host_open(const q8_graph *g, const bool *which, int n_threads, void **ctx,
                           size_t *weights_bytes, q8_error *err);
void q8_cpu_host_run(void *ctx, int node, void *const *ptr);
void q8_cpu_host_close(void *ctx);
/* Node n once, one thread, on the caller's buffers (constant folding). */
q8_status q8_cpu_run_once(const q8_graph *g, const q8_node *n, void *const *ptr, q8_error *err);

#endif
