/* q8.QConv on the CPU (params: src/core/ops/qconv.h). Each (image, group) is
 * one INT8 GEMM: the group's output-channel weights (packed once in prepare)
 * against the im2col matrix of its input channels, or the input itself for
 * 1x1 stride-1 unpadded convs; long kernels (KW >= 16) copy each pixel's input
 * runs straight into the packed lanes. Convs with one input channel per group
 * (depthwise) use the direct SIMD kernels of qconv_dw.h when the geometry
 * suits them, else (one output channel per group) a generic direct loop on a
 * zero-padded copy of each input plane, else the GEMM. Padding is the
 * quantized zero (0). */
#include <string.h>

#include "cpu_op.h"
#include "igemv_sparse.h"
#include "layout.h"
#include "ops/qconv.h"
#include "qconv_dw.h"
#include "qconv_im2col.h"
#include "qconv_implicit.h"
#include "qepi.h"
#include "qop_util.h"

/* im2col bytes from which it is made block by block (qconv_prep) */
#define LANES_BLOCKS_MIN ((size_t)1 << 20)

/* At the start of the prepared blob; the offsets are into the blob. */
typedef struct qconv_prep {
    bool depthwise;             /* Cg == 1: direct kernel */
    bool direct;                /* 1x1, stride 1, no pads: X is the GEMM operand */
    bool lanes_vbmi;            /* im2col straight into the packed lanes (AVX-512 VBMI) */
    bool lanes_runs;            /* long kernels: lanes copied from input runs */
    bool lanes_sub;             /* 1x1 with a stride: lanes picked from X (AVX-512 VBMI) */
    bool lanes_blocks;          /* lanes_vbmi / lanes_sub made block by block in the GEMM */
    bool gemv;                  /* one output pixel, direct, one group: the images are the
                                 * GEMM rows and the weights (packed as lanes) its columns */
    bool implicit;              /* stride 1: lanes from a padded NC4HW4 copy of X
                                 * (qconv_implicit.h), weights TAPS4 */
    int64_t Hp, Wp;             /* depthwise: the padded plane */
    q8_igemm_path path;
    bool sparse;                /* the GEMM's weight rows kept compressed: their q8_isp
                                 * after this header (q8_isp_at), the rows made as the
                                 * GEMM's items need them (here: in path's padding) */
    q8_isp_expander expander;   /* sparse: how */
    q8_qepi epi;
    const int8_t *w;            /* the weights in place (the file's layout is the kernel's:
                                 * core/layout.h), or NULL: packed at off_w */
    size_t off_w, off_init;     /* weights, init[M] (bias and +128 correction) */
    size_t off_taps;            /* depthwise: tap offsets [KH*KW] in the padded plane */
    size_t off_ltab;            /* lanes_vbmi: KW x 64 index bytes; implicit: its G chunk
                                 * offsets (int64, qconv_implicit.h) */
    size_t off_dw;              /* depthwise: the SIMD kernel's q8_qdw in the blob, if one
                                 * fits; 0: none (every other conv leaves it out) */
} qconv_prep;

static const q8_isp *qconv_isp(const qconv_prep *c) {
    return (const q8_isp *)((const char *)c + q8_isp_at(sizeof *c));
}

/* Where the lanes are made block by block, the GEMM makes all of a group's
 * rows in each thread (igemm.h, rows_unpack): at most this many bytes. */
#define SPARSE_ALL_ROWS_MAX ((size_t)256 << 10)

/* Whether the GEMM makes all rows per thread (lanes made per block). */
static bool rows_all(const qconv_prep *c) {
    return c->lanes_blocks || (c->implicit && !q8_igemm_lanes_in_place(c->path));
}

/* Bytes of a weight row as the GEMM reads it: kpad(K), or taps x cp for
 * the implicit conv (TAPS4). */
static int64_t row_bytes(const q8_qconv_params *p, bool implicit) {
    if (!implicit) return q8_ig_kpad(p->K);
    return p->geo.KH * p->geo.KW * q8_ig_kpad(p->Cg);
}

