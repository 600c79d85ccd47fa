/* ConvTranspose (see conv_transpose.h). */
#include "ops/conv_transpose.h"

#include "op.h"

static int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

static q8_status convt_infer(q8_graph *g, q8_node *n, q8_error *err) {
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
    int64_t grp = q8_attr_int(n, "group", 1), c = x->dims[1];
    if (grp < 1 || grp > c || c % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "group %lld does not divide the %lld input channels", (long long)grp,
                            (long long)c);
    if (w->dims[0] != c)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld input channels (dim 0), the input has %lld",
                            (long long)w->dims[0], (long long)c);
    if (w->dims[1] < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "weight has no output channels");
    int64_t m = w->dims[1] * grp;
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
    int cnt;
    int64_t opad[3] = {0, 0, 0};
    const int64_t *op = q8_attr_ints(n, "output_padding", &cnt);
    if (op) {
        if (cnt != nsp)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "output_padding has %d values, expected %d",
                                cnt, nsp);
        q8_conv_widen(nsp, op, 0, opad);
        for (int i = 0; i < 3; i++)
            if (opad[i] < 0 || (opad[i] >= geo.s[i] && opad[i] >= geo.d[i]))
                return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                    "output_padding %lld must be >= 0 and below the stride or "
                                    "dilation", (long long)opad[i]);
    }
    const int64_t *os = q8_attr_ints(n, "output_shape", &cnt);
    if (os && cnt != nsp && cnt != nsp + 2)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "output_shape has %d values, expected %d",
                            cnt, nsp);
    for (int i = 0; i < 3; i++) {
        int64_t ext = (geo.k[i] - 1) * geo.d[i] + 1;
        int64_t full = geo.s[i] * (geo.in[i] - 1) + opad[i] + ext;
        int64_t want = -1;
        if (os) want = i < 3 - nsp ? 1 : os[cnt - nsp + i - (3 - nsp)];
        else if (ap == Q8_PAD_SAME_UPPER || ap == Q8_PAD_SAME_LOWER) want = geo.in[i] * geo.s[i];
        if (want >= 0 && i >= 3 - nsp) {
            int64_t total = full - want;
            if (ap == Q8_PAD_SAME_UPPER) geo.pb[i] = floor_div2(total);
            else geo.pb[i] = total - floor_div2(total);
            geo.pe[i] = total - geo.pb[i];
        } else if (ap == Q8_PAD_VALID) {
            geo.pb[i] = geo.pe[i] = 0;
        }
        geo.out[i] = full - geo.pb[i] - geo.pe[i];
        if (geo.out[i] < 0 || (want >= 0 && i >= 3 - nsp && geo.out[i] != want))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "output spatial dim %d would be %lld",
                                i - (3 - nsp), (long long)geo.out[i]);
    }
    int64_t out[5] = {x->dims[0], m};
    for (int i = 0; i < nsp; i++) out[2 + i] = geo.out[3 - nsp + i];
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, out, x->ndim, err));

    q8_conv_transpose_params *p = q8_node_params(n, sizeof *p, err);
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
    p->rows = p->mg * p->kprod;
    p->has_bias = b != NULL;
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    return Q8_OK;
}

const q8_op_schema q8_schema_conv_transpose = {.infer = convt_infer};
