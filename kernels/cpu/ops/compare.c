/* Comparisons and the logical And, Or, Xor on the CPU (semantics and
 * params: src/core/ops/compare.c). */
#include "ew_kernels.h"

#define BOOL_LIST(X) X(Q8_BOOL, uint8_t, b8, uint32_t)
#define CMP_ROWS(E, T, S, W)                                                               \
    Q8_EW_BINARY_ROW(eq_##S, T, T, uint8_t, a == b)                                       \
    Q8_EW_BINARY_ROW(gt_##S, T, T, uint8_t, a > b)                                        \
    Q8_EW_BINARY_ROW(lt_##S, T, T, uint8_t, a < b)                                        \
    Q8_EW_BINARY_ROW(ge_##S, T, T, uint8_t, a >= b)                                       \
    Q8_EW_BINARY_ROW(le_##S, T, T, uint8_t, a <= b)
Q8_EW_NUMS(CMP_ROWS)

/* Bools: compare truth values, so any nonzero byte counts as true. */
Q8_EW_BINARY_ROW(eq_b8, uint8_t, uint8_t, uint8_t, !a == !b)
Q8_EW_BINARY_ROW(gt_b8, uint8_t, uint8_t, uint8_t, !!a > !!b)
Q8_EW_BINARY_ROW(lt_b8, uint8_t, uint8_t, uint8_t, !!a < !!b)
Q8_EW_BINARY_ROW(ge_b8, uint8_t, uint8_t, uint8_t, !!a >= !!b)
Q8_EW_BINARY_ROW(le_b8, uint8_t, uint8_t, uint8_t, !!a <= !!b)
Q8_EW_BINARY_ROW(and_b8, uint8_t, uint8_t, uint8_t, a && b)
Q8_EW_BINARY_ROW(or_b8, uint8_t, uint8_t, uint8_t, a || b)
Q8_EW_BINARY_ROW(xor_b8, uint8_t, uint8_t, uint8_t, !a != !b)

#define TAB_EQ(E, T, S, W) [E] = eq_##S,
#define TAB_GT(E, T, S, W) [E] = gt_##S,
#define TAB_LT(E, T, S, W) [E] = lt_##S,
#define TAB_GE(E, T, S, W) [E] = ge_##S,
#define TAB_LE(E, T, S, W) [E] = le_##S,

static const q8_bcast_row_fn eq_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_EQ) BOOL_LIST(TAB_EQ)};
static const q8_bcast_row_fn gt_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_GT) BOOL_LIST(TAB_GT)};
static const q8_bcast_row_fn lt_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_LT) BOOL_LIST(TAB_LT)};
static const q8_bcast_row_fn ge_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_GE) BOOL_LIST(TAB_GE)};
static const q8_bcast_row_fn le_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_LE) BOOL_LIST(TAB_LE)};
static const q8_bcast_row_fn and_rows[Q8_DTYPE_COUNT] = {[Q8_BOOL] = and_b8};
static const q8_bcast_row_fn or_rows[Q8_DTYPE_COUNT] = {[Q8_BOOL] = or_b8};
static const q8_bcast_row_fn xor_rows[Q8_DTYPE_COUNT] = {[Q8_BOOL] = xor_b8};

#define CMP_OP(VAR, ROWS)                                                                  \
    static void VAR##_run(const q8_exec *x, const q8_node *n) {                           \
        q8_ew_binary_run(x, n, ROWS, Q8_EW_GRAIN);                                        \
    }                                                                                     \
    const q8_cpu_op q8_cpu_##VAR = {.run = VAR##_run};

CMP_OP(equal, eq_rows)
CMP_OP(greater, gt_rows)
CMP_OP(less, lt_rows)
CMP_OP(greater_or_equal, ge_rows)
CMP_OP(less_or_equal, le_rows)
CMP_OP(and, and_rows)
CMP_OP(or, or_rows)
CMP_OP(xor, xor_rows)
