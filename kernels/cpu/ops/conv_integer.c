/* ConvInteger and QLinearConv on the CPU (params:
 * src/core/ops/conv_integer.h). As in matmul_integer.c, the INT8 GEMM runs
 * on the values v = x - 128 (uint8) or x (int8), per (image, group) on the
 * im2col matrix (padded with x's zero point), and the zero points are
 * corrected exactly afterwards:
 *   sum (w - zw_m)(x - zx) = sum vw*vx - beta SW_m - alpha_m SX_p
 *                            + K alpha_m beta
 * (alpha_m = zw_m - 128 for uint8 w, beta likewise for x; SW/SX the sums
 * of the v values of weight row m / im2col column p). ConvInteger writes
 * the int32; QLinearConv adds its int32 bias and requantizes. A ConvInteger
 * whose x zero point is computed at run time (dynamic quantization) reads it
 * each run: the padding and beta. */
#include <string.h>

#include "cpu_op.h"
#include "ops/conv_integer.h"
#include "qconv_im2col.h"
#include "qepi.h"
#include "qop_util.h"

/* At the start of the prepared blob; the offsets are into the blob. */
typedef struct qlc_prep {
    bool direct;                /* 1x1, stride 1, no pads: x is the GEMM operand */
    q8_igemm_path path;
    /* weight rows, init [M] (-128 * SW), SW [M], alpha [M], w_scale [M], bias [M] */
    size_t off_w, off_init, off_sw, off_alpha, off_ws, off_bias;
} qlc_prep;

static q8_status qlc_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                             void **prep, size_t *bytes, q8_error *err) {
    const q8_conv_integer_params *p = n->params;
    const q8_qconv_geom *geo = &p->geo;
    qlc_prep c = {0};
    Q8_TRY(q8_qop_path(n, &c.path, err));
    c.direct = geo->KH == 1 && geo->KW == 1 && geo->sh == 1 && geo->sw == 1 && !geo->pt &&
               !geo->pl && !geo->pb && !geo->pr;
    int64_t M = geo->M, K = p->K;
    size_t off = sizeof c, b4 = sizeof(int32_t) * (size_t)M;
    c.off_w = q8_qop_reserve(&off, q8_ig_rows_bytes(M, K));
    c.off_init = q8_qop_reserve(&off, b4);
    c.off_sw = q8_qop_reserve(&off, b4);
    c.off_alpha = q8_qop_reserve(&off, b4);
    c.off_ws = q8_qop_reserve(&off, b4);
    c.off_bias = q8_qop_reserve(&off, b4);
    char *pk = q8_aligned_alloc(off + 64);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory packing the weights");
    const int32_t *bias = p->has_bias ? q8_in(g, n, 8)->data : NULL;
    int32_t *init = (int32_t *)(pk + c.off_init), *sw = (int32_t *)(pk + c.off_sw);
    q8_ig_pack_rows_ex(q8_in(g, n, p->iw)->data, K, M, K, false, p->w_u8,
                       (uint8_t *)pk + c.off_w, sw, NULL);
    for (int64_t m = 0; m < M; m++) {
        init[m] = (int32_t)(0u - 128u * (uint32_t)sw[m]); /* the im2col side is unsigned */
        ((int32_t *)(pk + c.off_alpha))[m] = q8_ql_zp(g, n, p->izw, m) - (p->w_u8 ? 128 : 0);
        ((float *)(pk + c.off_ws))[m] = p->qlinear ? q8_ql_scale(g, n, 4, m) : 0;
        ((int32_t *)(pk + c.off_bias))[m] = bias ? bias[m] : 0;
    }
    memcpy(pk, &c, sizeof c);
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

/* Scratch: lanes, col [K][P] (unless direct), SX [P], acc [Mg][P]. */
static size_t part(size_t b) { return q8_align_up(b, 64); }

static size_t qlc_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                          int n_threads) {
    const q8_conv_integer_params *p = n->params;
    const qlc_prep *c = prep;
    return part(q8_ig_lanes_bytes(p->P, p->K)) + (c->direct ? 0 : part((size_t)(p->K * p->P))) +
           part(sizeof(int32_t) * (size_t)p->P) + sizeof(int32_t) * (size_t)(p->Mg * p->P);
}

