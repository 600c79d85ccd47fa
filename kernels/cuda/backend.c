/* The CUDA backend: one device allocation for the constants the kernels
 * read, one arena (cudaMalloc'd once) for activations, per-node scratch and
 * the cuBLASLt workspaces, sized by the planner; no allocation while
 * running. The first run executes eagerly (kernels load lazily, each launch
 * is checked and named after its node) and is then captured into a CUDA
 * graph that later runs replay. Inputs go host -> pinned staging -> arena
 * before the launch, outputs arena -> the same staging after it.
 *
 * On an integrated GPU (Jetson) the constants of a .q8 model are read in
 * place from the mapped file (cudaHostRegister, read-only) instead of being
 * copied, when the driver allows it.
 *
 * Q8_CUDA_EMULATE=1 runs the whole backend on the host: "device" memory is
 * host memory, every kernel's element function runs in a host loop and the
 * INT8 GEMM is a reference loop with cuBLASLt's semantics. It exists so that
 * the planning, pointers and kernels can be tested against the CPU backend
 * on a machine without a GPU (tests/test_cuda.c). Q8_CUDA_GRAPH=0 turns the
 * graph off (every run eager); Q8_CUDA_VERBOSE=1 prints decisions to
 * stderr. */
#include "backend_cuda.h"
#include "host_nodes_cuda.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "layout.h"
#include "op.h"

/* ---- errors ---------------------------------------------------------------- */

q8_status q8_cuda_check(cudaError_t e, const char *stmt, const char *file, int line,
                        q8_error *err) {
    if (e == cudaSuccess) return Q8_OK;
    return q8_fail(err, Q8_ERR_BACKEND, "CUDA error %s (%s) in %s at %s:%d", cudaGetErrorName(e),
                   cudaGetErrorString(e), stmt, file, line);
}

const char *q8_cublas_status_name(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "an unknown cuBLAS status";
    }
}

q8_status q8_cublas_check(cublasStatus_t s, const char *stmt, const char *file, int line,
                          q8_error *err) {
    if (s == CUBLAS_STATUS_SUCCESS) return Q8_OK;
    return q8_fail(err, Q8_ERR_BACKEND, "cuBLASLt error %s (%d) in %s at %s:%d",
                   q8_cublas_status_name(s), (int)s, stmt, file, line);
}

q8_status q8_cu_launch_check(cudaError_t e, const q8_node *n, const char *what, q8_error *err) {
    if (e == cudaSuccess) return Q8_OK;
    return q8_node_fail(err, Q8_ERR_BACKEND, n, "CUDA error %s (%s) launching %s",
                        cudaGetErrorName(e), cudaGetErrorString(e), what);
}

q8_status q8_cu_unsupported(q8_error *err, const q8_node *n, const char *fmt, ...) {
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "the cuda backend does not support %s", msg);
}

static bool env_flag(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

bool q8_cuda_device_available(char *why, size_t n) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(why, n, "no CUDA device: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return false;
    }
    if (count < 1) {
        snprintf(why, n, "no CUDA device: cudaGetDeviceCount found none");
        return false;
    }
    if (!q8_cu_lt_load(why, n)) return false; /* every INT8 GEMM needs it */
    snprintf(why, n, "%d CUDA device(s)", count);
    return true;
}

/* ---- the session ----------------------------------------------------------- */

#define NO_OFF SIZE_MAX

/* One copy into the weights buffer, queued while a node is planned and made
 * once it is: from the staging buffer (constants a plan computes or
 * unpacks) or straight from where a plain weight lies (the mapped file). */
typedef struct {
    size_t dev_off;
    const void *src;
    size_t bytes;
    /* else NULL: the rows of this int8 weight [n][k], stored in any layout,
     * written plain as [n_pad][kp] with zeros around them */
    const q8_tensor *rows;
    int64_t n, k, n_pad, kp;
} cu_upload;

/* Weights made plain or padded go to the device this many bytes of whole
 * rows at a time (at least one row), through one small buffer. */
#define ROWS_CHUNK ((size_t)64 << 10)

