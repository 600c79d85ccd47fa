/* Conv on the CPU (params: src/core/ops/conv.h). Per image and group it is
 * one GEMM
 *   Y[mg, out_sp] = W_g[mg, cg*kprod] * col[cg*kprod, out_sp]
 * with a constant W_g packed once per session in prepare, which also picks
 * how B (col) is made, by mode (conv_impl.h): 1x1 convs read X as B; most
 * others pad X into stride-phase planes where each kernel tap is a
 * contiguous shifted row (shift mode); the rest gather B panels straight
 * from X (implicit im2col; a rough cost model picks between the two); one
 * output pixel gathers its column into scratch (GEMV); depthwise convs (one
 * input channel per group, a few outputs each) run direct loops on the
 * planes; few-input-channel convs (a network's first) run direct loops on
 * X where AVX-512 is (conv_fewc.h), and so do depthwise ones (conv_dwx.h;
 * conv_dwr.h: stride 1 or 2, each input row loaded once) and stride-2 ones
 * with the output channels in the lanes (conv_ocl.h).
 * Large 2-D shift-mode maps run in bands of output rows (see "banded
 * shift"). The internal attribute _conv_impl ("im2col", "shift": the
 * whole map's planes, no bands) forces a GEMM lowering, for tests;
 * "planes" keeps the automatic choice but without those AVX-512 loops on
 * X. */
#include <string.h>

#include "conv_dwc.h"
#include "conv_dwr.h"
#include "conv_dwx.h"
#include "conv_fewc.h"
#include "conv_impl.h"
#include "conv_ocl.h"
#include "cpu_op.h"
#include "sgemm.h"

/* Depthwise multipliers (outputs per input channel) below this run the
 * direct loops; larger ones are GEMMs. */
#define DW_MAX_MULTIPLIER 8

/* Output grid of the shift mode (see conv_prep). */
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
static bool shift_pays(int64_t m, int64_t g, int64_t kg, int64_t out_sp, int64_t out_rows,
                       int64_t nprime, int64_t plane_floats) {
    double gemm = 2.0 * (double)m * (double)kg / 60.0;
    double shift = gemm * (double)((nprime + 31) / 32 * 32) +
                   0.3 * (double)(g * kg) * (double)nprime + 0.5 * (double)plane_floats;
    /* im2col also pays per output row and k (bounds, pointers): on 4-wide
     * maps that was most of its packing (a 1x3 conv on 12x4: shift 0.028 ms,
     * im2col 0.033) */
    double im2col = gemm * (double)((out_sp + 31) / 32 * 32) +
                    1.3 * (double)(g * kg) * (double)out_sp + 25.0 * (double)(g * kg) * out_rows;
    return shift <= im2col;
}

