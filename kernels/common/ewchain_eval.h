/* One step of q8.EwChain (src/core/ops/ewchain.h) on one float, the
 * definition the CPU loops (kernels/cpu/ops/ewchain.c) and the CUDA kernel
 * (kernels/cuda/ewchain.cu) both compile: the arithmetic of the op each step
 * replaces, built without FMA contraction (CMakeLists.txt, cuda.cmake's
 * --fmad=false) and with IEEE division, so the bits are those of the
 * unfused nodes (kernels/cpu/ops/arith.c, unary.c, clip.c). */
#ifndef Q8_KERNELS_COMMON_EWCHAIN_EVAL_H
#define Q8_KERNELS_COMMON_EWCHAIN_EVAL_H

#include "ops/ewchain_kinds.h"
#include "vmath.h"

#ifdef __CUDACC__
#define Q8_EW_INLINE static __host__ __device__ __forceinline__
#else
#define Q8_EW_INLINE static inline __attribute__((always_inline))
#endif

Q8_EW_INLINE float q8_ew_relu(float v) { return v < 0 ? 0.0f : v; }
Q8_EW_INLINE float q8_ew_leaky(float v, float a) { return v < 0 ? a * v : v; }
Q8_EW_INLINE float q8_ew_clip(float v, float lo, float hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}
Q8_EW_INLINE float q8_ew_hsigmoid(float v, float a, float b) {
    float h = a * v + b;
    return h < 0 ? 0.0f : h > 1 ? 1.0f : h;
}
/* piecewise so that -inf gives -0 (unary.c's hard_swish) */
Q8_EW_INLINE float q8_ew_hswish(float v, float a, float b) {
    float h = a * v + b;
    return h <= 0 ? -0.0f : h >= 1 ? v : v * h;
}
/* A Sigmoid node, then the Mul of its input by it (c0 1: Mul(sigmoid, v)).
 * A NaN v gives the NaN of the Mul's first operand, quieted, as the unfused
 * Mul returns it (x86 keeps the first operand's NaN; the compiler may order
 * the operands of v * s either way, so the choice is made here; s is quiet
 * already). */
Q8_EW_INLINE float q8_ew_swish(float v, float c0) {
    float s = q8_vsigmoid(v);
    float qv = q8_vm_float(q8_vm_bits(v) | 0x00400000); /* v's NaN, quiet */
    return v != v ? (c0 != 0.0f ? s : qv) : v * s;
}

Q8_EW_INLINE float q8_ew_step_one(int32_t kind, float c0, float c1, float v) {
    switch (kind) {
    case Q8_EW_MUL: return v * c0;
    case Q8_EW_ADD: return v + c0;
    case Q8_EW_SUB: return v - c0;
    case Q8_EW_RSUB: return c0 - v;
    case Q8_EW_DIV: return v / c0;
    case Q8_EW_RDIV: return c0 / v;
    case Q8_EW_RELU: return q8_ew_relu(v);
    case Q8_EW_LEAKY_RELU: return q8_ew_leaky(v, c0);
    case Q8_EW_CLIP: return q8_ew_clip(v, c0, c1);
    case Q8_EW_HARD_SIGMOID: return q8_ew_hsigmoid(v, c0, c1);
    case Q8_EW_HARD_SWISH: return q8_ew_hswish(v, c0, c1);
    case Q8_EW_SWISH: return q8_ew_swish(v, c0);
    default: return v;
    }
}

#endif
