/* BatchNormalization (inference): y = x * a[c] + b[c], where the host
 * computed a = scale / sqrtf(var + eps) and b = B - mean * a in float,
 * exactly as kernels/cpu/ops/batchnorm.c does per channel. In place is safe. */
#include "common.cuh"

__host__ __device__ static inline void affine_elem(const q8cu_affine_args *p, int64_t i) {
    int64_t c, rem;
    q8cu_divmod(q8cu_divmod(i, p->inner, &rem), p->C, &c);
    p->y[i] = p->x[i] * p->a[c] + p->b[c];
}

Q8CU_ELEMENTWISE(affine, q8cu_affine_args, affine_elem)

extern "C" cudaError_t q8cu_affine(const q8cu_stream *s, const q8cu_affine_args *p) {
    return affine_launch(s, p, p->n);
}