/* The lowering for this node and, for a constant W, W packed once. */
static q8_status conv_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                              void **prep, size_t *bytes, q8_error *err) {
    const q8_conv_params *p = n->params;
    const q8_conv_geom geo = p->geo;
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1);
    int64_t grp = p->g, cg = p->cg, mg = p->mg, kprod = p->kprod, out_sp = p->out_sp;
    bool unit = kprod == 1, plain = true;
    for (int i = 0; i < 3; i++) plain &= geo.s[i] == 1 && geo.pb[i] == 0 && geo.pe[i] == 0;
    int64_t ph[3], nprime;
    bool direct;
    conv_mode mode = CONV_IM2COL;
    shift_geometry(&geo, ph, &nprime, &direct);
    bool shift_ok = shift_pays(p->m, grp, p->kg, out_sp, geo.out[0] * geo.out[1], nprime,
                               p->c * q8_conv_phases_read(&geo) * ph[0] * ph[1] * ph[2]);
    /* One input channel per group but many outputs from it (an STFT front
     * end: one channel, 258 filters) is a real GEMM: M rows fill whole
     * micro-kernel tiles and its columns split over threads, where the
     * direct loops would run one channel on one thread. */
    if (cg == 1 && mg < DW_MAX_MULTIPLIER) mode = CONV_DEPTHWISE;
    else if (unit && plain) mode = CONV_1X1;
    else if (out_sp == 1) mode = CONV_COL1;
    else if (shift_ok) mode = CONV_SHIFT;
    /* One output pixel whose window is exactly the unpadded input: the
     * column is X itself. */
    bool col_is_x = out_sp == 1;
    for (int i = 0; i < 3; i++)
        col_is_x &= geo.pb[i] == 0 && geo.d[i] == 1 && geo.k[i] == geo.in[i];
    /* Internal, for tests: force the general GEMM lowerings, or the
     * portable loops ("planes": no AVX-512 loops on X). */
    const char *impl = q8_attr_str(n, "_conv_impl", "auto");
    bool on_x = true;
    if (strcmp(impl, "im2col") == 0) mode = CONV_IM2COL;
    else if (strcmp(impl, "shift") == 0) mode = CONV_SHIFT;
    else if (strcmp(impl, "planes") == 0) on_x = false;
    else if (strcmp(impl, "auto") != 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "_conv_impl '%s' is not auto, im2col, shift or planes", impl);
    /* Needs W packed at prepare: a constant W. */
    if (!strcmp(impl, "auto") && mode != CONV_DEPTHWISE && w->data && !x->data &&
        q8_conv_fewc_fits(p))
        mode = CONV_FEWC;
    else if (!strcmp(impl, "auto") && mode != CONV_DEPTHWISE && w->data && !x->data &&
             q8_conv_ocl_fits(p))
        mode = CONV_OCL;
    bool direct_x = mode == CONV_FEWC || mode == CONV_OCL;
    int64_t ngemm = mode == CONV_DEPTHWISE || direct_x ? 0
                    : mode == CONV_SHIFT                          ? grp
                                                                  : p->nb * grp;
    bool planes = mode == CONV_SHIFT || mode == CONV_DEPTHWISE;
    size_t pa = mode == CONV_DEPTHWISE ? 0
                : mode == CONV_FEWC ? sizeof(float) * q8_conv_fewc_packed_floats(p)
                : mode == CONV_OCL  ? sizeof(float) * q8_conv_ocl_packed_floats(p)
                                    : q8_sgemm_packed_a_bytes(mg, p->kg, grp, 0);
    bool pack = w->data && !x->data && pa && out_sp > 1;
    /* 1x1 on the blocked path (W packed): kernels that read B rows in place
     * take whole panels straight from X (row k of a group at k * in_sp)
     * instead of copying them; the same bits. Not when X's rows are not
     * 64-byte aligned (in_sp % 16) and W has 64 rows or more: every
     * 64-byte load of the panel then spans two cache lines, once per 8-row
     * tile, and a packed copy is faster from 8 tiles on (Intel Xeon,
     * AVX-512, 1 thread: 128 -> 128 on 29x29 0.252 -> 0.216 ms, 256 -> 256
     * on 15x15 0.277 -> 0.221; 240 -> 40 on 14x14 no faster packed). */
    bool rows_1x1 = mode == CONV_1X1 && pack && q8_sgemm_reads_rows_in_place(0) &&
                    (p->in_sp % 16 == 0 || mg < 64);
    int64_t nk = planes || rows_1x1 ? p->kg : 0;
    size_t head = q8_align_up(sizeof(conv_prep) + sizeof(int64_t) * (size_t)(4 * ngemm + nk), 64);
    conv_prep *cp = q8_aligned_alloc(head + (pack ? pa : 0));
    if (!cp)
        return q8_fail(err, Q8_ERR_NOMEM,
                       pack ? "out of memory packing Conv weights" : "out of memory");
    memset(cp, 0, head);
    cp->mode = mode;
    cp->bands = mode == CONV_SHIFT && !strcmp(impl, "auto");
    /* Unpadded, stride 1: the planes would be a copy of X (antispoof's
     * 64-channel 63x63 input: 1 MB copied per run) */
    cp->planes_are_x = mode == CONV_SHIFT && plain;
    cp->col_is_x = col_is_x;
    cp->dwr = mode == CONV_DEPTHWISE && on_x && q8_conv_dwr_fits(p);
    cp->dwc = mode == CONV_DEPTHWISE && on_x && !cp->dwr && q8_conv_dwc_fits(p);
    cp->dwx = mode == CONV_DEPTHWISE && on_x && !cp->dwr && !cp->dwc && q8_conv_dwx_fits(p);
    cp->ngemm = ngemm;
    int64_t *offs = cp->tail;
    if (planes) {
        memcpy(cp->ph, ph, sizeof ph);
        cp->nph = geo.s[0] * geo.s[1] * geo.s[2];
        cp->plane = ph[0] * ph[1] * ph[2];
        cp->nprime = nprime;
        cp->direct = direct;
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
                        offk[k++] = (ci * cp->nph + phase) * cp->plane +
                                    ((td / geo.s[0]) * ph[1] + th / geo.s[1]) * ph[2] +
                                    tw / geo.s[2];
                    }
    } else {
        if (rows_1x1) {
            /* As one phase plane per channel, for q8_conv_shift_pack. */
            cp->rows_1x1 = true;
            cp->nph = 1;
            cp->plane = p->in_sp;
            for (int64_t k = 0; k < p->kg; k++) offs[4 * ngemm + k] = k * p->in_sp;
        }
        for (int64_t i = 0; i < ngemm; i++) {
            int64_t img = i / grp, gi = i % grp;
            offs[4 * i] = gi * mg * p->kg;
            offs[4 * i + 1] = mode == CONV_COL1 && !col_is_x ? i * p->kg
                                                              : (img * p->c + gi * cg) * p->in_sp;
            offs[4 * i + 2] = (img * p->m + gi * mg) * out_sp;
            offs[4 * i + 3] = gi * mg;
        }
    }
    if (pack && direct_x) {
        float *pk = (float *)((char *)cp + head);
        if (mode == CONV_FEWC) q8_conv_fewc_pack(p, w->data, pk);
        else q8_conv_ocl_pack(p, w->data, pk);
        cp->direct_w = pk;
    } else if (pack) {
        void *pk = (char *)cp + head;
        q8_sgemm_pack_a(pk, false, mg, p->kg, w->data, p->kg, grp, mg * p->kg, 0);
        cp->a_packed = pk;
    }
    *prep = cp;
    *bytes = head + (pack ? pa : 0);
    return Q8_OK;
}