struct cu_ctx {
    const q8_graph *g;
    bool emu, verbose, use_graph, profile;
    q8cu_stream st;
    cublasLtHandle_t lt;
    int device;
    q8_plan plan;
    bool have_plan;
    uint8_t *arena;             /* device (host in emulation) */
    uint8_t *weights;           /* the constants the kernels read */
    size_t weights_size;        /* bytes reserved in it (running, while planning) */
    /* Fill pass: the host buffer one node's computed constants are made in
     * before they go to the device. It is reused node after node, so the
     * host holds at most the largest node's, never a copy of all weights. */
    uint8_t *weights_host;
    size_t host_used, host_max; /* bytes of it: this node's, the largest node's */
    cu_upload *uploads;         /* this node's copies, queued */
    int n_uploads, max_uploads;
    int8_t *chunk;              /* rows of a weight made plain or padded, on their way */
    size_t chunk_max;
    size_t *const_off;          /* per tensor: offset in weights, or NO_OFF */
    /* integrated GPU: the .q8 mapping registered with CUDA */
    const uint8_t *map_base;
    size_t map_size;
    uint8_t *map_dev;
    bool map_registered;
    size_t mapped_bytes;
    bool *mapped_seen;          /* per tensor, counted in mapped_bytes */
    void **ptr;                 /* per tensor: device pointer (activations) */
    cu_node *nodes;
    /* inputs and outputs: one pinned staging buffer */
    uint8_t *staging;
    size_t staging_size;
    size_t *stage_off;          /* per tensor, or NO_OFF */
    /* the CUDA graph of a run */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    int runs;
    /* profiling */
    cudaEvent_t run_ev[2];      /* around each run's kernels */
    double run_ms;              /* the last run's, -1 before one */
    cudaEvent_t *ev;            /* 2 per node */
    double *node_ms;
    /* device memory */
    size_t free_before, delta, device_bytes;
    int igemm_fallbacks;         /* INT8 GEMMs on the plain kernel (no cuBLASLt algorithm) */
    /* nodes with no CUDA kernel, run on the host (host_nodes.c) */
    bool allow_host;             /* not q8_session_options.strict_device */
    bool *on_host;               /* per node */
    cu_host *host;
    int n_threads;
};

const q8cu_stream *q8_cu_stream(const cu_ctx *c) { return &c->st; }
void q8_cu_note_gemm_fallback(cu_ctx *c) { c->igemm_fallbacks++; }

size_t q8_cu_lt_workspace(void) {
    const char *v = getenv("Q8_CUDA_WORKSPACE_MIB");
    char *end;
    long mib = v && *v ? strtol(v, &end, 10) : -1;
    if (mib < 0 || mib > 1024 || (v && *end)) return Q8_CU_LT_WORKSPACE;
    return (size_t)mib << 20;
}
cublasLtHandle_t q8_cu_lt(const cu_ctx *c) { return c->lt; }

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- op lookup --------------------------------------------------------------- */

static void node_clear(cu_node *nd) {
    if (nd->params && nd->free_params) nd->free_params(nd->params);
    free(nd->params);
    memset(nd, 0, sizeof *nd);
}

static q8_status plan_node(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    /* the run is one recorded launch sequence (a CUDA graph): no branches */
    if (n->op == Q8_OP_IF)
        return q8_cu_unsupported(err, n, "an If with a condition computed at run time (run "
                                 "it on the cpu backend, or bind the input it depends on)");
    cu_plan_fn plan = n->op != Q8_OP_NONE ? q8_cu_plans[n->op] : NULL;
    if (!plan) return q8_cu_unsupported(err, n, "this op");
    return plan(pr, g, n, nd, err);
}

static q8_status cuda_check_node(const q8_graph *g, const q8_node *n, q8_error *err) {
    cu_prep pr = {0};
    cu_node nd = {0};
    q8_status s = plan_node(&pr, g, n, &nd, err);
    node_clear(&nd);
    return s;
}

static q8_status run_host_node(cu_ctx *c, const q8_node *n, void *params, q8_error *err) {
    (void)n;
    return q8_cu_host_run(c->host, &c->st, *(const int *)params, c->ptr, err);
}

/* Plan node i in a session: on the device, or (no kernel for it, and the
 * session allows it) on the host, decided in the measuring pass. */
static q8_status plan_session_node(cu_prep *pr, cu_ctx *c, int i, cu_node *nd, q8_error *err) {
    const q8_node *n = c->g->nodes[i];
    if (!pr->fill && c->allow_host && q8_host_node_ok(n)) {
        q8_error why = {0};
        c->on_host[i] = cuda_check_node(c->g, n, &why) == Q8_ERR_UNSUPPORTED;
        if (c->on_host[i] && c->verbose) fprintf(stderr, "q8 cuda: on the host: %s\n", why.msg);
    }
    if (!c->on_host[i]) return plan_node(pr, c->g, n, nd, err);
    int *idx = q8_cu_params(nd, sizeof(int));
    if (!idx) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *idx = i;
    nd->run = run_host_node;
    return Q8_OK;
}

/* Emulation needs no device. */
static bool cuda_available(char *why, size_t n) {
    if (env_flag("Q8_CUDA_EMULATE")) {
        snprintf(why, n, "CUDA in host emulation (Q8_CUDA_EMULATE)");
        return true;
    }
    return q8_cuda_device_available(why, n);
}

/* ---- helpers for the plan functions ----------------------------------------- */

void *q8_cu_params(cu_node *nd, size_t bytes) {
    Q8_ASSERT(!nd->params);
    nd->params = calloc(1, bytes ? bytes : 1);
    return nd->params;
}

