/* The CUDA backend (built with -DQ8_CUDA=ON): internals shared by the
 * backend (kernels/cuda/backend.c), the op planners (kernels/cuda/ops_<family>.c) and
 * the cuBLASLt wrapper (kernels/cuda/igemm.c). See docs/cuda.md.
 *
 * A session is planned in two passes over the nodes with the same code:
 * the first only measures (constant bytes, each node's scratch), the
 * planner then places activations and scratch in one arena, one device
 * buffer receives every constant the kernels read, and the second pass
 * fills both and records each node's launch parameters with final device
 * pointers. */
#ifndef Q8_BACKEND_CUDA_H
#define Q8_BACKEND_CUDA_H

#include "lt_load.h" /* cublasLt.h, its functions loaded on first use */

#include "backend.h"
#include "planner.h"
#include "q8cuda.h"

/* Every CUDA runtime call goes through this: on failure it fills err with
 * the statement, file, line and CUDA's message and gives Q8_ERR_BACKEND. */
#define Q8_CUDA_CHECK(stmt) q8_cuda_check((stmt), #stmt, __FILE__, __LINE__, err)
#define Q8_CUBLAS_CHECK(stmt) q8_cublas_check((stmt), #stmt, __FILE__, __LINE__, err)
q8_status q8_cuda_check(cudaError_t e, const char *stmt, const char *file, int line,
                        q8_error *err);
q8_status q8_cublas_check(cublasStatus_t s, const char *stmt, const char *file, int line,
                          q8_error *err);

/* "CUBLAS_STATUS_NOT_SUPPORTED"... (cuBLAS's own name functions are newer
 * than some of the toolkits q8 builds with). */
const char *q8_cublas_status_name(cublasStatus_t s);

/* Is there a usable CUDA device? false with the reason in why. */
bool q8_cuda_device_available(char *why, size_t n);

typedef struct cu_ctx cu_ctx;
typedef struct cu_node cu_node;

/* Device alignment of constants and scratch parts. */
#define Q8_CU_ALIGN 256
/* The most cuBLASLt workspace a GEMM may have (inside its node's scratch,
 * so GEMMs share it through the arena plan): the heuristic's first choice
 * under this limit decides what is reserved. 4 MiB by default (cuBLAS
 * suggests 32 MiB on Hopper for its own handle-wide workspace; q8 weighs
 * the footprint, see docs/cuda.md); Q8_CUDA_WORKSPACE_MIB overrides it. */
#define Q8_CU_LT_WORKSPACE ((size_t)4 << 20)
size_t q8_cu_lt_workspace(void);

/* Count an INT8 GEMM that runs on the plain kernel (q8_session_stats). */
void q8_cu_note_gemm_fallback(cu_ctx *c);


/* Enqueue a node's work on the session's stream. */
typedef q8_status (*cu_run_fn)(cu_ctx *c, const q8_node *n, void *params, q8_error *err);

struct cu_node {
    cu_run_fn run;              /* NULL: nothing to launch (views) */
    void *params;               /* malloc'd by the planner pass; freed by free_params/free */
    void (*free_params)(void *params); /* optional: release what params own */
    size_t scratch;             /* arena bytes this node needs during its step */
    size_t memo;                /* kept from the measuring pass to the filling one */
};

/* The planning pass an op's plan function runs in. */
typedef struct cu_prep {
    cu_ctx *c;                  /* NULL when only checking support */
    bool fill;                  /* second pass: device pointers are final */
    int node;                   /* index of the node being planned */
    size_t scratch;             /* running scratch size of this node */
    uint8_t *scratch_dev;       /* second pass: the node's scratch in the arena */
    size_t *memo;               /* the node's memo (NULL when only checking) */
} cu_prep;

/* Plan node n: check that the CUDA kernels support it (else fail with a
 * message that names the node and what is unsupported), reserve its
 * constants and scratch, and (fill pass) record its launch in nd. */
typedef q8_status (*cu_plan_fn)(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                                q8_error *err);

/* Indexed by op id (kernels/cuda/ops_table.c); NULL: not supported. */
extern const cu_plan_fn q8_cu_plans[Q8_OP_COUNT];

/* The plan functions, by family (kernels/cuda/ops_<family>.c). */
q8_status q8_cu_unary_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err);
q8_status q8_cu_ewchain_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err);
q8_status q8_cu_clip_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_binary_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);
q8_status q8_cu_variadic_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                              q8_error *err);
q8_status q8_cu_cast_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_conv_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_softmax_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err);
q8_status q8_cu_ln_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                        q8_error *err);
q8_status q8_cu_pool_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_gap_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                         q8_error *err);
q8_status q8_cu_reduce_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);
q8_status q8_cu_bn_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                        q8_error *err);
q8_status q8_cu_argmax_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);
q8_status q8_cu_resize_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);
q8_status q8_cu_qgemm_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err);
q8_status q8_cu_qconv_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err);
q8_status q8_cu_qconvt_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);
q8_status q8_cu_qmatmul_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err);
q8_status q8_cu_quant_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err);
q8_status q8_cu_dequant_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err);
q8_status q8_cu_qlut_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_qadd_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_qmul_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_qmulf_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err);
q8_status q8_cu_qprelu_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);
q8_status q8_cu_qgap_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_view_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err);
q8_status q8_cu_transpose_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                               q8_error *err);
q8_status q8_cu_slice_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err);
q8_status q8_cu_concat_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);
q8_status q8_cu_pad_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                         q8_error *err);
q8_status q8_cu_gather_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err);