/* ---- run ---- */

static q8_sgemm_op conv_op(const q8_conv_params *p, const conv_prep *cp, const float *w,
                           const float *b_mat, const float *bias, float *y) {
    q8_sgemm_op op = {.m = p->mg, .n = p->out_sp, .k = p->kg, .alpha = 1, .a = w,
                      .lda = p->kg, .b = b_mat, .ldb = cp->mode == CONV_COL1 ? 1 : p->out_sp,
                      .c = y, .ldc = p->out_sp, .a_packed = cp->a_packed, .bias = bias,
                      .act = p->act, .batch = cp->ngemm, .offs = conv_offs(cp)};
    if (cp->mode == CONV_IM2COL) op.b_pack = q8_conv_im2col_pack;
    if (cp->rows_1x1) {
        /* GEMM i = image * g + group: its rows start i * cg * in_sp into X
         * (conv_run sets b_rows to X). */
        op.b_pack = q8_conv_shift_pack;
        op.b_rowoff = conv_offk(cp);
        op.b_rows_stride = p->cg * p->in_sp;
    }
    if (cp->mode == CONV_SHIFT) {
        op.b_pack = q8_conv_shift_pack;
        /* Row k of B is the planes at offk[k]: full panels are read there
         * in place (run_shift sets b_rows to the planes). */
        op.b_rowoff = conv_offk(cp);
        op.b_rows_stride = p->cg * cp->nph * cp->plane;
        if (!cp->direct) /* onto the plane grid (bias and activation on it too) */
            op.n = op.ldc = cp->nprime;
    }
    return op;
}

