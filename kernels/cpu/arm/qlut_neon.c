/* q8.QLut on aarch64 NEON (qlut.h): y = t[x + 128] with the 256-byte table
 * in 16 registers, one TBL and three TBX of 64 bytes per 16 lookups (TBX
 * keeps the lanes whose index is out of its 64-byte range). */
#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "qlut.h"

static inline int8x16_t lut16(int8x16_t x, const int8x16x4_t t[4]) {
    uint8x16_t i = veorq_u8(vreinterpretq_u8_s8(x), vdupq_n_u8(0x80)); /* x + 128 */
    const uint8x16_t d = vdupq_n_u8(64);
    int8x16_t y = vqtbl4q_s8(t[0], i);
    i = vsubq_u8(i, d);
    y = vqtbx4q_s8(y, t[1], i);
    i = vsubq_u8(i, d);
    y = vqtbx4q_s8(y, t[2], i);
    i = vsubq_u8(i, d);
    return vqtbx4q_s8(y, t[3], i);
}

void q8_qlut_neon(const int8_t *x, const int8_t *t, int8_t *y, int64_t n) {
    int8x16x4_t tab[4];
    for (int q = 0; q < 4; q++) tab[q] = vld1q_s8_x4(t + 64 * q);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) vst1q_s8(y + i, lut16(vld1q_s8(x + i), tab));
    if (i < n) { /* the tail through a buffer */
        int8_t buf[16] = {0};
        memcpy(buf, x + i, (size_t)(n - i));
        vst1q_s8(buf, lut16(vld1q_s8(buf), tab));
        memcpy(y + i, buf, (size_t)(n - i));
    }
}
#endif
