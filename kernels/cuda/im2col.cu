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

__host__ __device__ static inline int8_t im2col_value(const q8cu_im2col_args *p, int64_t r,
                                                      int64_t k) {
    if (k >= p->K || r >= p->nimg * p->P) return 0;
    int64_t img = r / p->P, pix = r % p->P;
    int64_t oh = pix / p->OW, ow = pix % p->OW;
    int64_t kw = k % p->KW, kh = (k / p->KW) % p->KH, c = k / (p->KW * p->KH);
    int64_t ih = oh * p->sh - p->pt + kh * p->dh;
    int64_t iw = ow * p->sw - p->pl + kw * p->dw;
    if (ih < 0 || ih >= p->H || iw < 0 || iw >= p->W) return 0;
    return p->x[img * p->img_stride + (c * p->H + ih) * p->W + iw];
}

/* Tile t (k-tiles fastest) of the tiled copy: load (k0 + j, r0 + tx), then
 * store (r0 + j, k0 + tx). Shared by the kernel and the host emulation,
 * which runs every thread's load before any store, as the barrier does. */
__host__ __device__ static inline void tile_origin(const q8cu_im2col_args *p, int64_t t,
                                                   int64_t *k0, int64_t *r0) {
    int64_t tk = (p->kp + TILE - 1) / TILE;
    *k0 = (t % tk) * TILE;
    *r0 = (t / tk) * TILE;
}

__host__ __device__ static inline void tile_load(const q8cu_im2col_args *p, int64_t t, int j,
                                                 int tx, int8_t (*tile)[TILE + 1]) {
    int64_t k0, r0;
    tile_origin(p, t, &k0, &r0);
    int64_t k = k0 + j, r = r0 + tx; /* consecutive tx: consecutive pixels */
    tile[j][tx] = (k < p->kp && r < p->rows_pad) ? im2col_value(p, r, k) : (int8_t)0;
}

__host__ __device__ static inline void tile_store(const q8cu_im2col_args *p, int64_t t, int j,
                                                  int tx, int8_t (*tile)[TILE + 1]) {
    int64_t k0, r0;
    tile_origin(p, t, &k0, &r0);
    int64_t r = r0 + j, k = k0 + tx; /* consecutive tx: consecutive k */
    if (r < p->rows_pad && k < p->kp) p->col[r * p->kp + k] = tile[tx][j];
}

static inline int64_t n_tiles(const q8cu_im2col_args *p) {
    return ((p->kp + TILE - 1) / TILE) * ((p->rows_pad + TILE - 1) / TILE);
}

/* One block per tile (grid-stride over tiles; the loop bound depends on the
 * block only, so every thread reaches both barriers). */
static __global__ void im2col_tiled_kernel(const q8cu_im2col_args p, int64_t tiles) {
    __shared__ int8_t tile[TILE][TILE + 1];
    int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        for (int j = ty; j < TILE; j += TILE_ROWS) tile_load(&p, t, j, tx, tile);
        __syncthreads();
        for (int j = ty; j < TILE; j += TILE_ROWS) tile_store(&p, t, j, tx, tile);
        __syncthreads(); /* the tile is rewritten by the next iteration */
    }
}

extern "C" cudaError_t q8cu_im2col(const q8cu_stream *s, const q8cu_im2col_args *p) {
    int64_t tiles = n_tiles(p);
    if (p->rows_pad * p->kp <= 0) return cudaSuccess;
    if (s->emu) {
        int8_t tile[TILE][TILE + 1];
        for (int64_t t = 0; t < tiles; t++) {
            for (int j = 0; j < TILE; j++)
                for (int tx = 0; tx < TILE; tx++) tile_load(p, t, j, tx, tile);
            for (int j = 0; j < TILE; j++)
                for (int tx = 0; tx < TILE; tx++) tile_store(p, t, j, tx, tile);
        }
        return cudaSuccess;
    }
    im2col_tiled_kernel<<<q8cu_blocks(tiles, 1), dim3(TILE, TILE_ROWS), 0, s->stream>>>(*p, tiles);
    return cudaGetLastError();
}
