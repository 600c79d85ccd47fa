/* INT8 GEMM with exact INT32 accumulation and a fused epilogue.
 *
 *   acc[i][j] = init_row[i] + init_col[j] + sum_k R[i][k] * L[j][k]
 *   out(i, j) = epilogue(acc[i][j])          at out + (i * ldo + j) elements
 *
 * Both operands are K-contiguous ("TN"). R, the "rows" operand, is
 * broadcast; L, the "lanes" operand, fills the vector lanes, so j is the
 * contiguous output index. The q8 ops use it two ways:
 *   QConv:  R = weights [M][K] (packed once), L = im2col pixels  -> Y[m][p]
 *   QGemm:  R = activations [M][K],  L = weights [N][K] (packed)  -> Y[m][n]
 *
 * Packed layouts (kp = K rounded up to a multiple of 4, zero padded):
 *   R: row-major [I][kp] bytes
 *   L: panels of 16 rows: [ceil(J / 16)][kp / 4][16][4] bytes
 * vpdpbusd multiplies unsigned by signed bytes, so exactly one operand is
 * stored as uint8 = int8 + 128 (rows_u8 says which). The caller's init then
 * holds -128 * sum_k (the other operand) for the rows/lanes it belongs to,
 * and acc is the exact signed sum on every path (intermediate int32 sums
 * wrap; the final value is exact when it fits in int32, which infer
 * guarantees by bounding K). */
#ifndef Q8_KERNELS_CPU_IGEMM_H
#define Q8_KERNELS_CPU_IGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "requant.h"
#include "threadpool.h"

#define Q8_IG_LANES 16

/* Longest reduction for which |sum of int8 products| < 2^31. */
#define Q8_IG_MAX_K 131071

typedef enum q8_igemm_path {
    Q8_IGEMM_AUTO = 0,      /* the best one this CPU supports */
    Q8_IGEMM_C,             /* portable C */
    Q8_IGEMM_AVX2,          /* vpmaddwd on 16-bit widened bytes */
    Q8_IGEMM_AVXVNNI,       /* 256-bit vpdpbusd (VEX) */
    Q8_IGEMM_AVX512VNNI,    /* 512-bit vpdpbusd */
    Q8_IGEMM_NEONDOT,       /* aarch64 SDOT (ARMv8.2 dot product) */
    Q8_IGEMM_NEONI8MM,      /* aarch64 USDOT / SUDOT (ARMv8.6 int8 matrix multiply) */
    Q8_IGEMM_PATH_COUNT
} q8_igemm_path;

const char *q8_igemm_path_name(q8_igemm_path p);
bool q8_igemm_path_supported(q8_igemm_path p);
/* AUTO -> the best supported path; others are returned unchanged. */
q8_igemm_path q8_igemm_resolve(q8_igemm_path p);

static inline int64_t q8_ig_kpad(int64_t K) { return (K + 3) & ~(int64_t)3; }
static inline int64_t q8_ig_panels(int64_t J) { return (J + Q8_IG_LANES - 1) / Q8_IG_LANES; }
static inline size_t q8_ig_rows_bytes(int64_t I, int64_t K) {
    return (size_t)I * (size_t)q8_ig_kpad(K);
}
static inline size_t q8_ig_lanes_bytes(int64_t J, int64_t K) {
    return (size_t)q8_ig_panels(J) * Q8_IG_LANES * (size_t)q8_ig_kpad(K);
}

/* R from src[i * ld + k] (i < I, k < K); to_u8 adds 128. rowsum (optional)
 * gets sum_k src[i][k]. */
void q8_ig_pack_rows(const int8_t *src, int64_t ld, int64_t I, int64_t K, bool to_u8,
                     uint8_t *dst, int32_t *rowsum, q8_pool *pool);
/* L from src[j * ld + k] (each lane row K-contiguous: weights [N][K]);
 * rowsum (optional) gets sum_k src[j][k]. Serial (used in prepare). */
void q8_ig_pack_lanes_jk(const int8_t *src, int64_t ld, int64_t J, int64_t K, bool to_u8,
                         uint8_t *dst, int32_t *rowsum);
/* L from src[k * ld + j] (k-major, e.g. im2col rows or NCHW channels). */
void q8_ig_pack_lanes_kj(const int8_t *src, int64_t ld, int64_t K, int64_t J, bool to_u8,
                         uint8_t *dst, q8_pool *pool);

