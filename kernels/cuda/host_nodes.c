/* Nodes the CUDA backend has no kernel for, run on the host in stream order
 * (what ONNX Runtime's CUDA provider does with CPU nodes): their device
 * inputs are copied into pinned host buffers, a host function enqueued on
 * the session's stream runs the host backend's kernel (backend.h
 * host_open), and the outputs device nodes read are copied back. The copies
 * and the host function are stream operations, so a captured CUDA graph
 * holds them like any kernel. A tensor a host node made is not copied back
 * to the host for the next host node, nor a device tensor again for a
 * second host reader: their host copies are still current. */
#include <stdlib.h>
#include <string.h>

#include "backend_cuda.h"
#include "host_nodes_cuda.h"
#include "layout.h"
#include "op.h"

typedef struct host_call {
    struct cu_host *h;
    int node;
} host_call;

struct cu_host {
    const q8_graph *g;
    const q8_backend *hb;       /* the host backend */
    void *hctx;                 /* its host_open state */
    bool emu;
    void **hptr;                /* per tensor: host data the host kernels read and write */
    /* per tensor: the host node before which it is copied device -> host
     * (the first that reads it: a device tensor never changes after it is
     * made, so later host readers use the same copy), or -1 */
    int *to_host;
    bool *to_dev;               /* per tensor: copied host -> device after a host node makes it */
    uint8_t *buf;               /* pinned: every host-side activation */
    size_t buf_bytes;
    host_call *calls;           /* per node */
    size_t weights_bytes;       /* what the host prepares made */
    size_t const_bytes;         /* the graph's constants host nodes read */
    int n_nodes;
    char ops[128];
};

void q8_cu_host_free(cu_host *h) {
    if (!h) return;
    if (h->hctx) h->hb->host_close(h->hctx);
    if (h->buf) {
        if (h->emu) q8_aligned_free(h->buf);
        else cudaFreeHost(h->buf);
    }
    free(h->hptr);
    free(h->to_host);
    free(h->to_dev);
    free(h->calls);
    free(h);
}

/* "Conv x2, PRelu x28": the host nodes' ops in graph order of first use. */
static void describe(cu_host *h, const bool *which) {
    const q8_graph *g = h->g;
    size_t len = 0;
    h->ops[0] = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!which[i]) continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = which[j] && g->nodes[j]->op == g->nodes[i]->op;
        if (seen) continue;
        int count = 0;
        for (int j = i; j < g->n_nodes; j++) count += which[j] && g->nodes[j]->op == g->nodes[i]->op;
        int w = snprintf(h->ops + len, sizeof h->ops - len, "%s%s x%d", len ? ", " : "",
                         q8_op_name(g->nodes[i]->op), count);
        if (w < 0 || (size_t)w >= sizeof h->ops - len) { /* full: mark the cut */
            memcpy(h->ops + sizeof h->ops - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

q8_status q8_cu_host_create(const q8_graph *g, const bool *which, bool emu, int n_threads,
                            cu_host **out, q8_error *err) {
    *out = NULL;
    cu_host *h = calloc(1, sizeof *h);
    size_t nt = (size_t)g->n_tensors + 1;
    if (!h) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    h->g = g;
    h->emu = emu;
    h->hb = q8_backend_host();
    h->hptr = calloc(nt, sizeof(void *));
    h->to_host = malloc(sizeof(int) * nt);
    h->to_dev = calloc(nt, sizeof(bool));
    h->calls = calloc((size_t)g->n_nodes + 1, sizeof(host_call));
    int *producer = malloc(sizeof(int) * nt);
    size_t *off = malloc(sizeof(size_t) * nt);
    q8_status s = Q8_OK;
    if (!h->hptr || !h->to_host || !h->to_dev || !h->calls || !producer || !off)
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (size_t t = 0; s == Q8_OK && t < nt; t++) {
        producer[t] = h->to_host[t] = -1;
        off[t] = SIZE_MAX;
    }
    for (int i = 0; s == Q8_OK && i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i]->n_outputs; k++)
            if (g->nodes[i]->outputs[k] >= 0) producer[g->nodes[i]->outputs[k]] = i;
    /* which activations the host side holds, and which way each is copied */
    for (int i = 0; s == Q8_OK && i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int t = n->inputs[k];
            if (t < 0 || g->tensors[t]->data) continue;
            if (which[i]) {
                off[t] = 0;
                if ((producer[t] < 0 || !which[producer[t]]) && h->to_host[t] < 0) h->to_host[t] = i;
            } else if (producer[t] >= 0 && which[producer[t]]) {
                h->to_dev[t] = true;
            }
        }
        if (which[i]) {
            h->n_nodes++;
            h->calls[i] = (host_call){h, i};
            for (int k = 0; k < n->n_outputs; k++)
                if (n->outputs[k] >= 0) off[n->outputs[k]] = 0;
        }
    }
    for (int k = 0; s == Q8_OK && k < g->n_outputs; k++) {
        int t = g->outputs[k];
        if (producer[t] >= 0 && which[producer[t]] && !g->tensors[t]->data) h->to_dev[t] = true;
    }
    for (int t = 0; s == Q8_OK && t < g->n_tensors; t++) {
        if (off[t] == SIZE_MAX) continue;
        off[t] = h->buf_bytes = q8_align_up(h->buf_bytes, Q8_ALIGN);
        h->buf_bytes += q8_tensor_nbytes(g->tensors[t]);
    }
    if (s == Q8_OK) {
        size_t bytes = h->buf_bytes ? h->buf_bytes : Q8_ALIGN;
        if (emu) {
            if (!(h->buf = q8_aligned_alloc(bytes)))
                s = q8_fail(err, Q8_ERR_NOMEM, "out of memory (%zu bytes for host nodes)", bytes);
        } else {
            void *p = NULL;
            s = Q8_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
            h->buf = p;
        }
    }
    for (int t = 0; s == Q8_OK && t < g->n_tensors; t++) {
        if (g->tensors[t]->data) h->hptr[t] = g->tensors[t]->data;
        else if (off[t] != SIZE_MAX) h->hptr[t] = h->buf + off[t];
    }
    /* the constants host kernels read stay where they are (the graph's,
     * often the mapped file): resident, so counted */
    if (s == Q8_OK && !q8_graph_const_bytes(g, which, &h->const_bytes))
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (s == Q8_OK) s = h->hb->host_open(g, which, n_threads, &h->hctx, &h->weights_bytes, err);
    if (s == Q8_OK) describe(h, which);
    free(producer);
    free(off);
    if (s != Q8_OK) {
        q8_cu_host_free(h);
        return s;
    }
    *out = h;
    return Q8_OK;
}

