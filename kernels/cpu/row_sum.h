/* GlobalAveragePool's row sum on the CPU: q8_row_sum16's order
 * (kernels/common/row_sum16.h), cloned per x86 vector width. */
#ifndef Q8_CPU_ROW_SUM_H
#define Q8_CPU_ROW_SUM_H

#include <stdint.h>

/* Sum of x[0..n) in double, in q8_row_sum16's order. */
double q8_row_sum_f64(const float *x, int64_t n);

#endif
