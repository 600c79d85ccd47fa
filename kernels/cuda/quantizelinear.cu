/* QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point),
 * int8 or uint8, per tensor or per axis; exactly q8_round_sat of
 * kernels/common/requant.h: IEEE division, NaN -> 0, clamp to +-2^22, the
 * 1.5 * 2^23 rounding (the explicit _rn intrinsics keep nvcc from merging
 * or reordering the two additions), then zero point and saturation. */
#include "common.cuh"

__host__ __device__ static inline float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

__host__ __device__ static inline int32_t round_sat(float v, int32_t zp, int32_t lo, int32_t hi) {
    if (v != v) v = 0;
    v = v > 4194304.0f ? 4194304.0f : v < -4194304.0f ? -4194304.0f : v;
    v = add_rn(add_rn(v, 12582912.0f), -12582912.0f);
    int32_t q = (int32_t)v + zp;
    return q < lo ? lo : q > hi ? hi : q;
}

__host__ __device__ static inline void quant_elem(const q8cu_quant_args *p, int64_t i) {
    int64_t c, rem;
    q8cu_divmod(q8cu_divmod(i, p->inner, &rem), p->count, &c);
    float v = p->in_i32 ? (float)((const int32_t *)p->x)[i] : ((const float *)p->x)[i];
    if (p->out_i8) {
        int32_t z = p->zp ? ((const int8_t *)p->zp)[c] : 0;
        ((int8_t *)p->y)[i] = (int8_t)round_sat(q8cu_div(v, p->scale[c]), z, -128, 127);
    } else {
        int32_t z = p->zp ? ((const uint8_t *)p->zp)[c] : 0;
        ((uint8_t *)p->y)[i] = (uint8_t)round_sat(q8cu_div(v, p->scale[c]), z, 0, 255);
    }
}

Q8CU_ELEMENTWISE(quant, q8cu_quant_args, quant_elem)

extern "C" cudaError_t q8cu_quantize(const q8cu_stream *s, const q8cu_quant_args *p) {
    return quant_launch(s, p, p->n);
}
