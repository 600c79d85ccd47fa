/* INT8 im2col for q8.QConv (one group, a chunk of images): the GEMM's
 * K-contiguous operand col[r][k], r = img * P + output pixel,
 * k = (c * KH + kh) * KW + kw. Padding (the quantized zero), k >= K and
 * the rows past nimg * P (cuBLASLt wants m a multiple of 4) are 0. For a
 * 1x1 stride-1 conv this is a plain transpose of the NCHW input. One
 * thread per col byte; consecutive threads write consecutive bytes. */
#include "common.cuh"

__host__ __device__ static inline void im2col_elem(const q8cu_im2col_args *p, int64_t t) {
    int64_t k = t % p->kp, r = t / p->kp;
    int8_t v = 0;
    if (k < p->K && r < p->nimg * p->P) {
        int64_t img = r / p->P, pix = r % p->P;
        int64_t oh = pix / p->OW, ow = pix % p->OW;
        int64_t kw = k % p->KW, kh = (k / p->KW) % p->KH, c = k / (p->KW * p->KH);
        int64_t ih = oh * p->sh - p->pt + kh * p->dh;
        int64_t iw = ow * p->sw - p->pl + kw * p->dw;
        if (ih >= 0 && ih < p->H && iw >= 0 && iw < p->W)
            v = p->x[img * p->img_stride + (c * p->H + ih) * p->W + iw];
    }
    p->col[t] = v;
}

Q8CU_ELEMENTWISE(im2col, q8cu_im2col_args, im2col_elem)

extern "C" cudaError_t q8cu_im2col(const q8cu_stream *s, const q8cu_im2col_args *p) {
    return im2col_launch(s, p, p->rows_pad * p->kp);
}
