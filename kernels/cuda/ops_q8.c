/* The CUDA plans of the INT8 ops (docs/int8-ops.md): q8.QGemm, q8.QConv,
 * q8.QConvTranspose, q8.QMatMul on cuBLASLt INT8 GEMMs + the epilogue
 * kernel, and QuantizeLinear / DequantizeLinear. The plans read the core's
 * params (src/core/ops/), and the requantization arrays are made by the
 * code the CPU uses too (kernels/common/qepi.h), so both backends use the
 * very same multipliers.
 *
 * GEMM layouts (cuBLASLt column-major, "TN": both operands K-contiguous, k
 * padded to a multiple of 16 with zeros, m to a multiple of 4):
 *   QGemm:  m = N channels (W [Np][kp]), n = rows of A, C [rows][Np]
 *   QConv:  m = pixels of a chunk of images (im2col [rows][kp]),
 *           n = the group's output channels (W [M][kp]), C [Mg][rows]
 *   QConvTranspose: m = input pixels (X^T [rows][Cgp]), n = Mg * KH * KW
 *           tap rows (W repacked [M*KH*KW][Cgp]), C [R][rows], then col2im
 *   QMatMul: m = N (B^T packed [b][Np][kp]), n = M (A packed [b][M][kp]),
 *           strided-batched, C [b][M][Np] */
#include <string.h>

#include "backend_cuda.h"
#include "layout.h"
#include "op.h"
#include "ops/dequantizelinear.h"
#include "ops/qadd.h"
#include "ops/qconv.h"
#include "ops/qgap.h"
#include "ops/qmul.h"
#include "ops/qprelu.h"
#include "ops/qconvtranspose.h"
#include "ops/qgemm.h"
#include "ops/qmatmul.h"
#include "ops/quantizelinear.h"
#include "qepi.h"

static int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/* Scratch budget for image chunks of one conv (im2col + int32 output). */
#define CHUNK_BYTES ((int64_t)32 << 20)

/* The epilogue of a node with requantization qq over `channels` channels
 * (weight scales sw, or sw1 for all): the CPU's q8_qepi (same multipliers),
 * uploaded once; bias_dev is the int32 bias on the device or NULL. */
static void make_epi(cu_prep *pr, const q8_qop_quant *qq, int64_t channels, const float *sw,
                     float sw1, const int32_t *bias_dev, q8cu_epi *e) {
    q8_qepi q;
    q8_qepi_init(&q, &qq->act, qq->out_i8, qq->sy, channels);
    size_t off = 0;
    q8_qepi_place(&q, &off);
    void *host;
    uint8_t *dev = q8_cu_const(pr, off, &host);
    if (host) q8_qepi_fill(&q, host, qq->sx, sw, sw1, qq->sy);
    memset(e, 0, sizeof *e);
    e->bias = bias_dev;
    e->lo = q.lo;
    e->hi = q.hi;
    e->clip = q.clip;
    e->leaky = q.leaky;
    e->flo = q.flo;
    e->fhi = q.fhi;
    e->alpha = q.alpha;
    if (q.kind == Q8_EPI_I8) {
        e->kind = Q8CU_EPI_I8;
        e->mult = dev ? (const int32_t *)(dev + q.off_mult) : NULL;
        e->shift = dev ? (const int32_t *)(dev + q.off_shift) : NULL;
        if (q.has_lut) e->lut = dev ? (const int8_t *)(dev + q.off_lut) : NULL;
    } else {
        e->kind = Q8CU_EPI_F32;
        e->scale = dev ? (const float *)(dev + q.off_scale) : NULL;
    }
}

/* W [rows][K] int8 as a [rows_pad][kp] zero-padded device constant (or the
 * tensor itself when it already has that layout). */
static const int8_t *weights_padded(cu_prep *pr, const q8_graph *g, const q8_node *n, int wi,
                                    int64_t rows, int64_t K, int64_t rows_pad, int64_t kp) {
    if (K == kp && rows == rows_pad) return q8_cu_tensor(pr, g, n->inputs[wi]);
    return q8_cu_weight_rows(pr, q8_in(g, n, wi), rows, K, rows_pad, kp);
}

