/* 4-byte transpose blocks on AVX-512F: see transpose_x86.h. Compiled for
 * AVX-512F whatever the build flags; only called when the CPU has it. */
#include "transpose_x86.h"

#include "cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "transpose16_avx512.h"

#define AVX512 __attribute__((target("avx512f")))

bool q8_transpose4_x86_ok(void) { return q8_cpu()->avx512f; }

/* A 16 x 16 block with nl < 16 valid rows or nj < 16 valid columns (the
 * edges of a tile): masked loads and stores, so an edge costs what a whole
 * block does (element by element it was most of a 255-wide transpose). */
AVX512 static void block_masked(const uint32_t *s, int64_t sl, uint32_t *d, int64_t dj,
                                int64_t nj, int64_t nl) {
    __mmask16 jm = (__mmask16)((1u << nj) - 1), lm = (__mmask16)((1u << nl) - 1);
    __m512i v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i < nl ? _mm512_maskz_loadu_epi32(jm, s + i * sl) : _mm512_setzero_si512();
    q8_transpose16(v);
    for (int i = 0; i < nj; i++) _mm512_mask_storeu_epi32(d + i * dj, lm, v[i]);
}

AVX512 void q8_transpose4_x86(const uint32_t *s, int64_t sl, uint32_t *d, int64_t dj, int64_t j0,
                              int64_t j1, int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; l += 16) {
        int64_t nl = l1 - l < 16 ? l1 - l : 16;
        for (int64_t j = j0; j < j1; j += 16) {
            int64_t nj = j1 - j < 16 ? j1 - j : 16;
            if (nl < 16 || nj < 16) {
                block_masked(s + j + l * sl, sl, d + j * dj + l, dj, nj, nl);
                continue;
            }
            __m512i v[16];
            for (int i = 0; i < 16; i++) v[i] = _mm512_loadu_si512(s + j + (l + i) * sl);
            q8_transpose16(v);
            for (int i = 0; i < 16; i++) _mm512_storeu_si512(d + (j + i) * dj + l, v[i]);
        }
    }
}

/* The two permutes that gather channel ch of 16 pixels stored c to a
 * pixel (c = 3 or 4) from the c vectors of 16 elements that hold them:
 * c = 3: the lanes from elements < 32 (in[0], in[1]), then in[2]'s;
 * c = 4: pixels 0-7 from in[0..1] and 8-15 from in[2..3] by one index,
 * the two halves joined by the other. */
typedef struct dil_idx {
    __m512i a[4], b[4];
} dil_idx;

AVX512 static dil_idx dil_make(int c) {
    dil_idx x;
    for (int ch = 0; ch < c; ch++) {
        _Alignas(64) int32_t ia[16], ib[16];
        for (int k = 0; k < 16; k++) {
            int e = c * k + ch; /* the element, in the c x 16 read */
            if (c == 3) {
                ia[k] = e < 32 ? e : 0;
                ib[k] = e < 32 ? k : 16 + e - 32;
            } else {
                ia[k] = k < 8 ? e : 0;
                ib[k] = k < 8 ? k : 16 + k - 8;
            }
        }
        x.a[ch] = _mm512_load_si512(ia);
        x.b[ch] = _mm512_load_si512(ib);
    }
    return x;
}

AVX512 void q8_deinterleave4_x86(const uint32_t *s, uint32_t *d, int64_t dj, int c, int64_t l0,
                                 int64_t l1) {
    const dil_idx x = dil_make(c);
    int64_t l = l0;
    for (; l + 16 <= l1; l += 16) {
        __m512i in[4];
        for (int k = 0; k < c; k++) in[k] = _mm512_loadu_si512(s + c * l + 16 * k);
        for (int ch = 0; ch < c; ch++) {
            __m512i v;
            if (c == 3) {
                v = _mm512_permutex2var_epi32(in[0], x.a[ch], in[1]);
                v = _mm512_permutex2var_epi32(v, x.b[ch], in[2]);
            } else {
                __m512i lo = _mm512_permutex2var_epi32(in[0], x.a[ch], in[1]);
                __m512i hi = _mm512_permutex2var_epi32(in[2], x.a[ch], in[3]);
                v = _mm512_permutex2var_epi32(lo, x.b[ch], hi);
            }
            _mm512_storeu_si512(d + ch * dj + l, v);
        }
    }
    for (; l < l1; l++)
        for (int ch = 0; ch < c; ch++) d[ch * dj + l] = s[c * l + ch];
}

#else

bool q8_transpose4_x86_ok(void) { return false; }

void q8_transpose4_x86(const uint32_t *s, int64_t sl, uint32_t *d, int64_t dj, int64_t j0,
                       int64_t j1, int64_t l0, int64_t l1) {
    (void)s, (void)sl, (void)d, (void)dj, (void)j0, (void)j1, (void)l0, (void)l1;
}

void q8_deinterleave4_x86(const uint32_t *s, uint32_t *d, int64_t dj, int c, int64_t l0,
                          int64_t l1) {
    (void)s, (void)d, (void)dj, (void)c, (void)l0, (void)l1;
}

#endif
