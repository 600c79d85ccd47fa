/* The byte-shuffle expander's index table (igemv_sparse.h, q8_isp_rows):
 * for a mask byte m, lane i of q8_isp_shuffle_tab[m] is the position of
 * element i among m's stored bytes (the set bits below bit i), or 0x80
 * where bit i is clear. A shuffle of the stored bytes by it (x86 pshufb,
 * NEON tbl) puts each stored byte where its bit is and zeros elsewhere:
 * both give 0 for an index with the high bit set (pshufb) or >= 16 (tbl),
 * and 0x80 stays so when a lower byte's count (<= 8) is added for the
 * second 8 lanes of a 16-byte step. Made by the preprocessor: no code
 * runs to fill it. */
#ifndef Q8_KERNELS_CPU_ISP_SHUFFLE_TAB_H
#define Q8_KERNELS_CPU_ISP_SHUFFLE_TAB_H

#include <stdint.h>

#define Q8_ISPT_BITS_BELOW(m, i) __builtin_popcount((unsigned)(m) & ((1u << (i)) - 1u))
#define Q8_ISPT_LANE(m, i) ((m) >> (i) & 1 ? Q8_ISPT_BITS_BELOW(m, i) : 0x80)
#define Q8_ISPT_ROW(m)                                                                          \
    {Q8_ISPT_LANE(m, 0), Q8_ISPT_LANE(m, 1), Q8_ISPT_LANE(m, 2), Q8_ISPT_LANE(m, 3),             \
     Q8_ISPT_LANE(m, 4), Q8_ISPT_LANE(m, 5), Q8_ISPT_LANE(m, 6), Q8_ISPT_LANE(m, 7)}
#define Q8_ISPT_R4(m) Q8_ISPT_ROW(m), Q8_ISPT_ROW(m + 1), Q8_ISPT_ROW(m + 2), Q8_ISPT_ROW(m + 3)
#define Q8_ISPT_R16(m) Q8_ISPT_R4(m), Q8_ISPT_R4(m + 4), Q8_ISPT_R4(m + 8), Q8_ISPT_R4(m + 12)
#define Q8_ISPT_R64(m) Q8_ISPT_R16(m), Q8_ISPT_R16(m + 16), Q8_ISPT_R16(m + 32), Q8_ISPT_R16(m + 48)

static const uint8_t q8_isp_shuffle_tab[256][8] = {Q8_ISPT_R64(0), Q8_ISPT_R64(64),
                                                   Q8_ISPT_R64(128), Q8_ISPT_R64(192)};

#endif