/* ---- q8.QGemm --------------------------------------------------------------- */

typedef struct qgemm_cu {
    cu_igemm gm;
    bool pack;
    q8cu_pack_args pk;
    const int8_t *W, *X;
    int32_t *C;
    q8cu_gemm_epi_args epi;
} qgemm_cu;

static void qgemm_free(void *p) { q8_cu_igemm_free(&((qgemm_cu *)p)->gm); }

static q8_status qgemm_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    qgemm_cu *p = pp;
    const q8cu_stream *s = q8_cu_stream(c);
    if (p->pack) Q8_TRY(q8_cu_launch_check(q8cu_pack(s, &p->pk), n, "pack", err));
    Q8_TRY(q8_cu_igemm_run(c, n, &p->gm, p->W, p->X, p->C, err));
    return q8_cu_launch_check(q8cu_gemm_epilogue(s, &p->epi), n, "epilogue", err);
}

q8_status q8_cu_qgemm_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    const q8_qgemm_params *qp = n->params;
    int64_t N = qp->N, K = qp->K, R = qp->M;
    qgemm_cu *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    nd->free_params = qgemm_free;
    if (R == 0 || N == 0 || K == 0) {
        if (N && R && !K) return q8_cu_unsupported(err, n, "K = 0");
        return Q8_OK; /* empty output: nothing to run */
    }
    int64_t kp = round_up(K, 16), Np = round_up(N, 4);
    p->W = weights_padded(pr, g, n, 1, N, K, Np, kp);
    const int32_t *bias_dev = qp->has_bias ? q8_cu_tensor(pr, g, n->inputs[2]) : NULL;
    make_epi(pr, &qp->q, N, q8_in(g, n, 1)->q.scale, 0, bias_dev, &p->epi.e);
    const int8_t *A = q8_cu_tensor(pr, g, n->inputs[0]);
    p->pack = K != kp;
    if (p->pack) {
        int8_t *dst = q8_cu_scratch(pr, (size_t)(R * kp));
        p->pk = (q8cu_pack_args){.src = A, .dst = dst, .nb = 1, .rows = R, .rows_pad = R, .K = K,
                            .kp = kp, .s_r = K, .s_k = 1, .nbd = 0};
        p->X = dst;
    } else {
        p->X = A;
    }
    p->C = q8_cu_scratch(pr, sizeof(int32_t) * (size_t)(R * Np));
    Q8_TRY(q8_cu_igemm_plan(pr, n, &p->gm, Np, R, kp, kp, kp, Np, 1, 0, 0, 0, err));
    p->epi.c = p->C;
    p->epi.y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->epi.nb = 1;
    p->epi.nj = R;
    p->epi.ni = N;
    p->epi.c_ld = Np;
    p->epi.i_div = N;
    p->epi.y_js = N;
    p->epi.y_ilo = 1;
    p->epi.chan = Q8CU_CHAN_I;
    nd->run = qgemm_run;
    return Q8_OK;
}

/* ---- q8.QConv ------------------------------------------------------------------ */

typedef struct qconv_cu {
    bool direct;
    q8cu_conv_direct_args dc;
    /* GEMM path */
    q8_qconv_geom geo;
    int64_t nimg, Cg, Mg, P, rows_pad, kp;
    size_t es;
    cu_igemm gm;
    const int8_t *X, *W;
    int8_t *col;
    int32_t *C;
    uint8_t *Y;
    q8cu_im2col_args ic;             /* per chunk and group: x set at run */
    q8cu_gemm_epi_args epi;          /* per chunk and group: y, ch_off set at run */
} qconv_cu;

static void qconv_free(void *p) { q8_cu_igemm_free(&((qconv_cu *)p)->gm); }

