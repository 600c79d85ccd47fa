/* The taps of a pooling window along one dim, shared by the portable pool
 * loops (ops/pool.c) and the AVX-512 AveragePool (x86/maxpool_avx512.c),
 * whose divisors must be the portable loop's. */
#ifndef Q8_KERNELS_CPU_POOL_TAPS_H
#define Q8_KERNELS_CPU_POOL_TAPS_H

#include <stdint.h>

#include "ops/pool.h"

static inline int64_t q8_pool_ceil_div(int64_t a, int64_t b) {
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* The taps of output position o along internal dim j (D, H, W) that fall
 * inside the input: kk in [*lo, *hi); *cnt_pad counts the taps inside the
 * padded extent. */
static inline void q8_pool_taps(const q8_pool_params *p, int j, int64_t o, int64_t *lo,
                                int64_t *hi, int64_t *cnt_pad) {
    int64_t start = o * p->s[j] - p->pb[j], d = p->d[j], k = p->k[j], l, h, c;
    if (d == 1) { /* the common case, without divisions */
        l = start >= 0 ? 0 : -start;
        h = p->in[j] - start;
        c = p->in[j] + p->pe[j] - start;
    } else {
        l = start >= 0 ? 0 : q8_pool_ceil_div(-start, d);
        h = q8_pool_ceil_div(p->in[j] - start, d);
        c = q8_pool_ceil_div(p->in[j] + p->pe[j] - start, d);
    }
    if (h > k) h = k;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
    *cnt_pad = c > k ? k : c;
}

#endif
