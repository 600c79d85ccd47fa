/* GEMM family: q8_sgemm itself, then Gemm, MatMul, Conv, ConvTranspose
 * against plain reference loops. */
#include <math.h>
#include <string.h>

#include "common.h"
#include "conv_impl.h"
#include "conv_ocl.h"
#include "cpu_features.h"
#include "fused_act.h"
#include "sgemm.h"
#include "testutil.h"
#include "vmath.h"

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

/* 0 takes the 12-row AVX-512 kernel where M suits it; Q8_SGEMM_MR8 the
 * 8-row one always. */
static const unsigned kernel_flags[] = {0, Q8_SGEMM_MR8, Q8_SGEMM_NO_AVX512, Q8_SGEMM_PORTABLE};
#define N_KERNEL_FLAGS (sizeof kernel_flags / sizeof kernel_flags[0])

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
    for (size_t f = 0; f < N_KERNEL_FLAGS; f++) {
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

/* A last panel of 1 to 4 columns runs its own kernel (rows in the lanes):
 * each of its columns bit for bit what a whole panel computes for it (the
 * same B columns as part of a 64-column GEMM), with alpha, beta, a partial
 * row tile and K blocks. */
Test(sgemm, narrow_last_panel_same_bits_as_whole_panels) {
    q8t_rng r = q8t_seed(4);
    const int64_t ns[] = {33, 34, 35, 36, 65, 1 + 32 * 3};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++)
        for (int v = 0; v < 2; v++) {
            int64_t m = v ? 13 : 24, k = v ? 700 : 37, n = ns[t], wide = 128;
            float *a = fmalloc(m * k), *b = fmalloc(k * wide), *c0 = fmalloc(m * wide);
            float *cn = fmalloc(m * wide), *cw = fmalloc(m * wide);
            q8t_fill(&r, a, m * k, -1, 1);
            q8t_fill(&r, b, k * wide, -1, 1);
            q8t_fill(&r, c0, m * wide, -1, 1);
            memcpy(cn, c0, sizeof(float) * (size_t)(m * wide));
            memcpy(cw, c0, sizeof(float) * (size_t)(m * wide));
            q8_sgemm_op op = {.m = m, .n = n, .k = k, .alpha = v ? 0.75f : 1.0f,
                              .beta = v ? 0.5f : 0.0f, .a = a, .lda = k, .b = b, .ldb = wide,
                              .c = cn, .ldc = wide};
            size_t sb = q8_sgemm_scratch_bytes(&op, 1);
            void *scratch = q8_aligned_alloc(sb ? sb : 1);
            q8_sgemm_run(&op, NULL, scratch);
            q8_aligned_free(scratch);
            op.n = wide;
            op.c = cw;
            sb = q8_sgemm_scratch_bytes(&op, 1);
            scratch = q8_aligned_alloc(sb ? sb : 1);
            q8_sgemm_run(&op, NULL, scratch);
            q8_aligned_free(scratch);
            for (int64_t i = 0; i < m; i++)
                cr_assert(memcmp(cn + i * wide, cw + i * wide, sizeof(float) * (size_t)n) == 0,
                          "n %lld, row %lld (%s)", (long long)n, (long long)i,
                          q8_sgemm_kernel_name(0));
            free(a);
            free(b);
            free(c0);
            free(cn);
            free(cw);
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

/* q8_act_apply runs whole vectors and then a scalar tail: every value,
 * special ones included, must come out bit for bit as one value at a time
 * does, and as each kind's definition (src/core/ops/act.h) gives it. */
static float act_ref(const q8_act *a, float v, bool fma) {
    switch (a->kind) {
    case Q8_ACT_LEAKY_RELU: return v < 0.0f ? v * a->p0 : v;
    case Q8_ACT_HARD_SWISH: {
        /* p0*v + p1 rounded once (an FMA-contracting build) or twice */
        volatile float pv = a->p0 * v;
        float h = fma ? fmaf(a->p0, v, a->p1) : pv + a->p1;
        return h <= 0.0f ? -0.0f : h >= 1.0f ? v : v * h;
    }
    case Q8_ACT_RELU: return v < 0.0f ? 0.0f : v; /* NaN and -0 stay, as in the Relu op */
    case Q8_ACT_SIGMOID: return q8_vsigmoid(v); /* the Sigmoid op's bits */
    default: return v;
    }
}

static bool same_float(float a, float b) {
    return isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof a) == 0;
}

Test(fused_act, vectors_and_tails_match_the_formula) {
    const q8_act acts[] = {{Q8_ACT_HARD_SWISH, 1.0f / 6, 0.5f}, {Q8_ACT_HARD_SWISH, 0.25f, 0.0f},
                           {Q8_ACT_LEAKY_RELU, 0.1f, 0}, {Q8_ACT_RELU, 0, 0},
                           {Q8_ACT_SIGMOID, 0, 0}};
    /* +-87.5 and beyond: Sigmoid's results turn subnormal, or 1 */
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -3.0f, 3.0f,
                             -2.9999998f, 2.9999998f, 1e-30f, -1e-30f, 4.0f, -4.0f,
                             1.5f, -1.5f, 0.75f, -87.5f, 100.0f, -95.0f, -103.0f};
    const int n_special = (int)(sizeof special / sizeof special[0]);
    q8t_rng r = q8t_seed(7);
    float x[41], y[41];
    for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
        for (int64_t len = 0; len <= 41; len++) {
            for (int64_t i = 0; i < len; i++)
                x[i] = (i * 7 + len) % 3 ? special[(i * 5 + len) % n_special]
                                         : q8t_uniform(&r, -4, 4);
            memcpy(y, x, sizeof x);
            q8_act_apply(&acts[ai], y, len);
            for (int64_t i = 0; i < len; i++) {
                float one = x[i], want = act_ref(&acts[ai], x[i], false);
                float want_fma = act_ref(&acts[ai], x[i], true);
                q8_act_apply(&acts[ai], &one, 1);
                cr_assert(same_float(one, y[i]) &&
                              (same_float(want, y[i]) || same_float(want_fma, y[i])),
                          "act %d len %lld at %lld: x %g got %g, alone %g, formula %g / %g",
                          (int)acts[ai].kind, (long long)len, (long long)i, x[i], y[i], one,
                          want, want_fma);
            }
        }
}

/* The block epilogue: bias then act on rows x cols of a strided block, the
 * same bits as row by row, and nothing outside the block touched. */
Test(fused_act, block_matches_rows) {
    const q8_act acts[] = {{Q8_ACT_NONE, 0, 0}, {Q8_ACT_RELU, 0, 0},
                           {Q8_ACT_HARD_SWISH, 1.0f / 6, 0.5f}, {Q8_ACT_CLIP, -0.5f, 0.7f}};
    q8t_rng r = q8t_seed(8);
    enum { ROWS = 7, COLS = 19, LD = 23 };
    float x[ROWS * LD], y[ROWS * LD], want[ROWS * LD], bias[LD];
    q8t_fill(&r, bias, LD, -1, 1);
    for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
        for (int bmode = 0; bmode < 3; bmode++) {
            q8t_fill(&r, x, ROWS * LD, -4, 4);
            memcpy(y, x, sizeof x);
            memcpy(want, x, sizeof x);
            for (int i = 0; i < ROWS; i++) {
                for (int j = 0; j < COLS; j++)
                    want[i * LD + j] += bmode == 1 ? bias[i] : bmode == 2 ? bias[j] : 0.0f;
                q8_act_apply(&acts[ai], want + i * LD, COLS);
            }
            q8_act_apply_block(&acts[ai], y, ROWS, COLS, LD, bmode == 1 ? bias : NULL,
                               bmode == 2 ? bias : NULL);
            cr_assert(memcmp(y, want, sizeof y) == 0, "act %d bias mode %d",
                      (int)acts[ai].kind, bmode);
        }
}

/* The 12-row AVX-512 tiles (M a multiple of 12, or >= 128: full and
 * partial row tiles) give the 8-row kernel's bits: the same product and
 * sum per element. K blocks, beta, the fused epilogues, a pre-packed A,
 * narrow and half last panels, 1 and 3 threads. */
Test(sgemm, rows12_same_bits_as_rows8) {
    q8t_rng r = q8t_seed(9);
    const int64_t ms[] = {12, 24, 36, 128, 131, 144, 200};
    const int64_t ns[] = {3, 17, 33, 100};
    const int64_t ks[] = {1, 7, 257, 600};
    const q8_act acts[] = {{Q8_ACT_NONE, 0, 0}, {Q8_ACT_RELU, 0, 0}, {Q8_ACT_CLIP, -0.25f, 6},
                           {Q8_ACT_HARD_SWISH, 1.0f / 6, 0.5f}};
    q8_pool *pool = q8_pool_create(3);
    cr_assert(pool);
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                int64_t m = ms[mi], n = ns[ni], k = ks[ki];
                int v = (int)(mi + ni + ki);
                float *a = fmalloc(m * k), *b = fmalloc(k * n), *bias = fmalloc(m);
                float *c0 = fmalloc(m * n), *c8 = fmalloc(m * n), *c12 = fmalloc(m * n);
                q8t_fill(&r, a, m * k, -1, 1);
                q8t_fill(&r, b, k * n, -1, 1);
                q8t_fill(&r, bias, m, -1, 1);
                q8t_fill(&r, c0, m * n, -1, 1);
                q8_sgemm_op op = {.m = m, .n = n, .k = k, .alpha = 1.25f,
                                  .beta = v & 1 ? 0.5f : 0.0f, .a = a, .lda = k, .b = b,
                                  .ldb = n, .ldc = n, .bias = v & 2 ? bias : NULL,
                                  .act = acts[v % 4]};
                void *pa = NULL;
                for (int pass = 0; pass < 2; pass++) {
                    op.flags = pass ? 0 : Q8_SGEMM_MR8;
                    float *c = pass ? c12 : c8;
                    memcpy(c, c0, sizeof(float) * (size_t)(m * n));
                    op.c = c;
                    op.a = a;
                    op.a_packed = NULL;
                    if (v & 4) { /* A pre-packed for the kernel the flags pick */
                        pa = q8_aligned_alloc(q8_sgemm_packed_a_bytes(m, k, 1, op.flags));
                        q8_sgemm_pack_a(pa, false, m, k, a, k, 1, 0, op.flags);
                        op.a_packed = pa;
                        op.a = NULL;
                    }
                    void *sc = q8_aligned_alloc(q8_sgemm_scratch_bytes(&op, 3) + 64);
                    q8_sgemm_run(&op, v & 8 ? pool : NULL, sc);
                    q8_aligned_free(sc);
                    q8_aligned_free(pa);
                    pa = NULL;
                }
                cr_assert(memcmp(c8, c12, sizeof(float) * (size_t)(m * n)) == 0,
                          "12-row tiles differ from 8-row ones: %lldx%lldx%lld v=%d",
                          (long long)m, (long long)n, (long long)k, v);
                free(a);
                free(b);
                free(bias);
                free(c0);
                free(c8);
                free(c12);
            }
    q8_pool_free(pool);
}

