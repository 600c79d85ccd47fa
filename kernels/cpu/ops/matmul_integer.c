/* MatMulInteger and QLinearMatMul on the CPU (params:
 * src/core/ops/matmul_integer.h). Both run the INT8 GEMM on the int8 values
 * v = x - 128 (uint8) or x (int8), then correct for the zero points exactly:
 *   sum (a - za_i)(b - zb_j) = sum va*vb - beta_j SA_i - alpha_i SB_j
 *                              + K alpha_i beta_j
 * with alpha = za - (128 for uint8 A), beta likewise, SA/SB the sums of the
 * v values. MatMulInteger writes that int32; QLinearMatMul requantizes. A
 * zero point of A computed at run time (dynamic quantization) is read each
 * run: one alpha for every row. */
#include <string.h>

#include "cpu_op.h"
#include "ops/matmul_integer.h"
#include "qepi.h"
#include "qop_util.h"

/* At the start of the prepared blob; the offsets are into the blob. */
typedef struct mmi_prep {
    q8_igemm_path path;
    size_t off_alpha, off_beta, off_sa, off_sb; /* int32 [M], [N]; float [M], [N] */
} mmi_prep;

/* The zero points as the GEMM's values see them (alpha: A's, beta: B's) and,
 * for QLinearMatMul, the scales. */
static q8_status mmi_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                             void **prep, size_t *bytes, q8_error *err) {
    const q8_matmul_integer_params *p = n->params;
    mmi_prep c = {0};
    Q8_TRY(q8_qop_path(n, &c.path, err));
    int64_t M = p->M, N = p->N;
    size_t off = sizeof c;
    c.off_alpha = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)M);
    c.off_beta = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)N);
    c.off_sa = q8_qop_reserve(&off, p->qlinear ? sizeof(float) * (size_t)M : 0);
    c.off_sb = q8_qop_reserve(&off, p->qlinear ? sizeof(float) * (size_t)N : 0);
    char *pk = q8_aligned_alloc(off + 64);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < M; i++) {
        ((int32_t *)(pk + c.off_alpha))[i] =
            p->za_runtime ? 0 : q8_ql_zp(g, n, p->iza, i) - (p->a_u8 ? 128 : 0);
        if (p->qlinear) ((float *)(pk + c.off_sa))[i] = q8_ql_scale(g, n, 1, i);
    }
    for (int64_t j = 0; j < N; j++) {
        ((int32_t *)(pk + c.off_beta))[j] = q8_ql_zp(g, n, p->izb, j) - (p->b_u8 ? 128 : 0);
        if (p->qlinear) ((float *)(pk + c.off_sb))[j] = q8_ql_scale(g, n, 4, j);
    }
    memcpy(pk, &c, sizeof c);
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

/* Scratch: lanes (B), rows (A), SA [M], init [M], SB [N], acc [M][N]. */
static size_t part(size_t b) { return q8_align_up(b, 64); }

static size_t mmi_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                          int n_threads) {
    const q8_matmul_integer_params *p = n->params;
    return part(q8_ig_lanes_bytes(p->N, p->K)) + part(q8_ig_rows_bytes(p->M, p->K)) +
           2 * part(sizeof(int32_t) * (size_t)p->M) + part(sizeof(int32_t) * (size_t)p->N) +
           (p->qlinear ? sizeof(int32_t) * (size_t)(p->M * p->N) : 0);
}

typedef struct fix_args {
    const q8_matmul_integer_params *p;
    const mmi_prep *c;
    const char *pk;
    const int32_t *acc, *sa, *sb; /* sa: sums of A's rows, sb: of B's columns */
    void *y;                      /* this batch's output */
    bool alpha_runtime;           /* every row's alpha is alpha_rt (A's zero point this run) */
    int32_t alpha_rt;
} fix_args;

/* The zero-point correction and the output, rows [b, e). */
static void fix_range(void *arg, int64_t b, int64_t e, int t) {
    const fix_args *a = arg;
    const q8_matmul_integer_params *p = a->p;
    const int32_t *alpha = (const int32_t *)(a->pk + a->c->off_alpha);
    const int32_t *beta = (const int32_t *)(a->pk + a->c->off_beta);
    const float *sca = (const float *)(a->pk + a->c->off_sa);
    const float *scb = (const float *)(a->pk + a->c->off_sb);
    int32_t lo = p->y_u8 ? 0 : -128, hi = p->y_u8 ? 255 : 127;
    for (int64_t i = b; i < e; i++) {
        uint32_t al = (uint32_t)(a->alpha_runtime ? a->alpha_rt : alpha[i]);
        uint32_t sai = (uint32_t)a->sa[i];
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
    const q8_matmul_integer_params *p = n->params;
    const mmi_prep *c = x->prep;
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
    int32_t alpha_rt = 0;
    if (p->za_runtime) {
        alpha_rt = q8_ql_zp_byte(*(const uint8_t *)Q8_IN_PTR(x, n, p->iza), p->a_u8) -
                   (p->a_u8 ? 128 : 0);
    }
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
        q8_igemm(&ga, x->pool, c->path);
        fix_args fa = {p, c, x->prep, out, sa, sb, y, p->za_runtime, alpha_rt};
        q8_parallel_for(x->pool, p->M, 1 + 4096 / (p->N + 1), fix_range, &fa);
    }
}

const q8_cpu_op q8_cpu_matmul_integer = {.prepare = mmi_prepare, .run = mmi_run,
                                         .scratch = mmi_scratch};

const q8_cpu_op q8_cpu_qlinear_matmul = {.prepare = mmi_prepare, .run = mmi_run,
                                         .scratch = mmi_scratch};
