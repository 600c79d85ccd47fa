/* q8.EwChain: elementwise float steps in one pass (src/core/ops/ewchain.h;
 * the CPU: kernels/cpu/ops/ewchain.c). Each step is
 * kernels/common/ewchain_eval.h's, the same text the CPU compiles; with
 * --fmad=false and IEEE division the same bits, QuantizeLinear's rounding
 * (q8cu_round_sat) at an int8 / uint8 end; a BatchNormalization taken in
 * first is batchnorm.cu's x * k[c] + m[c]. */
#include "common.cuh"
#include "ewchain_eval.h"

__host__ __device__ static inline void ewchain_elem(const q8cu_ewchain_args *p, int64_t i) {
    float v;
    if (p->xt == Q8CU_T_I8) v = (float)((int32_t)((const int8_t *)p->x)[i] - p->xz) * p->xs;
    else if (p->xt == Q8CU_T_U8) v = (float)((int32_t)((const uint8_t *)p->x)[i] - p->xz) * p->xs;
    else if (p->xt == Q8CU_T_I32) v = (float)((const int32_t *)p->x)[i] * p->xs;
    else v = ((const float *)p->x)[i];
    if (p->bn_k) {
        int64_t c, rem;
        q8cu_divmod(q8cu_divmod(i, p->bn_inner, &rem), p->bn_c, &c);
        v = v * p->bn_k[c] + p->bn_m[c];
    }
    for (int k = 0; k < p->n_steps; k++)
        v = q8_ew_step_one(p->steps[k].kind, p->steps[k].c0, p->steps[k].c1, v);
    if (p->yt == Q8CU_T_I8)
        ((int8_t *)p->y)[i] = (int8_t)q8cu_round_sat(q8cu_div(v, p->ys), p->yz, -128, 127);
    else if (p->yt == Q8CU_T_U8)
        ((uint8_t *)p->y)[i] = (uint8_t)q8cu_round_sat(q8cu_div(v, p->ys), p->yz, 0, 255);
    else
        ((float *)p->y)[i] = v;
}

Q8CU_ELEMENTWISE(ewchain, q8cu_ewchain_args, ewchain_elem)

extern "C" cudaError_t q8cu_ewchain(const q8cu_stream *s, const q8cu_ewchain_args *p) {
    return ewchain_launch(s, p, p->n);
}
