/* The implicit conv's copy of X on AVX-512BW (qconv_implicit.h): 64 pixels
 * of 4 channel rows at a time, interleaved into 256 bytes by two rounds of
 * unpacking and a 4 x 4 transpose of 128-bit blocks; the row's tail masked.
 * Only called when the CPU has these ISAs. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw")
#endif

#include <immintrin.h>

#include "qconv_implicit.h"

void q8_qimp_row_avx512(const int8_t *const r[4], int64_t W, uint8_t *dst) {
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    for (int64_t w = 0; w < W; w += 64) {
        int64_t n = W - w < 64 ? W - w : 64;
        __mmask64 m = n == 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
        __m512i v[4];
        for (int i = 0; i < 4; i++)
            v[i] = r[i] ? _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, r[i] + w), x80) : x80;
        __m512i ab0 = _mm512_unpacklo_epi8(v[0], v[1]), ab1 = _mm512_unpackhi_epi8(v[0], v[1]);
        __m512i cd0 = _mm512_unpacklo_epi8(v[2], v[3]), cd1 = _mm512_unpackhi_epi8(v[2], v[3]);
        /* t[q], 128-bit block k: pixels 16 k + 4 q .. + 3 */
        __m512i t0 = _mm512_unpacklo_epi16(ab0, cd0), t1 = _mm512_unpackhi_epi16(ab0, cd0);
        __m512i t2 = _mm512_unpacklo_epi16(ab1, cd1), t3 = _mm512_unpackhi_epi16(ab1, cd1);
        __m512i u0 = _mm512_shuffle_i64x2(t0, t1, 0x44), u1 = _mm512_shuffle_i64x2(t2, t3, 0x44);
        __m512i u2 = _mm512_shuffle_i64x2(t0, t1, 0xEE), u3 = _mm512_shuffle_i64x2(t2, t3, 0xEE);
        __m512i o[4] = {_mm512_shuffle_i64x2(u0, u1, 0x88), _mm512_shuffle_i64x2(u0, u1, 0xDD),
                        _mm512_shuffle_i64x2(u2, u3, 0x88), _mm512_shuffle_i64x2(u2, u3, 0xDD)};
        uint8_t *d = dst + w * 4;
        for (int k = 0; k < 4; k++) {
            int64_t px = n - 16 * k; /* pixels of this 64-byte block */
            if (px <= 0) break;
            __mmask64 mk = px >= 16 ? ~(__mmask64)0 : ((__mmask64)1 << (4 * px)) - 1;
            _mm512_mask_storeu_epi8(d + 64 * k, mk, o[k]);
        }
    }
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
