/* q8.QMatMul (see qmatmul.h). */
#include "ops/qmatmul.h"

#include "op.h"

static q8_status qmatmul_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    float sa, sb, sy;
    bool i8;
    q8_act act;
    Q8_TRY(q8_qop_act_scale(g, n, 0, "A", &sa, err));
    Q8_TRY(q8_qop_act_scale(g, n, 1, "B", &sb, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (a->ndim < 2 || b->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "A and B need rank >= 2, they have %d and %d",
                            a->ndim, b->ndim);
    int64_t M = a->dims[a->ndim - 2], K = a->dims[a->ndim - 1];
    int64_t N = b->dims[b->ndim - 1];
    if (b->dims[b->ndim - 2] != K)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "A has K = %lld, B has %lld rows",
                            (long long)K, (long long)b->dims[b->ndim - 2]);
    Q8_TRY(q8_qop_act(n, &act, err));
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    Q8_TRY(q8_qop_check_k(n, K, err));
    int64_t dims[Q8_MAX_DIMS];
    int nb;
    Q8_TRY(q8_broadcast_shape(n, a->dims, a->ndim - 2, b->dims, b->ndim - 2, dims, &nb, err));
    if (nb + 2 > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", nb + 2,
                            Q8_MAX_DIMS);
    dims[nb] = M;
    dims[nb + 1] = N;
    Q8_TRY(q8_set_output(g, n, 0, i8 ? Q8_I8 : Q8_F32, dims, nb + 2, err));
    if (i8) Q8_TRY(q8_qop_set_out_scale(g, n, sy, err));

    q8_qmatmul_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->M = M;
    p->N = N;
    p->K = K;
    p->nb = nb;
    p->batches = 1;
    for (int i = 0; i < nb; i++) {
        p->bdims[i] = dims[i];
        p->batches *= dims[i];
    }
    q8_qop_batch_strides(a, nb, p->astr);
    q8_qop_batch_strides(b, nb, p->bstr);
    p->q = (q8_qop_quant){.sx = sa, .out_i8 = i8, .sy = sy, .act = act};
    p->sb = sb;
    return Q8_OK;
}

const q8_op_schema q8_schema_qmatmul = {.infer = qmatmul_infer};
