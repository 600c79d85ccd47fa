/* q8.QGemm on the CPU (params: src/core/ops/qgemm.h). A's leading dims are
 * batch rows; W (one row per output channel) is packed once in prepare as
 * the GEMM's lanes operand, so outputs are written row-major with the
 * channel along the contiguous index. A sparse W that the loader expanded
 * (pruned, or published mostly zeros) is kept compressed instead where the
 * CPU has the kernels for it (igemv_sparse.h) and the session releases the
 * expanded copy: one row runs the GEMV on the form; more rows run the GEMM,
 * which makes each block of W's lanes panels from it as it goes. A narrow
 * W (at most QGEMM_NARROW_N outputs: a score or flag head) stored plain is
 * read in place by dot products instead, on few rows of A: its lanes
 * would be 16 rows of which most are padding (a one-output head's 672
 * weights made 10.7 KB). */
#include <string.h>

#include "cpu_op.h"
#include "igemv_sparse.h"
#include "layout.h"
#include "ops/qgemm.h"
#include "qepi.h"
#include "qop_util.h"

_Static_assert(Q8_IG_MAX_K == Q8_QOP_MAX_K, "the INT8 GEMM takes every K infer accepts");

/* At the start of the prepared blob; the offsets are into the blob. */
typedef struct qgemm_prep {
    q8_igemm_path path;
    q8_qepi epi;
    const uint8_t *w;       /* W lanes in place (a .q8 stores them so), or NULL */
    size_t off_w, off_init; /* W lanes (when w is NULL), init[N] (bias and +128 correction) */
    /* W compressed: its q8_isp after this header (q8_isp_at), rows of K
     * (SPARSE_ROWS: the GEMV) or the lanes panels of 16 x kp bytes
     * (SPARSE_PANELS: the GEMM's lanes_pack) */
    int sparse;
    q8_isp_expander expander; /* SPARSE_PANELS: how the lanes are made */
    const int8_t *w_plain;    /* narrow: W [N][K] in place; init is then the bias alone */
} qgemm_prep;

/* Up to this many outputs the lanes operand (16 lanes a panel) would be at
 * least twice W: dot products on W's rows in place instead, for up to
 * QGEMM_NARROW_ROWS rows of A (a head's one row, a small batch). The dot
 * products are plain C: on 4096 rows they took 3x the VNNI GEMM's time
 * (review), so more rows keep the panel. */
#define QGEMM_NARROW_N 8
#define QGEMM_NARROW_ROWS 32

enum { SPARSE_NONE = 0, SPARSE_ROWS, SPARSE_PANELS };

static const q8_isp *qgemm_isp(const qgemm_prep *c) {
    return (const q8_isp *)((const char *)c + q8_isp_at(sizeof *c));
}

/* The form of W's rows (the GEMV, where its fast kernel runs) or of its
 * lanes panels (the GEMM's lanes_pack, made by the CPU's expander), when it
 * pays (q8_qop_plan_sparse); counted against N x K,
 * not the padded lanes, so that a dense W keeps the dense kernels and costs
 * no plain copy at load. */
static int plan_sparse(const q8_qgemm_params *p, const q8_tensor *wt, const q8_prep_env *env,
                       q8_igemm_path path, q8_isp *isp, size_t *off) {
    size_t dense = (size_t)(p->N * p->K), hdr = sizeof(qgemm_prep);
    if (p->M <= Q8_ISP_MAX_ROWS && q8_isp_gemv_fast(path))
        return q8_qop_plan_sparse(wt, env, path, p->N, p->K, dense, hdr, isp, off) ? SPARSE_ROWS
                                                                                 : SPARSE_NONE;
    return q8_qop_plan_sparse(wt, env, path, q8_ig_panels(p->N), Q8_IG_LANES * q8_ig_kpad(p->K),
                              dense, hdr, isp, off)
               ? SPARSE_PANELS
               : SPARSE_NONE;
}

