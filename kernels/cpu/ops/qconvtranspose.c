/* q8.QConvTranspose: INT8 transposed convolution, 1-D or 2-D
 * (docs/int8-ops.md). W is output-channel major [M, C/group, *kernel].
 * Per (image, group): one INT8 GEMM gives, for every output channel and
 * kernel tap, the int32 sums over the group's input channels at every input
 * pixel (rows (m, kh, kw) x input pixels); col2im then adds the taps into
 * each output channel's plane (int32, exact) and the epilogue requantizes. */
#include <string.h>

#include "qconv_geom.h"
#include "qop_util.h"

typedef struct qconvt_params {
    q8_qconv_geom geo;
    int64_t Cg, Mg, R;          /* R = Mg * KH * KW GEMM rows per group */
    int64_t Pin, P;             /* input and output pixels per channel */
    q8_igemm_path path;
    q8_qepi epi;
    size_t off_w, off_init, off_bias; /* packed rows [M*KH*KW][Cg], their init, bias[M] */
} qconvt_params;

static q8_status qconvt_infer(q8_graph *g, q8_node *n, q8_error *err) {
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
    Q8_TRY(q8_qconv_geom_parse(g, n, 1, true, &geo, err));
    Q8_TRY(q8_qop_weight_scales(g, n, 1, geo.M, &sw, err));
    Q8_TRY(q8_qop_bias(g, n, 2, geo.M, &bias, err));
    Q8_TRY(q8_qop_act(n, &act, err));
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    Q8_TRY(q8_qop_path(n, &path, err));
    int64_t Cg = geo.C / geo.group, taps = geo.KH * geo.KW;
    Q8_TRY(q8_qop_check_k(n, Cg * taps, err));

    int64_t dims[4] = {geo.N, geo.M, geo.OH, geo.OW};
    if (geo.nsp == 1) dims[2] = geo.OW;
    Q8_TRY(q8_set_output(g, n, 0, i8 ? Q8_I8 : Q8_F32, dims, 2 + geo.nsp, err));
    if (i8) Q8_TRY(q8_qop_set_out_scale(g, n, sy, err));

    qconvt_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->geo = geo;
    p->Cg = Cg;
    p->Mg = geo.M / geo.group;
    p->R = p->Mg * taps;
    p->Pin = geo.H * geo.W;
    p->P = geo.OH * geo.OW;
    p->path = path;
    q8_qepi_init(&p->epi, &act, i8, sy, geo.M);

    int64_t rows = geo.M * taps;
    size_t off = 0;
    p->off_w = q8_qop_reserve(&off, q8_ig_rows_bytes(rows, Cg));
    p->off_init = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)rows);
    p->off_bias = q8_qop_reserve(&off, sizeof(int32_t) * (size_t)geo.M);
    q8_qepi_place(&p->epi, &off);
    char *pk = n->packed = q8_aligned_alloc(off + 64);
    int8_t *t = malloc((size_t)(rows * Cg) + 1);
    if (!pk || !t) {
        free(t);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    }
    n->packed_bytes = off;
    /* GEMM row (m, kh, kw) holds W[m][c][kh][kw] over c. */
    const int8_t *w = q8_in(g, n, 1)->data;
    for (int64_t m = 0; m < geo.M; m++)
        for (int64_t c = 0; c < Cg; c++)
            for (int64_t k = 0; k < taps; k++)
                t[(m * taps + k) * Cg + c] = w[(m * Cg + c) * taps + k];
    int32_t *init = (int32_t *)(pk + p->off_init);
    q8_ig_pack_rows(t, Cg, rows, Cg, false, (uint8_t *)pk + p->off_w, init, NULL);
    free(t);
    for (int64_t r = 0; r < rows; r++) init[r] = (int32_t)(0u - 128u * (uint32_t)init[r]);
    int32_t *b = (int32_t *)(pk + p->off_bias);
    for (int64_t m = 0; m < geo.M; m++) b[m] = bias ? bias[m] : 0;
    q8_qepi_fill(&p->epi, pk, sx, sw, 0, sy);
    return Q8_OK;
}

static size_t lanes_part(const qconvt_params *p) {
    return q8_align_up(q8_ig_lanes_bytes(p->Pin, p->Cg), 64);
}
static size_t col_part(const qconvt_params *p) {
    return q8_align_up(sizeof(int32_t) * (size_t)(p->R * p->Pin), 64);
}
static size_t plane_part(const qconvt_params *p) {
    return q8_align_up(sizeof(int32_t) * (size_t)p->P, 64);
}

