#include "row_sum.h"

#include "clones.h"
#include "row_sum16.h"

Q8_CLONES double q8_row_sum_f64(const float *x, int64_t n) { return q8_row_sum16(x, n); }