/* Weights already packed signed (to_u8 false: the layouts a .q8 stores,
 * core/layout.h), used in place: the sums of each row (R) or lane row (L)
 * that the packing functions return as rowsum. */
void q8_ig_rows_sums(const uint8_t *rows, int64_t I, int64_t K, int32_t *rowsum);
void q8_ig_lanes_sums(const uint8_t *lanes, int64_t J, int64_t K, int32_t *rowsum);

/* The same from int8 (src_u8 false) or uint8 (true) sources, for the side
 * the kernel reads as unsigned (side_u8) or signed. Either way the kernel's
 * value is the source value, minus 128 for uint8 sources; rowsum gets the
 * sums of those values. (The plain versions: int8 sources.) */
void q8_ig_pack_rows_ex(const uint8_t *src, int64_t ld, int64_t I, int64_t K, bool side_u8,
                        bool src_u8, uint8_t *dst, int32_t *rowsum, q8_pool *pool);
void q8_ig_pack_lanes_jk_ex(const uint8_t *src, int64_t ld, int64_t J, int64_t K, bool side_u8,
                            bool src_u8, uint8_t *dst, int32_t *rowsum);
void q8_ig_pack_lanes_kj_ex(const uint8_t *src, int64_t ld, int64_t K, int64_t J, bool side_u8,
                            bool src_u8, uint8_t *dst, q8_pool *pool);

typedef struct q8_igemm_args {
    int64_t I, J, K;
    const uint8_t *rows;        /* R, packed */
    const uint8_t *lanes;       /* L, packed */
    bool rows_u8;               /* R holds int8 + 128 (else L does) */
    const int32_t *init_row;    /* [I] or NULL */
    const int32_t *init_col;    /* [J] or NULL */
    const q8_epilogue *epi;
    int64_t chan_offset;        /* added to the channel index (conv groups) */
    void *out;
    int64_t ldo;                /* in elements */
    /* Optional: the lanes made block by block as the GEMM goes, instead of
     * all of them before it (an im2col of many times the input, written to
     * memory and read back). lanes_pack(ctx, p0, np, dst) writes panels
     * [p0, p0 + np) at dst; thread t's block goes to lanes_scratch +
     * t * q8_ig_block_bytes(K), where the tiles that read it find it in
     * cache. lanes is then unused. */
    void (*lanes_pack)(const void *ctx, int64_t p0, int64_t np, uint8_t *dst);
    const void *lanes_pack_ctx;
    uint8_t *lanes_scratch;
    /* Optional (vrow > 0): the columns are a grid of rows of vrow, of which
     * the first vcols are outputs; column j goes to out + i * ldo +
     * (j / vrow) * vcols + j % vrow and the others are dropped (the
     * implicit conv computes its padded width, qconv_implicit.h). Rows must
     * be channels (Q8_CH_ROW or Q8_CH_ONE) and init_col NULL. */
    int64_t vrow, vcols;
    /* Optional: the lanes read in place, chunk g of panel p at lanes + p x
     * 64 + lane_off[g] (the implicit conv's copy of X), by the kernels that
     * have such a tile (q8_ig_kernel.tile_imp); the others get them packed
     * by lanes_pack, which must then be set too. */
    const int64_t *lane_off;
    /* Optional: R kept compressed (pruned weights, igemv_sparse.h), its
     * rows [i0, i0 + mr) made when a work item needs them: rows_unpack
     * (ctx, i0, mr, dst) writes them at dst, mr x kpad(K) bytes; thread t's
     * go to rows_scratch + t * q8_ig_rows_block_bytes(I, K, all), all:
     * lanes made per block too (lanes_pack, unless the path reads lane_off
     * in place: q8_igemm_lanes_in_place). rows is then unused. With lanes
     * made per block, items alternate row blocks: each thread then makes
     * all I rows once, at its first item of the call. */
    void (*rows_unpack)(const void *ctx, int64_t i0, int mr, uint8_t *dst);
    const void *rows_unpack_ctx;
    uint8_t *rows_scratch;
} q8_igemm_args;

/* Bytes of one thread's block of lanes for lanes_pack: a 64-byte header
 * (which block it holds), then the most panels a work item reads. */
static inline size_t q8_ig_block_bytes(int64_t K) {
    return 64 + (((size_t)4 * Q8_IG_LANES * (size_t)q8_ig_kpad(K) + 63) & ~(size_t)63);
}

/* The most rows of a tile on any path. */
#define Q8_IG_MAX_MR 8

