/* Pack an INT8 GEMM operand K-contiguous, zero padded to kp columns and
 * rows_pad rows per batch (cuBLASLt's IMMA kernels want k, m and the
 * leading dimensions multiples of 4; q8 pads k to 16): q8.QGemm
 * activations with an odd K, q8.QMatMul's A (rows) and B (transposed:
 * s_r = 1, s_k = N), with numpy batch broadcasting resolved here so that
 * the strided-batched GEMM sees dense batches. One thread per dst byte. */
#include "common.cuh"

__host__ __device__ static inline void pack_elem(const q8cu_pack_args *p, int64_t t) {
    int64_t k, r, b = q8cu_divmod(q8cu_divmod(t, p->kp, &k), p->rows_pad, &r);
    int8_t v = 0;
    if (k < p->K && r < p->rows) {
        int64_t off = 0, rem = b;
        for (int d = p->nbd - 1; d >= 0; d--) {
            int64_t c;
            rem = q8cu_divmod(rem, p->bdims[d], &c);
            off += c * p->bstr[d];
        }
        v = p->src[off + r * p->s_r + k * p->s_k];
    }
    p->dst[t] = v;
}

Q8CU_ELEMENTWISE(pack, q8cu_pack_args, pack_elem)

extern "C" cudaError_t q8cu_pack(const q8cu_stream *s, const q8cu_pack_args *p) {
    return pack_launch(s, p, p->nb * p->rows_pad * p->kp);
}
