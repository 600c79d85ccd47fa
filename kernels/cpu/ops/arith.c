/* Add, Sub, Mul, Div, Mod on the CPU (semantics and params:
 * src/core/ops/arith.c): one row function per dtype. */
#include "ew_kernels.h"

#define ADD_ROW(E, T, S, W) Q8_EW_BINARY_ROW(add_##S, T, T, T, (T)((W)a + (W)b))
#define SUB_ROW(E, T, S, W) Q8_EW_BINARY_ROW(sub_##S, T, T, T, (T)((W)a - (W)b))
#define MUL_ROW(E, T, S, W) Q8_EW_BINARY_ROW(mul_##S, T, T, T, (T)((W)a * (W)b))
/* Signed: b == -1 is a wrapping negation (INT_MIN / -1 would trap). */
#define SDIV_ROW(E, T, S, W)                                                               \
    Q8_EW_BINARY_ROW(div_##S, T, T, T, b == 0 ? 0 : b == -1 ? (T)(0 - (W)a) : a / b)
#define UDIV_ROW(E, T, S, W) Q8_EW_BINARY_ROW(div_##S, T, T, T, b == 0 ? 0 : a / b)
#define FDIV_ROW(E, T, S, W) Q8_EW_BINARY_ROW(div_##S, T, T, T, a / b)

Q8_EW_NUMS(ADD_ROW)
Q8_EW_NUMS(SUB_ROW)
Q8_EW_NUMS(MUL_ROW)
Q8_EW_SINTS(SDIV_ROW)
Q8_EW_UINTS(UDIV_ROW)
Q8_EW_FLOATS(FDIV_ROW)

/* Mod. b == -1 is special-cased: INT_MIN % -1 traps in C, and x % -1 is 0. */
static inline int64_t smod(int64_t a, int64_t b, bool c_style) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (!c_style && r != 0 && (r < 0) != (b < 0)) r += b;
    return r;
}
#define SMOD_ROWS(E, T, S, W)                                                              \
    Q8_EW_BINARY_ROW(mod_##S, T, T, T, smod(a, b, false))                                 \
    Q8_EW_BINARY_ROW(fmod_##S, T, T, T, smod(a, b, true))
#define UMOD_ROWS(E, T, S, W)                                                              \
    Q8_EW_BINARY_ROW(mod_##S, T, T, T, b == 0 ? 0 : a % b)                                \
    Q8_EW_BINARY_ROW(fmod_##S, T, T, T, b == 0 ? 0 : a % b)
Q8_EW_SINTS(SMOD_ROWS)
Q8_EW_UINTS(UMOD_ROWS)
Q8_EW_BINARY_ROW(fmod_f32, float, float, float, fmodf(a, b))
Q8_EW_BINARY_ROW(fmod_f64, double, double, double, fmod(a, b))

#define TAB_ADD(E, T, S, W) [E] = add_##S,
#define TAB_SUB(E, T, S, W) [E] = sub_##S,
#define TAB_MUL(E, T, S, W) [E] = mul_##S,
#define TAB_DIV(E, T, S, W) [E] = div_##S,
#define TAB_MOD(E, T, S, W) [E] = mod_##S,
#define TAB_FMOD(E, T, S, W) [E] = fmod_##S,

static const q8_bcast_row_fn add_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_ADD)};
static const q8_bcast_row_fn sub_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_SUB)};
static const q8_bcast_row_fn mul_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_MUL)};
static const q8_bcast_row_fn div_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_DIV)};
static const q8_bcast_row_fn mod_rows[Q8_DTYPE_COUNT] = {Q8_EW_INTS(TAB_MOD)};
static const q8_bcast_row_fn fmod_rows[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_FMOD)};

#define BINARY_OP(VAR, ROWS)                                                               \
    static void VAR##_run(const q8_exec *x, const q8_node *n) {                           \
        q8_ew_binary_run(x, n, ROWS, Q8_EW_GRAIN);                                        \
    }                                                                                     \
    const q8_cpu_op q8_cpu_##VAR = {.run = VAR##_run};

BINARY_OP(add, add_rows)
BINARY_OP(sub, sub_rows)
BINARY_OP(mul, mul_rows)
BINARY_OP(div, div_rows)

static void mod_run(const q8_exec *x, const q8_node *n) {
    const q8_bcast *p = n->params;
    q8_ew_binary_run(x, n, p->aux ? fmod_rows : mod_rows, Q8_EW_GRAIN);
}

const q8_cpu_op q8_cpu_mod = {.run = mod_run};

#define SHIFT_ROWS(E, T, S, W)                                                             \
    Q8_EW_BINARY_ROW(shl_##S, T, T, T, b >= sizeof(T) * 8 ? 0 : (T)(a << b))              \
    Q8_EW_BINARY_ROW(shr_##S, T, T, T, b >= sizeof(T) * 8 ? 0 : (T)(a >> b))
Q8_EW_UINTS(SHIFT_ROWS)
#define TAB_SHL(E, T, S, W) [E] = shl_##S,
#define TAB_SHR(E, T, S, W) [E] = shr_##S,
static const q8_bcast_row_fn shl_rows[Q8_DTYPE_COUNT] = {Q8_EW_UINTS(TAB_SHL)};
static const q8_bcast_row_fn shr_rows[Q8_DTYPE_COUNT] = {Q8_EW_UINTS(TAB_SHR)};

static void bitshift_run(const q8_exec *x, const q8_node *n) {
    const q8_bcast *p = n->params;
    q8_ew_binary_run(x, n, p->aux ? shr_rows : shl_rows, Q8_EW_GRAIN);
}

const q8_cpu_op q8_cpu_bit_shift = {.run = bitshift_run};
