/* exp, expm1, log, softplus, sigmoid, tanh, erf and Gelu of one float,
 * written branch-free in plain C (selects, integer views of the bits) so
 * that a CPU loop calling them is vectorized by the compiler in each clone
 * (Q8_CLONES: 16 lanes with AVX-512; the GCC vector-extension forms they
 * replaced stayed 4 lanes wide). Build the loops with no-trapping-math (or
 * GCC keeps the selects as branches) and fp-contract=off: every clone and a
 * scalar tail then round each step alike, so a value never depends on where
 * it was computed. The CUDA kernels (unary.cu, built with --fmad=false and
 * IEEE division) call the same functions: the same bits on the GPU.
 *
 * q8_vexp and q8_vsigmoid are within 1.21 and 2.41 ulp of the exact values
 * (the 4-lane forms they replaced, the same steps); tests/test_ops_math.c
 * bounds every function's error over a dense sample of all floats. */
#ifndef Q8_KERNELS_COMMON_VMATH_H
#define Q8_KERNELS_COMMON_VMATH_H

#include <stdint.h>
#include <string.h>

/* Always inlined: a call per element is neither vectorized nor cheap. */
#ifdef __CUDACC__
#define Q8_VM_INLINE static __host__ __device__ __forceinline__
#else
#define Q8_VM_INLINE static inline __attribute__((always_inline))
#endif

Q8_VM_INLINE int32_t q8_vm_bits(float f) {
    int32_t i;
    memcpy(&i, &f, 4);
    return i;
}

Q8_VM_INLINE float q8_vm_float(int32_t i) {
    float f;
    memcpy(&f, &i, 4);
    return f;
}

/* |x|, -|x|, and t (not negative) with the sign of x, on the bits. */
Q8_VM_INLINE float q8_vm_abs(float x) { return q8_vm_float(q8_vm_bits(x) & INT32_MAX); }
Q8_VM_INLINE float q8_vm_negabs(float x) { return q8_vm_float(q8_vm_bits(x) | INT32_MIN); }
Q8_VM_INLINE float q8_vm_signed_as(float t, float x) {
    return q8_vm_float(q8_vm_bits(t) | (q8_vm_bits(x) & INT32_MIN));
}

/* Cody-Waite reduction x = n ln2 + r, a degree-7 Taylor polynomial for e^r,
 * the scale 2^n applied in two exact halves (subnormal results round once).
 * NaN stays NaN; overflow gives inf, underflow 0. */
Q8_VM_INLINE float q8_vexp(float x) {
    const float magic = 12582912.0f; /* 1.5 * 2^23: x + magic has round(x) in its low bits */
    int num = x == x;
    float xc = x > 89.0f ? 89.0f : x;
    xc = xc < -104.0f ? -104.0f : xc;
    xc = num ? xc : 0.0f;
    float t = xc * 1.44269504088896341f + magic;
    int32_t n = q8_vm_bits(t) - q8_vm_bits(magic);
    float nf = t - magic;
    float r = xc - nf * 0.693145751953125f; /* exact: ln2_hi has 16 bits */
    r = r - nf * 1.428606765330187045e-06f;
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t n1 = n >> 1, n2 = n - n1; /* each in [-76, 65]: 2^k is normal */
    float s1 = q8_vm_float((n1 + 127) << 23), s2 = q8_vm_float((n2 + 127) << 23);
    return num ? p * s1 * s2 : x;
}

/* e^x - 1: below |x| = 0.5 the Taylor polynomial to x^9 (truncation
 * < 6e-10 relative: no cancellation near 0), else q8_vexp(x) - 1 (at most
 * a factor 1.6 of cancellation, at x = -0.5). -0 stays -0, -inf gives -1,
 * NaN stays NaN. */
Q8_VM_INLINE float q8_vexpm1(float x) {
    float p = 1.0f / 362880;
    p = p * x + 1.0f / 40320;
    p = p * x + 1.0f / 5040;
    p = p * x + 1.0f / 720;
    p = p * x + 1.0f / 120;
    p = p * x + 1.0f / 24;
    p = p * x + 1.0f / 6;
    p = p * x + 0.5f;
    p = p * x + 1.0f;
    float ax = q8_vm_abs(x);
    return ax < 0.5f ? x * p : q8_vexp(x) - 1.0f;
}

/* Natural log, Cephes' logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * log(m) = f - f^2 / 2 + f^3 P(f) for f = m - 1 (degree 8), e ln 2 added in
 * two parts. Subnormals are scaled by 2^23 first. log(+-0) = -inf, x < 0
 * and NaN give NaN, log(inf) = inf. */
