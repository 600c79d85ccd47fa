/* DequantizeLinear: y = (float)(x - zero_point) * scale for int8, uint8 and
 * int32 x, per tensor or per axis (as kernels/cpu/ops/dequantizelinear.c: the
 * difference in 64 bits, one rounding to float, one multiply). May run in
 * place (int32 -> float32): each element is read before it is written. */
#include "common.cuh"

__host__ __device__ static inline int64_t elem(int t, const void *d, int64_t i) {
    return t == Q8CU_T_I8 ? ((const int8_t *)d)[i]
                          : t == Q8CU_T_U8 ? ((const uint8_t *)d)[i] : ((const int32_t *)d)[i];
}

__host__ __device__ static inline void dequant_elem(const q8cu_dequant_args *p, int64_t i) {
    int64_t c, rem;
    q8cu_divmod(q8cu_divmod(i, p->inner, &rem), p->count, &c);
    int64_t z = p->zp ? elem(p->xt, p->zp, c) : 0;
    p->y[i] = (float)(elem(p->xt, p->x, i) - z) * p->scale[c];
}

Q8CU_ELEMENTWISE(dequant, q8cu_dequant_args, dequant_elem)

extern "C" cudaError_t q8cu_dequantize(const q8cu_stream *s, const q8cu_dequant_args *p) {
    return dequant_launch(s, p, p->n);
}
