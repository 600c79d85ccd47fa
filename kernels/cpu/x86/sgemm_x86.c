/* x86 micro-kernels for q8_sgemm: AVX2+FMA (6x16) and AVX-512F (8x32),
 * compiled with per-function target attributes so the library stays
 * portable x86-64; sgemm.c picks one at run time. */
#include "sgemm_kernels.h"

#ifdef Q8_SGEMM_X86
#include <immintrin.h>
#include <math.h>

#include "act_avx512.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* ---- AVX2: 6 rows x 16 columns, 12 accumulators ---- */

#define A2_MR 6
#define A2_NR 16

/* Clip's `x < lo ? lo : x > hi ? hi : x` (NaN stays NaN, -0 stays -0). */
AVX2 static inline __m256 a2_clip(__m256 x, float lo, float hi) {
    __m256 vl = _mm256_set1_ps(lo), vh = _mm256_set1_ps(hi);
    __m256 r = _mm256_blendv_ps(x, vh, _mm256_cmp_ps(x, vh, _CMP_GT_OQ));
    return _mm256_blendv_ps(r, vl, _mm256_cmp_ps(x, vl, _CMP_LT_OQ));
}

/* HardSwish as q8_act_apply computes it: h = al*x + be rounded twice (the
 * empty asm keeps the compiler from contracting it into an FMA), then
 * h <= 0 ? -0 : h >= 1 ? x : x*h (NaN stays NaN). */
AVX2 static inline __m256 a2_hswish(__m256 x, float al, float be) {
    __m256 h = _mm256_mul_ps(_mm256_set1_ps(al), x);
    __asm__("" : "+x"(h));
    h = _mm256_add_ps(h, _mm256_set1_ps(be));
    __m256 r = _mm256_mul_ps(x, h);
    r = _mm256_blendv_ps(r, x, _mm256_cmp_ps(h, _mm256_set1_ps(1.0f), _CMP_GE_OQ));
    return _mm256_blendv_ps(r, _mm256_set1_ps(-0.0f),
                            _mm256_cmp_ps(h, _mm256_setzero_ps(), _CMP_LE_OQ));
}

/* Row i of a tile: alpha/beta, then the epilogue (epi may be NULL). The
 * bias is a separate add and ReLU is max(0, x) with x second (NaN and -0
 * stay): the bits of q8_act_apply_block's `x += b; x < 0 ? 0 : x`. */
AVX2 static inline void a2_store(float *c, __m256 x0, __m256 x1, __m256 va, __m256 vb,
                                 float beta, const q8_sgemm_epi *epi, int i) {
    x0 = _mm256_mul_ps(x0, va);
    x1 = _mm256_mul_ps(x1, va);
    if (beta != 0.0f) {
        x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c), x0);
        x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + 8), x1);
    }
    if (epi) {
        if (epi->bias_rows) {
            __m256 b = _mm256_broadcast_ss(epi->bias_rows + i);
            x0 = _mm256_add_ps(x0, b);
            x1 = _mm256_add_ps(x1, b);
        } else if (epi->bias_cols) {
            x0 = _mm256_add_ps(x0, _mm256_loadu_ps(epi->bias_cols));
            x1 = _mm256_add_ps(x1, _mm256_loadu_ps(epi->bias_cols + 8));
        }
        if (epi->relu) {
            x0 = _mm256_max_ps(_mm256_setzero_ps(), x0); /* NaN, -0 stay */
            x1 = _mm256_max_ps(_mm256_setzero_ps(), x1); /* NaN, -0 stay */
        } else if (epi->clip) {
            x0 = a2_clip(x0, epi->lo, epi->hi);
            x1 = a2_clip(x1, epi->lo, epi->hi);
        } else if (epi->hswish) {
            x0 = a2_hswish(x0, epi->lo, epi->hi);
            x1 = a2_hswish(x1, epi->lo, epi->hi);
        }
    }
    _mm256_storeu_ps(c, x0);
    _mm256_storeu_ps(c + 8, x1);
}

