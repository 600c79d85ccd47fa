/* Software float16 / bfloat16 conversions, round to nearest even, and the
 * round-to-odd helpers that make double and int64 -> half conversions round
 * only once: rounding to odd at 24 bits first, then to nearest even at 11 or
 * 8 bits, gives the same result as rounding the exact value directly. */
#ifndef Q8_CORE_HALF_H
#define Q8_CORE_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The float16 / bfloat16 conversions serve the CUDA kernels too
 * (kernels/cuda/cast.cu), so that Cast rounds the same bits on both. */
#ifndef Q8_HOST_DEVICE
#ifdef __CUDACC__
#define Q8_HOST_DEVICE __host__ __device__
#else
#define Q8_HOST_DEVICE
#endif
#endif

Q8_HOST_DEVICE static inline uint32_t q8_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

Q8_HOST_DEVICE static inline float q8_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

Q8_HOST_DEVICE static inline float q8_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) return q8_bits_f32(sign | 0x7F800000u | (m << 13));  /* inf, NaN */
    if (e) return q8_bits_f32(sign | ((e + 112) << 23) | (m << 13));
    float f = (float)m * 0x1p-24f;  /* subnormal or zero: exact */
    return sign ? -f : f;
}

Q8_HOST_DEVICE static inline uint16_t q8_f32_to_f16(float f) {
    uint32_t x = q8_f32_bits(f), ax = x & 0x7FFFFFFFu;
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (ax > 0x7F800000u) return sign | 0x7E00u | (uint16_t)((ax >> 13) & 0x3FFu);  /* quiet NaN */
    if (ax >= 0x477FF000u) return sign | 0x7C00u;     /* >= 65520: inf */
    if (ax >= 0x38800000u)                            /* normal half */
        return sign | (uint16_t)((ax - 0x38000000u + 0xFFFu + ((ax >> 13) & 1u)) >> 13);
    if (ax < 0x33000000u) return sign;                /* < 2^-25: zero */
    /* Subnormal half: the value in units of 2^-24, rounded to nearest even. */
    uint32_t m = (ax & 0x7FFFFFu) | 0x800000u, s = 126u - (ax >> 23);
    uint32_t q = m >> s, rem = m & ((1u << s) - 1u), half = 1u << (s - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return sign | (uint16_t)q;
}

/* Whole arrays (float16 model boundaries, float16 constants). */
static inline void q8_f16_to_f32_n(const uint16_t *h, float *f, int64_t n) {
    for (int64_t i = 0; i < n; i++) f[i] = q8_f16_to_f32(h[i]);
}

static inline void q8_f32_to_f16_n(const float *f, uint16_t *h, int64_t n) {
    for (int64_t i = 0; i < n; i++) h[i] = q8_f32_to_f16(f[i]);
}

Q8_HOST_DEVICE static inline float q8_bf16_to_f32(uint16_t h) { return q8_bits_f32((uint32_t)h << 16); }

Q8_HOST_DEVICE static inline uint16_t q8_f32_to_bf16(float f) {
    uint32_t x = q8_f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40u);  /* quiet NaN */
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/* double -> float, rounding to odd: the truncated value, with its last bit
 * set if anything was cut off. */
static inline float q8_f64_to_f32_odd(double d) {
    float f = (float)d;
    if (isnan(d) || (double)f == d) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    return q8_bits_f32(q8_f32_bits(f) | 1u);
}

static inline float q8_u64_to_f32_odd(uint64_t v) {
    if (v < (1ull << 24)) return (float)v;
    int sh = 40 - __builtin_clzll(v);    /* keep the top 24 bits */
    uint64_t m = v >> sh;
    if (v & ((1ull << sh) - 1)) m |= 1;
    return ldexpf((float)m, sh);
}

static inline float q8_i64_to_f32_odd(int64_t v) {
    float f = q8_u64_to_f32_odd(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -f : f;
}

#endif
