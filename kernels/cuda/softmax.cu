/* Softmax and LogSoftmax, as kernels/cpu/ops/softmax.c computes them: the max,
 * then exp(x - max) with the same polynomial exp, summed in the CPU's order
 * (so the result is the CPU's bit for bit), then y = e * (float)(1 / sum)
 * or (x - max) - (float)log(sum); rows holding NaN or infinities take expf
 * instead, as on the CPU. Contiguous rows (inner == 1): one warp per row,
 * lane 0 sums. Otherwise one thread per (outer, inner) column, in the CPU's
 * order with expf. In place is safe: every element is read by the thread
 * that writes it, after the row's reductions. */
#include "common.cuh"
#include "exp_neg.h"

/* The row's sum of exp(x - max) in kernels/cpu/ops/softmax.c's order: chunks of
 * 256, each summed in 8 float lanes (tail into lane 0), the lanes added in
 * order in float, the chunks in double. One thread does it (lane 0 on the
 * device), so the sum is the CPU's to the last bit. */
__host__ __device__ static inline double row_sum(const float *x, int64_t len, float m) {
    double s = 0.0;
    for (int64_t c0 = 0; c0 < len; c0 += 256) {
        int64_t cl = len - c0 < 256 ? len - c0 : 256, j = 0;
        float sk[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (; j + 8 <= cl; j += 8)
            for (int k = 0; k < 8; k++) sk[k] += q8_exp_neg(x[c0 + j + k] - m);
        for (; j < cl; j++) sk[0] += q8_exp_neg(x[c0 + j] - m);
        float cs = 0.0f;
        for (int k = 0; k < 8; k++) cs += sk[k];
        s += cs;
    }
    return s;
}

__host__ __device__ static inline void softmax_row(const q8cu_softmax_args *p, int64_t row,
                                                   int lane, int lanes) {
    int64_t len = p->len;
    const float *x = p->x + row * len;
    float *y = p->y + row * len;
    float m = -INFINITY, z = 0.0f;
    for (int64_t i = lane; i < len; i += lanes) {
        float v = x[i];
        m = v > m ? v : m;  /* NaN never wins, as on the CPU */
        z += v * 0.0f;      /* NaN once any value is NaN or infinite */
    }
#ifdef __CUDA_ARCH__
    for (int o = 16; o > 0; o >>= 1) {
        float t = __shfl_xor_sync(0xffffffffu, m, o);
        m = t > m ? t : m;
    }
#endif
    z = q8cu_warp_sumf(z);
    double s = 0.0;
    if (z != 0.0f) { /* rare: NaN or infinities, libm's expf gives the limits */
        if (lane == 0)
            for (int64_t i = 0; i < len; i++) s += q8cu_expf(x[i] - m);
        s = q8cu_from_lane0(s);
        float ls = (float)log(s);
        for (int64_t i = lane; i < len; i += lanes)
            y[i] = p->log ? (x[i] - m) - ls : (float)((double)q8cu_expf(x[i] - m) / s);
        return;
    }
    if (lane == 0) s = row_sum(x, len, m);
    s = q8cu_from_lane0(s);
    if (p->log) {
        float ls = (float)log(s);
        for (int64_t i = lane; i < len; i += lanes) y[i] = (x[i] - m) - ls;
    } else {
        float inv = (float)(1.0 / s);
        for (int64_t i = lane; i < len; i += lanes) y[i] = q8_exp_neg(x[i] - m) * inv;
    }
}

Q8CU_ROWWISE(softmax_rows, q8cu_softmax_args, softmax_row)

__host__ __device__ static inline void softmax_col(const q8cu_softmax_args *p, int64_t t) {
    int64_t o = t / p->inner, j = t % p->inner, len = p->len, in = p->inner;
    const float *x = p->x + o * len * in + j;
    float *y = p->y + o * len * in + j;
    float m = -INFINITY;
    for (int64_t l = 0; l < len; l++) m = x[l * in] > m ? x[l * in] : m;
    double s = 0.0;
    for (int64_t l = 0; l < len; l++) s += q8cu_expf(x[l * in] - m);
    if (p->log) {
        float ls = (float)log(s);
        for (int64_t l = 0; l < len; l++) y[l * in] = (x[l * in] - m) - ls;
    } else {
        float inv = (float)(1.0 / s);
        for (int64_t l = 0; l < len; l++) y[l * in] = q8cu_expf(x[l * in] - m) * inv;
    }
}

Q8CU_ELEMENTWISE(softmax_cols, q8cu_softmax_args, softmax_col)

extern "C" cudaError_t q8cu_softmax(const q8cu_stream *s, const q8cu_softmax_args *p) {
    if (p->len == 0) return cudaSuccess;
    if (p->inner == 1) return softmax_rows_launch(s, p, p->outer);
    return softmax_cols_launch(s, p, p->outer * p->inner);
}
