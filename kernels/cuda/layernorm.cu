/* LayerNormalization over contiguous rows, as kernels/cpu/layernorm.c:
 * mean and variance (two passes, x - mean in double) summed in double, then
 * inv = 1 / sqrtf(var + eps) and y = (x - mean) * inv * scale + bias in
 * float, in that order. One warp per row; in place is safe (the row is read
 * twice before any element is written, each by its own lane). */
#include "common.cuh"

__host__ __device__ static inline void ln_row(const q8cu_layernorm_args *p, int64_t row, int lane,
                                              int lanes) {
    int64_t len = p->len;
    const float *x = p->x + row * len;
    float *y = p->y + row * len;
    double s = 0.0;
    for (int64_t i = lane; i < len; i += lanes) s += x[i];
    s = q8cu_warp_sum(s);
    double mean = len ? s / (double)len : 0.0;
    double v = 0.0;
    for (int64_t i = lane; i < len; i += lanes) {
        double d = x[i] - mean;
        v += d * d;
    }
    v = q8cu_warp_sum(v);
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
