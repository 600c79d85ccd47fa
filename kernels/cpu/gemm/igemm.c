/* INT8 GEMM driver: path selection, operand packing, the tile loop and the
 * portable C kernel. The SIMD kernels live in igemm_<isa>.c. */
#include "igemm.h"

#include <string.h>

#include "clones.h"
#include "common.h"
#include "cpu_features.h"
#include "layout.h"

/* A .q8 stores weights in these operands' layouts (core/layout.h). */
_Static_assert(Q8_IG_LANES == Q8_LAYOUT_LANES && Q8_LAYOUT_KSTEP == 4,
               "the file's weight layouts are the INT8 GEMM's operands");

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- paths -------------------------------------------------------------- */

const char *q8_igemm_path_name(q8_igemm_path p) {
    switch (p) {
    case Q8_IGEMM_AUTO: return "auto";
    case Q8_IGEMM_C: return "c";
    case Q8_IGEMM_AVX2: return "avx2";
    case Q8_IGEMM_AVXVNNI: return "avxvnni";
    case Q8_IGEMM_AVX512VNNI: return "avx512vnni";
    case Q8_IGEMM_NEONDOT: return "neondot";
    case Q8_IGEMM_NEONI8MM: return "neoni8mm";
    default: return "?";
    }
}

bool q8_igemm_path_supported(q8_igemm_path p) {
    switch (p) {
    case Q8_IGEMM_AUTO:
    case Q8_IGEMM_C: return true;
#if defined(__x86_64__) || defined(__i386__)
    case Q8_IGEMM_AVX2: return q8_cpu()->avx2;
    case Q8_IGEMM_AVXVNNI: return q8_cpu()->avxvnni;
    case Q8_IGEMM_AVX512VNNI:
        return q8_cpu()->avx512f && q8_cpu()->avx512bw && q8_cpu()->avx512vl &&
               q8_cpu()->avx512vnni;
#endif
#if defined(__aarch64__)
    case Q8_IGEMM_NEONDOT: return q8_cpu()->asimddp;
    case Q8_IGEMM_NEONI8MM: return q8_cpu()->i8mm;
#endif
    default: return false;
    }
}

q8_igemm_path q8_igemm_resolve(q8_igemm_path p) {
    if (p != Q8_IGEMM_AUTO) return p;
    static const q8_igemm_path order[] = {Q8_IGEMM_AVX512VNNI, Q8_IGEMM_AVXVNNI, Q8_IGEMM_AVX2,
                                          Q8_IGEMM_NEONI8MM, Q8_IGEMM_NEONDOT};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (q8_igemm_path_supported(order[i])) return order[i];
    return Q8_IGEMM_C;
}

static q8_ig_kernel kernel_for(q8_igemm_path p) {
    switch (q8_igemm_resolve(p)) {
#if defined(__x86_64__) || defined(__i386__)
    case Q8_IGEMM_AVX2:
        return (q8_ig_kernel){2, 1, q8_ig_tile_avx2, q8_ig_epi_avx2, q8_ig_tile_epi_avx2, NULL,
                              NULL};
    case Q8_IGEMM_AVXVNNI:
        return (q8_ig_kernel){6, 1, q8_ig_tile_avxvnni, q8_ig_epi_avx2, q8_ig_tile_epi_avxvnni,
                              NULL, NULL};
    case Q8_IGEMM_AVX512VNNI:
        return (q8_ig_kernel){6, 4, q8_ig_tile_avx512vnni, q8_ig_epi_avx512,
                              q8_ig_tile_epi_avx512vnni, q8_ig_tile_imp_avx512vnni,
                              q8_ig_tile_imp_epi_avx512vnni};
#endif
#if defined(__aarch64__)
    case Q8_IGEMM_NEONDOT:
        return (q8_ig_kernel){4, 1, q8_ig_tile_neondot, q8_ig_epi_neon, NULL,
                              q8_ig_tile_imp_neondot, NULL};
    case Q8_IGEMM_NEONI8MM:
        return (q8_ig_kernel){4, 1, q8_ig_tile_neoni8mm, q8_ig_epi_neon, NULL,
                              q8_ig_tile_imp_neoni8mm, NULL};
#endif
    default: return (q8_ig_kernel){4, 1, q8_ig_tile_c, q8_epilogue_row_c, NULL, NULL, NULL};
    }
}

