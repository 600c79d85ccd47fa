/* exp(x) for x <= 0 and not NaN (callers check), one definition for the
 * CPU and the CUDA kernels so that Softmax gives the same bits on both
 * (the CUDA build keeps products unfused with --fmad=false). Results below
 * ~1e-38 are flushed to exp(-87). The clamp compares the bits as integers
 * (for x <= 0 larger bits mean larger magnitude): a float compare would keep
 * GCC from vectorizing the loop (it may trap). A Cephes-style polynomial,
 * about 1 ulp. */
#ifndef Q8_KERNELS_COMMON_EXP_NEG_H
#define Q8_KERNELS_COMMON_EXP_NEG_H

#include <stdint.h>
#include <string.h>

#ifndef Q8_HOST_DEVICE
#ifdef __CUDACC__
#define Q8_HOST_DEVICE __host__ __device__
#else
#define Q8_HOST_DEVICE
#endif
#endif

Q8_HOST_DEVICE static inline float q8_exp_neg(float x) {
    uint32_t xb;
    memcpy(&xb, &x, 4);
    xb = xb > 0xC2AE0000u ? 0xC2AE0000u : xb; /* -87.0f */
    memcpy(&x, &xb, 4);
    /* n = round(x / ln2) with the 1.5 * 2^23 trick (no call to rintf). */
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float r2 = r * r;
    float q = 1.9875691500e-4f;
    q = q * r + 1.3981999507e-3f;
    q = q * r + 8.3334519073e-3f;
    q = q * r + 4.1665795894e-2f;
    q = q * r + 1.6666665459e-1f;
    q = q * r + 5.0000001201e-1f;
    q = q * r2 + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) * (1 << 23);
    float sc;
    memcpy(&sc, &bits, 4);
    return q * sc;
}

#endif