/* Offsets count from the node's first Q8_CU_ALIGN-aligned byte: the planner
 * aligns buffers to Q8_ALIGN (64) only, and with 64-byte aligned scratch
 * cuBLASLt returned CUBLAS_STATUS_INVALID_VALUE at the matmul for small
 * GEMMs on an H200 (its documentation asks a 256-byte aligned workspace),
 * so every node reserves Q8_CU_ALIGN bytes more (plan_pass) and its
 * pointers start at the aligned address. */
void *q8_cu_scratch(cu_prep *pr, size_t bytes) {
    size_t off = q8_align_up(pr->scratch, Q8_CU_ALIGN);
    pr->scratch = off + q8_align_up(bytes, Q8_CU_ALIGN);
    if (!pr->fill) return NULL;
    uint8_t *base = pr->scratch_dev + (-(uintptr_t)pr->scratch_dev & (Q8_CU_ALIGN - 1));
    return base + off;
}

static size_t reserve_const(cu_ctx *c, size_t bytes) {
    size_t off = q8_align_up(c->weights_size, Q8_CU_ALIGN);
    c->weights_size = off + (bytes ? bytes : 1);
    return off;
}

/* Room for bytes in this node's part of the staging buffer (counted in the
 * first pass, where there is no buffer yet). */
static uint8_t *reserve_host(cu_ctx *c, size_t bytes, bool fill) {
    size_t off = q8_align_up(c->host_used, Q8_CU_ALIGN);
    c->host_used = off + q8_align_up(bytes ? bytes : 1, Q8_CU_ALIGN);
    return fill ? c->weights_host + off : NULL;
}

/* Counted in the first pass, stored in the second (sized by the first). */
static void queue(cu_ctx *c, cu_upload u) {
    if (c->uploads) {
        Q8_ASSERT(c->n_uploads < c->max_uploads);
        c->uploads[c->n_uploads] = u;
    }
    c->n_uploads++;
}

static void queue_upload(cu_ctx *c, size_t dev_off, const void *src, size_t bytes) {
    queue(c, (cu_upload){.dev_off = dev_off, .src = src, .bytes = bytes});
}

/* Rows of w, [n][k] in its stored layout, as [n_pad][kp] at dev_off. */
static void queue_rows(cu_ctx *c, size_t dev_off, const q8_tensor *w, int64_t n, int64_t k,
                       int64_t n_pad, int64_t kp) {
    size_t total = (size_t)(n_pad * kp), ch = total < ROWS_CHUNK ? total : ROWS_CHUNK;
    if ((size_t)kp > ch) ch = (size_t)kp;
    if (ch > c->chunk_max) c->chunk_max = ch;
    queue(c, (cu_upload){.dev_off = dev_off, .bytes = total, .rows = w, .n = n, .k = k,
                         .n_pad = n_pad, .kp = kp});
}

void *q8_cu_weight_rows(cu_prep *pr, const q8_tensor *w, int64_t n, int64_t k, int64_t n_pad,
                        int64_t kp) {
    if (!pr->c) return NULL;
    size_t off = reserve_const(pr->c, (size_t)(n_pad * kp));
    queue_rows(pr->c, off, w, n, k, n_pad, kp);
    return pr->fill ? pr->c->weights + off : NULL;
}

void *q8_cu_const(cu_prep *pr, size_t bytes, void **host) {
    *host = NULL;
    if (!pr->c) return NULL;
    cu_ctx *c = pr->c;
    size_t off = reserve_const(c, bytes);
    uint8_t *h = reserve_host(c, bytes, pr->fill);
    queue_upload(c, off, h, bytes);
    if (!pr->fill) return NULL;
    memset(h, 0, bytes); /* what a plan leaves unwritten reads as zeros */
    *host = h;
    return c->weights + off;
}

void *q8_cu_tensor(cu_prep *pr, const q8_graph *g, int t) {
    cu_ctx *c = pr->c;
    if (!c || t < 0) return NULL;
    const q8_tensor *tt = g->tensors[t];
    if (!tt->data) return pr->fill ? c->ptr[t] : NULL;
    size_t nb = q8_tensor_nbytes(tt);
    const uint8_t *d = tt->data;
    /* a weight stored in a CPU kernel's layout (core/layout.h) is used
     * plain here: unpacked into the staging buffer, not read in place */
    bool plain = tt->layout == Q8_LAYOUT_PLAIN;
    if (plain && c->map_registered && d >= c->map_base && nb <= c->map_size &&
        (size_t)(d - c->map_base) <= c->map_size - nb) {
        uint8_t *dev = c->map_dev + (d - c->map_base);
        if ((uintptr_t)dev % 16 == 0) { /* else copy: cuBLASLt gets 16-byte alignment */
            if (!c->mapped_seen[t]) {
                c->mapped_seen[t] = true;
                c->mapped_bytes += nb;
            }
            return dev;
        }
    }
    if (c->const_off[t] == NO_OFF) {
        size_t off = c->const_off[t] = reserve_const(c, nb);
        int64_t wn, wk;
        if (nb && plain) { /* from where it lies: no host copy */
            queue_upload(c, off, d, nb);
        } else if (nb && q8_layout_nk(tt, &wn, &wk)) {
            queue_rows(c, off, tt, wn, wk, wn, wk);
        }
    }
    return pr->fill ? c->weights + c->const_off[t] : NULL;
}

