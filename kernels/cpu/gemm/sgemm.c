/* q8_sgemm driver: kernel choice, K blocking, packing, the split of the
 * output over threads, GEMV paths and the epilogue (bias, activation).
 *
 * Loop nest of one work item (a block of rows x a block of columns of C):
 *   for each K block (size <= KC_MAX, fixed by K alone):
 *     pack op(B)[kblock, cols] into NR-wide panels (or use pre-packed ones)
 *     for each MC rows: pack op(A)[rows, kblock] into MR-high panels
 *       for each NR panel, for each MR panel: micro-kernel on the C tile
 * Partial tiles run the same micro-kernel on a local tile, so every element
 * of C sees the same arithmetic wherever the item boundaries fall. */
#include "sgemm.h"

#include <string.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "clones.h"
#include "common.h"
#include "cpu_features.h"
#include "sgemm_kernels.h"

#ifndef KC_MAX
#define KC_MAX 256
#endif
#define MC_MAX 144
#define NC_MAX 1024
/* Below this many flops a GEMM runs on one thread: waking workers costs
 * more than it saves. */
#define PAR_MIN_FLOPS (1 << 18)
#define PACKED_MAGIC 0x71387061u /* "q8pa" */

/* ---- portable kernel (also the aarch64 path: NEON has 32 registers) ---- */

#if defined(__aarch64__)
#define P_MR 8
#define P_NR 8
#else
#define P_MR 4
#define P_NR 8
#endif

/* pb: a packed panel (offk NULL) or the base of offk's rows. */
static inline void ukr_portable_body(int64_t kc, const float *pa, const float *pb,
                                     const int64_t *offk, float *c, int64_t ldc, float alpha,
                                     float beta) {
    float acc[P_MR][P_NR] = {{0}};
    for (int64_t k = 0; k < kc; k++) {
        const float *r = offk ? pb + offk[k] : pb + k * P_NR;
        for (int i = 0; i < P_MR; i++)
            for (int j = 0; j < P_NR; j++) acc[i][j] += pa[i] * r[j];
        pa += P_MR;
    }
    for (int i = 0; i < P_MR; i++) {
        float *ci = c + i * ldc;
        if (beta == 0.0f)
            for (int j = 0; j < P_NR; j++) ci[j] = alpha * acc[i][j];
        else
            for (int j = 0; j < P_NR; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
    }
}

static void ukr_portable(int64_t kc, const float *pa, const float *pb, float *c, int64_t ldc,
                         float alpha, float beta) {
    ukr_portable_body(kc, pa, pb, NULL, c, ldc, alpha, beta);
}

static void ukr_rows_portable(int64_t kc, const float *pa, const float *b, const int64_t *offk,
                              float *c, int64_t ldc, float alpha, float beta) {
    ukr_portable_body(kc, pa, b, offk, c, ldc, alpha, beta);
}

static float dot1_portable(int64_t k, const float *r, const float *x) {
    float s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= k; i += 8)
        for (int l = 0; l < 8; l++) s[l] += r[i + l] * x[i + l];
    float t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
    for (; i < k; i++) t += r[i] * x[i];
    return t;
}

static void dots_portable(int64_t n, int64_t k, const float *rows, int64_t ld, const float *x,
                          float *y) {
    for (int64_t j = 0; j < n; j++) y[j] = dot1_portable(k, rows + j * ld, x);
}

static void axpys_portable(int64_t n, int64_t k, const float *b, int64_t ld, const float *x,
                           float *y) {
    for (int64_t j0 = 0; j0 < n; j0 += 64) {
        int64_t w = n - j0 < 64 ? n - j0 : 64;
        float acc[64] = {0};
        for (int64_t i = 0; i < k; i++) {
            const float *p = b + i * ld + j0;
            float xi = x[i];
            for (int64_t j = 0; j < w; j++) acc[j] += xi * p[j];
        }
        memcpy(y + j0, acc, sizeof(float) * (size_t)w);
    }
}

static const q8_sgemm_kernel kernel_portable = {
    .name = "portable", .id = 1, .b_id = 1, .mr = P_MR, .nr = P_NR,
    .ukr = ukr_portable, .ukr_rows = ukr_rows_portable, .dots = dots_portable,
    .axpys = axpys_portable,
};

/* AVX-512 takes 12-row tiles where M is a multiple of 12 or large (its
 * partial tile, through a local copy, a small share): 24 accumulators
 * spread each k's broadcasts of A and loads of B over 24 FMAs instead of
 * 16. Elsewhere (M = 16, 32, 40, 64, ...) a partial tile of 4 or 8 rows in
 * every few cost more than that saved (docs/performance.md, "FP32 GEMM
 * tiles of 12 rows"). Same arithmetic per element either way. m: the
 * GEMM's M, or 0 where only B's layout matters (the kernels share it). */