typedef struct fix_args {
    const q8_conv_integer_params *p;
    const qlc_prep *c;
    const char *pk;
    const int32_t *acc, *sx;
    int32_t beta;           /* x's zero point - (128 for uint8), this run's */
    int64_t m0;             /* the group's first output channel */
    void *y;                /* the image's output */
} fix_args;

/* The zero-point correction, bias and output of output channels [b, e) of
 * the group. */
static void fix_range(void *arg, int64_t b, int64_t e, int t) {
    const fix_args *a = arg;
    const q8_conv_integer_params *p = a->p;
    int32_t lo = p->y_u8 ? 0 : -128, hi = p->y_u8 ? 255 : 127;
    uint32_t be = (uint32_t)a->beta;
    for (int64_t ml = b; ml < e; ml++) {
        int64_t m = a->m0 + ml;
        uint32_t al = (uint32_t)((const int32_t *)(a->pk + a->c->off_alpha))[m];
        uint32_t swm = (uint32_t)((const int32_t *)(a->pk + a->c->off_sw))[m];
        uint32_t c0 = (uint32_t)((const int32_t *)(a->pk + a->c->off_bias))[m] - be * swm +
                      (uint32_t)p->K * al * be;
        float mult = p->x_scale * ((const float *)(a->pk + a->c->off_ws))[m] / p->y_scale;
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
    const q8_conv_integer_params *p = n->params;
    const qlc_prep *c = x->prep;
    const q8_qconv_geom *q = &p->geo;
    const char *pk = x->prep;
    const uint8_t *X = Q8_IN_PTR(x, n, 0);
    char *Y = Q8_OUT_PTR(x, n, 0);
    size_t es = p->qlinear ? 1 : 4;
    uint8_t *lanes = x->scratch;
    uint8_t *col = lanes + part(q8_ig_lanes_bytes(p->P, p->K));
    int32_t *sx = (int32_t *)(col + (c->direct ? 0 : part((size_t)(p->K * p->P))));
    int32_t *acc = (int32_t *)((char *)sx + part(sizeof(int32_t) * (size_t)p->P));
    q8_epilogue raw = {.kind = Q8_EPI_I32, .chan = Q8_CH_ROW};
    int64_t kp = q8_ig_kpad(p->K);
    uint8_t pad = p->pad;
    int32_t beta = p->beta;
    if (p->zx_runtime) {
        pad = *(const uint8_t *)Q8_IN_PTR(x, n, 2);
        beta = q8_ql_zp_byte(pad, p->x_u8) - (p->x_u8 ? 128 : 0);
    }
    for (int64_t img = 0; img < q->N; img++)
        for (int64_t grp = 0; grp < q->group; grp++) {
            const uint8_t *src = X + (img * q->C + grp * p->Cg) * q->H * q->W;
            if (!c->direct) {
                q8_qconv_im2col(q, src, pad, col, x->pool);
                src = col;
            }
            for (int64_t i = 0; i < p->P; i++) sx[i] = 0;
            for (int64_t k = 0; k < p->K; k++)
                for (int64_t i = 0; i < p->P; i++)
                    sx[i] += p->x_u8 ? (int32_t)src[k * p->P + i] - 128 : (int8_t)src[k * p->P + i];
            q8_ig_pack_lanes_kj_ex(src, p->P, p->K, p->P, true, p->x_u8, lanes, x->pool);
            q8_igemm_args a = {
                .I = p->Mg, .J = p->P, .K = p->K,
                .rows = (const uint8_t *)pk + c->off_w + (size_t)(grp * p->Mg * kp),
                .lanes = lanes, .rows_u8 = false,
                .init_row = (const int32_t *)(pk + c->off_init) + grp * p->Mg, .epi = &raw,
                .out = acc, .ldo = p->P};
            q8_igemm(&a, x->pool, c->path);
            fix_args fa = {p, c, pk, acc, sx, beta, grp * p->Mg,
                           Y + (size_t)(img * q->M * p->P) * es};
            q8_parallel_for(x->pool, p->Mg, 1 + 4096 / (p->P + 1), fix_range, &fa);
        }
}

const q8_cpu_op q8_cpu_conv_integer = {.prepare = qlc_prepare, .run = qlc_run,
                                       .scratch = qlc_scratch};

const q8_cpu_op q8_cpu_qlinear_conv = {.prepare = qlc_prepare, .run = qlc_run,
                                       .scratch = qlc_scratch};
