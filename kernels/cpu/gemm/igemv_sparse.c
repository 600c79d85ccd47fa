/* INT8 GEMV on compressed weights: the form, the C kernel, the run
 * (igemv_sparse.h). */
#include "igemv_sparse.h"

#include <string.h>

#include "common.h"
#include "cpu_features.h"
#include "qepi.h"

/* Channels of one work item: an epilogue row segment per activation row. */
#define ISP_BLOCK 32

static inline const uint64_t *isp_masks(const q8_isp *s, const void *blob) {
    return (const uint64_t *)((const char *)blob + s->off_mask);
}
static inline const uint64_t *isp_starts(const q8_isp *s, const void *blob) {
    return (const uint64_t *)((const char *)blob + s->off_start);
}
static inline const int8_t *isp_vals(const q8_isp *s, const void *blob) {
    return (const int8_t *)((const char *)blob + s->off_vals);
}

size_t q8_isp_nonzeros(const void *w, size_t n) {
    const uint8_t *b = w;
    size_t nnz = 0;
    for (size_t i = 0; i < n; i++) nnz += b[i] != 0;
    return nnz;
}

void q8_isp_plan(q8_isp *s, int64_t N, int64_t K, size_t nnz, size_t *off) {
    memset(s, 0, sizeof *s);
    s->N = N, s->K = K, s->KC = (K + 63) / 64;
    s->nnz = nnz;
    s->off_mask = q8_qop_reserve(off, sizeof(uint64_t) * (size_t)(N * s->KC));
    s->off_start = q8_qop_reserve(off, sizeof(uint64_t) * (size_t)(N + 1));
    /* the AVX-512 kernel's expand reads no byte past a chunk's stored ones;
     * the slack keeps a sanitizer that checks whole vectors quiet */
    s->off_vals = q8_qop_reserve(off, s->nnz + 64);
}

void q8_isp_pack(const q8_isp *s, const int8_t *w, void *blob, int32_t *rowsum) {
    char *b = blob;
    uint64_t *mask = (uint64_t *)(b + s->off_mask), *start = (uint64_t *)(b + s->off_start);
    int8_t *vals = (int8_t *)(b + s->off_vals);
    uint64_t at = 0;
    for (int64_t n = 0; n < s->N; n++) {
        const int8_t *wn = w + n * s->K;
        uint32_t sum = 0;
        start[n] = at;
        for (int64_t c = 0; c < s->KC; c++) {
            uint64_t m = 0;
            for (int64_t k = 64 * c; k < s->K && k < 64 * c + 64; k++)
                if (wn[k]) {
                    m |= (uint64_t)1 << (k - 64 * c);
                    vals[at++] = wn[k];
                    sum += (uint32_t)wn[k];
                }
            mask[n * s->KC + c] = m;
        }
        if (rowsum) rowsum[n] = (int32_t)sum;
    }
    start[s->N] = at;
    memset(vals + at, 0, 64);
}

bool q8_isp_gemv_fast(q8_igemm_path path) {
    return q8_igemm_resolve(path) == Q8_IGEMM_AVX512VNNI && q8_cpu()->avx512vbmi2 &&
           q8_cpu()->popcnt;
}

bool q8_isp_expander_supported(q8_isp_expander x) {
    const q8_cpu_features *f = q8_cpu();
    switch (x) {
    case Q8_ISP_EXPAND_C: return true;
#if defined(__x86_64__) || defined(__i386__)
    case Q8_ISP_EXPAND_SHUFFLE: return f->avx2 && f->popcnt;
    case Q8_ISP_EXPAND_AVX512: return f->avx512bw && f->avx512vbmi2 && f->popcnt;
#elif defined(__aarch64__)
    case Q8_ISP_EXPAND_SHUFFLE: return true;
#endif
    default: (void)f; return false;
    }
}

q8_isp_expander q8_isp_expander_for(q8_igemm_path path) {
#if defined(__x86_64__) || defined(__i386__)
    q8_igemm_path r = q8_igemm_resolve(path);
    if (r == Q8_IGEMM_C) return Q8_ISP_EXPAND_C;
    if (r == Q8_IGEMM_AVX512VNNI && q8_isp_expander_supported(Q8_ISP_EXPAND_AVX512))
        return Q8_ISP_EXPAND_AVX512;
    return q8_isp_expander_supported(Q8_ISP_EXPAND_SHUFFLE) ? Q8_ISP_EXPAND_SHUFFLE
                                                            : Q8_ISP_EXPAND_C;
#elif defined(__aarch64__)
    (void)path; /* NEON everywhere: even the C GEMM path keeps the form */
    return Q8_ISP_EXPAND_SHUFFLE;
#else
    (void)path;
    return Q8_ISP_EXPAND_C;
#endif
}

int64_t q8_isp_ldx(int64_t K) { return (K + 63) / 64 * 64; }

void q8_isp_pack_x(const int8_t *x, int64_t M, int64_t K, uint8_t *dst) {
    int64_t ldx = q8_isp_ldx(K);
    for (int64_t r = 0; r < M; r++) {
        uint8_t *d = dst + r * ldx;
        for (int64_t k = 0; k < K; k++) d[k] = (uint8_t)(x[r * K + k] ^ 0x80);
        memset(d + K, 0x80, (size_t)(ldx - K)); /* int8 0: the masks never pick it */
    }
}

