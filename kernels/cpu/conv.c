/* Conv (1-D, 2-D, 3-D; groups, dilations, strides, pads, auto_pad, optional
 * bias, fused activation). Per image and group it is one GEMM
 *   Y[mg, out_sp] = W_g[mg, cg*kprod] * col[cg*kprod, out_sp]
 * with the constant W_g packed once in infer. Modes:
 *   1x1: a 1x1 kernel with stride 1 and no pads reads X as the B matrix;
 *   implicit im2col: B panels are packed straight from X (no col buffer);
 *   one output pixel: the single column is gathered into scratch (GEMV);
 *   depthwise (one input channel per group, 1-D/2-D): a direct kernel. */
#include <string.h>

#include "conv_util.h"
#include "fused_act.h"
#include "registry.h"
#include "sgemm.h"

typedef enum conv_mode {
    CONV_IM2COL,
    CONV_1X1,
    CONV_COL1,
    CONV_DEPTHWISE,
} conv_mode;

typedef struct conv_params {
    int64_t nb, c, m, g, cg, mg;    /* images, in/out channels, groups, per group */
    q8_conv_geom geo;
    int64_t in_sp, out_sp, kprod, kg;
    conv_mode mode;
    bool has_bias;
    q8_act act;
    int64_t offs[];                 /* GEMM modes: 4 per (image, group) */
} conv_params;

static q8_status conv_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1), *b = q8_in(g, n, 2);
    if (x->ndim < 3 || x->ndim > 5)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input has rank %d; only 1 to 3 spatial dims (rank 3 to 5) are supported",
                            x->ndim);
    if (w->ndim != x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "weight has rank %d, the input rank %d",
                            w->ndim, x->ndim);
    int nsp = x->ndim - 2;
    int64_t grp = q8_attr_int(n, "group", 1);
    int64_t c = x->dims[1], m = w->dims[0];
    if (grp < 1 || grp > c || c % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "group %lld does not divide the %lld input channels",
                            (long long)grp, (long long)c);
    if (w->dims[1] * grp != c)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld input channels per group, expected C/group = %lld/%lld = %lld",
                            (long long)w->dims[1], (long long)c, (long long)grp,
                            (long long)(c / grp));
    if (m < 1 || m % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld output channels, not a positive multiple of group %lld",
                            (long long)m, (long long)grp);
    for (int i = 0; i < nsp; i++)
        if (w->dims[2 + i] < 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "weight has an empty kernel dim %d", i);
    if (b) {
        Q8_TRY(q8_check_input(g, n, 2, Q8_F32, err));
        if (b->ndim != 1 || b->dims[0] != m)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "bias must have shape [%lld]", (long long)m);
    }
    q8_conv_geom geo;
    q8_auto_pad ap;
    Q8_TRY(q8_conv_read_attrs(n, nsp, w->dims + 2, &geo, &ap, err));
    q8_conv_widen(nsp, x->dims + 2, 1, geo.in);
    Q8_TRY(q8_conv_out_shape(n, ap, &geo, err));
    int64_t out[5] = {x->dims[0], m};
    for (int i = 0; i < nsp; i++) out[2 + i] = geo.out[3 - nsp + i];
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, out, x->ndim, err));

    int64_t nb = x->dims[0], cg = c / grp, mg = m / grp;
    int64_t kprod = geo.k[0] * geo.k[1] * geo.k[2];
    conv_mode mode = CONV_IM2COL;
    bool unit = kprod == 1, plain = true;
    for (int i = 0; i < 3; i++) plain &= geo.s[i] == 1 && geo.pb[i] == 0 && geo.pe[i] == 0;
    int64_t out_sp = geo.out[0] * geo.out[1] * geo.out[2];
    if (cg == 1 && nsp <= 2) mode = CONV_DEPTHWISE;
    else if (unit && plain) mode = CONV_1X1;
    else if (out_sp == 1) mode = CONV_COL1;
    int64_t ngemm = mode == CONV_DEPTHWISE ? 0 : nb * grp;
    conv_params *p = q8_node_params(n, sizeof *p + sizeof(int64_t) * 4 * (size_t)ngemm, err);
    if (!p) return Q8_ERR_NOMEM;
    p->nb = nb;
    p->c = c;
    p->m = m;
    p->g = grp;
    p->cg = cg;
    p->mg = mg;
    p->geo = geo;
    p->in_sp = geo.in[0] * geo.in[1] * geo.in[2];
    p->out_sp = out_sp;
    p->kprod = kprod;
    p->kg = cg * kprod;
    p->mode = mode;
    p->has_bias = b != NULL;
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    for (int64_t i = 0; i < ngemm; i++) {
        int64_t img = i / grp, gi = i % grp;
        p->offs[4 * i] = gi * mg * p->kg;
        p->offs[4 * i + 1] = mode == CONV_COL1 ? i * p->kg : (img * c + gi * cg) * p->in_sp;
        p->offs[4 * i + 2] = (img * m + gi * mg) * out_sp;
        p->offs[4 * i + 3] = gi * mg;
    }
    size_t pa = mode == CONV_DEPTHWISE ? 0 : q8_sgemm_packed_a_bytes(mg, p->kg, grp, 0);
    if (w->data && !x->data && pa && out_sp > 1) {
        n->packed = q8_aligned_alloc(pa);
        if (!n->packed) return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing Conv weights");
        n->packed_bytes = pa;
        q8_sgemm_pack_a(n->packed, false, mg, p->kg, w->data, p->kg, grp, mg * p->kg, 0);
    }
    return Q8_OK;
}

