/* The double-precision sum of a float row in one fixed order that vector
 * units take at full speed: 16 partial sums, lane k adding x[i] for
 * i = k mod 16 of the row's whole groups of 16 (in increasing i), combined
 * as a tree (lane k + lane k + 8, then + 4, + 2, + 1), then the tail
 * (the last n mod 16 values, in order) added last. GlobalAveragePool and
 * LayerNormalization (its mean, and its variance with q8_row_sqdev16) sum
 * this way on the CPU (Q8_CLONES: two AVX-512 vectors of doubles) and on
 * the GPU (global_pool.cu, layernorm.cu): the same bits on both, for any
 * thread count.
 *
 * Where every partial sum is exact in double (a dequantized int8 row, most
 * rows of moderate range and length) this is the in-order sum's value;
 * elsewhere the two differ in the last bits (the in-order sum, kept before
 * 2026-11-29, was a chain of one dependent add per element: 12% of PP-OCR
 * detection's INT8 time, 18% of a small transformer's). Build the callers
 * with fp-contract=off (nvcc: --fmad=false): q8_row_sqdev16's acc += d * d
 * would otherwise become an FMA in some builds and not others. */
#ifndef Q8_KERNELS_COMMON_ROW_SUM16_H
#define Q8_KERNELS_COMMON_ROW_SUM16_H

#include <stdint.h>

#ifdef __CUDACC__
#define Q8_RS_INLINE static __host__ __device__ __forceinline__
#else
#define Q8_RS_INLINE static inline __attribute__((always_inline))
#endif

enum { Q8_ROW_SUM_LANES = 16 };

/* The sum over x[i] of TERM(x[i]) (a double) in the order above. */
#define Q8_ROW_SUM16_BODY(x, n, TERM)                                                  \
    double acc[Q8_ROW_SUM_LANES];                                                      \
    for (int k = 0; k < Q8_ROW_SUM_LANES; k++) acc[k] = 0.0;                           \
    int64_t i = 0;                                                                     \
    for (; i + Q8_ROW_SUM_LANES <= (n); i += Q8_ROW_SUM_LANES)                         \
        for (int k = 0; k < Q8_ROW_SUM_LANES; k++) acc[k] += TERM((x)[i + k]);         \
    for (int w = Q8_ROW_SUM_LANES / 2; w >= 1; w /= 2)                                 \
        for (int k = 0; k < w; k++) acc[k] += acc[k + w];                              \
    double tail = 0.0;                                                                 \
    for (; i < (n); i++) tail += TERM((x)[i]);                                         \
    return acc[0] + tail

#define Q8_RS_PLAIN(v) ((double)(v))

/* Sum of x[0..n). */
Q8_RS_INLINE double q8_row_sum16(const float *x, int64_t n) {
    Q8_ROW_SUM16_BODY(x, n, Q8_RS_PLAIN);
}

/* Sum of (x[i] - mean)^2, each term in double (LayerNormalization's
 * variance). */
Q8_RS_INLINE double q8_row_sqdev16(const float *x, int64_t n, double mean) {
#define Q8_RS_SQDEV(v) (((double)(v) - mean) * ((double)(v) - mean))
    Q8_ROW_SUM16_BODY(x, n, Q8_RS_SQDEV);
#undef Q8_RS_SQDEV
}

#endif