#ifdef Q8_SGEMM_X86
static bool rows12(int64_t m) { return m > 0 && (m % 12 == 0 || m >= 128); }
#endif

static const q8_sgemm_kernel *pick_kernel(unsigned flags, int64_t m) {
#ifdef Q8_SGEMM_X86
    if (!(flags & Q8_SGEMM_PORTABLE) && q8_cpu()->avx2 && q8_cpu()->fma) {
        if (!(flags & Q8_SGEMM_NO_AVX512) && q8_cpu()->avx512f)
            return !(flags & Q8_SGEMM_MR8) && rows12(m) ? &q8_sgemm_kernel_avx512_12
                                                        : &q8_sgemm_kernel_avx512;
        return &q8_sgemm_kernel_avx2;
    }
#endif
#ifdef Q8_SGEMM_NEON
    if (!(flags & Q8_SGEMM_PORTABLE)) return &q8_sgemm_kernel_neon;
#endif
    (void)m;
    return &kernel_portable;
}

const char *q8_sgemm_kernel_name(unsigned flags) { return pick_kernel(flags, 0)->name; }

bool q8_sgemm_reads_rows_in_place(unsigned flags) {
    return pick_kernel(flags, 0)->ukr_rows != NULL;
}

/* ---- K blocking: ceil(K / KC_MAX) blocks of (almost) equal size ---- */

typedef struct kblocks {
    int64_t n, base, rem;
} kblocks;

static kblocks kblocks_of(int64_t k) {
    kblocks b;
    b.n = k > 0 ? (k + KC_MAX - 1) / KC_MAX : 1;
    b.base = k / b.n;
    b.rem = k % b.n;
    return b;
}
static inline int64_t kb_start(const kblocks *b, int64_t i) {
    return i * b->base + (i < b->rem ? i : b->rem);
}
static inline int64_t kb_size(const kblocks *b, int64_t i) { return b->base + (i < b->rem); }
static inline int64_t kb_max(const kblocks *b) { return b->base + (b->rem > 0); }

int64_t q8_sgemm_kblock_count(int64_t k) { return kblocks_of(k).n; }

void q8_sgemm_kblock(int64_t k, int64_t i, int64_t *k0, int64_t *kc) {
    kblocks b = kblocks_of(k);
    *k0 = kb_start(&b, i);
    *kc = kb_size(&b, i);
}

static inline int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- packing ---- */

/* Transposing copy: rows i < nrows of src (stride ld, kc floats each) into
 * dst[k*r + i]; rows nrows..r-1 are zero. 4x4 SSE transposes where they fit
 * (the scalar loop costs several cycles per element). */
static void gather_rows(const float *src, int64_t ld, int64_t nrows, int64_t kc, int r,
                        float *dst) {
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= nrows; i += 4) {
        const float *s0 = src + i * ld, *s1 = s0 + ld, *s2 = s1 + ld, *s3 = s2 + ld;
        int64_t k = 0;
        for (; k + 4 <= kc; k += 4) {
            __m128 r0 = _mm_loadu_ps(s0 + k), r1 = _mm_loadu_ps(s1 + k);
            __m128 r2 = _mm_loadu_ps(s2 + k), r3 = _mm_loadu_ps(s3 + k);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            float *d = dst + k * r + i;
            _mm_storeu_ps(d, r0);
            _mm_storeu_ps(d + r, r1);
            _mm_storeu_ps(d + 2 * r, r2);
            _mm_storeu_ps(d + 3 * r, r3);
        }
        for (; k < kc; k++) {
            float *d = dst + k * r + i;
            d[0] = s0[k];
            d[1] = s1[k];
            d[2] = s2[k];
            d[3] = s3[k];
        }
    }
#endif
    for (; i < nrows; i++) {
        const float *s = src + i * ld;
        for (int64_t k = 0; k < kc; k++) dst[k * r + i] = s[k];
    }
    for (; i < r; i++)
        for (int64_t k = 0; k < kc; k++) dst[k * r + i] = 0.0f;
}

