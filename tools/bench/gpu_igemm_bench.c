/* The q8 side of the INT8 GEMM benchmark (tools/bench/gpu_bench.py): the
 * cuBLASLt call q8 makes, through q8's own functions (q8_cu_lt_describe and
 * q8_cu_lt_matmul in kernels/cuda/igemm.c: "TN", CUBLAS_COMPUTE_32I, int32
 * output, 16-byte alignment preferences, the heuristic's first algorithm
 * within the workspace limit), alone and followed by q8's requantization
 * epilogue kernel (int32 -> int8 with per-channel multipliers), timed with
 * CUDA events.
 *
 *   gpu_igemm_bench [M N K [RUNS [WORKSPACE_MIB]]]   (default 4096 4096 4096 50 4)
 *
 * M is the output channels (cuBLASLt's m), N the rows (n), K the reduction.
 * Prints one JSON line: the medians and TOPS (2*M*N*K operations). A few
 * accumulators are checked against a host computation first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "backend_cuda.h"
#include "q8cuda.h"

#define CK(stmt)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (stmt);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "gpu_igemm_bench: %s failed at %s:%d: %s\n", #stmt, __FILE__,     \
                    __LINE__, cudaGetErrorString(e_));                                        \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)
#define LT(stmt)                                                                              \
    do {                                                                                      \
        cublasStatus_t s_ = (stmt);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                    \
            fprintf(stderr, "gpu_igemm_bench: %s failed at %s:%d: cublasStatus_t %d\n", #stmt,  \
                    __FILE__, __LINE__, (int)s_);                                             \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 88172645463325252ull;
static int8_t rnd8(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int8_t)(rng >> 56);
}

int main(int argc, char **argv) {
    long M = 4096, N = 4096, K = 4096, runs = 50, ws_mib = 4;
    if (argc >= 4) {
        M = atol(argv[1]);
        N = atol(argv[2]);
        K = atol(argv[3]);
    }
    if (argc >= 5) runs = atol(argv[4]);
    if (argc >= 6) ws_mib = atol(argv[5]);
    if (M <= 0 || N <= 0 || K <= 0 || M % 4 || K % 16 || runs < 1 || ws_mib < 0 || ws_mib > 1024) {
        fprintf(stderr, "usage: gpu_igemm_bench [M N K [RUNS [WORKSPACE_MIB]]] with M %% 4 == 0, "
                        "K %% 16 == 0\n");
        return 2;
    }
    size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
    int8_t *ha = malloc(na), *hb = malloc(nb);
    if (!ha || !hb) return 1;
    for (size_t i = 0; i < na; i++) ha[i] = rnd8();
    for (size_t i = 0; i < nb; i++) hb[i] = rnd8();
    int8_t *A, *B, *Y;
    int32_t *C, *mult, *shift;
    void *ws;
    size_t ws_max = (size_t)ws_mib << 20;
    CK(cudaMalloc((void **)&A, na));
    CK(cudaMalloc((void **)&B, nb));
    CK(cudaMalloc((void **)&C, nc * 4));
    CK(cudaMalloc((void **)&Y, nc));
    CK(cudaMalloc((void **)&mult, (size_t)M * 4));
    CK(cudaMalloc((void **)&shift, (size_t)M * 4));
    CK(cudaMalloc(&ws, ws_max ? ws_max : 256));
    CK(cudaMemcpy(A, ha, na, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hb, nb, cudaMemcpyHostToDevice));
    int32_t *hm = malloc((size_t)M * 4), *hs = malloc((size_t)M * 4);
    for (long i = 0; i < M; i++) {
        hm[i] = 1518500250; /* ~0.707 * 2^31 */
        hs[i] = 31 + 12;    /* M ~ 1.7e-4 */
    }
    CK(cudaMemcpy(mult, hm, (size_t)M * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(shift, hs, (size_t)M * 4, cudaMemcpyHostToDevice));

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cublasLtHandle_t lt;
    LT(cublasLtCreate(&lt));
    /* exactly q8's descriptors, preferences and heuristic call */
    cu_igemm gm = {.m = M, .n = N, .k = K, .lda = K, .ldb = K, .ldc = M, .batch = 1};
    size_t need = 0;
    bool none = false;
    cublasStatus_t why = CUBLAS_STATUS_SUCCESS;
    q8_error err = {0};
    if (q8_cu_lt_describe(lt, &gm, ws_max, &need, &none, &why, &err) != Q8_OK) {
        fprintf(stderr, "gpu_igemm_bench: %s\n", err.msg);
        return 1;
    }
    if (none) {
        fprintf(stderr, "gpu_igemm_bench: cuBLASLt has no INT8 algorithm for %ld x %ld x %ld "
                        "(%s)\n", M, N, K, q8_cublas_status_name(why));
        return 1;
    }
    gm.ws = ws;
    gm.ws_bytes = need;
    q8cu_stream qs = {.stream = st, .emu = 0};
    q8cu_gemm_epi_args ep = {.e = {.kind = Q8CU_EPI_I8, .mult = mult, .shift = shift, .lo = -128,
                                   .hi = 127},
                             .c = C, .y = Y, .nb = 1, .nj = N, .ni = M, .c_ld = M, .i_div = M,
                             .y_js = M, .y_ilo = 1, .chan = Q8CU_CHAN_I};

    /* correctness of a few accumulators */
    LT(q8_cu_lt_matmul(lt, &gm, A, B, C, st));
    CK(cudaStreamSynchronize(st));
    int32_t got[4];
    long pts[4][2] = {{0, 0}, {M - 1, N - 1}, {M / 2, 3 % N}, {7 % M, N / 3}};
    for (int q = 0; q < 4; q++) {
        long i = pts[q][0], j = pts[q][1];
        CK(cudaMemcpy(&got[q], C + j * M + i, 4, cudaMemcpyDeviceToHost));
        int64_t want = 0;
        for (long k = 0; k < K; k++) want += (int64_t)ha[i * K + k] * hb[j * K + k];
        if (want != got[q]) {
            fprintf(stderr, "gpu_igemm_bench: C[%ld][%ld] = %d, want %lld\n", j, i, got[q],
                    (long long)want);
            return 1;
        }
    }

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float *t_gemm = malloc(sizeof(float) * (size_t)runs);
    float *t_all = malloc(sizeof(float) * (size_t)runs);
    for (int pass = 0; pass < 2; pass++)
        for (long r = -5; r < runs; r++) { /* 5 warm-up runs */
            CK(cudaEventRecord(e0, st));
            LT(q8_cu_lt_matmul(lt, &gm, A, B, C, st));
            if (pass == 1) CK(q8cu_gemm_epilogue(&qs, &ep));
            CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 0) (pass ? t_all : t_gemm)[r] = ms;
        }
    qsort(t_gemm, (size_t)runs, sizeof(float), cmp_f);
    qsort(t_all, (size_t)runs, sizeof(float), cmp_f);
    double ops = 2.0 * (double)M * (double)N * (double)K;
    float mg = t_gemm[runs / 2], ma = t_all[runs / 2];
    int dev = 0;
    struct cudaDeviceProp prop;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("{\"device\": \"%s\", \"m\": %ld, \"n\": %ld, \"k\": %ld, \"runs\": %ld, "
           "\"workspace_limit_bytes\": %zu, \"workspace_bytes\": %zu, \"int8_gemm_ms\": %.5f, \"int8_gemm_tops\": %.2f, "
           "\"int8_gemm_epilogue_ms\": %.5f, \"int8_gemm_epilogue_tops\": %.2f}\n",
           prop.name, M, N, K, runs, ws_max, need, mg, ops / (mg * 1e-3) / 1e12, ma,
           ops / (ma * 1e-3) / 1e12);
    q8_cu_igemm_free(&gm);
    return 0;
}
