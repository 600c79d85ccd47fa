/* Add, Sub, Mul, Div, Mod with numpy broadcasting, over float32/64 and all
 * integer types (shape arithmetic is folded through the int64 versions).
 * Params: the broadcast plan (ops/broadcast.h); Mod's fmod in its aux.
 *
 * Integers wrap on overflow (two's complement). Integer Div truncates toward
 * zero like C; x / 0 gives 0 and INT_MIN / -1 gives INT_MIN (wrapped), so a
 * bad divisor in data never traps. Mod: fmod=0 gives the sign of the divisor
 * (Python), fmod=1 the sign of the dividend (C fmod, required for floats);
 * an integer x mod 0 gives 0. BitShift (unsigned integers): x << y or x >>
 * y by direction LEFT / RIGHT (aux 0 / 1); a shift by the type's width or
 * more gives 0 (C leaves it undefined). */
#include <string.h>

#include "op.h"
#include "ops/elementwise.h"

#define BINARY_OP(VAR, DTYPES)                                                             \
    static q8_status VAR##_infer(q8_graph *g, q8_node *n, q8_error *err) {               \
        return q8_ew_binary_infer(g, n, DTYPES, Q8_UNDEFINED, err);                       \
    }                                                                                     \
    const q8_op_schema q8_schema_##VAR = {.infer = VAR##_infer, .flags = Q8_OPF_INPLACE};

BINARY_OP(add, Q8_EW_DT_NUMS)
BINARY_OP(sub, Q8_EW_DT_NUMS)
BINARY_OP(mul, Q8_EW_DT_NUMS)
BINARY_OP(div, Q8_EW_DT_NUMS)

static q8_status mod_infer(q8_graph *g, q8_node *n, q8_error *err) {
    int64_t fm = q8_attr_int(n, "fmod", 0);
    if (fm != 0 && fm != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "fmod is %lld, expected 0 or 1", (long long)fm);
    const q8_tensor *a = q8_in(g, n, 0);
    if (!fm && a && q8_dtype_is_float(a->dtype))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "fmod must be 1 for %s inputs",
                            q8_dtype_name(a->dtype));
    Q8_TRY(q8_ew_binary_infer(g, n, fm ? Q8_EW_DT_NUMS : Q8_EW_DT_INTS, Q8_UNDEFINED, err));
    ((q8_bcast *)n->params)->aux = (int)fm;
    return Q8_OK;
}

const q8_op_schema q8_schema_mod = {.infer = mod_infer, .flags = Q8_OPF_INPLACE};

static q8_status bitshift_infer(q8_graph *g, q8_node *n, q8_error *err) {
    const char *dir = q8_attr_str(n, "direction", "");
    bool left = !strcmp(dir, "LEFT");
    if (!left && strcmp(dir, "RIGHT"))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "direction '%s': expected LEFT or RIGHT", dir);
    Q8_TRY(q8_ew_binary_infer(g, n, Q8_EW_DT_UINTS, Q8_UNDEFINED, err));
    ((q8_bcast *)n->params)->aux = left ? 0 : 1;
    return Q8_OK;
}

const q8_op_schema q8_schema_bit_shift = {.infer = bitshift_infer, .flags = Q8_OPF_INPLACE};