void q8_epilogue_row(q8_igemm_path path, const q8_epilogue *e, const int32_t *acc, int64_t n,
                     int64_t ch0, void *out) {
    kernel_for(path).epi(e, acc, n, ch0, out);
}

static void dw_row_c(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                     int32_t init, int64_t n, int32_t *out) {
    for (int64_t o = 0; o < n; o++) {
        uint32_t s = (uint32_t)init;
        for (int64_t t = 0; t < taps; t++) s += (uint32_t)(w[t] * x[off[t] + o]);
        out[o] = (int32_t)s;
    }
}

void q8_dw_row(q8_igemm_path path, const int8_t *x, const int64_t *off, const int8_t *w,
               int64_t taps, int32_t init, int64_t n, int32_t *out) {
    switch (q8_igemm_resolve(path)) {
#if defined(__x86_64__) || defined(__i386__)
    case Q8_IGEMM_AVX2:
    case Q8_IGEMM_AVXVNNI: {
        /* 16 at a time; a ragged end is one more block, overlapping the last */
        int64_t done = n / 16 * 16;
        q8_dw_row_avx2(x, off, w, taps, init, done, out);
        if (done < n && n >= 16) q8_dw_row_avx2(x + n - 16, off, w, taps, init, 16, out + n - 16);
        else dw_row_c(x + done, off, w, taps, init, n - done, out + done);
        break;
    }
    case Q8_IGEMM_AVX512VNNI: q8_dw_row_avx512(x, off, w, taps, init, n, out); break;
#endif
#if defined(__aarch64__)
    case Q8_IGEMM_NEONDOT:
    case Q8_IGEMM_NEONI8MM: q8_dw_row_neon(x, off, w, taps, init, n, out); break;
#endif
    default: dw_row_c(x, off, w, taps, init, n, out);
    }
}

void q8_dw_row_s2(q8_igemm_path path, const int8_t *x, const int64_t *off, const int8_t *w,
                  int64_t taps, int32_t init, int64_t n, int32_t *out) {
    switch (q8_igemm_resolve(path)) {
#if defined(__aarch64__)
    case Q8_IGEMM_NEONDOT:
    case Q8_IGEMM_NEONI8MM: q8_dw_row_s2_neon(x, off, w, taps, init, n, out); break;
#endif
    default:
        for (int64_t o = 0; o < n; o++) {
            uint32_t s = (uint32_t)init;
            for (int64_t t = 0; t < taps; t++) s += (uint32_t)(w[t] * x[off[t] + 2 * o]);
            out[o] = (int32_t)s;
        }
    }
}

/* ---- packing ------------------------------------------------------------ */

/* The bytes of a packed operand: stored = source ^ x, and the kernels read
 * value (int8)(stored ^ z), z = 0x80 on the unsigned side (stored = value +
 * 128) and 0 on the signed one. Padding stores z: the value 0. */
typedef struct pack_bytes {
    uint8_t x, z;
} pack_bytes;

static pack_bytes bytes_for(bool side_u8, bool src_u8) {
    return (pack_bytes){(uint8_t)(side_u8 != src_u8 ? 0x80 : 0), (uint8_t)(side_u8 ? 0x80 : 0)};
}

typedef struct pack_rows_args {
    const uint8_t *src;
    int64_t ld, K, kp;
    pack_bytes b;
    uint8_t *dst;
    int32_t *rowsum;
} pack_rows_args;

/* Cloned per x86 vector width: the activations of every INT8 Gemm and
 * MatMul pass through here each run (a fifth of a small transformer's INT8
 * time in baseline x86-64 code). Integer ops: the same bytes in any clone. */
Q8_CLONES static void pack_rows_range(void *p, int64_t b, int64_t e, int t) {
    const pack_rows_args *a = p;
    /* locals: the stores through d could alias *a, which kept the loop
     * scalar (a reload of a->b per byte) */
    const int64_t K = a->K, kp = a->kp;
    const uint8_t x = a->b.x, z = a->b.z;
    for (int64_t i = b; i < e; i++) {
        const uint8_t *restrict s = a->src + i * a->ld;
        uint8_t *restrict d = a->dst + i * kp;
        int32_t sum = 0;
        for (int64_t k = 0; k < K; k++) {
            uint8_t v = s[k] ^ x;
            d[k] = v;
            sum += (int8_t)(v ^ z);
        }
        for (int64_t k = K; k < kp; k++) d[k] = z;
        if (a->rowsum) a->rowsum[i] = sum;
    }
}

