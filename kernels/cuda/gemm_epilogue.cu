/* The epilogue after an INT8 cuBLASLt GEMM: int32 accumulators (plus the
 * bias) -> requantized int8 or scaled float32, with the fused activation,
 * written where the op wants them (q8.QGemm rows, q8.QConv NCHW planes,
 * q8.QMatMul batches). One thread per output element; consecutive threads
 * read consecutive accumulators (i) and write consecutive outputs. */
#include "common.cuh"

__host__ __device__ static inline void gemm_epi_elem(const q8cu_gemm_epi_args *p, int64_t t) {
    int64_t i = t % p->ni, r = t / p->ni;
    int64_t j = r % p->nj, b = r / p->nj;
    int32_t acc = p->c[b * p->c_bs + j * p->c_ld + i];
    int64_t ch = p->ch_off + (p->chan == Q8CU_CHAN_J ? j : p->chan == Q8CU_CHAN_I ? i : 0);
    int64_t y = b * p->y_bs + j * p->y_js + (i / p->i_div) * p->y_ihi + (i % p->i_div) * p->y_ilo;
    q8cu_epi_store(&p->e, acc, ch, p->y, y);
}

Q8CU_ELEMENTWISE(gemm_epi, q8cu_gemm_epi_args, gemm_epi_elem)

/* The same map without a 64-bit division per element (they cost more than
 * the bytes: 0.19 ms for 4096 x 4096 on an H200, 0.42 TB/s): i from x, j
 * and b from the grid's y and z, i's split by i_div in 32 bits. The host
 * emulation runs the same function over the same (b, j, i). */
__host__ __device__ static inline void gemm_epi_at(const q8cu_gemm_epi_args *p, int64_t b,
                                                   int64_t j, uint32_t i) {
    uint32_t hi = i / (uint32_t)p->i_div, lo = i - hi * (uint32_t)p->i_div;
    int32_t acc = p->c[b * p->c_bs + j * p->c_ld + i];
    int64_t ch = p->ch_off + (p->chan == Q8CU_CHAN_J ? j : p->chan == Q8CU_CHAN_I ? i : 0);
    q8cu_epi_store(&p->e, acc, ch, p->y, b * p->y_bs + j * p->y_js + hi * p->y_ihi + lo * p->y_ilo);
}

/* Four consecutive i per thread (one 16-byte load of accumulators) where
 * they share a row of the output: ni and i_div multiples of 4, y_ilo 1,
 * the accumulators 16-byte aligned. */
__host__ __device__ static inline void gemm_epi_at4(const q8cu_gemm_epi_args *p, int64_t b,
                                                    int64_t j, uint32_t i) {
    uint32_t hi = i / (uint32_t)p->i_div, lo = i - hi * (uint32_t)p->i_div;
    const int32_t *c = p->c + b * p->c_bs + j * p->c_ld + i;
#ifdef __CUDA_ARCH__
    int4 v = *(const int4 *)c;
    int32_t acc[4] = {v.x, v.y, v.z, v.w};
#else
    int32_t acc[4] = {c[0], c[1], c[2], c[3]};
#endif
    int64_t y = b * p->y_bs + j * p->y_js + hi * p->y_ihi + lo;
    for (int q = 0; q < 4; q++) {
        int64_t ch = p->ch_off + (p->chan == Q8CU_CHAN_J ? j : p->chan == Q8CU_CHAN_I ? i + q : 0);
        q8cu_epi_store(&p->e, acc[q], ch, p->y, y + q);
    }
}

static inline bool epi_by4(const q8cu_gemm_epi_args *p) {
    return p->ni % 4 == 0 && p->i_div % 4 == 0 && p->y_ilo == 1 && p->c_ld % 4 == 0 &&
           p->c_bs % 4 == 0 && (uintptr_t)p->c % 16 == 0;
}

static __global__ void gemm_epi_grid4_kernel(const q8cu_gemm_epi_args p) {
    uint32_t i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= (uint32_t)p.ni) return;
    for (int64_t b = blockIdx.z; b < p.nb; b += gridDim.z)
        for (int64_t j = blockIdx.y; j < p.nj; j += gridDim.y) gemm_epi_at4(&p, b, j, i);
}

static __global__ void gemm_epi_grid_kernel(const q8cu_gemm_epi_args p) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint32_t)p.ni) return;
    for (int64_t b = blockIdx.z; b < p.nb; b += gridDim.z)
        for (int64_t j = blockIdx.y; j < p.nj; j += gridDim.y) gemm_epi_at(&p, b, j, i);
}

extern "C" cudaError_t q8cu_gemm_epilogue(const q8cu_stream *s, const q8cu_gemm_epi_args *p) {
    if (p->nb <= 0 || p->nj <= 0 || p->ni <= 0) return cudaSuccess;
    if (p->ni >= INT32_MAX || p->i_div <= 0 || p->i_div >= INT32_MAX)
        return gemm_epi_launch(s, p, p->nb * p->nj * p->ni);
    bool by4 = epi_by4(p);
    if (s->emu) {
        for (int64_t b = 0; b < p->nb; b++)
            for (int64_t j = 0; j < p->nj; j++)
                for (uint32_t i = 0; i < (uint32_t)p->ni; i += by4 ? 4 : 1) {
                    if (by4) gemm_epi_at4(p, b, j, i);
                    else gemm_epi_at(p, b, j, i);
                }
        return cudaSuccess;
    }
    int64_t per = by4 ? 4 * Q8CU_THREADS : Q8CU_THREADS;
    dim3 grid((unsigned)((p->ni + per - 1) / per), (unsigned)(p->nj < 65535 ? p->nj : 65535),
              (unsigned)(p->nb < 65535 ? p->nb : 65535));
    if (by4) gemm_epi_grid4_kernel<<<grid, Q8CU_THREADS, 0, s->stream>>>(*p);
    else gemm_epi_grid_kernel<<<grid, Q8CU_THREADS, 0, s->stream>>>(*p);
    return cudaGetLastError();
}
