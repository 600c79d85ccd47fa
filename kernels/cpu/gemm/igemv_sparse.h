/* INT8 GEMV (a few activation rows) against weights kept compressed in
 * memory: the form for pruned and published-sparse q8.QGemm weights, so
 * that the session holds a fraction of the dense bytes and reads that
 * fraction per run (issue 13, sparse weights).
 *
 *   acc[r][n] = init[n] + sum_k x[r][k] * W[n][k]      (exact int32, wrapping)
 *   out[r * ldo + n] = epilogue(acc[r][n])             (channel = n)
 *
 * The compressed form of W [N][K]: K in chunks of 64; for each row n and
 * chunk c a 64-bit mask (bit b: element 64 c + b is stored; none past K),
 * and the row's stored bytes in order after those of row n - 1. A chunk
 * costs 8 bytes of mask, so the form is worth it below about 7/8 density
 * (50% pruning: 0.625 of dense; a 70%-zero weight: 0.42).
 *
 * X rows are given as uint8 = int8 + 128 in rows of ldx >= 64 * chunks
 * bytes (q8_isp_pack_x); init holds bias - 128 * sum_k W[n][k] as
 * everywhere in igemm.h. The AVX-512 kernel (VBMI2's byte expand makes a
 * chunk's 64 weights from its mask and its stored bytes, VNNI multiplies)
 * is the fast one; the C loop over the set bits is its reference. Where
 * there is no VBMI2, ops keep the form only for GEMMs that make their rows
 * or lanes from it (q8_isp_rows: a byte shuffle on AVX2 and NEON). */
#ifndef Q8_KERNELS_CPU_IGEMV_SPARSE_H
#define Q8_KERNELS_CPU_IGEMV_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "igemm.h"
#include "requant.h"
#include "threadpool.h"

/* The most activation rows q8.QGemm uses the form for, and the rows of one
 * kernel call: the kernels expand the weights again for each row, so two
 * rows cost twice one, where the dense GEMM's tiles reuse each weight
 * across rows (igemv_sparse_bench on Zen 5: 1.8x the dense time for one
 * row of a 128 x 3136 weight, 3.7x for two). */
#define Q8_ISP_MAX_ROWS 1

typedef struct q8_isp {
    int64_t N, K, KC;       /* rows, reduction, chunks of 64 */
    size_t off_mask;        /* uint64 [N][KC], 8-aligned */
    size_t off_start;       /* uint64 [N + 1]: row n's stored bytes from vals + start[n] */
    size_t off_vals;        /* the stored bytes, then 64 bytes of slack */
    size_t nnz;
} q8_isp;

/* The nonzero bytes of n bytes at w: a weight's in any of the layouts of
 * core/layout.h, whose padding is 0, without its plain view. */
size_t q8_isp_nonzeros(const void *w, size_t n);
/* Where an op keeps its q8_isp in its blob: right after its header of
 * header bytes (the op's header then needs no field for it). */
static inline size_t q8_isp_at(size_t header) { return (header + 63) & ~(size_t)63; }

/* Plan the form of an [N][K] int8 weight with nnz nonzero values at *off
 * in a blob (see q8_qop_reserve). */
void q8_isp_plan(q8_isp *s, int64_t N, int64_t K, size_t nnz, size_t *off);
/* Fill the planned form in blob; rowsum (optional) gets sum_k W[n][k]. */
void q8_isp_pack(const q8_isp *s, const int8_t *w, void *blob, int32_t *rowsum);

/* Whether the fast GEMV kernel (AVX-512 VBMI2 + VNNI) runs on this CPU for
 * path (resolved here): q8_isp_run is worth calling only then. */
bool q8_isp_gemv_fast(q8_igemm_path path);

/* How q8_isp_rows makes dense rows: the C loop over the set bits (34x a
 * dense GEMV: a reference, not a path ops take), a byte shuffle 16 bytes
 * a step (x86 pshufb on AVX2, NEON tbl on aarch64: isp_shuffle_tab.h), or
 * AVX-512 VBMI2's byte expand 64 a step. */
typedef enum q8_isp_expander {
    Q8_ISP_EXPAND_C = 0,
    Q8_ISP_EXPAND_SHUFFLE,
    Q8_ISP_EXPAND_AVX512,
    Q8_ISP_EXPANDER_COUNT
} q8_isp_expander;
bool q8_isp_expander_supported(q8_isp_expander x);
/* The best expander this CPU has for GEMM path path (resolved here): C on
 * x86 without AVX2 or for the C path, so that an op keeps the dense form
 * there. */
q8_isp_expander q8_isp_expander_for(q8_igemm_path path);
/* Whether ops keep compressed weights for path: a fast expander (and so a
 * GEMM that makes its rows or lanes from the form) is there. */
static inline bool q8_isp_kept(q8_igemm_path path) {
    return q8_isp_expander_for(path) != Q8_ISP_EXPAND_C;
}

/* ldx of the X rows for K, and X [M][K] int8 into rows of ldx uint8. */
int64_t q8_isp_ldx(int64_t K);
void q8_isp_pack_x(const int8_t *x, int64_t M, int64_t K, uint8_t *dst);

/* Run on M rows. path: the GEMM path the op resolved (the epilogue's
 * too); the fast kernel only where q8_isp_gemv_fast(path). */
void q8_isp_run(const q8_isp *s, const void *blob, const uint8_t *x, int64_t M,
                const int32_t *init, const q8_epilogue *e, void *out, int64_t ldo,
                q8_igemm_path path, q8_pool *pool);

/* Rows [r0, r0 + nr) expanded to their K dense bytes each, at dst + r * K
 * (the GEMM's R operand kept compressed: q8_igemm_args.rows_unpack), by
 * expander x (one this CPU supports). */
void q8_isp_rows(const q8_isp *s, const void *blob, int64_t r0, int64_t nr, uint8_t *dst,
                 q8_isp_expander x);

/* ---- internal: the kernels. Rows [0, M) x channels [n0, n1) into
 * acc[r * (n1 - n0) + n - n0], init not added. */
void q8_isp_block_c(const q8_isp *s, const void *blob, const uint8_t *x, int64_t ldx,
                    int64_t M, int64_t n0, int64_t n1, int32_t *acc);
#if defined(__x86_64__) || defined(__i386__)
void q8_isp_block_avx512(const q8_isp *s, const void *blob, const uint8_t *x, int64_t ldx,
                         int64_t M, int64_t n0, int64_t n1, int32_t *acc);
void q8_isp_rows_avx512(const q8_isp *s, const void *blob, int64_t r0, int64_t nr,
                        uint8_t *dst);
void q8_isp_rows_shuffle_x86(const q8_isp *s, const void *blob, int64_t r0, int64_t nr,
                             uint8_t *dst);
#endif
#if defined(__aarch64__)
void q8_isp_rows_neon(const q8_isp *s, const void *blob, int64_t r0, int64_t nr, uint8_t *dst);
#endif

#endif
