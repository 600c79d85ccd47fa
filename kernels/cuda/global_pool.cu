/* GlobalAveragePool: the mean of each (n, c) plane, summed in double in
 * q8_row_sum16's order as on the CPU (the same bits), by one thread per
 * plane. */
#include "common.cuh"
#include "row_sum16.h"

__host__ __device__ static inline void rowmean_elem(const q8cu_rowmean_args *p, int64_t row) {
    const float *x = p->x + row * p->len;
    double s = q8_row_sum16(x, p->len);
    p->y[row] = p->len ? (float)(s / (double)p->len) : 0.0f;
}

Q8CU_ELEMENTWISE(rowmean, q8cu_rowmean_args, rowmean_elem)

extern "C" cudaError_t q8cu_rowmean(const q8cu_stream *s, const q8cu_rowmean_args *p) {
    return rowmean_launch(s, p, p->rows);
}
