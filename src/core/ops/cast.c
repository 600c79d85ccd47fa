/* Cast and CastLike (see cast.h). */
#include "ops/cast.h"

#include "op.h"

/* ONNX TensorProto.DataType -> q8_dtype (Q8_UNDEFINED if unknown); the
 * codes are fixed by onnx.proto (formats/onnx maps the same for tensors). */
q8_dtype q8_dtype_of_onnx_code(int64_t code) {
    switch (code) {
    case 1: return Q8_F32;      /* FLOAT */
    case 2: return Q8_U8;       /* UINT8 */
    case 3: return Q8_I8;       /* INT8 */
    case 4: return Q8_U16;      /* UINT16 */
    case 5: return Q8_I16;      /* INT16 */
    case 6: return Q8_I32;      /* INT32 */
    case 7: return Q8_I64;      /* INT64 */
    case 8: return Q8_STRING;   /* STRING */
    case 9: return Q8_BOOL;     /* BOOL */
    case 10: return Q8_F16;     /* FLOAT16 */
    case 11: return Q8_F64;     /* DOUBLE */
    case 12: return Q8_U32;     /* UINT32 */
    case 13: return Q8_U64;     /* UINT64 */
    case 16: return Q8_BF16;    /* BFLOAT16 */
    default: return Q8_UNDEFINED;
    }
}

static bool castable(q8_dtype t) {
    return t == Q8_BOOL || q8_dtype_is_float(t) || q8_dtype_is_int(t);
}

static q8_status cast_common(q8_graph *g, q8_node *n, q8_dtype to, q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0);
    if (!castable(x->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "casting from %s is not supported",
                            q8_dtype_name(x->dtype));
    if (!castable(to))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "casting to %s is not supported",
                            q8_dtype_name(to));
    q8_cast_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->from = x->dtype;
    p->to = to;
    return q8_set_output(g, n, 0, to, x->dims, x->ndim, err);
}

static q8_status cast_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_attr *to = q8_attr_find(n, "to");
    if (!to || to->type != Q8_ATTR_INT)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has no integer attribute 'to'");
    q8_dtype dt = q8_dtype_of_onnx_code(to->i);
    if (dt == Q8_UNDEFINED)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "to = %lld is not a known data type",
                            (long long)to->i);
    return cast_common(g, n, dt, err);
}

static q8_status castlike_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    return cast_common(g, n, q8_in(g, n, 1)->dtype, err);
}

const q8_op_schema q8_schema_cast = {.infer = cast_infer, .flags = Q8_OPF_INPLACE};
const q8_op_schema q8_schema_cast_like = {.infer = castlike_infer, .flags = Q8_OPF_INPLACE};