/* ---- banded shift ----
 * Large 2-D maps with one group: bands of output rows, each built (its
 * planes: the band's rows and the rows below that its taps reach) and
 * multiplied by one thread, so the B rows a thread reads are the ones it
 * just wrote into its own cache. With the whole map's planes built by all
 * threads and then read across them, the micro-kernels ran 20-30% slower
 * on 2 threads than on 1 (M-LSD's 64-channel 3x3 convs at 80x80). */
typedef struct band_plan {
    int64_t rows;       /* output rows per band (the last may have fewer) */
    int64_t reach;      /* plane rows below a band that its taps read */
    int64_t n_bands;    /* per image */
    int64_t band_plane; /* floats per (channel, phase) band plane */
    int64_t max_cols;   /* GEMM columns of a full band */
    size_t planes_bytes, cbuf_bytes, offk_bytes, per_thread;
} band_plan;

/* A band's planes and output within this, beside W's packed block, in a
 * 1 MiB L2. */
#define BAND_BYTES (384 << 10)
/* At least this many bands when the map allows: balance on 2-4 threads. */
#define BAND_MIN_COUNT 8
/* Fewer GEMM columns a band than this (4 AVX-512 panels): the whole-map
 * GEMM, which splits M too, does better. */
#define BAND_MIN_COLS 128

static q8_sgemm_op band_op(const q8_conv_params *p, const conv_prep *cp, const float *w,
                           const float *bias, const float *planes, const int64_t *offk,
                           const conv_pack_ctx *cx, float *c, int64_t ldc, int64_t cols) {
    q8_sgemm_op op = conv_op(p, cp, w, NULL, bias, c);
    op.n = cols;
    op.ldc = ldc;
    op.b_rows = planes;
    op.b_rowoff = offk;
    op.b_rows_stride = 0;
    op.b_pack_ctx = cx;
    return op;
}

static bool band_plan_of(const q8_conv_params *p, const conv_prep *cp, band_plan *b) {
    const q8_conv_geom *G = &p->geo;
    if (!cp->bands || p->g != 1 || G->out[0] != 1 || cp->ph[0] != 1) return false;
    int64_t OH = G->out[1], OW = G->out[2], P2 = cp->ph[2];
    b->reach = (G->k[1] - 1) * G->d[1] / G->s[1];
    int64_t plane_row = p->c * cp->nph * P2 * (int64_t)sizeof(float);
    int64_t out_row = (cp->direct ? 0 : p->m) * P2 * (int64_t)sizeof(float);
    int64_t rows = (BAND_BYTES - b->reach * plane_row) / (plane_row + out_row);
    /* A long reach (dilation 5: 10 rows) at least as many rows: the copy
     * of the rows below at most doubles the planes' copy. */
    if (rows < b->reach) rows = b->reach;
    int64_t balanced = (OH + BAND_MIN_COUNT - 1) / BAND_MIN_COUNT;
    if (rows > balanced) rows = balanced;
    if (rows < 1 || (rows - 1) * P2 + OW < BAND_MIN_COLS) return false;
    b->rows = rows;
    b->n_bands = (OH + rows - 1) / rows;
    b->band_plane = (rows + b->reach) * P2;
    b->max_cols = (rows - 1) * P2 + OW;
    b->planes_bytes =
        cp->planes_are_x
            ? 0
            : q8_align_up(sizeof(float) * (size_t)(p->c * cp->nph * b->band_plane), 64);
    b->cbuf_bytes =
        cp->direct ? 0 : q8_align_up(sizeof(float) * (size_t)(p->m * b->max_cols), 64);
    b->offk_bytes = q8_align_up(sizeof(int64_t) * (size_t)p->kg, 64);
    q8_sgemm_op op = band_op(p, cp, NULL, NULL, NULL, NULL, NULL, NULL, b->max_cols, b->max_cols);
    b->per_thread = b->planes_bytes + b->cbuf_bytes + b->offk_bytes +
                    q8_align_up(q8_sgemm_scratch_bytes(&op, 1), 64);
    return true;
}

