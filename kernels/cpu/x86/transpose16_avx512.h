/* A 16 x 16 transpose of 4-byte lanes in AVX-512 registers, shared by the
 * Transpose tiles (transpose_avx512.c) and the depthwise convs with channels
 * in the lanes (conv_dwc_avx512.c). Include after <immintrin.h>. */
#ifndef Q8_KERNELS_CPU_X86_TRANSPOSE16_AVX512_H
#define Q8_KERNELS_CPU_X86_TRANSPOSE16_AVX512_H

/* r[i] lane j <- r[j] lane i. */
__attribute__((target("avx512f"), always_inline)) static inline void q8_transpose16(
    __m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 4; i++) {
            t[h * 8 + i] = _mm512_shuffle_i32x4(r[h * 8 + i], r[h * 8 + 4 + i], 0x88);
            t[h * 8 + 4 + i] = _mm512_shuffle_i32x4(r[h * 8 + i], r[h * 8 + 4 + i], 0xdd);
        }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_i32x4(t[i], t[8 + i], 0x88);
        r[8 + i] = _mm512_shuffle_i32x4(t[i], t[8 + i], 0xdd);
    }
}

#endif
