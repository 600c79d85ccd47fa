/* Resize of the last two dims (nearest on any element size, linear on
 * float32, int8 and uint8) from per-output-index tap tables built on the host
 * exactly as kernels/cpu/ops/resize.c builds them (indices, float weights and
 * the integer weights of int8 linear); one thread per output element sums
 * its taps, h taps outer, w taps inner. */
#include "common.cuh"

/* q8_resize_round of src/core/ops/resize.h: s / 2^shift, ties to even */
__host__ __device__ static inline int32_t resize_round(int32_t s, int shift) {
    if (shift == 0) return s;
    int32_t half = 1 << (shift - 1);
    return (s + half - 1 + ((s >> shift) & 1)) >> shift;
}

__host__ __device__ static inline void resize_elem(const q8cu_resize_args *p, int64_t t) {
    int64_t ow = t % p->OW, r = t / p->OW;
    int64_t oh = r % p->OH, row = r / p->OH;
    int64_t base = row * p->H * p->W;
    if (p->ilin) {
        int32_t acc = 0;
        for (int a = 0; a < p->th; a++) {
            int64_t r0 = base + p->ih[oh * p->th + a] * p->W;
            int32_t rs = 0;
            for (int b = 0; b < p->tw; b++) {
                int64_t i = r0 + p->iw[ow * p->tw + b];
                int32_t v = p->ilin == 1 ? (int32_t)((const int8_t *)p->x)[i]
                                         : (int32_t)((const uint8_t *)p->x)[i];
                rs += v * p->iww[ow * p->tw + b];
            }
            acc += rs * p->iwh[oh * p->th + a];
        }
        int32_t q = resize_round(acc, p->shift);
        if (p->ilin == 1)
            ((int8_t *)p->y)[t] = (int8_t)q;
        else
            ((uint8_t *)p->y)[t] = (uint8_t)q;
        return;
    }
    if (!p->f32) {
        int64_t src = base + p->ih[oh * p->th] * p->W + p->iw[ow * p->tw];
        q8cu_copy_elem(p->y, t, p->x, src, p->esize);
        return;
    }
    const float *x = (const float *)p->x;
    /* the CPU's forms (kernels/cpu/ops/resize.c resize_f32), down to the
     * sign of a zero: one tap each way is the input itself; bilinear sums
     * its products from the first; the others from 0.0f (-0 gives +0) */
    if (p->th == 1 && p->tw == 1) {
        ((float *)p->y)[t] = x[base + p->ih[oh] * p->W + p->iw[ow]];
        return;
    }
    if (p->th == 2 && p->tw == 2) {
        const float *r0 = x + base + p->ih[2 * oh] * p->W, *r1 = x + base + p->ih[2 * oh + 1] * p->W;
        int64_t i0 = p->iw[2 * ow], i1 = p->iw[2 * ow + 1];
        float w0 = p->ww[2 * ow], w1 = p->ww[2 * ow + 1];
        ((float *)p->y)[t] = p->wh[2 * oh] * (w0 * r0[i0] + w1 * r0[i1]) +
                             p->wh[2 * oh + 1] * (w0 * r1[i0] + w1 * r1[i1]);
        return;
    }
    float acc = 0.0f;
    for (int a = 0; a < p->th; a++) {
        float rs = 0.0f;
        const float *xr = x + base + p->ih[oh * p->th + a] * p->W;
        for (int b = 0; b < p->tw; b++) rs += xr[p->iw[ow * p->tw + b]] * p->ww[ow * p->tw + b];
        acc += rs * p->wh[oh * p->th + a];
    }
    ((float *)p->y)[t] = acc;
}

Q8CU_ELEMENTWISE(resize, q8cu_resize_args, resize_elem)

extern "C" cudaError_t q8cu_resize(const q8cu_stream *s, const q8cu_resize_args *p) {
    return resize_launch(s, p, p->rows * p->OH * p->OW);
}
