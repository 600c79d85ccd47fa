/* MatMulInteger and QLinearMatMul (ONNX opset 10): A [..., M, K] x
 * B [..., K, N] of int8 or uint8 with zero points (per tensor, per row of A,
 * per column of B) and numpy batch broadcasting. Both run the INT8 GEMM on
 * the int8 values v = x - 128 (uint8) or x (int8), then correct for the
 * zero points exactly:
 *   sum (a - za_i)(b - zb_j) = sum va*vb - beta_j SA_i - alpha_i SB_j
 *                              + K alpha_i beta_j
 * with alpha = za - (128 for uint8 A), beta likewise, SA/SB the sums of the
 * v values. MatMulInteger writes that int32; QLinearMatMul requantizes:
 * y = saturate(round_half_even(acc * (a_scale * b_scale / y_scale)) + y_zp),
 * with the multiplier in float as ONNX Runtime does. Zero points and scales
 * must be constants. */
#include "qop_util.h"

typedef struct mmi_params {
    bool qlinear, a_u8, b_u8, y_u8;
    int64_t M, N, K;
    int nb;                         /* output batch dims */
    int64_t bdims[Q8_MAX_DIMS];
    int64_t astr[Q8_MAX_DIMS], bstr[Q8_MAX_DIMS]; /* in matrices; 0: broadcast */
    int64_t batches;
    int ia, ib;                     /* input index of A and B */
    float y_scale;
    int32_t y_zp;
    q8_igemm_path path;
    size_t off_alpha, off_beta, off_sa, off_sb; /* packed: int32 [M], [N]; float [M], [N] */
} mmi_params;

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

static int64_t max_dev(bool u8, int32_t zp) {
    int64_t lo = (u8 ? 0 : -128) - zp, hi = (u8 ? 255 : 127) - zp;
    return -lo > hi ? -lo : hi;
}

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
    int64_t cza, czb, csa = 1, csb = 1, cys = 1, cyz = 1;
    Q8_TRY(q8_ql_const(g, n, iza, "A's zero point", a->dtype, M, &cza, err));
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
        int64_t d = max_dev(a_u8, q8_ql_zp(g, n, iza, c));
        ma = d > ma ? d : ma;
    }
    for (int64_t c = 0; c < (czb ? czb : 1); c++) {
        int64_t d = max_dev(b_u8, q8_ql_zp(g, n, izb, c));
        mb = d > mb ? d : mb;
    }
    Q8_TRY(q8_ql_check_k(n, K, ma, mb, err));
    q8_igemm_path path;
    Q8_TRY(q8_qop_path(n, &path, err));

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

    mmi_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    *p = (mmi_params){.qlinear = qlinear, .a_u8 = a_u8, .b_u8 = b_u8, .y_u8 = yt == Q8_U8,
                      .M = M, .N = N, .K = K, .nb = nb, .batches = 1, .ia = ia, .ib = ib,
                      .path = path};
    for (int i = 0; i < nb; i++) {
        p->bdims[i] = dims[i];
        p->batches *= dims[i];
    }
    batch_strides(a, nb, p->astr);
    batch_strides(b, nb, p->bstr);
    size_t off = 0;
    p->off_alpha = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)M);
    p->off_beta = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)N);
    p->off_sa = q8_qop_reserve(&off, qlinear ? sizeof(float) * (size_t)M : 0);
    p->off_sb = q8_qop_reserve(&off, qlinear ? sizeof(float) * (size_t)N : 0);
    char *pk = n->packed = q8_aligned_alloc(off + 64);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    n->packed_bytes = off;
    for (int64_t i = 0; i < M; i++) {
        ((int32_t *)(pk + p->off_alpha))[i] = q8_ql_zp(g, n, iza, i) - (a_u8 ? 128 : 0);
        if (qlinear) ((float *)(pk + p->off_sa))[i] = q8_ql_scale(g, n, 1, i);
    }
    for (int64_t j = 0; j < N; j++) {
        ((int32_t *)(pk + p->off_beta))[j] = q8_ql_zp(g, n, izb, j) - (b_u8 ? 128 : 0);
        if (qlinear) ((float *)(pk + p->off_sb))[j] = q8_ql_scale(g, n, 4, j);
    }
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

/* Scratch: lanes (B), rows (A), SA [M], init [M], SB [N], acc [M][N]. */
static size_t part(size_t b) { return q8_align_up(b, 64); }

static size_t mmi_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                          int n_threads) {
    const mmi_params *p = n->params;
    return part(q8_ig_lanes_bytes(p->N, p->K)) + part(q8_ig_rows_bytes(p->M, p->K)) +
           2 * part(sizeof(int32_t) * (size_t)p->M) + part(sizeof(int32_t) * (size_t)p->N) +
           (p->qlinear ? sizeof(int32_t) * (size_t)(p->M * p->N) : 0);
}

typedef struct fix_args {
    const mmi_params *p;
    const char *pk;
    const int32_t *acc, *sa, *sb; /* sa: sums of A's rows, sb: of B's columns */
    void *y;                      /* this batch's output */
} fix_args;