static q8_status qconv_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                               void **prep, size_t *bytes, q8_error *err) {
    const q8_qconv_params *p = n->params;
    const q8_qconv_geom *geo = &p->geo;
    int64_t K = p->K;
    qconv_prep c = {0};
    Q8_TRY(q8_qop_path(n, &c.path, err));
    size_t off = sizeof c;
    const q8_tensor *wt = q8_in(g, n, 1);
    /* depthwise weights as stored: rows of ldw bytes (plain or rows4) */
    int64_t kp = (K + 3) / 4 * 4;
    int64_t ldw = wt->layout == Q8_LAYOUT_ROWS4 ? kp : K;
    q8_qdw dw = {0};
    if (p->Cg == 1) {
        /* Several output channels per input channel and no direct kernel for the geometry
         * (an STFT's Conv1d(1, 258, 256, stride 128)): the generic loop would copy the plane
         * and walk it once per output channel; the GEMM reads each pixel's taps once. */
        size_t off_dw = off, at = q8_qop_reserve(&off_dw, sizeof dw);
        q8_qdw_plan(&dw, geo, c.path, ldw == kp && wt->layout != Q8_LAYOUT_LANES16 ? wt->data
                                                                                  : NULL,
                    &off_dw);
        c.depthwise = dw.kind != Q8_QDW_NONE || p->Mg == 1;
        if (dw.kind != Q8_QDW_NONE) {
            off = off_dw;
            c.off_dw = at;
        }
    }
    c.direct = geo->KH == 1 && geo->KW == 1 && geo->sh == 1 && geo->sw == 1 && !geo->pt &&
               !geo->pl && !geo->pb && !geo->pr;
    c.gemv = !c.depthwise && q8_qconv_gemv(p);
    c.implicit = !c.depthwise && !c.gemv && q8_qconv_implicit(p);
    /* planned only for the implicit conv: stride 1, no dilation, so Hp x Wp is
     * bounded by the output's and the weight's sizes (a crafted file's huge pads
     * and dilations on other convs would overflow it) */
    q8_qimp imp = {0};
    if (c.implicit) q8_qimp_plan(&imp, geo, p->Cg);
    int64_t kw_rows = row_bytes(p, c.implicit);
    /* the packed lanes made straight from X: AVX-512 VNNI's GEMM, VBMI's permutes */
    bool from_x = !c.depthwise && !c.direct && !c.implicit &&
                  q8_igemm_resolve(c.path) == Q8_IGEMM_AVX512VNNI && q8_qdw_has_vbmi();
    c.lanes_vbmi = from_x && q8_qconv_lanes_vbmi_ok(geo);
    c.lanes_sub = from_x && !c.lanes_vbmi && q8_qconv_lanes_sub_ok(geo);
    c.lanes_runs = !c.depthwise && !c.direct && !c.implicit && !c.lanes_vbmi && !c.lanes_sub &&
                   q8_qconv_lanes_runs_ok(geo);
    /* An im2col larger than a core's L2 is written to memory and read back
     * by the GEMM: made one block at a time inside the GEMM instead, where
     * it stays in cache (U-Net's 128x128 3x3 convs: 9.4 MB). Smaller ones
     * are made first, split over the threads: inside the GEMM each thread
     * makes every block it reads, so a GEMM of one or two blocks (ResNet's
     * 7x7 layers) would make them twice. */
    c.lanes_blocks = (c.lanes_vbmi || c.lanes_sub) &&
                     q8_ig_lanes_bytes(p->P, p->K) > LANES_BLOCKS_MIN;
    c.Hp = geo->H + geo->pt + geo->pb;
    c.Wp = geo->W + geo->pl + geo->pr;
    q8_qepi_init(&c.epi, &p->q.act, p->q.out_i8, p->q.sy, geo->M);

    /* The weights are read in place when stored as this kernel reads them:
     * rows (plain when K % 4 == 0, else ROWS4), lanes on one pixel
     * (LANES16). quantize stores what q8_layout_for_reader says; where the
     * kernel chosen here differs (a one-input-channel conv that no depthwise
     * kernel fits goes to the GEMM), the weights are packed from their plain
     * view instead. Depthwise kernels read rows of ldw bytes (plain or
     * ROWS4): the AVX-512 one in place (qdw.w), the AVX2 one packs its own
     * pairs, the generic loop reads plain [M][K] (copied from ROWS4). */
    bool dw_kernel = c.off_dw != 0;
    q8_layout mine = c.depthwise ? (ldw == K ? (q8_layout)wt->layout : Q8_LAYOUT_PLAIN)
                     : c.gemv    ? Q8_LAYOUT_LANES16
                     : c.implicit ? Q8_LAYOUT_TAPS4
                     : K % 4     ? Q8_LAYOUT_ROWS4
                                 : Q8_LAYOUT_PLAIN;
    bool in_place = wt->layout == mine;
    /* the GEMM lowerings' rows kept compressed (q8_qop_plan_sparse) */
    q8_isp isp;
    c.sparse = !c.depthwise && !c.gemv &&
               (!rows_all(&c) || (size_t)(p->Mg * kw_rows) <= SPARSE_ALL_ROWS_MAX) &&
               q8_qop_plan_sparse(wt, env, c.path, geo->M, kw_rows, (size_t)(geo->M * kw_rows),
                                  sizeof c, &isp, &off);
    c.expander = q8_isp_expander_for(c.path);
    size_t w_bytes = c.sparse || in_place || dw_kernel ? 0
                     : c.depthwise          ? (size_t)(geo->M * K)
                     : c.gemv               ? q8_ig_lanes_bytes(geo->M, K)
                                            : (size_t)(geo->M * kw_rows);
    /* 64-aligned only where there is something (a header padded to 64 for
     * nothing is most of a small conv's blob) */
    c.off_w = w_bytes ? q8_qop_reserve(&off, w_bytes) : 0;
    /* init and taps: the generic loops' (the depthwise kernels keep their own) */
    c.off_init = q8_qop_reserve_chan(&off, dw_kernel ? 0 : sizeof(int32_t) * (size_t)geo->M);
    c.off_taps = q8_qop_reserve_chan(&off, c.depthwise && !dw_kernel
                                               ? sizeof(int64_t) * (size_t)K
                                               : 0);
    c.off_ltab = c.lanes_vbmi ? q8_qop_reserve(&off, (size_t)geo->KW * 64) : 0;
    if (c.implicit) c.off_ltab = q8_qop_reserve(&off, sizeof(int64_t) * (size_t)imp.G);
    q8_qepi_place(&c.epi, &off);
    const void *wd = wt->data;
    void *tmp = NULL;
    if (!in_place && !c.depthwise) Q8_TRY(q8_tensor_plain(wt, &wd, &tmp, err));
    char *pk = q8_aligned_alloc(off + 64);
    if (!pk) {
        q8_aligned_free(tmp);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    }
    const int8_t *w = wd;
    if (in_place && !c.sparse) c.w = w;
    /* the dense rows, packed into the blob or (sparse) into a temporary that
     * is then compressed into the blob */
    uint8_t *wrows = (uint8_t *)pk + c.off_w;
    if (c.sparse && !in_place && !(wrows = q8_aligned_alloc((size_t)(geo->M * kw_rows)))) {
        q8_aligned_free(tmp);
        q8_aligned_free(pk);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    }
    const int32_t *bias = p->has_bias ? q8_in(g, n, 2)->data : NULL;
    int32_t *init = (int32_t *)(pk + c.off_init);
    if (dw_kernel) {
        q8_qdw_pack(&dw, w, ldw, bias, pk);
        memcpy(pk + c.off_dw, &dw, sizeof dw);
    } else if (c.depthwise) {
        if (!in_place)
            for (int64_t m = 0; m < geo->M; m++)
                memcpy(pk + c.off_w + m * K, w + m * ldw, (size_t)K);
        for (int64_t m = 0; m < geo->M; m++) init[m] = bias ? bias[m] : 0;
        int64_t *taps = (int64_t *)(pk + c.off_taps);
        for (int64_t kh = 0; kh < geo->KH; kh++)
            for (int64_t kw = 0; kw < geo->KW; kw++)
                taps[kh * geo->KW + kw] = kh * geo->dh * c.Wp + kw * geo->dw;
    } else {
        /* The im2col side carries the +128: subtract 128 * sum of each row. */
        if (in_place && c.gemv) q8_ig_lanes_sums((const uint8_t *)w, geo->M, K, init);
        else if (in_place) q8_ig_rows_sums((const uint8_t *)w, geo->M, kw_rows, init);
        else if (c.gemv)
            q8_ig_pack_lanes_jk(w, K, geo->M, K, false, wrows, init);
        else if (c.implicit) {
            q8_layout_pack(Q8_LAYOUT_TAPS4, w, (q8_wshape){geo->M, K, geo->KH * geo->KW},
                           (int8_t *)wrows);
            q8_ig_rows_sums(wrows, geo->M, kw_rows, init);
        } else q8_ig_pack_rows(w, K, geo->M, K, false, wrows, init, NULL);
        if (c.sparse) {
            q8_isp_pack(&isp, in_place ? w : (const int8_t *)wrows, pk, NULL);
            memcpy(pk + q8_isp_at(sizeof c), &isp, sizeof isp);
            if (!in_place) q8_aligned_free(wrows);
        }
        if (c.implicit) q8_qimp_offsets(&imp, geo, (int64_t *)(pk + c.off_ltab));
        if (c.lanes_vbmi) q8_qconv_lanes_tab(geo, (uint8_t *)pk + c.off_ltab);
        for (int64_t m = 0; m < geo->M; m++)
            init[m] = (int32_t)((bias ? (uint32_t)bias[m] : 0u) - 128u * (uint32_t)init[m]);
    }
    q8_aligned_free(tmp);
    q8_qepi_fill(&c.epi, pk, p->q.sx, q8_in(g, n, 1)->q.scale, 0, p->q.sy);
    memcpy(pk, &c, sizeof c);
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

/* The weights the kernels read: in place, or packed in the blob. */
static const uint8_t *qconv_w(const qconv_prep *c) {
    return c->w ? (const uint8_t *)c->w : (const uint8_t *)c + c->off_w;
}

/* The scratch of the lowering; the compressed weights' rows blocks follow
 * it (rows_scratch). */
static size_t scratch_base(const q8_qconv_params *p, const qconv_prep *c, int n_threads) {
    if (c->off_dw)
        return ((const q8_qdw *)((const char *)c + c->off_dw))->per_thread * (size_t)n_threads;
    if (c->depthwise)
        return (size_t)n_threads * (q8_align_up((size_t)(c->Hp * c->Wp), 64) +
                                    q8_align_up(sizeof(int32_t) * (size_t)p->geo.OW, 64));
    if (c->gemv) return q8_ig_rows_bytes(p->geo.N, p->K);
    if (c->implicit) {
        q8_qimp imp;
        q8_qimp_plan(&imp, &p->geo, p->Cg);
        /* lanes blocks only for the kernels that do not read the copy in place */
        size_t blocks = q8_igemm_lanes_in_place(c->path)
                            ? 0
                            : (size_t)n_threads * q8_ig_block_bytes(row_bytes(p, true));
        return q8_align_up(q8_qimp_xbytes(&imp), 64) + blocks;
    }
    if (c->lanes_blocks) return (size_t)n_threads * q8_ig_block_bytes(p->K);
    size_t lanes = q8_align_up(q8_ig_lanes_bytes(p->P, p->K), 64);
    return lanes +
           (c->direct || c->lanes_vbmi || c->lanes_sub || c->lanes_runs ? 0
                                                                          : (size_t)(p->K * p->P));
}

static size_t qconv_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                            int n_threads) {
    (void)g;
    const q8_qconv_params *p = n->params;
    const qconv_prep *c = prep;
    size_t base = q8_align_up(scratch_base(p, c, n_threads), 64);
    return base + (c->sparse ? (size_t)n_threads *
                                    q8_ig_rows_block_bytes(p->Mg, row_bytes(p, c->implicit),
                                                           rows_all(c))
                              : 0);
}