/* ---- implicit im2col: B panels straight from X ---- */

typedef struct im2col_ctx {
    const conv_params *p;
    const float *x;
} im2col_ctx;

/* Write `len` values of one output row into the panel layout starting at
 * column j: value t is xr[iw0 + t*sw] when inside [0, iw), else 0 (xr NULL:
 * the whole row is padding). */
static void put_row(float *drow, int64_t kc, int nr, int64_t j, int64_t len,
                    const float *xr, int64_t iw0, int64_t sw, int64_t iw) {
    while (len > 0) {
        int64_t off = j % nr, piece = len < nr - off ? len : nr - off;
        float *restrict d = drow + (j / nr) * kc * nr + off;
        if (!xr) {
            for (int64_t t = 0; t < piece; t++) d[t] = 0.0f;
        } else if (sw == 1) {
            int64_t lo = -iw0, hi = iw - iw0;
            lo = lo < 0 ? 0 : lo > piece ? piece : lo;
            hi = hi < lo ? lo : hi > piece ? piece : hi;
            const float *restrict s = xr + iw0;
            for (int64_t t = 0; t < lo; t++) d[t] = 0.0f;
            for (int64_t t = lo; t < hi; t++) d[t] = s[t];
            for (int64_t t = hi; t < piece; t++) d[t] = 0.0f;
        } else {
            for (int64_t t = 0; t < piece; t++) {
                int64_t q = iw0 + t * sw;
                d[t] = q >= 0 && q < iw ? xr[q] : 0.0f;
            }
        }
        j += piece;
        len -= piece;
        iw0 += piece * sw;
    }
}

