/* q8.QMatMul on the CPU (params: src/core/ops/qmatmul.h). Per batch: B
 * (k-major) becomes the GEMM's lanes operand with the +128 offset, A its
 * rows; the correction -128 * sum_k A[m][k] is the row init. Operands
 * shared by consecutive batches (broadcast) are packed once. */
#include <string.h>

#include "cpu_op.h"
#include "ops/qmatmul.h"
#include "qepi.h"
#include "qop_util.h"

/* At the start of the prepared blob; the offsets are into the blob. */
typedef struct qmatmul_prep {
    q8_igemm_path path;
    q8_qepi epi;
} qmatmul_prep;

static q8_status qmatmul_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                                 void **prep, size_t *bytes, q8_error *err) {
    const q8_qmatmul_params *p = n->params;
    qmatmul_prep c = {0};
    Q8_TRY(q8_qop_path(n, &c.path, err));
    q8_qepi_init(&c.epi, &p->q.act, p->q.out_i8, p->q.sy, 1);
    size_t off = sizeof c;
    q8_qepi_place(&c.epi, &off);
    char *pk = q8_aligned_alloc(off + 64);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_qepi_fill(&c.epi, pk, p->q.sx, NULL, p->sb, p->q.sy);
    memcpy(pk, &c, sizeof c);
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

static size_t lanes_part(const q8_qmatmul_params *p) {
    return q8_align_up(q8_ig_lanes_bytes(p->N, p->K), 64);
}
static size_t rows_part(const q8_qmatmul_params *p) {
    return q8_align_up(q8_ig_rows_bytes(p->M, p->K), 64);
}

static size_t qmatmul_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                              int n_threads) {
    const q8_qmatmul_params *p = n->params;
    return lanes_part(p) + rows_part(p) + sizeof(int32_t) * (size_t)p->M;
}

static void qmatmul_run(const q8_exec *x, const q8_node *n) {
    const q8_qmatmul_params *p = n->params;
    const qmatmul_prep *c = x->prep;
    q8_epilogue e;
    q8_qepi_view(&c->epi, x->prep, Q8_CH_ONE, &e);
    const int8_t *A = Q8_IN_PTR(x, n, 0), *B = Q8_IN_PTR(x, n, 1);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = e.kind == Q8_EPI_I8 ? 1 : 4;
    uint8_t *lanes = x->scratch, *rows = lanes + lanes_part(p);
    int32_t *init = (int32_t *)(rows + rows_part(p));
    int64_t last_a = -1, last_b = -1;
    for (int64_t bt = 0; bt < p->batches; bt++) {
        int64_t oa = 0, ob = 0, r = bt;
        for (int i = p->nb - 1; i >= 0; i--) {
            int64_t idx = r % p->bdims[i];
            r /= p->bdims[i];
            oa += idx * p->astr[i];
            ob += idx * p->bstr[i];
        }
        if (ob != last_b)
            q8_ig_pack_lanes_kj(B + ob * p->K * p->N, p->N, p->K, p->N, true, lanes, x->pool);
        if (oa != last_a) {
            q8_ig_pack_rows(A + oa * p->M * p->K, p->K, p->M, p->K, false, rows, init, x->pool);
            for (int64_t m = 0; m < p->M; m++) init[m] = (int32_t)(0u - 128u * (uint32_t)init[m]);
        }
        last_a = oa;
        last_b = ob;
        q8_igemm_args a = {.I = p->M, .J = p->N, .K = p->K, .rows = rows, .lanes = lanes,
                           .rows_u8 = false, .init_row = init, .epi = &e,
                           .out = Y + (size_t)(bt * p->M * p->N) * es, .ldo = p->N};
        q8_igemm(&a, x->pool, c->path);
    }
}

const q8_cpu_op q8_cpu_qmatmul = {.prepare = qmatmul_prepare, .run = qmatmul_run,
                                  .scratch = qmatmul_scratch};
