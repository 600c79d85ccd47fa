/* aarch64 NEON (baseline ASIMD): the requantization epilogue of one output
 * row segment (q8_epilogue_row_c's arithmetic, bit for bit) and the stride-1
 * and stride-2 depthwise rows, for the NEONDOT and NEONI8MM paths (igemm.h).
 *
 * INT8: SMULL gives the exact 64-bit acc * mult; SRSHL by -shift is
 * round_half_up(x / 2^shift) with the rounding constant added at full
 * precision, i.e. q8_requant_raw; SQXTN to int32 saturates, which does not
 * change the clamp to [lo, hi] that follows (lo, hi are int8 values). The
 * LeakyRelu table (128 entries) is two TBL/TBX lookups of 64 bytes.
 * FP32: (float)acc * scale, then the clamp and LeakyRelu as compare + select
 * (the scalar ?: semantics, NaN included), no fused multiply-add. */
#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "igemm.h"

static inline int32x4_t requant4(int32x4_t acc, int32x4_t mult, int32x4_t shift,
                                 int32x4_t lo, int32x4_t hi) {
    int64x2_t p0 = vmull_s32(vget_low_s32(acc), vget_low_s32(mult));
    int64x2_t p1 = vmull_high_s32(acc, mult);
    p0 = vrshlq_s64(p0, vnegq_s64(vmovl_s32(vget_low_s32(shift))));
    p1 = vrshlq_s64(p1, vnegq_s64(vmovl_high_s32(shift)));
    int32x4_t y = vcombine_s32(vqmovn_s64(p0), vqmovn_s64(p1));
    return vminq_s32(vmaxq_s32(y, lo), hi);
}

/* y < 0: lut[y + 128] (y in [-128, 127]). */
static inline int8x16_t leaky16(int8x16_t y, const int8x16x4_t t[2]) {
    uint8x16_t idx = veorq_u8(vreinterpretq_u8_s8(y), vdupq_n_u8(0x80));
    int8x16_t v = vqtbl4q_s8(t[0], idx);
    v = vqtbx4q_s8(v, t[1], vsubq_u8(idx, vdupq_n_u8(64)));
    return vbslq_s8(vcltzq_s8(y), v, y);
}

static void epi_i8(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                   int8_t *o) {
    bool col = e->chan == Q8_CH_COL;
    const int32x4_t lo = vdupq_n_s32(e->lo), hi = vdupq_n_s32(e->hi);
    int32x4_t mult = vdupq_n_s32(e->mult[ch0]), shift = vdupq_n_s32(e->shift[ch0]);
    int8x16x4_t t[2];
    if (e->leaky_lut) {
        t[0] = vld1q_s8_x4(e->leaky_lut);
        t[1] = vld1q_s8_x4(e->leaky_lut + 64);
    }
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        int32x4_t y[4];
        for (int q = 0; q < 4; q++) {
            if (col) {
                mult = vld1q_s32(e->mult + ch0 + j + 4 * q);
                shift = vld1q_s32(e->shift + ch0 + j + 4 * q);
            }
            y[q] = requant4(vld1q_s32(acc + j + 4 * q), mult, shift, lo, hi);
        }
        int16x8_t h0 = vcombine_s16(vmovn_s32(y[0]), vmovn_s32(y[1]));
        int16x8_t h1 = vcombine_s16(vmovn_s32(y[2]), vmovn_s32(y[3]));
        int8x16_t b = vcombine_s8(vmovn_s16(h0), vmovn_s16(h1));
        if (e->leaky_lut) b = leaky16(b, t);
        vst1q_s8(o + j, b);
    }
    for (; j < n; j++) o[j] = q8_epi_i8(e, acc[j], ch0 + (col ? j : 0));
}

static void epi_f32(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                    float *o) {
    bool col = e->chan == Q8_CH_COL;
    const float32x4_t flo = vdupq_n_f32(e->flo), fhi = vdupq_n_f32(e->fhi);
    const float32x4_t alpha = vdupq_n_f32(e->alpha);
    float32x4_t s = vdupq_n_f32(e->scale[ch0]);
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        if (col) s = vld1q_f32(e->scale + ch0 + j);
        float32x4_t y = vmulq_f32(vcvtq_f32_s32(vld1q_s32(acc + j)), s);
        if (e->clip) {
            y = vbslq_f32(vcgtq_f32(y, flo), y, flo);
            y = vbslq_f32(vcltq_f32(y, fhi), y, fhi);
        }
        if (e->leaky) y = vbslq_f32(vcltzq_f32(y), vmulq_f32(y, alpha), y);
        vst1q_f32(o + j, y);
    }
    for (; j < n; j++) o[j] = q8_epi_f32(e, acc[j], ch0 + (col ? j : 0));
}

