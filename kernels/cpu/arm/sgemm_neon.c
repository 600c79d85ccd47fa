/* aarch64 NEON micro-kernels for q8_sgemm (sgemm_kernels.h): 8 x 12 tiles
 * with FMA. Each output element gets the arithmetic of the x86 AVX2 and
 * AVX-512 kernels (sgemm_x86.c), operation for operation: acc = fma(a, b,
 * acc) over k in order from +0, then acc * alpha (+ fma(beta, c, .)); the
 * GEMV kernels sum in the same tree as dot1_avx2 / axpys_avx2. So FP32
 * GEMMs give the same bits here as on an x86 machine with AVX2+FMA. */
#if defined(__aarch64__)
#include <arm_neon.h>
#include <math.h>

#include "sgemm_kernels.h"

#define N_MR 8
#define N_NR 12

static inline void store4(float *c, float32x4_t x, float32x4_t va, float32x4_t vb,
                          float beta) {
    x = vmulq_f32(x, va);
    if (beta != 0.0f) x = vfmaq_f32(x, vb, vld1q_f32(c));
    vst1q_f32(c, x);
}

/* Named accumulators: GCC keeps an array of vectors in memory here. */
static void ukr_neon(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                     float alpha, float beta) {
#define Z vdupq_n_f32(0.0f)
    float32x4_t c00 = Z, c01 = Z, c02 = Z, c10 = Z, c11 = Z, c12 = Z, c20 = Z, c21 = Z;
    float32x4_t c22 = Z, c30 = Z, c31 = Z, c32 = Z, c40 = Z, c41 = Z, c42 = Z, c50 = Z;
    float32x4_t c51 = Z, c52 = Z, c60 = Z, c61 = Z, c62 = Z, c70 = Z, c71 = Z, c72 = Z;
#undef Z
    for (int64_t k = 0; k < kc; k++) {
        float32x4_t b0 = vld1q_f32(pb), b1 = vld1q_f32(pb + 4), b2 = vld1q_f32(pb + 8);
        float32x4_t a0 = vld1q_f32(pa), a1 = vld1q_f32(pa + 4);
#define ROW(i, av, l)                                                                           \
    c##i##0 = vfmaq_laneq_f32(c##i##0, b0, av, l);                                              \
    c##i##1 = vfmaq_laneq_f32(c##i##1, b1, av, l);                                              \
    c##i##2 = vfmaq_laneq_f32(c##i##2, b2, av, l);
        ROW(0, a0, 0) ROW(1, a0, 1) ROW(2, a0, 2) ROW(3, a0, 3)
        ROW(4, a1, 0) ROW(5, a1, 1) ROW(6, a1, 2) ROW(7, a1, 3)
#undef ROW
        pa += N_MR;
        pb += N_NR;
    }
    float32x4_t va = vdupq_n_f32(alpha), vb = vdupq_n_f32(beta);
#define STORE(i)                                                                                \
    store4(c + i * ldc, c##i##0, va, vb, beta);                                                 \
    store4(c + i * ldc + 4, c##i##1, va, vb, beta);                                             \
    store4(c + i * ldc + 8, c##i##2, va, vb, beta);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
#undef STORE
}

/* a2_hsum of sgemm_x86.c on the 8 lanes (lo, hi): (lo + hi), then
 * (u0 + u2) + (u1 + u3). */
static inline float hsum8(float32x4_t lo, float32x4_t hi) {
    float32x4_t u = vaddq_f32(lo, hi);
    float p0 = vgetq_lane_f32(u, 0) + vgetq_lane_f32(u, 2);
    float p1 = vgetq_lane_f32(u, 1) + vgetq_lane_f32(u, 3);
    return p0 + p1;
}

/* dot1_avx2: s0 over [i, i + 8), s1 over [i + 8, i + 16), each 8 lanes. */
static float dot1_neon(int64_t k, const float *r, const float *x) {
    float32x4_t s0l = vdupq_n_f32(0.0f), s0h = s0l, s1l = s0l, s1h = s0l;
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        s0l = vfmaq_f32(s0l, vld1q_f32(r + i), vld1q_f32(x + i));
        s0h = vfmaq_f32(s0h, vld1q_f32(r + i + 4), vld1q_f32(x + i + 4));
        s1l = vfmaq_f32(s1l, vld1q_f32(r + i + 8), vld1q_f32(x + i + 8));
        s1h = vfmaq_f32(s1h, vld1q_f32(r + i + 12), vld1q_f32(x + i + 12));
    }
    if (i + 8 <= k) {
        s0l = vfmaq_f32(s0l, vld1q_f32(r + i), vld1q_f32(x + i));
        s0h = vfmaq_f32(s0h, vld1q_f32(r + i + 4), vld1q_f32(x + i + 4));
        i += 8;
    }
    float s = hsum8(vaddq_f32(s0l, s1l), vaddq_f32(s0h, s1h));
    for (; i < k; i++) s = fmaf(r[i], x[i], s);
    return s;
}

static void dots_neon(int64_t n, int64_t k, const float *rows, int64_t ld, const float *x,
                      float *y) {
    for (int64_t j = 0; j < n; j++) y[j] = dot1_neon(k, rows + j * ld, x);
}

/* axpys_avx2: y[j] = fma chain over i in order, from +0. */
static void axpys_neon(int64_t n, int64_t k, const float *b, int64_t ld, const float *x,
                       float *y) {
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
        const float *p = b + j;
        for (int64_t i = 0; i < k; i++, p += ld) {
            float32x4_t xv = vdupq_n_f32(x[i]);
            s0 = vfmaq_f32(s0, xv, vld1q_f32(p));
            s1 = vfmaq_f32(s1, xv, vld1q_f32(p + 4));
            s2 = vfmaq_f32(s2, xv, vld1q_f32(p + 8));
            s3 = vfmaq_f32(s3, xv, vld1q_f32(p + 12));
        }
        vst1q_f32(y + j, s0);
        vst1q_f32(y + j + 4, s1);
        vst1q_f32(y + j + 8, s2);
        vst1q_f32(y + j + 12, s3);
    }
    for (; j + 4 <= n; j += 4) {
        float32x4_t s = vdupq_n_f32(0.0f);
        const float *p = b + j;
        for (int64_t i = 0; i < k; i++, p += ld) s = vfmaq_f32(s, vdupq_n_f32(x[i]), vld1q_f32(p));
        vst1q_f32(y + j, s);
    }
    for (; j < n; j++) {
        float s = 0.0f;
        for (int64_t i = 0; i < k; i++) s = fmaf(x[i], b[i * ld + j], s);
        y[j] = s;
    }
}

const q8_sgemm_kernel q8_sgemm_kernel_neon = {
    .name = "neon", .id = 4, .b_id = 4, .mr = N_MR, .nr = N_NR,
    .ukr = ukr_neon, .dots = dots_neon, .axpys = axpys_neon,
};
#endif