/* ---- device memory (or host memory in emulation) ------------------------------ */

/* device_bytes counts what would be on the device in emulation too */
static q8_status dev_alloc(cu_ctx *c, void **p, size_t bytes, q8_error *err) {
    bytes = bytes ? bytes : Q8_CU_ALIGN;
    if (c->emu) {
        *p = q8_aligned_alloc(q8_align_up(bytes, Q8_CU_ALIGN));
        if (!*p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory (%zu bytes)", bytes);
    } else {
        Q8_TRY(Q8_CUDA_CHECK(cudaMalloc(p, bytes)));
    }
    c->device_bytes += bytes;
    return Q8_OK;
}

static void dev_free(cu_ctx *c, void *p) {
    if (!p) return;
    if (c->emu) q8_aligned_free(p);
    else cudaFree(p);
}

/* Host to device on the session's stream (ordered with the runs). */
static q8_status copy_h2d(cu_ctx *c, void *dst, const void *src, size_t n, q8_error *err) {
    if (!n) return Q8_OK;
    if (c->emu) {
        memcpy(dst, src, n);
        return Q8_OK;
    }
    return Q8_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, c->st.stream));
}

static q8_status copy_d2h_async(cu_ctx *c, void *dst, const void *src, size_t n, q8_error *err) {
    if (!n) return Q8_OK;
    if (c->emu) {
        memcpy(dst, src, n);
        return Q8_OK;
    }
    return Q8_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, c->st.stream));
}

/* ---- create / destroy ---------------------------------------------------------- */

static void cuda_destroy(void *p) {
    cu_ctx *c = p;
    if (!c) return;
    if (!c->emu && c->st.stream) cudaStreamSynchronize(c->st.stream);
    if (c->nodes)
        for (int i = 0; i < c->g->n_nodes; i++) node_clear(&c->nodes[i]);
    free(c->nodes);
    q8_cu_host_free(c->host);
    free(c->on_host);
    if (c->exec) cudaGraphExecDestroy(c->exec);
    if (c->graph) cudaGraphDestroy(c->graph);
    for (int i = 0; i < 2; i++)
        if (c->run_ev[i]) cudaEventDestroy(c->run_ev[i]);
    if (c->ev) {
        for (int i = 0; i < 2 * c->g->n_nodes; i++)
            if (c->ev[i]) cudaEventDestroy(c->ev[i]);
        free(c->ev);
    }
    free(c->node_ms);
    dev_free(c, c->arena);
    dev_free(c, c->weights);
    free(c->weights_host);
    free(c->uploads);
    free(c->chunk);
    if (c->staging) {
        if (c->emu) q8_aligned_free(c->staging);
        else cudaFreeHost(c->staging);
    }
    if (c->map_registered && !c->emu) cudaHostUnregister((void *)c->map_base);
    if (c->lt) cublasLtDestroy(c->lt);
    if (c->st.stream) cudaStreamDestroy(c->st.stream);
    if (c->have_plan) q8_plan_free(&c->plan);
    free(c->const_off);
    free(c->mapped_seen);
    free(c->stage_off);
    free(c->ptr);
    free(c);
}

static size_t plan_scratch(const q8_graph *g, int i, void *ctx) {
    const cu_ctx *c = ctx;
    return c->nodes[i].scratch;
}

/* One planning pass over every node (see backend_cuda.h). */
/* The copies the node just planned queued, made; the staging buffer is
 * then free for the next node. */
/* The rows upload u, a chunk of rows at a time. */
static q8_status upload_rows(cu_ctx *c, const cu_upload *u, q8_error *err) {
    int64_t step = (int64_t)(c->chunk_max / (size_t)u->kp);
    Q8_ASSERT(step >= 1);
    /* the tensor's own shape (taps4 reads its taps) when the rows are it */
    q8_wshape ws;
    if (!q8_layout_shape(u->rows, &ws) || ws.n != u->n || ws.k != u->k) {
        Q8_ASSERT(u->rows->layout != Q8_LAYOUT_TAPS4); /* its taps come from its own shape */
        ws = (q8_wshape){u->n, u->k, 1};
    }
    for (int64_t j0 = 0; j0 < u->n_pad; j0 += step) {
        int64_t j1 = j0 + step < u->n_pad ? j0 + step : u->n_pad;
        memset(c->chunk, 0, (size_t)((j1 - j0) * u->kp));
        for (int64_t j = j0; j < j1 && j < u->n; j++)
            q8_layout_row(u->rows->layout, u->rows->data, ws, j,
                          c->chunk + (j - j0) * u->kp);
        Q8_TRY(copy_h2d(c, c->weights + u->dev_off + j0 * u->kp, c->chunk,
                        (size_t)((j1 - j0) * u->kp), err));
        /* the next chunk is made in the same buffer */
        if (!c->emu) Q8_TRY(Q8_CUDA_CHECK(cudaStreamSynchronize(c->st.stream)));
    }
    return Q8_OK;
}

