/* ConvTranspose (1-D, 2-D, 3-D; groups, strides, pads, dilations,
 * output_padding, output_shape, auto_pad, optional bias, fused activation).
 * Per image: one GEMM per group into a column buffer
 *   col[mg*kprod, in_sp] = W_g^T * X_g      (W_g is [cg, mg*kprod])
 * then col2im scatters the columns into Y, one output channel per work item
 * in a fixed order (deterministic for any thread count). */
#include <string.h>

#include "conv_util.h"
#include "fused_act.h"
#include "cpu_op.h"
#include "sgemm.h"

typedef struct convt_params {
    int64_t nb, c, m, g, cg, mg;
    q8_conv_geom geo;
    int64_t in_sp, out_sp, kprod, rows;   /* rows = mg*kprod */
    bool has_bias;
    q8_act act;
    int64_t offs[];                       /* 4 per group: a, b, c, bias */
} convt_params;

static int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

static q8_status convt_infer(q8_graph *g, q8_node *n, q8_error *err) {
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
    int64_t grp = q8_attr_int(n, "group", 1), c = x->dims[1];
    if (grp < 1 || grp > c || c % grp != 0)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "group %lld does not divide the %lld input channels", (long long)grp,
                            (long long)c);
    if (w->dims[0] != c)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "weight has %lld input channels (dim 0), the input has %lld",
                            (long long)w->dims[0], (long long)c);
    if (w->dims[1] < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "weight has no output channels");
    int64_t m = w->dims[1] * grp;
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
    int cnt;
    int64_t opad[3] = {0, 0, 0};
    const int64_t *op = q8_attr_ints(n, "output_padding", &cnt);
    if (op) {
        if (cnt != nsp)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "output_padding has %d values, expected %d",
                                cnt, nsp);
        q8_conv_widen(nsp, op, 0, opad);
        for (int i = 0; i < 3; i++)
            if (opad[i] < 0 || (opad[i] >= geo.s[i] && opad[i] >= geo.d[i]))
                return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                    "output_padding %lld must be >= 0 and below the stride or "
                                    "dilation", (long long)opad[i]);
    }
    const int64_t *os = q8_attr_ints(n, "output_shape", &cnt);
    if (os && cnt != nsp && cnt != nsp + 2)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "output_shape has %d values, expected %d",
                            cnt, nsp);
    for (int i = 0; i < 3; i++) {
        int64_t ext = (geo.k[i] - 1) * geo.d[i] + 1;
        int64_t full = geo.s[i] * (geo.in[i] - 1) + opad[i] + ext;
        int64_t want = -1;
        if (os) want = i < 3 - nsp ? 1 : os[cnt - nsp + i - (3 - nsp)];
        else if (ap == Q8_PAD_SAME_UPPER || ap == Q8_PAD_SAME_LOWER) want = geo.in[i] * geo.s[i];
        if (want >= 0 && i >= 3 - nsp) {
            int64_t total = full - want;
            if (ap == Q8_PAD_SAME_UPPER) geo.pb[i] = floor_div2(total);
            else geo.pb[i] = total - floor_div2(total);
            geo.pe[i] = total - geo.pb[i];
        } else if (ap == Q8_PAD_VALID) {
            geo.pb[i] = geo.pe[i] = 0;
        }
        geo.out[i] = full - geo.pb[i] - geo.pe[i];
        if (geo.out[i] < 0 || (want >= 0 && i >= 3 - nsp && geo.out[i] != want))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "output spatial dim %d would be %lld",
                                i - (3 - nsp), (long long)geo.out[i]);
    }
    int64_t out[5] = {x->dims[0], m};
    for (int i = 0; i < nsp; i++) out[2 + i] = geo.out[3 - nsp + i];
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, out, x->ndim, err));

    convt_params *p = q8_node_params(n, sizeof *p + sizeof(int64_t) * 4 * (size_t)grp, err);
    if (!p) return Q8_ERR_NOMEM;
    p->nb = x->dims[0];
    p->c = c;
    p->m = m;
    p->g = grp;
    p->cg = c / grp;
    p->mg = m / grp;
    p->geo = geo;
    p->in_sp = geo.in[0] * geo.in[1] * geo.in[2];
    p->out_sp = geo.out[0] * geo.out[1] * geo.out[2];
    p->kprod = geo.k[0] * geo.k[1] * geo.k[2];
    p->rows = p->mg * p->kprod;
    p->has_bias = b != NULL;
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    for (int64_t i = 0; i < grp; i++) {
        p->offs[4 * i] = i * p->cg * p->rows;
        p->offs[4 * i + 1] = i * p->cg * p->in_sp;
        p->offs[4 * i + 2] = i * p->rows * p->in_sp;
        p->offs[4 * i + 3] = 0;
    }
    size_t pa = q8_sgemm_packed_a_bytes(p->rows, p->cg, grp, 0);
    if (w->data && !x->data && pa && p->in_sp > 1) {
        n->packed = q8_aligned_alloc(pa);
        if (!n->packed)
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing ConvTranspose weights");
        n->packed_bytes = pa;
        q8_sgemm_pack_a(n->packed, true, p->rows, p->cg, w->data, p->rows, grp,
                        p->cg * p->rows, 0);
    }
    return Q8_OK;
}

