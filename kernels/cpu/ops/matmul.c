/* MatMul on the CPU (params: src/core/ops/matmul.h): one q8_sgemm call,
 * batched over the products. A constant 2-D B is packed once per session in
 * prepare. */
#include <string.h>

#include "cpu_op.h"
#include "ops/matmul.h"
#include "sgemm.h"

/* What prepare makes (absent when there is nothing to hold). */
typedef struct matmul_prep {
    const void *b_packed;   /* B packed (after this struct, 64-byte aligned), or NULL */
    int64_t offs[];         /* batch > 1: a, b, c, (unused) per GEMM */
} matmul_prep;

static q8_status matmul_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                                void **prep, size_t *bytes, q8_error *err) {
    const q8_matmul_params *p = n->params;
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    int64_t ngemm = p->batch;
    size_t pb = ngemm == 1 ? q8_sgemm_packed_b_bytes(p->k, p->n, 1, 0) : 0;
    bool pack = b->data && !a->data && pb && p->m > 1;
    if (ngemm == 1 && !pack) return Q8_OK;
    size_t head = q8_align_up(sizeof(matmul_prep) +
                              (ngemm > 1 ? sizeof(int64_t) * 4 * (size_t)ngemm : 0), 64);
    matmul_prep *mp = q8_aligned_alloc(head + (pack ? pb : 0));
    if (!mp)
        return q8_fail(err, Q8_ERR_NOMEM,
                       pack ? "out of memory packing MatMul weights" : "out of memory");
    memset(mp, 0, head);
    if (ngemm > 1) {
        for (int64_t gi = 0; gi < ngemm; gi++) {
            int64_t rem = gi, oa = 0, ob = 0;
            for (int j = p->nbat - 1; j >= 0; j--) {
                int64_t idx = rem % p->bat[j];
                rem /= p->bat[j];
                oa += idx * p->a_stride[j];
                ob += idx * p->b_stride[j];
            }
            mp->offs[4 * gi] = oa;
            mp->offs[4 * gi + 1] = ob;
            mp->offs[4 * gi + 2] = gi * p->m * p->n;
            mp->offs[4 * gi + 3] = 0;
        }
    }
    if (pack) {
        void *pk = (char *)mp + head;
        q8_sgemm_pack_b(pk, false, p->k, p->n, b->data, p->n, 1, 0, 0);
        mp->b_packed = pk;
    }
    *prep = mp;
    *bytes = head + (pack ? pb : 0);
    return Q8_OK;
}

static q8_sgemm_op matmul_op(const q8_matmul_params *p, const matmul_prep *mp, const float *a,
                             const float *b, float *y) {
    return (q8_sgemm_op){.m = p->m, .n = p->n, .k = p->k, .alpha = 1, .a = a, .lda = p->k,
                         .b = b, .ldb = p->n, .c = y, .ldc = p->n,
                         .b_packed = mp ? mp->b_packed : NULL, .act = p->act,
                         .batch = p->batch, .offs = mp && p->batch > 1 ? mp->offs : NULL};
}

static size_t matmul_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                             int n_threads) {
    q8_sgemm_op op = matmul_op(n->params, prep, NULL, NULL, NULL);
    return q8_sgemm_scratch_bytes(&op, n_threads);
}

static void matmul_run(const q8_exec *x, const q8_node *n) {
    q8_sgemm_op op = matmul_op(n->params, x->prep, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                               Q8_OUT_PTR(x, n, 0));
    q8_sgemm_run(&op, x->pool, x->scratch);
}

/* B is packed only for M > 1 and N > 1: the blocked path, which uses it. */
static bool matmul_packed_input(const void *prep, int j) {
    return j == 1 && prep && ((const matmul_prep *)prep)->b_packed;
}

const q8_cpu_op q8_cpu_matmul = {.prepare = matmul_prepare, .run = matmul_run,
                                 .scratch = matmul_scratch, .packed_input = matmul_packed_input};
