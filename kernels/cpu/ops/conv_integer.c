/* ConvInteger and QLinearConv (ONNX opset 10): 1-D/2-D convolution of int8
 * or uint8 data and constant weights with zero points (x: per tensor; w:
 * per tensor or per output channel). As in matmul_integer.c, the INT8 GEMM
 * runs on the values v = x - 128 (uint8) or x (int8), per (image, group)
 * on the im2col matrix (padded with x's zero point), and the zero points
 * are corrected exactly afterwards:
 *   sum (w - zw_m)(x - zx) = sum vw*vx - beta SW_m - alpha_m SX_p
 *                            + K alpha_m beta
 * (alpha_m = zw_m - 128 for uint8 w, beta likewise for x; SW/SX the sums
 * of the v values of weight row m / im2col column p). ConvInteger writes
 * the int32; QLinearConv adds its int32 bias and requantizes:
 * y = saturate(round_half_even(acc * (x_scale * w_scale[m] / y_scale)) + y_zp),
 * the multiplier in float as ONNX Runtime does. */
#include <string.h>

#include "qconv_geom.h"
#include "qop_util.h"

typedef struct qlc_params {
    bool qlinear, x_u8, w_u8, y_u8, direct;
    q8_qconv_geom geo;
    int64_t Cg, Mg, K, P;
    int32_t beta;               /* x's zero point - (128 for uint8) */
    uint8_t pad;                /* x's zero point as stored: the padding */
    float x_scale, y_scale;
    int32_t y_zp;
    q8_igemm_path path;
    /* packed: weight rows, init [M] (-128 * SW), SW [M], alpha [M], w_scale [M], bias [M] */
    size_t off_w, off_init, off_sw, off_alpha, off_ws, off_bias;
} qlc_params;

static int64_t max_dev(bool u8, int32_t zp) {
    int64_t lo = (u8 ? 0 : -128) - zp, hi = (u8 ? 255 : 127) - zp;
    return -lo > hi ? -lo : hi;
}

