/* Internal: the micro-kernels behind q8_sgemm. A kernel multiplies packed
 * panels: pa holds kc steps of mr floats (a column of op(A) per step), pb kc
 * steps of nr floats (a row of op(B)); it writes the mr x nr tile
 * c = alpha*acc + beta*c (beta == 0: c is not read). */
#ifndef Q8_SGEMM_KERNELS_H
#define Q8_SGEMM_KERNELS_H

#include <stdint.h>

#define Q8_SGEMM_MAX_MR 16
#define Q8_SGEMM_MAX_NR 32

typedef void (*q8_sgemm_ukr_fn)(int64_t kc, const float *pa, const float *pb, float *c,
                                int64_t ldc, float alpha, float beta);
/* GEMV, rows form: y[j] = sum_k rows[j*ld + k] * x[k] for j < n. Each y[j]
 * must not depend on n or on its position (threads split n anywhere). */
typedef void (*q8_sgemm_dots_fn)(int64_t n, int64_t k, const float *rows, int64_t ld,
                                 const float *x, float *y);
/* GEMV, columns form: y[j] = sum_k x[k] * b[k*ld + j] for j < n, k in order. */
typedef void (*q8_sgemm_axpys_fn)(int64_t n, int64_t k, const float *b, int64_t ld,
                                  const float *x, float *y);

typedef struct q8_sgemm_kernel {
    const char *name;
    int id;             /* identifies the packed layout */
    int mr, nr;
    q8_sgemm_ukr_fn ukr;
    q8_sgemm_dots_fn dots;
    q8_sgemm_axpys_fn axpys;
} q8_sgemm_kernel;

#if defined(__x86_64__) || defined(__i386__)
#define Q8_SGEMM_X86 1
extern const q8_sgemm_kernel q8_sgemm_kernel_avx2;
extern const q8_sgemm_kernel q8_sgemm_kernel_avx512;
#endif
#if defined(__aarch64__)
#define Q8_SGEMM_NEON 1
extern const q8_sgemm_kernel q8_sgemm_kernel_neon;
#endif

#endif
