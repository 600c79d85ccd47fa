/* Gemm: Y = alpha * op(A) * op(B) + beta * C (C unidirectionally broadcast
 * to [M, N]), plus an optional fused activation. A constant B is packed
 * once in infer. */
#include "fused_act.h"
#include "cpu_op.h"
#include "sgemm.h"

typedef enum c_mode {
    C_NONE,     /* no C, or beta == 0 */
    C_BIAS_COL, /* C has N values along columns and beta == 1: epilogue bias */
    C_BIAS_ROW, /* C is [M, 1] and beta == 1 */
    C_FILL,     /* copy broadcast C into Y first, then beta */
} c_mode;

typedef struct gemm_params {
    int64_t m, n, k;
    bool ta, tb;
    float alpha, beta;
    c_mode cmode;
    int64_t c_rows, c_cols;     /* C's shape as [c_rows, c_cols] */
    q8_act act;
} gemm_params;

static q8_status gemm_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1), *c = q8_in(g, n, 2);
    if (a->ndim != 2 || b->ndim != 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "A and B must be 2-D, got ranks %d and %d",
                            a->ndim, b->ndim);
    gemm_params *p = q8_node_params(n, sizeof *p, err);
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
    p->cmode = C_NONE;
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
            p->cmode = C_BIAS_COL;
        else if (p->beta == 1.0f && p->c_cols == 1 && p->c_rows == p->m && p->m > 1)
            p->cmode = C_BIAS_ROW;
        else
            p->cmode = C_FILL;
    }
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    int64_t dims[2] = {p->m, p->n};
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, dims, 2, err));
    /* Weights: pack B once (not worth it when the node folds anyway). */
    size_t pb = q8_sgemm_packed_b_bytes(p->k, p->n, 1, 0);
    if (b->data && !a->data && pb) {
        n->packed = q8_aligned_alloc(pb);
        if (!n->packed) return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing Gemm weights");
        n->packed_bytes = pb;
        q8_sgemm_pack_b(n->packed, p->tb, p->k, p->n, b->data, b->dims[1], 1, 0, 0);
    }
    return Q8_OK;
}

static q8_sgemm_op gemm_op(const gemm_params *p, const q8_node *n, const float *a,
                           const float *b, const float *c, float *y) {
    q8_sgemm_op op = {.m = p->m, .n = p->n, .k = p->k, .trans_a = p->ta, .trans_b = p->tb,
                      .alpha = p->alpha, .a = a, .lda = p->ta ? p->m : p->k, .b = b,
                      .ldb = p->tb ? p->k : p->n, .c = y, .ldc = p->n, .b_packed = n->packed,
                      .act = p->act};
    if (p->cmode == C_FILL) op.beta = p->beta;
    if (p->cmode == C_BIAS_COL || p->cmode == C_BIAS_ROW) {
        op.bias = c;
        op.bias_per_col = p->cmode == C_BIAS_COL;
    }
    return op;
}

static size_t gemm_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                     int n_threads) {
    const gemm_params *p = n->params;
    q8_sgemm_op op = gemm_op(p, n, NULL, NULL, NULL, NULL);
    return q8_sgemm_scratch_bytes(&op, n_threads);
}

static void gemm_run(const q8_exec *x, const q8_node *n) {
    const gemm_params *p = n->params;
    const float *c = p->cmode != C_NONE ? Q8_IN_PTR(x, n, 2) : NULL;
    float *y = Q8_OUT_PTR(x, n, 0);
    if (p->cmode == C_FILL) {
        for (int64_t i = 0; i < p->m; i++) {
            const float *cr = c + (p->c_rows > 1 ? i * p->c_cols : 0);
            float *yr = y + i * p->n;
            if (p->c_cols > 1)
                for (int64_t j = 0; j < p->n; j++) yr[j] = cr[j];
            else
                for (int64_t j = 0; j < p->n; j++) yr[j] = cr[0];
        }
    }
    q8_sgemm_op op = gemm_op(p, n, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), c, y);
    q8_sgemm_run(&op, x->pool, x->scratch);
}

const q8_op_schema q8_schema_gemm = {.infer = gemm_infer};
const q8_cpu_op q8_cpu_gemm = {.run = gemm_run, .scratch = gemm_scratch};
