/* GlobalAveragePool: the mean of each (n, c) plane, summed in double as on
 * the CPU (only the summation order differs). One warp per plane. */
#include "common.cuh"

__host__ __device__ static inline void rowmean_row(const q8cu_rowmean_args *p, int64_t row, int lane,
                                                   int lanes) {
    const float *x = p->x + row * p->len;
    double s = 0.0;
    for (int64_t i = lane; i < p->len; i += lanes) s += x[i];
    s = q8cu_warp_sum(s);
    if (lane == 0) p->y[row] = p->len ? (float)(s / (double)p->len) : 0.0f;
}

Q8CU_ROWWISE(rowmean, q8cu_rowmean_args, rowmean_row)

extern "C" cudaError_t q8cu_rowmean(const q8cu_stream *s, const q8cu_rowmean_args *p) {
    return rowmean_launch(s, p, p->rows);
}