typedef struct band_args {
    const q8_conv_params *p;
    const conv_prep *cp;
    const band_plan *b;
    const float *x, *w, *bias;
    float *y;
    char *scratch;
} band_args;

/* Items: (image, band). */
static void band_range(void *arg, int64_t begin, int64_t end, int thread) {
    const band_args *a = arg;
    const q8_conv_params *p = a->p;
    const conv_prep *cp = a->cp;
    const band_plan *b = a->b;
    int64_t OH = p->geo.out[1], OW = p->geo.out[2], P1 = cp->ph[1], P2 = cp->ph[2];
    char *s = a->scratch + (size_t)thread * b->per_thread;
    float *planes = (float *)s, *cbuf = (float *)(s + b->planes_bytes);
    int64_t *offk = (int64_t *)(s + b->planes_bytes + b->cbuf_bytes);
    void *gemm_scratch = s + b->planes_bytes + b->cbuf_bytes + b->offk_bytes;
    /* The whole planes' row offsets, onto band planes (a tap's row and
     * column offset stay within its plane's first reach + 1 rows). */
    const int64_t *full = conv_offk(cp);
    for (int64_t k = 0; k < p->kg; k++)
        offk[k] = full[k] / cp->plane * b->band_plane + full[k] % cp->plane;
    conv_pack_ctx cx = {.p = p, .cp = cp, .src = planes, .offk = offk};
    for (int64_t it = begin; it < end; it++) {
        int64_t img = it / b->n_bands, r0 = it % b->n_bands * b->rows;
        int64_t rows = OH - r0 < b->rows ? OH - r0 : b->rows;
        int64_t r1 = r0 + rows + b->reach;
        const float *rows_at = planes, *xi = a->x + img * p->c * p->in_sp;
        if (cp->planes_are_x) {
            rows_at = xi + r0 * P2; /* the band's rows of X, at X's own offsets */
            cx.src = rows_at;
        } else {
            q8_conv_band_planes(p, cp, xi, r0, r1 < P1 ? r1 : P1, b->band_plane, planes);
        }
        const int64_t *ok = cp->planes_are_x ? full : offk;
        cx.offk = ok;
        float *y = a->y + img * p->m * p->out_sp;
        int64_t cols = (rows - 1) * P2 + OW;
        q8_sgemm_op op = cp->direct ? band_op(p, cp, a->w, a->bias, rows_at, ok, &cx,
                                              y + r0 * OW, p->out_sp, cols)
                                    : band_op(p, cp, a->w, a->bias, rows_at, ok, &cx, cbuf,
                                              cols, cols);
        q8_sgemm_run(&op, NULL, gemm_scratch);
        if (cp->direct) continue;
        for (int64_t m = 0; m < p->m; m++)
            for (int64_t i = 0; i < rows; i++)
                memcpy(y + m * p->out_sp + (r0 + i) * OW, cbuf + m * cols + i * P2,
                       sizeof(float) * (size_t)OW);
    }
}

/* Scratch in front of the GEMM's: the COL1 columns, or the shift planes
 * and (unless direct) the plane-grid output. */
static size_t pre_bytes(const q8_conv_params *p, const conv_prep *cp, size_t *planes_bytes) {
    *planes_bytes = 0;
    if (cp->mode == CONV_COL1 && !cp->col_is_x)
        return q8_align_up(sizeof(float) * (size_t)(p->nb * p->g * p->kg), 64);
    if (cp->mode != CONV_SHIFT) return 0;
    *planes_bytes = cp->planes_are_x
                        ? 0
                        : q8_align_up(sizeof(float) * (size_t)(p->c * cp->nph * cp->plane), 64);
    size_t cbuf = cp->direct ? 0 : q8_align_up(sizeof(float) * (size_t)(p->m * cp->nprime), 64);
    return *planes_bytes + cbuf;
}