/* Pre-packed operands give the very same bits as packing on the fly. */
Test(sgemm, prepacked_matches_unpacked) {
    q8t_rng r = q8t_seed(6);
    const gemm_case shapes[] = {{13, 7, 9}, {97, 65, 300}, {200, 1030, 20}, {2, 3, 600}};
    for (size_t s = 0; s < 4; s++)
        for (int t = 0; t < 4; t++)
            for (size_t f = 0; f < N_KERNEL_FLAGS; f++) {
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

/* Bias and ReLU / Clip / HardSwish applied in the micro-kernel's stores
 * give the bits of the separate pass over each tile (NaN and -0 included),
 * for whole and partial tiles, several K blocks, beta != 0 and every
 * kernel. HardSwish with alpha 1, beta 0 has h = x: every branch (-0 below
 * 0, x above 1, x * h between) on small sums too. */
Test(sgemm, fused_epilogue_same_bits) {
    q8t_rng r = q8t_seed(9);
    const gemm_case shapes[] = {{16, 64, 40}, {24, 96, 300}, {13, 70, 9}, {8, 32, 1}};
    const q8_act acts[] = {{Q8_ACT_NONE, 0, 0},       {Q8_ACT_RELU, 0, 0},
                           {Q8_ACT_CLIP, 0, 0.5f},    {Q8_ACT_CLIP, -0.25f, 6},
                           {Q8_ACT_HARD_SWISH, 1, 0}, {Q8_ACT_HARD_SWISH, 1.0f / 6, 0.5f}};
    for (size_t s = 0; s < 4; s++)
        for (size_t f = 0; f < N_KERNEL_FLAGS; f++)
            for (int v = 0; v < 24; v++) {
                gemm_case gc = shapes[s];
                bool per_col = (v / 6) & 1, beta = (v / 12) & 1;
                float *a = fmalloc(gc.m * gc.k), *b = fmalloc(gc.k * gc.n);
                float *c1 = fmalloc(gc.m * gc.n), *c2 = fmalloc(gc.m * gc.n);
                float *bias = fmalloc(gc.m + gc.n);
                q8t_fill(&r, a, gc.m * gc.k, -1, 1);
                q8t_fill(&r, b, gc.k * gc.n, -1, 1);
                q8t_fill(&r, c1, gc.m * gc.n, -1, 1);
                q8t_fill(&r, bias, gc.m + gc.n, -1, 1);
                a[gc.k] = NAN; /* row 1: NaN, which ReLU and Clip keep */
                if (gc.k == 1) {
                    /* row 2: -1e-30 * 1e-30 underflows to -0; + -0 stays -0 */
                    a[2] = -1e-30f;
                    for (int64_t j = 0; j < gc.n; j++) b[j] = 1e-30f;
                    bias[2] = -0.0f;
                    for (int64_t j = 0; j < gc.n; j++) bias[gc.m + j] = -0.0f;
                }
                memcpy(c2, c1, sizeof(float) * (size_t)(gc.m * gc.n));
                q8_sgemm_op op = {.m = gc.m, .n = gc.n, .k = gc.k, .alpha = 1.5f,
                                  .beta = beta ? 0.5f : 0.0f, .a = a, .lda = gc.k, .b = b,
                                  .ldb = gc.n, .c = c1, .ldc = gc.n, .bias = bias,
                                  .bias_per_col = per_col,
                                  .act = acts[v % 6],
                                  .flags = kernel_flags[f] | Q8_SGEMM_NO_FUSED_EPI};
                void *sc = q8_aligned_alloc(q8_sgemm_scratch_bytes(&op, 1));
                q8_sgemm_run(&op, NULL, sc);
                op.flags = kernel_flags[f];
                op.c = c2;
                q8_sgemm_run(&op, NULL, sc);
                cr_assert(memcmp(c1, c2, sizeof(float) * (size_t)(gc.m * gc.n)) == 0,
                          "fused epilogue differs %lldx%lldx%lld v=%d %s", (long long)gc.m,
                          (long long)gc.n, (long long)gc.k, v, q8_sgemm_kernel_name(op.flags));
                q8_aligned_free(sc);
                free(a);
                free(b);
                free(c1);
                free(c2);
                free(bias);
            }
}

/* B given as scattered rows (b_rows + batch stride + b_rowoff[k], as Conv's
 * shift planes are): whole panels are read in place by kernels that can,
 * with the same bits as packing every panel through b_pack, and b_pack is
 * then called only for partial panels. */
typedef struct rows_ctx {
    const float *base;
    const int64_t *off;
    int64_t stride;
    int64_t calls; /* b_pack calls (1-thread runs only) */
} rows_ctx;

static void rows_pack(const void *vctx, int64_t batch, int64_t k0, int64_t kc, int64_t n0,
                      int64_t nc, int nr, float *dst) {
    rows_ctx *cx = (rows_ctx *)vctx;
    cx->calls++;
    for (int64_t p = 0; p * nr < nc; p++)
        for (int64_t k = 0; k < kc; k++)
            for (int j = 0; j < nr; j++) {
                int64_t col = p * nr + j;
                dst[(p * kc + k) * nr + j] =
                    col < nc ? cx->base[batch * cx->stride + cx->off[k0 + k] + n0 + col] : 0.0f;
            }
}

Test(sgemm, b_rows_in_place_matches_packing) {
    q8t_rng r = q8t_seed(8);
    /* the last: C of >= 2 MB and K <= 64, where row tiles go first (sgemm.c) */
    const gemm_case shapes[] = {{13, 64, 9},    {8, 96, 300}, {200, 70, 20},
                                {17, 33, 600}, {64, 8300, 16}};
    int64_t batch = 2;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t f = 0; f < N_KERNEL_FLAGS; f++)
            for (int pre = 0; pre < 2; pre++) {
                gemm_case gc = shapes[s];
                unsigned flags = kernel_flags[f];
                /* Row k at a scattered offset (rows overlap, as shifted taps do). */
                int64_t *off = malloc(sizeof(int64_t) * (size_t)gc.k);
                int64_t span = 3 * gc.k + gc.n + 8;
                for (int64_t k = 0; k < gc.k; k++) off[k] = (k * 7919) % (3 * gc.k) + 1;
                float *base = fmalloc(batch * span), *a = fmalloc(gc.m * gc.k);
                float *c1 = fmalloc(batch * gc.m * gc.n), *c2 = fmalloc(batch * gc.m * gc.n);
                float *want = fmalloc(gc.m * gc.n), *bm = fmalloc(gc.k * gc.n);
                q8t_fill(&r, base, batch * span, -1, 1);
                q8t_fill(&r, a, gc.m * gc.k, -1, 1);
                int64_t offs[2 * 4] = {0, 0, 0, 0, 0, 0, gc.m * gc.n, 0};
                rows_ctx cx = {base, off, span, 0};
                q8_sgemm_op op = {.m = gc.m, .n = gc.n, .k = gc.k, .alpha = 1, .a = a,
                                  .lda = gc.k, .c = c1, .ldc = gc.n, .b_pack = rows_pack,
                                  .b_pack_ctx = &cx, .batch = batch, .offs = offs,
                                  .flags = flags | Q8_SGEMM_NO_ROWS};
                void *pa = NULL;
                if (pre) {
                    pa = q8_aligned_alloc(q8_sgemm_packed_a_bytes(gc.m, gc.k, 1, flags));
                    q8_sgemm_pack_a(pa, false, gc.m, gc.k, a, gc.k, 1, 0, flags);
                    op.a_packed = pa;
                }
                void *sc = q8_aligned_alloc(q8_sgemm_scratch_bytes(&op, 3));
                q8_sgemm_run(&op, NULL, sc);
                int64_t packed_calls = cx.calls;
                op.flags = flags;
                op.b_rows = base;
                op.b_rowoff = off;
                op.b_rows_stride = span;
                op.c = c2;
                cx.calls = 0;
                q8_sgemm_run(&op, NULL, sc);
                char nm[128];
                snprintf(nm, sizeof nm, "rows %lldx%lldx%lld pre=%d %s", (long long)gc.m,
                         (long long)gc.n, (long long)gc.k, pre, q8_sgemm_kernel_name(flags));
                cr_assert(memcmp(c1, c2, sizeof(float) * (size_t)(batch * gc.m * gc.n)) == 0,
                          "%s: in place differs from packed", nm);
                /* Panelwise items (A pre-packed or one MC block) skip b_pack
                 * on whole panels: with n >= 32 there is at least one (for
                 * the kernels with an in-place variant: not NEON's) */
                if ((pre || gc.m <= 144) && q8_sgemm_reads_rows_in_place(flags))
                    cr_assert(cx.calls < packed_calls, "%s: b_pack called %lld times of %lld",
                              nm, (long long)cx.calls, (long long)packed_calls);
                q8_pool *pool = q8_pool_create(3);
                memset(c2, 0, sizeof(float) * (size_t)(batch * gc.m * gc.n));
                q8_sgemm_run(&op, pool, sc);
                q8_pool_free(pool);
                cr_assert(memcmp(c1, c2, sizeof(float) * (size_t)(batch * gc.m * gc.n)) == 0,
                          "%s: 3 threads differ", nm);
                for (int64_t g = 0; g < batch; g++) {
                    for (int64_t k = 0; k < gc.k; k++)
                        memcpy(bm + k * gc.n, base + g * span + off[k],
                               sizeof(float) * (size_t)gc.n);
                    q8_sgemm_op one = {.m = gc.m, .n = gc.n, .k = gc.k, .alpha = 1, .a = a,
                                       .lda = gc.k, .b = bm, .ldb = gc.n, .ldc = gc.n};
                    ref_gemm(&one, NULL, want);
                    q8t_assert_close(c2 + g * gc.m * gc.n, want, gc.m * gc.n, 1e-4f,
                                     1e-5f * (float)(gc.k + 1), nm);
                }
                q8_aligned_free(sc);
                q8_aligned_free(pa);
                free(off);
                free(base);
                free(a);
                free(c1);
                free(c2);
                free(want);
                free(bm);
            }
}

/* ------------------------------------------------------------- op helpers */

/* Runs g with the given graph-input data on 1 and 3 threads; the outputs
 * must agree bit for bit. Returns the 1-thread output (malloc'd). */
static float *run_both(q8_graph *(*build)(const void *), const void *spec, const void *const *in,
                       q8_tensor_info *info) {
    void *o1[1], *o3[1];
    q8_tensor_info i3[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(build(spec), in, 1, o1, info, 1, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8t_run(build(spec), in, 3, o3, i3, 1, &err), Q8_OK, "%s", err.msg);
    int64_t numel;
    cr_assert(q8_shape_numel(info->dims, info->ndim, &numel));
    cr_assert(memcmp(o1[0], o3[0], sizeof(float) * (size_t)numel) == 0, "1 vs 3 threads differ");
    free(o3[0]);
    return o1[0];
}

static void expect_error(q8_graph *g, const char *substr) {
    q8_error err = {0};
    void *out[1];
    q8_tensor_info info[1];
    float dummy[4096] = {0};
    const void *in[4] = {dummy, dummy, dummy, dummy};
    q8_status s = q8t_run(g, in, 1, out, info, 1, &err);
    cr_assert_neq(s, Q8_OK, "expected an error mentioning '%s'", substr);
    cr_assert(strstr(err.msg, substr), "message '%s' lacks '%s'", err.msg, substr);
}

static void apply_ref_act(const char *act, float *y, int64_t n) {
    if (!act) return;
    q8_act a = {0};
    if (!strcmp(act, "Relu")) a.kind = Q8_ACT_RELU;
    else if (!strcmp(act, "Clip")) a = (q8_act){Q8_ACT_CLIP, -0.25f, 0.5f};
    else if (!strcmp(act, "LeakyRelu")) a = (q8_act){Q8_ACT_LEAKY_RELU, 0.2f, 0};
    else if (!strcmp(act, "Sigmoid")) a.kind = Q8_ACT_SIGMOID;
    else if (!strcmp(act, "HardSigmoid")) a = (q8_act){Q8_ACT_HARD_SIGMOID, 0.3f, 0.4f};
    else if (!strcmp(act, "HardSwish")) a = (q8_act){Q8_ACT_HARD_SWISH, 1.0f / 6.0f, 0.5f};
    for (int64_t i = 0; i < n; i++) {
        float v = y[i];
        switch (a.kind) {
        case Q8_ACT_RELU: v = v > 0 ? v : 0; break;
        case Q8_ACT_CLIP: v = fminf(fmaxf(v, a.p0), a.p1); break;
        case Q8_ACT_LEAKY_RELU: v = v < 0 ? v * a.p0 : v; break;
        case Q8_ACT_SIGMOID: v = 1.0f / (1.0f + expf(-v)); break;
        case Q8_ACT_HARD_SIGMOID: v = fminf(1.0f, fmaxf(0.0f, a.p0 * v + a.p1)); break;
        case Q8_ACT_HARD_SWISH: v = v * fminf(1.0f, fmaxf(0.0f, a.p0 * v + a.p1)); break;
        default: break;
        }
        y[i] = v;
    }
}

/* Sets the fused-activation attributes matching apply_ref_act. */
static void set_act_attrs(q8_graph *g, const char *act) {
    if (!act) return;
    q8t_attr_str(g, "_act", act);
    if (!strcmp(act, "Clip")) {
        q8t_attr_float(g, "_act_min", -0.25f);
        q8t_attr_float(g, "_act_max", 0.5f);
    } else if (!strcmp(act, "LeakyRelu")) {
        q8t_attr_float(g, "_act_alpha", 0.2f);
    } else if (!strcmp(act, "HardSigmoid")) {
        q8t_attr_float(g, "_act_alpha", 0.3f);
        q8t_attr_float(g, "_act_beta", 0.4f);
    }
}

static const char *const acts[] = {NULL, "Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid"};

/* ------------------------------------------------------------------ Gemm */

typedef struct gemm_spec {
    int64_t m, n, k;
    int ta, tb;
    float alpha, beta;
    int c_ndim;             /* -1: no C */
    int64_t c_dims[2];
    bool const_b;
    const char *act;
    const float *a, *b, *c;
} gemm_spec;

static q8_graph *build_gemm(const void *v) {
    const gemm_spec *s = v;
    q8t_in ins[3] = {
        {"A", Q8_F32, 2, {s->ta ? s->k : s->m, s->ta ? s->m : s->k}, NULL},
        {"B", Q8_F32, 2, {s->tb ? s->n : s->k, s->tb ? s->k : s->n}, s->const_b ? s->b : NULL},
        {"C", Q8_F32, s->c_ndim, {s->c_dims[0], s->c_dims[1]}, s->c},
    };
    q8_graph *g = q8t_graph1("Gemm", ins, s->c_ndim >= 0 ? 3 : 2, 1);
    if (s->ta) q8t_attr_int(g, "transA", 1);
    if (s->tb) q8t_attr_int(g, "transB", 1);
    if (s->alpha != 1.0f) q8t_attr_float(g, "alpha", s->alpha);
    if (s->beta != 1.0f) q8t_attr_float(g, "beta", s->beta);
    set_act_attrs(g, s->act);
    return g;
}

static void check_gemm(gemm_spec s, q8t_rng *r) {
    int64_t m = s.m, n = s.n, k = s.k;
    float *a = fmalloc(m * k), *b = fmalloc(k * n), *c = fmalloc(m * n), *want = fmalloc(m * n);
    q8t_fill(r, a, m * k, -1, 1);
    q8t_fill(r, b, k * n, -1, 1);
    q8t_fill(r, c, m * n, -1, 1);
    s.a = a;
    s.b = b;
    s.c = c;
    int64_t cr = s.c_ndim == 2 ? s.c_dims[0] : 1, cc = s.c_ndim >= 1 ? s.c_dims[s.c_ndim - 1] : 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t q = 0; q < k; q++)
                acc += (double)(s.ta ? a[q * m + i] : a[i * k + q]) *
                       (s.tb ? b[j * k + q] : b[q * n + j]);
            double v = s.alpha * acc;
            if (s.c_ndim >= 0) v += s.beta * c[(cr > 1 ? i : 0) * cc + (cc > 1 ? j : 0)];
            want[i * n + j] = (float)v;
        }
    apply_ref_act(s.act, want, m * n);
    const void *in[2] = {a, b};
    q8_tensor_info info;
    float *got = run_both(build_gemm, &s, in, &info);
    cr_assert_eq(info.ndim, 2);
    cr_assert(info.dims[0] == m && info.dims[1] == n);
    q8t_assert_close(got, want, m * n, 1e-4f, 1e-5f * (float)(k + 1), "Gemm");
    free(got);
    free(a);
    free(b);
    free(c);
    free(want);
}

