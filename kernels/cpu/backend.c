/* The CPU backend: the planned arena in host memory, nodes run in order on
 * a thread pool. No allocation happens in run. */
#include <string.h>
#include <time.h>

#include "adapt.h"
#include "backend.h"
#include "control.h"
#include "cpu_op.h"
#include "host_nodes.h"
#include "layout.h"
#include "ops/if.h"
#include "planner.h"

typedef struct cpu_ctx {
    const q8_graph *g;
    q8_plan plan;
    uint8_t *arena;
    void **ptr;
    q8_pool *pool;
    int n_threads;
    size_t weights_bytes;
    void **prep;                /* per node: what the op's prepare made, or NULL */
    q8_node_observer observer;
    void *observer_arg;
    double *node_ms;            /* profiling, or NULL */
    bool adaptive;              /* runs on the pool or the caller (adapt.h) */
    q8_adapt adapt;
    q8_scopes scopes;           /* If branches (control.h); n = 0 without any */
    int8_t *taken;              /* per scope during a run: -1 not known yet, 0, 1 */
} cpu_ctx;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static bool cpu_available(char *why, size_t n) {
    snprintf(why, n, "the CPU");
    return true;
}

/* Every op has a CPU entry: a node fails here only if it was never
 * resolved (a bug in the caller). */
static q8_status cpu_check_node(const q8_graph *g, const q8_node *n, q8_error *err) {
    if (n->op == Q8_OP_NONE)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "not supported by the cpu backend");
    Q8_ASSERT(q8_cpu_ops[n->op]->run || (q8_op_flags(n->op) & Q8_OPF_VIEW));
    return Q8_OK;
}

static size_t cpu_scratch(const q8_graph *g, int i, void *c) {
    const cpu_ctx *x = c;
    const q8_node *n = g->nodes[i];
    const q8_cpu_op *op = q8_cpu_ops[n->op];
    return op->scratch ? op->scratch(g, n, x->prep[i], x->n_threads) : 0;
}

static void cpu_destroy(void *p) {
    cpu_ctx *c = p;
    if (!c) return;
    q8_pool_free(c->pool);
    for (int i = 0; c->prep && i < c->g->n_nodes; i++) q8_aligned_free(c->prep[i]);
    free(c->prep);
    q8_plan_free(&c->plan);
    q8_aligned_free(c->arena);
    free(c->ptr);
    free(c->node_ms);
    q8_scopes_free(&c->scopes);
    free(c->taken);
    free(c);
}

/* Per constant: how many node inputs read it and whether every one of
 * them reads only its packed copy (after all prepares). */
typedef struct const_use {
    int left;               /* node inputs not prepared yet */
    bool packed_only;
} const_use;

/* After node i's prepare: a constant whose last reader was just prepared,
 * and that every reader packed, is released. */
static void release_packed(const q8_graph *g, int i, void *prep, const q8_release *rel,
                           const_use *use) {
    const q8_node *n = g->nodes[i];
    const q8_cpu_op *op = q8_cpu_ops[n->op];
    for (int j = 0; j < n->n_inputs; j++) {
        int t = n->inputs[j];
        if (t < 0 || !g->tensors[t]->data) continue;
        use[t].packed_only &= op->packed_input && prep && op->packed_input(prep, j);
        if (--use[t].left == 0 && use[t].packed_only) rel->fn(rel->arg, t);
    }
}