static void im2col_pack(const void *vctx, int64_t batch, int64_t k0, int64_t kc, int64_t n0,
                        int64_t nc, int nr, float *dst) {
    const im2col_ctx *cx = vctx;
    const conv_params *p = cx->p;
    const q8_conv_geom *G = &p->geo;
    int64_t img = batch / p->g, grp = batch % p->g;
    const float *x = cx->x + (img * p->c + grp * p->cg) * p->in_sp;
    int64_t kw = k0 % G->k[2], t = k0 / G->k[2];
    int64_t kh = t % G->k[1];
    t /= G->k[1];
    int64_t kd = t % G->k[0], ci = t / G->k[0];
    int64_t ow0 = n0 % G->out[2];
    t = n0 / G->out[2];
    int64_t oh0 = t % G->out[1], od0 = t / G->out[1];
    for (int64_t kk = 0; kk < kc; kk++) {
        const float *xc = x + ci * p->in_sp;
        int64_t ow = ow0, oh = oh0, od = od0, j = 0;
        while (j < nc) {
            int64_t len = G->out[2] - ow < nc - j ? G->out[2] - ow : nc - j;
            int64_t id = od * G->s[0] - G->pb[0] + kd * G->d[0];
            int64_t ih = oh * G->s[1] - G->pb[1] + kh * G->d[1];
            const float *xr = id >= 0 && id < G->in[0] && ih >= 0 && ih < G->in[1]
                                  ? xc + (id * G->in[1] + ih) * G->in[2]
                                  : NULL;
            put_row(dst + kk * nr, kc, nr, j, len, xr, ow * G->s[2] - G->pb[2] + kw * G->d[2],
                    G->s[2], G->in[2]);
            j += len;
            ow += len;
            if (ow == G->out[2]) {
                ow = 0;
                if (++oh == G->out[1]) {
                    oh = 0;
                    od++;
                }
            }
        }
        if (++kw == G->k[2]) {
            kw = 0;
            if (++kh == G->k[1]) {
                kh = 0;
                if (++kd == G->k[0]) {
                    kd = 0;
                    ci++;
                }
            }
        }
    }
    /* Columns past nc in the last panel. */
    int64_t tail = nc % nr;
    if (tail) {
        float *d = dst + (nc / nr) * kc * nr;
        for (int64_t kk = 0; kk < kc; kk++)
            memset(d + kk * nr + tail, 0, sizeof(float) * (size_t)(nr - tail));
    }
}

/* ---- depthwise: direct loops, one output row at a time ---- */

typedef struct dw_args {
    const conv_params *p;
    const float *x, *w, *bias;
    float *y;
    int64_t rows, per_plane;        /* rows per item, items per plane */
} dw_args;

static void dw_range(void *arg, int64_t begin, int64_t end, int thread) {
    const dw_args *a = arg;
    const conv_params *p = a->p;
    const q8_conv_geom *G = &p->geo;
    int64_t IH = G->in[1], IW = G->in[2], OH = G->out[1], OW = G->out[2], KH = G->k[1],
            KW = G->k[2], sh = G->s[1], sw = G->s[2], dh = G->d[1], dw = G->d[2];
    for (int64_t it = begin; it < end; it++) {
        int64_t plane = it / a->per_plane, r0 = (it % a->per_plane) * a->rows;
        int64_t r1 = r0 + a->rows < OH ? r0 + a->rows : OH;
        int64_t img = plane / p->m, oc = plane % p->m, ic = oc / p->mg;
        const float *xp = a->x + (img * p->c + ic) * p->in_sp, *wp = a->w + oc * p->kprod;
        float bv = a->bias ? a->bias[oc] : 0.0f;
        for (int64_t oh = r0; oh < r1; oh++) {
            float *restrict yr = a->y + (img * p->m + oc) * p->out_sp + oh * OW;
            for (int64_t ow = 0; ow < OW; ow++) yr[ow] = bv;
            for (int64_t kh = 0; kh < KH; kh++) {
                int64_t ih = oh * sh - G->pb[1] + kh * dh;
                if (ih < 0 || ih >= IH) continue;
                const float *xr = xp + ih * IW;
                for (int64_t kw = 0; kw < KW; kw++) {
                    float wv = wp[kh * KW + kw];
                    int64_t off = kw * dw - G->pb[2];
                    /* ow with 0 <= ow*sw + off < IW */
                    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                    int64_t hi = IW - off <= 0 ? 0 : (IW - off - 1) / sw + 1;
                    if (hi > OW) hi = OW;
                    if (sw == 1) {
                        const float *restrict xs = xr + off;
                        for (int64_t ow = lo; ow < hi; ow++) yr[ow] += wv * xs[ow];
                    } else {
                        for (int64_t ow = lo; ow < hi; ow++) yr[ow] += wv * xr[ow * sw + off];
                    }
                }
            }
            q8_act_apply(&p->act, yr, OW);
        }
    }
}

