/* MaxPool and AveragePool (see pool.h). */
#include <string.h>

#include "ops/pool.h"

#include "op.h"

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* Parse a list attribute of nsp (or 2*nsp for pads) values, each in
 * [lo, INT32_MAX] (the cap keeps every size computation far from overflow). */
static q8_status ints_attr(const q8_node *n, const char *name, int want, int64_t lo, int64_t def,
                           int64_t *out, q8_error *err) {
    int cnt;
    const int64_t *v = q8_attr_ints(n, name, &cnt);
    if (!v) {
        for (int i = 0; i < want; i++) out[i] = def;
        return Q8_OK;
    }
    if (cnt != want)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s has %d values, expected %d", name, cnt,
                            want);
    for (int i = 0; i < want; i++) {
        if (v[i] < lo || v[i] > INT32_MAX)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s[%d] is %lld, must be >= %lld%s", name, i,
                                (long long)v[i], (long long)lo,
                                v[i] > INT32_MAX ? " and < 2^31" : "");
        out[i] = v[i];
    }
    return Q8_OK;
}

static q8_status pool_infer(q8_graph *g, q8_node *n, q8_error *err, bool avg) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, avg ? 1 : 2, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && (avg || (x->dtype != Q8_I8 && x->dtype != Q8_U8)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, supported: float32%s",
                            q8_dtype_name(x->dtype), avg ? "" : ", int8, uint8");
    int nsp = x->ndim - 2;
    if (nsp < 1 || nsp > 3)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input has rank %d; pooling needs N x C x 1 to 3 spatial dims",
                            x->ndim);
    int kcnt;
    if (!q8_attr_ints(n, "kernel_shape", &kcnt))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "kernel_shape is required");
    int64_t k[3], s[3], d[3], pads[6];
    Q8_TRY(ints_attr(n, "kernel_shape", nsp, 1, 1, k, err));
    Q8_TRY(ints_attr(n, "strides", nsp, 1, 1, s, err));
    Q8_TRY(ints_attr(n, "dilations", nsp, 1, 1, d, err));
    Q8_TRY(ints_attr(n, "pads", 2 * nsp, 0, 0, pads, err));
    int64_t ceil_mode = q8_attr_int(n, "ceil_mode", 0);
    int64_t order = q8_attr_int(n, "storage_order", 0);
    int64_t cip = q8_attr_int(n, "count_include_pad", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "ceil_mode is %lld, expected 0 or 1",
                            (long long)ceil_mode);
    if (order != 0 && order != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "storage_order is %lld, expected 0 or 1",
                            (long long)order);
    if (cip != 0 && cip != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "count_include_pad is %lld, expected 0 or 1",
                            (long long)cip);
    const char *ap = q8_attr_str(n, "auto_pad", "NOTSET");
    bool same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    bool valid = strcmp(ap, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0 && *ap)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "auto_pad is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                            ap);

    q8_pool_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->avg = avg;
    p->include_pad = cip == 1;
    p->col_major = order == 1;
    p->dtype = x->dtype;
    p->nc = x->dims[0] * x->dims[1];
    int64_t ydims[Q8_MAX_DIMS] = {x->dims[0], x->dims[1]};
    for (int i = 0; i < 3; i++) {
        p->in[i] = p->out[i] = p->k[i] = p->s[i] = p->d[i] = 1;
        p->pb[i] = p->pe[i] = 0;
    }
    for (int i = 0; i < nsp; i++) {
        int j = 3 - nsp + i; /* internal dim */
        int64_t in = x->dims[2 + i], ek = (k[i] - 1) * d[i] + 1, pb = pads[i];
        int64_t pe = pads[nsp + i], out;
        if (same_upper || same_lower) {
            out = ceil_div(in, s[i]);
            int64_t total = (out - 1) * s[i] + ek - in;
            if (total < 0) total = 0;
            pb = same_lower ? (total + 1) / 2 : total / 2;
            pe = total - pb;
        } else {
            if (valid) pb = pe = 0;
            /* (onnxruntime: pads < kernel_shape; with dilations, the extent) */
            if (pb >= ek || pe >= ek)
                return q8_node_fail(
                    err, Q8_ERR_FORMAT, n,
                    "pads for spatial dim %d are %lld and %lld; each must be smaller "
                    "than the kernel extent (%lld)",
                    i, (long long)pb, (long long)pe, (long long)ek);
            int64_t span = in + pb + pe - ek;
            if (span < 0)
                return q8_node_fail(
                    err, Q8_ERR_SHAPE, n,
                    "spatial dim %d: the kernel covers %lld elements but the padded "
                    "input has only %lld",
                    i, (long long)ek, (long long)(in + pb + pe));
            out = (ceil_mode ? ceil_div(span, s[i]) : span / s[i]) + 1;
            /* ceil_mode: the last window must start inside the input or the
             * left padding, not in the right padding only. */
            if (ceil_mode && (out - 1) * s[i] >= in + pb) out--;
        }
        p->in[j] = in;
        p->out[j] = out;
        p->k[j] = k[i];
        p->s[j] = s[i];
        p->d[j] = d[i];
        p->pb[j] = pb;
        p->pe[j] = pe;
        ydims[2 + i] = out;
    }
    Q8_TRY(q8_set_output(g, n, 0, x->dtype, ydims, x->ndim, err));
    return q8_set_output(g, n, 1, Q8_I64, ydims, x->ndim, err);
}

static q8_status maxpool_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return pool_infer(g, n, err, false);
}
static q8_status avgpool_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return pool_infer(g, n, err, true);
}

const q8_op_schema q8_schema_max_pool = {.infer = maxpool_infer};
const q8_op_schema q8_schema_average_pool = {.infer = avgpool_infer};
