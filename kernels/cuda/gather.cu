/* Gather along an axis with int32 / int64 indices: a negative index counts
 * from the end; an index still out of range (possible only for computed
 * indices, constant ones are checked in infer) gives zeros and reads
 * nothing, as on the CPU. One thread per output element. */
#include "common.cuh"

__host__ __device__ static inline void gather_elem(const q8cu_gather_args *p, int64_t t) {
    int64_t b, j, r = q8cu_divmod(t, p->blk, &b);
    int64_t o = q8cu_divmod(r, p->nidx, &j);
    int64_t v = p->idx64 ? ((const int64_t *)p->idx)[j] : ((const int32_t *)p->idx)[j];
    if (v < 0) v += p->dim;
    if (v < 0 || v >= p->dim) {
        switch (p->esize) {
        case 1: ((uint8_t *)p->y)[t] = 0; break;
        case 2: ((uint16_t *)p->y)[t] = 0; break;
        case 4: ((uint32_t *)p->y)[t] = 0; break;
        default: ((uint64_t *)p->y)[t] = 0; break;
        }
        return;
    }
    q8cu_copy_elem(p->y, t, p->x, (o * p->dim + v) * p->blk + b, p->esize);
}

Q8CU_ELEMENTWISE(gather, q8cu_gather_args, gather_elem)

extern "C" cudaError_t q8cu_gather(const q8cu_stream *s, const q8cu_gather_args *p) {
    return gather_launch(s, p, p->outer * p->nidx * p->blk);
}