static q8_status qlc_infer_common(q8_graph *g, q8_node *n, bool qlinear, q8_error *err) {
    int iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
    Q8_TRY(qlinear ? q8_check_io(n, 8, 9, 1, 1, err) : q8_check_io(n, 2, 4, 1, 1, err));
    bool x_u8, w_u8;
    Q8_TRY(q8_ql_data(g, n, 0, "x", &x_u8, err));
    Q8_TRY(q8_ql_data(g, n, iw, "w", &w_u8, err));
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, iw);
    if (!w->data)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input %d ('%s') must be a constant", iw,
                            w->name);
    q8_qconv_geom geo;
    Q8_TRY(q8_qconv_geom_parse(g, n, iw, false, &geo, err));
    int64_t czx, czw, c1 = 1, cws = 1, cyz = 1;
    Q8_TRY(q8_ql_const(g, n, izx, "x_zero_point", x->dtype, 1, &czx, err));
    Q8_TRY(q8_ql_const(g, n, izw, "w_zero_point", w->dtype, geo.M, &czw, err));
    const q8_tensor *yz = qlinear ? q8_in(g, n, 7) : NULL;
    const int32_t *bias = NULL;
    if (qlinear) {
        if (!q8_in(g, n, 1) || !q8_in(g, n, 4) || !q8_in(g, n, 6) || !yz)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scales and y_zero_point are required");
        Q8_TRY(q8_ql_const(g, n, 1, "x_scale", Q8_F32, 1, &c1, err));
        Q8_TRY(q8_ql_const(g, n, 4, "w_scale", Q8_F32, geo.M, &cws, err));
        Q8_TRY(q8_ql_const(g, n, 6, "y_scale", Q8_F32, 1, &c1, err));
        if (yz->dtype != Q8_I8 && yz->dtype != Q8_U8)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "y_zero_point is %s, expected int8 "
                                "or uint8", q8_dtype_name(yz->dtype));
        Q8_TRY(q8_ql_const(g, n, 7, "y_zero_point", yz->dtype, 1, &cyz, err));
        Q8_TRY(q8_qop_bias(g, n, 8, geo.M, &bias, err));
    }
    int64_t Cg = geo.C / geo.group, K = Cg * geo.KH * geo.KW, mw = 0;
    for (int64_t c = 0; c < (czw ? czw : 1); c++) {
        int64_t dv = max_dev(w_u8, q8_ql_zp(g, n, izw, c));
        mw = dv > mw ? dv : mw;
    }
    Q8_TRY(q8_ql_check_k(n, K, max_dev(x_u8, q8_ql_zp(g, n, izx, 0)), mw, err));
    q8_igemm_path path;
    Q8_TRY(q8_qop_path(n, &path, err));

    int64_t dims[4] = {geo.N, geo.M, geo.OH, geo.OW};
    if (geo.nsp == 1) dims[2] = geo.OW;
    q8_dtype yt = qlinear ? yz->dtype : Q8_I32;
    Q8_TRY(q8_set_output(g, n, 0, yt, dims, 2 + geo.nsp, err));

    qlc_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    int32_t zx = q8_ql_zp(g, n, izx, 0);
    *p = (qlc_params){.qlinear = qlinear, .x_u8 = x_u8, .w_u8 = w_u8, .y_u8 = yt == Q8_U8,
                      .geo = geo, .Cg = Cg, .Mg = geo.M / geo.group, .K = K,
                      .P = geo.OH * geo.OW, .beta = zx - (x_u8 ? 128 : 0),
                      .pad = (uint8_t)zx, .path = path};
    p->direct = geo.KH == 1 && geo.KW == 1 && geo.sh == 1 && geo.sw == 1 && !geo.pt &&
                !geo.pl && !geo.pb && !geo.pr;
    if (qlinear) {
        p->x_scale = q8_ql_scale(g, n, 1, 0);
        p->y_scale = q8_ql_scale(g, n, 6, 0);
        p->y_zp = q8_ql_zp(g, n, 7, 0);
    }
    int64_t M = geo.M;
    size_t off = 0, b4 = sizeof(int32_t) * (size_t)M;
    p->off_w = q8_qop_reserve(&off, q8_ig_rows_bytes(M, K));
    p->off_init = q8_qop_reserve(&off, b4);
    p->off_sw = q8_qop_reserve(&off, b4);
    p->off_alpha = q8_qop_reserve(&off, b4);
    p->off_ws = q8_qop_reserve(&off, b4);
    p->off_bias = q8_qop_reserve(&off, b4);
    char *pk = n->packed = q8_aligned_alloc(off + 64);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    n->packed_bytes = off;
    int32_t *init = (int32_t *)(pk + p->off_init), *sw = (int32_t *)(pk + p->off_sw);
    q8_ig_pack_rows_ex(w->data, K, M, K, false, w_u8, (uint8_t *)pk + p->off_w, sw, NULL);
    for (int64_t m = 0; m < M; m++) {
        init[m] = (int32_t)(0u - 128u * (uint32_t)sw[m]); /* the im2col side is unsigned */
        ((int32_t *)(pk + p->off_alpha))[m] = q8_ql_zp(g, n, izw, m) - (w_u8 ? 128 : 0);
        ((float *)(pk + p->off_ws))[m] = qlinear ? q8_ql_scale(g, n, 4, m) : 0;
        ((int32_t *)(pk + p->off_bias))[m] = bias ? bias[m] : 0;
    }
    return Q8_OK;
}

static q8_status convinteger_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return qlc_infer_common(g, n, false, err);
}
static q8_status qlinearconv_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return qlc_infer_common(g, n, true, err);
}

/* Scratch: lanes, col [K][P] (unless direct), SX [P], acc [Mg][P]. */
static size_t part(size_t b) { return q8_align_up(b, 64); }

static size_t qlc_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                          int n_threads) {
    const qlc_params *p = n->params;
    return part(q8_ig_lanes_bytes(p->P, p->K)) + (p->direct ? 0 : part((size_t)(p->K * p->P))) +
           part(sizeof(int32_t) * (size_t)p->P) + sizeof(int32_t) * (size_t)(p->Mg * p->P);
}

typedef struct fix_args {
    const qlc_params *p;
    const char *pk;
    const int32_t *acc, *sx;
    int64_t m0;             /* the group's first output channel */
    void *y;                /* the image's output */
} fix_args;

/* The zero-point correction, bias and output of output channels [b, e) of
 * the group. */