static q8_status qconv_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    qconv_cu *p = pp;
    const q8cu_stream *s = q8_cu_stream(c);
    if (p->direct) return q8_cu_launch_check(q8cu_conv_direct(s, &p->dc), n, "conv", err);
    const q8_qconv_geom *q = &p->geo;
    for (int64_t img = 0; img < q->N; img += p->nimg)
        for (int64_t grp = 0; grp < q->group; grp++) {
            q8cu_im2col_args ic = p->ic;
            ic.x = p->X + (img * q->C + grp * p->Cg) * q->H * q->W;
            Q8_TRY(q8_cu_launch_check(q8cu_im2col(s, &ic), n, "im2col", err));
            Q8_TRY(q8_cu_igemm_run(c, n, &p->gm, p->col, p->W + grp * p->Mg * p->kp, p->C, err));
            q8cu_gemm_epi_args e = p->epi;
            e.y = p->Y + (size_t)((img * q->M + grp * p->Mg) * p->P) * p->es;
            e.ch_off = grp * p->Mg;
            Q8_TRY(q8_cu_launch_check(q8cu_gemm_epilogue(s, &e), n, "epilogue", err));
        }
    return Q8_OK;
}

/* Images per GEMM: the largest divisor of N whose im2col and int32 output
 * fit the chunk budget (at least 1), so every chunk has the same shape. */
static int64_t images_per_chunk(int64_t N, int64_t per_image) {
    int64_t best = 1;
    for (int64_t d = 1; d <= N; d++)
        if (N % d == 0 && d * per_image <= CHUNK_BYTES) best = d;
    return best;
}

q8_status q8_cu_qconv_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    const q8_qconv_params *qp = n->params;
    const q8_qconv_geom geo = qp->geo;
    qconv_cu *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    nd->free_params = qconv_free;
    int64_t Cg = qp->Cg, Mg = qp->Mg, K = qp->K, P = qp->P;
    if (geo.N == 0 || geo.M == 0 || P == 0) return Q8_OK;
    const int32_t *bias_dev = qp->has_bias ? q8_cu_tensor(pr, g, n->inputs[2]) : NULL;
    q8cu_epi e;
    make_epi(pr, &qp->q, geo.M, q8_in(g, n, 1)->q.scale, 0, bias_dev, &e);
    const int8_t *X = q8_cu_tensor(pr, g, n->inputs[0]);
    void *Y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->geo = geo;
    p->Cg = Cg;
    p->Mg = Mg;
    p->P = P;
    p->es = qp->q.out_i8 ? 1 : 4;
    /* Depthwise and narrow groups: one GEMM per group would be tiny. */
    p->direct = geo.group > 1 && Mg < 16;
    if (p->direct) {
        p->dc = (q8cu_conv_direct_args){.e = e, .x = X, .w = q8_cu_tensor(pr, g, n->inputs[1]),
                                        .y = Y,
                                   .N = geo.N, .C = geo.C, .H = geo.H, .W = geo.W, .M = geo.M,
                                   .OH = geo.OH, .OW = geo.OW, .Cg = Cg, .Mg = Mg, .KH = geo.KH,
                                   .KW = geo.KW, .sh = geo.sh, .sw = geo.sw, .dh = geo.dh,
                                   .dw = geo.dw, .pt = geo.pt, .pl = geo.pl};
        nd->run = qconv_run;
        return Q8_OK;
    }
    int64_t kp = round_up(K, 16);
    p->kp = kp;
    p->W = weights_padded(pr, g, n, 1, geo.M, K, geo.M, kp);
    p->nimg = images_per_chunk(geo.N, (P + 4) * (kp + 4 * Mg));
    int64_t rows = p->nimg * P;
    p->rows_pad = round_up(rows, 4);
    p->col = q8_cu_scratch(pr, (size_t)(p->rows_pad * kp));
    p->C = q8_cu_scratch(pr, sizeof(int32_t) * (size_t)(Mg * p->rows_pad));
    Q8_TRY(q8_cu_igemm_plan(pr, n, &p->gm, p->rows_pad, Mg, kp, kp, kp, p->rows_pad, 1, 0, 0, 0,
                            err));
    p->X = X;
    p->Y = Y;
    p->ic = (q8cu_im2col_args){.col = p->col, .nimg = p->nimg, .P = P, .rows_pad = p->rows_pad,
                          .K = K, .kp = kp, .img_stride = geo.C * geo.H * geo.W, .H = geo.H,
                          .W = geo.W, .OW = geo.OW, .KH = geo.KH, .KW = geo.KW, .sh = geo.sh,
                          .sw = geo.sw, .dh = geo.dh, .dw = geo.dw, .pt = geo.pt, .pl = geo.pl};
    p->epi = (q8cu_gemm_epi_args){.e = e, .c = p->C, .nb = 1, .nj = Mg, .ni = rows,
                             .c_ld = p->rows_pad, .i_div = P, .y_js = P, .y_ihi = geo.M * P,
                             .y_ilo = 1, .chan = Q8CU_CHAN_J};
    nd->run = qconv_run;
    return Q8_OK;
}

