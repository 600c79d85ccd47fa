/* q8.QMatMul: Y = A x B for two int8 activations, A [..., M, K] and
 * B [..., K, N] with numpy batch broadcasting (docs/int8-ops.md). Per batch:
 * B (k-major) becomes the GEMM's lanes operand with the +128 offset, A its
 * rows; the correction -128 * sum_k A[m][k] is the row init. Operands
 * shared by consecutive batches (broadcast) are packed once. */
#include "qop_util.h"

typedef struct qmatmul_params {
    int64_t M, N, K;
    int nb;                         /* output batch dims */
    int64_t bdims[Q8_MAX_DIMS];
    int64_t astr[Q8_MAX_DIMS], bstr[Q8_MAX_DIMS]; /* in matrices; 0: broadcast */
    int64_t batches;
    q8_igemm_path path;
    q8_qepi epi;
} qmatmul_params;

/* Matrix strides of an operand of rank r against the nb output batch dims. */
static void batch_strides(const q8_tensor *t, int nb, int64_t *str) {
    int tb = t->ndim - 2;
    int64_t s = 1;
    for (int i = nb - 1; i >= 0; i--) {
        int ti = i - (nb - tb);
        if (ti < 0 || t->dims[ti] == 1) {
            str[i] = 0;
        } else {
            str[i] = s;
            s *= t->dims[ti];
        }
    }
}

static q8_status qmatmul_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    float sa, sb, sy;
    bool i8;
    q8_act act;
    q8_igemm_path path;
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
    Q8_TRY(q8_qop_path(n, &path, err));
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

    qmatmul_params *p = q8_node_params(n, sizeof *p, err);
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
    batch_strides(a, nb, p->astr);
    batch_strides(b, nb, p->bstr);
    p->path = path;
    q8_qepi_init(&p->epi, &act, i8, sy, 1);
    size_t off = 0;
    q8_qepi_place(&p->epi, &off);
    if (!(n->packed = q8_aligned_alloc(off + 64)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    n->packed_bytes = off;
    q8_qepi_fill(&p->epi, n->packed, sa, NULL, sb, sy);
    return Q8_OK;
}

static size_t lanes_part(const qmatmul_params *p) {
    return q8_align_up(q8_ig_lanes_bytes(p->N, p->K), 64);
}
static size_t rows_part(const qmatmul_params *p) {
    return q8_align_up(q8_ig_rows_bytes(p->M, p->K), 64);
}

static size_t qmatmul_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                              int n_threads) {
    const qmatmul_params *p = n->params;
    return lanes_part(p) + rows_part(p) + sizeof(int32_t) * (size_t)p->M;
}

static void qmatmul_run(const q8_exec *x, const q8_node *n) {
    const qmatmul_params *p = n->params;
    q8_epilogue e;
    q8_qepi_view(&p->epi, n->packed, Q8_CH_ONE, &e);
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
        q8_igemm(&a, x->pool, p->path);
    }
}

const q8_op_schema q8_schema_qmatmul = {.infer = qmatmul_infer};
const q8_cpu_op q8_cpu_qmatmul = {.run = qmatmul_run, .scratch = qmatmul_scratch};