void q8_ig_epi_neon(const q8_epilogue *e, const int32_t *acc, int64_t n, int64_t ch0,
                    void *out) {
    switch (e->kind) {
    case Q8_EPI_I8: epi_i8(e, acc, n, ch0, out); break;
    case Q8_EPI_F32: epi_f32(e, acc, n, ch0, out); break;
    default: memcpy(out, acc, sizeof(int32_t) * (size_t)n);
    }
}

/* 16 outputs: x widened to int16, SMLAL by each tap into 4 x 4 int32. */
static inline void dw16(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                        int32_t init, int32_t *out) {
    int32x4_t a0 = vdupq_n_s32(init), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < taps; t++) {
        int8x16_t v = vld1q_s8(x + off[t]);
        int16x8_t l = vmovl_s8(vget_low_s8(v)), h = vmovl_high_s8(v);
        int16_t wt = w[t];
        a0 = vmlal_n_s16(a0, vget_low_s16(l), wt);
        a1 = vmlal_high_n_s16(a1, l, wt);
        a2 = vmlal_n_s16(a2, vget_low_s16(h), wt);
        a3 = vmlal_high_n_s16(a3, h, wt);
    }
    vst1q_s32(out, a0);
    vst1q_s32(out + 4, a1);
    vst1q_s32(out + 8, a2);
    vst1q_s32(out + 12, a3);
}

/* Stride 2: outputs o..o+15 read bytes 0, 2, .., 30 from x + off[t]: the
 * even bytes of two 16-byte loads at 0 and 15 (no byte past the last one
 * the definition reads), gathered by one TBL. */
static inline void dw16_s2(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                           int32_t init, int32_t *out) {
    static const uint8_t even[16] = {0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31};
    const uint8x16_t idx = vld1q_u8(even);
    int32x4_t a0 = vdupq_n_s32(init), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < taps; t++) {
        int8x16x2_t b = {{vld1q_s8(x + off[t]), vld1q_s8(x + off[t] + 15)}};
        int8x16_t v = vqtbl2q_s8(b, idx);
        int16x8_t l = vmovl_s8(vget_low_s8(v)), h = vmovl_high_s8(v);
        int16_t wt = w[t];
        a0 = vmlal_n_s16(a0, vget_low_s16(l), wt);
        a1 = vmlal_high_n_s16(a1, l, wt);
        a2 = vmlal_n_s16(a2, vget_low_s16(h), wt);
        a3 = vmlal_high_n_s16(a3, h, wt);
    }
    vst1q_s32(out, a0);
    vst1q_s32(out + 4, a1);
    vst1q_s32(out + 8, a2);
    vst1q_s32(out + 12, a3);
}

void q8_dw_row_s2_neon(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                       int32_t init, int64_t n, int32_t *out) {
    int64_t o = 0;
    for (; o + 16 <= n; o += 16) dw16_s2(x + 2 * o, off, w, taps, init, out + o);
    if (o == n) return;
    if (n >= 16) { /* a ragged end: one more block, overlapping the last */
        dw16_s2(x + 2 * (n - 16), off, w, taps, init, out + n - 16);
        return;
    }
    for (; o < n; o++) {
        uint32_t s = (uint32_t)init;
        for (int64_t t = 0; t < taps; t++) s += (uint32_t)(w[t] * x[off[t] + 2 * o]);
        out[o] = (int32_t)s;
    }
}

void q8_dw_row_neon(const int8_t *x, const int64_t *off, const int8_t *w, int64_t taps,
                    int32_t init, int64_t n, int32_t *out) {
    int64_t o = 0;
    for (; o + 16 <= n; o += 16) dw16(x + o, off, w, taps, init, out + o);
    if (o == n) return;
    if (n >= 16) { /* a ragged end: one more block, overlapping the last */
        dw16(x + n - 16, off, w, taps, init, out + n - 16);
        return;
    }
    for (; o < n; o++) {
        uint32_t s = (uint32_t)init;
        for (int64_t t = 0; t < taps; t++) s += (uint32_t)(w[t] * x[off[t] + o]);
        out[o] = (int32_t)s;
    }
}
#endif
