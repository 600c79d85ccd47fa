/* 4-byte transpose blocks on AVX-512F: see transpose_x86.h. Compiled for
 * AVX-512F whatever the build flags; only called when the CPU has it. */
#include "transpose_x86.h"

#include "cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "transpose16_avx512.h"

#define AVX512 __attribute__((target("avx512f")))

bool q8_transpose4_x86_ok(void) { return q8_cpu()->avx512f; }

AVX512 void q8_transpose4_x86(const uint32_t *s, int64_t sl, uint32_t *d, int64_t dj, int64_t j0,
                              int64_t j1, int64_t l0, int64_t l1) {
    int64_t jv = j0 + (j1 - j0) / 16 * 16, lv = l0 + (l1 - l0) / 16 * 16;
    for (int64_t l = l0; l < lv; l += 16)
        for (int64_t j = j0; j < jv; j += 16) {
            __m512i v[16];
            for (int i = 0; i < 16; i++) v[i] = _mm512_loadu_si512(s + j + (l + i) * sl);
            q8_transpose16(v);
            for (int i = 0; i < 16; i++) _mm512_storeu_si512(d + (j + i) * dj + l, v[i]);
        }
    /* the edges: columns past jv, then rows past lv */
    for (int64_t j = jv; j < j1; j++)
        for (int64_t l = l0; l < lv; l++) d[j * dj + l] = s[j + l * sl];
    for (int64_t j = j0; j < j1; j++)
        for (int64_t l = lv; l < l1; l++) d[j * dj + l] = s[j + l * sl];
}

#else

bool q8_transpose4_x86_ok(void) { return false; }

void q8_transpose4_x86(const uint32_t *s, int64_t sl, uint32_t *d, int64_t dj, int64_t j0,
                       int64_t j1, int64_t l0, int64_t l1) {
    (void)s, (void)sl, (void)d, (void)dj, (void)j0, (void)j1, (void)l0, (void)l1;
}

#endif