static q8_sgemm_op convt_op(const convt_params *p, const q8_node *n, const float *w,
                            const float *x, float *col) {
    return (q8_sgemm_op){.m = p->rows, .n = p->in_sp, .k = p->cg, .trans_a = true, .alpha = 1,
                         .a = w, .lda = p->rows, .b = x, .ldb = p->in_sp, .c = col,
                         .ldc = p->in_sp, .a_packed = n->packed, .batch = p->g, .offs = p->offs};
}

static size_t col_bytes(const convt_params *p) {
    return q8_align_up(sizeof(float) * (size_t)(p->m * p->kprod * p->in_sp), 64);
}

static size_t convt_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                            int n_threads) {
    const convt_params *p = n->params;
    q8_sgemm_op op = convt_op(p, n, NULL, NULL, NULL);
    return col_bytes(p) + q8_sgemm_scratch_bytes(&op, n_threads);
}

typedef struct col2im_args {
    const convt_params *p;
    const float *col, *bias;
    float *y;               /* this image's output */
} col2im_args;

/* Output channels [begin, end): bias, then every kernel tap in order. */
static void col2im_range(void *arg, int64_t begin, int64_t end, int thread) {
    const col2im_args *a = arg;
    const convt_params *p = a->p;
    const q8_conv_geom *G = &p->geo;
    for (int64_t oc = begin; oc < end; oc++) {
        float *y = a->y + oc * p->out_sp;
        float bv = a->bias ? a->bias[oc] : 0.0f;
        for (int64_t i = 0; i < p->out_sp; i++) y[i] = bv;
        const float *col = a->col + oc * p->kprod * p->in_sp;
        for (int64_t kd = 0; kd < G->k[0]; kd++)
            for (int64_t kh = 0; kh < G->k[1]; kh++)
                for (int64_t kw = 0; kw < G->k[2]; kw++, col += p->in_sp) {
                    int64_t offw = kw * G->d[2] - G->pb[2];
                    /* iw with 0 <= iw*sw + offw < OW */
                    int64_t sw = G->s[2], OW = G->out[2];
                    int64_t lo = offw >= 0 ? 0 : (-offw + sw - 1) / sw;
                    int64_t hi = OW - offw <= 0 ? 0 : (OW - offw - 1) / sw + 1;
                    if (hi > G->in[2]) hi = G->in[2];
                    for (int64_t id = 0; id < G->in[0]; id++) {
                        int64_t od = id * G->s[0] - G->pb[0] + kd * G->d[0];
                        if (od < 0 || od >= G->out[0]) continue;
                        for (int64_t ih = 0; ih < G->in[1]; ih++) {
                            int64_t oh = ih * G->s[1] - G->pb[1] + kh * G->d[1];
                            if (oh < 0 || oh >= G->out[1]) continue;
                            const float *restrict cr = col + (id * G->in[1] + ih) * G->in[2];
                            float *restrict yr = y + (od * G->out[1] + oh) * OW;
                            if (sw == 1)
                                for (int64_t iw = lo; iw < hi; iw++) yr[iw + offw] += cr[iw];
                            else
                                for (int64_t iw = lo; iw < hi; iw++) yr[iw * sw + offw] += cr[iw];
                        }
                    }
                }
        q8_act_apply(&p->act, y, p->out_sp);
    }
}

static void convt_run(const q8_exec *x, const q8_node *n) {
    const convt_params *p = n->params;
    const float *X = Q8_IN_PTR(x, n, 0), *W = Q8_IN_PTR(x, n, 1);
    const float *bias = p->has_bias ? Q8_IN_PTR(x, n, 2) : NULL;
    float *Y = Q8_OUT_PTR(x, n, 0);
    if (p->out_sp == 0) return;
    float *col = x->scratch;
    void *gemm_scratch = (char *)x->scratch + col_bytes(p);
    int64_t work = p->kprod * p->in_sp + p->out_sp; /* per channel */
    int64_t grain = work >= 16384 ? 1 : 16384 / work;
    for (int64_t img = 0; img < p->nb; img++) {
        q8_sgemm_op op = convt_op(p, n, W, X + img * p->c * p->in_sp, col);
        q8_sgemm_run(&op, x->pool, gemm_scratch);
        col2im_args a = {.p = p, .col = col, .bias = bias, .y = Y + img * p->m * p->out_sp};
        q8_parallel_for(x->pool, p->m, grain, col2im_range, &a);
    }
}

const q8_op_schema q8_schema_conv_transpose = {.infer = convt_infer};
const q8_cpu_op q8_cpu_conv_transpose = {.run = convt_run, .scratch = convt_scratch};
