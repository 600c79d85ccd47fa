/* SIMD kernels of q8.QMul (the op: src/core/ops/qmul.h), x86 only. */
#ifndef Q8_QMUL_SIMD_H
#define Q8_QMUL_SIMD_H

#include <stdint.h>

/* Row r of A (inner values) times b[r]. */
void q8_qmul_rows_avx512(const int8_t *a, const int8_t *b, int32_t m, int32_t shift, int8_t *y,
                         int64_t rows, int64_t inner);
/* Same-shape operands, n values. */
void q8_qmul_same_avx512(const int8_t *a, const int8_t *b, int32_t m, int32_t shift, int8_t *y,
                         int64_t n);

#endif
