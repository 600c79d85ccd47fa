/* Requantization parameters and the scalar epilogue. No FMA contraction:
 * the SIMD paths do the same float operations one by one. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC optimize("fp-contract=off")
#endif

#include "requant.h"

#include <math.h>

#include "common.h"

q8_requant q8_requant_make(double M) {
    Q8_ASSERT(M > 0 && isfinite(M));
    int e;
    double m = frexp(M, &e); /* M = m * 2^e, m in [0.5, 1) */
    int64_t mult = (int64_t)round(m * 2147483648.0);
    if (mult == (int64_t)1 << 31) {
        mult = (int64_t)1 << 30;
        e += 1;
    }
    int shift = 31 - e;
    if (shift > 62) return (q8_requant){0, 62}; /* |acc * M| < 1/2: always 0 */
    if (shift < 1) shift = 1; /* M >= 2^30: any nonzero acc saturates anyway */
    return (q8_requant){(int32_t)mult, shift};
}

static int32_t clamp_i8(double v) {
    if (v != v) return 0;
    return v < -128 ? -128 : v > 127 ? 127 : (int32_t)v;
}

void q8_act_i8_bounds(const q8_qact *act, float sy, int32_t *lo, int32_t *hi) {
    *lo = -128;
    *hi = 127;
    if (act->kind == Q8_QACT_RELU) {
        *lo = 0;
    } else if (act->kind == Q8_QACT_CLIP) {
        /* round half to even of the bound in the output's scale */
        int32_t a = clamp_i8(nearbyint((double)act->lo / sy));
        int32_t b = clamp_i8(nearbyint((double)act->hi / sy));
        *lo = a > -128 ? a : -128;
        *hi = b < 127 ? b : 127;
    }
}

void q8_act_leaky_lut(float alpha, int8_t lut[128]) {
    for (int y = -128; y < 0; y++) lut[y + 128] = (int8_t)clamp_i8(roundf((float)y * alpha));
}

void q8_epilogue_set_f32_act(q8_epilogue *e, const q8_qact *act) {
    e->clip = act->kind == Q8_QACT_RELU || act->kind == Q8_QACT_CLIP;
    e->leaky = act->kind == Q8_QACT_LEAKY;
    e->flo = act->kind == Q8_QACT_RELU ? 0.0f : act->lo;
    e->fhi = act->kind == Q8_QACT_RELU ? INFINITY : act->hi;
    e->alpha = act->alpha;
}

float q8_epi_f32(const q8_epilogue *e, int32_t acc, int64_t c) {
    float y = (float)acc * e->scale[c];
    if (e->clip) {
        y = y > e->flo ? y : e->flo;
        y = y < e->fhi ? y : e->fhi;
    }
    if (e->leaky) y = y < 0.0f ? y * e->alpha : y;
    return y;
}

void q8_epilogue_row_c(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                       void *out) {
    int64_t dc = e->chan == Q8_CH_COL; /* channel step per value */
    switch (e->kind) {
    case Q8_EPI_I32: {
        int32_t *o = out;
        for (int64_t j = 0; j < n; j++) o[j] = acc[j];
        break;
    }
    case Q8_EPI_I8: {
        int8_t *o = out;
        for (int64_t j = 0; j < n; j++) o[j] = q8_epi_i8(e, acc[j], ch0 + dc * j);
        break;
    }
    case Q8_EPI_F32: {
        float *o = out;
        for (int64_t j = 0; j < n; j++) o[j] = q8_epi_f32(e, acc[j], ch0 + dc * j);
        break;
    }
    }
}