/* op(A)[m0.., k0..] (mc x kc) into MR panels at dst + p*mr*kc. */
Q8_CLONES static void pack_a_block(const float *a, int64_t lda, bool trans, int64_t m0, int64_t mc,
                         int64_t k0, int64_t kc, int mr, float *dst) {
    for (int64_t p = 0; p < mc; p += mr, dst += (int64_t)mr * kc) {
        int64_t rows = min64(mr, mc - p);
        if (trans) {
            /* A is K x M: row k of the panel is contiguous. */
            for (int64_t k = 0; k < kc; k++) {
                const float *s = a + (k0 + k) * lda + m0 + p;
                float *d = dst + k * mr;
                int64_t i = 0;
                for (; i < rows; i++) d[i] = s[i];
                for (; i < mr; i++) d[i] = 0.0f;
            }
        } else {
            gather_rows(a + (m0 + p) * lda + k0, lda, rows, kc, mr, dst);
        }
    }
}

/* op(B)[k0.., n0..] (kc x nc) into NR panels at dst + p*nr*kc. */
Q8_CLONES static void pack_b_block(const float *b, int64_t ldb, bool trans, int64_t k0, int64_t kc,
                         int64_t n0, int64_t nc, int nr, float *dst) {
    for (int64_t p = 0; p < nc; p += nr, dst += (int64_t)nr * kc) {
        int64_t cols = min64(nr, nc - p);
        if (!trans) {
            for (int64_t k = 0; k < kc; k++) {
                const float *s = b + (k0 + k) * ldb + n0 + p;
                float *d = dst + k * nr;
                if (cols == nr) {
                    memcpy(d, s, sizeof(float) * (size_t)nr);
                } else {
                    int64_t j = 0;
                    for (; j < cols; j++) d[j] = s[j];
                    for (; j < nr; j++) d[j] = 0.0f;
                }
            }
        } else {
            gather_rows(b + (n0 + p) * ldb + k0, ldb, cols, kc, nr, dst);
        }
    }
}

/* ---- pre-packed operands ----
 * Header (64 bytes) then `count` matrices; matrix i, K block starting at
 * k0 (size kc), panel p: data + i*mat + k0*rows_padded + p*r*kc. */

typedef struct packed_hdr {
    uint32_t magic;
    int32_t kernel_id;
    int32_t r;              /* mr (A) or nr (B) */
    int32_t is_b;
    int64_t rows, k, count, mat;
} packed_hdr;

#define PACKED_HDR_BYTES 64
_Static_assert(sizeof(packed_hdr) <= PACKED_HDR_BYTES, "packed header");

static size_t packed_bytes(int64_t rows, int64_t k, int64_t count, int r) {
    size_t mat = (size_t)round_up(rows, r) * (size_t)k, total;
    if (!q8_mul_size(mat, (size_t)count, &total) || !q8_mul_size(total, sizeof(float), &total) ||
        !q8_add_size(total, PACKED_HDR_BYTES, &total))
        return 0;
    return total;
}

/* GEMV shapes never use packed operands. */
static bool gemv_shape(int64_t m, int64_t n) { return m == 1 || n == 1; }

size_t q8_sgemm_packed_a_bytes(int64_t m, int64_t k, int64_t count, unsigned flags) {
    if (gemv_shape(m, 2) || m <= 0 || k <= 0 || count <= 0) return 0;
    return packed_bytes(m, k, count, pick_kernel(flags, m)->mr);
}

size_t q8_sgemm_packed_b_bytes(int64_t k, int64_t n, int64_t count, unsigned flags) {
    if (gemv_shape(2, n) || n <= 0 || k <= 0 || count <= 0) return 0;
    return packed_bytes(n, k, count, pick_kernel(flags, 0)->nr);
}

static void pack_all(void *dst, bool is_b, bool trans, int64_t rows, int64_t k, const float *src,
                     int64_t ld, int64_t count, int64_t stride, unsigned flags) {
    const q8_sgemm_kernel *kr = pick_kernel(flags, is_b ? 0 : rows);
    int r = is_b ? kr->nr : kr->mr;
    packed_hdr *h = dst;
    memset(h, 0, PACKED_HDR_BYTES);
    h->magic = PACKED_MAGIC;
    h->kernel_id = is_b ? kr->b_id : kr->id;
    h->r = r;
    h->is_b = is_b;
    h->rows = rows;
    h->k = k;
    h->count = count;
    h->mat = round_up(rows, r) * k;
    float *data = (float *)((char *)dst + PACKED_HDR_BYTES);
    kblocks kb = kblocks_of(k);
    int64_t rp = round_up(rows, r);
    for (int64_t i = 0; i < count; i++)
        for (int64_t b = 0; b < kb.n; b++) {
            int64_t k0 = kb_start(&kb, b), kc = kb_size(&kb, b);
            float *d = data + i * h->mat + k0 * rp;
            if (is_b) pack_b_block(src + i * stride, ld, trans, k0, kc, 0, rows, r, d);
            else pack_a_block(src + i * stride, ld, trans, 0, rows, k0, kc, r, d);
        }
}

