/* Conv (1-D, 2-D, 3-D; groups, dilations, strides, pads, auto_pad, optional
 * bias, fused activation). Per image and group it is one GEMM
 *   Y[mg, out_sp] = W_g[mg, cg*kprod] * col[cg*kprod, out_sp]
 * with the constant W_g packed once in infer. How B (col) is made, by mode
 * (conv_impl.h): 1x1 convs read X as B; most others pad X into stride-phase
 * planes where each kernel tap is a contiguous shifted row (shift mode);
 * the rest gather B panels straight from X (implicit im2col; a rough cost
 * model picks between the two); one output pixel gathers its column into
 * scratch (GEMV); depthwise convs (one input channel per group) run direct
 * loops on the planes. The internal attribute _conv_impl ("im2col",
 * "shift") forces a GEMM lowering, for tests. */
#include <string.h>

#include "conv_impl.h"
#include "cpu_op.h"
#include "sgemm.h"

/* Output grid of the shift mode (see conv_params). */
static void shift_geometry(const q8_conv_geom *G, int64_t *ph, int64_t *nprime, bool *direct) {
    for (int i = 0; i < 3; i++) {
        int64_t padded = G->in[i] + G->pb[i] + G->pe[i];
        ph[i] = (padded + G->s[i] - 1) / G->s[i];
        if (ph[i] < G->out[i]) ph[i] = G->out[i];
    }
    *nprime = ((G->out[0] - 1) * ph[1] + (G->out[1] - 1)) * ph[2] + G->out[2];
    *direct = ph[2] == G->out[2] && (G->out[0] == 1 || ph[1] == G->out[1]);
}

/* Shift or implicit im2col: rough cycle estimates (AVX-512 figures; the
 * ratios hold elsewhere). Shift computes garbage grid columns but packs B
 * with plain row copies; im2col computes only real outputs but gathers B
 * element by element. */
static bool shift_pays(int64_t m, int64_t g, int64_t kg, int64_t out_sp, int64_t nprime,
                       int64_t plane_floats) {
    double gemm = 2.0 * (double)m * (double)kg / 60.0;
    double shift = gemm * (double)((nprime + 31) / 32 * 32) +
                   0.3 * (double)(g * kg) * (double)nprime + 0.5 * (double)plane_floats;
    double im2col = gemm * (double)((out_sp + 31) / 32 * 32) +
                    1.3 * (double)(g * kg) * (double)out_sp;
    return shift <= im2col;
}

