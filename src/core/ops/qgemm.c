/* q8.QGemm (see qgemm.h). */
#include "ops/qgemm.h"

#include "op.h"

static q8_status qgemm_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    float sx, sy;
    bool i8;
    const float *sw;
    const int32_t *bias;
    q8_act act;
    Q8_TRY(q8_qop_act_scale(g, n, 0, "A", &sx, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *a = q8_in(g, n, 0), *w = q8_in(g, n, 1);
    if (a->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "A '%s' is a scalar, expected rank >= 1",
                            a->name);
    if (w->ndim != 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "W '%s' has rank %d, expected 2 ([N, K])",
                            w->name, w->ndim);
    int64_t N = w->dims[0], K = w->dims[1];
    if (a->dims[a->ndim - 1] != K)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "A '%s' has %lld values per row, W has K = %lld",
                            a->name, (long long)a->dims[a->ndim - 1], (long long)K);
    Q8_TRY(q8_qop_weight_scales(g, n, 1, N, &sw, err));
    Q8_TRY(q8_qop_bias(g, n, 2, N, &bias, err));
    Q8_TRY(q8_qop_act(n, &act, err));
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    Q8_TRY(q8_qop_check_k(n, K, err));

    int64_t dims[Q8_MAX_DIMS];
    for (int i = 0; i < a->ndim - 1; i++) dims[i] = a->dims[i];
    dims[a->ndim - 1] = N;
    Q8_TRY(q8_set_output(g, n, 0, i8 ? Q8_I8 : Q8_F32, dims, a->ndim, err));
    if (i8) Q8_TRY(q8_qop_set_out_scale(g, n, sy, err));

    q8_qgemm_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->M = 1;
    for (int i = 0; i < a->ndim - 1; i++) p->M *= a->dims[i];
    p->N = N;
    p->K = K;
    p->q = (q8_qop_quant){.sx = sx, .out_i8 = i8, .sy = sy, .act = act};
    p->has_bias = bias != NULL;
    return Q8_OK;
}

const q8_op_schema q8_schema_qgemm = {.infer = qgemm_infer};
