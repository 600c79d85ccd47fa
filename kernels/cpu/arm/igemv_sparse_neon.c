/* Compressed weight rows expanded with a table lookup (TBL), 16 bytes a
 * step: q8_isp_rows on aarch64 (isp_shuffle_tab.h says how). Plain NEON:
 * every aarch64 CPU has it. */
#if defined(__aarch64__)
#include <arm_neon.h>

#include "igemv_sparse.h"
#include "isp_shuffle_tab.h"

static inline void isp_store16(uint8_t *d, unsigned m16, const int8_t *p) {
    unsigned lo = m16 & 0xff, hi = m16 >> 8;
    uint8x8_t idx_hi = vadd_u8(vld1_u8(q8_isp_shuffle_tab[hi]),
                               vdup_n_u8((uint8_t)__builtin_popcount(lo)));
    vst1q_u8(d, vqtbl1q_u8(vld1q_u8((const uint8_t *)p),
                           vcombine_u8(vld1_u8(q8_isp_shuffle_tab[lo]), idx_hi)));
}

#include "isp_shuffle_rows.h"

void q8_isp_rows_neon(const q8_isp *s, const void *blob, int64_t r0, int64_t nr, uint8_t *dst) {
    isp_rows_shuffle(s, blob, r0, nr, dst);
}
#endif
