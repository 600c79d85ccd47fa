/* Transpose on the CPU (params: src/core/ops/transpose.h). Dims that stay
 * adjacent are merged and size-1 dims dropped first, so 2-D, last-two-dims
 * swaps and NCHW<->NHWC all become a (batched) 2-D transpose, done in cache
 * blocks; when the innermost dim stays innermost the copy is whole rows
 * (memcpy). Generic over element size; 4-byte NHWC -> NCHW with 3 or 4
 * channels (an image network's input) has its own loops. */
#include <string.h>

#include "ops/transpose.h"
#include "tensor_util.h"
#include "transpose_x86.h"

/* TILE rows along jdim a task (64 floats: whole lines of each input row
 * read, 1.4x faster than 32 on a 255 x 6400 transpose); the element loop
 * works in blocks of COPY_TILE along the last dim. */
#define TILE 64
#define COPY_TILE 32

typedef struct tile_args {
    const q8_strided *s;    /* the input seen in output order, simplified */
    int jdim;               /* output dim whose input stride is 1 */
    const uint8_t *src;
    uint8_t *dst;
    int64_t ostride[Q8_MAX_DIMS];   /* dense output strides */
    int64_t jblocks;
    int64_t lchunk, lblocks;        /* the last dim in chunks of lchunk */
    bool x86;                       /* 4-byte blocks on AVX-512 (transpose_x86.h) */
} tile_args;

#define TILE_COPY(T)                                                                               \
    do {                                                                                           \
        const T *s = (const T *)a->src + soff;                                                     \
        T *d = (T *)a->dst + doff;                                                                 \
        for (int64_t lb = l0; lb < l1; lb += COPY_TILE) {                                          \
            int64_t le = lb + COPY_TILE < l1 ? lb + COPY_TILE : l1;                                \
            for (int64_t j = j0; j < j1; j++)                                                      \
                for (int64_t l = lb; l < le; l++) d[j * dj + l] = s[j + l * sl];                   \
        }                                                                                          \
    } while (0)

static void deinterleave3(const uint32_t *s, uint32_t *d, int64_t dj, int64_t l0, int64_t l1) {
    uint32_t *d0 = d, *d1 = d + dj, *d2 = d + 2 * dj;
    for (int64_t l = l0; l < l1; l++) {
        d0[l] = s[3 * l];
        d1[l] = s[3 * l + 1];
        d2[l] = s[3 * l + 2];
    }
}

static void deinterleave4(const uint32_t *s, uint32_t *d, int64_t dj, int64_t l0, int64_t l1) {
    uint32_t *d0 = d, *d1 = d + dj, *d2 = d + 2 * dj, *d3 = d + 3 * dj;
    for (int64_t l = l0; l < l1; l++) {
        d0[l] = s[4 * l];
        d1[l] = s[4 * l + 1];
        d2[l] = s[4 * l + 2];
        d3[l] = s[4 * l + 3];
    }
}

/* One task: outer index (all dims but jdim and the last) x a block of TILE
 * rows along jdim x a chunk of the last dim; inside, 16 x 16 blocks
 * (AVX-512) or TILE x COPY_TILE ones, so reads and writes both stay in
 * cache. */
