/* The CUDA backend's host nodes (kernels/cuda/host_nodes.c): nodes with no
 * CUDA kernel, run by the host backend in the session's stream order. */
#ifndef Q8_HOST_NODES_CUDA_H
#define Q8_HOST_NODES_CUDA_H

#include "backend_cuda.h"

typedef struct cu_host cu_host;

/* The host side of the nodes with which[i] set: pinned buffers for the
 * activations they read and write, each prepared once by the host backend
 * (n_threads threads). emu: host memory stands in for device memory. */
q8_status q8_cu_host_create(const q8_graph *g, const bool *which, bool emu, int n_threads,
                            cu_host **out, q8_error *err);
void q8_cu_host_free(cu_host *h);
/* Enqueue node i: inputs to the host, the host kernel, outputs back (dev:
 * the device pointer of every tensor). */
q8_status q8_cu_host_run(cu_host *h, const q8cu_stream *st, int i, void *const *dev,
                         q8_error *err);
void q8_cu_host_stats(const cu_host *h, q8_session_stats *st);
/* Weight bytes the host side holds: the constants its nodes read and what
 * the host prepares made of them (packed copies). */
size_t q8_cu_host_weights(const cu_host *h);

#endif