/* Depthwise scratch per thread: one channel's planes, then its grid output. */
static size_t dw_planes_bytes(const conv_prep *cp) {
    return q8_align_up(sizeof(float) * (size_t)conv_planes_floats(cp), 64);
}
static size_t dw_per_thread(const conv_prep *cp) {
    return dw_planes_bytes(cp) + q8_align_up(sizeof(float) * (size_t)(cp->nprime + 64), 64);
}

static size_t conv_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                           int n_threads) {
    const q8_conv_params *p = n->params;
    const conv_prep *cp = prep;
    if (cp->mode == CONV_DEPTHWISE)
        return cp->dwr ? 0
                       : (cp->dwc ? q8_conv_dwc_per_thread(p) : dw_per_thread(cp)) *
                             (size_t)n_threads;
    if (cp->mode == CONV_FEWC) return 0;
    if (cp->mode == CONV_OCL) return q8_conv_ocl_per_thread(p) * (size_t)n_threads;
    band_plan b;
    if (band_plan_of(p, cp, &b)) return b.per_thread * (size_t)n_threads;
    q8_sgemm_op op = conv_op(p, cp, NULL, NULL, NULL, NULL);
    size_t pb;
    return pre_bytes(p, cp, &pb) + q8_sgemm_scratch_bytes(&op, n_threads);
}

/* Items of at least ~`work` units each for q8_parallel_for. */
static int64_t grain_for(int64_t per_item) {
    return per_item >= 16384 ? 1 : 16384 / (per_item > 0 ? per_item : 1);
}

static void run_shift(const q8_exec *x, const q8_conv_params *p, const conv_prep *cp,
                      const float *X, const float *W, const float *bias, float *Y) {
    size_t planes_bytes, pre = pre_bytes(p, cp, &planes_bytes);
    float *planes = x->scratch;
    float *cbuf = (float *)((char *)x->scratch + planes_bytes);
    void *gemm_scratch = (char *)x->scratch + pre;
    /* Small inputs: building the planes is cheaper than waking threads. */
    q8_pool *plane_pool = p->c * cp->nph * cp->plane >= (1 << 16) ? x->pool : NULL;
    for (int64_t img = 0; img < p->nb; img++) {
        const float *xi = X + img * p->c * p->in_sp, *rows_at = xi;
        if (!cp->planes_are_x) {
            conv_planes_args pa = {.p = p, .cp = cp, .x = xi, .planes = planes};
            q8_parallel_for(plane_pool, p->c, grain_for(cp->nph * cp->plane),
                            q8_conv_planes_range, &pa);
            rows_at = planes;
        }
        float *yi = Y + img * p->m * p->out_sp;
        conv_pack_ctx cx = {.p = p, .cp = cp, .src = rows_at};
        conv_compact_args ca = {.p = p, .cp = cp, .cbuf = cbuf, .y = yi};
        q8_sgemm_op op = conv_op(p, cp, W, NULL, bias, cp->direct ? yi : cbuf);
        op.b_pack_ctx = &cx;
        op.b_rows = rows_at;
        if (!cp->direct) {
            /* Each GEMM work item moves its block onto Y while it is hot. */
            op.block_done = q8_conv_compact_block;
            op.block_done_ctx = &ca;
        }
        q8_sgemm_run(&op, x->pool, gemm_scratch);
    }
}

