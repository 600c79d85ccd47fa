/* q8.QLut: an int8 elementwise function as a 256-entry table (see
 * kernels/cpu/ops/qlut.c): y[i] = table[x[i] + 128], the table of i's
 * channel when there is an index. May run in place. */
#include "common.cuh"

__host__ __device__ static inline void qlut_elem(const q8cu_qlut_args *p, int64_t i) {
    int64_t t = p->index ? (int64_t)p->index[(i / p->inner) % p->channels] * 256 : 0;
    p->y[i] = p->table[t + (int)p->x[i] + 128];
}

Q8CU_ELEMENTWISE(qlut, q8cu_qlut_args, qlut_elem)

extern "C" cudaError_t q8cu_qlut(const q8cu_stream *s, const q8cu_qlut_args *p) {
    return qlut_launch(s, p, p->n);
}