Q8_VM_INLINE float q8_vlog(float x) {
    int sub = (q8_vm_bits(x) & 0x7f800000) == 0;
    float xs = sub ? x * 8388608.0f : x;
    int32_t b = q8_vm_bits(xs);
    int32_t e = ((b >> 23) & 0xff) - 126 - (sub ? 23 : 0);
    float m = q8_vm_float((b & 0x007fffff) | 0x3f000000); /* [0.5, 1) */
    int lo = m < 0.707106781186547524f;
    float f = lo ? m + m - 1.0f : m - 1.0f;
    float ef = (float)(e - lo), z = f * f;
    float y = 7.0376836292e-2f;
    y = y * f - 1.1514610310e-1f;
    y = y * f + 1.1676998740e-1f;
    y = y * f - 1.2420140846e-1f;
    y = y * f + 1.4249322787e-1f;
    y = y * f - 1.6668057665e-1f;
    y = y * f + 2.0000714765e-1f;
    y = y * f - 2.4999993993e-1f;
    y = y * f + 3.3333331174e-1f;
    y = y * f * z;
    y = y + -2.12194440e-4f * ef;
    y = y + -0.5f * z;
    float r = f + y;
    r = r + 0.693359375f * ef;
    r = x > 0.0f ? r : x == 0.0f ? -__builtin_inff() : __builtin_nanf("");
    r = x == __builtin_inff() ? x : r;
    return x == x ? r : x;
}

/* Softplus, log(1 + e^v) = max(v, 0) + log1p(e^-|v|) (no overflow), with
 * log1p(u) = log(w) - ((w - 1) - u) / w for w = 1 + u rounded: the second
 * term puts back what rounding 1 + u lost (u below 2^-24 comes out as u
 * itself). NaN stays NaN, -inf gives 0. */
Q8_VM_INLINE float q8_vsoftplus(float v) {
    float u = q8_vexp(q8_vm_negabs(v)); /* e^-|v| */
    float w = 1.0f + u;
    float l = q8_vlog(w) - ((w - 1.0f) - u) / w;
    float r = (v > 0.0f ? v : 0.0f) + l;
    return v == v ? r : v;
}

/* 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below: exp never overflows. */
Q8_VM_INLINE float q8_vsigmoid(float v) {
    float e = q8_vexp(q8_vm_negabs(v)); /* e^-|v| */
    return (v >= 0.0f ? 1.0f : e) / (1.0f + e);
}

/* The odd Taylor polynomial to x^11 below |x| = 0.25 (truncation < 1e-10
 * relative), else (1 - e) / (1 + e) with e = exp(-2|x|) (no overflow;
 * 1 - e >= 0.39, no cancellation); then x's sign. NaN stays NaN, +-inf
 * gives +-1. */
Q8_VM_INLINE float q8_vtanh(float x) {
    float a = q8_vm_abs(x);
    float e = q8_vexp(-2.0f * a);
    float big = (1.0f - e) / (1.0f + e);
    float a2 = a * a;
    float p = -1382.0f / 155925;
    p = p * a2 + 62.0f / 2835;
    p = p * a2 - 17.0f / 315;
    p = p * a2 + 2.0f / 15;
    p = p * a2 - 1.0f / 3;
    float t = a < 0.25f ? a + a * a2 * p : big;
    return q8_vm_signed_as(t, x);
}

/* g(t) = erfc(a) e^(a^2) a for t = 1/a, a in [0.875, 10]: a degree-12
 * polynomial in t - 0.621 (fitted; 7.6e-8 relative in float). */
Q8_VM_INLINE float q8_verfc_g(float t) {
    float s = t - 0.6214285714f, g = -7.271962459e-02f;
    g = g * s + 4.625838122e-02f;
    g = g * s + 5.468018944e-02f;
    g = g * s - 6.993673431e-02f;
    g = g * s + 4.298237417e-02f;
    g = g * s - 2.224700200e-02f;
    g = g * s - 9.156979832e-03f;
    g = g * s + 4.952986289e-02f;
    g = g * s - 7.893913924e-02f;
    g = g * s + 7.323287402e-02f;
    g = g * s - 2.072843584e-03f;
    g = g * s - 1.715737246e-01f;
    return g * s + 4.901375732e-01f;
}

