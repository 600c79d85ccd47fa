/* q8.QGlobalAveragePool: each row's exact int32 sum, requantized once
 * (src/core/ops/qgap.h; the CPU: kernels/cpu/ops/qgap.c), one thread per
 * row. */
#include "common.cuh"

__host__ __device__ static inline void qgap_elem(const q8cu_qgap_args *p, int64_t row) {
    const int8_t *x = p->x + row * p->len;
    int32_t s = 0;
    for (int64_t i = 0; i < p->len; i++) s += x[i];
    int64_t v = ((int64_t)s * p->mult + ((int64_t)1 << (p->shift - 1))) >> p->shift;
    p->y[row] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

Q8CU_ELEMENTWISE(qgap, q8cu_qgap_args, qgap_elem)

extern "C" cudaError_t q8cu_qgap(const q8cu_stream *s, const q8cu_qgap_args *p) {
    return qgap_launch(s, p, p->rows);
}
