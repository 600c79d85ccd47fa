#include "fused_act.h"

#include "clones.h"

#include <math.h>
#include <string.h>

q8_status q8_act_from_node(const q8_node *n, q8_act *act, q8_error *err) {
    memset(act, 0, sizeof *act);
    const q8_attr *a = q8_attr_find(n, "_act");
    if (!a) return Q8_OK;
    if (a->type != Q8_ATTR_STRING || !a->s)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute _act must be a string");
    const char *s = a->s;
    if (strcmp(s, "Relu") == 0) {
        act->kind = Q8_ACT_RELU;
    } else if (strcmp(s, "Clip") == 0) {
        act->kind = Q8_ACT_CLIP;
        act->p0 = q8_attr_float(n, "_act_min", -INFINITY);
        act->p1 = q8_attr_float(n, "_act_max", INFINITY);
        if (act->p0 > act->p1)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "_act_min %g is above _act_max %g",
                                (double)act->p0, (double)act->p1);
    } else if (strcmp(s, "LeakyRelu") == 0) {
        act->kind = Q8_ACT_LEAKY_RELU;
        act->p0 = q8_attr_float(n, "_act_alpha", 0.01f);
    } else if (strcmp(s, "Sigmoid") == 0) {
        act->kind = Q8_ACT_SIGMOID;
    } else if (strcmp(s, "HardSigmoid") == 0) {
        act->kind = Q8_ACT_HARD_SIGMOID;
        act->p0 = q8_attr_float(n, "_act_alpha", 0.2f);
        act->p1 = q8_attr_float(n, "_act_beta", 0.5f);
    } else if (strcmp(s, "HardSwish") == 0) {
        act->kind = Q8_ACT_HARD_SWISH;
        act->p0 = 1.0f / 6.0f;
        act->p1 = 0.5f;
    } else {
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "fused activation '%s' is not supported",
                            s);
    }
    return Q8_OK;
}

static inline float sigmoid(float x) {
    /* Stable on both sides: exp never overflows. */
    if (x >= 0) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
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