static q8_status qgemm_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                               void **prep, size_t *bytes, q8_error *err) {
    const q8_qgemm_params *p = n->params;
    qgemm_prep c = {0};
    Q8_TRY(q8_qop_path(n, &c.path, err));
    q8_qepi_init(&c.epi, &p->q.act, p->q.out_i8, p->q.sy, p->N);
    const q8_tensor *w = q8_in(g, n, 1);
    bool in_place = w->layout == q8_layout_for_reader(n, 1);
    size_t off = sizeof c;
    const void *wd = w->data;
    void *tmp = NULL;
    /* only a weight the loader expanded, and the session releases, can be
     * given up for the compressed form */
    q8_isp isp;
    c.sparse = plan_sparse(p, w, env, c.path, &isp, &off);
    c.expander = q8_isp_expander_for(c.path);
    in_place = in_place && !c.sparse;
    bool narrow = !in_place && !c.sparse && p->N <= QGEMM_NARROW_N &&
                  p->M <= QGEMM_NARROW_ROWS && w->layout == Q8_LAYOUT_PLAIN;
    if (!in_place) Q8_TRY(q8_tensor_plain(w, &wd, &tmp, err));
    c.off_w = in_place || c.sparse || narrow ? 0 : q8_qop_reserve(&off, q8_ig_lanes_bytes(p->N, p->K));
    c.off_init = q8_qop_reserve_chan(&off, sizeof(int32_t) * (size_t)p->N);
    q8_qepi_place(&c.epi, &off);
    char *pk = q8_aligned_alloc(off + 64);
    if (!pk) {
        q8_aligned_free(tmp);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    }
    /* A carries the +128: subtract 128 * sum of each weight row. */
    const int32_t *bias = p->has_bias ? q8_in(g, n, 2)->data : NULL;
    int32_t *init = (int32_t *)(pk + c.off_init);
    if (narrow) {
        c.w_plain = wd; /* the tensor's own data: no +128 on A, so no row sums */
        for (int64_t ch = 0; ch < p->N; ch++) init[ch] = 0;
    } else if (c.sparse == SPARSE_ROWS) {
        q8_isp_pack(&isp, wd, pk, init);
    } else if (c.sparse == SPARSE_PANELS) { /* the lanes as the GEMM reads them, compressed */
        uint8_t *lanes = q8_aligned_alloc(q8_ig_lanes_bytes(p->N, p->K));
        if (!lanes) {
            q8_aligned_free(tmp);
            q8_aligned_free(pk);
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
        }
        q8_ig_pack_lanes_jk(wd, p->K, p->N, p->K, false, lanes, init);
        q8_isp_pack(&isp, (const int8_t *)lanes, pk, NULL);
        q8_aligned_free(lanes);
    } else if (in_place) {
        c.w = wd;
        q8_ig_lanes_sums(c.w, p->N, p->K, init);
    } else q8_ig_pack_lanes_jk(wd, p->K, p->N, p->K, false, (uint8_t *)pk + c.off_w, init);
    if (c.sparse) memcpy(pk + q8_isp_at(sizeof c), &isp, sizeof isp);
    q8_aligned_free(tmp);
    for (int64_t ch = 0; ch < p->N; ch++)
        init[ch] = (int32_t)((bias ? (uint32_t)bias[ch] : 0u) - 128u * (uint32_t)init[ch]);
    /* W read in place: its tensor is kept (qgemm_packed_input) */
    q8_qepi_fill(&c.epi, pk, p->q.sx, w->q.scale, 0, p->q.sy);
    memcpy(pk, &c, sizeof c);
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

static size_t qgemm_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                            int n_threads) {
    const q8_qgemm_params *p = n->params;
    const qgemm_prep *c = prep;
    if (c->w_plain) return 0;
    if (c->sparse == SPARSE_ROWS) return (size_t)(p->M * q8_isp_ldx(p->K));
    size_t rows = q8_align_up(q8_ig_rows_bytes(p->M, p->K), 64);
    return rows + (c->sparse == SPARSE_PANELS ? (size_t)n_threads * q8_ig_block_bytes(p->K) : 0);
}

/* A block of W's lanes panels from the compressed form (lanes_pack). */
static void unpack_panels(const void *ctx, int64_t p0, int64_t np, uint8_t *dst) {
    const qgemm_prep *c = ctx;
    q8_isp_rows(qgemm_isp(c), c, p0, np, dst, c->expander);
}

