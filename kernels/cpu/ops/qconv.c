/* q8.QConv: INT8 convolution, 1-D or 2-D (docs/int8-ops.md). Each (image,
 * group) is one INT8 GEMM: the group's output-channel weights (packed once
 * in infer) against the im2col matrix of its input channels, or the input
 * itself for 1x1 stride-1 unpadded convs. Convs with one input channel per
 * group (depthwise) use the direct SIMD kernels of qconv_dw.h when the
 * geometry suits them, else a generic direct loop on a zero-padded copy of
 * each input plane. Padding is the quantized zero (0). */
#include <string.h>

#include "qconv_dw.h"
#include "qconv_geom.h"
#include "qop_util.h"

typedef struct qconv_params {
    q8_qconv_geom geo;
    int64_t Cg, Mg, K, P;       /* per group: input channels, output channels, K; P = OH*OW */
    bool depthwise;             /* Cg == 1: direct kernel */
    bool direct;                /* 1x1, stride 1, no pads: X is the GEMM operand */
    bool lanes_vbmi;            /* im2col straight into the packed lanes (AVX-512 VBMI) */
    bool gemv;                  /* one output pixel, direct, one group: the images are the
                                 * GEMM rows and the weights (packed as lanes) its columns */
    int64_t Hp, Wp;             /* depthwise: the padded plane */
    q8_igemm_path path;
    q8_qepi epi;
    size_t off_w, off_init;     /* packed: weights, init[M] (bias and +128 correction) */
    size_t off_taps;            /* depthwise: tap offsets [KH*KW] in the padded plane */
    size_t off_ltab;            /* lanes_vbmi: KW x 64 index bytes */
    q8_qdw dw;                  /* depthwise: the SIMD kernel, if one fits (dw.kind) */
} qconv_params;

static q8_status qconv_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    float sx, sy;
    bool i8;
    const float *sw;
    const int32_t *bias;
    q8_act act;
    q8_qconv_geom geo;
    q8_igemm_path path;
    Q8_TRY(q8_qop_act_scale(g, n, 0, "X", &sx, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    Q8_TRY(q8_qconv_geom_parse(g, n, 1, false, &geo, err));
    Q8_TRY(q8_qop_weight_scales(g, n, 1, geo.M, &sw, err));
    Q8_TRY(q8_qop_bias(g, n, 2, geo.M, &bias, err));
    Q8_TRY(q8_qop_act(n, &act, err));
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    Q8_TRY(q8_qop_path(n, &path, err));
    int64_t Cg = geo.C / geo.group, K = Cg * geo.KH * geo.KW;
    Q8_TRY(q8_qop_check_k(n, K, err));

    int64_t dims[4] = {geo.N, geo.M, geo.OH, geo.OW};
    if (geo.nsp == 1) dims[2] = geo.OW;
    Q8_TRY(q8_set_output(g, n, 0, i8 ? Q8_I8 : Q8_F32, dims, 2 + geo.nsp, err));
    if (i8) Q8_TRY(q8_qop_set_out_scale(g, n, sy, err));

    qconv_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->geo = geo;
    p->Cg = Cg;
    p->Mg = geo.M / geo.group;
    p->K = K;
    p->P = geo.OH * geo.OW;
    p->depthwise = Cg == 1;
    p->direct = geo.KH == 1 && geo.KW == 1 && geo.sh == 1 && geo.sw == 1 && !geo.pt &&
                !geo.pl && !geo.pb && !geo.pr;
    p->lanes_vbmi = !p->depthwise && !p->direct && q8_igemm_resolve(path) == Q8_IGEMM_AVX512VNNI &&
                    q8_qdw_has_vbmi() && q8_qconv_lanes_vbmi_ok(&geo);
    p->gemv = p->direct && !p->depthwise && geo.group == 1 && p->P == 1;
    p->Hp = geo.H + geo.pt + geo.pb;
    p->Wp = geo.W + geo.pl + geo.pr;
    p->path = path;
    q8_qepi_init(&p->epi, &act, i8, sy, geo.M);

    size_t off = 0;
    if (p->depthwise) q8_qdw_plan(&p->dw, &geo, path, &off);
    p->off_w = q8_qop_reserve(&off, p->depthwise ? (size_t)(geo.M * K)
                                    : p->gemv    ? q8_ig_lanes_bytes(geo.M, K)
                                                 : q8_ig_rows_bytes(geo.M, K));
    p->off_init = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)geo.M);
    p->off_taps = q8_qop_reserve(&off, p->depthwise ? sizeof(int64_t) * (size_t)K : 0);
    p->off_ltab = q8_qop_reserve(&off, p->lanes_vbmi ? (size_t)geo.KW * 64 : 0);
    q8_qepi_place(&p->epi, &off);
    char *pk = n->packed = q8_aligned_alloc(off + 64);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    n->packed_bytes = off;
    const int8_t *w = q8_in(g, n, 1)->data;
    int32_t *init = (int32_t *)(pk + p->off_init);
    if (p->depthwise) {
        memcpy(pk + p->off_w, w, (size_t)(geo.M * K));
        for (int64_t m = 0; m < geo.M; m++) init[m] = bias ? bias[m] : 0;
        int64_t *taps = (int64_t *)(pk + p->off_taps);
        for (int64_t kh = 0; kh < geo.KH; kh++)
            for (int64_t kw = 0; kw < geo.KW; kw++)
                taps[kh * geo.KW + kw] = kh * geo.dh * p->Wp + kw * geo.dw;
        q8_qdw_pack(&p->dw, w, bias, pk);
    } else {
        /* The im2col side carries the +128: subtract 128 * sum of each row. */
        if (p->gemv) q8_ig_pack_lanes_jk(w, K, geo.M, K, false, (uint8_t *)pk + p->off_w, init);
        else q8_ig_pack_rows(w, K, geo.M, K, false, (uint8_t *)pk + p->off_w, init, NULL);
        if (p->lanes_vbmi) q8_qconv_lanes_tab(&geo, (uint8_t *)pk + p->off_ltab);
        for (int64_t m = 0; m < geo.M; m++)
            init[m] = (int32_t)((bias ? (uint32_t)bias[m] : 0u) - 128u * (uint32_t)init[m]);
    }
    q8_qepi_fill(&p->epi, pk, sx, sw, 0, sy);
    return Q8_OK;
}

