/* GEMM family: q8_sgemm itself, then Gemm, MatMul, Conv, ConvTranspose
 * against plain reference loops. */
#include <string.h>

#include "common.h"
#include "fused_act.h"
#include "sgemm.h"
#include "testutil.h"

/* ---------------------------------------------------------------- sgemm */

static float *fmalloc(int64_t n) {
    float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    cr_assert(p);
    return p;
}

/* C = act(alpha*op(A)op(B) + beta*C + bias) in double. */
static void ref_gemm(const q8_sgemm_op *op, const float *c0, float *out) {
    for (int64_t i = 0; i < op->m; i++)
        for (int64_t j = 0; j < op->n; j++) {
            double s = 0;
            for (int64_t k = 0; k < op->k; k++) {
                double a = op->trans_a ? op->a[k * op->lda + i] : op->a[i * op->lda + k];
                double b = op->trans_b ? op->b[j * op->ldb + k] : op->b[k * op->ldb + j];
                s += a * b;
            }
            double v = op->alpha * s;
            if (op->beta != 0) v += (double)op->beta * c0[i * op->ldc + j];
            if (op->bias) v += op->bias[op->bias_per_col ? j : i];
            float f = (float)v;
            q8_act_apply(&op->act, &f, 1);
            out[i * op->ldc + j] = f;
        }
}

typedef struct gemm_case {
    int64_t m, n, k;
} gemm_case;

static const unsigned kernel_flags[] = {0, Q8_SGEMM_NO_AVX512, Q8_SGEMM_PORTABLE};

/* Runs op on copies of c0 with 1 and 3 threads and every kernel; checks
 * against the reference, the guard columns past n, and that 1 and 3
 * threads agree bit for bit. */
static void check_sgemm(q8_sgemm_op op, const float *c0, int64_t c_rows, const char *what) {
    int64_t csize = c_rows * op.ldc;
    float *want = fmalloc(csize), *got1 = fmalloc(csize), *got3 = fmalloc(csize);
    memcpy(want, c0, sizeof(float) * (size_t)csize);
    ref_gemm(&op, c0, want);
    q8_pool *pool = q8_pool_create(3);
    cr_assert(pool);
    for (size_t f = 0; f < sizeof kernel_flags / sizeof kernel_flags[0]; f++) {
        op.flags = kernel_flags[f];
        size_t sb = q8_sgemm_scratch_bytes(&op, 3);
        void *scratch = q8_aligned_alloc(sb ? sb : 1);
        memcpy(got1, c0, sizeof(float) * (size_t)csize);
        memcpy(got3, c0, sizeof(float) * (size_t)csize);
        op.c = got1;
        q8_sgemm_run(&op, NULL, scratch);
        op.c = got3;
        q8_sgemm_run(&op, pool, scratch);
        char nm[160];
        snprintf(nm, sizeof nm, "%s %lldx%lldx%lld ta=%d tb=%d %s", what, (long long)op.m,
                 (long long)op.n, (long long)op.k, op.trans_a, op.trans_b,
                 q8_sgemm_kernel_name(op.flags));
        float atol = 1e-5f * (float)(op.k + 1) + 1e-5f;
        q8t_assert_close(got1, want, csize, 1e-4f, atol, nm);
        cr_assert(memcmp(got1, got3, sizeof(float) * (size_t)csize) == 0,
                  "%s: 1 and 3 threads differ", nm);
        for (int64_t i = 0; i < c_rows; i++)
            for (int64_t j = op.n; j < op.ldc; j++)
                cr_assert(memcmp(&got1[i * op.ldc + j], &c0[i * op.ldc + j], 4) == 0,
                          "%s: guard column %lld of row %lld written", nm, (long long)j,
                          (long long)i);
        q8_aligned_free(scratch);
    }
    q8_pool_free(pool);
    free(want);
    free(got1);
    free(got3);
}

static void run_case(q8t_rng *r, gemm_case gc, bool ta, bool tb, float alpha, float beta,
                     int pad) {
    int64_t m = gc.m, n = gc.n, k = gc.k;
    int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    int64_t arows = ta ? k : m, brows = tb ? n : k;
    float *a = fmalloc(arows * lda), *b = fmalloc(brows * ldb), *c0 = fmalloc(m * ldc);
    q8t_fill(r, a, arows * lda, -1, 1);
    q8t_fill(r, b, brows * ldb, -1, 1);
    q8t_fill(r, c0, m * ldc, -1, 1);
    q8_sgemm_op op = {.m = m, .n = n, .k = k, .trans_a = ta, .trans_b = tb, .alpha = alpha,
                      .beta = beta, .a = a, .lda = lda, .b = b, .ldb = ldb, .ldc = ldc};
    check_sgemm(op, c0, m, "sgemm");
    free(a);
    free(b);
    free(c0);
}

