/* aarch64 INT8 GEMM tile on USDOT / SUDOT (FEAT_I8MM): igemm_neon_tile.h.
 * Only called when the CPU has it (q8_igemm_path_supported). */
#if defined(__aarch64__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("dotprod,i8mm"))), apply_to = function)
#else
#pragma GCC target("arch=armv8.2-a+dotprod+i8mm")
#endif

#define Q8_NEON_DOT 0
#include "igemm_neon_tile.h"

TILE_FN(q8_ig_tile_neoni8mm)
TILE_IMP_FN(q8_ig_tile_imp_neoni8mm)

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