static size_t qconv_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                            int n_threads) {
    const qconv_params *p = n->params;
    if (p->depthwise && p->dw.kind != Q8_QDW_NONE) return p->dw.per_thread * (size_t)n_threads;
    if (p->depthwise)
        return (size_t)n_threads * (q8_align_up((size_t)(p->Hp * p->Wp), 64) +
                                    q8_align_up(sizeof(int32_t) * (size_t)p->geo.OW, 64));
    if (p->gemv) return q8_ig_rows_bytes(p->geo.N, p->K);
    size_t lanes = q8_align_up(q8_ig_lanes_bytes(p->P, p->K), 64);
    return lanes + (p->direct || p->lanes_vbmi ? 0 : (size_t)(p->K * p->P));
}

/* ---- im2col GEMM ---------------------------------------------------------- */

static void qconv_gemm_run(const q8_exec *x, const q8_node *n, const q8_epilogue *e) {
    const qconv_params *p = n->params;
    const q8_qconv_geom *q = &p->geo;
    const int8_t *X = Q8_IN_PTR(x, n, 0);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    uint8_t *lanes = x->scratch;
    int8_t *col = (int8_t *)x->scratch + q8_align_up(q8_ig_lanes_bytes(p->P, p->K), 64);
    const char *pk = n->packed;
    int64_t kp = q8_ig_kpad(p->K);
    for (int64_t img = 0; img < q->N; img++)
        for (int64_t grp = 0; grp < q->group; grp++) {
            const int8_t *src = X + (img * q->C + grp * p->Cg) * q->H * q->W;
#if defined(__x86_64__) || defined(__i386__)
            if (p->lanes_vbmi) {
                q8_qconv_lanes_vbmi(q, p->Cg, src, (const uint8_t *)pk + p->off_ltab, lanes,
                                    x->pool);
            } else
#endif
            {
                if (!p->direct) {
                    q8_qconv_im2col(q, (const uint8_t *)src, 0, (uint8_t *)col, x->pool);
                    src = col;
                }
                q8_ig_pack_lanes_kj(src, p->P, p->K, p->P, true, lanes, x->pool);
            }
            q8_igemm_args a = {
                .I = p->Mg, .J = p->P, .K = p->K,
                .rows = (const uint8_t *)pk + p->off_w + (size_t)(grp * p->Mg * kp),
                .lanes = lanes, .rows_u8 = false,
                .init_row = (const int32_t *)(pk + p->off_init) + grp * p->Mg,
                .epi = e, .chan_offset = grp * p->Mg,
                .out = Y + (size_t)((img * q->M + grp * p->Mg) * p->P) * es, .ldo = p->P};
            q8_igemm(&a, x->pool, p->path);
        }
}