/* ---- q8.QConvTranspose ------------------------------------------------------------ */

typedef struct qconvt_cu {
    q8_qconv_geom geo;
    int64_t nimg, Cg, Mg, R, Pin, cgp;
    size_t es;
    cu_igemm gm;
    const int8_t *X, *W;
    int8_t *col;
    int32_t *C;
    uint8_t *Y;
    q8cu_im2col_args ic;             /* X^T of the chunk: a 1x1 im2col */
    q8cu_col2im_args c2;
} qconvt_cu;

static void qconvt_free(void *p) { q8_cu_igemm_free(&((qconvt_cu *)p)->gm); }

static q8_status qconvt_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    qconvt_cu *p = pp;
    const q8cu_stream *s = q8_cu_stream(c);
    const q8_qconv_geom *q = &p->geo;
    for (int64_t img = 0; img < q->N; img += p->nimg)
        for (int64_t grp = 0; grp < q->group; grp++) {
            q8cu_im2col_args ic = p->ic;
            ic.x = p->X + (img * q->C + grp * p->Cg) * p->Pin;
            Q8_TRY(q8_cu_launch_check(q8cu_im2col(s, &ic), n, "transpose", err));
            Q8_TRY(q8_cu_igemm_run(c, n, &p->gm, p->col, p->W + grp * p->R * p->cgp, p->C, err));
            q8cu_col2im_args c2 = p->c2;
            c2.y = p->Y + (size_t)(img * q->M * q->OH * q->OW) * p->es;
            c2.m0 = grp * p->Mg;
            Q8_TRY(q8_cu_launch_check(q8cu_col2im(s, &c2), n, "col2im", err));
        }
    return Q8_OK;
}

