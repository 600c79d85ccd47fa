#include "row_sum.h"

#include <string.h>

#include "clones.h"

enum { LANES = 8 };

static int ceil_log2(int64_t n) {
    int l = 0;
    while (l < 63 && ((int64_t)1 << l) < n) l++;
    return l;
}

/* Every partial sum of a row is an integer multiple of the smallest
 * nonzero magnitude's ulp (2^(E_min - 150), E_min its biased exponent, 1 for
 * subnormals) and below n * 2^(E_max - 126); it is exact in double when that
 * integer fits in 53 bits. */
static bool sums_exact(uint32_t max_bits, uint32_t min_bits, int64_t n) {
    if (min_bits == UINT32_MAX) return true; /* all zeros */
    int e_max = (int)(max_bits >> 23), e_min = (int)(min_bits >> 23);
    if (e_max == 255) return false; /* Inf or NaN: keep the in-order result */
    if (e_min < 1) e_min = 1;
    return ceil_log2(n) + e_max - e_min + 24 <= 53;
}

/* GCC's vector extensions: one 8-lane step is one AVX-512 (two AVX2) vector
 * of doubles; the compiler does not vectorize the scalar form. */
typedef float v8f __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));

Q8_CLONES double q8_row_sum_f64(const float *x, int64_t n) {
    v8d acc = {0};
    v8u mx = {0}, mn = ~(v8u){0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        v8f f;
        v8u b;
        memcpy(&f, &x[i], sizeof f);
        memcpy(&b, &f, sizeof b);
        b &= 0x7fffffffu;
        v8u gt = (v8u)(b > mx); /* all ones where true (C has no vector ?:) */
        mx = (b & gt) | (mx & ~gt);
        v8u nz = b | (v8u)(b == 0); /* zeros read as UINT32_MAX */
        v8u lt = (v8u)(nz < mn);
        mn = (nz & lt) | (mn & ~lt);
        acc += __builtin_convertvector(f, v8d);
    }
    uint32_t max_bits = 0, min_bits = UINT32_MAX;
    for (int j = 0; j < LANES; j++) {
        max_bits = mx[j] > max_bits ? mx[j] : max_bits;
        min_bits = mn[j] < min_bits ? mn[j] : min_bits;
    }
    double tail = 0.0;
    for (; i < n; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        b &= 0x7fffffffu;
        max_bits = b > max_bits ? b : max_bits;
        min_bits = b && b < min_bits ? b : min_bits;
        tail += x[i];
    }
    if (sums_exact(max_bits, min_bits, n))
        return (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])))
               + tail;
    double s = 0.0;
    for (int64_t k = 0; k < n; k++) s += x[k];
    return s;
}
