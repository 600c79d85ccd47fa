/* Internal: the micro-kernels behind q8_sgemm. A kernel multiplies packed
 * panels: pa holds kc steps of mr floats (a column of op(A) per step), pb kc
 * steps of nr floats (a row of op(B)); it writes the mr x nr tile
 * c = alpha*acc + beta*c (beta == 0: c is not read). */
#ifndef Q8_SGEMM_KERNELS_H
#define Q8_SGEMM_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#define Q8_SGEMM_MAX_MR 16
#define Q8_SGEMM_MAX_NR 32

typedef void (*q8_sgemm_ukr_fn)(int64_t kc, const float *pa, const float *pb, float *c,
                                int64_t ldc, float alpha, float beta);
/* The same tile with B read in place: row k of the panel is the nr floats
 * at b + offk[k]. Same arithmetic as ukr (the results are bit-identical). */
typedef void (*q8_sgemm_ukr_rows_fn)(int64_t kc, const float *pa, const float *b,
                                     const int64_t *offk, float *c, int64_t ldc, float alpha,
                                     float beta);
/* The tile's first nn <= Q8_SGEMM_NARROW columns (pb's steps still nr
 * floats), written at c for those columns only: the rows in the lanes, one
 * FMA per column and k, where a 16-wide half tile spends mr of them. The
 * same chain per element as ukr (the results are bit-identical). */
#define Q8_SGEMM_NARROW 4
typedef void (*q8_sgemm_ukr_narrow_fn)(int64_t kc, int nn, const float *pa, const float *pb,
                                       float *c, int64_t ldc, float alpha, float beta);
/* GEMV, rows form: y[j] = sum_k rows[j*ld + k] * x[k] for j < n. Each y[j]
 * must not depend on n or on its position (threads split n anywhere). */
typedef void (*q8_sgemm_dots_fn)(int64_t n, int64_t k, const float *rows, int64_t ld,
                                 const float *x, float *y);
/* GEMV, columns form: y[j] = sum_k x[k] * b[k*ld + j] for j < n, k in order. */
typedef void (*q8_sgemm_axpys_fn)(int64_t n, int64_t k, const float *b, int64_t ld,
                                  const float *x, float *y);

/* An epilogue a kernel can apply to a whole tile in registers, after
 * alpha/beta: + bias_rows[i] (or else + bias_cols[j], when given), then
 * ReLU when relu, or Clip to [lo, hi] when clip, or HardSwish with alpha lo
 * and beta hi when hswish (only kernels with epi_hswish). The same bits as
 * q8_act_apply_block on the stored tile. */
typedef struct q8_sgemm_epi {
    const float *bias_rows, *bias_cols;
    bool relu, clip, hswish;
    float lo, hi;
} q8_sgemm_epi;

/* ukr or ukr_rows (offk non-NULL: pb is the rows' base) plus the epilogue. */
typedef void (*q8_sgemm_ukr_epi_fn)(int64_t kc, const float *pa, const float *pb,
                                    const int64_t *offk, float *c, int64_t ldc, float alpha,
                                    float beta, const q8_sgemm_epi *epi);

typedef struct q8_sgemm_kernel {
    const char *name;
    int id;             /* identifies the packed layout of A */
    int b_id;           /* ... and of B (kernels of one nr share it) */
    int mr, nr;
    q8_sgemm_ukr_fn ukr;
    q8_sgemm_ukr_rows_fn ukr_rows;  /* optional */
    q8_sgemm_ukr_epi_fn ukr_epi;    /* optional */
    /* optional: ukr's first nr/2 columns only (pb's steps still nr floats),
     * the same bits there; for a last panel of <= nr/2 columns */
    q8_sgemm_ukr_fn ukr_half;
    q8_sgemm_ukr_narrow_fn ukr_narrow; /* optional; mr 8 or 12 */
    bool epi_hswish;                /* ukr_epi applies HardSwish too */
    q8_sgemm_dots_fn dots;
    q8_sgemm_axpys_fn axpys;
} q8_sgemm_kernel;

#if defined(__x86_64__) || defined(__i386__)
#define Q8_SGEMM_X86 1
extern const q8_sgemm_kernel q8_sgemm_kernel_avx2;
extern const q8_sgemm_kernel q8_sgemm_kernel_avx512;
extern const q8_sgemm_kernel q8_sgemm_kernel_avx512_12;
#endif
#if defined(__aarch64__)
#define Q8_SGEMM_NEON 1
extern const q8_sgemm_kernel q8_sgemm_kernel_neon;
#endif

#endif
