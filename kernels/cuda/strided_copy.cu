/* Transpose and Slice: a dense copy of a strided view of the input
 * (q8_strided, simplified on the host: size-1 dims dropped, contiguous
 * dims merged). One thread per output element, any element size. */
#include "common.cuh"

__host__ __device__ static inline void strided_elem(const q8cu_strided_args *p, int64_t i) {
    int64_t off = p->offset, r = i;
    for (int d = p->ndim - 1; d >= 0; d--) {
        int64_t c;
        r = q8cu_divmod(r, p->dims[d], &c);
        off += c * p->stride[d];
    }
    q8cu_copy_elem(p->y, i, p->x, off, p->esize);
}

Q8CU_ELEMENTWISE(strided, q8cu_strided_args, strided_elem)

extern "C" cudaError_t q8cu_strided_copy(const q8cu_stream *s, const q8cu_strided_args *p) {
    return strided_launch(s, p, p->n);
}