/* The compressed weight rows of one group, for q8_igemm_args.rows_unpack. */
typedef struct rows_ctx {
    const qconv_prep *c;
    int64_t row0;               /* the group's first output channel */
} rows_ctx;

static void unpack_rows(const void *ctx, int64_t i0, int mr, uint8_t *dst) {
    const rows_ctx *r = ctx;
    q8_isp_rows(qconv_isp(r->c), r->c, r->row0 + i0, mr, dst, r->c->expander);
}

/* Point the GEMM at the compressed rows, when the weights are kept so. */
static void sparse_rows(const q8_exec *x, const q8_node *n, const rows_ctx *r,
                        q8_igemm_args *a) {
    if (!r->c->sparse) return;
    a->rows = NULL;
    a->rows_unpack = unpack_rows;
    a->rows_unpack_ctx = r;
    a->rows_scratch = (uint8_t *)x->scratch +
                      q8_align_up(scratch_base(n->params, r->c, q8_pool_size(x->pool)), 64);
}

/* ---- im2col GEMM ---------------------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
/* The VBMI im2col of one image and group, a block of panels at a time
 * (q8_igemm_args.lanes_pack). */
typedef struct vbmi_block_ctx {
    const q8_qconv_geom *q;
    int64_t Cg;
    const int8_t *x;
    const uint8_t *tab;
} vbmi_block_ctx;