static void conv_run(const q8_exec *x, const q8_node *n) {
    const q8_conv_params *p = n->params;
    const conv_prep *cp = x->prep;
    const float *X = Q8_IN_PTR(x, n, 0), *W = Q8_IN_PTR(x, n, 1);
    const float *bias = p->has_bias ? Q8_IN_PTR(x, n, 2) : NULL;
    float *Y = Q8_OUT_PTR(x, n, 0);
    if (p->nb == 0 || p->out_sp == 0) return;
    if (cp->mode == CONV_DEPTHWISE) {
        conv_dw_args a = {.p = p, .cp = cp, .x = X, .w = W, .bias = bias, .y = Y,
                          .scratch = x->scratch, .per_thread = dw_per_thread(cp),
                          .ybuf_at = (int64_t)(dw_planes_bytes(cp) / sizeof(float))};
        q8_range_fn fn = q8_conv_dw_range;
#if Q8_FEWC_X86
        if (cp->dwx) fn = q8_conv_dwx_range;
        if (cp->dwr) fn = q8_conv_dwr_range;
        if (cp->dwc) {
            a.per_thread = q8_conv_dwc_per_thread(p);
            q8_parallel_for(x->pool, q8_conv_dwc_items(p), 1, q8_conv_dwc_range, &a);
            return;
        }
#endif
        q8_parallel_for(x->pool, p->nb * p->c,
                        grain_for(p->mg * cp->nprime * p->kprod + cp->nph * cp->plane), fn, &a);
        return;
    }
    if (cp->mode == CONV_FEWC) {
#if Q8_FEWC_X86
        conv_fewc_args a = {.p = p, .x = X, .wp = cp->direct_w, .bias = bias, .y = Y};
        q8_parallel_for(x->pool, p->nb * p->geo.out[1], grain_for(p->m * p->geo.out[2] * p->kg),
                        q8_conv_fewc_range, &a);
#endif
        return;
    }
    if (cp->mode == CONV_OCL) {
#if Q8_OCL_X86
        conv_ocl_args a = {.p = p, .x = X, .wp = cp->direct_w, .bias = bias, .y = Y,
                           .scratch = x->scratch};
        q8_parallel_for(x->pool, q8_conv_ocl_items(p), grain_for(Q8_OCL_MB * p->geo.out[2] * p->kg),
                        q8_conv_ocl_range, &a);
#endif
        return;
    }
    band_plan b;
    if (band_plan_of(p, cp, &b)) {
        band_args a = {.p = p, .cp = cp, .b = &b, .x = X, .w = W, .bias = bias, .y = Y,
                       .scratch = x->scratch};
        q8_parallel_for(x->pool, p->nb * b.n_bands, 1, band_range, &a);
        return;
    }
    if (cp->mode == CONV_SHIFT) {
        run_shift(x, p, cp, X, W, bias, Y);
        return;
    }
    conv_pack_ctx cx = {.p = p, .cp = cp, .src = X};
    const float *bmat = X;
    char *scratch = x->scratch;
    if (cp->mode == CONV_COL1 && !cp->col_is_x) {
        float *col = (float *)scratch;
        for (int64_t i = 0; i < p->nb * p->g; i++)
            q8_conv_col1(p, X + ((i / p->g) * p->c + (i % p->g) * p->cg) * p->in_sp,
                         col + i * p->kg);
        bmat = col;
        size_t pb;
        scratch += pre_bytes(p, cp, &pb);
    }
    q8_sgemm_op op = conv_op(p, cp, W, bmat, bias, Y);
    op.b_pack_ctx = &cx;
    if (cp->rows_1x1) op.b_rows = X;
    q8_sgemm_run(&op, x->pool, scratch);
}

/* W is packed only for M > 1 and more than one output pixel: the blocked
 * path, which uses it; or for the few-channel loops. */
static bool conv_packed_input(const void *prep, int j) {
    const conv_prep *cp = prep;
    return j == 1 && (cp->a_packed || cp->direct_w);
}

const q8_cpu_op q8_cpu_conv = {.prepare = conv_prepare, .run = conv_run, .scratch = conv_scratch,
                               .packed_input = conv_packed_input};