/* Bytes of one thread's rows for rows_unpack: a 64-byte header (which rows
 * it holds), then the most rows a work item reads, or all I rows when the
 * lanes are made per block too (all; see rows_unpack). */
static inline size_t q8_ig_rows_block_bytes(int64_t I, int64_t K, bool all) {
    size_t rows = all ? (size_t)I : (size_t)Q8_IG_MAX_MR;
    return 64 + ((rows * (size_t)q8_ig_kpad(K) + 63) & ~(size_t)63);
}

void q8_igemm(const q8_igemm_args *a, q8_pool *pool, q8_igemm_path path);
/* The path's kernel reads lanes in place (lane_off): lanes_pack and its
 * scratch are then unused. */
bool q8_igemm_lanes_in_place(q8_igemm_path path);

/* One output row segment through the epilogue on the given path (depthwise
 * and transposed conv); ch0 as in q8_epilogue_row_c. */
void q8_epilogue_row(q8_igemm_path path, const q8_epilogue *e, const int32_t *acc, int64_t n,
                     int64_t ch0, void *out);

/* One output row of a stride-1 depthwise conv on the given path:
 * out[o] = init + sum_{t < taps} w[t] * x[off[t] + o] for o < n, in int32
 * sums that wrap like every accumulator here. The caller pads x so that
 * every read is in bounds. */
void q8_dw_row(q8_igemm_path path, const int8_t *x, const int64_t *off, const int8_t *w,
               int64_t taps, int32_t init, int64_t n, int32_t *out);
/* The same at stride 2: out[o] = init + sum_t w[t] * x[off[t] + 2 o]; the
 * reads stay within those of the definition. */
void q8_dw_row_s2(q8_igemm_path path, const int8_t *x, const int64_t *off, const int8_t *w,
                  int64_t taps, int32_t init, int64_t n, int32_t *out);

/* ---- internal: per-path kernels (igemm_*.c) ------------------------------- */

/* Compute the tile rows [i0, i0 + mr) x panels [p0, p0 + np) into
 * tile[r * 64 + lane] (np <= 4, mr <= the path's rows per tile). */
typedef void (*q8_ig_tile_fn)(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                              int32_t *tile);
typedef void (*q8_ig_epi_fn)(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                             void *out);
/* A tile with its epilogue applied from the registers, when rows are
 * channels (Q8_CH_ROW / Q8_CH_ONE), init_col is NULL and R is signed. */
typedef void (*q8_ig_tile_epi_fn)(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0,
                                  int np);

typedef struct q8_ig_kernel {
    int mr;                 /* rows per tile */
    int np;                 /* 16-lane panels per tile (<= 4) */
    q8_ig_tile_fn tile;
    q8_ig_epi_fn epi;
    q8_ig_tile_epi_fn tile_epi;     /* optional */
    /* optional: the same two reading lanes in place (lane_off); tile_imp_epi
     * also maps the columns when vrow is set */
    q8_ig_tile_fn tile_imp;
    q8_ig_tile_epi_fn tile_imp_epi;
} q8_ig_kernel;

void q8_ig_tile_c(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np, int32_t *tile);
#if defined(__x86_64__) || defined(__i386__)
void q8_ig_tile_avx2(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                     int32_t *tile);
void q8_ig_epi_avx2(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0, void *out);
void q8_ig_tile_epi_avx2(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np);
void q8_dw_row_avx2(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                    int32_t init, int64_t n, int32_t *out);
void q8_dw_row_avx512(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                      int32_t init, int64_t n, int32_t *out);
void q8_ig_tile_avxvnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                        int32_t *tile);
void q8_ig_tile_epi_avxvnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np);
void q8_ig_tile_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                           int32_t *tile);
void q8_ig_epi_avx512(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                      void *out);
void q8_ig_tile_epi_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np);
void q8_ig_tile_imp_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                               int32_t *tile);
void q8_ig_tile_imp_epi_avx512vnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0,
                                   int np);
#endif
#if defined(__aarch64__)
void q8_ig_tile_neondot(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                        int32_t *tile);
void q8_ig_tile_neoni8mm(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                         int32_t *tile);
void q8_ig_tile_imp_neondot(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                            int32_t *tile);
void q8_ig_tile_imp_neoni8mm(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                             int32_t *tile);
void q8_ig_epi_neon(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0, void *out);
void q8_dw_row_neon(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                    int32_t init, int64_t n, int32_t *out);
void q8_dw_row_s2_neon(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                       int32_t init, int64_t n, int32_t *out);
#endif

#endif