void q8_sgemm_pack_a(void *dst, bool trans, int64_t m, int64_t k, const float *src, int64_t ld,
                     int64_t count, int64_t stride, unsigned flags) {
    pack_all(dst, false, trans, m, k, src, ld, count, stride, flags);
}

void q8_sgemm_pack_b(void *dst, bool trans, int64_t k, int64_t n, const float *src, int64_t ld,
                     int64_t count, int64_t stride, unsigned flags) {
    pack_all(dst, true, trans, n, k, src, ld, count, stride, flags);
}

/* The packed operand if it fits this call, else NULL. */
static const packed_hdr *usable_packed(const void *p, bool is_b, int64_t rows, int64_t k,
                                       const q8_sgemm_kernel *kr) {
    const packed_hdr *h = p;
    if (!h || h->magic != PACKED_MAGIC || h->kernel_id != (is_b ? kr->b_id : kr->id) ||
        h->is_b != is_b || h->rows != rows || h->k != k || h->count < 1)
        return NULL;
    return h;
}
static inline const float *packed_data(const packed_hdr *h) {
    return (const float *)((const char *)h + PACKED_HDR_BYTES);
}

/* ---- the blocked path ---- */

typedef struct plan {
    const q8_sgemm_op *op;
    const q8_sgemm_kernel *kr;
    const packed_hdr *pa, *pb;
    kblocks kb;
    int64_t mc;                     /* rows per A block, multiple of mr */
    int64_t mchunk, nchunk;         /* item size, multiples of mr / nr */
    int64_t mitems, nitems;
    char *scratch;
    size_t per_thread;              /* bytes */
    size_t bufa_floats;             /* offset of the B buffer */
} plan;

/* One B panel: packed (pb), or read in place (rows + offk[k], ukr_rows). */
typedef struct bpanel {
    const float *pb, *rows;
    const int64_t *offk;
} bpanel;

static inline void run_ukr(const q8_sgemm_kernel *kr, int64_t kc, const float *pa,
                           const bpanel *b, float *c, int64_t ldc, float alpha, float beta) {
    if (b->rows) kr->ukr_rows(kc, pa, b->rows, b->offk, c, ldc, alpha, beta);
    else kr->ukr(kc, pa, b->pb, c, ldc, alpha, beta);
}

/* epi: apply it in the kernel when that can (a whole tile); returns
 * whether it did. */
static bool tile(const plan *pl, int64_t kc, const float *pa, const bpanel *b, float *c,
                 int64_t ldc, int64_t mm, int64_t nn, float beta, const q8_sgemm_epi *epi) {
    const q8_sgemm_kernel *kr = pl->kr;
    float alpha = pl->op->alpha;
    if (mm == kr->mr && nn == kr->nr) {
        if (epi && kr->ukr_epi) {
            kr->ukr_epi(kc, pa, b->rows ? b->rows : b->pb, b->rows ? b->offk : NULL, c, ldc,
                        alpha, beta, epi);
            return true;
        }
        run_ukr(kr, kc, pa, b, c, ldc, alpha, beta);
        return false;
    }
    _Alignas(64) float t[Q8_SGEMM_MAX_MR * Q8_SGEMM_MAX_NR];
    int nr = kr->nr;
    if (beta != 0.0f) {
        memset(t, 0, sizeof(float) * (size_t)(kr->mr * nr));
        for (int64_t i = 0; i < mm; i++)
            memcpy(t + i * nr, c + i * ldc, sizeof(float) * (size_t)nn);
    }
    if (nn <= Q8_SGEMM_NARROW && kr->ukr_narrow && !b->rows)
        kr->ukr_narrow(kc, (int)nn, pa, b->pb, t, nr, alpha, beta);
    else if (nn <= nr / 2 && kr->ukr_half && !b->rows)
        kr->ukr_half(kc, pa, b->pb, t, nr, alpha, beta);
    else run_ukr(kr, kc, pa, b, t, nr, alpha, beta);
    for (int64_t i = 0; i < mm; i++) memcpy(c + i * ldc, t + i * nr, sizeof(float) * (size_t)nn);
    return false;
}

/* The micro-kernels over one B panel (columns jr.. of the item) and rows
 * [ic, ic+mc) of A (packed at pa), with the epilogue on the last K block. */
