/* The compressed-weight INT8 GEMV (kernels/cpu/gemm/igemv_sparse.h): the
 * form round-trips, and every kernel gives the exact sums of the
 * definition on random and extreme inputs, awkward shapes and densities
 * (0, all-zero rows, a few, half, all), through every epilogue kind. */
#include <string.h>

#include "igemv_sparse.h"
#include "isp_shuffle_tab.h"
#include "qepi.h"
#include "testutil.h"

typedef void (*block_fn)(const q8_isp *, const void *, const uint8_t *, int64_t, int64_t,
                         int64_t, int64_t, int32_t *);

/* mode 0: random values; 1..4: every nonzero weight and every x at the
 * extremes (w, x) = (-128, -128), (127, 127), (-128, 127), (127, -128) */
static int8_t rnd_w(q8t_rng *g, double density, int mode) {
    if (q8t_uniform(g, 0, 1) >= density) return 0;
    if (mode == 1 || mode == 3) return -128;
    if (mode == 2 || mode == 4) return 127;
    int8_t v = (int8_t)(q8t_next(g) >> 56);
    return v ? v : 1;
}

/* Build the form of a random W; check it against W and expanded back; run
 * each kernel on rows [0, M) x channels [n0, n1) and compare with int64
 * sums. */
static void check_shape(int64_t N, int64_t K, int64_t M, double density, int mode,
                        uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    int8_t *w = malloc((size_t)(N * K + 1)), *x = malloc((size_t)(M * K + 1));
    for (int64_t i = 0; i < N * K; i++) w[i] = rnd_w(&g, density, mode);
    if (N > 2) memset(w + K, 0, (size_t)K); /* an all-zero row */
    for (int64_t i = 0; i < M * K; i++)
        x[i] = mode ? (int8_t)(mode == 1 || mode == 4 ? -128 : 127) : (int8_t)(q8t_next(&g) >> 56);
    size_t off = 0;
    q8_isp s;
    q8_isp_plan(&s, N, K, q8_isp_nonzeros(w, (size_t)(N * K)), &off);
    size_t nnz = 0;
    for (int64_t i = 0; i < N * K; i++) nnz += w[i] != 0;
    cr_assert_eq(s.nnz, nnz);
    void *blob = q8_aligned_alloc(off);
    int32_t *rowsum = malloc(sizeof(int32_t) * (size_t)(N + 1));
    q8_isp_pack(&s, w, blob, rowsum);
    for (int64_t n = 0; n < N; n++) {
        int32_t want = 0;
        for (int64_t k = 0; k < K; k++) want += w[n * K + k];
        cr_assert_eq(rowsum[n], want, "rowsum[%lld]", (long long)n);
    }
    /* the rows expanded back (the GEMM's R made from the form) */
    uint8_t *rows = malloc((size_t)(N * K + 1));
    for (int x = 0; x < Q8_ISP_EXPANDER_COUNT; x++) {
        if (!q8_isp_expander_supported(x)) continue;
        int64_t r0 = N > 5 ? 2 : 0;
        memset(rows, 0x5a, (size_t)(N * K + 1));
        q8_isp_rows(&s, blob, r0, N - r0, rows, x);
        cr_assert(memcmp(rows, w + r0 * K, (size_t)((N - r0) * K)) == 0,
                  "rows (expander %d): N %lld K %lld density %g", x, (long long)N, (long long)K,
                  density);
        cr_assert_eq(rows[(N - r0) * K], 0x5a, "rows (expander %d): wrote past the end", x);
    }
    free(rows);
    int64_t ldx = q8_isp_ldx(K);
    uint8_t *xs = q8_aligned_alloc((size_t)(M * ldx + 1));
    q8_isp_pack_x(x, M, K, xs);
    block_fn fns[2] = {q8_isp_block_c, NULL};
    const char *names[2] = {"c", "avx512"};
#if defined(__x86_64__) || defined(__i386__)
    if (q8_isp_gemv_fast(Q8_IGEMM_AUTO)) fns[1] = q8_isp_block_avx512;
#endif
    int64_t n0 = N > 5 ? 3 : 0, n1 = N;
    int32_t *acc = malloc(sizeof(int32_t) * (size_t)(M * (n1 - n0) + 1));
    for (int f = 0; f < 2; f++) {
        if (!fns[f]) continue;
        fns[f](&s, blob, xs, ldx, M, n0, n1, acc);
        for (int64_t r = 0; r < M; r++)
            for (int64_t n = n0; n < n1; n++) {
                int64_t want = 0;
                for (int64_t k = 0; k < K; k++) want += (int64_t)x[r * K + k] * w[n * K + k];
                want += 128 * (int64_t)rowsum[n]; /* X is read as x + 128 */
                cr_assert_eq(acc[r * (n1 - n0) + n - n0], (int32_t)want,
                             "%s: N %lld K %lld M %lld density %g mode %d: [%lld][%lld]",
                             names[f], (long long)N, (long long)K, (long long)M, density, mode,
                             (long long)r, (long long)n);
            }
    }
    free(acc);
    q8_aligned_free(xs);
    free(rowsum);
    q8_aligned_free(blob);
    free(w);
    free(x);
}

/* The shuffle expanders' table, bit by bit against its definition. */
Test(igemv_sparse, shuffle_table) {
    for (int m = 0; m < 256; m++)
        for (int i = 0, below = 0; i < 8; i++) {
            int want = m >> i & 1 ? below++ : 0x80;
            cr_assert_eq(q8_isp_shuffle_tab[m][i], want, "mask %d lane %d", m, i);
        }
}