static q8_status conv_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1), *b = q8_in(g, n, 2);
    if (x->ndim < 3 || x->ndim > 5)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input has rank %d; only 1 to 3 spatial dims (rank 3 to 5) are "
                            "supported", x->ndim);
    if (w->ndim != x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "weight has rank %d, the input rank %d",
                            w->ndim, x->ndim);
    int nsp = x->ndim - 2;
    int64_t grp = q8_attr_int(n, "group", 1);
    int64_t c = x->dims[1], m = w->dims[0];
    if (grp < 1 || grp > c || c % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "group %lld does not divide the %lld input channels", (long long)grp,
                            (long long)c);
    if (w->dims[1] * grp != c)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld input channels per group, expected C/group = "
                            "%lld/%lld = %lld",
                            (long long)w->dims[1], (long long)c, (long long)grp,
                            (long long)(c / grp));
    if (m < 1 || m % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld output channels, not a positive multiple of "
                            "group %lld",
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
    bool unit = kprod == 1, plain = true;
    for (int i = 0; i < 3; i++) plain &= geo.s[i] == 1 && geo.pb[i] == 0 && geo.pe[i] == 0;
    int64_t out_sp = geo.out[0] * geo.out[1] * geo.out[2];
    int64_t ph[3], nprime;
    bool direct;
    conv_mode mode = CONV_IM2COL;
    shift_geometry(&geo, ph, &nprime, &direct);
    bool shift_ok = shift_pays(m, grp, cg * kprod, out_sp, nprime,
                               c * geo.s[0] * geo.s[1] * geo.s[2] * ph[0] * ph[1] * ph[2]);
    if (cg == 1) mode = CONV_DEPTHWISE;
    else if (unit && plain) mode = CONV_1X1;
    else if (out_sp == 1) mode = CONV_COL1;
    else if (shift_ok) mode = CONV_SHIFT;
    /* One output pixel whose window is exactly the unpadded input: the
     * column is X itself. */
    bool col_is_x = out_sp == 1;
    for (int i = 0; i < 3; i++)
        col_is_x &= geo.pb[i] == 0 && geo.d[i] == 1 && geo.k[i] == geo.in[i];
    /* Internal, for tests: force the general GEMM lowerings. */
    const char *impl = q8_attr_str(n, "_conv_impl", "auto");
    if (strcmp(impl, "im2col") == 0) mode = CONV_IM2COL;
    else if (strcmp(impl, "shift") == 0) mode = CONV_SHIFT;
    else if (strcmp(impl, "auto") != 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "_conv_impl '%s' is not auto, im2col or shift",
                            impl);
    int64_t ngemm = mode == CONV_DEPTHWISE ? 0 : mode == CONV_SHIFT ? grp : nb * grp;
    bool planes = mode == CONV_SHIFT || mode == CONV_DEPTHWISE;
    int64_t nk = planes ? cg * kprod : 0;
    conv_params *p = q8_node_params(n, sizeof *p + sizeof(int64_t) * (size_t)(4 * ngemm + nk), err);
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
    p->col_is_x = col_is_x;
    p->ngemm = ngemm;
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    int64_t *offs = p->tail;
    if (planes) {
        memcpy(p->ph, ph, sizeof ph);
        p->nph = geo.s[0] * geo.s[1] * geo.s[2];
        p->plane = ph[0] * ph[1] * ph[2];
        p->nprime = nprime;
        p->direct = direct;
        int64_t ldc = direct ? out_sp : nprime;
        /* One image at a time: GEMM i is group i. */
        for (int64_t i = 0; i < ngemm; i++) {
            offs[4 * i] = i * mg * p->kg;
            offs[4 * i + 1] = 0;
            offs[4 * i + 2] = i * mg * ldc;
            offs[4 * i + 3] = i * mg;
        }
        /* Row k = (channel, kd, kh, kw) of B: offset into the group's planes. */
        int64_t *offk = offs + 4 * ngemm, k = 0;
        for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t kd = 0; kd < geo.k[0]; kd++)
                for (int64_t kh = 0; kh < geo.k[1]; kh++)
                    for (int64_t kw = 0; kw < geo.k[2]; kw++) {
                        int64_t td = kd * geo.d[0], th = kh * geo.d[1], tw = kw * geo.d[2];
                        int64_t phase = ((td % geo.s[0]) * geo.s[1] + th % geo.s[1]) * geo.s[2] +
                                        tw % geo.s[2];
                        offk[k++] = (ci * p->nph + phase) * p->plane +
                                    ((td / geo.s[0]) * ph[1] + th / geo.s[1]) * ph[2] +
                                    tw / geo.s[2];
                    }
    } else {
        for (int64_t i = 0; i < ngemm; i++) {
            int64_t img = i / grp, gi = i % grp;
            offs[4 * i] = gi * mg * p->kg;
            offs[4 * i + 1] = mode == CONV_COL1 && !col_is_x ? i * p->kg
                                                              : (img * c + gi * cg) * p->in_sp;
            offs[4 * i + 2] = (img * m + gi * mg) * out_sp;
            offs[4 * i + 3] = gi * mg;
        }
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

/* ---- run ---- */

static q8_sgemm_op conv_op(const conv_params *p, const q8_node *n, const float *w,
                           const float *b_mat, const float *bias, float *y) {
    q8_sgemm_op op = {.m = p->mg, .n = p->out_sp, .k = p->kg, .alpha = 1, .a = w,
                      .lda = p->kg, .b = b_mat, .ldb = p->mode == CONV_COL1 ? 1 : p->out_sp,
                      .c = y, .ldc = p->out_sp, .a_packed = n->packed, .bias = bias,
                      .act = p->act, .batch = p->ngemm, .offs = conv_offs(p)};
    if (p->mode == CONV_IM2COL) op.b_pack = q8_conv_im2col_pack;
    if (p->mode == CONV_SHIFT) {
        op.b_pack = q8_conv_shift_pack;
        if (!p->direct) {
            /* Onto the plane grid; bias and activation come with compaction. */
            op.n = op.ldc = p->nprime;
            op.bias = NULL;
            op.act.kind = Q8_ACT_NONE;
        }
    }
    return op;
}

/* Scratch in front of the GEMM's: the COL1 columns, or the shift planes
 * and (unless direct) the plane-grid output. */
static size_t pre_bytes(const conv_params *p, size_t *planes_bytes) {
    *planes_bytes = 0;
    if (p->mode == CONV_COL1 && !p->col_is_x)
        return q8_align_up(sizeof(float) * (size_t)(p->nb * p->g * p->kg), 64);
    if (p->mode != CONV_SHIFT) return 0;
    *planes_bytes = q8_align_up(sizeof(float) * (size_t)(p->c * p->nph * p->plane), 64);
    size_t cbuf = p->direct ? 0 : q8_align_up(sizeof(float) * (size_t)(p->m * p->nprime), 64);
    return *planes_bytes + cbuf;
}

/* Depthwise scratch per thread: one channel's planes, then its grid output. */
static size_t dw_planes_bytes(const conv_params *p) {
    return q8_align_up(sizeof(float) * (size_t)conv_planes_floats(p), 64);
}
static size_t dw_per_thread(const conv_params *p) {
    return dw_planes_bytes(p) + q8_align_up(sizeof(float) * (size_t)(p->nprime + 64), 64);
}

static size_t conv_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                           int n_threads) {
    const conv_params *p = n->params;
    if (p->mode == CONV_DEPTHWISE) return dw_per_thread(p) * (size_t)n_threads;
    q8_sgemm_op op = conv_op(p, n, NULL, NULL, NULL, NULL);
    size_t pb;
    return pre_bytes(p, &pb) + q8_sgemm_scratch_bytes(&op, n_threads);
}