static void panel_tiles(const plan *pl, int64_t kc, const float *pa, const bpanel *b, float *C,
                        const float *bias, int64_t ic, int64_t mc, int64_t col, int64_t nn,
                        float beta, bool epi) {
    const q8_sgemm_op *op = pl->op;
    int mr = pl->kr->mr;
    int64_t ldc = op->ldc;
    /* Bias and ReLU / Clip / HardSwish (or nothing) fit in the kernel's
     * stores: no second pass over the tile. */
    q8_act_kind ak = op->act.kind;
    bool hswish = ak == Q8_ACT_HARD_SWISH && pl->kr->epi_hswish;
    bool fusable = epi &&
                   (ak == Q8_ACT_NONE || ak == Q8_ACT_RELU || ak == Q8_ACT_CLIP || hswish) &&
                   !(op->flags & Q8_SGEMM_NO_FUSED_EPI);
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int64_t mm = min64(mr, mc - ir);
        float *ct = C + (ic + ir) * ldc + col;
        q8_sgemm_epi fe = {.bias_rows = bias && !op->bias_per_col ? bias + ic + ir : NULL,
                           .bias_cols = bias && op->bias_per_col ? bias + col : NULL,
                           .relu = ak == Q8_ACT_RELU, .clip = ak == Q8_ACT_CLIP,
                           .hswish = hswish, .lo = op->act.p0, .hi = op->act.p1};
        if (tile(pl, kc, pa + ir * kc, b, ct, ldc, mm, nn, beta, fusable ? &fe : NULL)) continue;
        /* One call per tile: per row it cost more than the work (32 floats). */
        if (epi)
            q8_act_apply_block(&op->act, ct, mm, nn, ldc,
                               bias && !op->bias_per_col ? bias + ic + ir : NULL,
                               bias && op->bias_per_col ? bias + col : NULL);
    }
}

/* Small K with B read in place: each MR row tile sweeps all the item's
 * panels before the next. Panels first made every panel store to all M
 * rows (M write streams of 128 bytes: a 16 -> 96 1x1 conv on 160x160
 * waited on its stores); here a tile writes mr rows left to right while
 * the item's B (kc x nc floats, <= 256 KB) stays in cache. Cold-cache
 * q8_sgemm_run, 1 thread: M96 N25600 K16 1.56 -> 0.88 ms, M32 N25600 K16
 * 0.61 -> 0.32, M144 N6400 K24 0.39 -> 0.35; K = 64 even, K = 144 6%
 * slower. Only where C (M x N floats, >= 2 MB) outgrows L2: on
 * MobileNetV3's smaller maps panels first stayed 1-2% faster. Same
 * arithmetic per element. */
#define ROWS_FIRST_MAX_KC 64
#define ROWS_FIRST_MIN_C (1 << 19)

static void tiles_rows_first(const plan *pl, int64_t kc, const float *pa, const float *rows,
                             const int64_t *offk, int64_t g, int64_t k0, float *C,
                             const float *bias, int64_t m0, int64_t m1, int64_t n0, int64_t nc,
                             float beta, bool epi, float *bufb) {
    const q8_sgemm_op *op = pl->op;
    int mr = pl->kr->mr, nr = pl->kr->nr;
    int64_t full = nc / nr * nr;
    if (full < nc) /* the partial last panel, packed once */
        op->b_pack(op->b_pack_ctx, g, k0, kc, n0 + full, nc - full, nr, bufb);
    for (int64_t ir = 0; ir < m1 - m0; ir += mr) {
        int64_t mm = min64(mr, m1 - m0 - ir);
        for (int64_t jr = 0; jr < nc; jr += nr) {
            bpanel bp = {.pb = bufb};
            if (jr < full) {
                bp.rows = rows + jr;
                bp.offk = offk;
            }
            panel_tiles(pl, kc, pa + ir * kc, &bp, C, bias, m0 + ir, mm, n0 + jr,
                        min64(nr, nc - jr), beta, epi);
        }
    }
}