void q8_ig_pack_rows_ex(const uint8_t *src, int64_t ld, int64_t I, int64_t K, bool side_u8,
                        bool src_u8, uint8_t *dst, int32_t *rowsum, q8_pool *pool) {
    pack_rows_args a = {src, ld, K, q8_ig_kpad(K), bytes_for(side_u8, src_u8), dst, rowsum};
    q8_parallel_for(pool, I, 1 + 16384 / (a.kp + 1), pack_rows_range, &a);
}

void q8_ig_pack_rows(const int8_t *src, int64_t ld, int64_t I, int64_t K, bool to_u8,
                     uint8_t *dst, int32_t *rowsum, q8_pool *pool) {
    q8_ig_pack_rows_ex((const uint8_t *)src, ld, I, K, to_u8, false, dst, rowsum, pool);
}

/* Byte offset of element (j, k) in a lanes operand. */
static inline size_t lane_off(int64_t j, int64_t k, int64_t kp) {
    return ((size_t)(j / Q8_IG_LANES) * (size_t)(kp / 4) + (size_t)(k / 4)) * 64 +
           (size_t)(j % Q8_IG_LANES) * 4 + (size_t)(k % 4);
}

void q8_ig_pack_lanes_jk_ex(const uint8_t *src, int64_t ld, int64_t J, int64_t K, bool side_u8,
                            bool src_u8, uint8_t *dst, int32_t *rowsum) {
    int64_t kp = q8_ig_kpad(K), jp = q8_ig_panels(J) * Q8_IG_LANES;
    pack_bytes pb = bytes_for(side_u8, src_u8);
    for (int64_t j = 0; j < jp; j++) {
        int32_t sum = 0;
        for (int64_t k = 0; k < kp; k++) {
            uint8_t v = j < J && k < K ? src[j * ld + k] ^ pb.x : pb.z;
            dst[lane_off(j, k, kp)] = v;
            sum += (int8_t)(v ^ pb.z);
        }
        if (rowsum && j < J) rowsum[j] = sum;
    }
}

void q8_ig_pack_lanes_jk(const int8_t *src, int64_t ld, int64_t J, int64_t K, bool to_u8,
                         uint8_t *dst, int32_t *rowsum) {
    q8_ig_pack_lanes_jk_ex((const uint8_t *)src, ld, J, K, to_u8, false, dst, rowsum);
}

void q8_ig_rows_sums(const uint8_t *rows, int64_t I, int64_t K, int32_t *rowsum) {
    int64_t kp = q8_ig_kpad(K);
    for (int64_t i = 0; i < I; i++) {
        int32_t sum = 0;
        for (int64_t k = 0; k < K; k++) sum += (int8_t)rows[i * kp + k];
        rowsum[i] = sum;
    }
}

void q8_ig_lanes_sums(const uint8_t *lanes, int64_t J, int64_t K, int32_t *rowsum) {
    int64_t kp = q8_ig_kpad(K);
    for (int64_t j = 0; j < J; j++) {
        const uint8_t *p = lanes + lane_off(j, 0, kp);
        int32_t sum = 0;
        for (int64_t k4 = 0; k4 < kp / 4; k4++, p += 64)
            sum += (int8_t)p[0] + (int8_t)p[1] + (int8_t)p[2] + (int8_t)p[3];
        rowsum[j] = sum;
    }
}

typedef struct pack_lanes_args {
    const uint8_t *src;
    int64_t ld, K, J;
    pack_bytes b;
    uint8_t *dst;
} pack_lanes_args;

#if !defined(__SSE2__)
/* Panels [pb, pe), portable. */
static void pack_lanes_kj_c(const pack_lanes_args *a, int64_t pb, int64_t pe) {
    int64_t kp = q8_ig_kpad(a->K);
    for (int64_t p = pb; p < pe; p++)
        for (int64_t k = 0; k < kp; k++)
            for (int64_t l = 0; l < Q8_IG_LANES; l++) {
                int64_t j = p * Q8_IG_LANES + l;
                a->dst[lane_off(j, k, kp)] =
                    j < a->J && k < a->K ? a->src[k * a->ld + j] ^ a->b.x : a->b.z;
            }
}
#endif

