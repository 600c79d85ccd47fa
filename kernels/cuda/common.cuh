/* Helpers for the kernels in kernels/cuda/<op>.cu (compiled by nvcc as CUDA
 * C++, written as C): launch shapes, the two kernel skeletons (one thread
 * per element, one warp per row) and their host emulation, and arithmetic
 * that must match the CPU backend bit for bit.
 *
 * The .cu files are compiled with --fmad=false, so a * b + c is two
 * roundings on the device as it is in the CPU code (no FMA contraction),
 * and with nvcc's IEEE division and square root (no --use_fast_math). */
#ifndef Q8_KERNELS_CUDA_COMMON_CUH
#define Q8_KERNELS_CUDA_COMMON_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "q8cuda.h"

#define Q8CU_THREADS 256
#define Q8CU_WARPS (Q8CU_THREADS / 32)
/* Grid-stride loops cover the rest; 2^16 blocks of 256 keep any GPU busy. */
#define Q8CU_MAX_BLOCKS 65536

static inline unsigned q8cu_blocks(int64_t items, int64_t per_block) {
    int64_t b = (items + per_block - 1) / per_block;
    if (b < 1) b = 1;
    if (b > Q8CU_MAX_BLOCKS) b = Q8CU_MAX_BLOCKS;
    return (unsigned)b;
}

/* a / b (and a % b in *rem) in 32 bits when both fit, as they do but for
 * huge tensors: a 64-bit division costs tens of instructions on the device,
 * and index arithmetic dominated the simple kernels on an H200. a >= 0, b > 0. */
__host__ __device__ static inline int64_t q8cu_divmod(int64_t a, int64_t b, int64_t *rem) {
    if (a <= INT32_MAX && b <= INT32_MAX) {
        uint32_t q = (uint32_t)a / (uint32_t)b;
        *rem = (int64_t)((uint32_t)a - q * (uint32_t)b);
        return q;
    }
    *rem = a % b;
    return a / b;
}

/* One thread per index i in [0, n): FN(const P *p, int64_t i). The kernel
 * takes the parameters by value; the host emulation calls FN in order. */
#define Q8CU_ELEMENTWISE(NAME, P, FN)                                                      \
    static __global__ void NAME##_kernel(const P p, int64_t n) {                                \
        int64_t step = (int64_t)gridDim.x * blockDim.x;                                   \
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) \
            FN(&p, i);                                                                    \
    }                                                                                     \
    static cudaError_t NAME##_launch(const q8cu_stream *s, const P *p, int64_t n) {       \
        if (n <= 0) return cudaSuccess;                                                   \
        if (s->emu) {                                                                     \
            for (int64_t i = 0; i < n; i++) FN(p, i);                                     \
            return cudaSuccess;                                                           \
        }                                                                                 \
        NAME##_kernel<<<q8cu_blocks(n, Q8CU_THREADS), Q8CU_THREADS, 0, s->stream>>>(*p, n); \
        return cudaGetLastError();                                                        \
    }

/* One warp per row r in [0, rows): FN(const P *p, int64_t r, int lane,
 * int lanes). Lane l handles the row's elements l, l + lanes, ...; the
 * partial results combine with q8cu_warp_* (a butterfly over the 32 lanes
 * on the device, nothing with one lane). Every lane of a warp has the same
 * r, so the warp enters and leaves the loop together (full-mask shuffles
 * are safe). The host emulation runs each row with one lane. */
#define Q8CU_ROWWISE(NAME, P, FN)                                                          \
    static __global__ void NAME##_kernel(const P p, int64_t rows) {                             \
        int64_t step = (int64_t)gridDim.x * (blockDim.x >> 5);                            \
        int lane = (int)(threadIdx.x & 31u);                                              \
        for (int64_t r = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);     \
             r < rows; r += step)                                                         \
            FN(&p, r, lane, 32);                                                          \
    }                                                                                     \
    static cudaError_t NAME##_launch(const q8cu_stream *s, const P *p, int64_t rows) {    \
        if (rows <= 0) return cudaSuccess;                                                \
        if (s->emu) {                                                                     \
            for (int64_t r = 0; r < rows; r++) FN(p, r, 0, 1);                            \
            return cudaSuccess;                                                           \
        }                                                                                 \
        NAME##_kernel<<<q8cu_blocks(rows, Q8CU_WARPS), Q8CU_THREADS, 0, s->stream>>>(*p,   \
                                                                                   rows); \
        return cudaGetLastError();                                                        \
    }