/* The zero-point correction and the output, rows [b, e). */
static void fix_range(void *arg, int64_t b, int64_t e, int t) {
    const fix_args *a = arg;
    const mmi_params *p = a->p;
    const int32_t *alpha = (const int32_t *)(a->pk + p->off_alpha);
    const int32_t *beta = (const int32_t *)(a->pk + p->off_beta);
    const float *sca = (const float *)(a->pk + p->off_sa);
    const float *scb = (const float *)(a->pk + p->off_sb);
    int32_t lo = p->y_u8 ? 0 : -128, hi = p->y_u8 ? 255 : 127;
    for (int64_t i = b; i < e; i++) {
        uint32_t al = (uint32_t)alpha[i], sai = (uint32_t)a->sa[i];
        for (int64_t j = 0; j < p->N; j++) {
            uint32_t be = (uint32_t)beta[j];
            int32_t v = (int32_t)((uint32_t)a->acc[i * p->N + j] - be * sai -
                                  al * (uint32_t)a->sb[j] + (uint32_t)p->K * al * be);
            if (!p->qlinear) {
                ((int32_t *)a->y)[i * p->N + j] = v;
                continue;
            }
            float m = sca[i] * scb[j] / p->y_scale;
            int32_t q = q8_round_sat((float)v * m, p->y_zp, lo, hi);
            if (p->y_u8) ((uint8_t *)a->y)[i * p->N + j] = (uint8_t)q;
            else ((int8_t *)a->y)[i * p->N + j] = (int8_t)q;
        }
    }
}

static void mmi_run(const q8_exec *x, const q8_node *n) {
    const mmi_params *p = n->params;
    const uint8_t *A = Q8_IN_PTR(x, n, p->ia), *B = Q8_IN_PTR(x, n, p->ib);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = p->qlinear ? 1 : 4;
    uint8_t *lanes = x->scratch;
    uint8_t *rows = lanes + part(q8_ig_lanes_bytes(p->N, p->K));
    int32_t *sa = (int32_t *)(rows + part(q8_ig_rows_bytes(p->M, p->K)));
    int32_t *init = (int32_t *)((char *)sa + part(sizeof(int32_t) * (size_t)p->M));
    int32_t *sb = (int32_t *)((char *)init + part(sizeof(int32_t) * (size_t)p->M));
    int32_t *acc = (int32_t *)((char *)sb + part(sizeof(int32_t) * (size_t)p->N));
    q8_epilogue raw = {.kind = Q8_EPI_I32, .chan = Q8_CH_ONE};
    int64_t last_a = -1, last_b = -1;
    for (int64_t bt = 0; bt < p->batches; bt++) {
        int64_t oa = 0, ob = 0, r = bt;
        for (int i = p->nb - 1; i >= 0; i--) {
            int64_t idx = r % p->bdims[i];
            r /= p->bdims[i];
            oa += idx * p->astr[i];
            ob += idx * p->bstr[i];
        }
        const uint8_t *b = B + ob * p->K * p->N;
        if (ob != last_b) {
            /* B is the unsigned side; SB_j = sum over k of its values */
            q8_ig_pack_lanes_kj_ex(b, p->N, p->K, p->N, true, p->b_u8, lanes, x->pool);
            for (int64_t j = 0; j < p->N; j++) sb[j] = 0;
            for (int64_t k = 0; k < p->K; k++)
                for (int64_t j = 0; j < p->N; j++)
                    sb[j] += p->b_u8 ? (int32_t)b[k * p->N + j] - 128 : (int8_t)b[k * p->N + j];
        }
        if (oa != last_a) {
            q8_ig_pack_rows_ex(A + oa * p->M * p->K, p->K, p->M, p->K, false, p->a_u8, rows, sa,
                               x->pool);
            for (int64_t m = 0; m < p->M; m++) init[m] = (int32_t)(0u - 128u * (uint32_t)sa[m]);
        }
        last_a = oa;
        last_b = ob;
        void *y = Y + (size_t)(bt * p->M * p->N) * es;
        int32_t *out = p->qlinear ? acc : y;
        q8_igemm_args ga = {.I = p->M, .J = p->N, .K = p->K, .rows = rows, .lanes = lanes,
                            .rows_u8 = false, .init_row = init, .epi = &raw, .out = out,
                            .ldo = p->N};
        q8_igemm(&ga, x->pool, p->path);
        fix_args fa = {p, n->packed, out, sa, sb, y};
        q8_parallel_for(x->pool, p->M, 1 + 4096 / (p->N + 1), fix_range, &fa);
    }
}

const q8_op_schema q8_schema_matmul_integer = {.infer = mmi_infer};
const q8_cpu_op q8_cpu_matmul_integer = {.run = mmi_run, .scratch = mmi_scratch};

const q8_op_schema q8_schema_qlinear_matmul = {.infer = qlmm_infer};
const q8_cpu_op q8_cpu_qlinear_matmul = {.run = mmi_run, .scratch = mmi_scratch};