#if defined(__SSE2__)
/* 4 k-rows x 16 lanes -> one 64-byte chunk (lane-major, 4 k per lane) by
 * two rounds of byte/word interleaving. A row past K, or the lanes past J
 * of the last panel, come from a buffer holding the padding (stored z:
 * the source value z ^ x). */
static void pack_lanes_kj_sse2(const pack_lanes_args *a, int64_t pb, int64_t pe) {
    int64_t kp = q8_ig_kpad(a->K), ld = a->ld;
    const __m128i x = _mm_set1_epi8((char)a->b.x);
    _Alignas(16) uint8_t pad[16], part[4][16];
    memset(pad, a->b.z ^ a->b.x, sizeof pad);
    for (int64_t p = pb; p < pe; p++) {
        int64_t j = p * Q8_IG_LANES, nl = a->J - j < Q8_IG_LANES ? a->J - j : Q8_IG_LANES;
        uint8_t *d = a->dst + (size_t)p * (size_t)(kp / 4) * 64;
        for (int64_t k4 = 0; k4 < kp / 4; k4++, d += 64) {
            __m128i r[4];
            for (int rr = 0; rr < 4; rr++) {
                int64_t k = 4 * k4 + rr;
                const uint8_t *s = k < a->K ? a->src + k * ld + j : pad;
                if (k < a->K && nl < Q8_IG_LANES) {
                    memcpy(part[rr], pad, 16);
                    memcpy(part[rr], s, (size_t)nl);
                    s = part[rr];
                }
                r[rr] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)s), x);
            }
            __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpackhi_epi8(r[0], r[1]);
            __m128i b0 = _mm_unpacklo_epi8(r[2], r[3]), b1 = _mm_unpackhi_epi8(r[2], r[3]);
            _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(a0, b0));
            _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(a0, b0));
            _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(a1, b1));
            _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(a1, b1));
        }
    }
}
#endif

static void pack_lanes_range(void *p, int64_t b, int64_t e, int t) {
#if defined(__SSE2__)
    pack_lanes_kj_sse2(p, b, e);
#else
    pack_lanes_kj_c(p, b, e);
#endif
}

void q8_ig_pack_lanes_kj_ex(const uint8_t *src, int64_t ld, int64_t K, int64_t J, bool side_u8,
                            bool src_u8, uint8_t *dst, q8_pool *pool) {
    pack_lanes_args a = {src, ld, K, J, bytes_for(side_u8, src_u8), dst};
    int64_t per_panel = Q8_IG_LANES * q8_ig_kpad(K);
    q8_parallel_for(pool, q8_ig_panels(J), 1 + 32768 / (per_panel + 1), pack_lanes_range, &a);
}

void q8_ig_pack_lanes_kj(const int8_t *src, int64_t ld, int64_t K, int64_t J, bool to_u8,
                         uint8_t *dst, q8_pool *pool) {
    q8_ig_pack_lanes_kj_ex((const uint8_t *)src, ld, K, J, to_u8, false, dst, pool);
}

/* ---- portable kernel ---------------------------------------------------- */

/* Unsigned 32-bit sums: they wrap instead of overflowing (see igemm.h). */
static inline __attribute__((always_inline)) void tile_c(const q8_igemm_args *a, int64_t i0,
                                                         int mr, int64_t p0, int np,
                                                         int32_t *tile, bool rows_u8) {
    int64_t kp = q8_ig_kpad(a->K);
    for (int v = 0; v < np; v++) {
        uint32_t acc[4][Q8_IG_LANES] = {{0}};
        const uint8_t *L = a->lanes + (size_t)(p0 + v) * (size_t)kp * Q8_IG_LANES;
        for (int64_t k4 = 0; k4 < kp / 4; k4++, L += 64)
            for (int r = 0; r < mr; r++) {
                const uint8_t *R = a->rows + (size_t)(i0 + r) * (size_t)kp + 4 * k4;
                for (int l = 0; l < Q8_IG_LANES; l++) {
                    int32_t s = 0;
                    for (int kk = 0; kk < 4; kk++)
                        s += rows_u8 ? (int32_t)R[kk] * (int8_t)L[l * 4 + kk]
                                     : (int32_t)(int8_t)R[kk] * L[l * 4 + kk];
                    acc[r][l] += (uint32_t)s;
                }
            }
        for (int r = 0; r < mr; r++)
            for (int l = 0; l < Q8_IG_LANES; l++)
                tile[r * 64 + v * Q8_IG_LANES + l] = (int32_t)acc[r][l];
    }
}

