/* ConvInteger and QLinearConv (see conv_integer.h). */
#include "ops/conv_integer.h"

#include "op.h"

static q8_status qlc_infer_common(q8_graph *g, q8_node *n, bool qlinear, q8_error *err) {
    int iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    Q8_TRY(qlinear ? q8_check_io(n, 8, 9, 1, 1, err) : q8_check_io(n, 2, 4, 1, 1, err));
    bool x_u8, w_u8;
    Q8_TRY(q8_ql_data(g, n, 0, "x", &x_u8, err));
    Q8_TRY(q8_ql_data(g, n, iw, "w", &w_u8, err));
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, iw);
    if (!w->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') must be a constant", iw,
                            w->name);
    q8_qconv_geom geo;
    Q8_TRY(q8_qconv_geom_parse(g, n, iw, false, &geo, err));
    int64_t czx = 0, czw, c1 = 1, cws = 1, cyz = 1;
    bool zx_rt = false;
    if (!qlinear) Q8_TRY(q8_ql_runtime_zp(g, n, izx, "x_zero_point", x->dtype, &zx_rt, err));
    if (!zx_rt) Q8_TRY(q8_ql_const(g, n, izx, "x_zero_point", x->dtype, 1, &czx, err));
    Q8_TRY(q8_ql_const(g, n, izw, "w_zero_point", w->dtype, geo.M, &czw, err));
    const q8_tensor *yz = qlinear ? q8_in(g, n, 7) : NULL;
    const int32_t *bias = NULL;
    if (qlinear) {
        if (!q8_in(g, n, 1) || !q8_in(g, n, 4) || !q8_in(g, n, 6) || !yz)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scales and y_zero_point are required");
        Q8_TRY(q8_ql_const(g, n, 1, "x_scale", Q8_F32, 1, &c1, err));
        Q8_TRY(q8_ql_const(g, n, 4, "w_scale", Q8_F32, geo.M, &cws, err));
        Q8_TRY(q8_ql_const(g, n, 6, "y_scale", Q8_F32, 1, &c1, err));
        if (yz->dtype != Q8_I8 && yz->dtype != Q8_U8)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "y_zero_point is %s, expected int8 "
                                "or uint8", q8_dtype_name(yz->dtype));
        Q8_TRY(q8_ql_const(g, n, 7, "y_zero_point", yz->dtype, 1, &cyz, err));
        Q8_TRY(q8_qop_bias(g, n, 8, geo.M, &bias, err));
    }
    int64_t Cg = geo.C / geo.group, K = Cg * geo.KH * geo.KW, mw = 0;
    for (int64_t c = 0; c < (czw ? czw : 1); c++) {
        int64_t dv = q8_ql_max_dev(w_u8, q8_ql_zp(g, n, izw, c));
        mw = dv > mw ? dv : mw;
    }
    /* a run-time zero point may be any value of x's type */
    Q8_TRY(q8_ql_check_k(n, K, zx_rt ? 255 : q8_ql_max_dev(x_u8, q8_ql_zp(g, n, izx, 0)), mw,
                         err));

    int64_t dims[4] = {geo.N, geo.M, geo.OH, geo.OW};
    if (geo.nsp == 1) dims[2] = geo.OW;
    q8_dtype yt = qlinear ? yz->dtype : Q8_I32;
    Q8_TRY(q8_set_output(g, n, 0, yt, dims, 2 + geo.nsp, err));

    q8_conv_integer_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    int32_t zx = zx_rt ? 0 : q8_ql_zp(g, n, izx, 0);
    *p = (q8_conv_integer_params){.qlinear = qlinear, .x_u8 = x_u8, .w_u8 = w_u8,
                                  .y_u8 = yt == Q8_U8, .geo = geo, .Cg = Cg,
                                  .Mg = geo.M / geo.group, .K = K, .P = geo.OH * geo.OW,
                                  .iw = iw, .izw = izw, .beta = zx - (x_u8 ? 128 : 0),
                                  .pad = (uint8_t)zx, .zx_runtime = zx_rt,
                                  .has_bias = bias != NULL};
    if (qlinear) {
        p->x_scale = q8_ql_scale(g, n, 1, 0);
        p->y_scale = q8_ql_scale(g, n, 6, 0);
        p->y_zp = q8_ql_zp(g, n, 7, 0);
    }
    return Q8_OK;
}

static q8_status convinteger_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return qlc_infer_common(g, n, false, err);
}
static q8_status qlinearconv_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return qlc_infer_common(g, n, true, err);
}

const q8_op_schema q8_schema_conv_integer = {.infer = convinteger_infer};
const q8_op_schema q8_schema_qlinear_conv = {.infer = qlinearconv_infer};
