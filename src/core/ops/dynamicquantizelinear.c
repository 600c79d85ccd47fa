/* DynamicQuantizeLinear: uint8 quantization of float32 x
 * with a scale and zero point computed from x's range (extended to
 * include 0): y_scale = (max - min) / 255, y_zero_point =
 * round_half_even(saturate(0 - min / y_scale)), y = saturate(
 * round_half_even(x / y_scale) + y_zero_point). An all-zero x (scale 0)
 * gives scale 0, zero point 0 and y = 0. NaNs are left out of the range
 * and quantize to the zero point. No params. */
#include "op.h"

static q8_status dql_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 3, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    Q8_TRY(q8_set_output(g, n, 0, Q8_U8, x->dims, x->ndim, err));
    Q8_TRY(q8_set_output(g, n, 1, Q8_F32, NULL, 0, err));
    return q8_set_output(g, n, 2, Q8_U8, NULL, 0, err);
}

const q8_op_schema q8_schema_dynamic_quantize_linear = {.infer = dql_infer};