/* ---- helpers for plan functions ------------------------------------------ */

/* The stream kernels launch on (emulation flag included). */
const q8cu_stream *q8_cu_stream(const cu_ctx *c);

/* Reserve bytes of this node's scratch (Q8_CU_ALIGN-aligned); the device
 * pointer is valid in the fill pass (NULL otherwise). */
void *q8_cu_scratch(cu_prep *pr, size_t bytes);

/* Device pointer of tensor t's data as the kernels read it: the arena for
 * activations; for constants, an upload in the weights buffer (once per
 * tensor) or, on an integrated GPU, the mapped .q8 file. NULL outside the
 * fill pass. */
void *q8_cu_tensor(cu_prep *pr, const q8_graph *g, int t);

/* New constant bytes derived on the host (repacked weights, requantization
 * arrays): *host points at the staging copy to fill (one node's at a time) (NULL outside the fill
 * pass, when only sizes are measured); returns the device pointer. */
void *q8_cu_const(cu_prep *pr, size_t bytes, void **host);

/* A BatchNormalization's per-channel k[C] then m[C] (inputs 1-4 of n:
 * scale, B, mean, var; ops/batchnorm.h's q8_bn_channel) as a new constant;
 * device pointer, or NULL outside the fill pass. */
float *q8_cu_bn_consts(cu_prep *pr, const q8_graph *g, const q8_node *n, float eps, int64_t C);

/* The int8 weight w, [n][k] in whatever layout it is stored in, as a new
 * constant [n_pad][kp] (rows zero-padded); copied a few rows at a time
 * through a small buffer, so no host copy of it is made. Device pointer,
 * or NULL outside the fill pass. */
void *q8_cu_weight_rows(cu_prep *pr, const q8_tensor *w, int64_t n, int64_t k, int64_t n_pad,
                        int64_t kp);

/* Allocate a node's params block (zeroed) in nd; NULL on out of memory. */
void *q8_cu_params(cu_node *nd, size_t bytes);

/* Fail for an unsupported node: "node 'x' (Op): the cuda backend ..." */
q8_status q8_cu_unsupported(q8_error *err, const q8_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Name a failed launch after its node. */
q8_status q8_cu_launch_check(cudaError_t e, const q8_node *n, const char *what, q8_error *err);

/* ---- INT8 GEMM through cuBLASLt (kernels/cuda/igemm.c) -------------------- */

/* C[b][j][i] (column-major m x n, ldc) = sum_k A[b][i][k] * B[b][j][k]:
 * cuBLASLt's "TN" INT8 GEMM with int32 output: A is m rows (lda apart) of
 * k bytes, B n rows (ldb apart) of k bytes; m, k, lda, ldb, ldc multiples of
 * 4, every pointer 16-byte aligned (and batch strides multiples of 16). */
typedef struct cu_igemm {
    int64_t m, n, k, lda, ldb, ldc, batch, sa, sb, sc;
    void *ws;                   /* workspace (in the node's scratch) */
    size_t ws_bytes;
    bool ready;                 /* descriptors and algorithm below are set */
    bool simple;                /* no cuBLASLt algorithm: the plain kernel */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
} cu_igemm;

/* Describe the GEMM and, on a real device, ask cuBLASLt's heuristic for an
 * algorithm (at session creation, never while running): the measuring pass
 * asks with Q8_CU_LT_WORKSPACE and reserves the workspace its choice needs
 * (one GEMM per node: the size is kept in the node's memo); the filling
 * pass asks again within that size and keeps the descriptors and the
 * algorithm. */
q8_status q8_cu_igemm_plan(cu_prep *pr, const q8_node *n, cu_igemm *gm, int64_t m, int64_t nn,
                           int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int64_t batch,
                           int64_t sa, int64_t sb, int64_t sc, q8_error *err);
q8_status q8_cu_igemm_run(cu_ctx *c, const q8_node *n, const cu_igemm *gm, const int8_t *A,
                          const int8_t *B, int32_t *C, q8_error *err);
void q8_cu_igemm_free(cu_igemm *gm);

/* The cuBLASLt calls themselves, without a session (also used by
 * tools/bench/gpu_igemm_bench.c, so that it times exactly q8's call): create
 * gm's descriptors (gm's shape fields set) and take the heuristic's first
 * algorithm within max_ws workspace bytes; *none when there is none (why:
 * the heuristic's status). Then the matmul with gm->ws / gm->ws_bytes. */
q8_status q8_cu_lt_describe(cublasLtHandle_t lt, cu_igemm *gm, size_t max_ws,
                            size_t *ws_needed, bool *none, cublasStatus_t *why, q8_error *err);
cublasStatus_t q8_cu_lt_matmul(cublasLtHandle_t lt, const cu_igemm *gm, const int8_t *A,
                               const int8_t *B, int32_t *C, cudaStream_t stream);
/* The cuBLASLt handle (NULL in emulation). */
cublasLtHandle_t q8_cu_lt(const cu_ctx *c);

#endif