q8_status q8_cu_qconvt_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                             q8_error *err) {
    const q8_qconvtranspose_params *qp = n->params;
    const q8_qconv_geom geo = qp->geo;
    qconvt_cu *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    nd->free_params = qconvt_free;
    int64_t taps = geo.KH * geo.KW, Cg = qp->Cg, Mg = qp->Mg;
    int64_t Pin = geo.H * geo.W, R = Mg * taps;
    if (geo.N == 0 || geo.M == 0 || geo.OH * geo.OW == 0) return Q8_OK;
    if (Cg == 0 || Pin == 0)
        return q8_cu_unsupported(err, n, "empty input channels or pixels");
    const int32_t *bias_dev = qp->has_bias ? q8_cu_tensor(pr, g, n->inputs[2]) : NULL;
    q8cu_epi e;
    make_epi(pr, &qp->q, geo.M, q8_in(g, n, 1)->q.scale, 0, bias_dev, &e);
    int64_t cgp = round_up(Cg, 16);
    /* GEMM row (m, kh, kw) holds W[m][c][kh][kw] over c, zero padded. */
    void *host;
    p->W = q8_cu_const(pr, (size_t)(geo.M * taps * cgp), &host);
    if (host) {
        const int8_t *w = q8_in(g, n, 1)->data;
        int8_t *t = host;
        for (int64_t m = 0; m < geo.M; m++)
            for (int64_t cc = 0; cc < Cg; cc++)
                for (int64_t k = 0; k < taps; k++)
                    t[(m * taps + k) * cgp + cc] = w[(m * Cg + cc) * taps + k];
    }
    p->geo = geo;
    p->Cg = Cg;
    p->Mg = Mg;
    p->R = R;
    p->Pin = Pin;
    p->cgp = cgp;
    p->es = qp->q.out_i8 ? 1 : 4;
    p->nimg = images_per_chunk(geo.N, (Pin + 4) * (cgp + 4 * R));
    int64_t rows = p->nimg * Pin, rows_pad = round_up(rows, 4);
    p->col = q8_cu_scratch(pr, (size_t)(rows_pad * cgp));
    p->C = q8_cu_scratch(pr, sizeof(int32_t) * (size_t)(R * rows_pad));
    Q8_TRY(q8_cu_igemm_plan(pr, n, &p->gm, rows_pad, R, cgp, cgp, cgp, rows_pad, 1, 0, 0, 0,
                            err));
    p->X = q8_cu_tensor(pr, g, n->inputs[0]);
    p->Y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->ic = (q8cu_im2col_args){.col = p->col, .nimg = p->nimg, .P = Pin, .rows_pad = rows_pad,
                          .K = Cg, .kp = cgp, .img_stride = geo.C * Pin, .H = geo.H, .W = geo.W,
                          .OW = geo.W, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
    p->c2 = (q8cu_col2im_args){.e = e, .col = p->C, .nimg = p->nimg, .Mg = Mg, .OH = geo.OH,
                          .OW = geo.OW, .H = geo.H, .W = geo.W, .KH = geo.KH, .KW = geo.KW,
                          .sh = geo.sh, .sw = geo.sw, .dh = geo.dh, .dw = geo.dw, .pt = geo.pt,
                          .pl = geo.pl, .col_ld = rows_pad, .Pin = Pin,
                          .y_img_stride = geo.M * geo.OH * geo.OW};
    nd->run = qconvt_run;
    return Q8_OK;
}

/* ---- q8.QMatMul --------------------------------------------------------------------- */

typedef struct qmatmul_cu {
    cu_igemm gm;
    q8cu_pack_args pa, pb;
    int32_t *C;
    q8cu_gemm_epi_args epi;
} qmatmul_cu;

static void qmatmul_free(void *p) { q8_cu_igemm_free(&((qmatmul_cu *)p)->gm); }

static q8_status qmatmul_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    qmatmul_cu *p = pp;
    const q8cu_stream *s = q8_cu_stream(c);
    Q8_TRY(q8_cu_launch_check(q8cu_pack(s, &p->pa), n, "pack A", err));
    Q8_TRY(q8_cu_launch_check(q8cu_pack(s, &p->pb), n, "pack B", err));
    Q8_TRY(q8_cu_igemm_run(c, n, &p->gm, p->pb.dst, p->pa.dst, p->C, err));
    return q8_cu_launch_check(q8cu_gemm_epilogue(s, &p->epi), n, "epilogue", err);
}

q8_status q8_cu_qmatmul_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                              q8_error *err) {
    const q8_qmatmul_params *qp = n->params;
    if (qp->nb > Q8CU_MAX_DIMS) return q8_cu_unsupported(err, n, "these ranks");
    int64_t M = qp->M, K = qp->K, N = qp->N, batches = qp->batches;
    int nb = qp->nb;
    qmatmul_cu *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    nd->free_params = qmatmul_free;
    if (batches == 0 || M == 0 || N == 0) return Q8_OK;
    if (K == 0) return q8_cu_unsupported(err, n, "K = 0");
    make_epi(pr, &qp->q, 1, NULL, qp->sb, NULL, &p->epi.e);
    int64_t kp = round_up(K, 16), Np = round_up(N, 4);
    int8_t *Ap = q8_cu_scratch(pr, (size_t)(batches * M * kp));
    int8_t *Bp = q8_cu_scratch(pr, (size_t)(batches * Np * kp));
    p->C = q8_cu_scratch(pr, sizeof(int32_t) * (size_t)(batches * M * Np));
    p->pa = (q8cu_pack_args){.src = q8_cu_tensor(pr, g, n->inputs[0]), .dst = Ap, .nb = batches,
                        .rows = M, .rows_pad = M, .K = K, .kp = kp, .s_r = K, .s_k = 1,
                        .nbd = nb};
    p->pb = (q8cu_pack_args){.src = q8_cu_tensor(pr, g, n->inputs[1]), .dst = Bp, .nb = batches,
                        .rows = N, .rows_pad = Np, .K = K, .kp = kp, .s_r = 1, .s_k = N,
                        .nbd = nb};
    /* element strides: the core's matrix strides times the matrix size */
    for (int i = 0; i < nb; i++) {
        p->pa.bdims[i] = p->pb.bdims[i] = qp->bdims[i];
        p->pa.bstr[i] = qp->astr[i] * M * K;
        p->pb.bstr[i] = qp->bstr[i] * K * N;
    }
    Q8_TRY(q8_cu_igemm_plan(pr, n, &p->gm, Np, M, kp, kp, kp, Np, batches, Np * kp, M * kp,
                            M * Np, err));
    p->epi.c = p->C;
    p->epi.y = q8_cu_tensor(pr, g, n->outputs[0]);
    p->epi.nb = batches;
    p->epi.nj = M;
    p->epi.ni = N;
    p->epi.c_bs = M * Np;
    p->epi.c_ld = Np;
    p->epi.i_div = N;
    p->epi.y_bs = M * N;
    p->epi.y_js = N;
    p->epi.y_ilo = 1;
    p->epi.chan = Q8CU_CHAN_ONE;
    nd->run = qmatmul_run;
    return Q8_OK;
}

