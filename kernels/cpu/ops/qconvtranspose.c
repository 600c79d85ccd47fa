/* q8.QConvTranspose on the CPU (params: src/core/ops/qconvtranspose.h).
 * Per (image, group): one INT8 GEMM gives, for every output channel and
 * kernel tap, the int32 sums over the group's input channels at every input
 * pixel (rows (m, kh, kw) x input pixels); col2im then adds the taps into
 * each output channel's plane (int32, exact) and the epilogue requantizes. */
#include <string.h>

#include "cpu_op.h"
#include "ops/qconvtranspose.h"
#include "qconv_im2col.h"
#include "qepi.h"
#include "qop_util.h"

/* At the start of the prepared blob; the offsets are into the blob. */
typedef struct qconvt_prep {
    int64_t R;                  /* Mg * KH * KW GEMM rows per group */
    int64_t Pin, P;             /* input and output pixels per channel */
    q8_igemm_path path;
    q8_qepi epi;
    size_t off_w, off_init, off_bias; /* rows [M*KH*KW][Cg], their init, bias[M] */
} qconvt_prep;

static q8_status qconvt_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                                void **prep, size_t *bytes, q8_error *err) {
    const q8_qconvtranspose_params *p = n->params;
    const q8_qconv_geom *geo = &p->geo;
    int64_t Cg = p->Cg, taps = geo->KH * geo->KW;
    qconvt_prep c = {0};
    Q8_TRY(q8_qop_path(n, &c.path, err));
    c.R = p->Mg * taps;
    c.Pin = geo->H * geo->W;
    c.P = geo->OH * geo->OW;
    q8_qepi_init(&c.epi, &p->q.act, p->q.out_i8, p->q.sy, geo->M);

    int64_t rows = geo->M * taps;
    size_t off = sizeof c;
    c.off_w = q8_qop_reserve(&off, q8_ig_rows_bytes(rows, Cg));
    c.off_init = q8_qop_reserve_chan(&off, sizeof(int32_t) * (size_t)rows);
    c.off_bias = q8_qop_reserve_chan(&off, sizeof(int32_t) * (size_t)geo->M);
    q8_qepi_place(&c.epi, &off);
    char *pk = q8_aligned_alloc(off + 64);
    int8_t *t = malloc((size_t)(rows * Cg) + 1);
    if (!pk || !t) {
        free(t);
        q8_aligned_free(pk);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    }
    /* GEMM row (m, kh, kw) holds W[m][c][kh][kw] over c. */
    const int8_t *w = q8_in(g, n, 1)->data;
    for (int64_t m = 0; m < geo->M; m++)
        for (int64_t ci = 0; ci < Cg; ci++)
            for (int64_t k = 0; k < taps; k++)
                t[(m * taps + k) * Cg + ci] = w[(m * Cg + ci) * taps + k];
    int32_t *init = (int32_t *)(pk + c.off_init);
    q8_ig_pack_rows(t, Cg, rows, Cg, false, (uint8_t *)pk + c.off_w, init, NULL);
    free(t);
    for (int64_t r = 0; r < rows; r++) init[r] = (int32_t)(0u - 128u * (uint32_t)init[r]);
    const int32_t *bias = p->has_bias ? q8_in(g, n, 2)->data : NULL;
    int32_t *b = (int32_t *)(pk + c.off_bias);
    for (int64_t m = 0; m < geo->M; m++) b[m] = bias ? bias[m] : 0;
    q8_qepi_fill(&c.epi, pk, p->q.sx, q8_in(g, n, 1)->q.scale, 0, p->q.sy);
    memcpy(pk, &c, sizeof c);
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

static size_t lanes_part(const q8_qconvtranspose_params *p, const qconvt_prep *c) {
    return q8_align_up(q8_ig_lanes_bytes(c->Pin, p->Cg), 64);
}
static size_t col_part(const qconvt_prep *c) {
    return q8_align_up(sizeof(int32_t) * (size_t)(c->R * c->Pin), 64);
}
static size_t plane_part(const qconvt_prep *c) {
    return q8_align_up(sizeof(int32_t) * (size_t)c->P, 64);
}

static size_t qconvt_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                             int n_threads) {
    const q8_qconvtranspose_params *p = n->params;
    const qconvt_prep *c = prep;
    return lanes_part(p, c) + col_part(c) + (size_t)n_threads * plane_part(c);
}

