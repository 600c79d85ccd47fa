/* Resize of the last two dims (nearest on any element size, linear on
 * float32) from per-output-index tap tables built on the host exactly as
 * kernels/cpu/ops/resize.c builds them (indices and float weights); one thread
 * per output element sums its taps, h taps outer, w taps inner. */
#include "common.cuh"

__host__ __device__ static inline void resize_elem(const q8cu_resize_args *p, int64_t t) {
    int64_t ow = t % p->OW, r = t / p->OW;
    int64_t oh = r % p->OH, row = r / p->OH;
    int64_t base = row * p->H * p->W;
    if (!p->f32) {
        int64_t src = base + p->ih[oh * p->th] * p->W + p->iw[ow * p->tw];
        q8cu_copy_elem(p->y, t, p->x, src, p->esize);
        return;
    }
    const float *x = (const float *)p->x;
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
