/* q8.EwChain (the definition: ewchain.h): one float32, int8 or uint8 input,
 * the steps and the two scaled sides as attributes. */
#include "ops/ewchain.h"

#include <math.h>
#include <stdlib.h>

#include "op.h"

/* A scale attribute: present, finite, > 0 (a DequantizeLinear's or a
 * QuantizeLinear's constant scale). */
static q8_status scale_of(const q8_node *n, const char *name, float *v, q8_error *err) {
    const q8_attr *a = q8_attr_find(n, name);
    if (!a || a->type != Q8_ATTR_FLOAT || !(a->f > 0) || !isfinite(a->f))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s must be a finite float > 0", name);
    *v = a->f;
    return Q8_OK;
}

/* A zero point attribute of an int8 (dt) or uint8 side, 0 when absent. */
static q8_status zero_point_of(const q8_node *n, const char *name, q8_dtype dt, int32_t *v,
                               q8_error *err) {
    int64_t z = q8_attr_int(n, name, 0);
    int64_t lo = dt == Q8_I8 ? -128 : 0, hi = dt == Q8_I8 ? 127 : 255;
    if (z < lo || z > hi)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s %lld is outside %s's range", name,
                            (long long)z, q8_dtype_name(dt));
    *v = (int32_t)z;
    return Q8_OK;
}

/* Inputs 1-4: a BatchNormalization's scale, B, mean and var, constant
 * float32 of one value a channel (dim 1 of X, rank >= 2). */
static q8_status bn_of(const q8_graph *g, const q8_node *n, q8_ewchain_params *p,
                       q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0);
    if (n->n_inputs != 5)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "1 input, or 5 with a BatchNormalization");
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "x '%s' needs a channel dim", x->name);
    p->bn_c = x->dims[1];
    p->bn_s = 1;
    for (int d = 2; d < x->ndim; d++) p->bn_s *= x->dims[d];
    for (int i = 1; i < 5; i++) {
        const q8_tensor *t = n->inputs[i] >= 0 ? q8_in(g, n, i) : NULL;
        if (!t || !t->data || t->dtype != Q8_F32 || q8_tensor_numel(t) != p->bn_c)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d must be a constant float32 "
                                "of %lld values (x's channels)", i, (long long)p->bn_c);
    }
    const q8_attr *e = q8_attr_find(n, "bn_epsilon");
    if (!e || e->type != Q8_ATTR_FLOAT || !(e->f >= 0))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "bn_epsilon must be a float >= 0");
    p->bn_eps = e->f;
    return Q8_OK;
}

static q8_status ewchain_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 5, 1, 1, err));
    q8_ewchain_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    const q8_tensor *x = q8_in(g, n, 0);
    p->bn = n->n_inputs > 1;
    if (p->bn) Q8_TRY(bn_of(g, n, p, err));
    const q8_attr *st = q8_attr_find(n, "steps"), *cs = q8_attr_find(n, "consts");
    int min_steps = p->bn ? 0 : 1;
    if (!st || st->type != Q8_ATTR_INTS || st->n < min_steps || st->n > Q8_EWCHAIN_MAX_STEPS)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "steps must be %d to %d ints", min_steps,
                            Q8_EWCHAIN_MAX_STEPS);
    if (!cs || cs->type != Q8_ATTR_FLOATS || cs->n != 2 * st->n)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "consts must be 2 floats a step (%d)",
                            2 * st->n);
    p->n_steps = st->n;
    for (int k = 0; k < st->n; k++) {
        if (st->ints[k] < Q8_EW_MUL || st->ints[k] >= Q8_EW_KIND_END)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "step %d: unknown kind %lld", k,
                                (long long)st->ints[k]);
        p->steps[k] = (q8_ew_step){(int32_t)st->ints[k], cs->floats[2 * k], cs->floats[2 * k + 1]};
    }
    /* X: float32, or int8 / uint8 / int32 with x_scale (a DequantizeLinear
     * or a Cast to float taken in; int32 only as a Cast: zero point 0) */
    p->x_dtype = x->dtype;
    if (q8_attr_find(n, "x_scale")) {
        if (x->dtype != Q8_I8 && x->dtype != Q8_U8 && x->dtype != Q8_I32)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "x '%s' is %s: x_scale needs int8, "
                                "uint8 or int32", x->name, q8_dtype_name(x->dtype));
        Q8_TRY(scale_of(n, "x_scale", &p->x_scale, err));
        if (x->dtype == Q8_I32 && q8_attr_int(n, "x_zero_point", 0) != 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "an int32 x takes no zero point");
        if (x->dtype != Q8_I32)
            Q8_TRY(zero_point_of(n, "x_zero_point", x->dtype, &p->x_zero_point, err));
    } else if (x->dtype != Q8_F32) {
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "x '%s' is %s, expected float32",
                            x->name, q8_dtype_name(x->dtype));
    }
    /* Y: float32, or int8 / uint8 at y_scale (a QuantizeLinear taken in) */
    p->y_dtype = Q8_F32;
    if (q8_attr_find(n, "y_scale")) {
        int64_t dt = q8_attr_int(n, "y_dtype", 3);
        if (dt != 3 && dt != 2)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_dtype %lld: 3 (int8) or 2 (uint8)",
                                (long long)dt);
        p->y_dtype = dt == 3 ? Q8_I8 : Q8_U8;
        Q8_TRY(scale_of(n, "y_scale", &p->y_scale, err));
        Q8_TRY(zero_point_of(n, "y_zero_point", p->y_dtype, &p->y_zero_point, err));
    }
    p->n = q8_tensor_numel(x);
    Q8_TRY(q8_set_output(g, n, 0, p->y_dtype, x->dims, x->ndim, err));
    if (p->y_dtype == Q8_F32) return Q8_OK;
    /* the output's quantization parameters, as QuantizeLinear's infer sets them */
    q8_tensor *y = q8_out(g, n, 0);
    float *sc = malloc(sizeof(float));
    if (!sc) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    sc[0] = p->y_scale;
    free(y->q.scale);
    y->q = (q8_qparams){.axis = -1, .n = 1, .scale = sc, .zero_point = p->y_zero_point};
    return Q8_OK;
}

const q8_op_schema q8_schema_ewchain = {.infer = ewchain_infer, .flags = Q8_OPF_INPLACE};