/* The narrow W's rows of A: acc = bias + the int8 dot product, in the
 * wrapping int32 the GEMM's accumulators are exact in (igemm.h), then the
 * scalar epilogue the SIMD ones are checked against: the same bytes. */
typedef struct narrow_job {
    const q8_qgemm_params *p;
    const int8_t *a, *w;
    const int32_t *init;
    const q8_epilogue *e;
    char *out;
    size_t out_row; /* bytes */
} narrow_job;

static void narrow_rows(void *arg, int64_t m0, int64_t m1, int thread) {
    (void)thread;
    const narrow_job *j = arg;
    int64_t N = j->p->N, K = j->p->K;
    int32_t acc[QGEMM_NARROW_N];
    for (int64_t m = m0; m < m1; m++) {
        const int8_t *a = j->a + m * K;
        for (int64_t ch = 0; ch < N; ch++) {
            const int8_t *w = j->w + ch * K;
            int32_t s = 0; /* |s| <= 128 * 128 * K, and K <= Q8_IG_MAX_K keeps it in range */
            for (int64_t k = 0; k < K; k++) s += (int32_t)a[k] * (int32_t)w[k];
            acc[ch] = (int32_t)((uint32_t)j->init[ch] + (uint32_t)s);
        }
        q8_epilogue_row_c(j->e, acc, N, 0, j->out + (size_t)m * j->out_row);
    }
}

static void qgemm_run(const q8_exec *x, const q8_node *n) {
    const q8_qgemm_params *p = n->params;
    const qgemm_prep *c = x->prep;
    const char *pk = x->prep;
    q8_epilogue e;
    q8_qepi_view(&c->epi, pk, Q8_CH_COL, &e);
    if (c->w_plain) {
        narrow_job j = {.p = p, .a = Q8_IN_PTR(x, n, 0), .w = c->w_plain,
                        .init = (const int32_t *)(pk + c->off_init), .e = &e,
                        .out = Q8_OUT_PTR(x, n, 0),
                        .out_row = (size_t)p->N * (e.kind == Q8_EPI_I8 ? 1 : 4)};
        /* rows of a few thousand MACs a chunk: a head on one row runs on the caller */
        int64_t grain = 1 + 4096 / (p->N * p->K + 1);
        q8_parallel_for(x->pool, p->M, grain, narrow_rows, &j);
        return;
    }
    uint8_t *rows = x->scratch;
    if (c->sparse == SPARSE_ROWS) {
        q8_isp_pack_x(Q8_IN_PTR(x, n, 0), p->M, p->K, rows);
        q8_isp_run(qgemm_isp(c), pk, rows, p->M, (const int32_t *)(pk + c->off_init), &e,
                   Q8_OUT_PTR(x, n, 0), p->N, c->path, x->pool);
        return;
    }
    q8_ig_pack_rows(Q8_IN_PTR(x, n, 0), p->K, p->M, p->K, true, rows, NULL, x->pool);
    q8_igemm_args a = {.I = p->M, .J = p->N, .K = p->K, .rows = rows,
                       .lanes = c->w ? c->w : (const uint8_t *)pk + c->off_w, .rows_u8 = true,
                       .init_col = (const int32_t *)(pk + c->off_init), .epi = &e,
                       .out = Q8_OUT_PTR(x, n, 0), .ldo = p->N};
    if (c->sparse == SPARSE_PANELS) {
        a.lanes = NULL;
        a.lanes_pack = unpack_panels;
        a.lanes_pack_ctx = c;
        a.lanes_scratch = rows + q8_align_up(q8_ig_rows_bytes(p->M, p->K), 64);
    }
    q8_igemm(&a, x->pool, c->path);
}

/* The bias is folded into init at prepare; W is read in place or packed. */
static bool qgemm_packed_input(const void *prep, int j) {
    const qgemm_prep *c = prep;
    return j == 2 || (j == 1 && !c->w && !c->w_plain);
}

const q8_cpu_op q8_cpu_qgemm = {.prepare = qgemm_prepare, .run = qgemm_run,
                                .scratch = qgemm_scratch, .packed_input = qgemm_packed_input};