/* pb: packed panel (offk NULL) or the base that offk's rows start from. */
AVX2 static inline __attribute__((always_inline)) void
ukr_avx2_body(int64_t kc, const float *pa, const float *pb, const int64_t *offk, float *c,
              int64_t ldc, float alpha, float beta, const q8_sgemm_epi *epi) {
    __m256 c0a = _mm256_setzero_ps(), c0b = c0a, c1a = c0a, c1b = c0a, c2a = c0a, c2b = c0a;
    __m256 c3a = c0a, c3b = c0a, c4a = c0a, c4b = c0a, c5a = c0a, c5b = c0a;
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; k++) {
        const float *r = offk ? pb + offk[k] : pb + k * A2_NR;
        __m256 b0 = _mm256_loadu_ps(r), b1 = _mm256_loadu_ps(r + 8), a;
#define A2_ROW(i)                                                                              \
    a = _mm256_broadcast_ss(pa + i);                                                           \
    c##i##a = _mm256_fmadd_ps(a, b0, c##i##a);                                                 \
    c##i##b = _mm256_fmadd_ps(a, b1, c##i##b);
        A2_ROW(0) A2_ROW(1) A2_ROW(2) A2_ROW(3) A2_ROW(4) A2_ROW(5)
#undef A2_ROW
        pa += A2_MR;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    a2_store(c, c0a, c0b, va, vb, beta, epi, 0);
    a2_store(c + ldc, c1a, c1b, va, vb, beta, epi, 1);
    a2_store(c + 2 * ldc, c2a, c2b, va, vb, beta, epi, 2);
    a2_store(c + 3 * ldc, c3a, c3b, va, vb, beta, epi, 3);
    a2_store(c + 4 * ldc, c4a, c4b, va, vb, beta, epi, 4);
    a2_store(c + 5 * ldc, c5a, c5b, va, vb, beta, epi, 5);
}

AVX2 static void ukr_avx2(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                          float alpha, float beta) {
    ukr_avx2_body(kc, pa, pb, NULL, c, ldc, alpha, beta, NULL);
}

AVX2 static void ukr_rows_avx2(int64_t kc, const float *pa, const float *b, const int64_t *offk,
                               float *c, int64_t ldc, float alpha, float beta) {
    ukr_avx2_body(kc, pa, b, offk, c, ldc, alpha, beta, NULL);
}

AVX2 static void ukr_epi_avx2(int64_t kc, const float *pa, const float *pb, const int64_t *offk,
                              float *c, int64_t ldc, float alpha, float beta,
                              const q8_sgemm_epi *epi) {
    if (offk) ukr_avx2_body(kc, pa, pb, offk, c, ldc, alpha, beta, epi);
    else ukr_avx2_body(kc, pa, pb, NULL, c, ldc, alpha, beta, epi);
}

/* ---- GEMV (memory bound: AVX2 is enough for both kernels) ---- */

AVX2 static inline float a2_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* One row's dot product; dots_avx2's 4-row loop does exactly the same
 * arithmetic per row, so a result never depends on how rows are grouped. */
AVX2 static float dot1_avx2(int64_t k, const float *r, const float *x) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + i), _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(r + i + 8), _mm256_loadu_ps(x + i + 8), s1);
    }
    if (i + 8 <= k) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(r + i), _mm256_loadu_ps(x + i), s0);
        i += 8;
    }
    float s = a2_hsum(_mm256_add_ps(s0, s1));
    for (; i < k; i++) s = fmaf(r[i], x[i], s);
    return s;
}