static q8_status flush_uploads(cu_ctx *c, q8_error *err) {
    for (int k = 0; k < c->n_uploads; k++) {
        const cu_upload *u = &c->uploads[k];
        if (u->rows) Q8_TRY(upload_rows(c, u, err));
        else Q8_TRY(copy_h2d(c, c->weights + u->dev_off, u->src, u->bytes, err));
    }
    /* an asynchronous copy may still read the staging buffer the next node
     * writes: wait for it (creation only; a few syncs per model) */
    if (c->host_used && !c->emu) Q8_TRY(Q8_CUDA_CHECK(cudaStreamSynchronize(c->st.stream)));
    return Q8_OK;
}

static q8_status plan_pass(cu_ctx *c, bool fill, q8_error *err) {
    const q8_graph *g = c->g;
    c->weights_size = 0;
    for (int t = 0; t < g->n_tensors; t++) c->const_off[t] = NO_OFF;
    for (int i = 0; i < g->n_nodes; i++) {
        size_t want = c->nodes[i].scratch, memo = c->nodes[i].memo;
        node_clear(&c->nodes[i]);
        c->nodes[i].memo = memo;
        cu_prep pr = {.c = c, .fill = fill, .node = i, .memo = &c->nodes[i].memo};
        if (fill && c->plan.scratch_bytes[i])
            pr.scratch_dev = c->arena + c->plan.scratch_offset[i];
        c->host_used = 0;
        c->n_uploads = 0;
        Q8_TRY(plan_session_node(&pr, c, i, &c->nodes[i], err));
        c->nodes[i].scratch = pr.scratch ? pr.scratch + Q8_CU_ALIGN : 0; /* q8_cu_scratch */
        /* both passes run the same code on the same graph */
        if (fill) {
            Q8_ASSERT(c->nodes[i].scratch == want);
            Q8_ASSERT(c->host_used <= c->host_max);
            Q8_TRY(flush_uploads(c, err));
        } else {
            if (c->host_used > c->host_max) c->host_max = c->host_used;
            if (c->n_uploads > c->max_uploads) c->max_uploads = c->n_uploads;
        }
    }
    return Q8_OK;
}

/* Q8_CUDA_MAP: 0 never reads weights in place, 1 (default) on integrated
 * GPUs only, "force" on any GPU that can (the Jetson code path, exercised on
 * a discrete GPU). */
typedef enum { MAP_NEVER, MAP_INTEGRATED, MAP_FORCE } map_mode;

static map_mode map_mode_from_env(void) {
    const char *v = getenv("Q8_CUDA_MAP");
    if (!v || !*v) return MAP_INTEGRATED;
    if (strcmp(v, "force") == 0) return MAP_FORCE;
    return strcmp(v, "0") == 0 ? MAP_NEVER : MAP_INTEGRATED;
}

/* A .q8 file's constants read by the GPU in place from the mapping. */
static void map_constants(cu_ctx *c, const void *base, size_t size) {
    map_mode mode = map_mode_from_env();
    if (!base || !size || mode == MAP_NEVER) return;
    if (c->emu) {
        /* "device" memory is host memory: the mapping is its own device
         * pointer, so that the mapped path is tested without a GPU */
        if (mode != MAP_FORCE) return;
        c->map_base = base;
        c->map_size = size;
        c->map_dev = (uint8_t *)base;
        c->map_registered = true;
        return;
    }
    int integrated = 0, can_map = 0, ro = 0, reg = 0;
    if (cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, c->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, c->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&reg, cudaDevAttrHostRegisterSupported, c->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, c->device) !=
            cudaSuccess) {
        cudaGetLastError();
        return;
    }
    if (!integrated && mode != MAP_FORCE) return;
    if (!can_map || !reg || !ro) {
        if (c->verbose)
            fprintf(stderr, "q8 cuda: this GPU cannot map read-only host memory (map %d, "
                            "register %d, read-only %d); copying the weights\n", can_map, reg, ro);
        return;
    }
    /* The mapping is PROT_READ: the read-only flag is required. */
    cudaError_t e = cudaHostRegister((void *)base, size,
                                     cudaHostRegisterMapped | cudaHostRegisterReadOnly);
    void *dev = NULL;
    if (e == cudaSuccess) {
        e = cudaHostGetDevicePointer(&dev, (void *)base, 0);
        if (e != cudaSuccess) cudaHostUnregister((void *)base);
    }
    if (e != cudaSuccess) {
        if (c->verbose)
            fprintf(stderr, "q8 cuda: cudaHostRegister of the .q8 mapping failed (%s); copying "
                            "the weights\n", cudaGetErrorString(e));
        cudaGetLastError(); /* not sticky: clear it, the copy path follows */
        return;
    }
    c->map_base = base;
    c->map_size = size;
    c->map_dev = dev;
    c->map_registered = true;
    if (c->verbose)
        fprintf(stderr, "q8 cuda: weights read in place from the mapped .q8 file (%s GPU)\n",
                integrated ? "integrated" : "discrete, Q8_CUDA_MAP=force");
}