static q8_status cpu_create(const q8_graph *g, const q8_session_options *o,
                            const q8_mapping *map, const q8_release *rel, void **out,
                            q8_error *err) {
    (void)map; /* constants are used where they are, mapped or not */
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    c->g = g;
    c->n_threads = o->n_threads > 0 ? o->n_threads : q8_cpu_count();
    q8_status s = Q8_OK;
    const_use *use = rel ? calloc((size_t)g->n_tensors + 1, sizeof *use) : NULL;
    if (!(c->prep = calloc((size_t)g->n_nodes + 1, sizeof(void *))) || (rel && !use))
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; use && i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_inputs; j++) {
            int t = g->nodes[i]->inputs[j];
            if (t < 0) continue;
            use[t].left++;
            use[t].packed_only = true;
        }
    /* Each op's data for this backend (packed weights), once. Weights count
     * the constants nodes read plus what prepare made of them. */
    const q8_prep_env env = {.releases = rel != NULL};
    for (int i = 0; s == Q8_OK && i < g->n_nodes; i++) {
        const q8_cpu_op *op = q8_cpu_ops[g->nodes[i]->op];
        size_t bytes = 0;
        if (op->prepare) s = op->prepare(g, g->nodes[i], &env, &c->prep[i], &bytes, err);
        c->weights_bytes += bytes;
        if (s == Q8_OK && use) release_packed(g, i, c->prep[i], rel, use);
    }
    free(use);
    if (s == Q8_OK) s = q8_plan_build(g, cpu_scratch, c, &c->plan, err);
    if (s == Q8_OK) {
        c->arena = q8_aligned_alloc(c->plan.arena_bytes);
        c->ptr = calloc((size_t)g->n_tensors + 1, sizeof(void *));
        if (!c->arena || !c->ptr)
            s = q8_fail(err, Q8_ERR_NOMEM, "cannot allocate the %zu-byte activation arena",
                        c->plan.arena_bytes);
    }
    if (s == Q8_OK && o->profile && !(c->node_ms = calloc((size_t)g->n_nodes + 1, sizeof(double))))
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (s == Q8_OK && q8_graph_has_control(g)) {
        s = q8_scopes_build(g, &c->scopes, err);
        if (s == Q8_OK && !(c->taken = malloc((size_t)c->scopes.n)))
            s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    if (s == Q8_OK && c->n_threads > 1 && !(c->pool = q8_pool_create(c->n_threads)))
        s = q8_fail(err, Q8_ERR_NOMEM, "cannot start %d threads", c->n_threads);
    c->adaptive = c->pool && !o->fixed_threads;
    q8_adapt_init(&c->adapt);
    if (s != Q8_OK) {
        cpu_destroy(c);
        return s;
    }
    /* Constants are used in place (no copy); activations point into the arena. */
    size_t const_bytes;
    if (!q8_graph_const_bytes(g, NULL, &const_bytes)) {
        cpu_destroy(c);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    c->weights_bytes += const_bytes;
    for (int t = 0; t < g->n_tensors; t++) {
        const q8_tensor *tt = g->tensors[t];
        if (tt->data) c->ptr[t] = tt->data;
        else if (c->plan.offset[t] != Q8_PLAN_NONE) c->ptr[t] = c->arena + c->plan.offset[t];
    }
    *out = c;
    return Q8_OK;
}

static q8_status cpu_set_input(void *p, int t, const void *data, size_t nbytes, q8_error *err) {
    cpu_ctx *c = p;
    (void)err;
    if (c->ptr[t] && nbytes) memcpy(c->ptr[t], data, nbytes);
    return Q8_OK;
}

/* Does scope s run in this run? Asked first at its first node, when the
 * conditions of its Ifs are computed (control.h), then remembered. */
static bool scope_runs(cpu_ctx *c, int s) {
    if (s == 0) return true;
    if (c->taken[s] < 0) {
        const q8_node *f = c->g->nodes[c->scopes.owner[s]];
        const q8_tensor *cond = q8_in(c->g, f, 0);
        bool v = scope_runs(c, c->scopes.parent[s]) &&
                 q8_cond_value(c->ptr[f->inputs[0]], cond->dtype) == c->scopes.then_side[s];
        c->taken[s] = v;
    }
    return c->taken[s];
}

static q8_status cpu_run(void *p, q8_error *err) {
    cpu_ctx *c = p;
    const q8_graph *g = c->g;
    if (c->taken) memset(c->taken, -1, (size_t)c->scopes.n);
    q8_adapt_run kind = c->adaptive ? q8_adapt_begin(&c->adapt) : Q8_ADAPT_DECIDED;
    q8_pool *pool = c->adaptive && q8_adapt_run_serial(&c->adapt) ? NULL : c->pool;
    bool timed = kind == Q8_ADAPT_TIME_POOL || kind == Q8_ADAPT_TIME_SERIAL ||
                 kind == Q8_ADAPT_PRIME_POOL;
    double start = timed ? now_ms() : 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->scope && !scope_runs(c, n->scope)) continue;
        if (n->op == Q8_OP_IF) { /* a side dropped at load (ops/if.h) */
            const q8_if_params *ip = n->params;
            bool then = q8_cond_value(c->ptr[n->inputs[0]], q8_in(g, n, 0)->dtype);
            const char *why = ip->fails[then ? 0 : 1];
            if (why)
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "this run's condition picks its %s "
                                    "branch, which cannot run at this model's shapes: %s",
                                    then ? "then" : "else", why);
        }
        if (q8_op_flags(n->op) & Q8_OPF_VIEW) {
            if (c->observer) c->observer(c->observer_arg, g, n, c->ptr);
            continue;
        }
        q8_exec x = {.g = g, .ptr = c->ptr, .pool = pool,
                     .scratch = c->plan.scratch_bytes[i] ? c->arena + c->plan.scratch_offset[i] : NULL,
                     .prep = c->prep[i]};
        double t0 = c->node_ms ? now_ms() : 0;
        q8_cpu_ops[n->op]->run(&x, n);
        if (c->node_ms) c->node_ms[i] += now_ms() - t0;
        if (c->observer) c->observer(c->observer_arg, g, n, c->ptr);
    }
    if (c->adaptive) q8_adapt_end(&c->adapt, timed ? now_ms() - start : 0);
    return Q8_OK;
}

static double cpu_node_ms(void *p, int i) {
    const cpu_ctx *c = p;
    return c->node_ms ? c->node_ms[i] : -1;
}

static q8_status cpu_set_observer(void *p, q8_node_observer fn, void *arg, q8_error *err) {
    cpu_ctx *c = p;
    (void)err;
    c->observer = fn;
    c->observer_arg = arg;
    return Q8_OK;
}

static void cpu_stats(void *p, q8_session_stats *st) {
    const cpu_ctx *c = p;
    st->device_ms = -1;
    st->single_thread = c->adaptive && c->adapt.serial;
}

static q8_status cpu_sync(void *p, q8_error *err) {
    (void)p;
    (void)err;
    return Q8_OK;
}

static const void *cpu_tensor_data(void *p, int t) { return ((cpu_ctx *)p)->ptr[t]; }


static void cpu_memory(void *p, q8_memory_info *mi) {
    cpu_ctx *c = p;
    mi->weights_bytes = c->weights_bytes;
    mi->arena_bytes = c->plan.arena_bytes;
}

const q8_backend q8_backend_cpu = {
    .abi = Q8_BACKEND_ABI,
    .name = "cpu",
    .device = Q8_DEVICE_CPU,
    .available = cpu_available,
    .check_node = cpu_check_node,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .set_input = cpu_set_input,
    .run = cpu_run,
    .sync = cpu_sync,
    .tensor_data = cpu_tensor_data,
    .memory = cpu_memory,
    .stats = cpu_stats,
    .set_observer = cpu_set_observer,
    .eval_node = q8_cpu_run_once,
    .node_ms = cpu_node_ms,
    .host_open = q8_cpu_host_open,
    .host_run = q8_cpu_host_run,
    .host_close = q8_cpu_host_close,
};