static size_t qconvt_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                             int n_threads) {
    const qconvt_params *p = n->params;
    return lanes_part(p) + col_part(p) + (size_t)n_threads * plane_part(p);
}

typedef struct col2im_args {
    const qconvt_params *p;
    const q8_epilogue *e;
    const int32_t *col;     /* [R][Pin] */
    const int32_t *bias;
    int64_t m0;             /* the group's first output channel */
    char *y;                /* the image's output */
    uint8_t *planes;
} col2im_args;

static void col2im_range(void *arg, int64_t b, int64_t e, int t) {
    const col2im_args *a = arg;
    const qconvt_params *p = a->p;
    const q8_qconv_geom *q = &p->geo;
    /* Unsigned sums wrap instead of overflowing (the exact result fits). */
    uint32_t *acc = (uint32_t *)(a->planes + (size_t)t * plane_part(p));
    size_t es = a->e->kind == Q8_EPI_I8 ? 1 : 4;
    for (int64_t m = b; m < e; m++) {
        int64_t gm = a->m0 + m;
        for (int64_t i = 0; i < p->P; i++) acc[i] = (uint32_t)a->bias[gm];
        for (int64_t kh = 0; kh < q->KH; kh++)
            for (int64_t kw = 0; kw < q->KW; kw++) {
                const int32_t *c = a->col + ((m * q->KH + kh) * q->KW + kw) * p->Pin;
                int64_t off = kw * q->dw - q->pl, lo, hi;
                q8_qconv_valid_cols(off, q->sw, q->OW, q->W, &lo, &hi);
                for (int64_t ih = 0; ih < q->H; ih++) {
                    int64_t oh = ih * q->sh - q->pt + kh * q->dh;
                    if (oh < 0 || oh >= q->OH) continue;
                    uint32_t *d = acc + oh * q->OW; /* d[iw * sw + off] */
                    const int32_t *s = c + ih * q->W;
                    for (int64_t iw = lo; iw < hi; iw++) d[iw * q->sw + off] += (uint32_t)s[iw];
                }
            }
        q8_epilogue_row(p->path, a->e, (const int32_t *)acc, p->P, gm,
                        a->y + (size_t)(gm * p->P) * es);
    }
}

static void qconvt_run(const q8_exec *x, const q8_node *n) {
    const qconvt_params *p = n->params;
    const q8_qconv_geom *q = &p->geo;
    const char *pk = n->packed;
    q8_epilogue e, raw = {.kind = Q8_EPI_I32, .chan = Q8_CH_ROW};
    q8_qepi_view(&p->epi, pk, Q8_CH_ROW, &e);
    const int8_t *X = Q8_IN_PTR(x, n, 0);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = e.kind == Q8_EPI_I8 ? 1 : 4;
    uint8_t *lanes = x->scratch;
    int32_t *col = (int32_t *)((uint8_t *)x->scratch + lanes_part(p));
    uint8_t *planes = (uint8_t *)x->scratch + lanes_part(p) + col_part(p);
    int64_t kp = q8_ig_kpad(p->Cg);
    for (int64_t img = 0; img < q->N; img++)
        for (int64_t grp = 0; grp < q->group; grp++) {
            q8_ig_pack_lanes_kj(X + (img * q->C + grp * p->Cg) * p->Pin, p->Pin, p->Cg, p->Pin,
                                true, lanes, x->pool);
            q8_igemm_args a = {
                .I = p->R, .J = p->Pin, .K = p->Cg,
                .rows = (const uint8_t *)pk + p->off_w + (size_t)(grp * p->R * kp),
                .lanes = lanes, .rows_u8 = false,
                .init_row = (const int32_t *)(pk + p->off_init) + grp * p->R,
                .epi = &raw, .out = col, .ldo = p->Pin};
            q8_igemm(&a, x->pool, p->path);
            col2im_args c = {p, &e, col, (const int32_t *)(pk + p->off_bias), grp * p->Mg,
                             Y + (size_t)(img * q->M * p->P) * es, planes};
            int64_t grain = 1 + 16384 / (p->P * q->KH * q->KW + 1);
            q8_parallel_for(x->pool, p->Mg, grain, col2im_range, &c);
        }
}

const q8_op_schema q8_schema_qconv_transpose = {.infer = qconvt_infer};
const q8_cpu_op q8_cpu_qconv_transpose = {.run = qconvt_run, .scratch = qconvt_scratch};
