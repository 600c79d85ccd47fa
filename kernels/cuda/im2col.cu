/* INT8 im2col for q8.QConv (one group, a chunk of images) and the input
 * transpose of q8.QConvTranspose: the GEMM's K-contiguous operand
 * col[r][k], r = img * P + output pixel, k = (c * KH + kh) * KW + kw.
 * Padding (the quantized zero), k >= K and the rows past nimg * P
 * (cuBLASLt wants m a multiple of 4) are 0. For a 1x1 stride-1 conv this is
 * a plain transpose of the NCHW input.
 *
 * On the device the copy goes through 32 x 32 tiles in shared memory: a
 * warp reads 32 neighbouring pixels of one (c, kh, kw) (contiguous input
 * bytes for stride 1) and writes 32 neighbouring k of one row (contiguous
 * output bytes), instead of reading with a stride of a whole plane. The
 * host emulation runs the same tile functions, every load of a tile before
 * its stores (what the barrier guarantees on the device). */
#include "common.cuh"

#define TILE 32
#define TILE_ROWS 8 /* threads per block: TILE x TILE_ROWS */

/* What a column k of the tile contributes, computed once per tile (its
 * divisions were most of the kernel's time: a 3x3 conv at batch 32 ran at
 * ~0.1 TB/s on an H200 with 64-bit divisions per element): the input
 * plane's offset and the kernel tap's offsets, or k past K (zeros). */
typedef struct {
    int64_t coff; /* c * H * W */
    int64_t dh, dw; /* kh * dh - pt, kw * dw - pl */
    int valid;
} kcol;

/* ... and what a row r contributes: the image's base and the output
 * pixel's input origin, or r past nimg * P (zeros). */
typedef struct {
    int64_t base; /* img * img_stride */
    int64_t ih0, iw0; /* oh * sh, ow * sw */
    int valid;
} krow;

__host__ __device__ static inline kcol im2col_kcol(const q8cu_im2col_args *p, int64_t k) {
    kcol kc = {0, 0, 0, 0};
    if (k >= p->K) return kc;
    int64_t kw, khc = q8cu_divmod(k, p->KW, &kw), kh, c = q8cu_divmod(khc, p->KH, &kh);
    kc.coff = c * p->H * p->W;
    kc.dh = kh * p->dh - p->pt;
    kc.dw = kw * p->dw - p->pl;
    kc.valid = 1;
    return kc;
}

__host__ __device__ static inline krow im2col_krow(const q8cu_im2col_args *p, int64_t r) {
    krow kr = {0, 0, 0, 0};
    if (r >= p->nimg * p->P) return kr;
    int64_t pix, img = q8cu_divmod(r, p->P, &pix), ow, oh = q8cu_divmod(pix, p->OW, &ow);
    kr.base = img * p->img_stride;
    kr.ih0 = oh * p->sh;
    kr.iw0 = ow * p->sw;
    kr.valid = 1;
    return kr;
}

__host__ __device__ static inline int8_t im2col_at(const q8cu_im2col_args *p, const krow *kr,
                                                   const kcol *kc) {
    if (!kr->valid || !kc->valid) return 0;
    int64_t ih = kr->ih0 + kc->dh, iw = kr->iw0 + kc->dw;
    if (ih < 0 || ih >= p->H || iw < 0 || iw >= p->W) return 0;
    return p->x[kr->base + kc->coff + ih * p->W + iw];
}

/* Tile t (k-tiles fastest) starts at (k0, r0). */
__host__ __device__ static inline void tile_origin(const q8cu_im2col_args *p, int64_t t,
                                                   int64_t *k0, int64_t *r0) {
    int64_t tk = (p->kp + TILE - 1) / TILE, kt, rt = q8cu_divmod(t, tk, &kt);
    *k0 = kt * TILE;
    *r0 = rt * TILE;
}

/* Load (k0 + j, r0 + tx) into tile[j][tx]: consecutive tx, consecutive
 * pixels (contiguous input bytes for stride 1). kc[j] is column k0 + j. */
__host__ __device__ static inline void tile_load(const q8cu_im2col_args *p, const krow *kr,
                                                 const kcol *kc, int j, int tx,
                                                 int8_t (*tile)[TILE + 1]) {
    tile[j][tx] = im2col_at(p, kr, &kc[j]);
}

/* Store tile[tx][j] at (r0 + j, k0 + tx): consecutive tx, consecutive k. */
__host__ __device__ static inline void tile_store(const q8cu_im2col_args *p, int64_t k0,
                                                  int64_t r0, int j, int tx,
                                                  int8_t (*tile)[TILE + 1]) {
    int64_t r = r0 + j, k = k0 + tx;
    if (r < p->rows_pad && k < p->kp) p->col[r * p->kp + k] = tile[tx][j];
}

static inline int64_t n_tiles(const q8cu_im2col_args *p) {
    return ((p->kp + TILE - 1) / TILE) * ((p->rows_pad + TILE - 1) / TILE);
}

/* One block per tile (grid-stride over tiles; the loop bound depends on the
 * block only, so every thread reaches the barriers). The first row of
 * threads describes the tile's 32 columns in shared memory; each thread
 * describes its pixel once per tile. */
static __global__ void im2col_tiled_kernel(const q8cu_im2col_args p, int64_t tiles) {
    __shared__ int8_t tile[TILE][TILE + 1];
    __shared__ kcol kc[TILE];
    int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        int64_t k0, r0;
        tile_origin(&p, t, &k0, &r0);
        if (ty == 0) kc[tx] = im2col_kcol(&p, k0 + tx);
        krow kr = im2col_krow(&p, r0 + tx);
        __syncthreads();
        for (int j = ty; j < TILE; j += TILE_ROWS) tile_load(&p, &kr, kc, j, tx, tile);
        __syncthreads();
        for (int j = ty; j < TILE; j += TILE_ROWS) tile_store(&p, k0, r0, j, tx, tile);
        __syncthreads(); /* tile and kc are rewritten by the next iteration */
    }
}

extern "C" cudaError_t q8cu_im2col(const q8cu_stream *s, const q8cu_im2col_args *p) {
    int64_t tiles = n_tiles(p);
    if (p->rows_pad * p->kp <= 0) return cudaSuccess;
    if (s->emu) {
        int8_t tile[TILE][TILE + 1];
        kcol kc[TILE];
        for (int64_t t = 0; t < tiles; t++) {
            int64_t k0, r0;
            tile_origin(p, t, &k0, &r0);
            for (int tx = 0; tx < TILE; tx++) kc[tx] = im2col_kcol(p, k0 + tx);
            for (int tx = 0; tx < TILE; tx++) {
                krow kr = im2col_krow(p, r0 + tx);
                for (int j = 0; j < TILE; j++) tile_load(p, &kr, kc, j, tx, tile);
            }
            for (int j = 0; j < TILE; j++)
                for (int tx = 0; tx < TILE; tx++) tile_store(p, k0, r0, j, tx, tile);
        }
        return cudaSuccess;
    }
    im2col_tiled_kernel<<<q8cu_blocks(tiles, 1), dim3(TILE, TILE_ROWS), 0, s->stream>>>(*p, tiles);
    return cudaGetLastError();
}
