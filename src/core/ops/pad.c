/* Pad (see pad.h). */
#include "ops/pad.h"

#include <string.h>

#include "op.h"
#include "ops/tensor_args.h"

static q8_status pad_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 4, 1, 1, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, np, na = r;
    q8_pad_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->esize = es;
    int64_t pads[2 * Q8_MAX_DIMS], axes[Q8_MAX_DIMS];
    Q8_TRY(q8_const_ints(g, n, 1, pads, 2 * Q8_MAX_DIMS, &np, err));
    if (q8_in(g, n, 2)) {
        const q8_tensor *cv = q8_in(g, n, 2);
        Q8_TRY(q8_check_input(g, n, 2, x->dtype, err));
        int64_t cn = q8_tensor_numel(cv);
        if (cn > 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "constant_value has %lld values, expected one", (long long)cn);
        p->value_input = cn == 1; /* an empty one means the default 0 */
    }
    const q8_tensor *at = q8_in(g, n, 3);
    if (at) {
        Q8_TRY(q8_const_ints(g, n, 3, axes, Q8_MAX_DIMS, &na, err));
        Q8_TRY(q8_ta_norm_axes(n, "axes", axes, na, r, err));
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    char sb[200];
    if (np != 2 * na)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "pads %s has %d values, expected %d (2 per axis)",
                            q8_ta_list_str(pads, np, sb, sizeof sb), np, 2 * na);
    const char *mode = q8_attr_str(n, "mode", "constant");
    if (strcmp(mode, "constant") == 0) p->mode = Q8_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0) p->mode = Q8_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0) p->mode = Q8_PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0) p->mode = Q8_PAD_WRAP;
    else return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "mode '%s' is not supported", mode);

    int64_t pe[Q8_MAX_DIMS] = {0}, dims[Q8_MAX_DIMS];
    for (int i = 0; i < na; i++) {
        p->pb[axes[i]] = pads[i];
        pe[axes[i]] = pads[na + i];
    }
    for (int d = 0; d < r; d++) {
        int64_t dim = x->dims[d], b = p->pb[d], e = pe[d];
        dims[d] = dim + b + e;
        if (dims[d] < 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "pads %lld, %lld crop more than axis %d's size %lld", (long long)b,
                                (long long)e, d, (long long)dim);
        bool grows = b > 0 || e > 0;
        if (p->mode != Q8_PAD_CONSTANT && grows && dim == 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s padding of axis %d, which has size 0",
                                mode, d);
        if (p->mode == Q8_PAD_REFLECT && (b > dim - 1 || e > dim - 1))
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "reflect pads %lld, %lld of axis %d need at most size - 1 = %lld",
                                (long long)b, (long long)e, d, (long long)(dim - 1));
    }
    return q8_set_output(g, n, 0, x->dtype, dims, r, err);
}

const q8_op_schema q8_schema_pad = {.infer = pad_infer};