static q8_status setup_staging(cu_ctx *c, q8_error *err) {
    const q8_graph *g = c->g;
    size_t off = 0;
    for (int k = 0; k < g->n_inputs + g->n_outputs; k++) {
        int t = k < g->n_inputs ? g->inputs[k] : g->outputs[k - g->n_inputs];
        if (c->stage_off[t] != NO_OFF || g->tensors[t]->data || c->plan.offset[t] == Q8_PLAN_NONE)
            continue;
        off = q8_align_up(off, Q8_ALIGN);
        c->stage_off[t] = off;
        off += q8_tensor_nbytes(g->tensors[t]);
    }
    c->staging_size = off;
    size_t bytes = off ? off : Q8_ALIGN;
    if (c->emu) {
        c->staging = q8_aligned_alloc(bytes);
        return c->staging ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    void *p = NULL;
    Q8_TRY(Q8_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault)));
    c->staging = p;
    return Q8_OK;
}

static q8_status create_impl(cu_ctx *c, const q8_session_options *o, const void *map_base,
                             size_t map_size, q8_error *err) {
    const q8_graph *g = c->g;
    if (!c->emu) {
        char why[160];
        if (!q8_cuda_device_available(why, sizeof why))
            return q8_fail(err, Q8_ERR_BACKEND, "%s", why);
        Q8_TRY(Q8_CUDA_CHECK(cudaGetDevice(&c->device)));
        Q8_TRY(Q8_CUDA_CHECK(cudaFree(0))); /* the context exists from here on */
        size_t total = 0;
        Q8_TRY(Q8_CUDA_CHECK(cudaMemGetInfo(&c->free_before, &total)));
        Q8_TRY(Q8_CUDA_CHECK(cudaStreamCreateWithFlags(&c->st.stream, cudaStreamNonBlocking)));
        Q8_TRY(Q8_CUBLAS_CHECK(cublasLtCreate(&c->lt)));
        if (c->verbose)
            fprintf(stderr, "q8 cuda: cuBLASLt %zu (built against %d)\n", cublasLtGetVersion(),
                    CUBLAS_VERSION);
    }
    map_constants(c, map_base, map_size);
    size_t nt = (size_t)g->n_tensors + 1, nn = (size_t)g->n_nodes + 1;
    c->const_off = malloc(sizeof(size_t) * nt);
    c->stage_off = malloc(sizeof(size_t) * nt);
    c->mapped_seen = calloc(nt, sizeof(bool));
    c->ptr = calloc(nt, sizeof(void *));
    c->nodes = calloc(nn, sizeof(cu_node));
    c->on_host = calloc(nn, sizeof(bool));
    if (!c->const_off || !c->stage_off || !c->mapped_seen || !c->ptr || !c->nodes || !c->on_host)
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < nt; t++) c->stage_off[t] = NO_OFF;

    /* Pass 1: sizes. Then the plan, the two device buffers, pass 2. */
    Q8_TRY(plan_pass(c, false, err));
    Q8_TRY(q8_plan_build(g, plan_scratch, c, &c->plan, err));
    c->have_plan = true;
    Q8_TRY(dev_alloc(c, (void **)&c->arena, c->plan.arena_bytes, err));
    /* Everything creation puts on the device goes through the session's
     * stream (non-blocking: it does not wait for the legacy stream), and
     * creation waits for it at the end, so a first run never reads weights
     * still in flight. */
    if (!c->emu && c->plan.arena_bytes)
        Q8_TRY(Q8_CUDA_CHECK(cudaMemsetAsync(c->arena, 0, c->plan.arena_bytes, c->st.stream)));
    size_t wsize = c->weights_size;
    Q8_TRY(dev_alloc(c, (void **)&c->weights, wsize, err));
    /* alignment gaps and what no plan writes read as zeros, as before */
    if (c->emu) memset(c->weights, 0, wsize);
    else if (wsize) Q8_TRY(Q8_CUDA_CHECK(cudaMemsetAsync(c->weights, 0, wsize, c->st.stream)));
    c->weights_host = malloc(c->host_max ? c->host_max : 1);
    c->uploads = malloc(sizeof(cu_upload) * (size_t)(c->max_uploads ? c->max_uploads : 1));
    c->chunk = malloc(c->chunk_max ? c->chunk_max : 1);
    if (!c->weights_host || !c->uploads || !c->chunk)
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory staging %zu bytes of weights",
                       c->host_max + c->chunk_max);
    for (int t = 0; t < g->n_tensors; t++)
        if (!g->tensors[t]->data && c->plan.offset[t] != Q8_PLAN_NONE)
            c->ptr[t] = c->arena + c->plan.offset[t];
    c->mapped_bytes = 0;
    memset(c->mapped_seen, 0, nt * sizeof(bool));
    Q8_TRY(plan_pass(c, true, err));
    Q8_ASSERT(c->weights_size == wsize);
    Q8_TRY(setup_staging(c, err));
    bool any_host = false;
    for (int i = 0; i < g->n_nodes; i++) any_host |= c->on_host[i];
    if (any_host) Q8_TRY(q8_cu_host_create(g, c->on_host, c->emu, c->n_threads, &c->host, err));
    if (!c->emu) Q8_TRY(Q8_CUDA_CHECK(cudaStreamSynchronize(c->st.stream)));
    free(c->weights_host); /* only once the copies are done */
    c->weights_host = NULL;
    free(c->uploads);
    c->uploads = NULL;
    free(c->chunk);
    c->chunk = NULL;

    c->profile = o->profile != 0;
    bool no_graph = getenv("Q8_CUDA_GRAPH") && !env_flag("Q8_CUDA_GRAPH"); /* "0" */
    c->use_graph = !c->emu && !c->profile && !no_graph;
    c->run_ms = -1;
    if (!c->emu)
        for (int i = 0; i < 2; i++) Q8_TRY(Q8_CUDA_CHECK(cudaEventCreate(&c->run_ev[i])));
    if (c->profile) {
        if (!(c->node_ms = calloc(nn, sizeof(double))))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        if (!c->emu) {
            if (!(c->ev = calloc(2 * nn, sizeof(cudaEvent_t))))
                return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            for (int i = 0; i < 2 * g->n_nodes; i++)
                Q8_TRY(Q8_CUDA_CHECK(cudaEventCreate(&c->ev[i])));
        }
    }
    if (c->verbose)
        fprintf(stderr,
                "q8 cuda%s: arena %zu B, weights %zu B copied (through at most %zu B of host "
                "staging) + %zu B mapped, graph %s\n",
                c->emu ? " (emulated)" : "", c->plan.arena_bytes, wsize, c->host_max + c->chunk_max,
                c->mapped_bytes, c->use_graph ? "on" : "off");
    return Q8_OK;
}

