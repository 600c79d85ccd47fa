/* q8_row_sum_f64 (GlobalAveragePool's row sum): the bits of its defined
 * order (kernels/common/row_sum16.h), written out here as plain scalar
 * code, on every row; and the in-order sum's bits wherever that is exact. */
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

/* 16 lanes over whole groups, a halving tree, then the tail in order. */
static double lane_order(const float *x, int64_t n) {
    double lane[16] = {0};
    int64_t whole = n / 16 * 16;
    for (int64_t i = 0; i < whole; i++) lane[i % 16] = lane[i % 16] + (double)x[i];
    for (int k = 0; k < 8; k++) lane[k] = lane[k] + lane[k + 8];
    for (int k = 0; k < 4; k++) lane[k] = lane[k] + lane[k + 4];
    for (int k = 0; k < 2; k++) lane[k] = lane[k] + lane[k + 2];
    double tail = 0.0;
    for (int64_t i = whole; i < n; i++) tail = tail + (double)x[i];
    return (lane[0] + lane[1]) + tail;
}

static bool same(double a, double b) {
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static void check(const float *x, int64_t n, const char *what) {
    double got = q8_row_sum_f64(x, n), want = lane_order(x, n);
    cr_assert(same(got, want), "%s, n = %lld: %a, in the lane order %a", what, (long long)n,
              got, want);
}

/* A dequantized int8 row ((q - zp) * scale in float, as DequantizeLinear):
 * every partial sum exact, so any order gives the in-order sum. */
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
            double got = q8_row_sum_f64(x, lens[k]), want = in_order(x, lens[k]);
            cr_assert(same(got, want), "dequantized, n = %lld: %a, in order %a",
                      (long long)lens[k], got, want);
        }
    free(x);
}

/* Wide ranges, where the order changes the rounding: still the lane order
 * (the tree, the tail last), every length around the group boundaries. */
Test(row_sum, wide_rows_in_the_lane_order) {
    float *x = malloc(sizeof(float) * 4099);
    q8t_rng r = q8t_seed(12);
    for (int rep = 0; rep < 40; rep++) {
        int64_t n = 8 + (int64_t)(q8t_next(&r) % 4091);
        for (int64_t i = 0; i < n; i++)
            x[i] = ldexpf(q8t_uniform(&r, -1, 1), (int)(q8t_next(&r) % 60) - 30);
        check(x, n, "wide");
    }
    /* each lane alone exact, their order not: 2^30 + 2^-30 + ... - 2^30
     * (the tree adds lane 8 to lane 0 first: the small values are lost in
     * order, kept here) */
    float y[17];
    for (int i = 0; i < 17; i++) y[i] = i == 0 ? 0x1p30f : i == 8 ? -0x1p30f : 0x1p-30f;
    for (int n = 15; n <= 17; n++) check(y, n, "cancelling");
    cr_assert(q8_row_sum_f64(y, 16) != in_order(y, 16), "the order is not the in-order one");
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
