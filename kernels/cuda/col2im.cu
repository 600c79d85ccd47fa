/* q8.QConvTranspose after its GEMM: each output element gathers the
 * per-tap sums of the input pixels that map onto it,
 *   oh = ih * sh - pt + kh * dh,  ow = iw * sw - pl + kw * dw,
 * adds them in int32 with wrap-around (exact, as on the CPU) and applies
 * the epilogue. A gather, not a scatter: no atomics, one writer per
 * output. */
#include "common.cuh"

__host__ __device__ static inline void col2im_elem(const q8cu_col2im_args *p, int64_t t) {
    int64_t ow = t % p->OW, r = t / p->OW;
    int64_t oh = r % p->OH;
    r /= p->OH;
    int64_t m = r % p->Mg, img = r / p->Mg;
    uint32_t acc = 0;
    for (int64_t kh = 0; kh < p->KH; kh++) {
        int64_t th = oh + p->pt - kh * p->dh;
        if (th < 0 || th % p->sh) continue;
        int64_t ih = th / p->sh;
        if (ih >= p->H) continue;
        for (int64_t kw = 0; kw < p->KW; kw++) {
            int64_t tw = ow + p->pl - kw * p->dw;
            if (tw < 0 || tw % p->sw) continue;
            int64_t iw = tw / p->sw;
            if (iw >= p->W) continue;
            int64_t row = (m * p->KH + kh) * p->KW + kw;
            acc += (uint32_t)p->col[row * p->col_ld + img * p->Pin + ih * p->W + iw];
        }
    }
    int64_t y = img * p->y_img_stride + ((p->m0 + m) * p->OH + oh) * p->OW + ow;
    q8cu_epi_store(&p->e, (int32_t)acc, p->m0 + m, p->y, y);
}

Q8CU_ELEMENTWISE(col2im, q8cu_col2im_args, col2im_elem)

extern "C" cudaError_t q8cu_col2im(const q8cu_stream *s, const q8cu_col2im_args *p) {
    return col2im_launch(s, p, p->nimg * p->Mg * p->OH * p->OW);
}