Test(gemm_op, shapes_transposes_bias_forms) {
    q8t_rng r = q8t_seed(11);
    const int64_t shapes[][3] = {{1, 1, 1}, {13, 7, 9}, {1, 65, 129}, {97, 65, 129}, {5, 1, 30}};
    for (size_t si = 0; si < 5; si++)
        for (int t = 0; t < 4; t++)
            for (int cf = 0; cf < 6; cf++) {
                int64_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
                gemm_spec s = {m, n, k, t & 1, (t >> 1) & 1, 1.0f, 1.0f, -1, {0, 0},
                               (si + t) % 2 == 0, NULL, NULL, NULL, NULL};
                switch (cf) {
                case 0: break;                                          /* no C */
                case 1: s.c_ndim = 0; break;                            /* scalar */
                case 2: s.c_ndim = 1; s.c_dims[0] = n; break;           /* [N] */
                case 3: s.c_ndim = 2; s.c_dims[0] = m; s.c_dims[1] = 1; break;
                case 4: s.c_ndim = 2; s.c_dims[0] = m; s.c_dims[1] = n; s.beta = 0.5f; break;
                case 5: s.c_ndim = 2; s.c_dims[0] = 1; s.c_dims[1] = n; s.alpha = -2.0f; break;
                }
                check_gemm(s, &r);
            }
}

Test(gemm_op, fused_activations) {
    q8t_rng r = q8t_seed(12);
    for (size_t i = 1; i < sizeof acts / sizeof acts[0]; i++) {
        check_gemm((gemm_spec){17, 40, 33, 0, 1, 1.0f, 1.0f, 1, {40, 0}, true, acts[i], NULL,
                               NULL, NULL}, &r);
        check_gemm((gemm_spec){1, 40, 33, 0, 1, 1.0f, 1.0f, 1, {40, 0}, true, acts[i], NULL,
                               NULL, NULL}, &r);
    }
}

Test(gemm_op, errors) {
    float w[64] = {0};
    q8t_in ins[3] = {{"A", Q8_F32, 2, {3, 4}, NULL}, {"B", Q8_F32, 2, {5, 6}, w},
                     {"C", Q8_F32, 1, {6}, w}};
    expect_error(q8t_graph1("Gemm", ins, 2, 1), "inner dims differ");
    ins[1].dims[0] = 4;
    ins[2].dims[0] = 5;
    expect_error(q8t_graph1("Gemm", ins, 3, 1), "does not broadcast");
    ins[2].dims[0] = 6;
    ins[0].ndim = 3;
    expect_error(q8t_graph1("Gemm", ins, 3, 1), "must be 2-D");
    ins[0].ndim = 2;
    q8_graph *g = q8t_graph1("Gemm", ins, 3, 1);
    q8t_attr_str(g, "_act", "Tanhh");
    expect_error(g, "fused activation 'Tanhh'");
}

/* ---------------------------------------------------------------- MatMul */

typedef struct matmul_spec {
    int na, nb;
    int64_t ad[5], bd[5];
    bool const_b;
    const char *act;
    const float *b;
} matmul_spec;

static q8_graph *build_matmul(const void *v) {
    const matmul_spec *s = v;
    q8t_in ins[2] = {{"A", Q8_F32, s->na, {0}, NULL},
                     {"B", Q8_F32, s->nb, {0}, s->const_b ? s->b : NULL}};
    memcpy(ins[0].dims, s->ad, sizeof(int64_t) * (size_t)s->na);
    memcpy(ins[1].dims, s->bd, sizeof(int64_t) * (size_t)s->nb);
    q8_graph *g = q8t_graph1("MatMul", ins, 2, 1);
    set_act_attrs(g, s->act);
    return g;
}

static int64_t numel_of(const int64_t *d, int n) {
    int64_t v = 1;
    for (int i = 0; i < n; i++) v *= d[i];
    return v;
}

/* numpy matmul in double, for rank <= 5. */
static void check_matmul(matmul_spec s, const int64_t *want_dims, int want_nd, q8t_rng *r) {
    int64_t an = numel_of(s.ad, s.na), bn = numel_of(s.bd, s.nb);
    float *a = fmalloc(an), *b = fmalloc(bn);
    q8t_fill(r, a, an, -1, 1);
    q8t_fill(r, b, bn, -1, 1);
    s.b = b;
    /* promoted views */
    int64_t pa[6], pb[6];
    int pna = s.na, pnb = s.nb;
    memcpy(pa, s.ad, sizeof(int64_t) * (size_t)s.na);
    memcpy(pb, s.bd, sizeof(int64_t) * (size_t)s.nb);
    if (s.na == 1) {
        pa[0] = 1;
        pa[1] = s.ad[0];
        pna = 2;
    }
    if (s.nb == 1) {
        pb[1] = 1;
        pnb = 2;
    }
    int64_t m = pa[pna - 2], k = pa[pna - 1], n = pb[pnb - 1];
    int nbat = (pna > pnb ? pna : pnb) - 2;
    int64_t bat[4], abat[4], bbat[4];
    for (int i = 0; i < nbat; i++) {
        int ia = i - (nbat - (pna - 2)), ib = i - (nbat - (pnb - 2));
        abat[i] = ia >= 0 ? pa[ia] : 1;
        bbat[i] = ib >= 0 ? pb[ib] : 1;
        bat[i] = abat[i] == 1 ? bbat[i] : abat[i];
    }
    int64_t total = numel_of(bat, nbat);
    float *want = fmalloc(total * m * n);
    for (int64_t t = 0; t < total; t++) {
        int64_t rem = t, oa = 0, ob = 0, sa = 1, sb = 1;
        for (int i = nbat - 1; i >= 0; i--) {
            int64_t idx = rem % bat[i];
            rem /= bat[i];
            oa += (abat[i] == 1 ? 0 : idx) * sa;
            ob += (bbat[i] == 1 ? 0 : idx) * sb;
            sa *= abat[i];
            sb *= bbat[i];
        }
        const float *A = a + oa * m * k, *B = b + ob * k * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t q = 0; q < k; q++) acc += (double)A[i * k + q] * B[q * n + j];
                want[(t * m + i) * n + j] = (float)acc;
            }
    }
    apply_ref_act(s.act, want, total * m * n);
    const void *in[2] = {a, b};
    q8_tensor_info info;
    float *got = run_both(build_matmul, &s, in, &info);
    cr_assert_eq(info.ndim, want_nd, "rank %d, want %d", info.ndim, want_nd);
    for (int i = 0; i < want_nd; i++)
        cr_assert_eq(info.dims[i], want_dims[i], "dim %d: %lld vs %lld", i,
                     (long long)info.dims[i], (long long)want_dims[i]);
    char nm[64];
    snprintf(nm, sizeof nm, "MatMul %dD x %dD (k=%lld)", s.na, s.nb, (long long)k);
    q8t_assert_close(got, want, total * m * n, 1e-4f, 1e-5f * (float)(k + 1), nm);
    free(got);
    free(a);
    free(b);
    free(want);
}

Test(matmul_op, numpy_semantics) {
    q8t_rng r = q8t_seed(21);
    /* 2-D, const and not */
    check_matmul((matmul_spec){2, 2, {13, 9}, {9, 7}, false, NULL, NULL}, (int64_t[]){13, 7}, 2,
                 &r);
    check_matmul((matmul_spec){2, 2, {13, 9}, {9, 70}, true, NULL, NULL}, (int64_t[]){13, 70},
                 2, &r);
    /* 1-D promotions */
    check_matmul((matmul_spec){1, 2, {9}, {9, 7}, true, NULL, NULL}, (int64_t[]){7}, 1, &r);
    check_matmul((matmul_spec){2, 1, {13, 9}, {9}, false, NULL, NULL}, (int64_t[]){13}, 1, &r);
    check_matmul((matmul_spec){1, 1, {9}, {9}, false, NULL, NULL}, NULL, 0, &r);
    check_matmul((matmul_spec){1, 3, {9}, {3, 9, 5}, false, NULL, NULL}, (int64_t[]){3, 5}, 2, &r);
    check_matmul((matmul_spec){3, 1, {2, 4, 9}, {9}, true, NULL, NULL}, (int64_t[]){2, 4}, 2, &r);
    /* batched, folded into M (B 2-D), const B */
    check_matmul((matmul_spec){3, 2, {2, 13, 9}, {9, 33}, true, NULL, NULL},
                 (int64_t[]){2, 13, 33}, 3, &r);
    /* broadcasting batch dims both ways */
    check_matmul((matmul_spec){4, 3, {2, 1, 5, 9}, {3, 9, 6}, false, NULL, NULL},
                 (int64_t[]){2, 3, 5, 6}, 4, &r);
    check_matmul((matmul_spec){3, 4, {3, 5, 9}, {2, 1, 9, 6}, false, NULL, NULL},
                 (int64_t[]){2, 3, 5, 6}, 4, &r);
    check_matmul((matmul_spec){3, 3, {1, 5, 9}, {4, 9, 1}, false, NULL, NULL},
                 (int64_t[]){4, 5, 1}, 3, &r);
    check_matmul((matmul_spec){3, 3, {4, 1, 9}, {4, 9, 30}, false, NULL, NULL},
                 (int64_t[]){4, 1, 30}, 3, &r);
    /* K = 1, and an empty batch */
    check_matmul((matmul_spec){2, 2, {6, 1}, {1, 8}, false, NULL, NULL}, (int64_t[]){6, 8}, 2, &r);
    check_matmul((matmul_spec){3, 2, {0, 3, 4}, {4, 5}, false, NULL, NULL}, (int64_t[]){0, 3, 5},
                 3, &r);
    /* fused activation */
    check_matmul((matmul_spec){3, 2, {2, 13, 9}, {9, 33}, true, "Relu", NULL},
                 (int64_t[]){2, 13, 33}, 3, &r);
    check_matmul((matmul_spec){3, 3, {2, 13, 9}, {2, 9, 33}, false, "LeakyRelu", NULL},
                 (int64_t[]){2, 13, 33}, 3, &r);
}