void q8_ig_tile_c(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np, int32_t *tile) {
    if (a->rows_u8) tile_c(a, i0, mr, p0, np, tile, true);
    else tile_c(a, i0, mr, p0, np, tile, false);
}

/* ---- driver ------------------------------------------------------------- */

#define MAX_MR Q8_IG_MAX_MR

typedef struct ig_ctx {
    const q8_igemm_args *a;
    q8_ig_kernel k;
    int64_t n_ib, n_jb, n_panels;
    size_t esize;
    bool imp; /* the lanes read in place (lane_off) by this kernel: no blocks packed */
    /* items walk the lanes blocks for each row block (R made per row block
     * by rows_unpack and no lanes made per block), not the other way */
    bool rows_major;
    /* rows_unpack with lanes made per block: each thread makes all rows */
    bool rows_all;
    size_t rows_bytes;  /* one thread's rows_scratch */
} ig_ctx;

/* Row i's columns [j0, j0 + nj) of a grid of rows of vrow (q8_igemm_args):
 * each grid row's first vcols columns to their output, one epilogue call
 * per grid row. */
static void vrow_epi(const ig_ctx *c, int64_t i, const int32_t *row, int64_t j0, int64_t nj,
                     int64_t ch0) {
    const q8_igemm_args *a = c->a;
    for (int64_t j = j0; j < j0 + nj;) {
        int64_t gr = j / a->vrow, col = j % a->vrow, end = j0 + nj - j;
        int64_t n = a->vcols - col < end ? a->vcols - col : end;
        if (n > 0) {
            char *out = (char *)a->out + (i * a->ldo + gr * a->vcols + col) * (int64_t)c->esize;
            c->k.epi(a->epi, row + (j - j0), n, ch0, out);
        }
        j += a->vrow - col;
    }
}

