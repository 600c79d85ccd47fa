/* q8.QMul: the requantized product of an int8 tensor and an int8 tensor of
 * its shape or broadcast over its trailing dims (src/core/ops/qmul.h; the
 * CPU: kernels/cpu/ops/qmul.c), and q8.QMulF, the same in float. May run in
 * place on A. */
#include "common.cuh"

__host__ __device__ static inline void qmul_elem(const q8cu_qmul_args *p, int64_t i) {
    int32_t v = ((int32_t)p->a[i] * p->b[i / p->inner] * p->m + (1 << (p->shift - 1))) >>
                p->shift;
    p->y[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

Q8CU_ELEMENTWISE(qmul, q8cu_qmul_args, qmul_elem)

extern "C" cudaError_t q8cu_qmul(const q8cu_stream *s, const q8cu_qmul_args *p) {
    return qmul_launch(s, p, p->n);
}

/* q8.QMulF: the float product as DequantizeLinear -> Mul -> QuantizeLinear
 * compute it (qmul.h): IEEE products and division (--fmad=false), then
 * QuantizeLinear's rounding: the CPU's bytes. */
__host__ __device__ static inline void qmulf_elem(const q8cu_qmulf_args *p, int64_t i) {
    int64_t rem, o = q8cu_divmod(i, p->inner, &rem);
    float fa = (float)p->a[i] * p->sa, fb = (float)p->b[o] * p->sb;
    p->y[i] = (int8_t)q8cu_round_sat(q8cu_div(fa * fb, p->sy), 0, -128, 127);
}

Q8CU_ELEMENTWISE(qmulf, q8cu_qmulf_args, qmulf_elem)

extern "C" cudaError_t q8cu_qmulf(const q8cu_stream *s, const q8cu_qmulf_args *p) {
    return qmulf_launch(s, p, p->n);
}