static void CUDART_CB run_on_host(void *arg) {
    const host_call *call = arg;
    const cu_host *h = call->h;
    h->hb->host_run(h->hctx, call->node, h->hptr);
}

q8_status q8_cu_host_run(cu_host *h, const q8cu_stream *st, int i, void *const *dev,
                         q8_error *err) {
    const q8_graph *g = h->g;
    const q8_node *n = g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
        int t = n->inputs[k];
        if (t < 0 || h->to_host[t] != i) continue;
        size_t nb = q8_tensor_nbytes(g->tensors[t]);
        if (st->emu) memcpy(h->hptr[t], dev[t], nb);
        else if (nb)
            Q8_TRY(q8_cu_launch_check(cudaMemcpyAsync(h->hptr[t], dev[t], nb,
                                                      cudaMemcpyDeviceToHost, st->stream),
                                      n, "a copy to the host", err));
    }
    if (st->emu) run_on_host(&h->calls[i]);
    else
        Q8_TRY(q8_cu_launch_check(cudaLaunchHostFunc(st->stream, run_on_host, &h->calls[i]), n,
                                  "the host kernel", err));
    for (int k = 0; k < n->n_outputs; k++) {
        int t = n->outputs[k];
        if (t < 0 || !h->to_dev[t] || !dev[t]) continue;
        size_t nb = q8_tensor_nbytes(g->tensors[t]);
        if (st->emu) memcpy(dev[t], h->hptr[t], nb);
        else if (nb)
            Q8_TRY(q8_cu_launch_check(cudaMemcpyAsync(dev[t], h->hptr[t], nb,
                                                      cudaMemcpyHostToDevice, st->stream),
                                      n, "a copy to the device", err));
    }
    return Q8_OK;
}

void q8_cu_host_stats(const cu_host *h, q8_session_stats *st) {
    st->host_nodes = h ? h->n_nodes : 0;
    st->host_bytes = h ? h->buf_bytes : 0;
    snprintf(st->host_ops, sizeof st->host_ops, "%s", h ? h->ops : "");
}

size_t q8_cu_host_weights(const cu_host *h) { return h ? h->weights_bytes + h->const_bytes : 0; }
