/* Micro benchmark for q8_sgemm (not built by CMake). Build after a Release
 * build of libq8:
 *   cc -O2 -Isrc -Ikernels/cpu tools/bench/sgemm_bench.c build/libq8.a \
 *      $(pkg-config --libs libprotobuf-c) -lpthread -lm -o /tmp/sgemm_bench
 *   /tmp/sgemm_bench [threads] [MxNxK[tTN]...]   e.g. 256x256x256 64x3136x576
 * A trailing "t" after K sets transB (weights stored N x K). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "common.h"
#include "sgemm.h"

static void bench(q8_pool *pool, int nt, int64_t m, int64_t n, int64_t k, bool tb,
                  unsigned flags, bool prepack) {
    float *a = q8_aligned_alloc(sizeof(float) * (size_t)(m * k));
    float *b = q8_aligned_alloc(sizeof(float) * (size_t)(k * n));
    float *c = q8_aligned_alloc(sizeof(float) * (size_t)(m * n));
    for (int64_t i = 0; i < m * k; i++) a[i] = (float)((i * 7) % 13) * 0.1f;
    for (int64_t i = 0; i < k * n; i++) b[i] = (float)((i * 5) % 11) * 0.1f;
    q8_sgemm_op op = {.m = m, .n = n, .k = k, .trans_b = tb, .alpha = 1, .beta = 0, .a = a,
                      .lda = k, .b = b, .ldb = tb ? k : n, .c = c, .ldc = n, .flags = flags};
    void *pa = NULL;
    if (prepack) {
        size_t pb = q8_sgemm_packed_a_bytes(m, k, 1, flags);
        if (pb) {
            pa = q8_aligned_alloc(pb);
            q8_sgemm_pack_a(pa, false, m, k, a, k, 1, 0, flags);
            op.a_packed = pa;
        }
    }
    void *s = q8_aligned_alloc(q8_sgemm_scratch_bytes(&op, nt) + 64);
    double flops = 2.0 * (double)m * (double)n * (double)k, best = 1e30;
    /* Best single run of many: the machine is shared, the minimum is the
     * least disturbed figure. */
    int reps = (int)(3e9 / flops) + 20;
    if (reps > 3000) reps = 3000;
    for (int i = 0; i < reps; i++) {
        double t0 = bench_now();
        q8_sgemm_run(&op, pool, s);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("%-9s %s%lldx%lldx%lld%s threads=%d: %8.3f ms  %7.1f GFLOP/s\n",
           q8_sgemm_kernel_name(flags), prepack ? "prepackedA " : "", (long long)m, (long long)n,
           (long long)k, tb ? "t" : "", nt, best * 1e3, flops / best * 1e-9);
    q8_aligned_free(a);
    q8_aligned_free(b);
    q8_aligned_free(c);
    q8_aligned_free(s);
    q8_aligned_free(pa);
}

int main(int argc, char **argv) {
    int nt = argc > 1 ? atoi(argv[1]) : 1;
    q8_pool *pool = nt > 1 ? q8_pool_create(nt) : NULL;
    const char *defs[] = {"256x256x256", "64x3136x576", "1x1000x512t", "64x1000x512t"};
    int nshape = argc > 2 ? argc - 2 : 4;
    unsigned flagsets[] = {0, Q8_SGEMM_NO_AVX512, Q8_SGEMM_PORTABLE};
    for (int i = 0; i < nshape; i++) {
        const char *sh = argc > 2 ? argv[i + 2] : defs[i];
        long long m, n, k;
        if (sscanf(sh, "%lldx%lldx%lld", &m, &n, &k) != 3) return 2;
        bool tb = strchr(sh, 't') != NULL;
        for (int f = 0; f < 3; f++) bench(pool, nt, m, n, k, tb, flagsets[f], false);
        bench(pool, nt, m, n, k, tb, 0, true);
    }
    q8_pool_free(pool);
    return 0;
}