__host__ __device__ static inline double q8cu_warp_sum(double v) {
#ifdef __CUDA_ARCH__
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
#endif
    return v;
}

__host__ __device__ static inline float q8cu_warp_sumf(float v) {
#ifdef __CUDA_ARCH__
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
#endif
    return v;
}

/* max that lets NaN win (a NaN in any lane makes the result NaN) */
__host__ __device__ static inline float q8cu_warp_maxf(float v) {
#ifdef __CUDA_ARCH__
    for (int o = 16; o > 0; o >>= 1) {
        float t = __shfl_xor_sync(0xffffffffu, v, o);
        v = (t > v || t != t) ? t : v;
    }
#endif
    return v;
}

/* Lane 0's value in every lane (the row-wise kernels reduce in lane 0, in
 * the CPU's order, and share the result). */
__host__ __device__ static inline double q8cu_from_lane0(double v) {
#ifdef __CUDA_ARCH__
    v = __shfl_sync(0xffffffffu, v, 0);
#endif
    return v;
}

__host__ __device__ static inline uint32_t q8cu_f2u(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
#endif
}

__host__ __device__ static inline float q8cu_u2f(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, 4);
    return f;
#endif
}

/* expf where the CPU calls libm's: the double exp rounded once matches
 * glibc's (nearly) correctly rounded expf far more often than CUDA's expf
 * (2 ulp); on the host (emulation) it is glibc's own. */
__host__ __device__ static inline float q8cu_expf(float x) {
#ifdef __CUDA_ARCH__
    return (float)exp((double)x);
#else
    return expf(x);
#endif
}

/* q8_round_sat of kernels/common/requant.h (QuantizeLinear's rounding):
 * NaN -> 0, clamp to +-2^22, round half even by adding and removing
 * 1.5 * 2^23 (the explicit _rn intrinsics keep nvcc from merging or
 * reordering the two additions), then zero point and saturation. */
__host__ __device__ static inline float q8cu_add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

__host__ __device__ static inline int32_t q8cu_round_sat(float v, int32_t zp, int32_t lo,
                                                         int32_t hi) {
    if (v != v) v = 0;
    v = v > 4194304.0f ? 4194304.0f : v < -4194304.0f ? -4194304.0f : v;
    v = q8cu_add_rn(q8cu_add_rn(v, 12582912.0f), -12582912.0f);
    int32_t q = (int32_t)v + zp;
    return q < lo ? lo : q > hi ? hi : q;
}

/* IEEE single division, never contracted or approximated. */
__host__ __device__ static inline float q8cu_div(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

/* The INT8 epilogue of one accumulator of channel ch, stored at y[idx]:
 * exactly q8_epi_i8 / q8_epi_f32 of kernels/common/requant.h, with the bias
 * added first in int32 wrap-around arithmetic (the CPU folds it into the
 * accumulator's initial value, which wraps the same way). */
__host__ __device__ static inline void q8cu_epi_store(const q8cu_epi *e, int32_t acc, int64_t ch,
                                                      void *y, int64_t idx) {
    if (e->bias) acc = (int32_t)((uint32_t)acc + (uint32_t)e->bias[ch]);
    if (e->kind == Q8CU_EPI_I8) {
        int32_t sh = e->shift[ch];
        int64_t v = ((int64_t)acc * e->mult[ch] + ((int64_t)1 << (sh - 1))) >> sh;
        v = v < e->lo ? e->lo : v;
        v = v > e->hi ? e->hi : v;
        if (e->lut && v < 0) v = e->lut[v + 128];
        ((int8_t *)y)[idx] = (int8_t)v;
    } else if (e->kind == Q8CU_EPI_F32) {
        float f = (float)acc * e->scale[ch];
        if (e->clip) {
            f = f > e->flo ? f : e->flo;
            f = f < e->fhi ? f : e->fhi;
        }
        if (e->leaky) f = f < 0.0f ? f * e->alpha : f;
        ((float *)y)[idx] = f;
    } else {
        ((int32_t *)y)[idx] = acc;
    }
}

/* Copy one element of esize bytes (1, 2, 4 or 8; the pointers are aligned
 * to it because tensors start 64-byte aligned). */
__host__ __device__ static inline void q8cu_copy_elem(void *dst, int64_t di, const void *src,
                                                      int64_t si, int esize) {
    switch (esize) {
    case 1: ((uint8_t *)dst)[di] = ((const uint8_t *)src)[si]; break;
    case 2: ((uint16_t *)dst)[di] = ((const uint16_t *)src)[si]; break;
    case 4: ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si]; break;
    default: ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si]; break;
    }
}

#endif