static void vbmi_block(const void *ctx, int64_t p0, int64_t np, uint8_t *dst) {
    const vbmi_block_ctx *v = ctx;
    q8_qconv_lanes_vbmi_block(v->q, v->Cg, v->x, v->tab, p0, np, dst);
}

static void sub_block(const void *ctx, int64_t p0, int64_t np, uint8_t *dst) {
    const vbmi_block_ctx *v = ctx;
    q8_qconv_lanes_sub_block(v->q, v->Cg, v->x, p0, np, dst);
}
#endif

/* The implicit conv's lanes, a block of panels at a time. */
typedef struct imp_block_ctx {
    const q8_qimp *m;
    const uint8_t *xp;
    const int64_t *off;
} imp_block_ctx;

static void imp_block(const void *ctx, int64_t p0, int64_t np, uint8_t *dst) {
    const imp_block_ctx *v = ctx;
    q8_qimp_lanes(v->m, v->xp, v->off, p0, np, dst);
}

/* Each (image, group): X copied padded and 4-channel interleaved, then one
 * GEMM over OH x Wp columns whose lanes are chunks of it: read in place by
 * the AVX-512 kernel, copied block by block for the others. */
static void qconv_implicit_run(const q8_exec *x, const q8_node *n, const q8_epilogue *e) {
    const q8_qconv_params *p = n->params;
    const qconv_prep *c = x->prep;
    const q8_qconv_geom *q = &p->geo;
    const char *pk = x->prep;
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    uint8_t *xp = x->scratch;
    q8_qimp imp;
    q8_qimp_plan(&imp, q, p->Cg);
    int64_t kw_rows = row_bytes(p, true);
    imp_block_ctx v = {&imp, xp, (const int64_t *)(pk + c->off_ltab)};
    for (int64_t img = 0; img < q->N; img++)
        for (int64_t grp = 0; grp < q->group; grp++) {
            const int8_t *src = (const int8_t *)Q8_IN_PTR(x, n, 0) +
                                (img * q->C + grp * p->Cg) * q->H * q->W;
            q8_qimp_copy(&imp, q, p->Cg, src, xp, x->pool);
            q8_igemm_args a = {
                .I = p->Mg, .J = imp.J, .K = kw_rows,
                .rows = c->sparse ? NULL : qconv_w(c) + (size_t)(grp * p->Mg * kw_rows),
                .rows_u8 = false,
                .init_row = (const int32_t *)(pk + c->off_init) + grp * p->Mg,
                .epi = e, .chan_offset = grp * p->Mg,
                .out = (char *)Q8_OUT_PTR(x, n, 0) +
                       (size_t)((img * q->M + grp * p->Mg) * p->P) * es,
                .ldo = p->P, .lanes = xp, .lane_off = v.off,
                .lanes_pack = imp_block, .lanes_pack_ctx = &v,
                .lanes_scratch = xp + q8_align_up(q8_qimp_xbytes(&imp), 64),
                .vrow = imp.Wp, .vcols = q->OW};
            rows_ctx rc = {c, grp * p->Mg};
            sparse_rows(x, n, &rc, &a);
            q8_igemm(&a, x->pool, c->path);
        }
}

