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

/* Plain loops with ?: that compute in one branch are not vectorized under
 * -ftrapping-math (the multiply may not be hoisted), so the activations with
 * a multiply in a branch run 8 lanes at a time with explicit masks; the tail
 * goes through the same vector code on a padded copy, so a value never
 * depends on where it falls (a scalar tail would round p0*x + p1 differently
 * where the compiler contracts it into an FMA). HardSwish's scalar loop was
 * a sixth of MobileNetV3's instructions. */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias));

/* Macros, not functions: a 32-byte vector argument outside an AVX clone
 * changes the ABI (GCC warns). */
#define SEL8(m, a, b) ((v8f)(((v8i)(a) & (m)) | ((v8i)(b) & ~(m))))
#define SPLAT8(v) ((v8f){v, v, v, v, v, v, v, v})

/* Runs BODY (which maps v8f v to v8f r) over x[0..len). */
#define MAP8(x, len, BODY)                                                                     \
    do {                                                                                       \
        int64_t i_ = 0;                                                                        \
        for (; i_ + 8 <= (len); i_ += 8) {                                                     \
            v8f v = *(v8u *)((x) + i_), r;                                                     \
            BODY;                                                                              \
            *(v8u *)((x) + i_) = r;                                                            \
        }                                                                                      \
        if (i_ < (len)) {                                                                      \
            float t_[8] = {0};                                                                 \
            memcpy(t_, (x) + i_, sizeof(float) * (size_t)((len) - i_));                        \
            v8f v = *(v8u *)t_, r;                                                             \
            BODY;                                                                              \
            *(v8u *)t_ = r;                                                                    \
            memcpy((x) + i_, t_, sizeof(float) * (size_t)((len) - i_));                        \
        }                                                                                      \
    } while (0)

/* the HardSwish op's formula (kernels/cpu/ops/unary.c):
 * h <= 0 ? -0.0f : h >= 1 ? v : v * h, with h = al*v + be */
/* always_inline: inlined into each clone of q8_act_apply, so it gets its
 * vector width (a plain static function stays baseline SSE2). */
#define INLINE static inline __attribute__((always_inline))

INLINE void hard_swish(float al, float be, float *x, int64_t len) {
    v8f va = SPLAT8(al), vb = SPLAT8(be), zero = SPLAT8(0.0f), one = SPLAT8(1.0f);
    v8f mzero = SPLAT8(-0.0f);
    MAP8(x, len, {
        v8f h = va * v + vb;
        r = SEL8(h <= zero, mzero, SEL8(h >= one, v, v * h));
    });
}

INLINE void leaky_relu(float al, float *x, int64_t len) {
    v8f va = SPLAT8(al), zero = SPLAT8(0.0f);
    MAP8(x, len, r = SEL8(v < zero, v * va, v));
}

Q8_CLONES void q8_act_apply(const q8_act *a, float *x, int64_t len) {
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
    case Q8_ACT_LEAKY_RELU: leaky_relu(a->p0, x, len); break;
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
    case Q8_ACT_HARD_SWISH: hard_swish(a->p0, a->p1, x, len); break;
    }
}
