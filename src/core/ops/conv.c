/* Conv (see conv.h). */
#include "ops/conv.h"

#include "op.h"

static q8_status conv_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1), *b = q8_in(g, n, 2);
    if (x->ndim < 3 || x->ndim > 5)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input has rank %d; only 1 to 3 spatial dims (rank 3 to 5) are "
                            "supported", x->ndim);
    if (w->ndim != x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "weight has rank %d, the input rank %d",
                            w->ndim, x->ndim);
    int nsp = x->ndim - 2;
    int64_t grp = q8_attr_int(n, "group", 1);
    int64_t c = x->dims[1], m = w->dims[0];
    if (grp < 1 || grp > c || c % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "group %lld does not divide the %lld input channels", (long long)grp,
                            (long long)c);
    if (w->dims[1] * grp != c)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld input channels per group, expected C/group = "
                            "%lld/%lld = %lld",
                            (long long)w->dims[1], (long long)c, (long long)grp,
                            (long long)(c / grp));
    if (m < 1 || m % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld output channels, not a positive multiple of "
                            "group %lld",
                            (long long)m, (long long)grp);
    for (int i = 0; i < nsp; i++)
        if (w->dims[2 + i] < 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "weight has an empty kernel dim %d", i);
    if (b) {
        Q8_TRY(q8_check_input(g, n, 2, Q8_F32, err));
        if (b->ndim != 1 || b->dims[0] != m)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "bias must have shape [%lld]", (long long)m);
    }
    q8_conv_geom geo;
    q8_auto_pad ap;
    Q8_TRY(q8_conv_read_attrs(n, nsp, w->dims + 2, &geo, &ap, err));
    q8_conv_widen(nsp, x->dims + 2, 1, geo.in);
    Q8_TRY(q8_conv_out_shape(n, ap, &geo, err));
    int64_t out[5] = {x->dims[0], m};
    for (int i = 0; i < nsp; i++) out[2 + i] = geo.out[3 - nsp + i];
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, out, x->ndim, err));

    q8_conv_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->nb = x->dims[0];
    p->c = c;
    p->m = m;
    p->g = grp;
    p->cg = c / grp;
    p->mg = m / grp;
    p->geo = geo;
    p->in_sp = geo.in[0] * geo.in[1] * geo.in[2];
    p->out_sp = geo.out[0] * geo.out[1] * geo.out[2];
    p->kprod = geo.k[0] * geo.k[1] * geo.k[2];
    p->kg = p->cg * p->kprod;
    p->has_bias = b != NULL;
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    return Q8_OK;
}

const q8_op_schema q8_schema_conv = {.infer = conv_infer};