AVX2 static void dots_avx2(int64_t n, int64_t k, const float *rows, int64_t ld, const float *x,
                           float *y) {
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        const float *r0 = rows + j * ld, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
        __m256 s00 = _mm256_setzero_ps(), s01 = s00, s10 = s00, s11 = s00;
        __m256 s20 = s00, s21 = s00, s30 = s00, s31 = s00;
        int64_t i = 0;
        for (; i + 16 <= k; i += 16) {
            __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
            s00 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + i), x0, s00);
            s01 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + i + 8), x1, s01);
            s10 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + i), x0, s10);
            s11 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + i + 8), x1, s11);
            s20 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + i), x0, s20);
            s21 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + i + 8), x1, s21);
            s30 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + i), x0, s30);
            s31 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + i + 8), x1, s31);
        }
        if (i + 8 <= k) {
            __m256 x0 = _mm256_loadu_ps(x + i);
            s00 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + i), x0, s00);
            s10 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + i), x0, s10);
            s20 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + i), x0, s20);
            s30 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + i), x0, s30);
            i += 8;
        }
        float t0 = a2_hsum(_mm256_add_ps(s00, s01)), t1 = a2_hsum(_mm256_add_ps(s10, s11));
        float t2 = a2_hsum(_mm256_add_ps(s20, s21)), t3 = a2_hsum(_mm256_add_ps(s30, s31));
        for (; i < k; i++) {
            t0 = fmaf(r0[i], x[i], t0);
            t1 = fmaf(r1[i], x[i], t1);
            t2 = fmaf(r2[i], x[i], t2);
            t3 = fmaf(r3[i], x[i], t3);
        }
        y[j] = t0;
        y[j + 1] = t1;
        y[j + 2] = t2;
        y[j + 3] = t3;
    }
    for (; j < n; j++) y[j] = dot1_avx2(k, rows + j * ld, x);
}

AVX2 static void axpys_avx2(int64_t n, int64_t k, const float *b, int64_t ld, const float *x,
                            float *y) {
    int64_t j = 0;
    for (; j + 64 <= n; j += 64) {
        __m256 s[8];
        for (int q = 0; q < 8; q++) s[q] = _mm256_setzero_ps();
        const float *p = b + j;
        for (int64_t i = 0; i < k; i++, p += ld) {
            __m256 xv = _mm256_broadcast_ss(x + i);
            for (int q = 0; q < 8; q++)
                s[q] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(p + 8 * q), s[q]);
        }
        for (int q = 0; q < 8; q++) _mm256_storeu_ps(y + j + 8 * q, s[q]);
    }
    for (; j + 8 <= n; j += 8) {
        __m256 s = _mm256_setzero_ps();
        const float *p = b + j;
        for (int64_t i = 0; i < k; i++, p += ld)
            s = _mm256_fmadd_ps(_mm256_broadcast_ss(x + i), _mm256_loadu_ps(p), s);
        _mm256_storeu_ps(y + j, s);
    }
    for (; j < n; j++) {
        float s = 0.0f;
        for (int64_t i = 0; i < k; i++) s = fmaf(x[i], b[i * ld + j], s);
        y[j] = s;
    }
}

const q8_sgemm_kernel q8_sgemm_kernel_avx2 = {
    .name = "avx2", .id = 2, .b_id = 2, .mr = A2_MR, .nr = A2_NR,
    .ukr = ukr_avx2, .ukr_rows = ukr_rows_avx2, .ukr_epi = ukr_epi_avx2,
    .epi_hswish = true,
    .dots = dots_avx2, .axpys = axpys_avx2,
};

/* ---- AVX-512: 8 or 12 rows x 32 columns, 16 or 24 accumulators (8
 * divides the usual channel counts, so conv GEMMs have no partial row
 * tiles; 12 where M suits it, see pick_kernel in sgemm.c) ---- */

#define A5_NR 32

