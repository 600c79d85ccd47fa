/* Pixel loads shared by the FP32 conv loops that read X in place on
 * AVX-512F (conv_fewc_avx512.c, conv_dwx_avx512.c): the padding is +0
 * through the load mask, and masked-off inputs are not read. Include after
 * <immintrin.h>, in a file whose functions carry the AVX-512F target. */
#ifndef Q8_CONV_PX_AVX512_H
#define Q8_CONV_PX_AVX512_H

#include <stdint.h>

/* Bits j < n (n <= 64) where 0 <= s + j < iw (also the MaxPool loops'
 * lane masks, maxpool_avx512.c). */
static inline uint64_t in_mask(int64_t s, int64_t iw, int64_t n) {
    int64_t lo = -s, hi = iw - s;
    lo = lo < 0 ? 0 : lo > n ? n : lo;
    hi = hi < lo ? lo : hi > n ? n : hi;
    uint64_t below_hi = hi >= 64 ? ~0ull : (1ull << hi) - 1;
    uint64_t below_lo = lo >= 64 ? ~0ull : (1ull << lo) - 1;
    return below_hi & ~below_lo;
}

/* 16 pixels xr[s + 2j] where the 32 bits of m have their inputs, else +0.
 * Plain loads where no lane is padding: measured faster in the few-channel
 * first conv (MobileNetV3's 0.179 -> 0.137 ms), though a micro-benchmark
 * ran masked and plain loads at the same rate; why is not known. */
__attribute__((target("avx512f"))) static inline __m512 load_px2(const float *xr, int64_t s,
                                                                 uint32_t m, __m512i evens) {
    __m512 a, b;
    if (m == 0xffffffffu) {
        a = _mm512_loadu_ps(xr + s);
        b = _mm512_loadu_ps(xr + s + 16);
    } else {
        a = _mm512_maskz_loadu_ps((__mmask16)m, xr + s);
        b = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), xr + s + 16);
    }
    return _mm512_permutex2var_ps(a, evens, b);
}

#endif