static void qconv_gemm_run(const q8_exec *x, const q8_node *n, const q8_epilogue *e) {
    const q8_qconv_params *p = n->params;
    const qconv_prep *c = x->prep;
    const q8_qconv_geom *q = &p->geo;
    const int8_t *X = Q8_IN_PTR(x, n, 0);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    uint8_t *lanes = x->scratch;
    int8_t *col = (int8_t *)x->scratch + q8_align_up(q8_ig_lanes_bytes(p->P, p->K), 64);
    const char *pk = x->prep;
    int64_t kp = q8_ig_kpad(p->K);
    for (int64_t img = 0; img < q->N; img++)
        for (int64_t grp = 0; grp < q->group; grp++) {
            const int8_t *src = X + (img * q->C + grp * p->Cg) * q->H * q->W;
#if defined(__x86_64__) || defined(__i386__)
            vbmi_block_ctx vb = {q, p->Cg, src, (const uint8_t *)pk + c->off_ltab};
#endif
            if (c->lanes_runs) {
                q8_qconv_lanes_runs(q, p->Cg, src, lanes, x->pool);
#if defined(__x86_64__) || defined(__i386__)
            } else if (c->lanes_blocks) {
                /* made block by block inside the GEMM (below) */
            } else if (c->lanes_vbmi) {
                q8_qconv_lanes_vbmi(q, p->Cg, src, vb.tab, lanes, x->pool);
            } else if (c->lanes_sub) {
                q8_qconv_lanes_sub(q, p->Cg, src, lanes, x->pool);
#endif
            } else {
                if (!c->direct) {
                    q8_qconv_im2col(q, (const uint8_t *)src, 0, (uint8_t *)col, x->pool);
                    src = col;
                }
                q8_ig_pack_lanes_kj(src, p->P, p->K, p->P, true, lanes, x->pool);
            }
            q8_igemm_args a = {
                .I = p->Mg, .J = p->P, .K = p->K,
                .rows = c->sparse ? NULL : qconv_w(c) + (size_t)(grp * p->Mg * kp),
                .lanes = lanes, .rows_u8 = false,
                .init_row = (const int32_t *)(pk + c->off_init) + grp * p->Mg,
                .epi = e, .chan_offset = grp * p->Mg,
                .out = Y + (size_t)((img * q->M + grp * p->Mg) * p->P) * es, .ldo = p->P};
#if defined(__x86_64__) || defined(__i386__)
            if (c->lanes_blocks) {
                a.lanes = NULL;
                a.lanes_pack = c->lanes_sub ? sub_block : vbmi_block;
                a.lanes_pack_ctx = &vb;
                a.lanes_scratch = x->scratch;
            }
#endif
            rows_ctx rc = {c, grp * p->Mg};
            sparse_rows(x, n, &rc, &a);
            q8_igemm(&a, x->pool, c->path);
        }
}