Test(matmul_op, errors) {
    q8t_in ins[2] = {{"A", Q8_F32, 2, {3, 4}, NULL}, {"B", Q8_F32, 2, {5, 6}, NULL}};
    expect_error(q8t_graph1("MatMul", ins, 2, 1), "inner dims 4 and 5 differ");
    q8t_in ins2[2] = {{"A", Q8_F32, 3, {2, 3, 4}, NULL}, {"B", Q8_F32, 3, {3, 4, 6}, NULL}};
    expect_error(q8t_graph1("MatMul", ins2, 2, 1), "do not broadcast");
    q8t_in ins3[2] = {{"A", Q8_F32, 0, {0}, NULL}, {"B", Q8_F32, 1, {4}, NULL}};
    expect_error(q8t_graph1("MatMul", ins3, 2, 1), "rank >= 1");
}

/* ------------------------------------------------------------------ Conv */

typedef struct conv_spec {
    int nsp;
    int64_t n, c, m, g;
    int64_t in[3], k[3], s[3], d[3], pads[6];   /* first nsp (pads: 2*nsp) used */
    const char *auto_pad;
    bool bias, const_w, kshape_attr;
    const char *act;
    /* ConvTranspose only */
    int64_t opad[3];
    int64_t oshape[3];      /* oshape[0] > 0: output_shape attribute */
    const float *w, *b;
    const char *impl;       /* Conv: forced lowering (_conv_impl) */
} conv_spec;

static q8_graph *build_conv_common(const conv_spec *s, const char *op, int64_t w0, int64_t w1) {
    q8t_in ins[3] = {{"X", Q8_F32, s->nsp + 2, {s->n, s->c}, NULL},
                     {"W", Q8_F32, s->nsp + 2, {w0, w1}, s->const_w ? s->w : NULL},
                     {"B", Q8_F32, 1, {s->m}, s->b}};
    for (int i = 0; i < s->nsp; i++) {
        ins[0].dims[2 + i] = s->in[i];
        ins[1].dims[2 + i] = s->k[i];
    }
    q8_graph *g = q8t_graph1(op, ins, s->bias ? 3 : 2, 1);
    if (s->g != 1) q8t_attr_int(g, "group", s->g);
    q8t_attr_ints(g, "strides", s->s, s->nsp);
    q8t_attr_ints(g, "dilations", s->d, s->nsp);
    if (s->auto_pad) q8t_attr_str(g, "auto_pad", s->auto_pad);
    else q8t_attr_ints(g, "pads", s->pads, 2 * s->nsp);
    if (s->kshape_attr) q8t_attr_ints(g, "kernel_shape", s->k, s->nsp);
    if (s->impl) q8t_attr_str(g, "_conv_impl", s->impl);
    set_act_attrs(g, s->act);
    return g;
}

static q8_graph *build_conv(const void *v) {
    const conv_spec *s = v;
    return build_conv_common(s, "Conv", s->m, s->c / s->g);
}

/* Resolved pads and output dims of a Conv, straight from the ONNX text. */
static void ref_conv_geom(const conv_spec *s, int64_t *pb, int64_t *pe, int64_t *out) {
    for (int i = 0; i < s->nsp; i++) {
        int64_t ext = (s->k[i] - 1) * s->d[i] + 1;
        pb[i] = s->pads[i];
        pe[i] = s->pads[s->nsp + i];
        if (s->auto_pad && strncmp(s->auto_pad, "SAME", 4) == 0) {
            int64_t o = (s->in[i] + s->s[i] - 1) / s->s[i];
            int64_t total = (o - 1) * s->s[i] + ext - s->in[i];
            if (total < 0) total = 0;
            pb[i] = !strcmp(s->auto_pad, "SAME_UPPER") ? total / 2 : (total + 1) / 2;
            pe[i] = total - pb[i];
        } else if (s->auto_pad) {
            pb[i] = pe[i] = 0;
        }
        out[i] = (s->in[i] + pb[i] + pe[i] - ext) / s->s[i] + 1;
    }
}

/* Direct convolution over up to 3 spatial dims (missing dims are 1). */
static void ref_conv(const conv_spec *s, const float *x, const float *w, const float *b,
                     float *y, int64_t *out) {
    int64_t pb[3], pe[3];
    ref_conv_geom(s, pb, pe, out);
    int64_t I[3] = {1, 1, 1}, K[3] = {1, 1, 1}, O[3] = {1, 1, 1}, S[3] = {1, 1, 1},
            D[3] = {1, 1, 1}, P[3] = {0, 0, 0};
    for (int i = 0; i < s->nsp; i++) {
        int j = 3 - s->nsp + i;
        I[j] = s->in[i];
        K[j] = s->k[i];
        O[j] = out[i];
        S[j] = s->s[i];
        D[j] = s->d[i];
        P[j] = pb[i];
    }
    int64_t cg = s->c / s->g, mg = s->m / s->g;
    for (int64_t n = 0; n < s->n; n++)
        for (int64_t m = 0; m < s->m; m++)
            for (int64_t o0 = 0; o0 < O[0]; o0++)
                for (int64_t o1 = 0; o1 < O[1]; o1++)
                    for (int64_t o2 = 0; o2 < O[2]; o2++) {
                        double acc = b ? b[m] : 0;
                        int64_t gi = m / mg;
                        for (int64_t ci = 0; ci < cg; ci++)
                            for (int64_t k0 = 0; k0 < K[0]; k0++)
                                for (int64_t k1 = 0; k1 < K[1]; k1++)
                                    for (int64_t k2 = 0; k2 < K[2]; k2++) {
                                        int64_t i0 = o0 * S[0] - P[0] + k0 * D[0];
                                        int64_t i1 = o1 * S[1] - P[1] + k1 * D[1];
                                        int64_t i2 = o2 * S[2] - P[2] + k2 * D[2];
                                        if (i0 < 0 || i0 >= I[0] || i1 < 0 || i1 >= I[1] ||
                                            i2 < 0 || i2 >= I[2])
                                            continue;
                                        int64_t c = gi * cg + ci;
                                        double xv = x[(((n * s->c + c) * I[0] + i0) * I[1] + i1) *
                                                          I[2] + i2];
                                        double wv = w[(((m * cg + ci) * K[0] + k0) * K[1] + k1) *
                                                          K[2] + k2];
                                        acc += xv * wv;
                                    }
                        y[(((n * s->m + m) * O[0] + o0) * O[1] + o1) * O[2] + o2] = (float)acc;
                    }
}

static void check_conv(conv_spec s, q8t_rng *r) {
    int64_t isp = 1, ksp = 1;
    for (int i = 0; i < s.nsp; i++) {
        isp *= s.in[i];
        ksp *= s.k[i];
    }
    int64_t xn = s.n * s.c * isp, wn = s.m * (s.c / s.g) * ksp;
    float *x = fmalloc(xn), *w = fmalloc(wn), *b = fmalloc(s.m);
    q8t_fill(r, x, xn, -1, 1);
    q8t_fill(r, w, wn, -1, 1);
    q8t_fill(r, b, s.m, -1, 1);
    s.w = w;
    s.b = b;
    int64_t out[3];
    int64_t pb[3], pe[3];
    ref_conv_geom(&s, pb, pe, out);
    int64_t osp = 1;
    for (int i = 0; i < s.nsp; i++) osp *= out[i];
    float *want = fmalloc(s.n * s.m * osp);
    ref_conv(&s, x, w, s.bias ? b : NULL, want, out);
    apply_ref_act(s.act, want, s.n * s.m * osp);
    const void *in[2] = {x, w};
    /* Every lowering: the automatic choice, then each general one forced. */
    const char *impls[] = {NULL, "im2col", "shift"};
    for (int ii = 0; ii < 3; ii++) {
        s.impl = impls[ii];
        q8_tensor_info info;
        float *got = run_both(build_conv, &s, in, &info);
        cr_assert_eq(info.ndim, s.nsp + 2);
        cr_assert(info.dims[0] == s.n && info.dims[1] == s.m);
        for (int i = 0; i < s.nsp; i++)
            cr_assert_eq(info.dims[2 + i], out[i], "out dim %d: %lld vs %lld", i,
                         (long long)info.dims[2 + i], (long long)out[i]);
        char nm[128];
        snprintf(nm, sizeof nm, "Conv %dD c=%lld m=%lld g=%lld %s impl=%s", s.nsp,
                 (long long)s.c, (long long)s.m, (long long)s.g, s.auto_pad ? s.auto_pad : "",
                 s.impl ? s.impl : "auto");
        q8t_assert_close(got, want, s.n * s.m * osp, 1e-4f, 1e-5f * (float)(s.c * ksp + 1), nm);
        free(got);
    }
    free(x);
    free(w);
    free(b);
    free(want);
}

#define SP2(a, b) {a, b, 1}
/* conv_spec's trailing fields when unused: opad, oshape, w, b, impl. */
#define PLAIN {0}, {0}, NULL, NULL, NULL
#define ONE3 {1, 1, 1}