AVX512 static inline __attribute__((always_inline)) void
ukr_avx512_body(int64_t kc, const float *pa, const float *pb, const int64_t *offk, float *c,
                int64_t ldc, float alpha, float beta, const q8_sgemm_epi *epi, bool half,
                const int MR) {
    __m512 acc[12][2];
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int64_t k = 0; k < kc; k++) {
        const float *r = offk ? pb + offk[k] : pb + k * A5_NR;
        __m512 b0 = _mm512_loadu_ps(r), b1 = half ? b0 : _mm512_loadu_ps(r + 16);
        if (offk) {
            /* B rows read in place: the next panel's, K rows of X apart,
             * too many streams for the hardware prefetchers (a 1x1 conv
             * 64 -> 64 on 160x160, 2 threads: 1.19-1.31 -> 1.10-1.11 ms) */
            _mm_prefetch((const char *)(r + A5_NR), _MM_HINT_T0);
            _mm_prefetch((const char *)(r + A5_NR + 16), _MM_HINT_T0);
        }
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++) {
            __m512 a = _mm512_set1_ps(pa[i]);
            acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
            if (!half) acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
        }
        pa += MR;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
        float *ci = c + i * ldc;
        __m512 x0 = _mm512_mul_ps(acc[i][0], va), x1 = _mm512_mul_ps(acc[i][1], va);
        if (beta != 0.0f) {
            x0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci), x0);
            if (!half) x1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16), x1);
        }
        if (epi) { /* as a2_store */
            if (epi->bias_rows) {
                __m512 b = _mm512_set1_ps(epi->bias_rows[i]);
                x0 = _mm512_add_ps(x0, b);
                x1 = _mm512_add_ps(x1, b);
            } else if (epi->bias_cols) {
                x0 = _mm512_add_ps(x0, _mm512_loadu_ps(epi->bias_cols));
                x1 = _mm512_add_ps(x1, _mm512_loadu_ps(epi->bias_cols + 16));
            }
            if (epi->relu) {
                x0 = _mm512_max_ps(_mm512_setzero_ps(), x0); /* NaN, -0 stay */
                x1 = _mm512_max_ps(_mm512_setzero_ps(), x1); /* NaN, -0 stay */
            } else if (epi->clip) {
                x0 = q8v_clip(x0, epi->lo, epi->hi);
                x1 = q8v_clip(x1, epi->lo, epi->hi);
            } else if (epi->hswish) {
                x0 = q8v_hswish(x0, epi->lo, epi->hi);
                x1 = q8v_hswish(x1, epi->lo, epi->hi);
            }
        }
        _mm512_storeu_ps(ci, x0);
        if (!half) _mm512_storeu_ps(ci + 16, x1);
    }
}

/* The tile's rows: 8 (16 accumulators) or 12 (24: the broadcasts of A
 * and the loads of B spread over more FMAs; chosen by the GEMM's M in
 * sgemm.c, pick_kernel). */
#define A5_WRAPPERS(R)                                                                       \
    AVX512 static void ukr_avx512_##R(int64_t kc, const float *pa, const float *pb, float *c, \
                                      int64_t ldc, float alpha, float beta) {                \
        ukr_avx512_body(kc, pa, pb, NULL, c, ldc, alpha, beta, NULL, false, R);              \
    }                                                                                        \
    AVX512 static void ukr_rows_avx512_##R(int64_t kc, const float *pa, const float *b,       \
                                           const int64_t *offk, float *c, int64_t ldc,       \
                                           float alpha, float beta) {                        \
        ukr_avx512_body(kc, pa, b, offk, c, ldc, alpha, beta, NULL, false, R);               \
    }                                                                                        \
    AVX512 static void ukr_epi_avx512_##R(int64_t kc, const float *pa, const float *pb,       \
                                          const int64_t *offk, float *c, int64_t ldc,        \
                                          float alpha, float beta, const q8_sgemm_epi *epi) { \
        if (offk) ukr_avx512_body(kc, pa, pb, offk, c, ldc, alpha, beta, epi, false, R);      \
        else ukr_avx512_body(kc, pa, pb, NULL, c, ldc, alpha, beta, epi, false, R);          \
    }                                                                                        \
    AVX512 static void ukr_half_avx512_##R(int64_t kc, const float *pa, const float *pb,      \
                                           float *c, int64_t ldc, float alpha, float beta) { \
        ukr_avx512_body(kc, pa, pb, NULL, c, ldc, alpha, beta, NULL, true, R);               \
    }
A5_WRAPPERS(8)
A5_WRAPPERS(12)

/* A last panel of 1 to 4 columns (225 output pixels: 7 panels and 1
 * column; a 3x3 conv's 31-wide grid on 29 rows: 28 and 1): the 8 rows of
 * A in a register, one FMA per column and k (a half tile spends 8); the
 * same product and sum per element as ukr_avx512_body, then alpha and
 * beta as it applies them. */