/* ---- depthwise (one input channel per group) ------------------------------ */

typedef struct dw_args {
    const q8_qconv_params *p;
    const qconv_prep *c;
    const q8_epilogue *e;
    const int8_t *x, *w;
    const int32_t *init;
    const int64_t *taps;
    char *y;
    uint8_t *scratch;
} dw_args;

static void dw_range(void *arg, int64_t b, int64_t e, int t) {
    const dw_args *a = arg;
    const q8_qconv_params *p = a->p;
    const qconv_prep *c = a->c;
    const q8_qconv_geom *q = &p->geo;
    size_t plane = q8_align_up((size_t)(c->Hp * c->Wp), 64);
    int8_t *xp = (int8_t *)a->scratch +
                 (size_t)t * (plane + q8_align_up(sizeof(int32_t) * (size_t)q->OW, 64));
    int32_t *acc = (int32_t *)(xp + plane);
    size_t es = a->e->kind == Q8_EPI_I8 ? 1 : 4;
    int64_t taps = q->KH * q->KW;
    for (int64_t it = b; it < e; it++) { /* one output channel of one image */
        int64_t img = it / q->M, m = it % q->M;
        const int8_t *xc = a->x + (img * q->C + m / p->Mg) * q->H * q->W;
        memset(xp, 0, (size_t)(c->Hp * c->Wp));
        for (int64_t h = 0; h < q->H; h++)
            memcpy(xp + (h + q->pt) * c->Wp + q->pl, xc + h * q->W, (size_t)q->W);
        const int8_t *w = a->w + m * taps;
        for (int64_t oh = 0; oh < q->OH; oh++) {
            const int8_t *row = xp + oh * q->sh * c->Wp;
            if (q->sw == 1) {
                q8_dw_row(c->path, row, a->taps, w, taps, a->init[m], q->OW, acc);
            } else if (q->sw == 2) {
                q8_dw_row_s2(c->path, row, a->taps, w, taps, a->init[m], q->OW, acc);
            } else {
                for (int64_t ow = 0; ow < q->OW; ow++) {
                    uint32_t s = (uint32_t)a->init[m];
                    for (int64_t k = 0; k < taps; k++)
                        s += (uint32_t)(w[k] * row[a->taps[k] + ow * q->sw]);
                    acc[ow] = (int32_t)s;
                }
            }
            q8_epilogue_row(c->path, a->e, acc, q->OW, m,
                            a->y + (size_t)(((img * q->M + m) * q->OH + oh) * q->OW) * es);
        }
    }
}

