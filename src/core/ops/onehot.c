/* OneHot, IsNaN / IsInf and EyeLike (see onehot.h): ops whose output is
 * made of ones and zeros. */
#include "ops/onehot.h"

#include <math.h>
#include <string.h>

#include "half.h"
#include "op.h"
#include "ops/cast.h"

static bool numeric(q8_dtype t) { return q8_dtype_is_float(t) || q8_dtype_is_int(t); }

/* A constant scalar of any numeric dtype, as a double. */
static q8_status const_scalar(const q8_graph *g, const q8_node *n, int i, const char *what,
                              double *v, q8_error *err) {
    const q8_tensor *t = q8_in(g, n, i);
    if (!t->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "%s ('%s') must be a constant (it decides a shape)", what, t->name);
    if (q8_tensor_numel(t) != 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s must hold one value", what);
    switch (t->dtype) {
    case Q8_F32: *v = *(const float *)t->data; break;
    case Q8_F64: *v = *(const double *)t->data; break;
    case Q8_I8: *v = *(const int8_t *)t->data; break;
    case Q8_U8: *v = *(const uint8_t *)t->data; break;
    case Q8_I16: *v = *(const int16_t *)t->data; break;
    case Q8_U16: *v = *(const uint16_t *)t->data; break;
    case Q8_I32: *v = *(const int32_t *)t->data; break;
    case Q8_U32: *v = *(const uint32_t *)t->data; break;
    case Q8_I64: *v = (double)*(const int64_t *)t->data; break;
    case Q8_U64: *v = (double)*(const uint64_t *)t->data; break;
    default:
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%s is %s, expected a number", what,
                            q8_dtype_name(t->dtype));
    }
    return Q8_OK;
}

static q8_status onehot_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 3, 3, 1, 1, err));
    for (int i = 0; i < 3; i++) Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *ind = q8_in(g, n, 0), *val = q8_in(g, n, 2);
    if (!q8_dtype_is_int(ind->dtype) && ind->dtype != Q8_F32 && ind->dtype != Q8_F64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "indices are %s, expected integers, "
                            "float32 or float64", q8_dtype_name(ind->dtype));
    if (q8_tensor_numel(val) != 2 || val->dtype == Q8_STRING)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "values must be [off, on]: 2 elements");
    double depth = 0;
    Q8_TRY(const_scalar(g, n, 1, "depth", &depth, err));
    if (!(depth >= 1 && depth <= 1e9))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "depth %g: expected 1 to 1e9", depth);
    if (ind->ndim + 1 > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "indices of rank %d: the output would have "
                            "more than %d dims", ind->ndim, Q8_MAX_DIMS);
    int64_t axis_attr = q8_attr_int(n, "axis", -1);
    int axis;
    if (!q8_norm_axis(axis_attr, ind->ndim + 1, &axis))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                            (long long)axis_attr, ind->ndim + 1);
    q8_onehot_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->index_dtype = ind->dtype;
    p->elem = q8_dtype_size(val->dtype);
    p->depth = (int64_t)depth;
    p->outer = p->inner = 1;
    int64_t dims[Q8_MAX_DIMS];
    for (int d = 0, s = 0; d <= ind->ndim; d++) {
        if (d == axis) {
            dims[d] = p->depth;
            continue;
        }
        dims[d] = ind->dims[s++];
        if (d < axis) p->outer *= dims[d];
        else p->inner *= dims[d];
    }
    return q8_set_output(g, n, 0, val->dtype, dims, ind->ndim + 1, err);
}

static q8_status isnan_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && x->dtype != Q8_F64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(x->dtype));
    q8_isnan_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->dtype = x->dtype;
    p->inf = n->op == Q8_OP_IS_INF;
    p->negative = q8_attr_int(n, "detect_negative", 1) != 0;
    p->positive = q8_attr_int(n, "detect_positive", 1) != 0;
    return q8_set_output(g, n, 0, Q8_BOOL, x->dims, x->ndim, err);
}

static q8_status eyelike_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim != 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has rank %d, expected 2", x->name,
                            x->ndim);
    q8_dtype t = x->dtype;
    const q8_attr *a = q8_attr_find(n, "dtype");
    if (a) {
        t = a->type == Q8_ATTR_INT ? q8_dtype_of_onnx_code(a->i) : Q8_UNDEFINED;
        if (t == Q8_UNDEFINED)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype attribute is not a known "
                                "data type");
    }
    if (!numeric(t) && t != Q8_BOOL)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output dtype %s is not supported",
                            q8_dtype_name(t));
    q8_eyelike_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->elem = q8_dtype_size(t);
    p->rows = x->dims[0];
    p->cols = x->dims[1];
    p->k = q8_attr_int(n, "k", 0);
    float f1 = 1.0f;
    double d1 = 1.0;
    uint16_t h1 = q8_f32_to_f16(1.0f), b1 = q8_f32_to_bf16(1.0f);
    if (t == Q8_F32) memcpy(p->one, &f1, 4);
    else if (t == Q8_F64) memcpy(p->one, &d1, 8);
    else if (t == Q8_F16) memcpy(p->one, &h1, 2);
    else if (t == Q8_BF16) memcpy(p->one, &b1, 2);
    else p->one[0] = 1; /* integers and bool, little-endian */
    return q8_set_output(g, n, 0, t, x->dims, 2, err);
}

const q8_op_schema q8_schema_onehot = {.infer = onehot_infer};
const q8_op_schema q8_schema_is_nan = {.infer = isnan_infer};
const q8_op_schema q8_schema_is_inf = {.infer = isnan_infer};
const q8_op_schema q8_schema_eye_like = {.infer = eyelike_infer};
