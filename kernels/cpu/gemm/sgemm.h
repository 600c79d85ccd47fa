/* FP32 GEMM: C = act(alpha * op(A) * op(B) + beta * C + bias), row-major with
 * leading dimensions. Blocked and packed, with AVX-512 / AVX2+FMA micro-kernels
 * picked at run time and a portable C kernel; GEMV paths for M == 1 or N == 1.
 *
 * Determinism: every output element is computed by one micro-kernel call
 * chain whose K blocking depends only on K, so results are bit-identical for
 * any thread count and any split of the output. Different kernels (portable
 * vs AVX2 vs AVX-512) may differ by float rounding. */
#ifndef Q8_SGEMM_H
#define Q8_SGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fused_act.h"
#include "threadpool.h"

enum {
    /* Use the portable C kernels even where AVX2/AVX-512 are available
     * (tests compare both paths). */
    Q8_SGEMM_PORTABLE = 1u << 0,
    /* Skip the AVX-512 kernel (tests reach the AVX2 one). */
    Q8_SGEMM_NO_AVX512 = 1u << 1,
    /* Pack B panels even where b_rows could be read in place (tests
     * compare both). */
    Q8_SGEMM_NO_ROWS = 1u << 2,
    /* Bias and ReLU / Clip as a pass after each tile, never in the
     * kernel's stores (tests compare both). */
    Q8_SGEMM_NO_FUSED_EPI = 1u << 3,
    /* The AVX-512 kernel of 8 rows whatever M (tests compare it with the
     * 12-row one that pick_kernel takes for some M). */
    Q8_SGEMM_MR8 = 1u << 4,
};

/* Produces packed B panels for rows [k0, k0+kc) and columns [n0, n0+nc) of
 * GEMM number `batch`: panel p (columns n0+p*nr ...) at dst + p*kc*nr, each
 * row k of a panel nr floats, columns past nc zero. Used for implicit
 * im2col. Called concurrently from several threads. */
typedef void (*q8_sgemm_pack_fn)(const void *ctx, int64_t batch, int64_t k0, int64_t kc,
                                 int64_t n0, int64_t nc, int nr, float *dst);

typedef struct q8_sgemm_op {
    int64_t m, n, k;
    bool trans_a, trans_b;
    float alpha, beta;          /* beta == 0: C is not read */
    const float *a;             /* op(A) is m x k */
    int64_t lda;
    const float *b;             /* op(B) is k x n (unused with b_pack) */
    int64_t ldb;
    float *c;
    int64_t ldc;
    /* Optional pre-packed operands (q8_sgemm_pack_a/b); used when they were
     * packed for the kernel this call uses, else a / b are read. */
    const void *a_packed, *b_packed;
    q8_sgemm_pack_fn b_pack;    /* optional producer of B panels */
    const void *b_pack_ctx;
    /* Optional, with b_pack: row k of op(B) of GEMM `batch` also lies in
     * memory at b_rows + batch * b_rows_stride + b_rowoff[k] (n floats,
     * columns contiguous). Kernels that can read whole NR-wide panels there
     * in place instead of packing them (same results); partial panels and
     * other kernels still call b_pack. */
    const float *b_rows;
    const int64_t *b_rowoff;
    int64_t b_rows_stride;
    const float *bias;          /* optional: added after alpha/beta */
    bool bias_per_col;          /* bias has n values (else m) */
    q8_act act;                 /* applied last */
    /* Optional: called once per work item when its block of C (rows
     * [m0, m1), columns [n0, n1) of GEMM `batch`) is final, after the
     * epilogue, while it is still in cache (e.g. to move it elsewhere).
     * Calls run concurrently on disjoint blocks. */
    void (*block_done)(const void *ctx, int64_t batch, int64_t m0, int64_t m1, int64_t n0,
                       int64_t n1);
    const void *block_done_ctx;
    /* batch > 1: that many GEMMs of the same shape; offs holds 4 element
     * offsets per GEMM (a, b, c, bias). A pre-packed operand holding
     * `count` matrices uses matrix (g % count) for GEMM g. */
    int64_t batch;
    const int64_t *offs;
    unsigned flags;             /* Q8_SGEMM_* */
} q8_sgemm_op;

/* Scratch for q8_sgemm_run with a pool of n_threads (64-byte aligned). */
size_t q8_sgemm_scratch_bytes(const q8_sgemm_op *op, int n_threads);
/* Run; pool may be NULL. scratch: q8_sgemm_scratch_bytes(op, pool size). */
void q8_sgemm_run(const q8_sgemm_op *op, q8_pool *pool, void *scratch);

/* The plain BLAS-like form. */
size_t q8_sgemm_scratch(int64_t m, int64_t n, int64_t k, int n_threads);
void q8_sgemm(q8_pool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
              float *c, int64_t ldc, void *scratch);

/* Pre-packing of constant operands: `count` matrices, matrix i at
 * src + i*stride. op(A) is m x k; op(B) is k x n. Bytes are 0 when packing
 * does not pay (e.g. shapes that take the GEMV path); dst from
 * q8_aligned_alloc. flags as in q8_sgemm_op (they pick the kernel layout). */
size_t q8_sgemm_packed_a_bytes(int64_t m, int64_t k, int64_t count, unsigned flags);
void q8_sgemm_pack_a(void *dst, bool trans, int64_t m, int64_t k, const float *src, int64_t ld,
                     int64_t count, int64_t stride, unsigned flags);
size_t q8_sgemm_packed_b_bytes(int64_t k, int64_t n, int64_t count, unsigned flags);
void q8_sgemm_pack_b(void *dst, bool trans, int64_t k, int64_t n, const float *src, int64_t ld,
                     int64_t count, int64_t stride, unsigned flags);

/* The K blocking of every GEMM, fixed by K alone: ceil(K / 256) blocks of
 * (almost) equal size, each a chain of FMAs from +0 whose sums are added in
 * order. Block i of k is [*k0, *k0 + *kc). Direct conv kernels that give the
 * lowerings' bits follow it (conv_ocl.h). */
int64_t q8_sgemm_kblock_count(int64_t k);
void q8_sgemm_kblock(int64_t k, int64_t i, int64_t *k0, int64_t *kc);

/* Name of the micro-kernel used with these flags ("avx512", "avx2",
 * "portable"), for benchmarks and logs. */
const char *q8_sgemm_kernel_name(unsigned flags);
/* Whether the kernel flags picks reads B rows in place (b_rows; the NEON
 * kernel has no such variant: it packs every panel). */
bool q8_sgemm_reads_rows_in_place(unsigned flags);

#endif
