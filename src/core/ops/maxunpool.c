/* MaxUnpool (see maxunpool.h). */
#include "ops/maxunpool.h"

#include <string.h>

#include "op.h"

static q8_status maxunpool_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_I64, err));
    const q8_tensor *x = q8_in(g, n, 0), *ind = q8_in(g, n, 1);
    if (x->dtype != Q8_F32 && x->dtype != Q8_F64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, expected float32 or "
                            "float64", q8_dtype_name(x->dtype));
    if (x->ndim < 3)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input has rank %d, expected >= 3 "
                            "([N, C, D1, ...])", x->ndim);
    bool same = ind->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = ind->dims[i] == x->dims[i];
    if (!same) return q8_node_fail(err, Q8_ERR_SHAPE, n, "indices must have the input's shape");
    int k = x->ndim - 2, nk = 0, ns = 0, np = 0;
    const int64_t *ks = q8_attr_ints(n, "kernel_shape", &nk);
    const int64_t *st = q8_attr_ints(n, "strides", &ns);
    const int64_t *pd = q8_attr_ints(n, "pads", &np);
    if (!ks || nk != k)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "kernel_shape must have %d values", k);
    if ((st && ns != k) || (pd && np != 2 * k))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "strides must have %d values and pads %d",
                            k, 2 * k);
    q8_maxunpool_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->elem = q8_dtype_size(x->dtype);
    p->rank = x->ndim;
    p->unpooled[0] = x->dims[0];
    p->unpooled[1] = x->dims[1];
    for (int i = 0; i < k; i++) {
        int64_t s = st ? st[i] : 1, pb = pd ? pd[i] : 0, pe = pd ? pd[k + i] : 0;
        if (ks[i] < 1 || s < 1 || pb < 0 || pe < 0 || ks[i] > (1 << 30) || s > (1 << 30) ||
            pb > (1 << 30) || pe > (1 << 30))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "kernel_shape and strides must be "
                                "positive, pads not negative (dim %d)", i);
        int64_t d = 0;
        if (x->dims[2 + i] > 0 && (x->dims[2 + i] - 1 > (INT64_C(1) << 58) / s ||
                                   __builtin_mul_overflow(x->dims[2 + i] - 1, s, &d) ||
                                   __builtin_add_overflow(d, ks[i] - pb - pe, &d)))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "the unpooled shape is too large (dim %d)", i);
        if (d < 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "pads exceed the unpooled dim %d", i);
        p->unpooled[2 + i] = d;
    }
    if (!q8_shape_numel(p->unpooled, p->rank, &p->unpooled_numel))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "the unpooled shape is too large");
    memcpy(p->out, p->unpooled, sizeof p->out);
    if (q8_has_input(n, 2)) {
        int cnt = 0;
        Q8_TRY(q8_const_ints(g, n, 2, p->out, Q8_MAX_DIMS, &cnt, err));
        if (cnt != p->rank)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "output_shape has %d values, expected %d",
                                cnt, p->rank);
        for (int i = 0; i < p->rank; i++)
            if (p->out[i] < p->unpooled[i] || (i < 2 && p->out[i] != p->unpooled[i]))
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "output_shape dim %d is %lld, the "
                                    "unpooled tensor's %lld (N and C must match, the others "
                                    "be at least as large)", i, (long long)p->out[i],
                                    (long long)p->unpooled[i]);
        p->padded = memcmp(p->out, p->unpooled, sizeof(int64_t) * (size_t)p->rank) != 0;
    }
    p->in_numel = q8_tensor_numel(x);
    Q8_TRY(q8_set_output(g, n, 0, x->dtype, p->out, p->rank, err));
    p->out_numel = q8_tensor_numel(q8_out(g, n, 0));
    return Q8_OK;
}

const q8_op_schema q8_schema_max_unpool = {.infer = maxunpool_infer};