/* ---- QuantizeLinear / DequantizeLinear ----------------------------------------------- */

static q8_status quant_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_quantize(q8_cu_stream(c), pp), n, "quantize", err);
}


q8_status q8_cu_quant_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    const q8_quantizelinear_params *qp = n->params;
    q8cu_quant_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_quant_args){.x = q8_cu_tensor(pr, g, n->inputs[0]),
                      .y = q8_cu_tensor(pr, g, n->outputs[0]),
                      .scale = q8_cu_tensor(pr, g, n->inputs[1]),
                      .zp = q8_has_input(n, 2) ? q8_cu_tensor(pr, g, n->inputs[2]) : NULL,
                      .n = q8_tensor_numel(q8_in(g, n, 0)),
                      .inner = qp->q.inner ? qp->q.inner : 1, .count = qp->q.count,
                      .in_i32 = qp->in_i32, .out_i8 = qp->out_i8};
    nd->run = quant_run;
    return Q8_OK;
}

static q8_status dequant_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_dequantize(q8_cu_stream(c), pp), n, "dequantize", err);
}

q8_status q8_cu_dequant_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                              q8_error *err) {
    const q8_dequantizelinear_params *qp = n->params;
    int xt = qp->xt == Q8_I8 ? Q8CU_T_I8 : qp->xt == Q8_U8 ? Q8CU_T_U8 : Q8CU_T_I32;
    q8cu_dequant_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_dequant_args){.x = q8_cu_tensor(pr, g, n->inputs[0]),
                        .y = q8_cu_tensor(pr, g, n->outputs[0]),
                        .scale = q8_cu_tensor(pr, g, n->inputs[1]),
                        .zp = q8_has_input(n, 2) ? q8_cu_tensor(pr, g, n->inputs[2]) : NULL,
                        .n = q8_tensor_numel(q8_in(g, n, 0)),
                        .inner = qp->q.inner ? qp->q.inner : 1, .count = qp->q.count,
                        .xt = xt};
    nd->run = dequant_run;
    return Q8_OK;
}

/* ---- q8.QLut --------------------------------------------------------------------------- */

static q8_status qlut_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_qlut(q8_cu_stream(c), pp), n, "qlut", err);
}

q8_status q8_cu_qlut_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    q8cu_qlut_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    const q8_tensor *x = q8_in(g, n, 0);
    *p = (q8cu_qlut_args){.x = q8_cu_tensor(pr, g, n->inputs[0]),
                          .table = q8_cu_tensor(pr, g, n->inputs[1]),
                          .y = q8_cu_tensor(pr, g, n->outputs[0]),
                          .n = q8_tensor_numel(x), .channels = 1, .inner = 1};
    if (n->n_inputs > 2 && n->inputs[2] >= 0) { /* a table per channel */
        p->index = q8_cu_tensor(pr, g, n->inputs[2]);
        p->channels = x->dims[1];
        for (int d = 2; d < x->ndim; d++) p->inner *= x->dims[d];
    }
    nd->run = qlut_run;
    return Q8_OK;
}

