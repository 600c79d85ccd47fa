#include "fused_act.h"

#include "clones.h"

#include "vmath.h"
#include "vmath_x86.h"

#include <math.h>
#include <string.h>

/* Built without trapping math (FP exception flags are not part of q8's
 * results; CMakeLists.txt): GCC then if-converts the ?: loops below and
 * vectorizes them in every clone at its own width; with it, only AVX-512
 * masks did, and HardSwish ran scalar on AVX2 (a sixth of MobileNetV3's
 * instructions there). No contraction into FMA: the vectorized body was
 * not contracted where the scalar tail was, so a value depended on its
 * position; now every clone and position rounds a*x + b twice, as AVX2
 * always did. File options rather than an optimize attribute, which kept
 * vmath.h's functions from being inlined (unary.c). act_row is inlined
 * into each clone below. */
static inline __attribute__((always_inline)) void act_row(const q8_act *a, float *x, int64_t len) {
    switch (a->kind) {
    case Q8_ACT_NONE: break;
    case Q8_ACT_RELU:
        /* the Relu op's form (unary.c): NaN and -0 stay, as unfused */
        for (int64_t i = 0; i < len; i++) x[i] = x[i] < 0.0f ? 0.0f : x[i];
        break;
    case Q8_ACT_CLIP: {
        float lo = a->p0, hi = a->p1;
        /* NaN stays NaN, as in Clip. */
        for (int64_t i = 0; i < len; i++) x[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
        break;
    }
    case Q8_ACT_LEAKY_RELU: {
        float al = a->p0;
        for (int64_t i = 0; i < len; i++) x[i] = x[i] < 0.0f ? x[i] * al : x[i];
        break;
    }
    case Q8_ACT_SIGMOID:
        /* the Sigmoid op's form (unary.c): a fused Sigmoid has its bits,
         * vectorized (libm's expf here was one call per element) */
        q8_sigmoid_f32(x, x, len);
        break;
    case Q8_ACT_HARD_SIGMOID: {
        float al = a->p0, be = a->p1;
        for (int64_t i = 0; i < len; i++) {
            float v = al * x[i] + be;
            x[i] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        break;
    }
    case Q8_ACT_HARD_SWISH: {
        /* the HardSwish op's formula exactly (kernels/cpu/ops/unary.c) */
        float al = a->p0, be = a->p1;
        for (int64_t i = 0; i < len; i++) {
            float v = x[i], h = al * v + be;
            x[i] = h <= 0.0f ? -0.0f : h >= 1.0f ? v : v * h;
        }
        break;
    }
    }
}

Q8_CLONES void q8_act_apply(const q8_act *a, float *x, int64_t len) { act_row(a, x, len); }

Q8_CLONES void q8_act_apply_block(const q8_act *a, float *x, int64_t rows, int64_t cols,
                                  int64_t ld, const float *bias_rows,
                                  const float *bias_cols) {
    for (int64_t i = 0; i < rows; i++) {
        float *restrict r = x + i * ld;
        if (bias_rows) {
            float b = bias_rows[i];
            for (int64_t j = 0; j < cols; j++) r[j] += b;
        } else if (bias_cols) {
            for (int64_t j = 0; j < cols; j++) r[j] += bias_cols[j];
        }
        act_row(a, r, cols);
    }
}