static const gemm_case awkward[] = {
    {1, 1, 1},   {13, 7, 9},  {97, 65, 129}, {5, 3, 1},    {1, 17, 33},  {19, 1, 40},
    {6, 16, 8},  {12, 32, 7}, {25, 33, 300}, {40, 70, 513}, {2, 2, 0},   {7, 129, 3},
    {150, 40, 20}, {1, 300, 70}, {300, 1, 70},
};

Test(sgemm, awkward_shapes_all_transposes) {
    q8t_rng r = q8t_seed(1);
    for (size_t i = 0; i < sizeof awkward / sizeof awkward[0]; i++)
        for (int t = 0; t < 4; t++) run_case(&r, awkward[i], t & 1, t & 2, 1.0f, 0.0f, 0);
}

Test(sgemm, alpha_beta_and_leading_dims) {
    q8t_rng r = q8t_seed(2);
    for (size_t i = 0; i < sizeof awkward / sizeof awkward[0]; i++) {
        run_case(&r, awkward[i], false, true, 0.5f, 1.0f, 3);
        run_case(&r, awkward[i], true, false, -1.5f, 0.25f, 5);
    }
}

Test(sgemm, big_enough_to_block_and_thread) {
    q8t_rng r = q8t_seed(3);
    run_case(&r, (gemm_case){130, 1100, 300}, false, false, 1.0f, 0.0f, 0);
    run_case(&r, (gemm_case){301, 90, 530}, true, true, 1.0f, 1.0f, 1);
}

Test(sgemm, beta_zero_ignores_nan_in_c) {
    for (int t = 0; t < 3; t++) {
        int64_t m = t == 1 ? 1 : 9, n = t == 2 ? 1 : 20, k = 5;
        float a[9 * 5], b[5 * 20], c[9 * 20];
        q8t_rng r = q8t_seed(4);
        q8t_fill(&r, a, m * k, -1, 1);
        q8t_fill(&r, b, k * n, -1, 1);
        for (int i = 0; i < 9 * 20; i++) c[i] = NAN;
        size_t sb = q8_sgemm_scratch(m, n, k, 1);
        void *s = q8_aligned_alloc(sb ? sb : 1);
        q8_sgemm(NULL, false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n, s);
        for (int64_t i = 0; i < m * n; i++) cr_assert(!isnan(c[i]), "NaN at %lld", (long long)i);
        q8_aligned_free(s);
    }
}

Test(sgemm, bias_and_activations) {
    q8t_rng r = q8t_seed(5);
    const q8_act acts[] = {{Q8_ACT_RELU, 0, 0}, {Q8_ACT_CLIP, -0.5f, 0.7f},
                           {Q8_ACT_LEAKY_RELU, 0.1f, 0}, {Q8_ACT_SIGMOID, 0, 0},
                           {Q8_ACT_HARD_SIGMOID, 0.2f, 0.5f}, {Q8_ACT_NONE, 0, 0}};
    const gemm_case shapes[] = {{13, 7, 300}, {1, 37, 20}, {37, 1, 20}, {30, 70, 9}};
    for (size_t s = 0; s < 4; s++)
        for (size_t i = 0; i < 6; i++)
            for (int per_col = 0; per_col < 2; per_col++) {
                gemm_case gc = shapes[s];
                float *a = fmalloc(gc.m * gc.k), *b = fmalloc(gc.k * gc.n);
                float *c0 = fmalloc(gc.m * gc.n), *bias = fmalloc(gc.m + gc.n);
                q8t_fill(&r, a, gc.m * gc.k, -1, 1);
                q8t_fill(&r, b, gc.k * gc.n, -1, 1);
                q8t_fill(&r, c0, gc.m * gc.n, -1, 1);
                q8t_fill(&r, bias, gc.m + gc.n, -1, 1);
                q8_sgemm_op op = {.m = gc.m, .n = gc.n, .k = gc.k, .alpha = 1, .beta = 0.5f,
                                  .a = a, .lda = gc.k, .b = b, .ldb = gc.n, .ldc = gc.n,
                                  .bias = bias, .bias_per_col = per_col, .act = acts[i]};
                check_sgemm(op, c0, gc.m, "epilogue");
                free(a);
                free(b);
                free(c0);
                free(bias);
            }
}

