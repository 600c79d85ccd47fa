/* aarch64 INT8 GEMM tile on SDOT (ARMv8.2 dot product): igemm_neon_tile.h.
 * Only called when the CPU has it (q8_igemm_path_supported). */
#if defined(__aarch64__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("dotprod"))), apply_to = function)
#else
#pragma GCC target("arch=armv8.2-a+dotprod")
#endif

#define Q8_NEON_DOT 1
#include "igemm_neon_tile.h"

TILE_FN(q8_ig_tile_neondot)
TILE_IMP_FN(q8_ig_tile_imp_neondot)

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