/* ---- q8.QAdd --------------------------------------------------------------------------- */

static q8_status qadd_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_qadd(q8_cu_stream(c), pp), n, "qadd", err);
}

q8_status q8_cu_qadd_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    const q8_qadd_params *qp = n->params;
    q8cu_qadd_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_qadd_args){.a = q8_cu_tensor(pr, g, n->inputs[0]),
                          .b = q8_cu_tensor(pr, g, n->inputs[1]),
                          .y = q8_cu_tensor(pr, g, n->outputs[0]),
                          .ma = qp->ma, .mb = qp->mb, .shift = qp->shift, .lo = qp->lo,
                          .n = qp->n};
    nd->run = qadd_run;
    return Q8_OK;
}

/* ---- q8.QMul --------------------------------------------------------------------------- */

static q8_status qmul_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_qmul(q8_cu_stream(c), pp), n, "qmul", err);
}

q8_status q8_cu_qmul_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    const q8_qmul_params *qp = n->params;
    q8cu_qmul_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_qmul_args){.a = q8_cu_tensor(pr, g, n->inputs[0]),
                          .b = q8_cu_tensor(pr, g, n->inputs[1]),
                          .y = q8_cu_tensor(pr, g, n->outputs[0]), .m = qp->m,
                          .shift = qp->shift, .n = qp->outer * qp->inner, .inner = qp->inner};
    nd->run = qmul_run;
    return Q8_OK;
}

static q8_status qmulf_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_qmulf(q8_cu_stream(c), pp), n, "qmulf", err);
}

q8_status q8_cu_qmulf_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                           q8_error *err) {
    const q8_qmulf_params *qp = n->params;
    q8cu_qmulf_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_qmulf_args){.a = q8_cu_tensor(pr, g, n->inputs[0]),
                           .b = q8_cu_tensor(pr, g, n->inputs[1]),
                           .y = q8_cu_tensor(pr, g, n->outputs[0]), .sa = qp->sa, .sb = qp->sb,
                           .sy = qp->sy, .n = qp->outer * qp->inner, .inner = qp->inner};
    nd->run = qmulf_run;
    return Q8_OK;
}

/* ---- q8.QPRelu ------------------------------------------------------------------------- */

static q8_status qprelu_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_qprelu(q8_cu_stream(c), pp), n, "qprelu", err);
}

q8_status q8_cu_qprelu_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                            q8_error *err) {
    const q8_qprelu_params *qp = n->params;
    q8cu_qprelu_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_qprelu_args){.x = q8_cu_tensor(pr, g, n->inputs[0]),
                            .slope = q8_cu_tensor(pr, g, n->inputs[1]),
                            .y = q8_cu_tensor(pr, g, n->outputs[0]), .sx = qp->sx,
                            .sy = qp->sy, .n = qp->planes * qp->inner, .inner = qp->inner,
                            .channels = qp->channels};
    nd->run = qprelu_run;
    return Q8_OK;
}

/* ---- q8.QGlobalAveragePool ------------------------------------------------------------- */

static q8_status qgap_run(cu_ctx *c, const q8_node *n, void *pp, q8_error *err) {
    return q8_cu_launch_check(q8cu_qgap(q8_cu_stream(c), pp), n, "qgap", err);
}

q8_status q8_cu_qgap_plan(cu_prep *pr, const q8_graph *g, const q8_node *n, cu_node *nd,
                          q8_error *err) {
    const q8_qgap_params *qp = n->params;
    q8cu_qgap_args *p = q8_cu_params(nd, sizeof *p);
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *p = (q8cu_qgap_args){.x = q8_cu_tensor(pr, g, n->inputs[0]),
                          .y = q8_cu_tensor(pr, g, n->outputs[0]), .mult = qp->mult,
                          .shift = qp->shift, .rows = qp->rows, .len = qp->s};
    nd->run = qgap_run;
    return Q8_OK;
}
