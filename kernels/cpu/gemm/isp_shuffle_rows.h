/* The row loop of the byte-shuffle expanders (q8_isp_rows: x86 pshufb,
 * NEON tbl). The including file defines, before including this,
 *
 *   static inline void isp_store16(uint8_t *d, unsigned m16, const int8_t *p);
 *
 * which writes to d the 16 weights of mask bits m16 made from the stored
 * bytes at p (it may read 16 bytes from p: the form keeps 64 bytes of
 * slack after its last stored byte), and gets isp_rows_shuffle. */
#ifndef Q8_KERNELS_CPU_ISP_SHUFFLE_ROWS_H
#define Q8_KERNELS_CPU_ISP_SHUFFLE_ROWS_H

#include <string.h>

#include "igemv_sparse.h"

static void isp_rows_shuffle(const q8_isp *s, const void *blob, int64_t r0, int64_t nr,
                             uint8_t *dst) {
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
            isp_store16(d + k, m16, p);
            p += __builtin_popcount(m16);
        }
        if (k < K) { /* the last K % 16 (mask bits past K are 0) */
            uint8_t t[16];
            isp_store16(t, (unsigned)(mk[k / 64] >> (k % 64)) & 0xffff, p);
            memcpy(d + k, t, (size_t)(K - k));
        }
    }
}

#endif
