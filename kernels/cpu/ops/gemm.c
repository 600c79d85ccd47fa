/* Gemm on the CPU (params: src/core/ops/gemm.h): one q8_sgemm call. A
 * constant B is packed once per session in prepare. */
#include "cpu_op.h"
#include "ops/gemm.h"
#include "sgemm.h"

/* B packed for q8_sgemm (only when B is a constant and A is not: a node
 * with both constant folds away; and not for one row of A, which
 * q8_sgemm runs as a GEMV straight from B). */
static q8_status gemm_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                              void **prep, size_t *bytes, q8_error *err) {
    const q8_gemm_params *p = n->params;
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    size_t pb = q8_sgemm_packed_b_bytes(p->k, p->n, 1, 0);
    if (!b->data || a->data || !pb || p->m <= 1) return Q8_OK;
    if (!(*prep = q8_aligned_alloc(pb)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing Gemm weights");
    *bytes = pb;
    q8_sgemm_pack_b(*prep, p->tb, p->k, p->n, b->data, b->dims[1], 1, 0, 0);
    return Q8_OK;
}

static q8_sgemm_op gemm_op(const q8_gemm_params *p, const void *b_packed, const float *a,
                           const float *b, const float *c, float *y) {
    q8_sgemm_op op = {.m = p->m, .n = p->n, .k = p->k, .trans_a = p->ta, .trans_b = p->tb,
                      .alpha = p->alpha, .a = a, .lda = p->ta ? p->m : p->k, .b = b,
                      .ldb = p->tb ? p->k : p->n, .c = y, .ldc = p->n, .b_packed = b_packed,
                      .act = p->act};
    if (p->cmode == Q8_GEMM_C_FILL) op.beta = p->beta;
    if (p->cmode == Q8_GEMM_C_BIAS_COL || p->cmode == Q8_GEMM_C_BIAS_ROW) {
        op.bias = c;
        op.bias_per_col = p->cmode == Q8_GEMM_C_BIAS_COL;
    }
    return op;
}

static size_t gemm_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                           int n_threads) {
    const q8_gemm_params *p = n->params;
    q8_sgemm_op op = gemm_op(p, prep, NULL, NULL, NULL, NULL);
    return q8_sgemm_scratch_bytes(&op, n_threads);
}

static void gemm_run(const q8_exec *x, const q8_node *n) {
    const q8_gemm_params *p = n->params;
    const float *c = p->cmode != Q8_GEMM_C_NONE ? Q8_IN_PTR(x, n, 2) : NULL;
    float *y = Q8_OUT_PTR(x, n, 0);
    if (p->cmode == Q8_GEMM_C_FILL) {
        for (int64_t i = 0; i < p->m; i++) {
            const float *cr = c + (p->c_rows > 1 ? i * p->c_cols : 0);
            float *yr = y + i * p->n;
            if (p->c_cols > 1)
                for (int64_t j = 0; j < p->n; j++) yr[j] = cr[j];
            else
                for (int64_t j = 0; j < p->n; j++) yr[j] = cr[0];
        }
    }
    q8_sgemm_op op = gemm_op(p, x->prep, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), c, y);
    q8_sgemm_run(&op, x->pool, x->scratch);
}

/* Packed B is used whenever prepare made it (M > 1: the blocked path). */
static bool gemm_packed_input(const void *prep, int j) { return prep && j == 1; }

const q8_cpu_op q8_cpu_gemm = {.prepare = gemm_prepare, .run = gemm_run, .scratch = gemm_scratch,
                               .packed_input = gemm_packed_input};