static void tile_range(void *arg, int64_t b, int64_t e, int thread) {
    const tile_args *a = arg;
    const q8_strided *st = a->s;
    int nd = st->ndim, jd = a->jdim;
    int64_t nl = st->dims[nd - 1], sl = st->stride[nd - 1], dj = a->ostride[jd];
    size_t es = st->esize;
    for (int64_t t = b; t < e; t++) {
        int64_t lk = t % a->lblocks, jb = t / a->lblocks % a->jblocks;
        int64_t r = t / a->lblocks / a->jblocks, soff = 0, doff = 0;
        int64_t l0 = lk * a->lchunk, l1 = l0 + a->lchunk < nl ? l0 + a->lchunk : nl;
        for (int k = nd - 2; k >= 0; k--) {
            if (k == jd) continue;
            int64_t c = r % st->dims[k];
            r /= st->dims[k];
            soff += c * st->stride[k];
            doff += c * a->ostride[k];
        }
        int64_t j0 = jb * TILE, j1 = j0 + TILE < st->dims[jd] ? j0 + TILE : st->dims[jd];
        if (es == 4 && j0 == 0 && (j1 == 3 || j1 == 4) && sl == j1) {
            /* NHWC -> NCHW of an RGB(A) image: all rows per pixel in one
             * pass, an interleaved group the compiler vectorizes */
            const uint32_t *sp = (const uint32_t *)a->src + soff;
            uint32_t *dp = (uint32_t *)a->dst + doff;
            if (a->x86) q8_deinterleave4_x86(sp, dp, dj, (int)j1, l0, l1);
            else if (j1 == 3) deinterleave3(sp, dp, dj, l0, l1);
            else deinterleave4(sp, dp, dj, l0, l1);
            continue;
        }
        /* whole and partial 16 x 16 blocks (partial ones masked), unless
         * the tile is too thin for a block's shuffles to pay */
        if (es == 4 && a->x86 && j1 - j0 >= 4 && l1 - l0 >= 4 && (j1 - j0) * (l1 - l0) >= 64) {
            q8_transpose4_x86((const uint32_t *)a->src + soff, sl, (uint32_t *)a->dst + doff, dj,
                              j0, j1, l0, l1);
            continue;
        }
        switch (es) {
        case 1: TILE_COPY(uint8_t); break;
        case 2: TILE_COPY(uint16_t); break;
        case 4: TILE_COPY(uint32_t); break;
        case 8: TILE_COPY(uint64_t); break;
        default:
            for (int64_t j = j0; j < j1; j++)
                for (int64_t l = l0; l < l1; l++)
                    memcpy(a->dst + (size_t)(doff + j * dj + l) * es,
                           a->src + (size_t)(soff + j + l * sl) * es, es);
        }
    }
}

static void transpose_run(const q8_exec *x, const q8_node *n) {
    const q8_transpose_params *p = n->params;
    const q8_tensor *in = q8_in(x->g, n, 0);
    const void *src = Q8_IN_PTR(x, n, 0);
    void *dst = Q8_OUT_PTR(x, n, 0);
    q8_strided st;
    q8_strided_permute(&st, in->dims, in->ndim, p->perm, p->esize);
    /* Tiled when the output's last dim is not contiguous in the input: jdim
     * is the output dim that is; otherwise whole rows are copied. */
    int nd = st.ndim, jdim = -1;
    if (nd >= 2 && st.stride[nd - 1] != 1)
        for (int k = 0; k < nd - 1; k++)
            if (st.stride[k] == 1) jdim = k;
    Q8_ASSERT(nd < 2 || st.stride[nd - 1] == 1 || jdim >= 0);
    if (jdim < 0) {
        q8_tu_strided_copy(x->pool, dst, src, &st);
        return;
    }
    tile_args a = {.s = &st, .jdim = jdim, .src = src, .dst = dst,
                   .x86 = q8_transpose4_x86_ok()};
    q8_row_strides(st.dims, nd, a.ostride);
    a.jblocks = (st.dims[jdim] + TILE - 1) / TILE;
    /* the last dim in chunks of about 64 KiB a task, so that an NHWC image
     * with few channels (one block of rows) still splits over the threads */
    int64_t rows = st.dims[jdim] < TILE ? st.dims[jdim] : TILE, nl = st.dims[nd - 1];
    int64_t want = (int64_t)(65536 / ((size_t)rows * st.esize));
    a.lchunk = (want < TILE ? TILE : want + TILE - 1) / TILE * TILE;
    if (a.lchunk > nl) a.lchunk = nl > 0 ? nl : 1;
    a.lblocks = (nl + a.lchunk - 1) / a.lchunk;
    int64_t outer = q8_ta_prod(st.dims, 0, nd - 1) / st.dims[jdim];
    size_t task_bytes = (size_t)rows * (size_t)a.lchunk * st.esize;
    q8_parallel_for(x->pool, outer * a.jblocks * a.lblocks, q8_tu_grain(task_bytes), tile_range,
                    &a);
}

const q8_cpu_op q8_cpu_transpose = {.run = transpose_run};
