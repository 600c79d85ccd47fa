/* q8.QMul: the requantized product of an int8 tensor and an int8 tensor of
 * its shape or broadcast over its trailing dims (src/core/ops/qmul.h; the
 * CPU: kernels/cpu/ops/qmul.c). May run in place on A. */
#include "common.cuh"

__host__ __device__ static inline void qmul_elem(const q8cu_qmul_args *p, int64_t i) {
    int32_t v = ((int32_t)p->a[i] * p->b[i / p->inner] * p->m + (1 << (p->shift - 1))) >>
                p->shift;
    p->y[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

Q8CU_ELEMENTWISE(qmul, q8cu_qmul_args, qmul_elem)

extern "C" cudaError_t q8cu_qmul(const q8cu_stream *s, const q8cu_qmul_args *p) {
    return qmul_launch(s, p, p->n);
}