/* ---- depthwise (one input channel per group) ------------------------------ */

typedef struct dw_args {
    const qconv_params *p;
    const q8_epilogue *e;
    const int8_t *x, *w;
    const int32_t *init;
    const int64_t *taps;
    char *y;
    uint8_t *scratch;
} dw_args;

static void dw_range(void *arg, int64_t b, int64_t e, int t) {
    const dw_args *a = arg;
    const qconv_params *p = a->p;
    const q8_qconv_geom *q = &p->geo;
    size_t plane = q8_align_up((size_t)(p->Hp * p->Wp), 64);
    int8_t *xp = (int8_t *)a->scratch +
                 (size_t)t * (plane + q8_align_up(sizeof(int32_t) * (size_t)q->OW, 64));
    int32_t *acc = (int32_t *)(xp + plane);
    size_t es = a->e->kind == Q8_EPI_I8 ? 1 : 4;
    int64_t taps = q->KH * q->KW;
    for (int64_t it = b; it < e; it++) { /* one output channel of one image */
        int64_t img = it / q->M, m = it % q->M;
        const int8_t *xc = a->x + (img * q->C + m / p->Mg) * q->H * q->W;
        memset(xp, 0, (size_t)(p->Hp * p->Wp));
        for (int64_t h = 0; h < q->H; h++)
            memcpy(xp + (h + q->pt) * p->Wp + q->pl, xc + h * q->W, (size_t)q->W);
        const int8_t *w = a->w + m * taps;
        for (int64_t oh = 0; oh < q->OH; oh++) {
            const int8_t *row = xp + oh * q->sh * p->Wp;
            if (q->sw == 1) {
                q8_dw_row(p->path, row, a->taps, w, taps, a->init[m], q->OW, acc);
            } else {
                for (int64_t ow = 0; ow < q->OW; ow++) {
                    uint32_t s = (uint32_t)a->init[m];
                    for (int64_t k = 0; k < taps; k++)
                        s += (uint32_t)(w[k] * row[a->taps[k] + ow * q->sw]);
                    acc[ow] = (int32_t)s;
                }
            }
            q8_epilogue_row(p->path, a->e, acc, q->OW, m,
                            a->y + (size_t)(((img * q->M + m) * q->OH + oh) * q->OW) * es);
        }
    }
}

/* One output pixel: Y [N][M] = X [N][K] times the weights, as QGemm does it. */
static void qconv_gemv_run(const q8_exec *x, const q8_node *n, const q8_epilogue *e) {
    const qconv_params *p = n->params;
    const char *pk = n->packed;
    uint8_t *rows = x->scratch;
    q8_ig_pack_rows(Q8_IN_PTR(x, n, 0), p->K, p->geo.N, p->K, true, rows, NULL, x->pool);
    q8_igemm_args a = {
        .I = p->geo.N, .J = p->geo.M, .K = p->K, .rows = rows,
        .lanes = (const uint8_t *)pk + p->off_w, .rows_u8 = true,
        .init_col = (const int32_t *)(pk + p->off_init), .epi = e,
        .out = Q8_OUT_PTR(x, n, 0), .ldo = p->geo.M};
    q8_igemm(&a, x->pool, p->path);
}

static void qconv_run(const q8_exec *x, const q8_node *n) {
    const qconv_params *p = n->params;
    q8_epilogue e;
    q8_qepi_view(&p->epi, n->packed, p->gemv ? Q8_CH_COL : Q8_CH_ROW, &e);
    if (p->gemv) {
        qconv_gemv_run(x, n, &e);
        return;
    }
    if (!p->depthwise) {
        qconv_gemm_run(x, n, &e);
        return;
    }
    if (p->dw.kind != Q8_QDW_NONE) {
        q8_qdw_run(&p->dw, n->packed, &e, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), x->scratch,
                   x->pool);
        return;
    }
    const q8_qconv_geom *q = &p->geo;
    const char *pk = n->packed;
    dw_args a = {p, &e, Q8_IN_PTR(x, n, 0), (const int8_t *)pk + p->off_w,
                 (const int32_t *)(pk + p->off_init), (const int64_t *)(pk + p->off_taps),
                 Q8_OUT_PTR(x, n, 0), x->scratch};
    q8_parallel_for(x->pool, q->N * q->M, 1 + 8192 / (q->KH * q->KW * p->geo.OW * q->OH + 1),
                    dw_range, &a);
}

const q8_op_schema q8_schema_qconv = {.infer = qconv_infer};
const q8_cpu_op q8_cpu_qconv = {.run = qconv_run, .scratch = qconv_scratch};
