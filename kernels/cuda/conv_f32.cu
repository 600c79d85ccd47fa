/* float32 Conv (1-D to 3-D, groups, strides, dilations, pads, bias, the
 * fused activation): one thread per output element sums its group's
 * channels times the kernel taps in order, adds the bias and applies the
 * activation. For the layers a quantized model keeps in float32 (often the
 * first and the last), which are few; sums run in another order than the
 * CPU's GEMM, so values agree to rounding, not bit for bit. */
#include "common.cuh"
#include "vmath.h"

__host__ __device__ static inline float act_apply(const q8cu_conv_f32_args *p, float v) {
    switch (p->act) { /* the CPU's fused_act.c formulas */
    case Q8CU_ACT_RELU: return v < 0.0f ? 0.0f : v; /* NaN and -0 stay, as unfused */
    case Q8CU_ACT_CLIP: return v < p->p0 ? p->p0 : v > p->p1 ? p->p1 : v;
    case Q8CU_ACT_LEAKY_RELU: return v < 0.0f ? v * p->p0 : v;
    case Q8CU_ACT_SIGMOID: return q8_vsigmoid(v);
    case Q8CU_ACT_HARD_SIGMOID: {
        float h = p->p0 * v + p->p1;
        return h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
    }
    case Q8CU_ACT_HARD_SWISH: {
        float h = p->p0 * v + p->p1;
        return h <= 0.0f ? -0.0f : h >= 1.0f ? v : v * h;
    }
    default: return v;
    }
}

__host__ __device__ static inline void conv_f32_elem(const q8cu_conv_f32_args *p, int64_t t) {
    int64_t o[3], r = t, m;
    for (int d = 2; d >= 0; d--) r = q8cu_divmod(r, p->out[d], &o[d]);
    int64_t img = q8cu_divmod(r, p->M, &m);
    int64_t c0 = (m / p->Mg) * p->Cg;
    const float *w = p->w + m * p->Cg * p->k[0] * p->k[1] * p->k[2];
    int64_t plane = p->in[0] * p->in[1] * p->in[2];
    float acc = 0.0f;
    for (int64_t c = 0; c < p->Cg; c++) {
        const float *x = p->x + (img * p->C + c0 + c) * plane;
        for (int64_t kd = 0; kd < p->k[0]; kd++) {
            int64_t id = o[0] * p->s[0] - p->pb[0] + kd * p->dl[0];
            bool okd = id >= 0 && id < p->in[0];
            for (int64_t kh = 0; kh < p->k[1]; kh++) {
                int64_t ih = o[1] * p->s[1] - p->pb[1] + kh * p->dl[1];
                bool okh = okd && ih >= 0 && ih < p->in[1];
                for (int64_t kw = 0; kw < p->k[2]; kw++, w++) {
                    int64_t iw = o[2] * p->s[2] - p->pb[2] + kw * p->dl[2];
                    if (okh && iw >= 0 && iw < p->in[2])
                        acc += *w * x[(id * p->in[1] + ih) * p->in[2] + iw];
                }
            }
        }
    }
    if (p->b) acc += p->b[m];
    p->y[t] = act_apply(p, acc);
}

Q8CU_ELEMENTWISE(conv_f32, q8cu_conv_f32_args, conv_f32_elem)

extern "C" cudaError_t q8cu_conv_f32(const q8cu_stream *s, const q8cu_conv_f32_args *p) {
    return conv_f32_launch(s, p, p->n);
}