AVX512 static inline __attribute__((always_inline)) void
narrow_avx512_body(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                   float alpha, float beta, const int nn) {
    __m256 acc[Q8_SGEMM_NARROW];
#pragma GCC unroll 4
    for (int j = 0; j < nn; j++) acc[j] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; k++, pa += 8, pb += A5_NR) {
        __m256 a = _mm256_loadu_ps(pa);
#pragma GCC unroll 4
        for (int j = 0; j < nn; j++) acc[j] = _mm256_fmadd_ps(a, _mm256_set1_ps(pb[j]), acc[j]);
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 4
    for (int j = 0; j < nn; j++) {
        __m256 x = _mm256_mul_ps(acc[j], va);
        if (beta != 0.0f) {
            float col[8];
            for (int i = 0; i < 8; i++) col[i] = c[i * ldc + j];
            x = _mm256_fmadd_ps(vb, _mm256_loadu_ps(col), x);
        }
        float out[8];
        _mm256_storeu_ps(out, x);
        for (int i = 0; i < 8; i++) c[i * ldc + j] = out[i];
    }
}

AVX512 static void ukr_narrow_avx512(int64_t kc, int nn, const float *pa, const float *pb,
                                     float *c, int64_t ldc, float alpha, float beta) {
    switch (nn) {
    case 1: narrow_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 1); break;
    case 2: narrow_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 2); break;
    case 3: narrow_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 3); break;
    default: narrow_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 4); break;
    }
}

/* The same for the 12-row kernel: A's 12 rows in one zmm's low lanes (a
 * masked load: the next step's floats are not read), one FMA per column
 * and k where its half tile spends 12 (a 3x3 stride-2 conv's 161-column
 * bands of 2 output rows: 5 panels and 1 column, 7% of its time in the
 * half tile). */
AVX512 static inline __attribute__((always_inline)) void
narrow12_avx512_body(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                     float alpha, float beta, const int nn) {
    const __mmask16 rows = 0x0fff;
    __m512 acc[Q8_SGEMM_NARROW];
#pragma GCC unroll 4
    for (int j = 0; j < nn; j++) acc[j] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++, pa += 12, pb += A5_NR) {
        __m512 a = _mm512_maskz_loadu_ps(rows, pa);
#pragma GCC unroll 4
        for (int j = 0; j < nn; j++) acc[j] = _mm512_fmadd_ps(a, _mm512_set1_ps(pb[j]), acc[j]);
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 4
    for (int j = 0; j < nn; j++) {
        __m512 x = _mm512_mul_ps(acc[j], va);
        if (beta != 0.0f) {
            float col[16] = {0};
            for (int i = 0; i < 12; i++) col[i] = c[i * ldc + j];
            x = _mm512_fmadd_ps(vb, _mm512_loadu_ps(col), x);
        }
        float out[16];
        _mm512_storeu_ps(out, x);
        for (int i = 0; i < 12; i++) c[i * ldc + j] = out[i];
    }
}

AVX512 static void ukr_narrow12_avx512(int64_t kc, int nn, const float *pa, const float *pb,
                                       float *c, int64_t ldc, float alpha, float beta) {
    switch (nn) {
    case 1: narrow12_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 1); break;
    case 2: narrow12_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 2); break;
    case 3: narrow12_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 3); break;
    default: narrow12_avx512_body(kc, pa, pb, c, ldc, alpha, beta, 4); break;
    }
}

const q8_sgemm_kernel q8_sgemm_kernel_avx512 = {
    .name = "avx512", .id = 3, .b_id = 3, .mr = 8, .nr = A5_NR,
    .ukr = ukr_avx512_8, .ukr_rows = ukr_rows_avx512_8, .ukr_epi = ukr_epi_avx512_8,
    .ukr_half = ukr_half_avx512_8, .ukr_narrow = ukr_narrow_avx512,
    .epi_hswish = true,
    .dots = dots_avx2, .axpys = axpys_avx2,
};

/* B panels as the 8-row kernel's (b_id): a pre-packed B serves both. */
const q8_sgemm_kernel q8_sgemm_kernel_avx512_12 = {
    .name = "avx512x12", .id = 5, .b_id = 3, .mr = 12, .nr = A5_NR,
    .ukr = ukr_avx512_12, .ukr_rows = ukr_rows_avx512_12, .ukr_epi = ukr_epi_avx512_12,
    .ukr_half = ukr_half_avx512_12, .ukr_narrow = ukr_narrow12_avx512,
    .epi_hswish = true,
    .dots = dots_avx2, .axpys = axpys_avx2,
};

#endif
