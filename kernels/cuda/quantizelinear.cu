/* QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point),
 * int8 or uint8, per tensor or per axis; exactly q8_round_sat of
 * kernels/common/requant.h: IEEE division, then q8cu_round_sat (common.cuh). */
#include "common.cuh"

__host__ __device__ static inline void quant_elem(const q8cu_quant_args *p, int64_t i) {
    int64_t c, rem;
    q8cu_divmod(q8cu_divmod(i, p->inner, &rem), p->count, &c);
    float v = p->in_i32 ? (float)((const int32_t *)p->x)[i] : ((const float *)p->x)[i];
    if (p->out_i8) {
        int32_t z = p->zp ? ((const int8_t *)p->zp)[c] : 0;
        ((int8_t *)p->y)[i] = (int8_t)q8cu_round_sat(q8cu_div(v, p->scale[c]), z, -128, 127);
    } else {
        int32_t z = p->zp ? ((const uint8_t *)p->zp)[c] : 0;
        ((uint8_t *)p->y)[i] = (uint8_t)q8cu_round_sat(q8cu_div(v, p->scale[c]), z, 0, 255);
    }
}

Q8CU_ELEMENTWISE(quant, q8cu_quant_args, quant_elem)

extern "C" cudaError_t q8cu_quantize(const q8cu_stream *s, const q8cu_quant_args *p) {
    return quant_launch(s, p, p->n);
}
