/* Shared CPU pieces of the elementwise ops (their infer and params:
 * src/core/ops/): dtype lists, row-function generators over the broadcast
 * walk (bcast_run.h), overflow-free integer arithmetic and float -> int
 * conversions without undefined behaviour. */
#ifndef Q8_KERNELS_CPU_EW_KERNELS_H
#define Q8_KERNELS_CPU_EW_KERNELS_H

#include <math.h>

#include "bcast_run.h"
#include "ops/elementwise.h"

/* X(dtype enum, C type, suffix, wide unsigned type). Integer arithmetic
 * goes through the wide unsigned type so that overflow wraps instead of
 * being undefined (uint16 * uint16 would overflow int). */
#define Q8_EW_SINTS(X)                                                                   \
    X(Q8_I8, int8_t, i8, uint32_t) X(Q8_I16, int16_t, i16, uint32_t)                       \
    X(Q8_I32, int32_t, i32, uint32_t) X(Q8_I64, int64_t, i64, uint64_t)
#define Q8_EW_UINTS(X)                                                                   \
    X(Q8_U8, uint8_t, u8, uint32_t) X(Q8_U16, uint16_t, u16, uint32_t)                     \
    X(Q8_U32, uint32_t, u32, uint32_t) X(Q8_U64, uint64_t, u64, uint64_t)
#define Q8_EW_INTS(X) Q8_EW_SINTS(X) Q8_EW_UINTS(X)
#define Q8_EW_FLOATS(X) X(Q8_F32, float, f32, float) X(Q8_F64, double, f64, double)
#define Q8_EW_NUMS(X) Q8_EW_FLOATS(X) Q8_EW_INTS(X)

/* A row function for a binary op: out[i] = EXPR with a = in0[i], b = in1[i]
 * (or the broadcast scalar). Each case is a plain loop the compiler can
 * vectorize; both values are read before out[i] is written. The _ATTR form
 * puts ATTR (e.g. Q8_CLONES) on the function. */
#define Q8_EW_BINARY_ROW(NAME, TA, TB, TO, EXPR) Q8_EW_BINARY_ROW_ATTR(, NAME, TA, TB, TO, EXPR)
#define Q8_EW_BINARY_ROW_ATTR(ATTR, NAME, TA, TB, TO, EXPR)                               \
    ATTR static void NAME(void *o_, const void *const *in_, const int64_t *st, int64_t n, \
                          const void *ctx_) {                                             \
        TO *o = o_;                                                                       \
        const TA *pa = in_[0];                                                            \
        const TB *pb = in_[1];                                                            \
        (void)ctx_;                                                                       \
        if (st[0] && st[1]) {                                                             \
            for (int64_t i = 0; i < n; i++) {                                             \
                TA a = pa[i];                                                             \
                TB b = pb[i];                                                             \
                o[i] = (TO)(EXPR);                                                        \
            }                                                                             \
        } else if (st[0]) {                                                               \
            const TB b = pb[0];                                                           \
            for (int64_t i = 0; i < n; i++) {                                             \
                TA a = pa[i];                                                             \
                o[i] = (TO)(EXPR);                                                        \
            }                                                                             \
        } else if (st[1]) {                                                               \
            const TA a = pa[0];                                                           \
            for (int64_t i = 0; i < n; i++) {                                             \
                TB b = pb[i];                                                             \
                o[i] = (TO)(EXPR);                                                        \
            }                                                                             \
        } else {                                                                          \
            const TA a = pa[0];                                                           \
            const TB b = pb[0];                                                           \
            const TO r = (TO)(EXPR);                                                      \
            for (int64_t i = 0; i < n; i++) o[i] = r;                                     \
        }                                                                                 \
    }

/* Elements per chunk for cheap ops (memory bound) and for ops that call
 * libm per element. */
#define Q8_EW_GRAIN 32768
#define Q8_EW_GRAIN_MATH 4096

/* Float -> integer conversions defined for every input: truncation toward
 * zero, NaN -> 0, out-of-range values saturate to the type's limits. */
#define Q8_EW_F2I(NAME, T, LO, HI)                                                        \
    static inline T NAME(double v) {                                                      \
        if (!(v == v)) return 0;                                                          \
        if (v <= (double)(LO)) return (LO);                                               \
        if (v >= (double)(HI)) return (HI);                                               \
        return (T)v;                                                                      \
    }
Q8_EW_F2I(q8_f2i_i8, int8_t, INT8_MIN, INT8_MAX)
Q8_EW_F2I(q8_f2i_u8, uint8_t, 0, UINT8_MAX)
Q8_EW_F2I(q8_f2i_i16, int16_t, INT16_MIN, INT16_MAX)
Q8_EW_F2I(q8_f2i_u16, uint16_t, 0, UINT16_MAX)
Q8_EW_F2I(q8_f2i_i32, int32_t, INT32_MIN, INT32_MAX)
Q8_EW_F2I(q8_f2i_u32, uint32_t, 0, UINT32_MAX)
/* (double)INT64_MAX rounds up to 2^63, so >= catches every value too big. */
Q8_EW_F2I(q8_f2i_i64, int64_t, INT64_MIN, INT64_MAX)
Q8_EW_F2I(q8_f2i_u64, uint64_t, 0, UINT64_MAX)

/* Shared run of plain binary ops (same dtype on both inputs): rows[dtype]
 * is the row function, NULL for dtypes the op does not take. */
void q8_ew_binary_run(const q8_exec *x, const q8_node *n, const q8_bcast_row_fn *rows,
                      int64_t grain);

#endif
