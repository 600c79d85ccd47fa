/* Infer helpers of the INT8 ops (see qop.h). */
#include "ops/qop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

static bool good_scale(float s) { return s > 0 && isfinite(s); }

q8_status q8_qop_act_scale(const q8_graph *g, const q8_node *n, int i, const char *what,
                           float *scale, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *t = q8_in(g, n, i);
    if (t->dtype != Q8_I8)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%s '%s' is %s, expected int8", what,
                            t->name, q8_dtype_name(t->dtype));
    if (t->q.n == 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "%s '%s' has no quantization scale (an int8 activation needs one "
                            "per-tensor scale)", what, t->name);
    if (t->q.n != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "%s '%s' has %d scales, expected one per-tensor scale", what,
                            t->name, t->q.n);
    if (t->q.zero_point != 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "%s '%s' has zero point %d, only symmetric int8 (0) is supported",
                            what, t->name, (int)t->q.zero_point);
    if (!good_scale(t->q.scale[0]))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s '%s' has scale %g (must be positive)",
                            what, t->name, t->q.scale[0]);
    *scale = t->q.scale[0];
    return Q8_OK;
}

q8_status q8_qop_weight_scales(const q8_graph *g, const q8_node *n, int i, int64_t channels,
                               const float **scales, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *t = q8_in(g, n, i);
    if (t->dtype != Q8_I8)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "W '%s' is %s, expected int8 (quantized weights)", t->name,
                            q8_dtype_name(t->dtype));
    if (!t->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') must be a constant", i,
                            t->name);
    if (t->q.n != channels || (t->q.axis != 0 && !(channels == 1 && t->q.axis == -1)))
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "W '%s' needs per-channel scales (%lld on axis 0), it has %d on "
                            "axis %d", t->name, (long long)channels, t->q.n, t->q.axis);
    for (int c = 0; c < t->q.n; c++)
        if (!good_scale(t->q.scale[c]))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "W '%s' scale %d is %g (must be positive)",
                                t->name, c, t->q.scale[c]);
    *scales = t->q.scale;
    return Q8_OK;
}

q8_status q8_qop_bias(const q8_graph *g, const q8_node *n, int i, int64_t channels,
                      const int32_t **bias, q8_error *err) {
    *bias = NULL;
    const q8_tensor *t = q8_in(g, n, i);
    if (!t) return Q8_OK;
    Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    if (t->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "B '%s' is %s, expected int32 (in the accumulator's scale)", t->name,
                            q8_dtype_name(t->dtype));
    if (!t->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') must be a constant", i,
                            t->name);
    if (t->ndim != 1 || t->dims[0] != channels)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "B '%s' has %lld values, expected %lld (one per output channel)",
                            t->name, (long long)q8_tensor_numel(t), (long long)channels);
    *bias = t->data;
    return Q8_OK;
}

q8_status q8_qop_check_k(const q8_node *n, int64_t K, q8_error *err) {
    if (K > Q8_QOP_MAX_K)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "reduction length %lld is too long for int32 accumulators (at "
                            "most %d)", (long long)K, Q8_QOP_MAX_K);
    return Q8_OK;
}

q8_status q8_qop_act(const q8_node *n, q8_act *act, q8_error *err) {
    *act = (q8_act){Q8_ACT_NONE, 0, 0};
    const char *s = q8_attr_str(n, "_act", NULL);
    if (!s) return Q8_OK;
    q8_act_kind kind;
    if (strcmp(s, "Relu") == 0) kind = Q8_ACT_RELU;
    else if (strcmp(s, "Clip") == 0) kind = Q8_ACT_CLIP;
    else if (strcmp(s, "LeakyRelu") == 0) kind = Q8_ACT_LEAKY_RELU;
    else
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "fused activation '%s' is not supported (Relu, Clip, LeakyRelu)", s);
    float lo = q8_attr_float(n, "_act_min", -INFINITY);
    float hi = q8_attr_float(n, "_act_max", INFINITY);
    float alpha = q8_attr_float(n, "_act_alpha", 0.01f);
    if (isnan(lo) || isnan(hi) || !isfinite(alpha))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "fused %s has a NaN or infinite parameter",
                            s);
    act->kind = kind;
    if (kind == Q8_ACT_CLIP) {
        act->p0 = lo;
        act->p1 = hi;
    } else if (kind == Q8_ACT_LEAKY_RELU) {
        act->p0 = alpha;
    }
    return Q8_OK;
}

q8_status q8_qop_out_scale(const q8_node *n, bool *i8, float *sy, q8_error *err) {
    const q8_attr *a = q8_attr_find(n, "y_scale");
    *i8 = a != NULL;
    *sy = 0;
    if (!a) return Q8_OK;
    if (a->type != Q8_ATTR_FLOAT)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale must be a float attribute");
    if (!good_scale(a->f))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is %g, must be positive and finite",
                            a->f);
    *sy = a->f;
    return Q8_OK;
}

q8_status q8_qop_set_out_scale(q8_graph *g, const q8_node *n, float sy, q8_error *err) {
    q8_tensor *t = q8_out(g, n, 0);
    if (!t) return Q8_OK;
    float *s = malloc(sizeof(float));
    if (!s) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    free(t->q.scale);
    s[0] = sy;
    t->q = (q8_qparams){.axis = -1, .n = 1, .scale = s, .zero_point = 0};
    return Q8_OK;
}

void q8_qop_batch_strides(const q8_tensor *t, int nb, int64_t *str) {
    int tb = t->ndim - 2;
    int64_t s = 1;
    for (int i = nb - 1; i >= 0; i--) {
        int ti = i - (nb - tb);
        if (ti < 0 || t->dims[ti] == 1) {
            str[i] = 0;
        } else {
            str[i] = s;
            s *= t->dims[ti];
        }
    }
}

