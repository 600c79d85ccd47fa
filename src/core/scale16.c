/* 16-bit weight scales: see scale16.h. */
#include "scale16.h"

#include "half.h"

enum { LOW_BITS = 12, MANT_KEPT = 11, BINADES = 32 };

static uint32_t biased_exp(uint32_t u) { return (u >> 23) & 0xFFu; }

float q8_scale16_ceil(float s) {
    uint32_t u = q8_f32_bits(s);
    if (u >> 31 || biased_exp(u) == 0 || biased_exp(u) == 0xFFu) return s;
    if (!(u & ((1u << LOW_BITS) - 1))) return s;
    uint32_t up = (u | ((1u << LOW_BITS) - 1)) + 1; /* a carry moves up a binade */
    return biased_exp(up) == 0xFFu ? s : q8_bits_f32(up);
}

bool q8_scale16_fits(const float *s, int64_t n, uint32_t *base) {
    uint32_t lo = 0xFFu, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = q8_f32_bits(s[i]), e = biased_exp(u);
        if (u >> 31 || e == 0 || e == 0xFFu || (u & ((1u << LOW_BITS) - 1))) return false;
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    if (n < 1 || hi - lo >= BINADES) return false;
    *base = lo;
    return true;
}

uint16_t q8_scale16_pack(float s, uint32_t base) {
    uint32_t u = q8_f32_bits(s);
    return (uint16_t)(((biased_exp(u) - base) << MANT_KEPT) | ((u >> LOW_BITS) & 0x7FFu));
}

bool q8_scale16_unpack(uint16_t h, uint32_t base, float *out) {
    uint32_t e = base + (h >> MANT_KEPT);
    if (base < 1 || base > 254 || e > 254) return false;
    *out = q8_bits_f32((e << 23) | ((uint32_t)(h & 0x7FFu) << LOW_BITS));
    return true;
}