static void ig_range(void *p, int64_t b, int64_t e, int t) {
    const ig_ctx *c = p;
    q8_igemm_args la = *c->a; /* lanes repointed at this thread's block */
    const q8_igemm_args *a = &la;
    const q8_epilogue *ep = a->epi;
    _Alignas(64) int32_t tile[MAX_MR * 64];
    bool imp = c->imp;
    bool fused = !a->init_col && !a->rows_u8 && ep->chan != Q8_CH_COL &&
                 (imp ? c->k.tile_imp_epi != NULL : c->k.tile_epi && !a->vrow);
    q8_ig_tile_fn tile_fn = imp ? c->k.tile_imp : c->k.tile;
    q8_ig_tile_epi_fn epi_fn = imp ? c->k.tile_imp_epi : c->k.tile_epi;
    /* this thread's block, behind a header saying which one it holds (kept
     * across the chunks the thread takes: a block is made once per thread) */
    uint8_t *head = a->lanes_pack && !imp ? a->lanes_scratch + (size_t)t * q8_ig_block_bytes(a->K)
                                          : NULL;
    uint8_t *block = head ? head + 64 : NULL;
    int64_t have = head ? *(const int64_t *)head : -1;
    /* and its rows, when R is made as items need it (kept while the row
     * block stays the same) */
    uint8_t *rhead = a->rows_unpack ? a->rows_scratch + (size_t)t * c->rows_bytes : NULL;
    uint8_t *rblock = rhead ? rhead + 64 : NULL;
    int64_t rhave = rhead ? *(const int64_t *)rhead : -1;
    for (int64_t it = b; it < e; it++) {
        /* Consecutive items share a lanes block, which stays in cache (or,
         * rows_major, a row block, made once for them). */
        int64_t jb = c->rows_major ? it % c->n_jb : it / c->n_ib;
        int64_t ib = c->rows_major ? it / c->n_jb : it % c->n_ib;
        int64_t i0 = ib * c->k.mr, p0 = jb * c->k.np;
        int mr = (int)(a->I - i0 < c->k.mr ? a->I - i0 : c->k.mr);
        int np = (int)(c->n_panels - p0 < c->k.np ? c->n_panels - p0 : c->k.np);
        if (block && jb != have) {
            a->lanes_pack(a->lanes_pack_ctx, p0, np, block);
            have = jb;
            *(int64_t *)head = jb;
        }
        /* the kernels read panel p at lanes + p x panel bytes: point lanes
         * so that panel p0 is the block (integer arithmetic: the address
         * before the block is never formed as a pointer into nothing) */
        if (block)
            la.lanes = (const uint8_t *)((uintptr_t)block -
                                         (uintptr_t)p0 * Q8_IG_LANES * (uintptr_t)q8_ig_kpad(a->K));
        if (rblock && c->rows_all) { /* every row, once per thread and call */
            if (rhave < 0) {
                a->rows_unpack(a->rows_unpack_ctx, 0, (int)a->I, rblock);
                rhave = 0;
                *(int64_t *)rhead = 0;
            }
            la.rows = rblock;
        } else if (rblock) {
            if (ib != rhave) {
                a->rows_unpack(a->rows_unpack_ctx, i0, mr, rblock);
                rhave = ib;
                *(int64_t *)rhead = ib;
            }
            /* as lanes: row i0 is the block's first */
            la.rows = (const uint8_t *)((uintptr_t)rblock -
                                        (uintptr_t)i0 * (uintptr_t)q8_ig_kpad(a->K));
        }
        if (fused) {
            epi_fn(a, i0, mr, p0, np);
            continue;
        }
        tile_fn(a, i0, mr, p0, np, tile);
        int64_t j0 = p0 * Q8_IG_LANES;
        int64_t nj = a->J - j0 < np * Q8_IG_LANES ? a->J - j0 : np * Q8_IG_LANES;
        for (int r = 0; r < mr; r++) {
            int32_t *row = tile + r * 64;
            uint32_t ir = a->init_row ? (uint32_t)a->init_row[i0 + r] : 0;
            if (a->init_col)
                for (int64_t j = 0; j < nj; j++)
                    row[j] = (int32_t)((uint32_t)row[j] + ir + (uint32_t)a->init_col[j0 + j]);
            else if (ir)
                for (int64_t j = 0; j < nj; j++) row[j] = (int32_t)((uint32_t)row[j] + ir);
            int64_t ch0 = q8_epi_ch0(ep, i0 + r, j0);
            if (ep->chan != Q8_CH_ONE) ch0 += a->chan_offset;
            if (a->vrow) {
                vrow_epi(c, i0 + r, row, j0, nj, ch0);
                continue;
            }
            char *out = (char *)a->out + ((i0 + r) * a->ldo + j0) * (int64_t)c->esize;
            c->k.epi(ep, row, nj, ch0, out);
        }
    }
}

bool q8_igemm_lanes_in_place(q8_igemm_path path) { return kernel_for(path).tile_imp != NULL; }

void q8_igemm(const q8_igemm_args *a, q8_pool *pool, q8_igemm_path path) {
    if (a->I <= 0 || a->J <= 0) return;
    ig_ctx c = {.a = a, .k = kernel_for(path), .n_panels = q8_ig_panels(a->J)};
    c.imp = a->lane_off && c.k.tile_imp; /* the implicit conv, where the kernel reads so */
    Q8_ASSERT(c.k.mr <= MAX_MR && c.k.np <= 4);
    c.n_ib = (a->I + c.k.mr - 1) / c.k.mr;
    int64_t n_jb = (c.n_panels + c.k.np - 1) / c.k.np;
    c.n_jb = n_jb;
    c.rows_major = a->rows_unpack && !(a->lanes_pack && !c.imp);
    c.rows_all = a->rows_unpack && !c.rows_major;
    c.rows_bytes = q8_ig_rows_block_bytes(a->I, a->K, c.rows_all);
    c.esize = a->epi->kind == Q8_EPI_I8 ? 1 : 4;
    int64_t work = (int64_t)c.k.mr * c.k.np * Q8_IG_LANES * (q8_ig_kpad(a->K) + 16);
    for (int t = 0; a->lanes_pack && !c.imp && t < q8_pool_size(pool); t++) /* no block yet */
        *(int64_t *)(a->lanes_scratch + (size_t)t * q8_ig_block_bytes(a->K)) = -1;
    for (int t = 0; a->rows_unpack && t < q8_pool_size(pool); t++) /* no rows yet */
        *(int64_t *)(a->rows_scratch + (size_t)t * c.rows_bytes) = -1;
    q8_parallel_for(pool, c.n_ib * n_jb, 1 + (1 << 18) / work, ig_range, &c);
}