/* Pre-packed operands give the very same bits as packing on the fly. */
Test(sgemm, prepacked_matches_unpacked) {
    q8t_rng r = q8t_seed(6);
    const gemm_case shapes[] = {{13, 7, 9}, {97, 65, 300}, {200, 1030, 20}, {2, 3, 600}};
    for (size_t s = 0; s < 4; s++)
        for (int t = 0; t < 4; t++)
            for (size_t f = 0; f < 3; f++) {
                gemm_case gc = shapes[s];
                bool ta = t & 1, tb = t & 2;
                unsigned flags = kernel_flags[f];
                float *a = fmalloc(gc.m * gc.k), *b = fmalloc(gc.k * gc.n);
                float *c1 = fmalloc(gc.m * gc.n), *c2 = fmalloc(gc.m * gc.n);
                q8t_fill(&r, a, gc.m * gc.k, -1, 1);
                q8t_fill(&r, b, gc.k * gc.n, -1, 1);
                q8_sgemm_op op = {.m = gc.m, .n = gc.n, .k = gc.k, .trans_a = ta, .trans_b = tb,
                                  .alpha = 1, .a = a, .lda = ta ? gc.m : gc.k, .b = b,
                                  .ldb = tb ? gc.k : gc.n, .c = c1, .ldc = gc.n, .flags = flags};
                size_t sb = q8_sgemm_scratch_bytes(&op, 1);
                void *s1 = q8_aligned_alloc(sb ? sb : 1);
                q8_sgemm_run(&op, NULL, s1);
                size_t pab = q8_sgemm_packed_a_bytes(gc.m, gc.k, 1, flags);
                size_t pbb = q8_sgemm_packed_b_bytes(gc.k, gc.n, 1, flags);
                cr_assert(pab > 0 && pbb > 0);
                void *pa = q8_aligned_alloc(pab), *pb = q8_aligned_alloc(pbb);
                q8_sgemm_pack_a(pa, ta, gc.m, gc.k, a, op.lda, 1, 0, flags);
                q8_sgemm_pack_b(pb, tb, gc.k, gc.n, b, op.ldb, 1, 0, flags);
                op.a_packed = pa;
                op.b_packed = pb;
                op.a = NULL;
                op.b = NULL;
                op.c = c2;
                q8_pool *pool = q8_pool_create(2);
                void *s2 = q8_aligned_alloc(q8_sgemm_scratch_bytes(&op, 2) + 64);
                q8_sgemm_run(&op, pool, s2);
                cr_assert(memcmp(c1, c2, sizeof(float) * (size_t)(gc.m * gc.n)) == 0,
                          "packed differs %lldx%lldx%lld t=%d %s", (long long)gc.m,
                          (long long)gc.n, (long long)gc.k, t, q8_sgemm_kernel_name(flags));
                q8_pool_free(pool);
                q8_aligned_free(s1);
                q8_aligned_free(s2);
                q8_aligned_free(pa);
                q8_aligned_free(pb);
                free(a);
                free(b);
                free(c1);
                free(c2);
            }
}

Test(sgemm, batched_with_offsets) {
    q8t_rng r = q8t_seed(7);
    int64_t m = 9, n = 21, k = 17, batch = 5;
    float *a = fmalloc(2 * m * k), *b = fmalloc(batch * k * n), *c = fmalloc(batch * m * n);
    float *want = fmalloc(batch * m * n), *bias = fmalloc(2 * n);
    q8t_fill(&r, a, 2 * m * k, -1, 1);
    q8t_fill(&r, b, batch * k * n, -1, 1);
    q8t_fill(&r, bias, 2 * n, -1, 1);
    int64_t offs[5 * 4];
    for (int64_t g = 0; g < batch; g++) {
        offs[4 * g] = (g % 2) * m * k;
        offs[4 * g + 1] = g * k * n;
        offs[4 * g + 2] = g * m * n;
        offs[4 * g + 3] = (g % 2) * n;
        q8_sgemm_op one = {.m = m, .n = n, .k = k, .alpha = 1, .a = a + offs[4 * g], .lda = k,
                           .b = b + offs[4 * g + 1], .ldb = n, .ldc = n,
                           .bias = bias + offs[4 * g + 3], .bias_per_col = true,
                           .act = {Q8_ACT_RELU, 0, 0}};
        ref_gemm(&one, NULL, want + g * m * n);
    }
    q8_sgemm_op op = {.m = m, .n = n, .k = k, .alpha = 1, .a = a, .lda = k, .b = b, .ldb = n,
                      .c = c, .ldc = n, .bias = bias, .bias_per_col = true,
                      .act = {Q8_ACT_RELU, 0, 0}, .batch = batch, .offs = offs};
    q8_pool *pool = q8_pool_create(3);
    void *s = q8_aligned_alloc(q8_sgemm_scratch_bytes(&op, 3));
    q8_sgemm_run(&op, pool, s);
    q8t_assert_close(c, want, batch * m * n, 1e-5f, 1e-5f, "batched");
    q8_pool_free(pool);
    q8_aligned_free(s);
    free(a);
    free(b);
    free(c);
    free(want);
    free(bias);
}