static void gemm_block(const plan *pl, int64_t g, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
                       float *bufa, float *bufb) {
    const q8_sgemm_op *op = pl->op;
    const q8_sgemm_kernel *kr = pl->kr;
    int mr = kr->mr, nr = kr->nr;
    const int64_t *o = op->batch > 1 ? op->offs + 4 * g : NULL;
    const float *A = op->a ? op->a + (o ? o[0] : 0) : NULL;
    const float *B = op->b ? op->b + (o ? o[1] : 0) : NULL;
    float *C = op->c + (o ? o[2] : 0);
    const float *bias = op->bias ? op->bias + (o ? o[3] : 0) : NULL;
    bool epi = bias || op->act.kind != Q8_ACT_NONE;
    int64_t nc = n1 - n0;
    int64_t mp = pl->pa ? round_up(op->m, mr) : 0, np = pl->pb ? round_up(op->n, nr) : 0;
    /* When all rows of the item use one A block (pre-packed, or one MC
     * block), B is packed one panel at a time right before its tiles: the
     * panel stays in L1 instead of a whole B block going through L2. */
    bool panelwise = !pl->pb && (pl->pa || m1 - m0 <= pl->mc);
    /* B rows readable in place (panelwise only: elsewhere a packed B block
     * is reused by several MC blocks). */
    bool in_place = op->b_rows && op->b_pack && kr->ukr_rows && !(op->flags & Q8_SGEMM_NO_ROWS);
    const float *rows = in_place ? op->b_rows + g * op->b_rows_stride : NULL;
    for (int64_t b = 0; b < pl->kb.n; b++) {
        int64_t k0 = kb_start(&pl->kb, b), kc = kb_size(&pl->kb, b);
        float beta = b == 0 ? op->beta : 1.0f;
        bool last_epi = epi && b == pl->kb.n - 1;
        if (panelwise) {
            const float *pa;
            if (pl->pa) {
                pa = packed_data(pl->pa) + (g % pl->pa->count) * pl->pa->mat + k0 * mp + m0 * kc;
            } else {
                pack_a_block(A, op->lda, op->trans_a, m0, m1 - m0, k0, kc, mr, bufa);
                pa = bufa;
            }
            if (rows && kc <= ROWS_FIRST_MAX_KC && op->m * op->n >= ROWS_FIRST_MIN_C) {
                tiles_rows_first(pl, kc, pa, rows + n0, op->b_rowoff + k0, g, k0, C, bias, m0,
                                 m1, n0, nc, beta, last_epi, bufb);
                continue;
            }
            for (int64_t jr = 0; jr < nc; jr += nr) {
                int64_t nn = min64(nr, nc - jr);
                bpanel bp = {.pb = bufb};
                if (rows && nn == nr) {
                    /* Whole panel in place: no copy through bufb. */
                    bp.rows = rows + n0 + jr;
                    bp.offk = op->b_rowoff + k0;
                } else if (op->b_pack) {
                    op->b_pack(op->b_pack_ctx, g, k0, kc, n0 + jr, nn, nr, bufb);
                } else {
                    pack_b_block(B, op->ldb, op->trans_b, k0, kc, n0 + jr, nn, nr, bufb);
                }
                panel_tiles(pl, kc, pa, &bp, C, bias, m0, m1 - m0, n0 + jr, nn, beta, last_epi);
            }
            continue;
        }
        const float *pb;
        if (pl->pb)
            pb = packed_data(pl->pb) + (g % pl->pb->count) * pl->pb->mat + k0 * np + n0 * kc;
        else if (op->b_pack) {
            op->b_pack(op->b_pack_ctx, g, k0, kc, n0, nc, nr, bufb);
            pb = bufb;
        } else {
            pack_b_block(B, op->ldb, op->trans_b, k0, kc, n0, nc, nr, bufb);
            pb = bufb;
        }
        for (int64_t ic = m0; ic < m1; ic += pl->mc) {
            int64_t mc = min64(pl->mc, m1 - ic);
            const float *pa;
            if (pl->pa) {
                pa = packed_data(pl->pa) + (g % pl->pa->count) * pl->pa->mat + k0 * mp + ic * kc;
            } else {
                pack_a_block(A, op->lda, op->trans_a, ic, mc, k0, kc, mr, bufa);
                pa = bufa;
            }
            for (int64_t jr = 0; jr < nc; jr += nr) {
                bpanel bp = {.pb = pb + jr * kc};
                panel_tiles(pl, kc, pa, &bp, C, bias, ic, mc, n0 + jr, min64(nr, nc - jr), beta,
                            last_epi);
            }
        }
    }
}

static void gemm_items(void *arg, int64_t begin, int64_t end, int thread) {
    const plan *pl = arg;
    float *bufa = (float *)(pl->scratch + (size_t)thread * pl->per_thread);
    float *bufb = bufa + pl->bufa_floats;
    int64_t per_batch = pl->mitems * pl->nitems;
    for (int64_t it = begin; it < end; it++) {
        int64_t g = it / per_batch, r = it % per_batch;
        int64_t mi = r / pl->nitems, ni = r % pl->nitems;
        int64_t m0 = mi * pl->mchunk, n0 = ni * pl->nchunk;
        int64_t m1 = min64(pl->op->m, m0 + pl->mchunk), n1 = min64(pl->op->n, n0 + pl->nchunk);
        gemm_block(pl, g, m0, m1, n0, n1, bufa, bufb);
        if (pl->op->block_done) pl->op->block_done(pl->op->block_done_ctx, g, m0, m1, n0, n1);
    }
}