/* Every expander a CPU has, and which one the ops take on each GEMM path. */
Test(igemv_sparse, expanders) {
    cr_assert(q8_isp_expander_supported(Q8_ISP_EXPAND_C));
    for (int p = 0; p < Q8_IGEMM_PATH_COUNT; p++) {
        if (!q8_igemm_path_supported(p)) continue;
        q8_isp_expander x = q8_isp_expander_for(p);
        cr_assert(q8_isp_expander_supported(x), "path %s: expander %d", q8_igemm_path_name(p), x);
        if (q8_isp_gemv_fast(p)) cr_assert_eq(x, Q8_ISP_EXPAND_AVX512);
#if defined(__aarch64__)
        cr_assert_eq(x, Q8_ISP_EXPAND_SHUFFLE, "path %s", q8_igemm_path_name(p));
#endif
    }
}

Test(igemv_sparse, exact_on_awkward_shapes) {
    const int64_t Ns[] = {1, 3, 4, 9, 17, 40};
    const int64_t Ks[] = {1, 5, 15, 16, 17, 63, 64, 65, 200, 3136};
    const double ds[] = {0, 0.02, 0.3, 0.5, 1};
    uint64_t seed = 1;
    for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
        for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
            for (size_t d = 0; d < sizeof ds / sizeof *ds; d++, seed++)
                check_shape(Ns[a], Ks[b], 1 + (int64_t)(seed % 3), ds[d], 0, seed);
}

Test(igemv_sparse, extreme_values) {
    for (int mode = 1; mode <= 4; mode++) {
        check_shape(9, 4097, 2, 1, mode, 90 + mode);
        check_shape(33, 131071, 1, 0.7, mode, 95 + mode); /* the longest K infer allows */
    }
}

/* The run (pack X, kernels, init, epilogue) against the scalar epilogue;
 * the second shape's blocks are split over the threads (K long enough that
 * one block of 32 channels is a task). */
static void check_run(int64_t N, int64_t K, int64_t M, uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    int8_t *w = malloc((size_t)(N * K)), *x = malloc((size_t)(M * K));
    for (int64_t i = 0; i < N * K; i++) w[i] = rnd_w(&g, 0.35, 0);
    for (int64_t i = 0; i < M * K; i++) x[i] = (int8_t)(q8t_next(&g) >> 56);
    size_t off = 0;
    q8_isp s;
    q8_isp_plan(&s, N, K, q8_isp_nonzeros(w, (size_t)(N * K)), &off);
    void *blob = q8_aligned_alloc(off);
    int32_t *init = malloc(sizeof(int32_t) * (size_t)N), *mult = malloc(sizeof(int32_t) * (size_t)N);
    int32_t *shift = malloc(sizeof(int32_t) * (size_t)N), *acc = malloc(sizeof(int32_t) * (size_t)N);
    float *scale = malloc(sizeof(float) * (size_t)N), *out = malloc(sizeof(float) * (size_t)(M * N));
    float *want = malloc(sizeof(float) * (size_t)N);
    q8_isp_pack(&s, w, blob, init);
    for (int64_t n = 0; n < N; n++) {
        int32_t bias = (int32_t)(q8t_next(&g) >> 48) - 32768;
        init[n] = bias - 128 * init[n];
        q8_requant r = q8_requant_make(q8t_uniform(&g, 1e-4f, 1e-2f));
        mult[n] = r.mult, shift[n] = r.shift;
        scale[n] = q8t_uniform(&g, 1e-4f, 1e-2f);
    }
    uint8_t *xs = q8_aligned_alloc((size_t)(M * q8_isp_ldx(K)));
    q8_isp_pack_x(x, M, K, xs);
    q8_epilogue es[3] = {
        {.kind = Q8_EPI_I32, .chan = Q8_CH_COL},
        {.kind = Q8_EPI_I8, .chan = Q8_CH_COL, .mult = mult, .shift = shift, .lo = -100, .hi = 90},
        {.kind = Q8_EPI_F32, .chan = Q8_CH_COL, .scale = scale, .flo = -1, .fhi = 1, .clip = true}};
    const q8_igemm_path paths[] = {Q8_IGEMM_C, Q8_IGEMM_AUTO};
    for (int e = 0; e < 3; e++)
        for (int p = 0; p < 2; p++)
            for (int th = 1; th <= 3; th += 2) {
                memset(out, 0x7f, sizeof(float) * (size_t)(M * N)); /* no stale outputs */
                q8_pool *pool = q8_pool_create(th);
                q8_isp_run(&s, blob, xs, M, init, &es[e], out, N, paths[p], pool);
                q8_pool_free(pool);
                size_t es_bytes = es[e].kind == Q8_EPI_I8 ? 1 : 4;
                for (int64_t r = 0; r < M; r++) {
                    for (int64_t n = 0; n < N; n++) {
                        int64_t sum = init[n];
                        for (int64_t k = 0; k < K; k++)
                            sum += (int64_t)(x[r * K + k] + 128) * w[n * K + k];
                        acc[n] = (int32_t)sum;
                    }
                    q8_epilogue_row_c(&es[e], acc, N, 0, want);
                    cr_assert_eq(memcmp((char *)out + r * N * (int64_t)es_bytes, want,
                                        (size_t)N * es_bytes),
                                 0, "epilogue %d path %d threads %d row %lld", e, p, th,
                                 (long long)r);
                }
            }
    q8_aligned_free(xs);
    q8_aligned_free(blob);
    free(w);
    free(x);
    free(init), free(mult), free(shift), free(acc), free(scale), free(out), free(want);
}

Test(igemv_sparse, run_through_each_epilogue) {
    check_run(70, 300, 3, 7);
    check_run(100, 8200, 1, 8);
}
