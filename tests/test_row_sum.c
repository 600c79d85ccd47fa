/* q8_row_sum_f64 (GlobalAveragePool's row sum): the bits of the in-order
 * double sum on every row, whether it takes the lanes or falls back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "row_sum.h"
#include "testutil.h"

static double in_order(const float *x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

static void check(const float *x, int64_t n, const char *what) {
    double got = q8_row_sum_f64(x, n), want = in_order(x, n);
    cr_assert(memcmp(&got, &want, sizeof got) == 0 || (isnan(got) && isnan(want)),
              "%s, n = %lld: %a, in order %a", what, (long long)n, got, want);
}

/* A dequantized int8 row ((q - zp) * scale in float, as DequantizeLinear):
 * the lanes' case. */
static void fill_dequant(q8t_rng *r, float *x, int64_t n) {
    float scale = q8t_uniform(r, 1e-4f, 0.5f);
    int zp = (int)(q8t_next(r) % 256) - 128;
    for (int64_t i = 0; i < n; i++) x[i] = (float)((int)(q8t_next(r) % 256) - 128 - zp) * scale;
}

Test(row_sum, dequantized_rows_bitwise) {
    static const int64_t lens[] = {0, 1, 7, 8, 9, 15, 16, 17, 49, 196, 3136, 25600, 65537};
    float *x = malloc(sizeof(float) * 65537);
    q8t_rng r = q8t_seed(11);
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
        for (int rep = 0; rep < 4; rep++) {
            fill_dequant(&r, x, lens[k]);
            check(x, lens[k], "dequantized");
        }
    free(x);
}

/* Wide ranges, where the order changes the rounding: the in-order sum. */
Test(row_sum, wide_rows_fall_back) {
    float *x = malloc(sizeof(float) * 4099);
    q8t_rng r = q8t_seed(12);
    for (int rep = 0; rep < 40; rep++) {
        int64_t n = 8 + (int64_t)(q8t_next(&r) % 4091);
        for (int64_t i = 0; i < n; i++)
            x[i] = ldexpf(q8t_uniform(&r, -1, 1), (int)(q8t_next(&r) % 60) - 30);
        check(x, n, "wide");
    }
    /* each lane alone exact, their order not: 2^30 + 1 + ... - 2^30 */
    float y[16];
    for (int i = 0; i < 16; i++) y[i] = i == 0 ? 0x1p30f : i == 8 ? -0x1p30f : 0x1p-30f;
    check(y, 16, "cancelling");
    free(x);
}

Test(row_sum, special_values) {
    float x[24];
    q8t_rng r = q8t_seed(13);
    const float specials[] = {INFINITY, -INFINITY, NAN, -0.0f, 0x1p-149f, 0x1p-130f, 0x1p127f};
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++)
        for (int at = 0; at < 24; at += 5) {
            for (int i = 0; i < 24; i++) x[i] = q8t_uniform(&r, -2, 2);
            x[at] = specials[s];
            check(x, 24, "special");
        }
    for (int i = 0; i < 24; i++) x[i] = -0.0f;
    check(x, 24, "negative zeros");
    for (int i = 0; i < 24; i++) x[i] = i % 2 ? 0x1p-149f : -0x1p-140f;
    check(x, 24, "subnormals");
}
