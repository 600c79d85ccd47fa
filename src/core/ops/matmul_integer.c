/* MatMulInteger and QLinearMatMul (see matmul_integer.h). */
#include "ops/matmul_integer.h"

#include "op.h"

static q8_status mmi_infer_common(q8_graph *g, q8_node *n, bool qlinear, q8_error *err) {
    int ia = 0, ib = qlinear ? 3 : 1, iza = 2, izb = qlinear ? 5 : 3;
    Q8_TRY(qlinear ? q8_check_io(n, 8, 8, 1, 1, err) : q8_check_io(n, 2, 4, 1, 1, err));
    bool a_u8, b_u8;
    Q8_TRY(q8_ql_data(g, n, ia, "A", &a_u8, err));
    Q8_TRY(q8_ql_data(g, n, ib, "B", &b_u8, err));
    const q8_tensor *a = q8_in(g, n, ia), *b = q8_in(g, n, ib);
    if (a->ndim < 2 || b->ndim < 2)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "A and B need rank >= 2 here, they "
                            "have %d and %d", a->ndim, b->ndim);
    int64_t M = a->dims[a->ndim - 2], K = a->dims[a->ndim - 1], N = b->dims[b->ndim - 1];
    if (b->dims[b->ndim - 2] != K)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "A has K = %lld, B has %lld rows",
                            (long long)K, (long long)b->dims[b->ndim - 2]);
    int64_t cza = 0, czb, csa = 1, csb = 1, cys = 1, cyz = 1;
    bool za_rt = false;
    if (!qlinear) Q8_TRY(q8_ql_runtime_zp(g, n, iza, "A's zero point", a->dtype, &za_rt, err));
    if (!za_rt) Q8_TRY(q8_ql_const(g, n, iza, "A's zero point", a->dtype, M, &cza, err));
    Q8_TRY(q8_ql_const(g, n, izb, "B's zero point", b->dtype, N, &czb, err));
    const q8_tensor *yz = qlinear ? q8_in(g, n, 7) : NULL;
    if (qlinear) {
        if (!q8_in(g, n, 1) || !q8_in(g, n, 4) || !q8_in(g, n, 6) || !yz)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scales and y_zero_point are required");
        Q8_TRY(q8_ql_const(g, n, 1, "a_scale", Q8_F32, M, &csa, err));
        Q8_TRY(q8_ql_const(g, n, 4, "b_scale", Q8_F32, N, &csb, err));
        Q8_TRY(q8_ql_const(g, n, 6, "y_scale", Q8_F32, 1, &cys, err));
        if (yz->dtype != Q8_I8 && yz->dtype != Q8_U8)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "y_zero_point is %s, expected int8 "
                                "or uint8", q8_dtype_name(yz->dtype));
        Q8_TRY(q8_ql_const(g, n, 7, "y_zero_point", yz->dtype, 1, &cyz, err));
    }
    int64_t ma = 0, mb = 0;
    for (int64_t c = 0; c < (cza ? cza : 1); c++) {
        /* a run-time zero point may be any value of A's type */
        int64_t d = za_rt ? 255 : q8_ql_max_dev(a_u8, q8_ql_zp(g, n, iza, c));
        ma = d > ma ? d : ma;
    }
    for (int64_t c = 0; c < (czb ? czb : 1); c++) {
        int64_t d = q8_ql_max_dev(b_u8, q8_ql_zp(g, n, izb, c));
        mb = d > mb ? d : mb;
    }
    Q8_TRY(q8_ql_check_k(n, K, ma, mb, err));

    int64_t dims[Q8_MAX_DIMS];
    int nb;
    Q8_TRY(q8_broadcast_shape(n, a->dims, a->ndim - 2, b->dims, b->ndim - 2, dims, &nb, err));
    if (nb + 2 > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", nb + 2,
                            Q8_MAX_DIMS);
    dims[nb] = M;
    dims[nb + 1] = N;
    q8_dtype yt = !qlinear ? Q8_I32 : yz->dtype;
    Q8_TRY(q8_set_output(g, n, 0, yt, dims, nb + 2, err));

    q8_matmul_integer_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    *p = (q8_matmul_integer_params){.qlinear = qlinear, .a_u8 = a_u8, .b_u8 = b_u8,
                                    .y_u8 = yt == Q8_U8, .M = M, .N = N, .K = K, .nb = nb,
                                    .batches = 1, .ia = ia, .ib = ib, .iza = iza, .izb = izb,
                                    .za_runtime = za_rt};
    for (int i = 0; i < nb; i++) {
        p->bdims[i] = dims[i];
        p->batches *= dims[i];
    }
    q8_qop_batch_strides(a, nb, p->astr);
    q8_qop_batch_strides(b, nb, p->bstr);
    if (qlinear) {
        p->y_scale = q8_ql_scale(g, n, 6, 0);
        p->y_zp = q8_ql_zp(g, n, 7, 0);
    }
    return Q8_OK;
}

static q8_status mmi_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return mmi_infer_common(g, n, false, err);
}
static q8_status qlmm_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return mmi_infer_common(g, n, true, err);
}

const q8_op_schema q8_schema_matmul_integer = {.infer = mmi_infer};
const q8_op_schema q8_schema_qlinear_matmul = {.infer = qlmm_infer};
