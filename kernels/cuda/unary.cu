/* Unary elementwise ops (Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish,
 * Tanh, Gelu, Erf, Sqrt, Exp, Log, Abs, Neg, Reciprocal, Clip) on float32,
 * and Relu / Clip on int8 (the quantized path, exact). The formulas are
 * those of kernels/cpu/ops/unary.c and clip.c, written in the same forms
 * (HardSwish piecewise so that -inf gives -0; Exp, Sigmoid, Tanh, Erf,
 * Gelu and Log the CPU's own functions, kernels/common/vmath.h: all these
 * match it exactly); the tanh
 * form of Gelu (in double) are CUDA's math library, a few ulp from glibc's
 * at most. One thread per element; in place is safe. */
#include "common.cuh"
#include "vmath.h"

__host__ __device__ static inline float gelu_tanhf_(float v) {
    if (isinf(v)) return v > 0 ? v : -0.0f;
    double x = v, u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return (float)(x / (1.0 + exp(-2.0 * u)));
}

__host__ __device__ static inline void unary_elem(const q8cu_unary_args *p, int64_t i) {
    if (p->kind == Q8CU_U_RELU_I8 || p->kind == Q8CU_U_CLIP_I8) {
        int32_t v = ((const int8_t *)p->x)[i];
        int32_t lo = p->kind == Q8CU_U_RELU_I8 ? 0 : p->ilo;
        int32_t hi = p->kind == Q8CU_U_RELU_I8 ? 127 : p->ihi;
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        ((int8_t *)p->y)[i] = (int8_t)v;
        return;
    }
    float v = ((const float *)p->x)[i], r, h;
    float al = p->alpha, be = p->beta;
    switch (p->kind) {
    case Q8CU_U_RELU: r = v < 0 ? 0.0f : v; break;
    case Q8CU_U_LEAKY_RELU: r = v < 0 ? al * v : v; break;
    case Q8CU_U_SIGMOID: r = q8_vsigmoid(v); break;
    case Q8CU_U_HARD_SIGMOID:
        h = al * v + be;
        r = h < 0 ? 0.0f : h > 1 ? 1.0f : h;
        break;
    case Q8CU_U_HARD_SWISH:
        h = al * v + be;
        r = h <= 0 ? -0.0f : h >= 1 ? v : v * h;
        break;
    case Q8CU_U_TANH: r = q8_vtanh(v); break;
    case Q8CU_U_GELU: r = q8_vgelu(v); break;
    case Q8CU_U_GELU_TANH: r = gelu_tanhf_(v); break;
    case Q8CU_U_ERF: r = q8_verf(v); break;
    case Q8CU_U_SQRT: r = sqrtf(v); break;
    case Q8CU_U_EXP: r = q8_vexp(v); break;
    case Q8CU_U_LOG: r = q8_vlog(v); break;
    case Q8CU_U_ABS: r = fabsf(v); break;
    case Q8CU_U_NEG: r = -v; break;
    case Q8CU_U_RECIPROCAL: r = q8cu_div(1.0f, v); break;
    case Q8CU_U_CLIP:
        r = v < p->lo ? p->lo : v;
        r = r > p->hi ? p->hi : r;
        break;
    default: r = v; break;
    }
    ((float *)p->y)[i] = r;
}

Q8CU_ELEMENTWISE(unary, q8cu_unary_args, unary_elem)

extern "C" cudaError_t q8cu_unary(const q8cu_stream *s, const q8cu_unary_args *p) {
    return unary_launch(s, p, p->n);
}
