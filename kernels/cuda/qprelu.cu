/* q8.QPRelu (src/core/ops/qprelu.h; the CPU: kernels/cpu/ops/qprelu.c): PRelu
 * of an int8 value as DequantizeLinear -> PRelu -> QuantizeLinear compute it
 * in float32 (IEEE products and division, --fmad=false), then
 * QuantizeLinear's rounding: the CPU's bytes. May run in place on X. */
#include "common.cuh"

__host__ __device__ static inline void qprelu_elem(const q8cu_qprelu_args *p, int64_t i) {
    int64_t c = 0;
    if (p->channels > 1) {
        int64_t rem, plane = q8cu_divmod(i, p->inner, &rem);
        c = plane % p->channels;
    }
    float v = (float)p->x[i] * p->sx;
    v = v < 0 ? v * p->slope[c] : v;
    p->y[i] = (int8_t)q8cu_round_sat(q8cu_div(v, p->sy), 0, -128, 127);
}

Q8CU_ELEMENTWISE(qprelu, q8cu_qprelu_args, qprelu_elem)

extern "C" cudaError_t q8cu_qprelu(const q8cu_stream *s, const q8cu_qprelu_args *p) {
    return qprelu_launch(s, p, p->n);
}
