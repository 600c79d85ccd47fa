/* Requantization of exact INT32 accumulators (docs/int8-ops.md): the
 * fixed-point multiplier for INT8 outputs, the FP32 output scale, fused
 * activations, and the scalar epilogue every SIMD path (and the CUDA
 * epilogue kernel) must reproduce bit for bit. Host C, no ISA code. */
#ifndef Q8_KERNELS_COMMON_REQUANT_H
#define Q8_KERNELS_COMMON_REQUANT_H

#include <stdbool.h>
#include <stdint.h>

/* M = mult * 2^-shift with mult in [2^30, 2^31), shift in [1, 62]; a
 * multiplier too small to ever give a nonzero output has mult 0. */
typedef struct q8_requant {
    int32_t mult;
    int32_t shift;
} q8_requant;

/* M must be positive and finite (infer checks the scales it comes from). */
q8_requant q8_requant_make(double M);

/* round_half_up(acc * mult / 2^shift), exact in 64 bits (|acc * mult| < 2^62;
 * >> of a negative value is arithmetic in GCC and Clang). Not clamped. */
static inline int64_t q8_requant_raw(int32_t acc, int32_t mult, int32_t shift) {
    return ((int64_t)acc * mult + ((int64_t)1 << (shift - 1))) >> shift;
}

/* round_half_even(v) + zp saturated to [lo, hi]; NaN counts as 0 (the
 * rounding of QuantizeLinear and the ONNX integer ops). The rounding adds
 * and removes 1.5 * 2^23 (exact for |v| <= 2^22, where the float grid is the
 * integers; larger values saturate anyway). */
static inline int32_t q8_round_sat(float v, int32_t zp, int32_t lo, int32_t hi) {
    if (v != v) v = 0;
    v = v > 4194304.0f ? 4194304.0f : v < -4194304.0f ? -4194304.0f : v;
    v = (v + 12582912.0f) - 12582912.0f;
    int32_t q = (int32_t)v + zp;
    return q < lo ? lo : q > hi ? hi : q;
}

/* The fused activation as the INT8 epilogue applies it (made from the
 * core's q8_act, src/core/ops/act.h, by q8_qact_of in qepi.h). */
typedef enum q8_qact_kind {
    Q8_QACT_NONE = 0,
    Q8_QACT_RELU,
    Q8_QACT_CLIP,
    Q8_QACT_LEAKY,
} q8_qact_kind;

typedef struct q8_qact {
    q8_qact_kind kind;
    float lo, hi;   /* Clip bounds (-inf/inf when absent) */
    float alpha;    /* LeakyRelu */
} q8_qact;

/* Where the output goes and how it is produced from the accumulator. */
typedef enum q8_epi_kind {
    Q8_EPI_I32 = 0, /* the raw accumulator */
    Q8_EPI_I8,      /* requantized, clamped, LeakyRelu via lut */
    Q8_EPI_F32,     /* (float)acc * scale, then the activation in float */
} q8_epi_kind;

/* Which GEMM index selects the per-channel parameters. */
typedef enum q8_epi_chan {
    Q8_CH_ROW = 0,  /* channel = row index i (conv: output channel rows) */
    Q8_CH_COL,      /* channel = column index j (gemm: output features) */
    Q8_CH_ONE,      /* one set of parameters for everything (QMatMul) */
} q8_epi_chan;

typedef struct q8_epilogue {
    q8_epi_kind kind;
    q8_epi_chan chan;
    /* Q8_EPI_I8 */
    const int32_t *mult, *shift;  /* per channel */
    int32_t lo, hi;               /* clamp after the shift */
    const int8_t *leaky_lut;      /* non-NULL: y < 0 becomes leaky_lut[y + 128] */
    /* Q8_EPI_F32: y = (float)acc * scale[c]; then y = y > lo ? y : lo;
     * y = y < hi ? y : hi (maxps/minps semantics); LeakyRelu:
     * y = y < 0 ? y * alpha : y. */
    const float *scale;
    bool clip, leaky;
    float flo, fhi, alpha;
} q8_epilogue;

/* Clamp bounds of an INT8 output with scale sy under act (docs/int8-ops.md). */
void q8_act_i8_bounds(const q8_qact *act, float sy, int32_t *lo, int32_t *hi);
/* LeakyRelu table for negative INT8 outputs: lut[y + 128] for y in [-128, 0). */
void q8_act_leaky_lut(float alpha, int8_t lut[128]);

/* Fill e's activation fields for an FP32 output. */
void q8_epilogue_set_f32_act(q8_epilogue *e, const q8_qact *act);

/* The scalar epilogue of one output value of channel c. */
static inline int8_t q8_epi_i8(const q8_epilogue *e, int32_t acc, int64_t c) {
    int64_t y = q8_requant_raw(acc, e->mult[c], e->shift[c]);
    y = y < e->lo ? e->lo : y;
    y = y > e->hi ? e->hi : y;
    if (e->leaky_lut && y < 0) y = e->leaky_lut[y + 128];
    return (int8_t)y;
}

float q8_epi_f32(const q8_epilogue *e, int32_t acc, int64_t c);

/* Channel of the first value of a row segment starting at output (i, j0). */
static inline int64_t q8_epi_ch0(const q8_epilogue *e, int64_t i, int64_t j0) {
    return e->chan == Q8_CH_ROW ? i : e->chan == Q8_CH_COL ? j0 : 0;
}

/* Apply the epilogue to n accumulators of one output row segment whose
 * first value has channel ch0 (the others: ch0 too for Q8_CH_ROW/ONE,
 * ch0 + j for Q8_CH_COL); writes n values of e->kind's type at out. Scalar
 * code: the portable path, and the reference of the SIMD ones. */
void q8_epilogue_row_c(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                       void *out);

#endif