static q8_status cuda_create(const q8_graph *g, const q8_session_options *o,
                             const q8_mapping *map, const q8_release *rel, void **out,
                             q8_error *err) {
    (void)rel; /* host copies are kept: uploads and CPU-side reads use them */
    cu_ctx *c = calloc(1, sizeof *c);
    if (!c) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    c->g = g;
    c->emu = env_flag("Q8_CUDA_EMULATE");
    c->st.emu = c->emu;
    c->verbose = env_flag("Q8_CUDA_VERBOSE");
    c->allow_host = !o->strict_device;
    c->n_threads = o->n_threads;
    q8_status s = create_impl(c, o, map->base, map->size, err);
    if (s != Q8_OK) {
        cuda_destroy(c);
        return s;
    }
    *out = c;
    return Q8_OK;
}

/* ---- running ------------------------------------------------------------------- */

static q8_status cuda_set_input(void *p, int t, const void *data, size_t nbytes, q8_error *err) {
    cu_ctx *c = p;
    if (c->stage_off[t] == NO_OFF || !nbytes) return Q8_OK;
    memcpy(c->staging + c->stage_off[t], data, nbytes);
    return Q8_OK;
}

/* Enqueue every node (eagerly or into a capture). */
static q8_status enqueue_nodes(cu_ctx *c, bool timed, q8_error *err) {
    const q8_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        cu_node *nd = &c->nodes[i];
        if (!nd->run) continue;
        double t0 = 0;
        if (timed && c->emu) t0 = now_ms();
        if (timed && !c->emu) Q8_TRY(Q8_CUDA_CHECK(cudaEventRecord(c->ev[2 * i], c->st.stream)));
        Q8_TRY(nd->run(c, g->nodes[i], nd->params, err));
        if (timed && !c->emu)
            Q8_TRY(Q8_CUDA_CHECK(cudaEventRecord(c->ev[2 * i + 1], c->st.stream)));
        if (timed && c->emu) c->node_ms[i] += now_ms() - t0;
    }
    return Q8_OK;
}

static q8_status capture_graph(cu_ctx *c, q8_error *err) {
    Q8_TRY(Q8_CUDA_CHECK(cudaStreamBeginCapture(c->st.stream, cudaStreamCaptureModeThreadLocal)));
    q8_status s = enqueue_nodes(c, false, err);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(c->st.stream, &graph);
    if (s == Q8_OK) s = Q8_CUDA_CHECK(e);
    if (s == Q8_OK) s = Q8_CUDA_CHECK(cudaGraphInstantiateWithFlags(&c->exec, graph, 0));
    if (s != Q8_OK) {
        if (graph) cudaGraphDestroy(graph);
        c->exec = NULL;
        return s;
    }
    c->graph = graph;
    return Q8_OK;
}

