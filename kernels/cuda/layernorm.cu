/* LayerNormalization over contiguous rows, as kernels/cpu/ops/layernorm.c:
 * mean and variance (two passes, x - mean in double) summed in double in
 * q8_row_sum16's order, then inv = 1 / sqrtf(var + eps) and y = (x - mean) *
 * inv * scale + bias in float, in that order: the CPU's result bit for bit.
 * One warp per row: lane 0 sums (16 independent chains; rows run in
 * parallel), every lane writes. In place is safe: the row is read in full
 * before the shuffles that every lane passes before writing. */
#include "common.cuh"
#include "row_sum16.h"

__host__ __device__ static inline void ln_row(const q8cu_layernorm_args *p, int64_t row,
                                              int lane, int lanes) {
    int64_t len = p->len;
    const float *x = p->x + row * len;
    float *y = p->y + row * len;
    /* mean and variance summed by one thread (lane 0), exactly as the CPU
     * does, then shared */
    double mean = 0.0, v = 0.0;
    if (lane == 0) {
        mean = len ? q8_row_sum16(x, len) / (double)len : 0.0;
        v = q8_row_sqdev16(x, len, mean);
    }
    mean = q8cu_from_lane0(mean);
    v = q8cu_from_lane0(v);
    float var = len ? (float)(v / (double)len) : 0.0f;
    float inv = q8cu_div(1.0f, sqrtf(var + p->eps)), m = (float)mean;
    for (int64_t i = lane; i < len; i += lanes) {
        float r = (x[i] - m) * inv * p->scale[i];
        y[i] = p->bias ? r + p->bias[i] : r;
    }
    if (lane == 0 && p->mean) p->mean[row] = m;
    if (lane == 0 && p->inv) p->inv[row] = inv;
}

Q8CU_ROWWISE(ln, q8cu_layernorm_args, ln_row)

extern "C" cudaError_t q8cu_layernorm(const q8cu_stream *s, const q8cu_layernorm_args *p) {
    return ln_launch(s, p, p->rows);
}
