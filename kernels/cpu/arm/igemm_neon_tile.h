/* aarch64 INT8 GEMM tiles (igemm.h), the template of igemm_neondot.c and
 * igemm_neoni8mm.c: tiles of up to 4 rows x 16 lanes.
 *
 * The packed lanes operand holds, per step of 4 k, 16 lanes x 4 bytes: four
 * 16-byte vectors of 4 lanes each, exactly the operand of the by-element
 * dot products, which multiply each lane's 4 bytes by the 4 bytes of one
 * row (one 32-bit element of a 16-byte rows vector, so one rows load serves
 * 4 steps of k).
 *
 * NEONDOT (SDOT, ARMv8.2 dot product) multiplies signed by signed bytes. The
 * operand stored as uint8 = int8 + 128 is flipped back with an EOR 0x80, and
 * the tile adds 128 * (sum over k of the other operand), so that the tile
 * holds what the x86 tiles and the C tile hold: sum(stored uint8 * int8)
 * (the caller's init removes the +128 again). Those sums come from SDOTs
 * against a vector of ones (per row: one per 16 bytes of the row; per lane:
 * one per lanes vector).
 *
 * NEONI8MM (USDOT / SUDOT by element, FEAT_I8MM) multiplies unsigned by
 * signed bytes, as vpdpbusd does: no flip, no correction.
 *
 * All sums are int32 and wrap, as on every path (igemm.h). */
#ifndef Q8_KERNELS_CPU_ARM_IGEMM_NEON_TILE_H
#define Q8_KERNELS_CPU_ARM_IGEMM_NEON_TILE_H

/* Include once, after the file's target pragma and with Q8_NEON_DOT set:
 * 1 for SDOT, 0 for USDOT / SUDOT. */
#include <arm_neon.h>
#include <string.h>

#include "igemm.h"

#define Q8_NEON_MR 4

#if Q8_NEON_DOT
#define DOT true
#define MAC(acc, l, r, S) vdotq_laneq_s32(acc, l, r, S)
#else
#define DOT false
/* unsigned x signed: vsudot (signed lanes, unsigned rows) or vusdot */
#define MAC(acc, l, r, S)                                                                       \
    (rows_u8 ? vsudotq_laneq_s32(acc, l, vreinterpretq_u8_s8(r), S)                             \
             : vusdotq_laneq_s32(acc, vreinterpretq_u8_s8(l), r, S))
#endif

/* 4 bytes of a row at p, in element 0 (the end of a row: no 16-byte read). */
static inline int8x16_t load4(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

/* One step of k (4 bytes per lane) for rows r < mr, with the row bytes in
 * element S of rv[r]. DOT: SDOT with the flip and the sums of the text
 * above; else USDOT / SUDOT. IMP: the step's lanes read in place
 * (q8_igemm_args.lane_off, the implicit conv). */
#define STEP(S)                                                                                 \
    do {                                                                                        \
        if (IMP) L = Lb + off[k4 + (S)];                                                        \
        for (int v = 0; v < 4; v++) {                                                           \
            int8x16_t l = vld1q_s8((const int8_t *)L + 16 * v);                                 \
            if (DOT && !rows_u8) l = veorq_s8(l, flip);                                         \
            if (DOT && rows_u8) lsum[v] = vdotq_s32(lsum[v], l, ones);                          \
            for (int r = 0; r < mr; r++) acc[r][v] = MAC(acc[r][v], l, rv[r], S);               \
        }                                                                                       \
        L += 64;                                                                                \
    } while (0)

static inline __attribute__((always_inline)) void tile(const q8_igemm_args *a, int64_t i0,
                                                       int mr, int64_t p0, int32_t *out,
                                                       bool rows_u8, bool IMP) {
    int64_t kp = q8_ig_kpad(a->K), n4 = kp / 4;
    const uint8_t *Lb = a->lanes + (size_t)p0 * 64; /* IMP: panel p0's start in place */
    const int64_t *off = a->lane_off;
    const uint8_t *L = a->lanes + (size_t)p0 * (size_t)kp * Q8_IG_LANES;
    const uint8_t *R = a->rows + (size_t)i0 * (size_t)kp;
    const int8x16_t flip = vdupq_n_s8(-128), ones = vdupq_n_s8(1);
    int32x4_t acc[Q8_NEON_MR][4], rsum[Q8_NEON_MR], lsum[4];
    for (int r = 0; r < mr; r++) {
        rsum[r] = vdupq_n_s32(0);
        for (int v = 0; v < 4; v++) acc[r][v] = vdupq_n_s32(0);
    }
    for (int v = 0; v < 4; v++) lsum[v] = vdupq_n_s32(0);
    int8x16_t rv[Q8_NEON_MR];
    int64_t k4 = 0;
    for (; k4 + 4 <= n4; k4 += 4) {
        for (int r = 0; r < mr; r++) {
            rv[r] = vld1q_s8((const int8_t *)R + (size_t)r * (size_t)kp + 4 * k4);
            if (DOT && rows_u8) rv[r] = veorq_s8(rv[r], flip);
            if (DOT && !rows_u8) rsum[r] = vdotq_s32(rsum[r], rv[r], ones);
        }
        STEP(0);
        STEP(1);
        STEP(2);
        STEP(3);
    }
    for (; k4 < n4; k4++) {
        for (int r = 0; r < mr; r++) {
            rv[r] = load4(R + (size_t)r * (size_t)kp + 4 * k4);
            if (DOT && rows_u8) rv[r] = veorq_s8(rv[r], flip);
            /* element 0 only: the other three are copies */
            if (DOT && !rows_u8)
                rsum[r] = vdotq_s32(rsum[r], rv[r], vreinterpretq_s8_s32(vsetq_lane_s32(
                                                        0x01010101, vdupq_n_s32(0), 0)));
        }
        STEP(0);
    }
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < 4; v++) {
            int32x4_t x = acc[r][v];
            if (DOT && !rows_u8) /* + 128 * sum_k R[r][k] */
                x = vaddq_s32(x, vdupq_n_s32((int32_t)((uint32_t)vaddvq_s32(rsum[r]) << 7)));
            if (DOT && rows_u8) /* + 128 * sum_k L[lane][k] */
                x = vaddq_s32(x, vreinterpretq_s32_u32(
                                     vshlq_n_u32(vreinterpretq_u32_s32(lsum[v]), 7)));
            vst1q_s32(out + r * 64 + 4 * v, x);
        }
}

/* Instances for each row count (the loops over rows unrolled); IMP: the
 * implicit conv's tile (lanes in place, rows signed). */
#define TILE_MR(m, IMP)                                                                         \
    (a->rows_u8 && !(IMP) ? tile(a, i0, m, p0, t, true, false)                                  \
                          : tile(a, i0, m, p0, t, false, IMP))
#define TILE_FN_OF(name, IMP)                                                                   \
    void name(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np, int32_t *t) {     \
        (void)np; /* one panel per tile */                                                      \
        switch (mr) {                                                                           \
        case 1: TILE_MR(1, IMP); break;                                                         \
        case 2: TILE_MR(2, IMP); break;                                                         \
        case 3: TILE_MR(3, IMP); break;                                                         \
        default: TILE_MR(4, IMP);                                                               \
        }                                                                                       \
    }
#define TILE_FN(name) TILE_FN_OF(name, false)
#define TILE_IMP_FN(name) TILE_FN_OF(name, true)

#endif