static void fix_range(void *arg, int64_t b, int64_t e, int t) {
    const fix_args *a = arg;
    const qlc_params *p = a->p;
    int32_t lo = p->y_u8 ? 0 : -128, hi = p->y_u8 ? 255 : 127;
    uint32_t be = (uint32_t)p->beta;
    for (int64_t ml = b; ml < e; ml++) {
        int64_t m = a->m0 + ml;
        uint32_t al = (uint32_t)((const int32_t *)(a->pk + p->off_alpha))[m];
        uint32_t swm = (uint32_t)((const int32_t *)(a->pk + p->off_sw))[m];
        uint32_t c0 = (uint32_t)((const int32_t *)(a->pk + p->off_bias))[m] - be * swm +
                      (uint32_t)p->K * al * be;
        float mult = p->x_scale * ((const float *)(a->pk + p->off_ws))[m] / p->y_scale;
        const int32_t *acc = a->acc + ml * p->P;
        for (int64_t i = 0; i < p->P; i++) {
            int32_t v = (int32_t)((uint32_t)acc[i] + c0 - al * (uint32_t)a->sx[i]);
            if (!p->qlinear) {
                ((int32_t *)a->y)[m * p->P + i] = v;
                continue;
            }
            int32_t q = q8_round_sat((float)v * mult, p->y_zp, lo, hi);
            if (p->y_u8) ((uint8_t *)a->y)[m * p->P + i] = (uint8_t)q;
            else ((int8_t *)a->y)[m * p->P + i] = (int8_t)q;
        }
    }
}

static void qlc_run(const q8_exec *x, const q8_node *n) {
    const qlc_params *p = n->params;
    const q8_qconv_geom *q = &p->geo;
    const char *pk = n->packed;
    const uint8_t *X = Q8_IN_PTR(x, n, 0);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = p->qlinear ? 1 : 4;
    uint8_t *lanes = x->scratch;
    uint8_t *col = lanes + part(q8_ig_lanes_bytes(p->P, p->K));
    int32_t *sx = (int32_t *)(col + (p->direct ? 0 : part((size_t)(p->K * p->P))));
    int32_t *acc = (int32_t *)((char *)sx + part(sizeof(int32_t) * (size_t)p->P));
    q8_epilogue raw = {.kind = Q8_EPI_I32, .chan = Q8_CH_ROW};
    int64_t kp = q8_ig_kpad(p->K);
    for (int64_t img = 0; img < q->N; img++)
        for (int64_t grp = 0; grp < q->group; grp++) {
            const uint8_t *src = X + (img * q->C + grp * p->Cg) * q->H * q->W;
            if (!p->direct) {
                q8_qconv_im2col(q, src, p->pad, col, x->pool);
                src = col;
            }
            for (int64_t i = 0; i < p->P; i++) sx[i] = 0;
            for (int64_t k = 0; k < p->K; k++)
                for (int64_t i = 0; i < p->P; i++)
                    sx[i] += p->x_u8 ? (int32_t)src[k * p->P + i] - 128 : (int8_t)src[k * p->P + i];
            q8_ig_pack_lanes_kj_ex(src, p->P, p->K, p->P, true, p->x_u8, lanes, x->pool);
            q8_igemm_args a = {
                .I = p->Mg, .J = p->P, .K = p->K,
                .rows = (const uint8_t *)pk + p->off_w + (size_t)(grp * p->Mg * kp),
                .lanes = lanes, .rows_u8 = false,
                .init_row = (const int32_t *)(pk + p->off_init) + grp * p->Mg, .epi = &raw,
                .out = acc, .ldo = p->P};
            q8_igemm(&a, x->pool, p->path);
            fix_args fa = {p, pk, acc, sx, grp * p->Mg, Y + (size_t)(img * q->M * p->P) * es};
            q8_parallel_for(x->pool, p->Mg, 1 + 4096 / (p->P + 1), fix_range, &fa);
        }
}

const q8_op_schema q8_schema_conv_integer = {.infer = convinteger_infer};
const q8_cpu_op q8_cpu_conv_integer = {.run = qlc_run, .scratch = qlc_scratch};

const q8_op_schema q8_schema_qlinear_conv = {.infer = qlinearconv_infer};
const q8_cpu_op q8_cpu_qlinear_conv = {.run = qlc_run, .scratch = qlc_scratch};