void q8_isp_block_c(const q8_isp *s, const void *blob, const uint8_t *x, int64_t ldx,
                    int64_t M, int64_t n0, int64_t n1, int32_t *acc) {
    const uint64_t *mask = isp_masks(s, blob), *start = isp_starts(s, blob);
    const int8_t *vals = isp_vals(s, blob);
    for (int64_t n = n0; n < n1; n++)
        for (int64_t r = 0; r < M; r++) {
            const int8_t *v = vals + start[n];
            const uint8_t *xr = x + r * ldx;
            uint32_t sum = 0;
            for (int64_t c = 0; c < s->KC; c++)
                for (uint64_t m = mask[n * s->KC + c]; m; m &= m - 1)
                    sum += (uint32_t)((int32_t)xr[64 * c + __builtin_ctzll(m)] * *v++);
            acc[r * (n1 - n0) + n - n0] = (int32_t)sum;
        }
}

void q8_isp_rows(const q8_isp *s, const void *blob, int64_t r0, int64_t nr, uint8_t *dst,
                 q8_isp_expander x) {
#if defined(__x86_64__) || defined(__i386__)
    if (x == Q8_ISP_EXPAND_AVX512 || x == Q8_ISP_EXPAND_SHUFFLE) {
        (x == Q8_ISP_EXPAND_AVX512 ? q8_isp_rows_avx512 : q8_isp_rows_shuffle_x86)(s, blob, r0,
                                                                                 nr, dst);
        return;
    }
#elif defined(__aarch64__)
    if (x == Q8_ISP_EXPAND_SHUFFLE) {
        q8_isp_rows_neon(s, blob, r0, nr, dst);
        return;
    }
#else
    (void)x;
#endif
    const uint64_t *mask = isp_masks(s, blob), *start = isp_starts(s, blob);
    const int8_t *vals = isp_vals(s, blob);
    memset(dst, 0, (size_t)(nr * s->K));
    for (int64_t r = 0; r < nr; r++) {
        const int8_t *v = vals + start[r0 + r];
        uint8_t *d = dst + r * s->K;
        for (int64_t c = 0; c < s->KC; c++)
            for (uint64_t m = mask[(r0 + r) * s->KC + c]; m; m &= m - 1)
                d[64 * c + __builtin_ctzll(m)] = (uint8_t)*v++;
    }
}

typedef struct run_args {
    const q8_isp *s;
    const void *blob;
    const uint8_t *x;
    int64_t M;
    const int32_t *init;
    const q8_epilogue *e;
    char *out;
    int64_t ldo;
    q8_igemm_path path;
    bool fast;
} run_args;

static void run_range(void *arg, int64_t b, int64_t e, int t) {
    (void)t;
    const run_args *a = arg;
    const q8_isp *s = a->s;
    size_t es = a->e->kind == Q8_EPI_I8 ? 1 : 4;
    int32_t acc[Q8_ISP_MAX_ROWS * ISP_BLOCK];
    int64_t ldx = q8_isp_ldx(s->K);
    for (int64_t blk = b; blk < e; blk++) {
        int64_t n0 = blk * ISP_BLOCK, n1 = n0 + ISP_BLOCK < s->N ? n0 + ISP_BLOCK : s->N;
        for (int64_t r0 = 0; r0 < a->M; r0 += Q8_ISP_MAX_ROWS) {
            int64_t mr = a->M - r0 < Q8_ISP_MAX_ROWS ? a->M - r0 : Q8_ISP_MAX_ROWS;
            const uint8_t *x = a->x + r0 * ldx;
#if defined(__x86_64__) || defined(__i386__)
            if (a->fast) q8_isp_block_avx512(s, a->blob, x, ldx, mr, n0, n1, acc);
            else
#endif
                q8_isp_block_c(s, a->blob, x, ldx, mr, n0, n1, acc);
            for (int64_t r = 0; r < mr; r++) {
                int32_t *ar = acc + r * (n1 - n0);
                for (int64_t n = n0; n < n1; n++)
                    ar[n - n0] = (int32_t)((uint32_t)ar[n - n0] + (uint32_t)a->init[n]);
                q8_epilogue_row(a->path, a->e, ar, n1 - n0, n0,
                                a->out + ((r0 + r) * a->ldo + n0) * (int64_t)es);
            }
        }
    }
}

void q8_isp_run(const q8_isp *s, const void *blob, const uint8_t *x, int64_t M,
                const int32_t *init, const q8_epilogue *e, void *out, int64_t ldo,
                q8_igemm_path path, q8_pool *pool) {
    run_args a = {s, blob, x, M, init, e, out, ldo, path, q8_isp_gemv_fast(path)};
    int64_t blocks = (s->N + ISP_BLOCK - 1) / ISP_BLOCK;
    /* a block's work in chunk visits; a few thousand per task at least */
    int64_t work = ISP_BLOCK * s->KC * M + 1;
    q8_parallel_for(pool, blocks, 1 + 4096 / work, run_range, &a);
}
