/* Compressed weight rows expanded with a table lookup (TBL), 16 bytes a
 * step: q8_isp_rows on aarch64 (isp_shuffle_tab.h says how). Plain NEON:
 * every aarch64 CPU has it. */
#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "igemv_sparse.h"
#include "isp_shuffle_tab.h"

/* The 16 weights of mask bits m16 from the stored bytes at p (which may be
 * read 16 bytes on: the form keeps 64 bytes of slack after the last). */
static inline uint8x16_t expand16(unsigned m16, const int8_t *p) {
    unsigned lo = m16 & 0xff, hi = m16 >> 8;
    uint8x8_t idx_hi = vadd_u8(vld1_u8(q8_isp_shuffle_tab[hi]),
                               vdup_n_u8((uint8_t)__builtin_popcount(lo)));
    return vqtbl1q_u8(vld1q_u8((const uint8_t *)p),
                      vcombine_u8(vld1_u8(q8_isp_shuffle_tab[lo]), idx_hi));
}

void q8_isp_rows_neon(const q8_isp *s, const void *blob, int64_t r0, int64_t nr, uint8_t *dst) {
    const char *b = blob;
    const uint64_t *mask = (const uint64_t *)(b + s->off_mask);
    const uint64_t *start = (const uint64_t *)(b + s->off_start);
    const int8_t *vals = (const int8_t *)(b + s->off_vals);
    int64_t K = s->K, full = K / 16 * 16;
    for (int64_t r = 0; r < nr; r++) {
        const int8_t *p = vals + start[r0 + r];
        const uint64_t *mk = mask + (r0 + r) * s->KC;
        uint8_t *d = dst + r * K;
        int64_t k = 0;
        for (; k < full; k += 16) {
            unsigned m16 = (unsigned)(mk[k / 64] >> (k % 64)) & 0xffff;
            vst1q_u8(d + k, expand16(m16, p));
            p += __builtin_popcount(m16);
        }
        if (k < K) { /* the last K % 16 (mask bits past K are 0) */
            uint8_t t[16];
            vst1q_u8(t, expand16((unsigned)(mk[k / 64] >> (k % 64)) & 0xffff, p));
            memcpy(d + k, t, (size_t)(K - k));
        }
    }
}
#endif
