/* DequantizeLinear (see dequantizelinear.h). */
#include "ops/dequantizelinear.h"

#include "op.h"

static q8_status dequant_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    q8_dequantizelinear_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    Q8_TRY(q8_qdq_parse(g, n, &p->q, err));
    const q8_tensor *x = q8_in(g, n, 0), *z = q8_in(g, n, 2);
    if (x->dtype != Q8_I8 && x->dtype != Q8_U8 && x->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "x '%s' is %s, expected int8, uint8 or "
                            "int32", x->name, q8_dtype_name(x->dtype));
    if (z && z->dtype != x->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "zero point '%s' is %s, x is %s", z->name,
                            q8_dtype_name(z->dtype), q8_dtype_name(x->dtype));
    p->xt = x->dtype;
    p->rows = q8_tensor_numel(x) / (p->q.inner ? p->q.inner : 1);
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err);
}

/* x may alias y (in place, int32 -> float32): run reads before it writes. */
const q8_op_schema q8_schema_dequantize_linear = {.infer = dequant_infer, .flags = Q8_OPF_INPLACE};