typedef struct col2im_args {
    const q8_qconvtranspose_params *p;
    const qconvt_prep *c;
    const q8_epilogue *e;
    const int32_t *col;     /* [R][Pin] */
    const int32_t *bias;
    int64_t m0;             /* the group's first output channel */
    char *y;                /* the image's output */
    uint8_t *planes;
} col2im_args;

static void col2im_range(void *arg, int64_t b, int64_t e, int t) {
    const col2im_args *a = arg;
    const qconvt_prep *c = a->c;
    const q8_qconv_geom *q = &a->p->geo;
    /* Unsigned sums wrap instead of overflowing (the exact result fits). */
    uint32_t *acc = (uint32_t *)(a->planes + (size_t)t * plane_part(c));
    size_t es = a->e->kind == Q8_EPI_I8 ? 1 : 4;
    for (int64_t m = b; m < e; m++) {
        int64_t gm = a->m0 + m;
        for (int64_t i = 0; i < c->P; i++) acc[i] = (uint32_t)a->bias[gm];
        for (int64_t kh = 0; kh < q->KH; kh++)
            for (int64_t kw = 0; kw < q->KW; kw++) {
                const int32_t *cl = a->col + ((m * q->KH + kh) * q->KW + kw) * c->Pin;
                int64_t off = kw * q->dw - q->pl, lo, hi;
                q8_qconv_valid_cols(off, q->sw, q->OW, q->W, &lo, &hi);
                for (int64_t ih = 0; ih < q->H; ih++) {
                    int64_t oh = ih * q->sh - q->pt + kh * q->dh;
                    if (oh < 0 || oh >= q->OH) continue;
                    uint32_t *d = acc + oh * q->OW; /* d[iw * sw + off] */
                    const int32_t *s = cl + ih * q->W;
                    for (int64_t iw = lo; iw < hi; iw++) d[iw * q->sw + off] += (uint32_t)s[iw];
                }
            }
        q8_epilogue_row(c->path, a->e, (const int32_t *)acc, c->P, gm,
                        a->y + (size_t)(gm * c->P) * es);
    }
}

static void qconvt_run(const q8_exec *x, const q8_node *n) {
    const q8_qconvtranspose_params *p = n->params;
    const qconvt_prep *c = x->prep;
    const q8_qconv_geom *q = &p->geo;
    const char *pk = x->prep;
    q8_epilogue e, raw = {.kind = Q8_EPI_I32, .chan = Q8_CH_ROW};
    q8_qepi_view(&c->epi, pk, Q8_CH_ROW, &e);
    const int8_t *X = Q8_IN_PTR(x, n, 0);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = e.kind == Q8_EPI_I8 ? 1 : 4;
    uint8_t *lanes = x->scratch;
    int32_t *col = (int32_t *)((uint8_t *)x->scratch + lanes_part(p, c));
    uint8_t *planes = (uint8_t *)x->scratch + lanes_part(p, c) + col_part(c);
    int64_t kp = q8_ig_kpad(p->Cg);
    for (int64_t img = 0; img < q->N; img++)
        for (int64_t grp = 0; grp < q->group; grp++) {
            q8_ig_pack_lanes_kj(X + (img * q->C + grp * p->Cg) * c->Pin, c->Pin, p->Cg, c->Pin,
                                true, lanes, x->pool);
            q8_igemm_args a = {
                .I = c->R, .J = c->Pin, .K = p->Cg,
                .rows = (const uint8_t *)pk + c->off_w + (size_t)(grp * c->R * kp),
                .lanes = lanes, .rows_u8 = false,
                .init_row = (const int32_t *)(pk + c->off_init) + grp * c->R,
                .epi = &raw, .out = col, .ldo = c->Pin};
            q8_igemm(&a, x->pool, c->path);
            col2im_args ca = {p, c, &e, col, (const int32_t *)(pk + c->off_bias), grp * p->Mg,
                              Y + (size_t)(img * q->M * c->P) * es, planes};
            int64_t grain = 1 + 16384 / (c->P * q->KH * q->KW + 1);
            q8_parallel_for(x->pool, p->Mg, grain, col2im_range, &ca);
        }
}

/* W and the bias are both copied into prep (W as the GEMM's rows). */
static bool qconvt_packed_input(const void *prep, int j) {
    (void)prep;
    return j == 1 || j == 2;
}

const q8_cpu_op q8_cpu_qconv_transpose = {.prepare = qconvt_prepare, .run = qconvt_run,
                                          .scratch = qconvt_scratch,
                                          .packed_input = qconvt_packed_input};