static q8_status cuda_run(void *p, q8_error *err) {
    cu_ctx *c = p;
    const q8_graph *g = c->g;
    for (int k = 0; k < g->n_inputs; k++) {
        int t = g->inputs[k];
        if (c->stage_off[t] != NO_OFF)
            Q8_TRY(copy_h2d(c, c->ptr[t], c->staging + c->stage_off[t],
                            q8_tensor_nbytes(g->tensors[t]), err));
    }
    if (!c->emu) Q8_TRY(Q8_CUDA_CHECK(cudaEventRecord(c->run_ev[0], c->st.stream)));
    if (c->exec) {
        Q8_TRY(Q8_CUDA_CHECK(cudaGraphLaunch(c->exec, c->st.stream)));
    } else {
        Q8_TRY(enqueue_nodes(c, c->profile, err));
        if (c->use_graph && c->runs == 0) {
            /* The eager pass above computed this run; record it for the next. */
            q8_error cap = {0};
            if (capture_graph(c, &cap) != Q8_OK) {
                c->use_graph = false; /* fall back to eager runs */
                cudaGetLastError();
                if (c->verbose)
                    fprintf(stderr, "q8 cuda: graph capture failed, running eagerly: %s\n",
                            cap.msg);
            } else if (c->verbose) {
                fprintf(stderr, "q8 cuda: run captured into a CUDA graph\n");
            }
        }
    }
    if (!c->emu) Q8_TRY(Q8_CUDA_CHECK(cudaEventRecord(c->run_ev[1], c->st.stream)));
    for (int k = 0; k < g->n_outputs; k++) {
        int t = g->outputs[k];
        if (c->stage_off[t] != NO_OFF)
            Q8_TRY(copy_d2h_async(c, c->staging + c->stage_off[t], c->ptr[t],
                                  q8_tensor_nbytes(g->tensors[t]), err));
    }
    return Q8_OK;
}

static q8_status cuda_sync(void *p, q8_error *err) {
    cu_ctx *c = p;
    if (!c->emu) {
        Q8_TRY(Q8_CUDA_CHECK(cudaStreamSynchronize(c->st.stream)));
        float run_ms = 0;
        Q8_TRY(Q8_CUDA_CHECK(cudaEventElapsedTime(&run_ms, c->run_ev[0], c->run_ev[1])));
        c->run_ms = run_ms;
        if (c->profile && c->ev)
            for (int i = 0; i < c->g->n_nodes; i++) {
                if (!c->nodes[i].run) continue;
                float ms = 0;
                Q8_TRY(Q8_CUDA_CHECK(cudaEventElapsedTime(&ms, c->ev[2 * i], c->ev[2 * i + 1])));
                c->node_ms[i] += ms;
            }
        if (c->runs == 0) {
            size_t fr = 0, total = 0;
            Q8_TRY(Q8_CUDA_CHECK(cudaMemGetInfo(&fr, &total)));
            c->delta = c->free_before > fr ? c->free_before - fr : 0;
        }
    }
    c->runs++;
    return Q8_OK;
}

static const void *cuda_tensor_data(void *p, int t) {
    cu_ctx *c = p;
    return c->stage_off[t] == NO_OFF ? NULL : c->staging + c->stage_off[t];
}

static void cuda_memory(void *p, q8_memory_info *mi) {
    cu_ctx *c = p;
    mi->weights_bytes = c->weights_size + c->mapped_bytes + q8_cu_host_weights(c->host);
    mi->arena_bytes = c->plan.arena_bytes;
    mi->device_bytes = c->device_bytes;
    mi->device_delta_bytes = c->delta;
}

static void cuda_stats(void *p, q8_session_stats *st) {
    cu_ctx *c = p;
    st->igemm_fallbacks = c->igemm_fallbacks;
    st->graph = c->exec != NULL;
    st->mapped_weights_bytes = c->mapped_bytes;
    st->weights_staging_bytes = c->host_max + c->chunk_max;
    st->device_ms = c->run_ms;
    q8_cu_host_stats(c->host, st);
    if (c->emu) snprintf(st->library, sizeof st->library, "host emulation");
    else snprintf(st->library, sizeof st->library, "cuBLASLt %zu", cublasLtGetVersion());
}

static double cuda_node_ms(void *p, int i) {
    const cu_ctx *c = p;
    return c->node_ms ? c->node_ms[i] : -1;
}

const q8_backend q8_backend_cuda = {
    .abi = Q8_BACKEND_ABI,
    .name = "cuda",
    .device = Q8_DEVICE_CUDA,
    .host_nodes = true,
    .available = cuda_available,
    .check_node = cuda_check_node,
    .create = cuda_create,
    .destroy = cuda_destroy,
    .set_input = cuda_set_input,
    .run = cuda_run,
    .sync = cuda_sync,
    .tensor_data = cuda_tensor_data,
    .memory = cuda_memory,
    .stats = cuda_stats,
    .node_ms = cuda_node_ms,
};
