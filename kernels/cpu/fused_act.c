#include "fused_act.h"

#include "clones.h"

#include <math.h>
#include <string.h>

static inline float sigmoid(float x) {
    /* Stable on both sides: exp never overflows. */
    if (x >= 0) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

/* Without trapping math (FP exception flags are not part of q8's results)
 * GCC if-converts the ?: loops below and vectorizes them in every clone at
 * its own width; with it, only AVX-512 masks did, and HardSwish ran scalar
 * on AVX2 (a sixth of MobileNetV3's instructions there). No contraction
 * into FMA: the vectorized body was not contracted where the scalar tail
 * was, so a value depended on its position; now every clone and position
 * rounds a*x + b twice, as AVX2 always did (AVX-512 results move by <= 1
 * ulp of that intermediate). */
#if defined(__GNUC__) && !defined(__clang__)
#define ACT_OPTS __attribute__((optimize("no-trapping-math", "fp-contract=off")))
#else
#define ACT_OPTS /* clang: no such attribute; it ignores FP traps by default */
#endif

/* Inlined into each clone below (same optimize options, so it may be). */
ACT_OPTS static inline __attribute__((always_inline)) void act_row(const q8_act *a, float *x,
                                                                   int64_t len) {
    switch (a->kind) {
    case Q8_ACT_NONE: break;
    case Q8_ACT_RELU:
        for (int64_t i = 0; i < len; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
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
        for (int64_t i = 0; i < len; i++) x[i] = sigmoid(x[i]);
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

ACT_OPTS Q8_CLONES void q8_act_apply(const q8_act *a, float *x, int64_t len) { act_row(a, x, len); }

ACT_OPTS Q8_CLONES void q8_act_apply_block(const q8_act *a, float *x, int64_t rows, int64_t cols,
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
