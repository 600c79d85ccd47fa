/* Direct INT8 convolution for depthwise and narrow-group convs, where one
 * GEMM per group would be too small: one thread per output element sums
 * its C/group * KH * KW products (int32 with wrap-around, like the CPU;
 * the exact sum always fits since infer bounds K) and applies the
 * epilogue. Padding reads as 0. */
#include "common.cuh"

__host__ __device__ static inline void conv_direct_elem(const q8cu_conv_direct_args *p, int64_t t) {
    int64_t ow, oh, m, r = q8cu_divmod(t, p->OW, &ow);
    r = q8cu_divmod(r, p->OH, &oh);
    int64_t img = q8cu_divmod(r, p->M, &m);
    int64_t c0 = (m / p->Mg) * p->Cg;
    const int8_t *w = p->w + m * p->Cg * p->KH * p->KW;
    uint32_t acc = 0;
    for (int64_t c = 0; c < p->Cg; c++) {
        const int8_t *x = p->x + (img * p->C + c0 + c) * p->H * p->W;
        for (int64_t kh = 0; kh < p->KH; kh++) {
            int64_t ih = oh * p->sh - p->pt + kh * p->dh;
            if (ih < 0 || ih >= p->H) continue;
            for (int64_t kw = 0; kw < p->KW; kw++) {
                int64_t iw = ow * p->sw - p->pl + kw * p->dw;
                if (iw < 0 || iw >= p->W) continue;
                acc += (uint32_t)((int32_t)w[(c * p->KH + kh) * p->KW + kw] *
                                  (int32_t)x[ih * p->W + iw]);
            }
        }
    }
    q8cu_epi_store(&p->e, (int32_t)acc, m, p->y, t);
}

Q8CU_ELEMENTWISE(conv_direct, q8cu_conv_direct_args, conv_direct_elem)

extern "C" cudaError_t q8cu_conv_direct(const q8cu_stream *s, const q8cu_conv_direct_args *p) {
    return conv_direct_launch(s, p, p->N * p->M * p->OH * p->OW);
}
