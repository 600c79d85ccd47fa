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

extern "C" cudaError_t q8cu_gemm_epilogue(const q8cu_stream *s, const q8cu_gemm_epi_args *p) {
    return gemm_epi_launch(s, p, p->nb * p->nj * p->ni);
}
