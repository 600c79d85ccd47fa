/* q8.QConvTranspose (see qconvtranspose.h). */
#include "ops/qconvtranspose.h"

#include "op.h"

static q8_status qconvt_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    float sx, sy;
    bool i8;
    const float *sw;
    const int32_t *bias;
    q8_act act;
    q8_qconv_geom geo;
    Q8_TRY(q8_qop_act_scale(g, n, 0, "X", &sx, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    Q8_TRY(q8_qconv_geom_parse(g, n, 1, true, &geo, err));
    Q8_TRY(q8_qop_weight_scales(g, n, 1, geo.M, &sw, err));
    Q8_TRY(q8_qop_bias(g, n, 2, geo.M, &bias, err));
    Q8_TRY(q8_qop_act(n, &act, err));
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    int64_t Cg = geo.C / geo.group, taps = geo.KH * geo.KW;
    Q8_TRY(q8_qop_check_k(n, Cg * taps, err));

    int64_t dims[4] = {geo.N, geo.M, geo.OH, geo.OW};
    if (geo.nsp == 1) dims[2] = geo.OW;
    Q8_TRY(q8_set_output(g, n, 0, i8 ? Q8_I8 : Q8_F32, dims, 2 + geo.nsp, err));
    if (i8) Q8_TRY(q8_qop_set_out_scale(g, n, sy, err));

    q8_qconvtranspose_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->geo = geo;
    p->Cg = Cg;
    p->Mg = geo.M / geo.group;
    p->q = (q8_qop_quant){.sx = sx, .out_i8 = i8, .sy = sy, .act = act};
    p->has_bias = bias != NULL;
    return Q8_OK;
}

const q8_op_schema q8_schema_qconv_transpose = {.infer = qconvt_infer};