/* ---- run ---- */

static q8_sgemm_op conv_op(const conv_params *p, const q8_node *n, const float *w,
                           const float *b_mat, const float *bias, float *y) {
    q8_sgemm_op op = {.m = p->mg, .n = p->out_sp, .k = p->kg, .alpha = 1, .a = w,
                      .lda = p->kg, .b = b_mat, .ldb = p->mode == CONV_COL1 ? 1 : p->out_sp,
                      .c = y, .ldc = p->out_sp, .a_packed = n->packed, .bias = bias,
                      .act = p->act, .batch = p->nb * p->g, .offs = p->offs};
    if (p->mode == CONV_IM2COL) op.b_pack = im2col_pack;
    return op;
}

static size_t col1_bytes(const conv_params *p) {
    return p->mode == CONV_COL1 ? q8_align_up(sizeof(float) * (size_t)(p->nb * p->g * p->kg), 64)
                                : 0;
}

static size_t conv_scratch(const q8_graph *g, const q8_node *n, int n_threads) {
    const conv_params *p = n->params;
    if (p->mode == CONV_DEPTHWISE) return 0;
    q8_sgemm_op op = conv_op(p, n, NULL, NULL, NULL, NULL);
    return col1_bytes(p) + q8_sgemm_scratch_bytes(&op, n_threads);
}

static void conv_run(const q8_exec *x, const q8_node *n) {
    const conv_params *p = n->params;
    const float *X = Q8_IN_PTR(x, n, 0), *W = Q8_IN_PTR(x, n, 1);
    const float *bias = p->has_bias ? Q8_IN_PTR(x, n, 2) : NULL;
    float *Y = Q8_OUT_PTR(x, n, 0);
    if (p->nb == 0 || p->out_sp == 0) return;
    if (p->mode == CONV_DEPTHWISE) {
        dw_args a = {.p = p, .x = X, .w = W, .bias = bias, .y = Y, .rows = p->geo.out[1],
                     .per_plane = 1};
        int64_t planes = p->nb * p->m, nt = q8_pool_size(x->pool);
        /* Few planes: split them into row blocks so every thread has work. */
        if (nt > 1 && planes < 4 * nt) {
            int64_t want = (4 * nt + planes - 1) / planes;
            a.rows = (p->geo.out[1] + want - 1) / want;
            a.per_plane = (p->geo.out[1] + a.rows - 1) / a.rows;
        }
        int64_t item_work = a.rows * p->geo.out[2] * p->kprod;
        int64_t grain = item_work >= 16384 ? 1 : 16384 / item_work;
        q8_parallel_for(x->pool, planes * a.per_plane, grain, dw_range, &a);
        return;
    }
    im2col_ctx cx = {.p = p, .x = X};
    const float *bmat = X;
    char *scratch = x->scratch;
    if (p->mode == CONV_COL1) {
        float *col = (float *)scratch;
        for (int64_t i = 0; i < p->nb * p->g; i++) im2col_pack(&cx, i, 0, p->kg, 0, 1, 1, col + i * p->kg);
        bmat = col;
        scratch += col1_bytes(p);
    }
    q8_sgemm_op op = conv_op(p, n, W, bmat, bias, Y);
    op.b_pack_ctx = &cx;
    q8_sgemm_run(&op, x->pool, scratch);
}

const q8_op_def q8_op_conv = {
    .name = "Conv", .infer = conv_infer, .run = conv_run, .scratch_bytes = conv_scratch,
};