q8_status q8_qdq_parse(const q8_graph *g, const q8_node *n, q8_qdq *o, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *s = q8_in(g, n, 1), *z = q8_in(g, n, 2);
    if (!s) return q8_node_fail(err, Q8_ERR_FORMAT, n, "the scale (input 1) is missing");
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    if (z) Q8_TRY(q8_check_input(g, n, 2, Q8_UNDEFINED, err));
    if (s->dtype != Q8_F32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "scale '%s' is %s, only float32 is "
                            "supported", s->name, q8_dtype_name(s->dtype));
    int64_t cnt = q8_tensor_numel(s);
    if (z && q8_tensor_numel(z) != cnt)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "zero point '%s' has %lld values, the scale "
                            "%lld", z->name, (long long)q8_tensor_numel(z), (long long)cnt);
    o->zp_type = z ? z->dtype : Q8_UNDEFINED;
    o->count = 1;
    o->inner = 1;
    o->axis = -1;
    if (cnt != 1) { /* per axis */
        int64_t axis = q8_attr_int(n, "axis", 1);
        int ax;
        if (s->ndim != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "scale '%s' has rank %d, expected a "
                                "scalar or 1-D", s->name, s->ndim);
        if (!q8_norm_axis(axis, x->ndim, &ax))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                                (long long)axis, x->ndim);
        if (x->dims[ax] != cnt)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "scale '%s' has %lld values, axis %d of "
                                "x has %lld", s->name, (long long)cnt, ax,
                                (long long)x->dims[ax]);
        o->axis = ax;
        o->count = cnt;
        for (int i = ax + 1; i < x->ndim; i++) o->inner *= x->dims[i];
    }
    const float *sc = s->data;
    for (int64_t c = 0; sc && c < cnt; c++)
        if (!good_scale(sc[c]))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scale %lld is %g, must be positive and "
                                "finite", (long long)c, sc[c]);
    return Q8_OK;
}

q8_status q8_ql_const(const q8_graph *g, const q8_node *n, int i, const char *what,
                      q8_dtype dtype, int64_t nmax, int64_t *count, q8_error *err) {
    *count = 0;
    const q8_tensor *t = q8_in(g, n, i);
    if (!t) return Q8_OK;
    if (!t->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') must be a constant", i,
                            t->name);
    if (t->dtype != dtype)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%s '%s' is %s, expected %s", what,
                            t->name, q8_dtype_name(t->dtype), q8_dtype_name(dtype));
    int64_t c = q8_tensor_numel(t);
    if (c != 1 && c != nmax)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s '%s' has %lld values, expected 1 or %lld",
                            what, t->name, (long long)c, (long long)nmax);
    if (dtype == Q8_F32)
        for (int64_t k = 0; k < c; k++)
            if (!good_scale(((const float *)t->data)[k]))
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s '%s' value %lld is %g, must be "
                                    "positive and finite", what, t->name, (long long)k,
                                    ((const float *)t->data)[k]);
    *count = c;
    return Q8_OK;
}

q8_status q8_ql_runtime_zp(const q8_graph *g, const q8_node *n, int i, const char *what,
                           q8_dtype dtype, bool *runtime, q8_error *err) {
    const q8_tensor *t = q8_in(g, n, i);
    *runtime = t && !t->data;
    if (!*runtime) return Q8_OK;
    if (t->dtype != dtype)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%s '%s' is %s, expected %s", what,
                            t->name, q8_dtype_name(t->dtype), q8_dtype_name(dtype));
    if (q8_tensor_numel(t) != 1)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%s '%s' is computed at run time with "
                            "%lld values: only one (per tensor) is supported", what, t->name,
                            (long long)q8_tensor_numel(t));
    return Q8_OK;
}

int32_t q8_ql_zp(const q8_graph *g, const q8_node *n, int i, int64_t c) {
    const q8_tensor *t = q8_in(g, n, i);
    if (!t) return 0;
    if (q8_tensor_numel(t) == 1) c = 0;
    return t->dtype == Q8_U8 ? ((const uint8_t *)t->data)[c] : ((const int8_t *)t->data)[c];
}

float q8_ql_scale(const q8_graph *g, const q8_node *n, int i, int64_t c) {
    const q8_tensor *t = q8_in(g, n, i);
    if (q8_tensor_numel(t) == 1) c = 0;
    return ((const float *)t->data)[c];
}

q8_status q8_ql_data(const q8_graph *g, const q8_node *n, int i, const char *what, bool *u8,
                     q8_error *err) {
    Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *t = q8_in(g, n, i);
    if (t->dtype != Q8_I8 && t->dtype != Q8_U8)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%s '%s' is %s, expected int8 or uint8",
                            what, t->name, q8_dtype_name(t->dtype));
    *u8 = t->dtype == Q8_U8;
    return Q8_OK;
}

int64_t q8_ql_max_dev(bool u8, int32_t zp) {
    int64_t lo = (u8 ? 0 : -128) - zp, hi = (u8 ? 255 : 127) - zp;
    return -lo > hi ? -lo : hi;
}

q8_status q8_ql_check_k(const q8_node *n, int64_t K, int64_t ma, int64_t mb, q8_error *err) {
    if (K > 0 && K > (((int64_t)1 << 31) - 1) / (ma * mb))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "reduction length %lld is too long for int32 accumulators with "
                            "these zero points", (long long)K);
    return Q8_OK;
}
