/* Pow: base float32/float64/int32/int64, exponent any numeric type, numpy
 * broadcasting; the output has the base's dtype. Params: the broadcast plan
 * (ops/broadcast.h); its aux says whether the exponent is a constant scalar
 * 2 (LayerNorm exports use Pow(x, 2)).
 *
 * Float bases use double pow() rounded once to the output type. Integer
 * bases with an integer exponent multiply exactly (wrapping on overflow);
 * a negative exponent gives 1 for base 1, +-1 for base -1 and 0 otherwise
 * (including 0^-k, where C would divide by zero). Integer bases with a float
 * exponent truncate pow() toward zero, saturating; NaN gives 0. */
#include "op.h"
#include "ops/elementwise.h"

static bool exponent_is_two(const q8_graph *g, const q8_node *n) {
    float v;
    int cnt;
    const q8_tensor *e = q8_in(g, n, 1);
    return e->data && q8_tensor_numel(e) == 1 &&
           q8_const_floats(g, n, 1, &v, 1, &cnt, NULL) == Q8_OK && v == 2.0f;
}

static q8_status pow_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (a->dtype != Q8_F32 && a->dtype != Q8_F64 && a->dtype != Q8_I32 && a->dtype != Q8_I64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "base dtype %s is not supported (float32, float64, int32, int64)",
                            q8_dtype_name(a->dtype));
    if (!q8_ew_dtype_in(Q8_EW_DT_NUMS, b->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "exponent dtype %s is not supported",
                            q8_dtype_name(b->dtype));
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_ew_binary_plan(g, n, dims, &nd, err));
    ((q8_bcast *)n->params)->aux = exponent_is_two(g, n);
    return q8_set_output(g, n, 0, a->dtype, dims, nd, err);
}

const q8_op_schema q8_schema_pow = {.infer = pow_infer, .flags = Q8_OPF_INPLACE};