Test(conv_op, conv2d_odd_shapes) {
    q8t_rng r = q8t_seed(31);
    /* c=13, 9x7 image, 3x3, pads 1: implicit im2col */
    check_conv((conv_spec){2, 2, 13, 8, 1, SP2(9, 7), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                           {1, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* weights as a graph input (unpacked path), kernel_shape given */
    check_conv((conv_spec){2, 1, 13, 5, 1, SP2(9, 7), SP2(3, 2), SP2(1, 1), SP2(1, 1),
                           {0, 1, 2, 0}, NULL, false, false, true, NULL, PLAIN}, &r);
    /* stride 2, dilation 2, asymmetric pads */
    check_conv((conv_spec){2, 2, 6, 7, 1, SP2(11, 9), SP2(3, 3), SP2(2, 2), SP2(2, 2),
                           {0, 1, 2, 3}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 1, 3, 4, 1, SP2(9, 7), SP2(2, 3), SP2(2, 1), SP2(1, 2),
                           {1, 0, 0, 2}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* groups 2 and 3 */
    check_conv((conv_spec){2, 2, 6, 4, 2, SP2(9, 7), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                           {1, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 1, 9, 6, 3, SP2(8, 5), SP2(3, 1), SP2(1, 2), SP2(1, 1),
                           {1, 0, 1, 0}, NULL, true, false, false, NULL, PLAIN}, &r);
    /* 1x1 stride 1 (straight GEMM), and 1x1 stride 2 (im2col) */
    check_conv((conv_spec){2, 2, 13, 17, 1, SP2(9, 7), SP2(1, 1), SP2(1, 1), SP2(1, 1),
                           {0, 0, 0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 2, 13, 17, 1, SP2(9, 7), SP2(1, 1), SP2(2, 2), SP2(1, 1),
                           {0, 0, 0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* one output channel per group, and one output pixel (GEMV) */
    check_conv((conv_spec){2, 2, 4, 2, 2, SP2(6, 5), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                           {1, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 2, 5, 7, 1, SP2(5, 5), SP2(5, 5), SP2(1, 1), SP2(1, 1),
                           {0, 0, 0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 2, 3, 4, 1, SP2(2, 3), SP2(3, 4), SP2(1, 1), SP2(1, 1),
                           {1, 1, 0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* wide enough to span several N blocks and K blocks */
    check_conv((conv_spec){2, 1, 40, 30, 1, SP2(37, 41), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                           {1, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
}

/* The few-input-channel direct loops (conv_fewc.h, taken automatically on
 * AVX-512) give the bits of the GEMM lowerings: same FMA chain per output,
 * and Relu / Clip, applied there in registers, as the scalar forms apply
 * them (with `poison`, a NaN and -0 inputs: NaN outputs, which Relu makes
 * +0 and Clip keeps). */
static void check_conv_same_bits_x(conv_spec s, q8t_rng *r, bool poison) {
    int64_t isp = 1, ksp = 1;
    for (int i = 0; i < s.nsp; i++) {
        isp *= s.in[i];
        ksp *= s.k[i];
    }
    int64_t xn = s.n * s.c * isp, wn = s.m * (s.c / s.g) * ksp;
    float *x = fmalloc(xn), *w = fmalloc(wn), *b = fmalloc(s.m);
    q8t_fill(r, x, xn, -1, 1);
    q8t_fill(r, w, wn, -1, 1);
    q8t_fill(r, b, s.m, -1, 1);
    if (poison) {
        for (int64_t i = 0; i < xn; i += 7) x[i] = -0.0f;
        x[xn / 3] = NAN;
    }
    s.w = w;
    s.b = b;
    const void *in[2] = {x, w};
    const char *impls[] = {NULL, "im2col", "shift"};
    float *got[3];
    q8_tensor_info info;
    for (int ii = 0; ii < 3; ii++) {
        s.impl = impls[ii];
        got[ii] = run_both(build_conv, &s, in, &info);
    }
    int64_t numel;
    cr_assert(q8_shape_numel(info.dims, info.ndim, &numel));
    cr_assert(memcmp(got[0], got[1], sizeof(float) * (size_t)numel) == 0, "auto vs im2col");
    cr_assert(memcmp(got[0], got[2], sizeof(float) * (size_t)numel) == 0, "auto vs shift");
    for (int ii = 0; ii < 3; ii++) free(got[ii]);
    free(x);
    free(w);
    free(b);
}

static void check_conv_same_bits(conv_spec s, q8t_rng *r) { check_conv_same_bits_x(s, r, false); }

Test(conv_op, few_input_channels) {
    q8t_rng r = q8t_seed(36);
    conv_spec specs[] = {
        /* MobileNet's first conv, smaller: 3 -> 16, 3x3 stride 2, pads 1 */
        {2, 2, 3, 16, 1, SP2(40, 38), SP2(3, 3), SP2(2, 2), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, "HardSigmoid", PLAIN},
        /* channel tail (m = 21), stride 1, odd width (a partial vector) */
        {2, 1, 1, 21, 1, SP2(9, 37), SP2(3, 5), SP2(1, 1), SP2(1, 1), {2, 0, 1, 3}, NULL,
         false, true, false, "Relu", PLAIN},
        /* 4 channels (K = 36, the most), stride 2, dilation along H */
        {2, 1, 4, 33, 1, SP2(23, 51), SP2(3, 3), SP2(2, 2), SP2(2, 1), {3, 1, 3, 1}, NULL,
         true, true, false, NULL, PLAIN},
        /* stride 2 along W only, 1-D, asymmetric pads, Clip */
        {1, 2, 2, 16, 1, {70}, {4}, {2}, {1}, {0, 3}, NULL, true, true, false, "Clip", PLAIN},
        /* width exactly 16 and 32, pads right only */
        {2, 1, 3, 8, 1, SP2(5, 33), SP2(2, 2), SP2(1, 2), SP2(1, 1), {0, 0, 1, 1}, NULL, true,
         true, false, NULL, PLAIN},
        {2, 1, 3, 17, 1, SP2(4, 34), SP2(2, 3), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL,
         true, true, false, NULL, PLAIN},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        check_conv(specs[i], &r);
        check_conv_same_bits(specs[i], &r);
    }
    /* stride 1: runs of 32 pixels, 8 channels at a time (antispoof's
     * 3 -> 64 unpadded; padded edges; 20 channels: a last block of 4;
     * widths leaving a 16-pixel tail, none, or a run of 17-31), with a NaN
     * and -0 inputs */
    const conv_spec s1[] = {
        {2, 1, 3, 64, 1, SP2(9, 70), SP2(3, 3), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL, true,
         true, false, "Relu", PLAIN},
        {2, 2, 3, 20, 1, SP2(7, 66), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, "Clip", PLAIN},
        {2, 1, 2, 12, 1, SP2(6, 40), SP2(2, 5), SP2(1, 1), SP2(1, 2), {0, 2, 1, 3}, NULL, false,
         true, false, NULL, PLAIN},
        /* runs of 32 that end 17-31 pixels in (20 and 50 wide outputs), the
         * second register's last loads past the padded right edge */
        {2, 1, 3, 16, 1, SP2(5, 20), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, "Relu", PLAIN},
        {2, 1, 3, 9, 1, SP2(6, 52), SP2(3, 3), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL, true,
         true, false, "HardSwish", PLAIN},
        /* MobileNetV3's first conv, smaller: stride 2, HardSwish in registers */
        {2, 1, 3, 16, 1, SP2(9, 40), SP2(3, 3), SP2(2, 2), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, "HardSwish", PLAIN},
    };
    for (size_t i = 0; i < sizeof s1 / sizeof s1[0]; i++) {
        check_conv(s1[i], &r);
        check_conv_same_bits_x(s1[i], &r, true);
    }
    /* PoseNet's first conv, smaller (3 -> 24: a last block of 8), with a
     * NaN and -0 inputs, each activation the loops apply in registers */
    const char *acts2[] = {"Relu", "Clip", NULL, "LeakyRelu"};
    for (int a = 0; a < 4; a++)
        check_conv_same_bits_x((conv_spec){2, 1, 3, 24, 1, SP2(21, 45), SP2(3, 3), SP2(2, 2),
                                           SP2(1, 1), {1, 1, 1, 1}, NULL, true, true, false,
                                           acts2[a], PLAIN},
                               &r, true);
}

/* Whether the automatic lowering of a 2-D conv spec with one group is the
 * direct loops with the output channels in the lanes (conv_ocl.h). */
static bool ocl_takes(const conv_spec *s) {
    q8_conv_params p = {.nb = s->n, .c = s->c, .m = s->m, .g = 1, .cg = s->c, .mg = s->m};
    int64_t pb[3], pe[3], out[3];
    ref_conv_geom(s, pb, pe, out);
    p.geo.nsp = 2;
    p.geo.in[0] = p.geo.out[0] = p.geo.k[0] = p.geo.s[0] = p.geo.d[0] = 1;
    for (int i = 0; i < 2; i++) {
        p.geo.in[1 + i] = s->in[i];
        p.geo.out[1 + i] = out[i];
        p.geo.k[1 + i] = s->k[i];
        p.geo.s[1 + i] = s->s[i];
        p.geo.d[1 + i] = s->d[i];
        p.geo.pb[1 + i] = pb[i];
        p.geo.pe[1 + i] = pe[i];
    }
    p.kprod = s->k[0] * s->k[1];
    p.kg = s->c * p.kprod;
    return q8_conv_ocl_fits(&p);
}

/* Stride-2 convs with the output channels in the lanes (conv_ocl.h, taken
 * automatically on AVX-512) give the bits of the GEMM lowerings: per K
 * block a chain from +0 (several blocks: K 288 and 576), the blocks added,
 * then bias and activation, NaN and -0 inputs included; a last channel
 * block of 8 or 16 (one vector), tiles of unequal widths, edge pixels on
 * the left, the right or both (gathered), rows of taps above and below X
 * (the zero row), dilation, several images. */
Test(conv_op, stride2_channels_in_lanes) {
    q8t_rng r = q8t_seed(41);
    conv_spec specs[] = {
        /* YOLOv5s's, smaller: explicit Pad before, so none here */
        {2, 1, 32, 64, 1, SP2(27, 55), SP2(3, 3), SP2(2, 2), SP2(1, 1), {0, 0, 0, 0}, NULL,
         true, true, false, "Relu", PLAIN},
        /* ResNet's: pads 1 (one edge pixel on the left, a zero row on top) */
        {2, 2, 64, 40, 1, SP2(29, 30), SP2(3, 3), SP2(2, 2), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, "Clip", PLAIN},
        /* asymmetric pads, edges on both sides, 48 channels, no bias */
        {2, 1, 9, 48, 1, SP2(17, 41), SP2(3, 3), SP2(2, 2), SP2(1, 1), {2, 3, 0, 3}, NULL,
         false, true, false, "HardSwish", PLAIN},
        /* 5x5 dilated, pads 4, LeakyRelu (a pass after the stores) */
        {2, 1, 12, 33, 1, SP2(31, 60), SP2(5, 5), SP2(2, 2), SP2(2, 2), {4, 4, 4, 4}, NULL,
         true, true, false, "LeakyRelu", PLAIN},
        /* 2x1 kernel, output rows 12 and 25 wide */
        {2, 1, 16, 24, 1, SP2(9, 24), SP2(2, 1), SP2(2, 2), SP2(1, 1), {0, 0, 0, 0}, NULL, true,
         true, false, NULL, PLAIN},
        {2, 1, 16, 24, 1, SP2(9, 50), SP2(2, 1), SP2(2, 2), SP2(1, 1), {0, 0, 0, 1}, NULL, true,
         true, false, NULL, PLAIN},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        if (q8_cpu()->avx512f) cr_assert(ocl_takes(&specs[i]), "spec %zu not taken", i);
        check_conv(specs[i], &r);
        check_conv_same_bits_x(specs[i], &r, true);
    }
    /* not taken: stride 1, few input channels, narrow outputs */
    conv_spec no[] = {
        {2, 1, 32, 64, 1, SP2(27, 55), SP2(3, 3), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL,
         true, true, false, NULL, PLAIN},
        {2, 1, 3, 64, 1, SP2(27, 55), SP2(7, 7), SP2(2, 2), SP2(1, 1), {3, 3, 3, 3}, NULL,
         true, true, false, NULL, PLAIN},
        {2, 1, 32, 64, 1, SP2(27, 15), SP2(3, 3), SP2(2, 2), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, NULL, PLAIN},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) cr_assert(!ocl_takes(&no[i]));
}

/* Large 2-D maps with one group run in bands of output rows, each built and
 * multiplied by one thread (conv.c, "banded shift"): the bits of the whole
 * map's planes ("shift") and of im2col, on 1 and 3 threads, for stride
 * phases, dilation, a short last band, several images, the grid written
 * straight into Y (stride 2, no pads) and W as a graph input. */
Test(conv_op, banded_shift) {
    q8t_rng r = q8t_seed(37);
    conv_spec specs[] = {
        {2, 2, 13, 20, 1, SP2(47, 61), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, "Relu", PLAIN},
        {2, 1, 9, 16, 1, SP2(61, 70), SP2(3, 3), SP2(2, 2), SP2(2, 2), {2, 1, 2, 3}, NULL,
         true, true, false, NULL, PLAIN},
        {2, 1, 8, 24, 1, SP2(38, 66), SP2(3, 3), SP2(1, 1), SP2(5, 5), {5, 5, 5, 5}, NULL,
         true, true, false, "Clip", PLAIN},
        {2, 2, 6, 8, 1, SP2(70, 72), SP2(2, 2), SP2(2, 2), SP2(1, 1), {0, 0, 0, 0}, NULL,
         true, true, false, NULL, PLAIN},
        {2, 1, 7, 12, 1, SP2(41, 53), SP2(3, 5), SP2(1, 1), SP2(1, 1), {1, 2, 1, 2}, NULL,
         true, false, false, NULL, PLAIN},
        /* stride 1, no padding: B rows read from X itself (no planes
         * built), in bands and whole; dilated; groups; a small map */
        {2, 2, 9, 14, 1, SP2(45, 63), SP2(3, 3), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL,
         true, true, false, "Relu", PLAIN},
        {2, 1, 6, 10, 1, SP2(50, 44), SP2(3, 2), SP2(1, 1), SP2(2, 3), {0, 0, 0, 0}, NULL,
         true, true, false, NULL, PLAIN},
        {2, 2, 8, 12, 2, SP2(40, 41), SP2(3, 3), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL,
         true, true, false, NULL, PLAIN},
        {2, 1, 5, 7, 1, SP2(9, 11), SP2(3, 3), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL,
         false, true, false, "Clip", PLAIN},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        check_conv(specs[i], &r);
        check_conv_same_bits(specs[i], &r);
    }
}

/* 1x1 convs whose kernel reads B rows in place take whole panels straight
 * from X: the bits of packing B (im2col, shift), for groups, images,
 * partial panels and several K blocks. */
Test(conv_op, pointwise_rows_in_place) {
    q8t_rng r = q8t_seed(39);
    conv_spec specs[] = {
        {2, 2, 26, 34, 2, SP2(9, 7), SP2(1, 1), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL, true,
         true, false, "Relu", PLAIN},
        {2, 1, 300, 16, 1, SP2(8, 8), SP2(1, 1), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL,
         false, true, false, NULL, PLAIN},
        {2, 3, 24, 48, 3, SP2(7, 7), SP2(1, 1), SP2(1, 1), SP2(1, 1), {0, 0, 0, 0}, NULL, true,
         true, false, "Clip", PLAIN},
        {1, 2, 5, 9, 1, {70}, {1}, {1}, {1}, {0, 0}, NULL, true, true, false, NULL, PLAIN},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        check_conv(specs[i], &r);
        check_conv_same_bits(specs[i], &r);
    }
}

/* The depthwise AVX-512 loops on X (conv_dwx.h, taken automatically there)
 * give the bits of the portable planes loops. */
static void check_dw_same_bits(conv_spec s, q8t_rng *r) {
    int64_t isp = s.in[0] * (s.nsp > 1 ? s.in[1] : 1), ksp = s.k[0] * (s.nsp > 1 ? s.k[1] : 1);
    int64_t xn = s.n * s.c * isp, wn = s.m * ksp;
    float *x = fmalloc(xn), *w = fmalloc(wn), *b = fmalloc(s.m);
    q8t_fill(r, x, xn, -1, 1);
    q8t_fill(r, w, wn, -1, 1);
    q8t_fill(r, b, s.m, -1, 1);
    /* The loops start from 0 + bias: channel 0 of image 0 sums only -0
     * products onto a -0 bias, whose sign shows the start. */
    b[0] = -0.0f;
    for (int64_t i = 0; i < isp; i++) x[i] = 0.0f;
    for (int64_t i = 0; i < ksp; i++) w[i] = -0.5f - (float)i;
    /* a NaN input where Relu follows: its windows' outputs are NaN after
     * it on every path (the Relu op's x < 0 ? 0 : x, in registers or as a
     * pass) */
    if (s.act && !strcmp(s.act, "Relu") && s.c > 1) x[isp + isp / 2] = NAN;
    s.w = w;
    s.b = b;
    const void *in[2] = {x, w};
    q8_tensor_info info;
    s.impl = NULL;
    float *got = run_both(build_conv, &s, in, &info);
    s.impl = "planes";
    float *want = run_both(build_conv, &s, in, &info);
    int64_t numel;
    cr_assert(q8_shape_numel(info.dims, info.ndim, &numel));
#if defined(__GNUC__) && !defined(__clang__)
    cr_assert(memcmp(got, want, sizeof(float) * (size_t)numel) == 0, "auto vs planes");
#else
    /* The planes loops' a += w * x is an FMA only where the compiler
     * contracts it (GCC does in its AVX-512 clone; clang's CI build does
     * not): one rounding apart, and check_conv holds both to the reference. */
    for (int64_t i = 0; i < numel; i++)
        cr_assert(isnan(want[i]) ? isnan(got[i])
                                 : fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i])),
                  "auto vs planes at %ld: %.9g vs %.9g", (long)i, got[i], want[i]);
    cr_assert(signbit(got[0]) == signbit(want[0]), "auto vs planes: the sign of -0");
#endif
    free(got);
    free(want);
    free(x);
    free(w);
    free(b);
}

Test(conv_op, depthwise_on_x) {
    q8t_rng r = q8t_seed(37);
    /* The loops take stride 2 along W onto rows of more than 8 (the
     * first spec and the last two: planes). */
    conv_spec specs[] = {
        /* MobileNet's: 5x5 pads 2 on 14x14 and 28x28, 3x3 on 56x56 with
         * TF's pads (end only) */
        {2, 1, 19, 19, 19, SP2(14, 14), SP2(5, 5), SP2(2, 2), SP2(1, 1), {2, 2, 2, 2}, NULL,
         true, true, false, "HardSigmoid", PLAIN},
        {2, 2, 5, 5, 5, SP2(28, 28), SP2(5, 5), SP2(2, 2), SP2(1, 1), {2, 2, 2, 2}, NULL, true,
         true, false, NULL, PLAIN},
        {2, 1, 3, 3, 3, SP2(56, 56), SP2(3, 3), SP2(2, 2), SP2(1, 1), {0, 0, 1, 1}, NULL, true,
         true, false, "Relu", PLAIN},
        /* odd widths (partial vectors, several chunks), asymmetric pads,
         * stride 3 or 1 along H, 1-D, no bias, W as a graph input */
        {2, 2, 6, 6, 6, SP2(9, 77), SP2(3, 4), SP2(3, 2), SP2(1, 1), {0, 3, 2, 1}, NULL, false,
         true, false, "Clip", PLAIN},
        {2, 1, 4, 4, 4, SP2(5, 45), SP2(2, 3), SP2(1, 2), SP2(1, 1), {1, 1, 0, 2}, NULL, true,
         false, false, NULL, PLAIN},
        {1, 2, 3, 3, 3, {50}, {7}, {2}, {1}, {3, 3}, NULL, true, true, false, NULL, PLAIN},
        /* a 1x1 input with pads: every tap but one is padding */
        {2, 1, 2, 2, 2, SP2(1, 1), SP2(3, 3), SP2(2, 2), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, NULL, PLAIN},
        {2, 1, 2, 2, 2, SP2(7, 7), SP2(5, 5), SP2(1, 1), SP2(1, 1), {2, 2, 2, 2}, NULL, true,
         true, false, NULL, PLAIN},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        check_conv(specs[i], &r);
        check_dw_same_bits(specs[i], &r);
    }
}

/* Depthwise on small maps with at least 16 channels: 16 channels in the
 * vector lanes (conv_dwc.h, AVX-512): a partial last block of channels,
 * output maps not a multiple of 16 pixels, input rows over 16 wide,
 * stride 2, dilation, asymmetric pads, no bias, W as a graph input, two
 * images; the bits of the planes loops. */
Test(conv_op, depthwise_channels_in_lanes) {
    q8t_rng r = q8t_seed(39);
    conv_spec specs[] = {
        /* MobileNetV3's 5x5 on 7x7 and 14x14 */
        {2, 2, 21, 21, 21, SP2(7, 7), SP2(5, 5), SP2(1, 1), SP2(1, 1), {2, 2, 2, 2}, NULL,
         true, true, false, "HardSigmoid", PLAIN},
        {2, 1, 35, 35, 35, SP2(14, 14), SP2(5, 5), SP2(1, 1), SP2(1, 1), {2, 2, 2, 2}, NULL,
         true, true, false, "Relu", PLAIN},
        /* stride 2 from rows of 37 (three 16-pixel chunks), asymmetric pads */
        {2, 1, 16, 16, 16, SP2(23, 37), SP2(3, 3), SP2(2, 2), SP2(1, 1), {0, 1, 1, 0}, NULL,
         true, true, false, NULL, PLAIN},
        /* dilation 2, no bias, W as a graph input, rows of 30 */
        {2, 2, 17, 17, 17, SP2(9, 30), SP2(3, 3), SP2(1, 1), SP2(2, 2), {2, 2, 2, 2}, NULL,
         false, false, false, "Clip", PLAIN},
        /* pads that crop: the taps never reach the last input rows */
        {2, 1, 18, 18, 18, SP2(12, 11), SP2(3, 2), SP2(3, 2), SP2(1, 1), {1, 0, 0, 0}, NULL,
         true, true, false, NULL, PLAIN},
        /* maps in two bands of output rows (96 KiB of padded input each),
         * stride 2 and 1 */
        {2, 1, 17, 17, 17, SP2(60, 64), SP2(3, 3), SP2(2, 2), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, "Relu", PLAIN},
        {2, 1, 16, 16, 16, SP2(61, 32), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, "HardSigmoid", PLAIN},
        /* 3x3 stride 1 (its unrolled loops) on 29x29, a full block of 16
         * channels and a partial one */
        {2, 1, 20, 20, 20, SP2(29, 29), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, "Relu", PLAIN},
        /* rows of 56 and 58 outputs (the widest it takes): stride 2 from
         * 111 columns; 5x5 over 45 rows, two bands */
        {2, 1, 17, 17, 17, SP2(50, 111), SP2(3, 3), SP2(2, 2), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, NULL, PLAIN},
        {2, 1, 33, 33, 33, SP2(45, 58), SP2(5, 5), SP2(1, 1), SP2(1, 1), {2, 2, 2, 2}, NULL,
         true, true, false, "Clip", PLAIN},
        /* HardSwish in the registers on the way out (MobileNetV3's) */
        {2, 1, 24, 24, 24, SP2(14, 14), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL,
         true, true, false, "HardSwish", PLAIN},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        check_conv(specs[i], &r);
        check_dw_same_bits(specs[i], &r);
    }
}

/* Depthwise on rows of up to 64 outputs (conv_dwr.h, AVX-512: input rows
 * shared in registers). Stride 1 with the output as wide as the input (3x3
 * from rows of 7, 5x5 and 7x7 from 14): widths around the 16-lane vectors
 * (1 to 4 of them), heights that leave a partial block of output rows,
 * pads along H of 0 to k - 1 on either side (rows of padding read as
 * zeros), every activation (in the registers, or as a pass), no bias, W as
 * a graph input, two images; then stride 2, and rows wider than 64. The
 * bits of the planes loops. */
Test(conv_op, depthwise_rows_in_registers) {
    q8t_rng r = q8t_seed(43);
    const int64_t widths[] = {7, 14, 16, 17, 29, 32, 33, 48, 50, 64};
    const char *acts[] = {NULL, "Relu", "Clip", "HardSwish", "HardSigmoid"};
    for (int t = 0; t < 30; t++) {
        int64_t k = 3 + 2 * (t % 3), w = widths[t % 10], h = 1 + (int64_t)(q8t_next(&r) % 19);
        int64_t c = 1 + (int64_t)(q8t_next(&r) % 5);
        int64_t pt = (int64_t)(q8t_next(&r) % (uint64_t)k);
        int64_t pb = (int64_t)(q8t_next(&r) % (uint64_t)k);
        if (h + pt + pb < k) pb = k - 1; /* at least one output row */
        conv_spec s = {2, 1 + t % 2, c, c, c, SP2(h, w), SP2(k, k), SP2(1, 1), SP2(1, 1),
                       {pt, (k - 1) / 2, pb, (k - 1) / 2}, NULL, t % 4 != 1, t % 5 != 2, false,
                       acts[t % 5], PLAIN};
        check_conv(s, &r);
        check_dw_same_bits(s, &r);
    }
    /* Stride 2 (3x3 from 16 outputs a row, 5x5 from 24, up to 64): pads of
     * 0 to k - 1 on each side (TensorFlow's at the end only among them),
     * an input column past the last window or not, rows split into even
     * and odd columns across 1-4 vectors and the one after. */
    const int64_t owidths[] = {16, 17, 24, 31, 33, 48, 50, 64};
    for (int t = 0; t < 24; t++) {
        int64_t k = t % 2 ? 5 : 3, ow = owidths[t % 8];
        if (k == 5 && ow < 24) ow = 24 + t % 3;
        int64_t pl = (int64_t)(q8t_next(&r) % (uint64_t)k);
        int64_t pr = (int64_t)(q8t_next(&r) % (uint64_t)k);
        int64_t w = 2 * (ow - 1) + k - pl - pr + (int64_t)(q8t_next(&r) % 2);
        int64_t h = 1 + (int64_t)(q8t_next(&r) % 30), c = 1 + (int64_t)(q8t_next(&r) % 4);
        int64_t pt = (int64_t)(q8t_next(&r) % (uint64_t)k);
        int64_t pb = (int64_t)(q8t_next(&r) % (uint64_t)k);
        if (h + pt + pb < k) pb = k - 1;
        conv_spec s = {2, 1 + t % 2, c, c, c, SP2(h, w), SP2(k, k), SP2(2, 2), SP2(1, 1),
                       {pt, pl, pb, pr}, NULL, t % 4 != 1, t % 5 != 2, false, acts[t % 5], PLAIN};
        check_conv(s, &r);
        check_dw_same_bits(s, &r);
    }
    /* Stride 1 on rows wider than 64 (3x3, 5x5): chunks of 64 columns and
     * a last one of 1-64, each with the vectors either side of it. */
    const int64_t wide[] = {65, 79, 96, 112, 128, 129, 150, 200};
    for (int t = 0; t < 16; t++) {
        int64_t k = t % 2 ? 5 : 3, w = wide[t % 8], p = (k - 1) / 2;
        int64_t h = 1 + (int64_t)(q8t_next(&r) % 9), c = 1 + (int64_t)(q8t_next(&r) % 3);
        conv_spec s = {2, 1, c, c, c, SP2(h + p, w), SP2(k, k), SP2(1, 1), SP2(1, 1),
                       {p, p, p, p}, NULL, t % 4 != 1, t % 5 != 2, false, acts[t % 5], PLAIN};
        check_conv(s, &r);
        check_dw_same_bits(s, &r);
    }
}

/* Random 2-D geometries (fixed seed): every lowering the automatic choice
 * can take (bands of rows, whole-map planes, im2col, the depthwise loops,
 * channels in the lanes) against the reference and, for depthwise, the
 * bits of the planes loops; 1 vs 3 threads in each. */
static int64_t rnd(q8t_rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(q8t_next(r) % (uint64_t)(hi - lo + 1));
}

Test(conv_op, random_geometries) {
    q8t_rng r = q8t_seed(41);
    const char *acts[] = {NULL, "Relu", "Clip", "HardSigmoid"};
    for (int t = 0; t < 48; t++) {
        /* kinds: 0 any conv, 1 any depthwise, 2 stride-1 conv on a map
         * large enough for bands of rows, 3 depthwise with stride 2 along
         * rows of 9 or more */
        int kind = t % 4;
        bool dw = kind % 2, big = kind >= 2;
        int64_t c = dw ? rnd(&r, 3, 24) : rnd(&r, 1, 12);
        int64_t k0 = rnd(&r, 1, 5), k1 = rnd(&r, 2, 5), s0 = rnd(&r, 1, 3), s1 = rnd(&r, 1, 3);
        int64_t d0 = rnd(&r, 1, 3), d1 = rnd(&r, 1, 3);
        if (kind == 2) s0 = s1 = 1;
        if (kind == 3) s1 = 2;
        int64_t in0 = rnd(&r, (k0 - 1) * d0 + 1, big ? 70 : 44);
        int64_t in1 = rnd(&r, (k1 - 1) * d1 + (big ? 20 : 1), big ? 70 : 44);
        conv_spec sp = {2, rnd(&r, 1, 2), c, dw ? c : rnd(&r, 1, 20), dw ? c : 1,
                        SP2(in0, in1), SP2(k0, k1), SP2(s0, s1), SP2(d0, d1),
                        {rnd(&r, 0, k0 - 1), rnd(&r, 0, k1 - 1), rnd(&r, 0, k0 - 1),
                         rnd(&r, 0, k1 - 1)},
                        NULL, rnd(&r, 0, 3) != 0, rnd(&r, 0, 3) != 0, false,
                        acts[rnd(&r, 0, 3)], PLAIN};
        check_conv(sp, &r);
        if (dw) check_dw_same_bits(sp, &r);
    }
}

/* The depthwise loops come in 16- and 8-float instances (conv_impl.c;
 * 8 on AVX2 machines without AVX-512): f runs once with each forced. */
static void on_each_dw_width(void (*f)(void)) {
    const int lanes[] = {16, 8};
    for (int i = 0; i < 2; i++) {
        if (lanes[i] == 8 && !q8_cpu()->avx2) continue;
        q8_conv_dw_lanes = lanes[i];
        f();
    }
    q8_conv_dw_lanes = 0;
}

static void depthwise_cases(void) {
    q8t_rng r = q8t_seed(32);
    check_conv((conv_spec){2, 2, 13, 13, 13, SP2(9, 7), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                           {1, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 1, 6, 12, 6, SP2(9, 7), SP2(3, 3), SP2(2, 2), SP2(1, 1),
                           {1, 0, 1, 2}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 1, 4, 4, 4, SP2(9, 8), SP2(3, 2), SP2(1, 3), SP2(2, 2),
                           {2, 1, 0, 1}, NULL, false, false, false, "Relu", PLAIN},
               &r);
    check_conv((conv_spec){1, 2, 5, 5, 5, {11, 1, 1}, {3, 1, 1}, ONE3, {2, 1, 1},
                           {2, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
}

Test(conv_op, depthwise) { on_each_dw_width(depthwise_cases); }

/* Depthwise on narrow maps (rows < 64 outputs: one grid, garbage columns
 * included; rows <= 32 floats: the planes zeroed in one go), the grid's
 * last <= 80 outputs one block of 1 to 5 vectors, wide rows with their
 * whole vectors after the long blocks as one block, and the activation
 * over adjacent channels at once. */
static void depthwise_narrow_cases(void) {
    q8t_rng r = q8t_seed(38);
    conv_spec specs[] = {
        /* MobileNetV3's 7x7 5x5: a grid of 73, 5 vectors */
        {2, 2, 13, 13, 13, SP2(7, 7), SP2(5, 5), SP2(1, 1), SP2(1, 1), {2, 2, 2, 2}, NULL,
         true, true, false, "HardSigmoid", PLAIN},
        /* grids of 13 (1 vector), 38 (3), 80 (5, dilated), 64 + 33 (3),
         * 128 + 55 (4) */
        {2, 1, 5, 5, 5, SP2(3, 3), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, "Relu", PLAIN},
        {2, 2, 3, 3, 3, SP2(5, 6), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, false,
         true, false, "Clip", PLAIN},
        {2, 1, 6, 6, 6, SP2(6, 10), SP2(3, 3), SP2(1, 1), SP2(2, 2), {2, 2, 2, 2}, NULL, true,
         true, false, NULL, PLAIN},
        {2, 1, 9, 9, 9, SP2(9, 9), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         false, false, "LeakyRelu", PLAIN},
        {2, 2, 4, 4, 4, SP2(11, 13), SP2(5, 5), SP2(1, 1), SP2(1, 1), {2, 2, 2, 2}, NULL, true,
         true, false, "HardSigmoid", PLAIN},
        /* stride 2 along H only (two phases zeroed at once), asymmetric
         * pads; 1-D */
        {2, 2, 7, 7, 7, SP2(9, 7), SP2(3, 3), SP2(2, 1), SP2(1, 1), {1, 0, 0, 2}, NULL, true,
         true, false, "Relu", PLAIN},
        {1, 2, 3, 3, 3, {12}, {3}, {1}, {1}, {1, 1}, NULL, true, true, false, NULL, PLAIN},
        /* stride 2 onto 7x7 (the planes loops, not those on X: four
         * phases zeroed at once) */
        {2, 2, 13, 13, 13, SP2(14, 14), SP2(5, 5), SP2(2, 2), SP2(1, 1), {2, 2, 2, 2}, NULL,
         true, true, false, "HardSigmoid", PLAIN},
        /* rows of 28 and 60 (grid), 70 and 100 (64 + 0 or 2 vectors +
         * a partial one) */
        {2, 1, 5, 5, 5, SP2(28, 28), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, "Relu", PLAIN},
        {2, 1, 3, 3, 3, SP2(4, 60), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, NULL, PLAIN},
        {2, 2, 3, 3, 3, SP2(5, 70), SP2(3, 3), SP2(1, 1), SP2(1, 1), {1, 1, 1, 1}, NULL, true,
         true, false, "HardSigmoid", PLAIN},
        {2, 1, 2, 2, 2, SP2(3, 100), SP2(3, 5), SP2(1, 1), SP2(1, 1), {1, 2, 1, 2}, NULL, true,
         true, false, NULL, PLAIN},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) check_conv(specs[i], &r);
}

Test(conv_op, depthwise_narrow) { on_each_dw_width(depthwise_narrow_cases); }

Test(conv_op, conv1d_and_3d) {
    q8t_rng r = q8t_seed(33);
    check_conv((conv_spec){1, 2, 5, 6, 1, {13, 1, 1}, {3, 1, 1}, {2, 1, 1}, {2, 1, 1},
                           {1, 2}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){1, 1, 6, 4, 2, {9, 1, 1}, {1, 1, 1}, ONE3, ONE3,
                           {0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){3, 2, 4, 5, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2},
                           {1, 0, 1, 0, 1, 2}, NULL, true, true, false, NULL, PLAIN},
               &r);
    check_conv((conv_spec){3, 1, 6, 6, 3, {4, 5, 3}, {2, 2, 2}, ONE3, ONE3,
                           {0, 0, 0, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN},
               &r);
    /* One input channel, many filters, long kernel, large stride (an STFT
     * front end): a GEMM over the stride-phase planes, not the depthwise
     * loops; batch 2, and with pads and a ragged last frame. */
    check_conv((conv_spec){1, 2, 1, 20, 1, {301, 1, 1}, {32, 1, 1}, {16, 1, 1}, ONE3,
                           {0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){1, 1, 1, 9, 1, {250, 1, 1}, {40, 1, 1}, {12, 1, 1}, ONE3,
                           {7, 3}, NULL, true, true, false, "Relu", PLAIN}, &r);
    /* Depthwise with multiplier 8 and 9 (GEMM per group), odd channels. */
    check_conv((conv_spec){2, 2, 3, 24, 3, SP2(9, 7), SP2(3, 3), SP2(2, 1), SP2(1, 1),
                           {1, 1, 0, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
    check_conv((conv_spec){2, 1, 5, 45, 5, SP2(6, 11), SP2(5, 5), SP2(1, 1), SP2(1, 2),
                           {2, 2, 2, 2}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* 3-D depthwise (direct loops on planes; im2col/shift forced too) */
    check_conv((conv_spec){3, 1, 3, 3, 3, {4, 5, 3}, {2, 2, 2}, ONE3, ONE3,
                           {1, 0, 0, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN},
               &r);
}

Test(conv_op, auto_pad) {
    q8t_rng r = q8t_seed(34);
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"};
    for (int i = 0; i < 4; i++) {
        check_conv((conv_spec){2, 2, 3, 4, 1, SP2(9, 7), SP2(4, 3), SP2(2, 3), SP2(1, 1),
                               {0, 0, 0, 0}, modes[i], true, true, false, NULL, PLAIN}, &r);
        check_conv((conv_spec){2, 1, 4, 4, 4, SP2(8, 7), SP2(2, 3), SP2(1, 2), SP2(2, 1),
                               {0, 0, 0, 0}, modes[i], true, true, false, NULL, PLAIN}, &r);
    }
}

Test(conv_op, fused_activations) {
    q8t_rng r = q8t_seed(35);
    for (size_t i = 1; i < sizeof acts / sizeof acts[0]; i++) {
        check_conv((conv_spec){2, 1, 5, 7, 1, SP2(9, 7), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                               {1, 1, 1, 1}, NULL, true, true, false, acts[i], PLAIN}, &r);
        check_conv((conv_spec){2, 1, 5, 5, 5, SP2(9, 7), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                               {1, 1, 1, 1}, NULL, true, true, false, acts[i], PLAIN}, &r);
        check_conv((conv_spec){2, 1, 5, 7, 1, SP2(3, 3), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                               {0, 0, 0, 0}, NULL, true, true, false, acts[i], PLAIN}, &r);
    }
}

Test(conv_op, errors) {
    float w[512] = {0};
    q8t_in ins[3] = {{"X", Q8_F32, 4, {1, 6, 9, 7}, NULL}, {"W", Q8_F32, 4, {4, 4, 3, 3}, w},
                     {"B", Q8_F32, 1, {4}, w}};
    q8_graph *g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 2);
    expect_error(g, "weight has 4 input channels per group, expected C/group = 6/2 = 3");
    ins[1].dims[1] = 3;
    g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 4);
    expect_error(g, "group 4 does not divide the 6 input channels");
    g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 2);
    q8t_attr_ints(g, "kernel_shape", (int64_t[]){3, 5}, 2);
    expect_error(g, "kernel_shape[1] is 5 but the weight has 3");
    g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 2);
    q8t_attr_ints(g, "kernel_shape", (int64_t[]){3}, 1);
    expect_error(g, "kernel_shape has 1 values, expected 2");
    g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 2);
    q8t_attr_ints(g, "strides", (int64_t[]){1, 0}, 2);
    expect_error(g, "strides[1] is 0");
    g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 2);
    q8t_attr_str(g, "auto_pad", "SAME");
    expect_error(g, "auto_pad 'SAME'");
    g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 2);
    q8t_attr_ints(g, "dilations", (int64_t[]){5, 1}, 2);
    expect_error(g, "smaller than the dilated kernel");
    ins[2].dims[0] = 5;
    g = q8t_graph1("Conv", ins, 3, 1);
    q8t_attr_int(g, "group", 2);
    expect_error(g, "bias must have shape [4]");
    ins[1].ndim = 3;
    expect_error(q8t_graph1("Conv", ins, 2, 1), "weight has rank 3");
    q8t_in ins2[2] = {{"X", Q8_F32, 2, {1, 6}, NULL}, {"W", Q8_F32, 2, {4, 6}, w}};
    expect_error(q8t_graph1("Conv", ins2, 2, 1), "only 1 to 3 spatial dims");
    ins[1].ndim = 4;
    ins[2].dims[0] = 4;
    g = q8t_graph1("Conv", ins, 2, 1);
    q8t_attr_int(g, "group", 2);
    q8t_attr_str(g, "_conv_impl", "winograd");
    expect_error(g, "_conv_impl 'winograd'");
}

/* --------------------------------------------------------- ConvTranspose */

static q8_graph *build_convt(const void *v) {
    const conv_spec *s = v;
    q8_graph *g = build_conv_common(s, "ConvTranspose", s->c, s->m / s->g);
    bool any = false;
    for (int i = 0; i < s->nsp; i++) any |= s->opad[i] != 0;
    if (any) q8t_attr_ints(g, "output_padding", s->opad, s->nsp);
    if (s->oshape[0] > 0) q8t_attr_ints(g, "output_shape", s->oshape, s->nsp);
    return g;
}

static int64_t floordiv2(int64_t v) { return v >= 0 ? v / 2 : -((1 - v) / 2); }

/* Output dims and start pads from the ONNX ConvTranspose text. */
static void ref_convt_geom(const conv_spec *s, int64_t *pb, int64_t *out) {
    for (int i = 0; i < s->nsp; i++) {
        int64_t ext = (s->k[i] - 1) * s->d[i] + 1;
        int64_t full = s->s[i] * (s->in[i] - 1) + s->opad[i] + ext;
        int64_t want = s->oshape[0] > 0 ? s->oshape[i] : -1;
        if (want < 0 && s->auto_pad && strncmp(s->auto_pad, "SAME", 4) == 0)
            want = s->in[i] * s->s[i];
        if (want >= 0) {
            int64_t total = full - want;
            bool upper = s->auto_pad && !strcmp(s->auto_pad, "SAME_UPPER");
            pb[i] = upper ? floordiv2(total) : total - floordiv2(total);
            out[i] = want;
        } else if (s->auto_pad && !strcmp(s->auto_pad, "VALID")) {
            pb[i] = 0;
            out[i] = full;
        } else {
            pb[i] = s->pads[i];
            out[i] = full - s->pads[i] - s->pads[s->nsp + i];
        }
    }
}

static void check_convt(conv_spec s, q8t_rng *r) {
    int64_t isp = 1, ksp = 1, pb[3], out[3], osp = 1;
    for (int i = 0; i < s.nsp; i++) {
        isp *= s.in[i];
        ksp *= s.k[i];
    }
    ref_convt_geom(&s, pb, out);
    for (int i = 0; i < s.nsp; i++) osp *= out[i];
    int64_t cg = s.c / s.g, mg = s.m / s.g;
    int64_t xn = s.n * s.c * isp, wn = s.c * mg * ksp;
    float *x = fmalloc(xn), *w = fmalloc(wn), *b = fmalloc(s.m);
    q8t_fill(r, x, xn, -1, 1);
    q8t_fill(r, w, wn, -1, 1);
    q8t_fill(r, b, s.m, -1, 1);
    s.w = w;
    s.b = b;
    double *acc = calloc((size_t)(s.n * s.m * osp), sizeof(double));
    int64_t I[3] = {1, 1, 1}, K[3] = {1, 1, 1}, O[3] = {1, 1, 1}, S[3] = {1, 1, 1},
            D[3] = {1, 1, 1}, P[3] = {0, 0, 0};
    for (int i = 0; i < s.nsp; i++) {
        int j = 3 - s.nsp + i;
        I[j] = s.in[i];
        K[j] = s.k[i];
        O[j] = out[i];
        S[j] = s.s[i];
        D[j] = s.d[i];
        P[j] = pb[i];
    }
    for (int64_t n = 0; n < s.n; n++)
        for (int64_t c = 0; c < s.c; c++)
            for (int64_t mo = 0; mo < mg; mo++) {
                int64_t m = (c / cg) * mg + mo;
                for (int64_t i0 = 0; i0 < I[0]; i0++)
                    for (int64_t i1 = 0; i1 < I[1]; i1++)
                        for (int64_t i2 = 0; i2 < I[2]; i2++)
                            for (int64_t k0 = 0; k0 < K[0]; k0++)
                                for (int64_t k1 = 0; k1 < K[1]; k1++)
                                    for (int64_t k2 = 0; k2 < K[2]; k2++) {
                                        int64_t o0 = i0 * S[0] - P[0] + k0 * D[0];
                                        int64_t o1 = i1 * S[1] - P[1] + k1 * D[1];
                                        int64_t o2 = i2 * S[2] - P[2] + k2 * D[2];
                                        if (o0 < 0 || o0 >= O[0] || o1 < 0 || o1 >= O[1] ||
                                            o2 < 0 || o2 >= O[2])
                                            continue;
                                        double xv = x[(((n * s.c + c) * I[0] + i0) * I[1] + i1) *
                                                          I[2] + i2];
                                        double wv = w[(((c * mg + mo) * K[0] + k0) * K[1] + k1) *
                                                          K[2] + k2];
                                        acc[(((n * s.m + m) * O[0] + o0) * O[1] + o1) * O[2] +
                                            o2] += xv * wv;
                                    }
            }
    float *want = fmalloc(s.n * s.m * osp);
    for (int64_t i = 0; i < s.n * s.m * osp; i++)
        want[i] = (float)(acc[i] + (s.bias ? b[(i / osp) % s.m] : 0));
    apply_ref_act(s.act, want, s.n * s.m * osp);
    const void *in[2] = {x, w};
    q8_tensor_info info;
    float *got = run_both(build_convt, &s, in, &info);
    cr_assert_eq(info.ndim, s.nsp + 2);
    cr_assert(info.dims[0] == s.n && info.dims[1] == s.m);
    for (int i = 0; i < s.nsp; i++)
        cr_assert_eq(info.dims[2 + i], out[i], "out dim %d: %lld vs %lld", i,
                     (long long)info.dims[2 + i], (long long)out[i]);
    q8t_assert_close(got, want, s.n * s.m * osp, 1e-4f, 1e-5f * (float)(cg * ksp + 1),
                     "ConvTranspose");
    free(got);
    free(acc);
    free(x);
    free(w);
    free(b);
    free(want);
}

Test(convtranspose_op, shapes) {
    q8t_rng r = q8t_seed(41);
    /* plain, c=13, 9x7 */
    check_convt((conv_spec){2, 2, 13, 5, 1, SP2(9, 7), SP2(3, 3), SP2(1, 1), SP2(1, 1),
                            {0, 0, 0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* strides, dilations, asymmetric pads, output_padding, unpacked W */
    check_convt((conv_spec){2, 1, 4, 6, 1, SP2(5, 4), SP2(3, 2), SP2(2, 3), SP2(2, 1),
                            {1, 0, 2, 1}, NULL, true, false, false, NULL, {1, 2, 0}, {0}, NULL,
                            NULL, NULL}, &r);
    /* groups 2 and 3 */
    check_convt((conv_spec){2, 2, 6, 4, 2, SP2(5, 6), SP2(3, 3), SP2(2, 2), SP2(1, 1),
                            {1, 1, 0, 0}, NULL, true, true, false, NULL, {1, 1, 0}, {0}, NULL,
                            NULL, NULL}, &r);
    check_convt((conv_spec){2, 1, 9, 6, 3, SP2(4, 3), SP2(2, 3), SP2(1, 2), SP2(1, 1),
                            {0, 1, 0, 1}, NULL, false, true, true, NULL, PLAIN}, &r);
    /* depthwise-like */
    check_convt((conv_spec){2, 1, 5, 5, 5, SP2(6, 6), SP2(4, 4), SP2(2, 2), SP2(1, 1),
                            {1, 1, 1, 1}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* one input pixel (GEMV) */
    check_convt((conv_spec){2, 2, 7, 3, 1, SP2(1, 1), SP2(4, 4), SP2(1, 1), SP2(1, 1),
                            {0, 0, 0, 0}, NULL, true, true, false, NULL, PLAIN}, &r);
    /* 1-D and 3-D */
    check_convt((conv_spec){1, 2, 3, 4, 1, {7, 1, 1}, {3, 1, 1}, {2, 1, 1}, {2, 1, 1},
                            {1, 0}, NULL, true, true, false, NULL, {1, 0, 0}, {0}, NULL, NULL,
                            NULL}, &r);
    check_convt((conv_spec){3, 1, 4, 4, 2, {3, 4, 2}, {2, 3, 2}, {2, 1, 2}, ONE3,
                            {0, 1, 0, 1, 0, 1}, NULL, true, true, false, NULL, PLAIN},
                &r);
    /* activation */
    check_convt((conv_spec){2, 1, 4, 6, 1, SP2(5, 4), SP2(3, 3), SP2(2, 2), SP2(1, 1),
                            {1, 1, 1, 1}, NULL, true, true, false, "Clip", PLAIN},
                &r);
}

Test(convtranspose_op, output_shape_and_auto_pad) {
    q8t_rng r = q8t_seed(42);
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
    for (int i = 0; i < 3; i++)
        check_convt((conv_spec){2, 2, 3, 4, 1, SP2(5, 4), SP2(3, 4), SP2(2, 3), SP2(1, 1),
                                {0, 0, 0, 0}, modes[i], true, true, false, NULL, PLAIN}, &r);
    /* output_shape bigger and smaller than the full output */
    check_convt((conv_spec){2, 1, 3, 2, 1, SP2(3, 3), SP2(3, 3), SP2(3, 2), SP2(1, 1),
                            {0, 0, 0, 0}, NULL, true, true, false, NULL, {0}, {10, 8, 0}, NULL,
                            NULL, NULL}, &r);
    check_convt((conv_spec){2, 1, 3, 2, 1, SP2(3, 3), SP2(3, 3), SP2(2, 2), SP2(1, 1),
                            {0, 0, 0, 0}, "SAME_UPPER", true, true, false, NULL, {0}, {5, 6, 0},
                            NULL, NULL, NULL}, &r);
}

Test(convtranspose_op, errors) {
    float w[512] = {0};
    q8t_in ins[3] = {{"X", Q8_F32, 4, {1, 6, 5, 5}, NULL}, {"W", Q8_F32, 4, {4, 2, 3, 3}, w},
                     {"B", Q8_F32, 1, {2}, w}};
    expect_error(q8t_graph1("ConvTranspose", ins, 2, 1), "weight has 4 input channels");
    ins[1].dims[0] = 6;
    q8_graph *g = q8t_graph1("ConvTranspose", ins, 2, 1);
    q8t_attr_ints(g, "output_padding", (int64_t[]){1, 1}, 2);
    expect_error(g, "output_padding 1 must be");
    g = q8t_graph1("ConvTranspose", ins, 2, 1);
    q8t_attr_ints(g, "pads", (int64_t[]){5, 5, 5, 5}, 4);
    expect_error(g, "output spatial dim 0 would be -3");
    g = q8t_graph1("ConvTranspose", ins, 2, 1);
    q8t_attr_int(g, "group", 4);
    expect_error(g, "group 4 does not divide");
    g = q8t_graph1("ConvTranspose", ins, 3, 1);
    q8t_attr_int(g, "group", 3);
    expect_error(g, "bias must have shape [6]");
}
