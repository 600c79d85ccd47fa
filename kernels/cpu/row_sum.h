/* The double-precision sum of a float row, in the bits of the in-order sum
 * (GlobalAveragePool's), computed eight lanes at a time when that cannot
 * change them. */
#ifndef Q8_CPU_ROW_SUM_H
#define Q8_CPU_ROW_SUM_H

#include <stdbool.h>
#include <stdint.h>

/* Sum of x[0..n) in double, identical to `s = 0; for i: s += x[i]`.
 * The lanes' sum is used when every partial sum of the row is exact in
 * double (which makes every order give the same value): finite values whose
 * largest and smallest nonzero magnitudes are at most 29 - log2(n) binades
 * apart, e.g. any dequantized int8 row. Otherwise the row is summed again
 * in order. */
double q8_row_sum_f64(const float *x, int64_t n);

#endif
