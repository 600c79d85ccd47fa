/* q8.QGemm: Y[..., n] = B[n] + sum_k A[..., k] * W[n, k] (docs/int8-ops.md).
 * A's leading dims are batch rows; W (one row per output channel) is packed
 * once in infer as the GEMM's lanes operand, so outputs are written
 * row-major with the channel along the contiguous index. */
#include "qop_util.h"

typedef struct qgemm_params {
    int64_t M, N, K;
    q8_igemm_path path;
    q8_qepi epi;
    size_t off_w, off_init; /* packed: W lanes, init[N] (bias and +128 correction) */
} qgemm_params;

static q8_status qgemm_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    float sx, sy;
    bool i8;
    const float *sw;
    const int32_t *bias;
    q8_act act;
    q8_igemm_path path;
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
    Q8_TRY(q8_qop_path(n, &path, err));
    Q8_TRY(q8_qop_check_k(n, K, err));

    int64_t dims[Q8_MAX_DIMS];
    for (int i = 0; i < a->ndim - 1; i++) dims[i] = a->dims[i];
    dims[a->ndim - 1] = N;
    Q8_TRY(q8_set_output(g, n, 0, i8 ? Q8_I8 : Q8_F32, dims, a->ndim, err));
    if (i8) Q8_TRY(q8_qop_set_out_scale(g, n, sy, err));

    qgemm_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->M = 1;
    for (int i = 0; i < a->ndim - 1; i++) p->M *= a->dims[i];
    p->N = N;
    p->K = K;
    p->path = path;
    q8_qepi_init(&p->epi, &act, i8, sy, N);
    size_t off = 0;
    p->off_w = q8_qop_reserve(&off, q8_ig_lanes_bytes(N, K));
    p->off_init = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)N);
    q8_qepi_place(&p->epi, &off);
    char *pk = n->packed = q8_aligned_alloc(off + 64);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    n->packed_bytes = off;
    /* A carries the +128: subtract 128 * sum of each weight row. */
    int32_t *init = (int32_t *)(pk + p->off_init);
    q8_ig_pack_lanes_jk(w->data, K, N, K, false, (uint8_t *)pk + p->off_w, init);
    for (int64_t c = 0; c < N; c++)
        init[c] = (int32_t)((bias ? (uint32_t)bias[c] : 0u) - 128u * (uint32_t)init[c]);
    q8_qepi_fill(&p->epi, pk, sx, sw, 0, sy);
    return Q8_OK;
}

static size_t qgemm_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                            int n_threads) {
    const qgemm_params *p = n->params;
    return q8_ig_rows_bytes(p->M, p->K);
}

static void qgemm_run(const q8_exec *x, const q8_node *n) {
    const qgemm_params *p = n->params;
    const char *pk = n->packed;
    q8_epilogue e;
    q8_qepi_view(&p->epi, pk, Q8_CH_COL, &e);
    uint8_t *rows = x->scratch;
    q8_ig_pack_rows(Q8_IN_PTR(x, n, 0), p->K, p->M, p->K, true, rows, NULL, x->pool);
    q8_igemm_args a = {.I = p->M, .J = p->N, .K = p->K, .rows = rows,
                       .lanes = (const uint8_t *)pk + p->off_w, .rows_u8 = true,
                       .init_col = (const int32_t *)(pk + p->off_init), .epi = &e,
                       .out = Q8_OUT_PTR(x, n, 0), .ldo = p->N};
    q8_igemm(&a, x->pool, p->path);
}

const q8_op_schema q8_schema_qgemm = {.infer = qgemm_infer};
const q8_cpu_op q8_cpu_qgemm = {.run = qgemm_run, .scratch = qgemm_scratch};
