/* The compressed-weight INT8 GEMV (kernels/cpu/gemm/igemv_sparse.h)
 * against the dense INT8 GEMM on the same problem, as q8.QGemm runs each
 * (activations packed per call). Not built by CMake: a developer tool.
 * Build and run from the repository root after a Release build:
 *   cc -O2 -Isrc/include -Isrc/core -Ikernels/cpu -Ikernels/cpu/gemm -Ikernels/common \
 *      tools/bench/igemv_sparse_bench.c build/libq8.a -lpthread -lm -lz -o build/igemv_sparse_bench
 *   build/igemv_sparse_bench [N K density [threads [c]]]   (default: 128 3136 0.3 1)
 * (c: the compressed side on the C kernel)
 * Prints, for M = 1..4 rows, the median microseconds per call of each and
 * their ratio, and the bytes each holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "common.h"
#include "igemv_sparse.h"

#define RUNS 301

int main(int argc, char **argv) {
    int64_t N = argc > 1 ? atoll(argv[1]) : 128, K = argc > 2 ? atoll(argv[2]) : 3136;
    double density = argc > 3 ? atof(argv[3]) : 0.3;
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    q8_igemm_path sp = argc > 5 && !strcmp(argv[5], "c") ? Q8_IGEMM_C : Q8_IGEMM_AUTO;
    q8_pool *pool = threads > 1 ? q8_pool_create(threads) : NULL;
    uint64_t s = 88172645463325252ull;
    int8_t *W = malloc((size_t)(N * K)), *A = malloc((size_t)(4 * K));
    for (int64_t i = 0; i < N * K; i++) {
        s = s * 6364136223846793005ull + 1;
        W[i] = (double)(s >> 11) * 0x1p-53 < density ? (int8_t)((s >> 20) | 1) : 0;
    }
    for (int64_t i = 0; i < 4 * K; i++) A[i] = (int8_t)((s = s * 6364136223846793005ull + 1) >> 56);
    int32_t *init = calloc((size_t)N, sizeof(int32_t)), *mult = malloc(sizeof(int32_t) * N),
            *shift = malloc(sizeof(int32_t) * N);
    for (int64_t n = 0; n < N; n++) {
        q8_requant r = q8_requant_make(0.001 + 1e-6 * (double)n);
        mult[n] = r.mult, shift[n] = r.shift;
    }
    q8_epilogue e = {.kind = Q8_EPI_I8, .chan = Q8_CH_COL, .mult = mult, .shift = shift,
                     .lo = -128, .hi = 127};
    uint8_t *lanes = q8_aligned_alloc(q8_ig_lanes_bytes(N, K));
    q8_ig_pack_lanes_jk(W, K, N, K, false, lanes, NULL);
    size_t off = 0;
    q8_isp isp;
    q8_isp_plan(&isp, N, K, q8_isp_nonzeros(W, (size_t)(N * K)), &off);
    void *blob = q8_aligned_alloc(off);
    q8_isp_pack(&isp, W, blob, NULL);
    uint8_t *rows = q8_aligned_alloc(q8_ig_rows_bytes(4, K));
    uint8_t *xs = q8_aligned_alloc((size_t)(4 * q8_isp_ldx(K)));
    int8_t *C1 = malloc((size_t)(4 * N)), *C2 = malloc((size_t)(4 * N));
    printf("N %lld K %lld density %.3f (stored %.3f) threads %d: dense %zu B, compressed %zu B "
           "(%.3f)\n",
           (long long)N, (long long)K, density, (double)isp.nnz / (double)(N * K), threads,
           q8_ig_lanes_bytes(N, K), off, (double)off / (double)q8_ig_lanes_bytes(N, K));
    for (int64_t M = 1; M <= 4; M++) {
        double td[RUNS], ts[RUNS];
        for (int r = 0; r < RUNS; r++) {
            double t0 = bench_now();
            q8_ig_pack_rows(A, K, M, K, true, rows, NULL, pool);
            q8_igemm_args a = {.I = M, .J = N, .K = K, .rows = rows, .lanes = lanes,
                               .rows_u8 = true, .init_col = init, .epi = &e, .out = C1,
                               .ldo = N};
            q8_igemm(&a, pool, Q8_IGEMM_AUTO);
            double t1 = bench_now();
            q8_isp_pack_x(A, M, K, xs);
            q8_isp_run(&isp, blob, xs, M, init, &e, C2, N, sp, pool);
            double t2 = bench_now();
            td[r] = 1e6 * (t1 - t0), ts[r] = 1e6 * (t2 - t1);
        }
        qsort(td, RUNS, sizeof *td, bench_cmp_double);
        qsort(ts, RUNS, sizeof *ts, bench_cmp_double);
        printf("M %lld: dense %.2f us, compressed %.2f us (%s), ratio %.2f%s\n", (long long)M,
               td[RUNS / 2], ts[RUNS / 2], q8_isp_gemv_fast(sp) ? "avx512" : "C",
               ts[RUNS / 2] / td[RUNS / 2], memcmp(C1, C2, (size_t)(M * N)) ? " DIFFERENT" : "");
    }
    q8_pool_free(pool);
    return 0;
}
