/* Range: start + i * delta for i < max(ceil((limit - start) / delta), 0).
 * The three scalars must be constants (they decide the output's length);
 * the node is then folded at load time. Integers use exact arithmetic,
 * float32 computes the count in float as onnxruntime does. */
#include <math.h>

#include "op.h"

static double scalar(const q8_tensor *t) {
    switch (t->dtype) {
    case Q8_F32: return *(const float *)t->data;
    case Q8_F64: return *(const double *)t->data;
    default: return 0;
    }
}

static int64_t iscalar(const q8_tensor *t) {
    switch (t->dtype) {
    case Q8_I16: return *(const int16_t *)t->data;
    case Q8_I32: return *(const int32_t *)t->data;
    case Q8_I64: return *(const int64_t *)t->data;
    default: return 0;
    }
}

static q8_status range_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 3, 3, 1, 1, err));
    static const char *const names[3] = {"start", "limit", "delta"};
    const q8_tensor *t[3];
    for (int i = 0; i < 3; i++) {
        Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
        t[i] = q8_in(g, n, i);
        if (q8_tensor_numel(t[i]) != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s must be a scalar, has %lld values",
                                names[i], (long long)q8_tensor_numel(t[i]));
        if (!t[i]->data)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "%s ('%s') must be a constant: it decides the output's length",
                                names[i], t[i]->name);
        if (t[i]->dtype != t[0]->dtype)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s is %s but start is %s", names[i],
                                q8_dtype_name(t[i]->dtype), q8_dtype_name(t[0]->dtype));
    }
    q8_dtype dt = t[0]->dtype;
    int64_t count;
    if (dt == Q8_F32 || dt == Q8_F64) {
        double c;
        if (dt == Q8_F32) {
            float s = (float)scalar(t[0]), l = (float)scalar(t[1]), d = (float)scalar(t[2]);
            c = d == 0.0f ? NAN : ceilf((l - s) / d);
        } else {
            double s = scalar(t[0]), l = scalar(t[1]), d = scalar(t[2]);
            c = d == 0.0 ? NAN : ceil((l - s) / d);
        }
        if (!(c < 4e18) || isnan(c))
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "start %g, limit %g, delta %g give no valid length", scalar(t[0]),
                                scalar(t[1]), scalar(t[2]));
        count = c > 0 ? (int64_t)c : 0;
    } else if (dt == Q8_I16 || dt == Q8_I32 || dt == Q8_I64) {
        __int128 s = iscalar(t[0]), l = iscalar(t[1]), d = iscalar(t[2]);
        if (d == 0) return q8_node_fail(err, Q8_ERR_SHAPE, n, "delta is 0");
        __int128 span = l - s, q = span / d;
        if (span % d != 0 && (span > 0) == (d > 0)) q++;
        count = q > 0 ? (int64_t)q : 0;
    } else {
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "dtype %s (float, double, int16, int32, int64)", q8_dtype_name(dt));
    }
    return q8_set_output(g, n, 0, dt, &count, 1, err);
}

const q8_op_schema q8_schema_range = {.infer = range_infer};
