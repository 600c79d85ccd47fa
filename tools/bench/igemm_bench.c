/* Throughput of the INT8 GEMM per code path (not built by CMake: a
 * developer tool). Build and run from the repository root after a Release
 * build:
 *   cc -O2 -Isrc/include -Isrc/core -Ikernels/cpu -Ikernels/cpu/gemm -Ikernels/common \
 *      tools/bench/igemm_bench.c build/libq8.a -lprotobuf-c -lpthread -lm -o build/igemm_bench
 *   build/igemm_bench [M N K [threads]]     (default: 64 3136 576, 512^3)
 * C[m][n] = sum_k A[m][k] * B[n][k], int8 output with per-channel
 * requantization, two ways:
 *   gemm: as QGemm runs it: A (activations) packed per call, B pre-packed
 *   conv: as QConv runs it: A = weights pre-packed, B = activations given
 *         k-major ([K][N], the im2col layout) and packed per call
 * GOP/s counts 2*M*N*K per call (packing included), median of the runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "common.h"
#include "igemm.h"

/* What each call packs: the activations. B is read as [K][N] for conv. */
static void pack(bool conv, const int8_t *A, const int8_t *B, int64_t M, int64_t N, int64_t K,
                 uint8_t *rows, uint8_t *lanes, q8_pool *pool) {
    if (conv) q8_ig_pack_lanes_kj(B, N, K, N, true, lanes, pool);
    else q8_ig_pack_rows(A, K, M, K, true, rows, NULL, pool);
}

static void bench(int64_t M, int64_t N, int64_t K, int threads, bool conv) {
    int8_t *A = malloc((size_t)(M * K)), *B = malloc((size_t)(N * K));
    uint64_t s = 88172645463325252ull;
    for (int64_t i = 0; i < M * K; i++) A[i] = (int8_t)((s = s * 6364136223846793005ull + 1) >> 56);
    for (int64_t i = 0; i < N * K; i++) B[i] = (int8_t)((s = s * 6364136223846793005ull + 1) >> 56);
    uint8_t *rows = q8_aligned_alloc(q8_ig_rows_bytes(M, K));
    uint8_t *lanes = q8_aligned_alloc(q8_ig_lanes_bytes(N, K));
    /* per-channel requantization: channels are columns (gemm) or rows (conv) */
    int64_t nch = conv ? M : N;
    int32_t *init = calloc((size_t)N, sizeof(int32_t)), *mult = malloc(sizeof(int32_t) * nch),
            *shift = malloc(sizeof(int32_t) * nch);
    int32_t *init_m = calloc((size_t)M, sizeof(int32_t));
    if (conv) q8_ig_pack_rows(A, K, M, K, false, rows, init_m, NULL);
    else q8_ig_pack_lanes_jk(B, K, N, K, false, lanes, init);
    for (int64_t n = 0; n < N; n++) init[n] *= -128;
    for (int64_t m = 0; m < M; m++) init_m[m] *= -128;
    for (int64_t c = 0; c < nch; c++) {
        q8_requant r = q8_requant_make(0.001 + 1e-6 * (double)c);
        mult[c] = r.mult, shift[c] = r.shift;
    }
    int8_t *C = malloc((size_t)(M * N));
    q8_epilogue e = {.kind = Q8_EPI_I8, .chan = conv ? Q8_CH_ROW : Q8_CH_COL, .mult = mult,
                     .shift = shift, .lo = -128, .hi = 127};
    q8_pool *pool = threads > 1 ? q8_pool_create(threads) : NULL;
    printf("%s M=%lld N=%lld K=%lld threads=%d\n", conv ? "conv" : "gemm", (long long)M,
           (long long)N, (long long)K, threads);
    for (int p = Q8_IGEMM_C; p < Q8_IGEMM_PATH_COUNT; p++) {
        if (!q8_igemm_path_supported(p)) continue;
        q8_igemm_args a = {.I = M, .J = N, .K = K, .rows = rows, .lanes = lanes,
                           .rows_u8 = !conv, .init_col = conv ? NULL : init,
                           .init_row = conv ? init_m : NULL, .epi = &e, .out = C, .ldo = N};
        double ops = 2.0 * (double)M * (double)N * (double)K, t[64];
        int runs = 0;
        double t_end = bench_now() + (p == Q8_IGEMM_C ? 3.0 : 1.0);
        for (int w = 0; w < 2; w++) {
            pack(conv, A, B, M, N, K, rows, lanes, pool);
            q8_igemm(&a, pool, p);
        }
        while (runs < 64 && (runs < 5 || bench_now() < t_end)) {
            double t0 = bench_now();
            pack(conv, A, B, M, N, K, rows, lanes, pool);
            q8_igemm(&a, pool, p);
            t[runs++] = bench_now() - t0;
        }
        qsort(t, (size_t)runs, sizeof t[0], bench_cmp_double);
        printf("  %-11s %8.1f GOP/s  (median %.3f ms of %d runs)\n", q8_igemm_path_name(p),
               ops / t[runs / 2] * 1e-9, t[runs / 2] * 1e3, runs);
    }
    q8_pool_free(pool);
    free(A), free(B), free(C), free(init), free(init_m), free(mult), free(shift);
    q8_aligned_free(rows), q8_aligned_free(lanes);
}

int main(int argc, char **argv) {
    for (int conv = 0; conv < 2; conv++) {
        if (argc >= 4) {
            bench(atoll(argv[1]), atoll(argv[2]), atoll(argv[3]), argc > 4 ? atoi(argv[4]) : 1,
                  conv);
            continue;
        }
        bench(64, 3136, 576, 1, conv);
        bench(512, 512, 512, 1, conv);
    }
    return 0;
}