/* One output pixel: Y [N][M] = X [N][K] times the weights, as QGemm does it. */
static void qconv_gemv_run(const q8_exec *x, const q8_node *n, const q8_epilogue *e) {
    const q8_qconv_params *p = n->params;
    const qconv_prep *c = x->prep;
    const char *pk = x->prep;
    uint8_t *rows = x->scratch;
    q8_ig_pack_rows(Q8_IN_PTR(x, n, 0), p->K, p->geo.N, p->K, true, rows, NULL, x->pool);
    q8_igemm_args a = {
        .I = p->geo.N, .J = p->geo.M, .K = p->K, .rows = rows,
        .lanes = qconv_w(c), .rows_u8 = true,
        .init_col = (const int32_t *)(pk + c->off_init), .epi = e,
        .out = Q8_OUT_PTR(x, n, 0), .ldo = p->geo.M};
    q8_igemm(&a, x->pool, c->path);
}

static void qconv_run(const q8_exec *x, const q8_node *n) {
    const q8_qconv_params *p = n->params;
    const qconv_prep *c = x->prep;
    q8_epilogue e;
    q8_qepi_view(&c->epi, x->prep, c->gemv ? Q8_CH_COL : Q8_CH_ROW, &e);
    if (c->gemv) {
        qconv_gemv_run(x, n, &e);
        return;
    }
    if (c->implicit) {
        qconv_implicit_run(x, n, &e);
        return;
    }
    if (!c->depthwise) {
        qconv_gemm_run(x, n, &e);
        return;
    }
    if (c->off_dw) {
        const q8_qdw *dw = (const q8_qdw *)((const char *)x->prep + c->off_dw);
        q8_qdw_run(dw, x->prep, &e, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), x->scratch,
                   x->pool);
        return;
    }
    const q8_qconv_geom *q = &p->geo;
    const char *pk = x->prep;
    dw_args a = {p, c, &e, Q8_IN_PTR(x, n, 0), (const int8_t *)qconv_w(c),
                 (const int32_t *)(pk + c->off_init), (const int64_t *)(pk + c->off_taps),
                 Q8_OUT_PTR(x, n, 0), x->scratch};
    q8_parallel_for(x->pool, q->N * q->M, 1 + 8192 / (q->KH * q->KW * p->geo.OW * q->OH + 1),
                    dw_range, &a);
}

/* The bias is folded into init at prepare; W is read through prep unless a
 * kernel reads it in place (c->w, or the AVX-512 depthwise kernel's qdw.w). */
static bool qconv_packed_input(const void *prep, int j) {
    const qconv_prep *c = prep;
    if (j == 2) return true;
    if (j != 1 || c->w) return false;
    return !c->off_dw || !((const q8_qdw *)((const char *)prep + c->off_dw))->w;
}

const q8_cpu_op q8_cpu_qconv = {.prepare = qconv_prepare, .run = qconv_run,
                                .scratch = qconv_scratch, .packed_input = qconv_packed_input};
