/* q8.QAdd: the requantized sum of two int8 tensors of one shape
 * (src/core/ops/qadd.h; the CPU: kernels/cpu/ops/qadd.c). May run in place. */
#include "common.cuh"

__host__ __device__ static inline void qadd_elem(const q8cu_qadd_args *p, int64_t i) {
    int32_t v = ((int32_t)p->a[i] * p->ma + (int32_t)p->b[i] * p->mb + (1 << (p->shift - 1))) >>
                p->shift;
    p->y[i] = (int8_t)(v < p->lo ? p->lo : v > 127 ? 127 : v);
}

Q8CU_ELEMENTWISE(qadd, q8cu_qadd_args, qadd_elem)

extern "C" cudaError_t q8cu_qadd(const q8cu_stream *s, const q8cu_qadd_args *p) {
    return qadd_launch(s, p, p->n);
}
