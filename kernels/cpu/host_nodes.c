/* Nodes of a graph run singly on a caller's buffers (backend.h host_open):
 * the ops a device backend has no kernel for. Each node is prepared once
 * (packed weights, as in a CPU session); one scratch buffer serves them
 * all, since the caller runs them one at a time. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu_op.h"
#include "host_nodes.h"

typedef struct host_nodes {
    const q8_graph *g;
    void **prep;        /* per node, or NULL */
    void *scratch;
    q8_pool *pool;      /* NULL: the calling thread alone */
} host_nodes;

/* Node n's prepared data and the scratch it needs on n_threads threads. */
static q8_status prepare(const q8_graph *g, const q8_node *n, int n_threads, void **prep,
                         size_t *bytes, size_t *scratch, q8_error *err) {
    const q8_cpu_op *op = q8_cpu_ops[n->op];
    *scratch = 0;
    /* host nodes never release the model's constants */
    const q8_prep_env env = {.releases = false};
    q8_status s = op->prepare ? op->prepare(g, n, &env, prep, bytes, err) : Q8_OK;
    if (s == Q8_OK && op->scratch) *scratch = op->scratch(g, n, *prep, n_threads);
    return s;
}

static void run(const q8_graph *g, const q8_node *n, void *const *ptr, q8_pool *pool,
                void *scratch, const void *prep) {
    if (q8_op_flags(n->op) & Q8_OPF_VIEW) { /* no alias on the caller's buffers: a copy */
        memcpy(ptr[n->outputs[0]], ptr[n->inputs[0]], q8_tensor_nbytes(q8_in(g, n, 0)));
        return;
    }
    q8_exec x = {.g = g, .ptr = ptr, .pool = pool, .scratch = scratch, .prep = prep};
    q8_cpu_ops[n->op]->run(&x, n);
}

q8_status q8_cpu_run_once(const q8_graph *g, const q8_node *n, void *const *ptr, q8_error *err) {
    void *prep = NULL, *scratch = NULL;
    size_t bytes = 0, sb = 0;
    q8_status s = prepare(g, n, 1, &prep, &bytes, &sb, err);
    if (s == Q8_OK && sb && !(scratch = q8_aligned_alloc(sb)))
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory evaluating node '%s'", n->name);
    if (s == Q8_OK) run(g, n, ptr, NULL, scratch, prep);
    q8_aligned_free(scratch);
    q8_aligned_free(prep);
    return s;
}

void q8_cpu_host_close(void *p) {
    host_nodes *h = p;
    if (!h) return;
    for (int i = 0; h->prep && i < h->g->n_nodes; i++) q8_aligned_free(h->prep[i]);
    free(h->prep);
    q8_aligned_free(h->scratch);
    q8_pool_free(h->pool);
    free(h);
}

q8_status q8_cpu_host_open(const q8_graph *g, const bool *which, int n_threads, void **out,
                           size_t *weights_bytes, q8_error *err) {
    *out = NULL;
    *weights_bytes = 0;
    host_nodes *h = calloc(1, sizeof *h);
    if (!h || !(h->prep = calloc((size_t)g->n_nodes + 1, sizeof(void *)))) {
        free(h);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    h->g = g;
    q8_status s = Q8_OK;
    if (n_threads <= 0) n_threads = q8_cpu_count();
    if (n_threads > 1 && !(h->pool = q8_pool_create(n_threads)))
        s = q8_fail(err, Q8_ERR_NOMEM, "cannot start %d threads", n_threads);
    size_t scratch = 0;
    for (int i = 0; s == Q8_OK && i < g->n_nodes; i++) {
        size_t bytes = 0, sb = 0;
        if (which[i]) s = prepare(g, g->nodes[i], q8_pool_size(h->pool), &h->prep[i], &bytes, &sb, err);
        *weights_bytes += bytes;
        if (sb > scratch) scratch = sb;
    }
    if (s == Q8_OK && scratch && !(h->scratch = q8_aligned_alloc(scratch)))
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory (%zu bytes of scratch)", scratch);
    if (s != Q8_OK) {
        q8_cpu_host_close(h);
        return s;
    }
    *out = h;
    return Q8_OK;
}

void q8_cpu_host_run(void *p, int i, void *const *ptr) {
    host_nodes *h = p;
    run(h->g, h->g->nodes[i], ptr, h->pool, h->scratch, h->prep[i]);
}
