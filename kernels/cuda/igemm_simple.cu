/* A plain INT8 GEMM with int32 output, cuBLASLt's "TN" meaning of every
 * parameter: C[b][j][i] (ldc) = sum_k A[b][i][k] (lda) * B[b][j][k] (ldb).
 * One thread per output, int32 sums with wrap-around (exact: K is bounded
 * by infer). It runs when cuBLASLt's heuristic offers no algorithm for a
 * shape, and it is the reference the host emulation uses instead of
 * cuBLASLt. */
#include "common.cuh"

__host__ __device__ static inline void igemm_elem(const q8cu_igemm_args *p, int64_t t) {
    int64_t i = t % p->m, r = t / p->m;
    int64_t j = r % p->n, b = r / p->n;
    const int8_t *a = p->A + b * p->sa + i * p->lda, *bb = p->B + b * p->sb + j * p->ldb;
    uint32_t acc = 0;
    for (int64_t k = 0; k < p->k; k++) acc += (uint32_t)((int32_t)a[k] * (int32_t)bb[k]);
    p->C[b * p->sc + j * p->ldc + i] = (int32_t)acc;
}

Q8CU_ELEMENTWISE(igemm, q8cu_igemm_args, igemm_elem)

extern "C" cudaError_t q8cu_igemm_simple(const q8cu_stream *s, const q8cu_igemm_args *p) {
    return igemm_launch(s, p, p->batch * p->n * p->m);
}
