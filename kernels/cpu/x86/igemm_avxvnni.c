/* AVX-VNNI path (256-bit vpdpbusd, VEX encoded: Alder Lake and later
 * without AVX-512): tiles of up to 6 rows x 16 lanes; the epilogue is the
 * AVX2 one. Only called when the CPU has AVX2 and AVX-VNNI. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,avxvnni"))), apply_to = function)
#else
#pragma GCC target("avx2,avxvnni")
#endif

#include <immintrin.h>

#include "igemm.h"
#include "igemm_epi_avx2.h"

typedef int32_t __attribute__((may_alias, aligned(1))) i32u;

/* FUSED: the epilogue from the registers (q8_ig_epi_row16_avx2), else the
 * accumulators go to tile. */
static inline __attribute__((always_inline)) void tile_avxvnni(const q8_igemm_args *a,
                                                               int64_t i0, int64_t p0,
                                                               int32_t *tile, int MR,
                                                               bool rows_u8, bool FUSED) {
    int64_t kp = q8_ig_kpad(a->K), n4 = kp / 4;
    const uint8_t *L = a->lanes + (size_t)p0 * (size_t)kp * Q8_IG_LANES;
    const uint8_t *R = a->rows + (size_t)i0 * (size_t)kp;
    __m256i acc[6][2];
    for (int r = 0; r < MR; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t k4 = 0; k4 < n4; k4++, L += 64) {
        __m256i l0 = _mm256_loadu_si256((const __m256i *)L);
        __m256i l1 = _mm256_loadu_si256((const __m256i *)(L + 32));
        for (int r = 0; r < MR; r++) {
            __m256i b = _mm256_set1_epi32(*(const i32u *)(R + (size_t)r * (size_t)kp + 4 * k4));
            if (rows_u8) {
                acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], b, l0);
                acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], b, l1);
            } else {
                acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], l0, b);
                acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], l1, b);
            }
        }
    }
    if (FUSED) {
        int64_t j0 = p0 * Q8_IG_LANES;
        for (int r = 0; r < MR; r++)
            q8_ig_epi_row16_avx2(a, i0 + r, j0, a->J - j0, acc[r][0], acc[r][1]);
        return;
    }
    for (int r = 0; r < MR; r++) {
        _mm256_store_si256((__m256i *)(tile + r * 64), acc[r][0]);
        _mm256_store_si256((__m256i *)(tile + r * 64 + 8), acc[r][1]);
    }
}

#define TILE_CASE(MR)                                                                       \
    case MR:                                                                                \
        if (a->rows_u8) tile_avxvnni(a, i0, p0 + v, t, MR, true, false);                    \
        else tile_avxvnni(a, i0, p0 + v, t, MR, false, false);                              \
        break;

void q8_ig_tile_avxvnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np,
                        int32_t *tile) {
    for (int v = 0; v < np; v++) {
        int32_t *t = tile + v * Q8_IG_LANES;
        switch (mr) {
            TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
        default: __builtin_unreachable();
        }
    }
}

#define FUSED_CASE(MR)                                                                      \
    case MR: tile_avxvnni(a, i0, p0 + v, NULL, MR, false, true); break;

/* The tile with its epilogue (rows are channels, no init_col, R signed). */
void q8_ig_tile_epi_avxvnni(const q8_igemm_args *a, int64_t i0, int mr, int64_t p0, int np) {
    for (int v = 0; v < np; v++) {
        switch (mr) {
            FUSED_CASE(1) FUSED_CASE(2) FUSED_CASE(3) FUSED_CASE(4) FUSED_CASE(5) FUSED_CASE(6)
        default: __builtin_unreachable();
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