/* Buffer sizes (floats) of the blocked path for one thread. */
static void blocked_bufs(const q8_sgemm_op *op, const q8_sgemm_kernel *kr, bool a_packed,
                         bool b_packed, size_t *fa, size_t *fb) {
    kblocks kb = kblocks_of(op->k);
    int64_t kc = kb_max(&kb);
    int64_t mc = min64(round_up(op->m, kr->mr), MC_MAX / kr->mr * kr->mr);
    int64_t nc = min64(round_up(op->n, kr->nr), NC_MAX / kr->nr * kr->nr);
    /* Rounded to 16 floats so the B buffer stays 64-byte aligned. */
    *fa = a_packed ? 0 : (size_t)round_up(mc * kc, 16);
    *fb = b_packed ? 0 : (size_t)round_up(nc * kc, 16);
}

/* ---- GEMV: y[l] for l < len, from `rows`/`cols` forms ---- */

typedef struct gemv {
    const q8_sgemm_op *op;
    const q8_sgemm_kernel *kr;
    int64_t len, chunk, nchunks;
    char *scratch;
    size_t per_thread;
} gemv;

static void gemv_items(void *arg, int64_t begin, int64_t end, int thread) {
    const gemv *gv = arg;
    const q8_sgemm_op *op = gv->op;
    int64_t K = op->k;
    float *xbuf = (float *)(gv->scratch + (size_t)thread * gv->per_thread);
    float *acc = xbuf + round_up(K, 16);
    for (int64_t it = begin; it < end; it++) {
        int64_t g = it / gv->nchunks, l0 = (it % gv->nchunks) * gv->chunk;
        int64_t l1 = min64(gv->len, l0 + gv->chunk), w = l1 - l0;
        const int64_t *o = op->batch > 1 ? op->offs + 4 * g : NULL;
        const float *A = op->a + (o ? o[0] : 0), *B = op->b + (o ? o[1] : 0);
        float *C = op->c + (o ? o[2] : 0);
        const float *bias = op->bias ? op->bias + (o ? o[3] : 0) : NULL;
        /* x: the vector side; mat / ld / rows_form: the matrix side. */
        const float *x, *mat;
        int64_t xs, ld, ys;
        bool rows_form;
        bool bias_along = false; /* bias indexed by l (else bias[0]) */
        if (op->m == 1) {
            x = A;
            xs = op->trans_a ? op->lda : 1;
            mat = B;
            ld = op->ldb;
            rows_form = op->trans_b;
            ys = 1;
            bias_along = op->bias_per_col;
        } else {
            x = B;
            xs = op->trans_b ? 1 : op->ldb;
            mat = A;
            ld = op->lda;
            rows_form = !op->trans_a;
            ys = op->ldc;
            bias_along = !op->bias_per_col;
        }
        if (xs != 1 && K > 0) {
            for (int64_t k = 0; k < K; k++) xbuf[k] = x[k * xs];
            x = xbuf;
        }
        if (rows_form) gv->kr->dots(w, K, mat + l0 * ld, ld, x, acc);
        else gv->kr->axpys(w, K, mat + l0, ld, x, acc);
        float alpha = op->alpha, beta = op->beta;
        for (int64_t j = 0; j < w; j++) {
            float *y = C + (l0 + j) * ys;
            float v = alpha * acc[j];
            if (beta != 0.0f) v += beta * *y;
            if (bias) v += bias_along ? bias[l0 + j] : bias[0];
            acc[j] = v;
        }
        q8_act_apply(&op->act, acc, w);
        for (int64_t j = 0; j < w; j++) C[(l0 + j) * ys] = acc[j];
        if (op->block_done) {
            if (op->m == 1) op->block_done(op->block_done_ctx, g, 0, 1, l0, l1);
            else op->block_done(op->block_done_ctx, g, l0, l1, 0, 1);
        }
    }
}

#define GEMV_CHUNK 256

static size_t gemv_per_thread(const q8_sgemm_op *op) {
    return sizeof(float) * (size_t)(round_up(op->k, 16) + GEMV_CHUNK);
}

/* ---- entry points ---- */

static bool use_gemv(const q8_sgemm_op *op) { return !op->b_pack && gemv_shape(op->m, op->n); }

size_t q8_sgemm_scratch_bytes(const q8_sgemm_op *op, int n_threads) {
    if (n_threads < 1) n_threads = 1;
    if (op->m <= 0 || op->n <= 0) return 0;
    size_t per;
    if (use_gemv(op)) {
        per = gemv_per_thread(op);
    } else {
        const q8_sgemm_kernel *kr = pick_kernel(op->flags, op->m);
        size_t fa, fb;
        blocked_bufs(op, kr, usable_packed(op->a_packed, false, op->m, op->k, kr) != NULL,
                     usable_packed(op->b_packed, true, op->n, op->k, kr) != NULL, &fa, &fb);
        per = sizeof(float) * (fa + fb);
    }
    return q8_align_up(per, Q8_ALIGN) * (size_t)n_threads;
}