/* erf(a) / a as a polynomial in z = a^2, for a < 0.875 (degree 6, fitted:
 * 1.3e-7 relative in float). */
Q8_VM_INLINE float q8_verf_p(float z) {
    float p = 8.694668076e-05f;
    p = p * z - 8.215561882e-04f;
    p = p * z + 5.207134641e-03f;
    p = p * z - 2.686174006e-02f;
    p = p * z + 1.128373583e-01f;
    p = p * z - 3.761263625e-01f;
    return p * z + 1.128379167e+00f;
}

/* erf: |x| < 0.875, x P(x^2) (q8_verf_p);
 * above, 1 - erfc with erfc(a) = e^(-a^2) g(1/a) / a (erfc <= 0.22 there,
 * so 1 - erfc adds no cancellation). From 4 on the result rounds to 1.
 * Then x's sign; NaN stays NaN. */
Q8_VM_INLINE float q8_verf(float x) {
    float a = q8_vm_abs(x);
    float ac = a < 4.0f ? a : 4.0f;
    float z = ac * ac;
    float p = q8_verf_p(z);
    float t = 1.0f / ac;
    float r = ac < 0.875f ? ac * p : 1.0f - q8_vexp(-z) * q8_verfc_g(t) * t;
    return q8_vm_signed_as(x == x ? r : x, x);
}

/* e^(-x^2 / 2) without the rounding of x^2: x = xh + xl with xh the top 12
 * bits, so xh^2 (the exponent's bulk) and 2 xh xl, xl^2 are exact; e^ of
 * the small rest (|.| <= 2^-12 x^2 / 2 <= 0.04) by its degree-4 Taylor
 * polynomial. A rounded x^2 costs x^2 / 2 ulp (8e-6 relative at x = -12,
 * where Gelu's result is 1e-32). */
Q8_VM_INLINE float q8_vexp_neg_half_sq(float x) {
    float xh = q8_vm_float(q8_vm_bits(x) & (int32_t)0xFFFFF000);
    float xl = x - xh;
    float hi = xh * xh, lo = (xh + xh) * xl + xl * xl;
    float n = -0.5f * lo;
    float e = 1.0f / 24;
    e = e * n + 1.0f / 6;
    e = e * n + 0.5f;
    e = e * n + 1.0f;
    e = e * n + 1.0f;
    return q8_vexp(-0.5f * hi) * e;
}

/* Gelu, 0.5 x (1 + erf(x / sqrt 2)), from a = |x| / sqrt 2 and erfc(a)
 * with e^(-a^2) taken from x itself (q8_vexp_neg_half_sq): below a = 0.875,
 * erfc(a) = e^(-a^2) k(a), k a degree-9 polynomial in a - 0.4375 (fitted;
 * 1.5e-7 relative in float), above e^(-a^2) g(1/a) / a. x < 0: 0.5 x
 * erfc(a) (0.5 x / a = -1/sqrt 2 above 0.875; below x = -14.4 the result
 * rounds to -0). x >= 0: 0.5 x (1 + a P(a^2)), q8_verf's polynomial, below
 * 0.875, else 0.5 x (2 - erfc(a)). NaN stays NaN, +-inf give +inf and -0. */
Q8_VM_INLINE float q8_vgelu(float x) {
    float ax = q8_vm_abs(x);
    ax = ax < 14.4f ? ax : 14.4f;
    float a = ax * 0.70710678118654752f, z = a * a;
    float e = q8_vexp_neg_half_sq(ax);
    float s = a - 0.4375f;
    float k = -3.357234999e-03f;
    k = k * s + 8.106036038e-03f;
    k = k * s - 1.718138618e-02f;
    k = k * s + 3.740314016e-02f;
    k = k * s - 7.672291927e-02f;
    k = k * s + 1.460939981e-01f;
    k = k * s - 2.557096301e-01f;
    k = k * s + 4.040464829e-01f;
    k = k * s - 5.603350747e-01f;
    k = k * s + 6.491932507e-01f;
    float t = 1.0f / a, eg = e * q8_verfc_g(t); /* erfc(a) a, above 0.875 */
    float p = q8_verf_p(z);
    float near = x < 0.0f ? 0.5f * x * e * k : 0.5f * x * (1.0f + a * p);
    float far = x < 0.0f ? (x > -14.4f ? -0.70710678118654752f * eg : -0.0f)
                         : 0.5f * x * (2.0f - eg * t);
    float r = a < 0.875f ? near : far;
    return x == x ? r : x;
}

#endif
