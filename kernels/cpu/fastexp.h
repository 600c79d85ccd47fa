/* expf and sigmoid on 4 floats at a time with GCC/Clang vector extensions
 * (SSE on x86-64, NEON on ARM; libm's expf is one call per element, and
 * plain loops with selects are not vectorized under -ftrapping-math).
 *
 * exp: Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, a degree-7 Taylor
 * polynomial for e^r (truncation error < 2^-27), then the scale 2^n applied
 * in two exact halves so that subnormal results round only once. Measured
 * over every 61st float: at most 1.21 ulp from the exact value (2.41 ulp
 * for sigmoid); tests/test_ops_math.c checks a dense sample. NaN, +-inf,
 * overflow to inf and underflow to 0 behave as expf's.
 *
 * Scalar callers go through the same vector code (q8_expf_fast), so a
 * value never depends on whether it was computed in a block or a tail. */
#ifndef Q8_KERNELS_CPU_FASTEXP_H
#define Q8_KERNELS_CPU_FASTEXP_H

#include <stdint.h>
#include <string.h>

typedef float q8_v4f __attribute__((vector_size(16)));
typedef int32_t q8_v4i __attribute__((vector_size(16)));

/* m ? a : b, lane by lane; m lanes are all ones or all zeros. */
static inline q8_v4f q8_v4_sel(q8_v4i m, q8_v4f a, q8_v4f b) {
    return (q8_v4f)(((q8_v4i)a & m) | ((q8_v4i)b & ~m));
}

static inline q8_v4f q8_v4_splat(float v) { return (q8_v4f){v, v, v, v}; }

static inline q8_v4f q8_exp4(q8_v4f x) {
    q8_v4i num = x == x;   /* not NaN */
    /* Clamp so n stays in [-151, 129]; NaN lanes compute exp(0) and are
     * replaced by x at the end. */
    q8_v4f xc = q8_v4_sel(x > 89.0f, q8_v4_splat(89.0f), x);
    xc = q8_v4_sel(xc < -104.0f, q8_v4_splat(-104.0f), xc);
    xc = q8_v4_sel(num, xc, q8_v4_splat(0.0f));
    /* n = round(x / ln2) by adding 1.5 * 2^23: the sum's low bits are n. */
    const q8_v4f magic = q8_v4_splat(12582912.0f);
    q8_v4f t = xc * 1.44269504088896341f + magic;
    q8_v4i n = (q8_v4i)t - (q8_v4i)magic;
    q8_v4f nf = t - magic;
    q8_v4f r = xc - nf * 0.693145751953125f;   /* exact: ln2_hi has 16 bits */
    r = r - nf * 1.428606765330187045e-06f;
    q8_v4f p = q8_v4_splat(1.0f / 5040);
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    q8_v4i n1 = n >> 1, n2 = n - n1;   /* each in [-76, 65]: 2^k is normal */
    q8_v4f s1 = (q8_v4f)((n1 + 127) << 23), s2 = (q8_v4f)((n2 + 127) << 23);
    return q8_v4_sel(num, p * s1 * s2, x);
}

/* 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below, so exp never
 * overflows; one rounding in the division. */
static inline q8_v4f q8_sigmoid4(q8_v4f v) {
    q8_v4f e = q8_exp4((q8_v4f)((q8_v4i)v | (q8_v4i)q8_v4_splat(-0.0f)));  /* -|v| */
    return q8_v4_sel(v >= 0.0f, q8_v4_splat(1.0f), e) / (1.0f + e);
}

static inline float q8_expf_fast(float x) { return q8_exp4(q8_v4_splat(x))[0]; }
static inline float q8_sigmoidf_fast(float x) { return q8_sigmoid4(q8_v4_splat(x))[0]; }

/* y[i] = f(x[i]) for i in [0, n), 4 at a time; the tail goes through a
 * padded block. y may equal x. */
#define Q8_MAP4(F, x, y, n)                                                               \
    do {                                                                                  \
        int64_t i_ = 0;                                                                   \
        for (; i_ + 4 <= (n); i_ += 4) {                                                  \
            q8_v4f v_;                                                                    \
            memcpy(&v_, (x) + i_, sizeof v_);                                             \
            v_ = F(v_);                                                                   \
            memcpy((y) + i_, &v_, sizeof v_);                                             \
        }                                                                                 \
        if (i_ < (n)) {                                                                   \
            q8_v4f v_ = {0, 0, 0, 0};                                                     \
            memcpy(&v_, (x) + i_, sizeof(float) * (size_t)((n) - i_));                   \
            v_ = F(v_);                                                                   \
            memcpy((y) + i_, &v_, sizeof(float) * (size_t)((n) - i_));                    \
        }                                                                                 \
    } while (0)

#endif