void q8_sgemm_run(const q8_sgemm_op *op, q8_pool *pool, void *scratch) {
    int64_t batch = op->batch > 1 ? op->batch : 1;
    if (op->m <= 0 || op->n <= 0) return;
    int nt = q8_pool_size(pool);
    double flops = 2.0 * (double)op->m * (double)op->n * (double)(op->k ? op->k : 1) *
                   (double)batch;
    int64_t target = nt > 1 && flops >= PAR_MIN_FLOPS ? (int64_t)nt * 4 : 1;
    const q8_sgemm_kernel *kr = pick_kernel(op->flags, op->m);
    if (use_gemv(op)) {
        gemv gv = {.op = op, .kr = kr, .scratch = scratch};
        gv.len = op->m == 1 ? op->n : op->m;
        gv.per_thread = q8_align_up(gemv_per_thread(op), Q8_ALIGN);
        /* Chunks are multiples of 64 so vector blocks line up the same way
         * whatever the thread count. */
        int64_t want = (gv.len + target - 1) / target;
        gv.chunk = min64(GEMV_CHUNK, round_up(want > 64 ? want : 64, 64));
        gv.nchunks = (gv.len + gv.chunk - 1) / gv.chunk;
        q8_parallel_for(target > 1 ? pool : NULL, batch * gv.nchunks, 1, gemv_items, &gv);
        return;
    }
    plan pl = {.op = op, .kr = kr, .scratch = scratch};
    pl.pa = usable_packed(op->a_packed, false, op->m, op->k, kr);
    pl.pb = usable_packed(op->b_packed, true, op->n, op->k, kr);
    Q8_ASSERT(pl.pa || op->a);
    Q8_ASSERT(pl.pb || op->b || op->b_pack);
    pl.kb = kblocks_of(op->k);
    size_t fa, fb;
    blocked_bufs(op, kr, pl.pa != NULL, pl.pb != NULL, &fa, &fb);
    pl.bufa_floats = fa;
    pl.per_thread = q8_align_up(sizeof(float) * (fa + fb), Q8_ALIGN);
    pl.mc = MC_MAX / kr->mr * kr->mr;
    /* Items: all of M by default, N in blocks of up to NC_MAX; split further
     * until every thread has a few items. Each extra item along N packs its
     * A block again, each extra one along M its B panels: split the side
     * whose operand is pre-packed (free), else the one re-packing less. */
    int64_t mt = (op->m + kr->mr - 1) / kr->mr, ntl = (op->n + kr->nr - 1) / kr->nr;
    int64_t mct = mt, nct = min64(ntl, NC_MAX / kr->nr);
    bool split_n = pl.pa && !pl.pb ? true : pl.pb && !pl.pa ? false : op->m <= op->n;
    for (;;) {
        int64_t items = batch * ((mt + mct - 1) / mct) * ((ntl + nct - 1) / nct);
        if (items >= target) break;
        if (nct > 1 && (split_n || mct == 1)) nct = (nct + 1) / 2;
        else if (mct > 1) mct = (mct + 1) / 2;
        else break;
    }
    pl.mchunk = mct * kr->mr;
    pl.nchunk = nct * kr->nr;
    pl.mitems = (op->m + pl.mchunk - 1) / pl.mchunk;
    pl.nitems = (op->n + pl.nchunk - 1) / pl.nchunk;
    q8_parallel_for(target > 1 ? pool : NULL, batch * pl.mitems * pl.nitems, 1, gemm_items, &pl);
}

static q8_sgemm_op plain_op(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                            const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                            float *c, int64_t ldc) {
    return (q8_sgemm_op){.m = m, .n = n, .k = k, .trans_a = ta, .trans_b = tb, .alpha = alpha,
                         .beta = beta, .a = a, .lda = lda, .b = b, .ldb = ldb, .c = c,
                         .ldc = ldc};
}

size_t q8_sgemm_scratch(int64_t m, int64_t n, int64_t k, int n_threads) {
    q8_sgemm_op op = plain_op(false, false, m, n, k, 1, NULL, 0, NULL, 0, 0, NULL, 0);
    return q8_sgemm_scratch_bytes(&op, n_threads);
}

void q8_sgemm(q8_pool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
              float *c, int64_t ldc, void *scratch) {
    q8_sgemm_op op = plain_op(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    q8_sgemm_run(&op, pool, scratch);
}
