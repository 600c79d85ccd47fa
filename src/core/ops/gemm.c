/* Gemm (see gemm.h). */
#include "ops/gemm.h"

#include "op.h"

static q8_status gemm_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1), *c = q8_in(g, n, 2);
    if (a->ndim != 2 || b->ndim != 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "A and B must be 2-D, got ranks %d and %d",
                            a->ndim, b->ndim);
    q8_gemm_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->ta = q8_attr_int(n, "transA", 0) != 0;
    p->tb = q8_attr_int(n, "transB", 0) != 0;
    p->alpha = q8_attr_float(n, "alpha", 1.0f);
    p->beta = q8_attr_float(n, "beta", 1.0f);
    p->m = p->ta ? a->dims[1] : a->dims[0];
    p->k = p->ta ? a->dims[0] : a->dims[1];
    int64_t kb = p->tb ? b->dims[1] : b->dims[0];
    p->n = p->tb ? b->dims[0] : b->dims[1];
    if (kb != p->k)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "inner dims differ: op(A) is %lldx%lld, op(B) is %lldx%lld "
                            "(transA=%d, transB=%d)", (long long)p->m, (long long)p->k,
                            (long long)kb, (long long)p->n, p->ta, p->tb);
    p->cmode = Q8_GEMM_C_NONE;
    if (c && p->beta != 0.0f) {
        Q8_TRY(q8_check_input(g, n, 2, Q8_F32, err));
        if (c->ndim > 2)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "C has rank %d, at most 2 expected",
                                c->ndim);
        p->c_rows = c->ndim == 2 ? c->dims[0] : 1;
        p->c_cols = c->ndim >= 1 ? c->dims[c->ndim - 1] : 1;
        if ((p->c_rows != 1 && p->c_rows != p->m) || (p->c_cols != 1 && p->c_cols != p->n)) {
            char sb[64];
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "C of shape %s does not broadcast to %lldx%lld",
                                q8_shape_str(c->dims, c->ndim, sb, sizeof sb), (long long)p->m,
                                (long long)p->n);
        }
        if (p->beta == 1.0f && p->c_rows == 1 && p->c_cols == p->n && p->n > 1)
            p->cmode = Q8_GEMM_C_BIAS_COL;
        else if (p->beta == 1.0f && p->c_cols == 1 && p->c_rows == p->m && p->m > 1)
            p->cmode = Q8_GEMM_C_BIAS_ROW;
        else
            p->cmode = Q8_GEMM_C_FILL;
    }
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    int64_t dims[2] = {p->m, p->n};
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, dims, 2, err));
    return Q8_OK;
}

const q8_op_schema q8_schema_gemm = {.infer = gemm_infer};