/* Items of at least ~`work` units each for q8_parallel_for. */
static int64_t grain_for(int64_t per_item) {
    return per_item >= 16384 ? 1 : 16384 / (per_item > 0 ? per_item : 1);
}

static void run_shift(const q8_exec *x, const conv_params *p, const q8_node *n, const float *X,
                      const float *W, const float *bias, float *Y) {
    size_t planes_bytes, pre = pre_bytes(p, &planes_bytes);
    float *planes = x->scratch;
    float *cbuf = (float *)((char *)x->scratch + planes_bytes);
    void *gemm_scratch = (char *)x->scratch + pre;
    /* Small inputs: building the planes is cheaper than waking threads. */
    q8_pool *plane_pool = p->c * p->nph * p->plane >= (1 << 16) ? x->pool : NULL;
    for (int64_t img = 0; img < p->nb; img++) {
        conv_planes_args pa = {.p = p, .x = X + img * p->c * p->in_sp, .planes = planes};
        q8_parallel_for(plane_pool, p->c, grain_for(p->nph * p->plane), q8_conv_planes_range, &pa);
        float *yi = Y + img * p->m * p->out_sp;
        conv_pack_ctx cx = {.p = p, .src = planes};
        conv_compact_args ca = {.p = p, .cbuf = cbuf, .bias = bias, .y = yi};
        q8_sgemm_op op = conv_op(p, n, W, NULL, bias, p->direct ? yi : cbuf);
        op.b_pack_ctx = &cx;
        if (!p->direct) {
            /* Each GEMM work item moves its block onto Y while it is hot. */
            op.block_done = q8_conv_compact_block;
            op.block_done_ctx = &ca;
        }
        q8_sgemm_run(&op, x->pool, gemm_scratch);
    }
}

static void conv_run(const q8_exec *x, const q8_node *n) {
    const conv_params *p = n->params;
    const float *X = Q8_IN_PTR(x, n, 0), *W = Q8_IN_PTR(x, n, 1);
    const float *bias = p->has_bias ? Q8_IN_PTR(x, n, 2) : NULL;
    float *Y = Q8_OUT_PTR(x, n, 0);
    if (p->nb == 0 || p->out_sp == 0) return;
    if (p->mode == CONV_DEPTHWISE) {
        conv_dw_args a = {.p = p, .x = X, .w = W, .bias = bias, .y = Y, .scratch = x->scratch,
                          .per_thread = dw_per_thread(p),
                          .ybuf_at = (int64_t)(dw_planes_bytes(p) / sizeof(float))};
        q8_parallel_for(x->pool, p->nb * p->c,
                        grain_for(p->mg * p->nprime * p->kprod + p->nph * p->plane),
                        q8_conv_dw_range, &a);
        return;
    }
    if (p->mode == CONV_SHIFT) {
        run_shift(x, p, n, X, W, bias, Y);
        return;
    }
    conv_pack_ctx cx = {.p = p, .src = X};
    const float *bmat = X;
    char *scratch = x->scratch;
    if (p->mode == CONV_COL1 && !p->col_is_x) {
        float *col = (float *)scratch;
        for (int64_t i = 0; i < p->nb * p->g; i++)
            q8_conv_col1(p, X + ((i / p->g) * p->c + (i % p->g) * p->cg) * p->in_sp,
                         col + i * p->kg);
        bmat = col;
        size_t pb;
        scratch += pre_bytes(p, &pb);
    }
    q8_sgemm_op op = conv_op(p, n, W, bmat, bias, Y);
    op.b_pack_ctx = &cx;
    q8_sgemm_run(&op, x->pool, scratch);
}

const q8_op_schema q8_schema_conv = {.infer = conv_infer};
const q8_cpu_op q8_cpu_conv = {.run = conv_run, .scratch = conv_scratch};
