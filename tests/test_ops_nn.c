/* Tests of the nn ops: BatchNormalization, pooling, Softmax/LogSoftmax,
 * LayerNormalization, Reduce*, ArgMax/ArgMin, Resize/Upsample. Each op
 * is compared with a plain reference written here (simple loops, computed in
 * double) on seeded random data and awkward shapes, run with 1 and 3
 * threads (which must agree bit for bit), and checked for clear errors. */
#include <string.h>

#include "exp_neg.h"
#include "testutil.h"

/* ---------------------------------------------------------------- helpers */

/* Run the graph built by b with 1 and 3 threads; outputs must match bit for
 * bit. The 1-thread outputs go to outs (free them). */
static void run2(q8t_built b, const void *const *data, int n_out, void **outs,
                 q8_tensor_info *infos) {
    q8_error err = {0};
    q8_status st = q8t_run(b.fn(b.ctx), data, 1, outs, infos, n_out, &err);
    cr_assert_eq(st, Q8_OK, "run failed: %s", err.msg);
    void *o3[4];
    q8_tensor_info i3[4];
    st = q8t_run(b.fn(b.ctx), data, 3, o3, i3, n_out, &err);
    cr_assert_eq(st, Q8_OK, "run (3 threads) failed: %s", err.msg);
    for (int k = 0; k < n_out; k++) {
        cr_assert_eq(infos[k].ndim, i3[k].ndim);
        cr_assert(memcmp(o3[k], outs[k], q8t_info_bytes(&infos[k])) == 0,
                  "output %d differs between 1 and 3 threads", k);
        free(o3[k]);
    }
}

/* The status and message of a failing graph. */
static q8_status run_err(q8_graph *g, const void *const *data, q8_error *err) {
    void *outs[4] = {NULL};
    q8_tensor_info infos[4];
    memset(err, 0, sizeof *err);
    q8_status st = q8t_run(g, data, 1, outs, infos, 4, err);
    for (int k = 0; k < 4; k++) free(outs[k]);
    return st;
}

#define EXPECT_ERR(g, data, substr)                                                       \
    do {                                                                                  \
        q8_error e_;                                                                      \
        q8_status s_ = run_err((g), (data), &e_);                                         \
        cr_assert_neq(s_, Q8_OK, "expected an error containing '%s'", (substr));          \
        cr_assert(strstr(e_.msg, (substr)), "message '%s' lacks '%s'", e_.msg, (substr)); \
    } while (0)

static float *rand_buf(uint64_t seed, int64_t n, float lo, float hi) {
    float *x = malloc(sizeof(float) * (size_t)(n ? n : 1));
    q8t_rng r = q8t_seed(seed);
    q8t_fill(&r, x, n, lo, hi);
    return x;
}

/* A graph X -> Relu -> op(mid, consts...) -> y: the op's input dies at the
 * op, so the planner may run it in place. */
static q8_graph *after_relu(const char *op, const q8t_in *x, const q8t_in *consts, int nc) {
    q8_graph *g = q8t_graph1("Relu", x, 1, 1);
    int in_idx[8] = {g->outputs[0]};
    for (int i = 0; i < nc; i++) {
        int t = q8_graph_add_tensor(g, consts[i].name, NULL);
        q8_tensor_set_shape(g->tensors[t], consts[i].dtype, consts[i].dims, consts[i].ndim);
        cr_assert(q8_tensor_alloc_data(g->tensors[t], NULL) == Q8_OK);
        memcpy(g->tensors[t]->data, consts[i].data, q8_tensor_nbytes(g->tensors[t]));
        in_idx[1 + i] = t;
    }
    int y = q8_graph_add_tensor(g, "y", NULL);
    int ni = q8_graph_add_node(g, "node2", op);
    cr_assert(q8_node_set_io(g->nodes[ni], in_idx, 1 + nc, &y, 1, NULL) == Q8_OK);
    g->outputs[0] = y;
    return g;
}

static void relu_buf(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0;
}

/* A Relu fused into the Conv before it gives what the Relu op gives: a NaN
 * input stays NaN in every output whose window reads it (it gave 0; ONNX
 * Runtime keeps NaN, the survey's fr_eye), and -0 stays -0. */
Test(relu, fused_into_conv_keeps_nan) {
    int64_t H = 6, W = 7;
    float x[6 * 7], w[9], b[1] = {0};
    for (int i = 0; i < 42; i++) x[i] = 0.1f * (float)(i % 5) - 0.2f;
    for (int i = 0; i < 9; i++) w[i] = 0.1f * (float)(i + 1);
    x[2 * W + 3] = NAN;
    q8t_in xin = {"x", Q8_F32, 4, {1, 1, H, W}, NULL};
    q8t_in cs[2] = {{"w", Q8_F32, 4, {1, 1, 3, 3}, w}, {"b", Q8_F32, 1, {1}, b}};
    /* Conv -> Relu, built as after_relu builds Relu -> op */
    q8_graph *g = q8t_graph1("Conv", (q8t_in[]){xin, cs[0], cs[1]}, 3, 1);
    q8t_attr_ints(g, "pads", (int64_t[]){1, 1, 1, 1}, 4);
    int y = q8_graph_add_tensor(g, "y", NULL), in = g->outputs[0];
    int ni = q8_graph_add_node(g, "relu", "Relu");
    cr_assert(q8_node_set_io(g->nodes[ni], &in, 1, &y, 1, NULL) == Q8_OK);
    g->outputs[0] = y;
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(g, data, 1, out, info, 1, &err), Q8_OK, "%s", err.msg);
    const float *o = out[0];
    for (int64_t i = 0; i < H; i++)
        for (int64_t j = 0; j < W; j++) {
            bool reads = i >= 1 && i <= 3 && j >= 2 && j <= 4;
            cr_assert_eq(isnan(o[i * W + j]) != 0, reads, "output (%lld, %lld) = %g",
                         (long long)i, (long long)j, o[i * W + j]);
            cr_assert(reads || o[i * W + j] >= 0);
        }
    free(out[0]);
}

/* ------------------------------------------------------ BatchNormalization */

typedef struct bn_case {
    int nd;
    int64_t dims[6];
    int opset, spatial; /* spatial: -1 = attribute absent */
    float eps;
    const float *p[4]; /* scale, B, mean, var */
    int64_t plen;
} bn_case;

static q8_graph *bn_build(const void *ctx) {
    const bn_case *c = ctx;
    q8t_in ins[5] = {{"x", Q8_F32, c->nd, {0}, NULL}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    static const char *const nm[] = {"scale", "B", "mean", "var"};
    for (int i = 0; i < 4; i++) ins[1 + i] = (q8t_in){nm[i], Q8_F32, 1, {c->plen}, c->p[i]};
    q8_graph *g = q8t_graph1("BatchNormalization", ins, 5, 1);
    g->opset = c->opset;
    q8t_attr_float(g, "epsilon", c->eps);
    if (c->spatial >= 0) q8t_attr_int(g, "spatial", c->spatial);
    return g;
}

static void bn_check(bn_case c, uint64_t seed) {
    int64_t n = q8t_numel(c.dims, c.nd), C = c.dims[1], S = n / (c.dims[0] * C);
    c.plen = c.spatial == 0 ? C * S : C;
    float *x = rand_buf(seed, n, -3, 3);
    float *pr[4];
    for (int i = 0; i < 4; i++)
        pr[i] = rand_buf(seed + 1 + (uint64_t)i, c.plen, i == 3 ? 0.1f : -2, 2);
    for (int i = 0; i < 4; i++) c.p[i] = pr[i];
    float *want = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = (i / S) % C, k = c.spatial == 0 ? ch * S + i % S : ch;
        want[i] = (float)((x[i] - (double)pr[2][k]) / sqrt((double)pr[3][k] + c.eps) * pr[0][k] +
                          pr[1][k]);
    }
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    run2((q8t_built){bn_build, &c}, data, 1, out, info);
    q8t_assert_shape(&info[0], c.dims, c.nd);
    q8t_assert_close(out[0], want, n, 1e-5f, 1e-5f, "batchnorm");
    free(out[0]);
    free(x);
    free(want);
    for (int i = 0; i < 4; i++) free(pr[i]);
}

Test(batchnorm, matches_reference) {
    bn_check((bn_case){.nd = 4, .dims = {2, 13, 9, 7}, .opset = 15, .spatial = -1, .eps = 1e-5f},
             1);
    bn_check((bn_case){.nd = 2, .dims = {5, 13}, .opset = 15, .spatial = -1, .eps = 1e-3f}, 2);
    bn_check((bn_case){.nd = 3, .dims = {3, 4, 1}, .opset = 9, .spatial = -1, .eps = 0.01f}, 3);
    bn_check((bn_case){.nd = 5, .dims = {1, 3, 2, 3, 4}, .opset = 14, .spatial = -1, .eps = 1e-5f},
             4);
    bn_check((bn_case){.nd = 4, .dims = {2, 3, 4, 5}, .opset = 7, .spatial = 1, .eps = 1e-5f}, 5);
    bn_check((bn_case){.nd = 4, .dims = {2, 3, 4, 5}, .opset = 8, .spatial = 0, .eps = 1e-5f},
             6); /* per-activation statistics */
}

Test(batchnorm, in_place_after_relu) {
    int64_t C = 13, n = 2 * C * 9 * 7;
    float *x = rand_buf(7, n, -2, 2), *p[4];
    for (int i = 0; i < 4; i++) p[i] = rand_buf(8 + (uint64_t)i, C, i == 3 ? 0.5f : -1, 1);
    q8t_in xin = {"x", Q8_F32, 4, {2, C, 9, 7}, NULL};
    q8t_in cs[4] = {{"s", Q8_F32, 1, {C}, p[0]},
                    {"b", Q8_F32, 1, {C}, p[1]},
                    {"m", Q8_F32, 1, {C}, p[2]},
                    {"v", Q8_F32, 1, {C}, p[3]}};
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(
        q8t_run(after_relu("BatchNormalization", &xin, cs, 4), data, 3, out, info, 1, &err), Q8_OK,
        "%s", err.msg);
    float *want = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = (i / 63) % C;
        float r = x[i] > 0 ? x[i] : 0;
        want[i] = (float)((r - (double)p[2][c]) / sqrt((double)p[3][c] + 1e-5) * p[0][c] + p[1][c]);
    }
    q8t_assert_close(out[0], want, n, 1e-5f, 1e-5f, "bn after relu");
    free(out[0]);
    free(want);
    free(x);
    for (int i = 0; i < 4; i++) free(p[i]);
}

Test(batchnorm, errors) {
    float p[4] = {1, 1, 1, 1};
    q8t_in ins[5] = {{"x", Q8_F32, 4, {1, 4, 2, 2}, NULL},
                     {"s", Q8_F32, 1, {4}, p},
                     {"b", Q8_F32, 1, {4}, p},
                     {"m", Q8_F32, 1, {4}, p},
                     {"v", Q8_F32, 1, {3}, p}};
    float x[16] = {0};
    const void *data[] = {x};
    EXPECT_ERR(q8t_graph1("BatchNormalization", ins, 5, 1), data, "var has shape 3");
    ins[4].dims[0] = 4;
    q8_graph *g = q8t_graph1("BatchNormalization", ins, 5, 1);
    q8t_attr_int(g, "training_mode", 1);
    EXPECT_ERR(g, data, "training mode is not supported");
    EXPECT_ERR(q8t_graph1("BatchNormalization", ins, 5, 3), data, "training output");
    ins[0].ndim = 1;
    EXPECT_ERR(q8t_graph1("BatchNormalization", ins, 5, 1), data, "expected at least 2");
}

/* ---------------------------------------------------------------- pooling */

typedef struct pool_case {
    const char *op;
    q8_dtype dt;
    int nd; /* input rank */
    int64_t dims[5];
    int nk; /* length of kernel_shape as given */
    int64_t k[3], s[3], d[3], pads[6];
    bool has_s, has_d, has_pads;
    int ceil, cip, order;
    const char *auto_pad;
    bool indices;
    int opset;
    const char *impl; /* _pool_impl: "portable" keeps the AVX-512 loops out */
} pool_case;

static q8_graph *pool_build(const void *ctx) {
    const pool_case *c = ctx;
    q8t_in in = {"x", c->dt, c->nd, {0}, NULL};
    memcpy(in.dims, c->dims, sizeof c->dims);
    q8_graph *g = q8t_graph1(c->op, &in, 1, c->indices ? 2 : 1);
    int nsp = c->nd - 2;
    g->opset = c->opset ? c->opset : 12;
    q8t_attr_ints(g, "kernel_shape", c->k, c->nk);
    if (c->has_s) q8t_attr_ints(g, "strides", c->s, nsp);
    if (c->has_d) q8t_attr_ints(g, "dilations", c->d, nsp);
    if (c->has_pads) q8t_attr_ints(g, "pads", c->pads, 2 * nsp);
    if (c->ceil) q8t_attr_int(g, "ceil_mode", 1);
    if (c->cip) q8t_attr_int(g, "count_include_pad", 1);
    if (c->order) q8t_attr_int(g, "storage_order", 1);
    if (c->auto_pad) q8t_attr_str(g, "auto_pad", c->auto_pad);
    if (c->impl) q8t_attr_str(g, "_pool_impl", c->impl);
    return g;
}

/* Output size and begin padding of one spatial dim, straight from the spec. */
static void ref_pool_dim(const pool_case *c, int i, int64_t *out, int64_t *pb, int64_t *pe) {
    int nsp = c->nd - 2;
    int64_t in = c->dims[2 + i], k = c->k[i], s = c->has_s ? c->s[i] : 1;
    int64_t d = c->has_d ? c->d[i] : 1, ek = (k - 1) * d + 1;
    const char *ap = c->auto_pad ? c->auto_pad : "NOTSET";
    if (!strncmp(ap, "SAME", 4)) {
        *out = (in + s - 1) / s;
        int64_t total = (*out - 1) * s + ek - in;
        if (total < 0) total = 0;
        *pb = !strcmp(ap, "SAME_LOWER") ? total - total / 2 : total / 2;
        *pe = total - *pb;
        return;
    }
    int64_t p0 = 0, p1 = 0;
    if (c->has_pads && strcmp(ap, "VALID")) {
        p0 = c->pads[i];
        p1 = c->pads[nsp + i];
    }
    int64_t span = in + p0 + p1 - ek;
    *out = (c->ceil ? (span + s - 1) / s : span / s) + 1;
    if (c->ceil && (*out - 1) * s >= in + p0) (*out)--;
    *pb = p0;
    *pe = p1;
}

/* The reference pool: outputs as double, indices, and the output shape. */
static void ref_pool(const pool_case *c, const double *x, double *y, int64_t *idx, int64_t *odims) {
    int nsp = c->nd - 2;
    int64_t out[3], pb[3], pe[3];
    for (int i = 0; i < nsp; i++) {
        ref_pool_dim(c, i, &out[i], &pb[i], &pe[i]);
        odims[2 + i] = out[i];
    }
    odims[0] = c->dims[0];
    odims[1] = c->dims[1];
    int64_t planes = c->dims[0] * c->dims[1], isz = q8t_numel(c->dims + 2, nsp);
    int64_t osz = q8t_numel(out, nsp), ksz = q8t_numel(c->k, nsp);
    bool avg = !strcmp(c->op, "AveragePool");
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t o = 0; o < osz; o++) {
            int64_t oc[3], rem = o;
            for (int i = nsp - 1; i >= 0; i--) {
                oc[i] = rem % out[i];
                rem /= out[i];
            }
            double best = -INFINITY, sum = 0;
            int64_t bi = -1, cnt = 0, cnt_pad = 0;
            for (int64_t kk = 0; kk < ksz; kk++) {
                int64_t kc[3], r2 = kk, ic[3];
                for (int i = nsp - 1; i >= 0; i--) {
                    kc[i] = r2 % c->k[i];
                    r2 /= c->k[i];
                }
                bool inside = true, in_pad = true;
                for (int i = 0; i < nsp; i++) {
                    int64_t s = c->has_s ? c->s[i] : 1, d = c->has_d ? c->d[i] : 1;
                    ic[i] = oc[i] * s - pb[i] + kc[i] * d;
                    if (ic[i] < 0 || ic[i] >= c->dims[2 + i]) inside = false;
                    if (ic[i] >= c->dims[2 + i] + pe[i]) in_pad = false;
                }
                cnt_pad += in_pad;
                if (!inside) continue;
                int64_t flat = 0, colm = 0, mul = 1;
                for (int i = 0; i < nsp; i++) flat = flat * c->dims[2 + i] + ic[i];
                for (int i = 0; i < nsp; i++) {
                    colm += ic[i] * mul;
                    mul *= c->dims[2 + i];
                }
                double v = x[pl * isz + flat];
                cnt++;
                sum += v;
                if (bi < 0 || v > best) {
                    best = v;
                    bi = pl * isz + (c->order ? colm : flat);
                }
            }
            int64_t cnt_used = c->cip ? cnt_pad : cnt;
            y[pl * osz + o] = avg ? (cnt_used ? sum / (double)cnt_used : 0) : best;
            if (idx) idx[pl * osz + o] = bi;
        }
}

static void pool_check(pool_case c, uint64_t seed) {
    if (!c.dt) c.dt = Q8_F32;
    int64_t n = q8t_numel(c.dims, c.nd);
    float *xf = rand_buf(seed, n, -4, 4);
    double *xd = malloc(sizeof(double) * (size_t)n);
    void *xin = xf;
    int8_t *x8 = NULL;
    if (c.dt != Q8_F32) {
        x8 = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            int v = (int)(xf[i] * 30);
            x8[i] = (int8_t)(c.dt == Q8_U8 ? v + 128 : v);
        }
        xin = x8;
    }
    for (int64_t i = 0; i < n; i++)
        xd[i] = c.dt == Q8_F32 ? xf[i] : c.dt == Q8_U8 ? (double)(uint8_t)x8[i] : (double)x8[i];
    int64_t odims[5];
    double *yd = malloc(sizeof(double) * (size_t)(n * 64 + 64));
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n * 64 + 64));
    ref_pool(&c, xd, yd, idx, odims);
    int64_t on = q8t_numel(odims, c.nd);
    const void *data[] = {xin};
    void *out[2];
    q8_tensor_info info[2];
    run2((q8t_built){pool_build, &c}, data, c.indices ? 2 : 1, out, info);
    q8t_assert_shape(&info[0], odims, c.nd);
    for (int64_t i = 0; i < on; i++) {
        double got = c.dt == Q8_F32  ? ((float *)out[0])[i]
                     : c.dt == Q8_U8 ? ((uint8_t *)out[0])[i]
                                     : ((int8_t *)out[0])[i];
        cr_assert(fabs(got - yd[i]) <= 1e-5 + 1e-5 * fabs(yd[i]),
                  "%s[%lld] (seed %llu, dims %lld %lld %lld %lld %lld, k %lld %lld %lld, s %lld "
                  "%lld %lld, pads %lld %lld %lld %lld, ceil %d, %s): got %g, want %g",
                  c.op, (long long)i, (unsigned long long)seed, (long long)c.dims[0],
                  (long long)c.dims[1], (long long)c.dims[2], (long long)c.dims[3],
                  (long long)c.dims[4], (long long)c.k[0], (long long)c.k[1], (long long)c.k[2],
                  (long long)c.s[0], (long long)c.s[1], (long long)c.s[2], (long long)c.pads[0],
                  (long long)c.pads[1], (long long)c.pads[2], (long long)c.pads[3], c.ceil,
                  c.impl ? c.impl : "auto", got, yd[i]);
    }
    if (c.indices) {
        q8t_assert_shape(&info[1], odims, c.nd);
        cr_assert_eq(info[1].dtype, Q8_I64);
        for (int64_t i = 0; i < on; i++)
            cr_assert_eq(((int64_t *)out[1])[i], idx[i], "Indices[%lld]: got %lld, want %lld",
                         (long long)i, (long long)((int64_t *)out[1])[i], (long long)idx[i]);
        free(out[1]);
    }
    free(out[0]);
    free(xf);
    free(x8);
    free(xd);
    free(yd);
    free(idx);
}

/* One MaxPool and one AveragePool (count_include_pad 0 and 1) per geometry. */
static void pool_both(pool_case c, uint64_t seed) {
    c.op = "MaxPool";
    pool_check(c, seed);
    c.op = "AveragePool";
    c.indices = false;
    c.order = 0;
    c.opset = 11;
    if (c.has_d) c.opset = 19;
    pool_check(c, seed);
    c.cip = 1;
    pool_check(c, seed);
}

Test(pool, geometries) {
    /* 3x3 stride 2 pad 1 on c=13, 9x7 */
    pool_both((pool_case){.nd = 4,
                          .dims = {2, 13, 9, 7},
                          .nk = 2,
                          .k = {3, 3},
                          .s = {2, 2},
                          .has_s = true,
                          .pads = {1, 1, 1, 1},
                          .has_pads = true},
              11);
    /* ceil_mode, odd strides, asymmetric pads */
    pool_both((pool_case){.nd = 4,
                          .dims = {1, 3, 9, 7},
                          .nk = 2,
                          .k = {2, 3},
                          .s = {3, 2},
                          .has_s = true,
                          .pads = {0, 1, 1, 2},
                          .has_pads = true,
                          .ceil = 1},
              12);
    pool_both((pool_case){.nd = 4,
                          .dims = {2, 2, 9, 7},
                          .nk = 2,
                          .k = {3, 3},
                          .s = {2, 2},
                          .has_s = true,
                          .ceil = 1},
              13);
    /* kernel larger than the input, with padding */
    pool_both((pool_case){.nd = 4,
                          .dims = {1, 2, 3, 3},
                          .nk = 2,
                          .k = {5, 5},
                          .pads = {2, 2, 2, 2},
                          .has_pads = true},
              14);
    pool_both((pool_case){.nd = 4,
                          .dims = {1, 2, 3, 2},
                          .nk = 2,
                          .k = {4, 3},
                          .s = {2, 3},
                          .has_s = true,
                          .pads = {2, 1, 3, 2},
                          .has_pads = true,
                          .ceil = 1},
              15);
    /* 1x1 spatial, 1x1 kernel */
    pool_both((pool_case){.nd = 4, .dims = {2, 5, 1, 1}, .nk = 2, .k = {1, 1}}, 16);
    /* dilations */
    pool_both((pool_case){.nd = 4,
                          .dims = {1, 3, 9, 7},
                          .nk = 2,
                          .k = {3, 2},
                          .d = {2, 3},
                          .has_d = true,
                          .pads = {1, 2, 2, 1},
                          .has_pads = true,
                          .ceil = 1,
                          .s = {2, 1},
                          .has_s = true},
              17);
    /* auto_pad */
    pool_both((pool_case){.nd = 4,
                          .dims = {1, 2, 9, 7},
                          .nk = 2,
                          .k = {3, 2},
                          .s = {2, 2},
                          .has_s = true,
                          .auto_pad = "SAME_UPPER"},
              18);
    pool_both((pool_case){.nd = 4,
                          .dims = {1, 2, 9, 7},
                          .nk = 2,
                          .k = {2, 4},
                          .s = {2, 3},
                          .has_s = true,
                          .auto_pad = "SAME_LOWER"},
              19);
    pool_both((pool_case){.nd = 4,
                          .dims = {1, 2, 9, 7},
                          .nk = 2,
                          .k = {2, 4},
                          .s = {2, 3},
                          .has_s = true,
                          .auto_pad = "VALID",
                          .pads = {1, 1, 1, 1},
                          .has_pads = true},
              20);
    /* 1D and 3D */
    pool_both((pool_case){.nd = 3,
                          .dims = {2, 13, 11},
                          .nk = 1,
                          .k = {3},
                          .s = {2},
                          .has_s = true,
                          .pads = {1, 2},
                          .has_pads = true,
                          .ceil = 1},
              21);
    pool_both((pool_case){.nd = 5,
                          .dims = {1, 3, 5, 6, 7},
                          .nk = 3,
                          .k = {2, 3, 2},
                          .s = {2, 2, 3},
                          .has_s = true,
                          .pads = {1, 0, 1, 0, 1, 1},
                          .has_pads = true},
              22);
}

/* FP32 MaxPool on wide rows (more outputs than one vector chunk) and narrow
 * ones (up to 16 outputs whose taps lie within 32 inputs: 29 and 12 wide),
 * kernels 2-4, strides 1, 2 and 3: bit for bit the running max in tap order, so NaN
 * anywhere in a window gives NaN and the first of +0 / -0 met wins. */
static void maxpool_f32_nan_and_signed_zeros(int64_t W, int64_t K) {
    const int64_t H = 5, strides[] = {1, 2, 3};
    /* mostly negative, with +0 and -0 every few values (windows whose max
     * is a tie of zeros), and a few positive values */
    float *x = rand_buf(51, 2 * H * W, -2, -0.5f);
    for (int64_t i = 0; i < 2 * H * W; i++) {
        if (i % 4 == 1) x[i] = (i / 4) % 3 ? -0.0f : 0.0f;
        if (i % 97 == 5) x[i] = 0.25f;
    }
    /* channel 0: -0 all along row 1, +0 along row 2: the first zero met wins */
    for (int64_t w = 0; w < W; w++) {
        x[W + w] = -0.0f;
        x[2 * W + w] = 0.0f;
    }
    x[H * W + 2 * W + W / 2] = NAN;
    for (int si = 0; si < 6; si++) {
        int64_t sw = strides[si % 3];
        pool_case c = {.op = "MaxPool", .dt = Q8_F32, .nd = 4, .dims = {1, 2, H, W}, .nk = 2,
                       .k = {K, K}, .s = {1, sw}, .has_s = true, .pads = {0, 1, 0, 1},
                       .has_pads = true, .impl = si < 3 ? "auto" : "portable"};
        const void *data[] = {x};
        void *out[1];
        q8_tensor_info info[1];
        run2((q8t_built){pool_build, &c}, data, 1, out, info);
        int64_t OH = H - K + 1, OW = (W + 2 - K) / sw + 1;
        cr_assert(info[0].dims[2] == OH && info[0].dims[3] == OW);
        for (int64_t ch = 0; ch < 2; ch++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float best = -INFINITY;
                    bool nan = false;
                    for (int64_t kh = 0; kh < K; kh++)
                        for (int64_t kw = 0; kw < K; kw++) {
                            int64_t iw = ow * sw - 1 + kw;
                            if (iw < 0 || iw >= W) continue;
                            float v = x[(ch * H + oh + kh) * W + iw];
                            best = v > best ? v : best;
                            nan |= v != v;
                        }
                    float got = ((float *)out[0])[(ch * OH + oh) * OW + ow];
                    bool ok = nan ? isnan(got) : memcmp(&got, &best, sizeof got) == 0;
                    cr_assert(ok, "stride %lld ch %lld (%lld, %lld): got %g, want %g",
                              (long long)sw, (long long)ch, (long long)oh, (long long)ow, got,
                              nan ? NAN : best);
                }
        free(out[0]);
    }
    free(x);
}

Test(pool, maxpool_f32_nan_and_signed_zeros) {
    for (int64_t k = 2; k <= 4; k++) { /* 2: taps 0 and 1 only, 4: one past them */
        maxpool_f32_nan_and_signed_zeros(150, k);
        maxpool_f32_nan_and_signed_zeros(29, k);
        maxpool_f32_nan_and_signed_zeros(12, k);
    }
}

/* INT8 MaxPool on wide rows (more outputs than one chunk): kernels 2x2 and
 * 3x3, strides 1, 2 and 3, with and without padding, -128 and 127 in the
 * data; the max of each window written out here. */
Test(pool, maxpool_i8_wide_rows) {
    const int64_t H = 6, W = 301, strides[] = {1, 2, 3}, kernels[] = {2, 3};
    int8_t *x = malloc(2 * H * W);
    q8t_rng r = q8t_seed(52);
    for (int64_t i = 0; i < 2 * H * W; i++)
        x[i] = i % 89 == 3 ? 127 : i % 7 == 0 ? -128 : (int8_t)(q8t_next(&r) >> 56);
    for (int ki = 0; ki < 2; ki++)
        for (int si = 0; si < 3; si++)
            for (int pi = 0; pi < 4; pi++) { /* pads 0, 1; then the portable loops */
                int pad = pi % 2;
                int64_t k = kernels[ki], sw = strides[si];
                pool_case c = {.op = "MaxPool", .dt = Q8_I8, .nd = 4, .dims = {1, 2, H, W},
                               .nk = 2, .k = {k, k}, .s = {2, sw}, .has_s = true,
                               .pads = {0, pad, 0, pad}, .has_pads = true,
                               .impl = pi < 2 ? "auto" : "portable"};
                const void *data[] = {x};
                void *out[1];
                q8_tensor_info info[1];
                run2((q8t_built){pool_build, &c}, data, 1, out, info);
                int64_t OH = (H - k) / 2 + 1, OW = (W + 2 * pad - k) / sw + 1;
                cr_assert(info[0].dims[2] == OH && info[0].dims[3] == OW);
                for (int64_t ch = 0; ch < 2; ch++)
                    for (int64_t oh = 0; oh < OH; oh++)
                        for (int64_t ow = 0; ow < OW; ow++) {
                            int best = -129;
                            for (int64_t kh = 0; kh < k; kh++)
                                for (int64_t kw = 0; kw < k; kw++) {
                                    int64_t iw = ow * sw - pad + kw;
                                    if (iw < 0 || iw >= W) continue;
                                    int v = x[(ch * H + oh * 2 + kh) * W + iw];
                                    best = v > best ? v : best;
                                }
                            int got = ((int8_t *)out[0])[(ch * OH + oh) * OW + ow];
                            cr_assert_eq(got, best, "k %lld stride %lld pad %d ch %lld (%lld, "
                                         "%lld)", (long long)k, (long long)sw, pad,
                                         (long long)ch, (long long)oh, (long long)ow);
                        }
                free(out[0]);
            }
    free(x);
}

Test(pool, ceil_mode_window_must_start_inside) {
    /* in 4, kernel 2, stride 2, end pad 1: a third window would start at 4,
     * in the right padding only, so there are 2 outputs, not 3. */
    float x[4] = {1, 5, 2, 7};
    pool_case c = {.op = "MaxPool",
                   .dt = Q8_F32,
                   .nd = 3,
                   .dims = {1, 1, 4},
                   .nk = 1,
                   .k = {2},
                   .s = {2},
                   .has_s = true,
                   .pads = {0, 1},
                   .has_pads = true,
                   .ceil = 1};
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    run2((q8t_built){pool_build, &c}, data, 1, out, info);
    int64_t want_dims[] = {1, 1, 2};
    q8t_assert_shape(&info[0], want_dims, 3);
    float want[] = {5, 7};
    q8t_assert_close(out[0], want, 2, 0, 0, "maxpool ceil");
    free(out[0]);
    /* with ceil_mode 0 the same input gives floor((4 + 1 - 2) / 2) + 1 = 2 too;
     * with pads 1, 1: ceil((4 + 2 - 2) / 2) + 1 = 3 and the third window
     * starts at 3, inside: kept */
    c.pads[0] = 1;
    run2((q8t_built){pool_build, &c}, data, 1, out, info);
    int64_t want3[] = {1, 1, 3};
    q8t_assert_shape(&info[0], want3, 3);
    float w3[] = {1, 5, 7};
    q8t_assert_close(out[0], w3, 3, 0, 0, "maxpool ceil 3");
    free(out[0]);
}

Test(pool, maxpool_indices_and_int8) {
    pool_case c = {.op = "MaxPool",
                   .nd = 4,
                   .dims = {2, 3, 9, 7},
                   .nk = 2,
                   .k = {3, 2},
                   .s = {2, 2},
                   .has_s = true,
                   .pads = {1, 1, 1, 0},
                   .has_pads = true,
                   .ceil = 1,
                   .indices = true};
    pool_check(c, 31);
    c.order = 1;
    pool_check(c, 32);
    c.nd = 5;
    c.dims[4] = 4;
    c.nk = 3;
    c.k[2] = 2;
    c.s[2] = 1;
    int64_t p6[6] = {1, 1, 0, 1, 0, 1};
    memcpy(c.pads, p6, sizeof p6);
    pool_check(c, 33); /* 3D, column-major indices */
    c.order = 0;
    c.indices = false;
    c.dt = Q8_I8;
    pool_check(c, 34);
    c.dt = Q8_U8;
    c.indices = true;
    pool_check(c, 35);
}

/* MaxPool on random geometries, float32, int8 and uint8, against the
 * reference: 1-D to 3-D, kernels 1-5, strides 1-4, pads up to k - 1 on
 * either side, ceil_mode, widths around the 16- and 64-output chunks of the
 * row loops (in place and through the padded copy), 1 and 3 threads (run2).
 * The first 60 have small planes (pooled whole, maxplane_*), the last 30
 * 2-D planes of 200-260 rows (too large for that: the maxrow_* loops). Each
 * runs as chosen (2-D with stride 1 or 2 along W: the AVX-512 loops where
 * the CPU has them) and with the portable loops forced. */
Test(pool, maxpool_random_geometries) {
    q8t_rng r = q8t_seed(77);
    const q8_dtype dts[] = {Q8_F32, Q8_I8, Q8_U8};
    const int64_t widths[] = {1, 3, 15, 16, 17, 29, 63, 64, 65, 130, 200};
    for (int it = 0; it < 90; it++) {
        pool_case c = {.op = "MaxPool", .dt = dts[it % 3],
                       .nd = it >= 60 ? 4 : 3 + (int)(q8t_next(&r) % 3)};
        int nsp = c.nd - 2;
        c.dims[0] = 1 + (int64_t)(q8t_next(&r) % 2);
        c.dims[1] = 1 + (int64_t)(q8t_next(&r) % 3);
        c.nk = nsp;
        c.has_s = c.has_pads = true;
        c.ceil = (int)(q8t_next(&r) % 2);
        for (int i = 0; i < nsp; i++) {
            bool last = i == nsp - 1;
            c.dims[2 + i] = last ? widths[q8t_next(&r) % 11] : 1 + (int64_t)(q8t_next(&r) % 7);
            if (it >= 60) /* large planes: 200-260 rows of 300 or 400 */
                c.dims[2 + i] = last ? (q8t_next(&r) % 2 ? 300 : 400)
                                     : 200 + (int64_t)(q8t_next(&r) % 61);
            c.k[i] = 1 + (int64_t)(q8t_next(&r) % 5);
            if (c.k[i] > c.dims[2 + i] + 2) c.k[i] = 1;
            c.s[i] = 1 + (int64_t)(q8t_next(&r) % 4);
            c.pads[i] = (int64_t)(q8t_next(&r) % (uint64_t)c.k[i]);
            c.pads[nsp + i] = (int64_t)(q8t_next(&r) % (uint64_t)c.k[i]);
            if (c.k[i] > c.dims[2 + i] + c.pads[i] + c.pads[nsp + i]) /* no output */
                c.k[i] = 1, c.pads[i] = c.pads[nsp + i] = 0;
        }
        pool_check(c, 1000 + (uint64_t)it);
        c.impl = "portable"; /* where the AVX-512 loops took it, the portable ones too */
        pool_check(c, 1000 + (uint64_t)it);
    }
}

/* AveragePool, the AVX-512 loops against the portable ones, bit for bit:
 * random 2-D geometries (strides 1 and 2 along W, pads, ceil_mode,
 * count_include_pad), inputs with -0, +-inf and NaN among them. */
Test(pool, avgpool_same_bits_as_portable) {
    q8t_rng r = q8t_seed(78);
    const int64_t widths[] = {1, 5, 15, 16, 17, 29, 40, 65};
    for (int it = 0; it < 40; it++) {
        pool_case c = {.op = "AveragePool", .dt = Q8_F32, .nd = 4, .opset = 11,
                       .has_s = true, .has_pads = true, .nk = 2};
        c.dims[0] = 1;
        c.dims[1] = 1 + (int64_t)(q8t_next(&r) % 3);
        c.dims[2] = 1 + (int64_t)(q8t_next(&r) % 9);
        c.dims[3] = widths[q8t_next(&r) % 8];
        for (int i = 0; i < 2; i++) {
            c.k[i] = 1 + (int64_t)(q8t_next(&r) % 4);
            if (c.k[i] > c.dims[2 + i]) c.k[i] = c.dims[2 + i];
            c.s[i] = 1 + (int64_t)(q8t_next(&r) % 2);
            c.pads[i] = (int64_t)(q8t_next(&r) % (uint64_t)c.k[i]);
            c.pads[2 + i] = (int64_t)(q8t_next(&r) % (uint64_t)c.k[i]);
        }
        c.ceil = (int)(q8t_next(&r) % 2);
        c.cip = (int)(q8t_next(&r) % 2);
        int64_t n = q8t_numel(c.dims, 4);
        float *x = rand_buf(500 + (uint64_t)it, n, -4, 4);
        const float sp[] = {-0.0f, INFINITY, -INFINITY, NAN};
        for (int64_t i = 0; i < n; i += 7 + it % 5)
            x[i] = i % 3 ? -0.0f : sp[(i / 7) % 4 * (it % 3 == 0)];
        const void *data[] = {x};
        void *out[2][1];
        q8_tensor_info info[2][1];
        for (int v = 0; v < 2; v++) {
            c.impl = v ? "portable" : "auto";
            run2((q8t_built){pool_build, &c}, data, 1, out[v], info[v]);
        }
        int64_t on = q8t_numel(info[0][0].dims, 4);
        for (int64_t i = 0; i < on; i++) {
            float a = ((float *)out[0][0])[i], b = ((float *)out[1][0])[i];
            cr_assert(isnan(a) ? isnan(b) : memcmp(&a, &b, 4) == 0,
                      "case %d [%lld]: %a against the portable %a", it, (long long)i, a, b);
        }
        free(out[0][0]);
        free(out[1][0]);
        free(x);
    }
}

/* Float MaxPool 2x2 stride 2 without padding (its own AVX-512 loop):
 * bit for bit the portable loops' results, on widths around the 16-output
 * chunks (odd ones leave a column unread), inputs with NaN, +-0 and +-inf,
 * ceil_mode off and on (a window past the edge takes the general loops). */
Test(pool, maxpool_2x2_stride2_same_bits_as_portable) {
    const int64_t widths[] = {2, 3, 31, 32, 33, 34, 63, 126, 127};
    q8t_rng r = q8t_seed(91);
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (int ceil = 0; ceil < 2; ceil++) {
            pool_case c = {.op = "MaxPool", .dt = Q8_F32, .nd = 4,
                           .dims = {2, 3, 5 + (int64_t)wi, widths[wi]}, .nk = 2,
                           .k = {2, 2}, .s = {2, 2}, .has_s = true, .ceil = ceil};
            int64_t n = q8t_numel(c.dims, c.nd);
            float *x = malloc(sizeof(float) * (size_t)n);
            q8t_fill(&r, x, n, -2, 2);
            const float special[] = {NAN, 0.0f, -0.0f, INFINITY, -INFINITY};
            for (int64_t i = 0; i < n; i++) {
                uint64_t u = q8t_next(&r) % 16;
                if (u < 5) x[i] = special[u]; /* a third of the inputs */
                if (u == 5 && i % 7) x[i] = x[i - 1] < 0 ? -0.0f : 0.0f;
            }
            /* some rows without NaN, so the fast loop's results are kept */
            for (int64_t i = 0; i < n / 2; i++)
                if (x[i] != x[i]) x[i] = -0.0f;
            const void *data[] = {x};
            void *fast[2], *port[2];
            q8_tensor_info info[2];
            run2((q8t_built){pool_build, &c}, data, 1, fast, info);
            int64_t on = q8t_numel(info[0].dims, info[0].ndim);
            c.impl = "portable";
            run2((q8t_built){pool_build, &c}, data, 1, port, info);
            cr_assert_eq(memcmp(fast[0], port[0], sizeof(float) * (size_t)on), 0,
                         "width %lld, ceil %d", (long long)widths[wi], ceil);
            free(fast[0]);
            free(port[0]);
            free(x);
        }
}

/* int8 and uint8 MaxPool 2x2 stride 2 without padding on rows wider than
 * 64 (their own loop: pairs of input rows, then even and odd bytes): the
 * portable loops' bytes, on widths around the 64-output chunks (the
 * masks' halves at 32 and 64 outputs; odd widths leave a column unread),
 * with the types' extremes in the data, ceil_mode off and on. */
Test(pool, maxpool_2x2_stride2_bytes_same_as_portable) {
    const int64_t widths[] = {65, 66, 127, 128, 129, 130, 191, 192, 255, 256, 257, 300};
    q8t_rng r = q8t_seed(93);
    for (int u8 = 0; u8 < 2; u8++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
            for (int ceil = 0; ceil < 2; ceil++) {
                pool_case c = {.op = "MaxPool", .dt = u8 ? Q8_U8 : Q8_I8, .nd = 4,
                               .dims = {2, 3, 4 + (int64_t)wi % 3, widths[wi]}, .nk = 2,
                               .k = {2, 2}, .s = {2, 2}, .has_s = true, .ceil = ceil};
                int64_t n = q8t_numel(c.dims, c.nd);
                uint8_t *x = malloc((size_t)n);
                for (int64_t i = 0; i < n; i++) {
                    uint64_t v = q8t_next(&r);
                    x[i] = v % 11 == 0 ? 0x80 : v % 13 == 0 ? 0x7f : v % 17 == 0 ? 0xff
                           : v % 19 == 0 ? 0 : (uint8_t)(v >> 56);
                }
                const void *data[] = {x};
                void *fast[1], *port[1];
                q8_tensor_info info[1];
                run2((q8t_built){pool_build, &c}, data, 1, fast, info);
                int64_t on = q8t_numel(info[0].dims, info[0].ndim);
                cr_assert_eq(info[0].dims[3], (widths[wi] - 2 + (ceil ? 1 : 0)) / 2 + 1);
                c.impl = "portable";
                run2((q8t_built){pool_build, &c}, data, 1, port, info);
                cr_assert_eq(memcmp(fast[0], port[0], (size_t)on), 0, "%s width %lld, ceil %d",
                             u8 ? "uint8" : "int8", (long long)widths[wi], ceil);
                free(fast[0]);
                free(port[0]);
                free(x);
            }
}

Test(pool, maxpool_nan) {
    float x[8] = {1, NAN, 3, 4, 5, 6, 7, 8};
    pool_case c = {.op = "MaxPool",
                   .dt = Q8_F32,
                   .nd = 3,
                   .dims = {1, 1, 8},
                   .nk = 1,
                   .k = {2},
                   .s = {2},
                   .has_s = true};
    const void *data[] = {x};
    void *out[2];
    q8_tensor_info info[2];
    for (int with_idx = 0; with_idx < 2; with_idx++) {
        c.indices = with_idx;
        run2((q8t_built){pool_build, &c}, data, 1 + with_idx, out, info);
        float *y = out[0];
        cr_assert(isnan(y[0]) && y[1] == 4 && y[2] == 6 && y[3] == 8);
        if (with_idx) {
            cr_assert_eq(((int64_t *)out[1])[0], 1);
            free(out[1]);
        }
        free(out[0]);
    }
}

Test(pool, errors) {
    float x[64] = {0};
    const void *data[] = {x};
    q8t_in in = {"x", Q8_F32, 4, {1, 1, 4, 4}, NULL};
    int64_t k3[3] = {2, 2, 2}, k2[2] = {2, 2}, negp[4] = {0, -1, 0, 0}, bigp[4] = {2, 0, 0, 0};
    q8_graph *g = q8t_graph1("MaxPool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", k3, 3);
    EXPECT_ERR(g, data, "kernel_shape has 3 values, expected 2");
    g = q8t_graph1("AveragePool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", k2, 2);
    q8t_attr_ints(g, "pads", negp, 4);
    EXPECT_ERR(g, data, "pads[1] is -1, must be >= 0");
    g = q8t_graph1("MaxPool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", k2, 2);
    q8t_attr_ints(g, "pads", bigp, 4);
    EXPECT_ERR(g, data, "must be smaller than the kernel");
    g = q8t_graph1("MaxPool", &in, 1, 1);
    EXPECT_ERR(g, data, "kernel_shape is required");
    g = q8t_graph1("MaxPool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", k2, 2);
    q8t_attr_ints(g, "strides", (int64_t[]){1, 0}, 2);
    EXPECT_ERR(g, data, "strides[1] is 0");
    g = q8t_graph1("MaxPool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", k2, 2);
    q8t_attr_str(g, "auto_pad", "SAME");
    EXPECT_ERR(g, data, "auto_pad is 'SAME'");
    g = q8t_graph1("MaxPool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", (int64_t[]){6, 2}, 2);
    EXPECT_ERR(g, data, "the kernel covers 6 elements");
    in.ndim = 2;
    g = q8t_graph1("MaxPool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", k2, 2);
    EXPECT_ERR(g, data, "1 to 3 spatial dims");
    in.ndim = 4;
    in.dtype = Q8_I8;
    g = q8t_graph1("AveragePool", &in, 1, 1);
    q8t_attr_ints(g, "kernel_shape", k2, 2);
    EXPECT_ERR(g, data, "input is int8");
}

typedef struct gp_case {
    const char *op;
    q8_dtype dt;
    int nd;
    int64_t dims[5];
} gp_case;

static q8_graph *gp_build(const void *ctx) {
    const gp_case *c = ctx;
    q8t_in in = {"x", c->dt, c->nd, {0}, NULL};
    memcpy(in.dims, c->dims, sizeof c->dims);
    return q8t_graph1(c->op, &in, 1, 1);
}

static void gp_check(gp_case c, uint64_t seed) {
    int64_t n = q8t_numel(c.dims, c.nd), planes = c.dims[0] * c.dims[1], s = n / planes;
    float *x = rand_buf(seed, n, -5, 5);
    uint8_t *xu = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) xu[i] = (uint8_t)(x[i] * 20 + 128);
    const void *data[] = {c.dt == Q8_U8 ? (void *)xu : (void *)x};
    void *out[1];
    q8_tensor_info info[1];
    run2((q8t_built){gp_build, &c}, data, 1, out, info);
    int64_t od[5] = {c.dims[0], c.dims[1], 1, 1, 1};
    q8t_assert_shape(&info[0], od, c.nd);
    bool avg = !strcmp(c.op, "GlobalAveragePool");
    for (int64_t p = 0; p < planes; p++) {
        double acc = avg ? 0 : -INFINITY;
        for (int64_t i = 0; i < s; i++) {
            double v = c.dt == Q8_U8 ? xu[p * s + i] : x[p * s + i];
            acc = avg ? acc + v : (v > acc ? v : acc);
        }
        if (avg) acc /= (double)s;
        double got = c.dt == Q8_U8 ? ((uint8_t *)out[0])[p] : ((float *)out[0])[p];
        cr_assert(fabs(got - acc) <= 1e-5 * (1 + fabs(acc)), "%s[%lld]: %g vs %g", c.op,
                  (long long)p, got, acc);
    }
    free(out[0]);
    free(x);
    free(xu);
}

Test(pool, global) {
    gp_check((gp_case){"GlobalAveragePool", Q8_F32, 4, {2, 13, 9, 7}}, 41);
    gp_check((gp_case){"GlobalMaxPool", Q8_F32, 4, {2, 13, 9, 7}}, 42);
    gp_check((gp_case){"GlobalAveragePool", Q8_F32, 3, {3, 5, 1}}, 43);
    gp_check((gp_case){"GlobalMaxPool", Q8_U8, 5, {1, 3, 2, 3, 4}}, 44);
    gp_check((gp_case){"GlobalAveragePool", Q8_F32, 4, {1, 2, 130, 140}}, 45);
    /* rows shorter than, and not a multiple of, the 8 partial sums */
    gp_check((gp_case){"GlobalAveragePool", Q8_F32, 3, {2, 3, 7}}, 46);
    gp_check((gp_case){"GlobalAveragePool", Q8_F32, 4, {1, 5, 3, 7}}, 47);
}

/* ------------------------------------------------------ Softmax, LogSoftmax */

typedef struct sm_case {
    const char *op;
    int nd;
    int64_t dims[5];
    int64_t axis;
    bool has_axis;
    int opset;
} sm_case;

static q8_graph *sm_build(const void *ctx) {
    const sm_case *c = ctx;
    q8t_in in = {"x", Q8_F32, c->nd, {0}, NULL};
    memcpy(in.dims, c->dims, sizeof c->dims);
    q8_graph *g = q8t_graph1(c->op, &in, 1, 1);
    g->opset = c->opset;
    if (c->has_axis) q8t_attr_int(g, "axis", c->axis);
    return g;
}

/* Softmax of x viewed as outer x len x inner, along len, in double. */
static void ref_softmax(const float *x, float *y, int64_t outer, int64_t len, int64_t inner,
                        bool take_log) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xs = x + o * len * inner + i;
            double m = -INFINITY, s = 0;
            for (int64_t l = 0; l < len; l++) m = xs[l * inner] > m ? xs[l * inner] : m;
            for (int64_t l = 0; l < len; l++) s += exp(xs[l * inner] - m);
            for (int64_t l = 0; l < len; l++) {
                double v = xs[l * inner] - m;
                y[o * len * inner + i + l * inner] = (float)(take_log ? v - log(s) : exp(v) / s);
            }
        }
}

static void sm_check(sm_case c, uint64_t seed, float lo, float hi) {
    int64_t n = q8t_numel(c.dims, c.nd);
    float *x = rand_buf(seed, n, lo, hi), *want = malloc(sizeof(float) * (size_t)(n ? n : 1));
    bool old = c.opset < 13;
    int64_t ax = c.has_axis ? c.axis : old ? 1 : -1;
    if (ax < 0) ax += c.nd;
    int64_t outer = q8t_numel(c.dims, (int)ax);
    int64_t len = old ? q8t_numel(c.dims + ax, c.nd - (int)ax) : c.dims[ax];
    int64_t inner = old ? 1 : q8t_numel(c.dims + ax + 1, c.nd - (int)ax - 1);
    ref_softmax(x, want, outer, len, inner, !strcmp(c.op, "LogSoftmax"));
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    run2((q8t_built){sm_build, &c}, data, 1, out, info);
    q8t_assert_shape(&info[0], c.dims, c.nd);
    char what[96];
    snprintf(what, sizeof what, "%s seed %llu axis %lld opset %d", c.op, (unsigned long long)seed,
             (long long)c.axis, c.opset);
    q8t_assert_close(out[0], want, n, 2e-6f, 2e-6f, what);
    free(out[0]);
    free(x);
    free(want);
}

Test(softmax, matches_reference) {
    const char *ops[] = {"Softmax", "LogSoftmax"};
    for (int k = 0; k < 2; k++) {
        const char *op = ops[k];
        uint64_t s = 100 * (uint64_t)(k + 1);
        sm_check((sm_case){op, 3, {2, 13, 9}, 0, false, 13}, s + 1, -5, 5);   /* last axis */
        sm_check((sm_case){op, 3, {2, 13, 9}, 1, true, 13}, s + 2, -5, 5);    /* middle */
        sm_check((sm_case){op, 3, {2, 13, 9}, 0, true, 13}, s + 3, -5, 5);    /* first */
        sm_check((sm_case){op, 4, {2, 3, 9, 7}, -3, true, 13}, s + 4, -5, 5); /* negative */
        sm_check((sm_case){op, 3, {2, 13, 9}, 0, false, 11}, s + 5, -5, 5);   /* 2D at 1 */
        sm_check((sm_case){op, 4, {2, 3, 9, 7}, -2, true, 11}, s + 6, -5, 5);
        sm_check((sm_case){op, 4, {2, 3, 9, 7}, 0, true, 7}, s + 7, -5, 5);
        sm_check((sm_case){op, 2, {3, 1000}, 0, false, 13}, s + 8, 990, 1010);   /* large */
        sm_check((sm_case){op, 2, {7, 1}, 0, false, 13}, s + 9, -1, 1);          /* len 1 */
        sm_check((sm_case){op, 3, {5, 130, 200}, 1, true, 13}, s + 10, -30, 30); /* blocks */
        sm_check((sm_case){op, 1, {100003}, 0, false, 13}, s + 11, -80, 10);     /* one row */
        sm_check((sm_case){op, 3, {2, 0, 3}, 1, true, 13}, s + 12, -1, 1);       /* empty */
    }
}

/* softmax_rows' arithmetic for a row shorter than 8 (one float lane of
 * q8_exp_neg values summed in order, 1/s in double), or, with a NaN or an
 * infinity in the row, its libm path. */
static void ref_short_row(const float *x, float *y, int len, bool take_log) {
    float m = -INFINITY, z = 0.0f;
    for (int i = 0; i < len; i++) {
        m = x[i] > m ? x[i] : m;
        z += x[i] * 0.0f;
    }
    if (z != 0.0f) {
        double s = 0.0;
        for (int i = 0; i < len; i++) s += expf(x[i] - m);
        for (int i = 0; i < len; i++)
            y[i] = take_log ? (x[i] - m) - (float)log(s) : (float)(expf(x[i] - m) / s);
        return;
    }
    float ex[8], sum = 0.0f;
    for (int i = 0; i < len; i++) sum += ex[i] = q8_exp_neg(x[i] - m);
    float ls = (float)log((double)sum), inv = (float)(1.0 / (double)sum);
    for (int i = 0; i < len; i++) y[i] = take_log ? (x[i] - m) - ls : ex[i] * inv;
}

/* Rows of 1-7 values (a segmentation head's classes per pixel) give the
 * bits of the documented arithmetic (the CUDA kernel shares q8_exp_neg),
 * with 1 and 3 threads; some rows hold NaN or infinities. 150 rows: the
 * CPU takes them 64 at a time, and a block ends part way. */
Test(softmax, short_rows_same_bits) {
    const char *ops[] = {"Softmax", "LogSoftmax"};
    for (int k = 0; k < 2; k++)
        for (int len = 1; len < 8; len++) {
            int rows = 150;
            float *x = rand_buf(700 + (uint64_t)len, rows * len, -20, 20);
            x[3 * len] = NAN;
            x[17 * len + len - 1] = INFINITY;
            x[30 * len] = -INFINITY;
            for (int i = 0; i < len; i++) x[33 * len + i] = -INFINITY;
            x[100 * len + len / 2] = NAN;
            float *want = malloc(sizeof(float) * (size_t)(rows * len));
            for (int r = 0; r < rows; r++)
                ref_short_row(x + r * len, want + r * len, len, k == 1);
            const void *data[] = {x};
            void *out[1];
            q8_tensor_info info[1];
            sm_case c = {ops[k], 2, {rows, len}, 0, false, 13};
            run2((q8t_built){sm_build, &c}, data, 1, out, info);
            const float *got = out[0];
            for (int i = 0; i < rows * len; i++)
                cr_assert(memcmp(&got[i], &want[i], 4) == 0 || (isnan(got[i]) && isnan(want[i])),
                          "%s len %d row %d: %.9g, want %.9g", ops[k], len, i / len, got[i],
                          want[i]);
            free(out[0]);
            free(x);
            free(want);
        }
}

Test(softmax, opset_semantics_differ) {
    /* axis=1 on 2x3x4: opset 11 normalizes 12 values per batch, 13 only 3 */
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i * 0.1f;
    const void *data[] = {x};
    void *o11[1], *o13[1];
    q8_tensor_info info[1];
    sm_case c = {"Softmax", 3, {2, 3, 4}, 1, true, 11};
    run2((q8t_built){sm_build, &c}, data, 1, o11, info);
    c.opset = 13;
    run2((q8t_built){sm_build, &c}, data, 1, o13, info);
    double s11 = 0, s13 = 0;
    for (int i = 0; i < 12; i++) s11 += ((float *)o11[0])[i];
    for (int i = 0; i < 3; i++) s13 += ((float *)o13[0])[i * 4];
    cr_assert(fabs(s11 - 1) < 1e-6 && fabs(s13 - 1) < 1e-6, "sums %g %g", s11, s13);
    free(o11[0]);
    free(o13[0]);
}

Test(softmax, nan_and_inf) {
    float x[6] = {1, NAN, 2, 0, INFINITY, 1};
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    sm_case c = {"Softmax", 2, {2, 3}, 0, false, 13};
    run2((q8t_built){sm_build, &c}, data, 1, out, info);
    for (int i = 0; i < 3; i++) cr_assert(isnan(((float *)out[0])[i]));
    free(out[0]);
}

Test(softmax, in_place_after_relu) {
    float *x = rand_buf(5, 13 * 50, -3, 3);
    q8t_in in = {"x", Q8_F32, 2, {13, 50}, NULL};
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(after_relu("LogSoftmax", &in, NULL, 0), data, 3, out, info, 1, &err),
                 Q8_OK, "%s", err.msg);
    float *r = malloc(sizeof(float) * 650), *want = malloc(sizeof(float) * 650);
    memcpy(r, x, sizeof(float) * 650);
    relu_buf(r, 650);
    ref_softmax(r, want, 13, 50, 1, true);
    q8t_assert_close(out[0], want, 650, 2e-6f, 2e-6f, "logsoftmax after relu");
    free(out[0]);
    free(r);
    free(want);
    free(x);
}

Test(softmax, errors) {
    float x[6] = {0};
    const void *data[] = {x};
    sm_case c = {"Softmax", 2, {2, 3}, 2, true, 13};
    EXPECT_ERR(sm_build(&c), data, "axis 2 is out of range for rank 2");
    c.axis = -3;
    c.op = "LogSoftmax";
    EXPECT_ERR(sm_build(&c), data, "axis -3 is out of range");
    q8t_in in = {"x", Q8_I64, 1, {6}, NULL};
    EXPECT_ERR(q8t_graph1("Softmax", &in, 1, 1), data, "only float32 is supported");
}

/* ------------------------------------------------------ LayerNormalization */

typedef struct ln_case {
    int nd;
    int64_t dims[5];
    int64_t axis;
    bool has_axis;
    float eps;
    int snd, bnd; /* ranks of Scale and B (bnd -1: no B) */
    int64_t sdims[5], bdims[5];
    const float *scale, *bias;
    int n_out;
} ln_case;

static q8_graph *ln_build(const void *ctx) {
    const ln_case *c = ctx;
    q8t_in ins[3] = {{"x", Q8_F32, c->nd, {0}, NULL},
                     {"scale", Q8_F32, c->snd, {0}, c->scale},
                     {"b", Q8_F32, c->bnd, {0}, c->bias}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    memcpy(ins[1].dims, c->sdims, sizeof c->sdims);
    memcpy(ins[2].dims, c->bdims, sizeof c->bdims);
    q8_graph *g = q8t_graph1("LayerNormalization", ins, c->bnd >= 0 ? 3 : 2, c->n_out);
    if (c->has_axis) q8t_attr_int(g, "axis", c->axis);
    q8t_attr_float(g, "epsilon", c->eps);
    return g;
}

/* Value of a right-aligned broadcast tensor at normalized element j. */
static float bval(const float *v, int vnd, const int64_t *vd, const int64_t *nd_dims, int nnd,
                  int64_t j) {
    int64_t off = 0, mul = 1;
    for (int i = nnd - 1; i >= 0; i--) {
        int64_t c = j % nd_dims[i];
        j /= nd_dims[i];
        int vi = vnd - (nnd - i);
        if (vi < 0) continue;
        if (vd[vi] != 1) off += c * mul;
        mul *= vd[vi];
    }
    return v[off];
}

static void ln_check(ln_case c, uint64_t seed) {
    int64_t n = q8t_numel(c.dims, c.nd);
    int64_t ax = c.has_axis ? c.axis : -1;
    if (ax < 0) ax += c.nd;
    int64_t rows = q8t_numel(c.dims, (int)ax), len = n / rows;
    float *x = rand_buf(seed, n, -3, 5);
    float *sc = rand_buf(seed + 1, q8t_numel(c.sdims, c.snd), -2, 2);
    float *bi = c.bnd >= 0 ? rand_buf(seed + 2, q8t_numel(c.bdims, c.bnd), -1, 1) : NULL;
    c.scale = sc;
    c.bias = bi;
    float *want = malloc(sizeof(float) * (size_t)n), *wm = malloc(sizeof(float) * (size_t)rows);
    float *wi = malloc(sizeof(float) * (size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        double m = 0, v = 0;
        for (int64_t j = 0; j < len; j++) m += x[r * len + j];
        m /= (double)len;
        for (int64_t j = 0; j < len; j++) v += (x[r * len + j] - m) * (x[r * len + j] - m);
        v /= (double)len;
        double inv = 1 / sqrt(v + c.eps);
        for (int64_t j = 0; j < len; j++) {
            double s = bval(sc, c.snd, c.sdims, c.dims + ax, c.nd - (int)ax, j);
            double b = bi ? bval(bi, c.bnd, c.bdims, c.dims + ax, c.nd - (int)ax, j) : 0;
            want[r * len + j] = (float)((x[r * len + j] - m) * inv * s + b);
        }
        wm[r] = (float)m;
        wi[r] = (float)inv;
    }
    const void *data[] = {x};
    void *out[3];
    q8_tensor_info info[3];
    run2((q8t_built){ln_build, &c}, data, c.n_out, out, info);
    q8t_assert_shape(&info[0], c.dims, c.nd);
    q8t_assert_close(out[0], want, n, 1e-5f, 1e-5f, "layernorm Y");
    if (c.n_out > 1) {
        int64_t md[5];
        for (int i = 0; i < c.nd; i++) md[i] = i < ax ? c.dims[i] : 1;
        q8t_assert_shape(&info[1], md, c.nd);
        q8t_assert_close(out[1], wm, rows, 1e-5f, 1e-6f, "layernorm Mean");
        if (c.n_out > 2) {
            q8t_assert_shape(&info[2], md, c.nd);
            q8t_assert_close(out[2], wi, rows, 1e-5f, 1e-6f, "layernorm InvStdDev");
        }
    }
    for (int k = 0; k < c.n_out; k++) free(out[k]);
    free(x);
    free(sc);
    free(bi);
    free(want);
    free(wm);
    free(wi);
}

Test(layernorm, matches_reference) {
    ln_check((ln_case){.nd = 3,
                       .dims = {2, 13, 9},
                       .eps = 1e-5f,
                       .snd = 1,
                       .sdims = {9},
                       .bnd = 1,
                       .bdims = {9},
                       .n_out = 3},
             1);
    ln_check((ln_case){.nd = 4,
                       .dims = {2, 3, 9, 7},
                       .axis = 1,
                       .has_axis = true,
                       .eps = 1e-3f,
                       .snd = 3,
                       .sdims = {3, 9, 7},
                       .bnd = 3,
                       .bdims = {3, 9, 7},
                       .n_out = 3},
             2);
    ln_check((ln_case){.nd = 4,
                       .dims = {2, 3, 9, 7},
                       .axis = -2,
                       .has_axis = true,
                       .eps = 0.1f,
                       .snd = 2,
                       .sdims = {9, 1},
                       .bnd = 1,
                       .bdims = {7},
                       .n_out = 1},
             3);
    ln_check((ln_case){.nd = 2,
                       .dims = {5, 300},
                       .axis = 0,
                       .has_axis = true,
                       .eps = 1e-5f,
                       .snd = 1,
                       .sdims = {1},
                       .bnd = -1,
                       .n_out = 2},
             4);
    ln_check((ln_case){.nd = 3,
                       .dims = {4, 1, 1},
                       .axis = 1,
                       .has_axis = true,
                       .eps = 1e-5f,
                       .snd = 2,
                       .sdims = {1, 1},
                       .bnd = 2,
                       .bdims = {1, 1},
                       .n_out = 3},
             5);
    ln_check((ln_case){.nd = 2,
                       .dims = {3, 4},
                       .axis = 2,
                       .has_axis = true,
                       .eps = 1e-2f,
                       .snd = 0,
                       .bnd = 0,
                       .n_out = 3},
             6); /* axis == rank: nothing normalized */
}

Test(layernorm, errors) {
    float x[12] = {0}, s[12] = {1};
    const void *data[] = {x};
    ln_case c = {.nd = 2,
                 .dims = {3, 4},
                 .axis = 3,
                 .has_axis = true,
                 .snd = 1,
                 .sdims = {4},
                 .bnd = -1,
                 .scale = s,
                 .n_out = 1};
    EXPECT_ERR(ln_build(&c), data, "axis 3 is out of range for rank 2");
    c.axis = -1;
    c.sdims[0] = 3;
    EXPECT_ERR(ln_build(&c), data, "Scale has shape 3, which does not broadcast to 4");
    c.sdims[0] = 4;
    q8_graph *g = ln_build(&c);
    q8t_attr_int(g, "stash_type", 11);
    EXPECT_ERR(g, data, "stash_type 11 is not supported");
}

/* ------------------------------------------------------------------ Reduce */

static const char *const red_ops[] = {
    "ReduceSum", "ReduceMean", "ReduceMax",       "ReduceMin",    "ReduceProd",
    "ReduceL1",  "ReduceL2",   "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};

typedef struct red_case {
    const char *op;
    q8_dtype dt;
    int nd;
    int64_t dims[6];
    int na; /* -1: no axes at all */
    int64_t axes[6];
    bool axes_input; /* as a constant second input, else attribute */
    int keep;        /* -1: attribute absent (default 1) */
    int noop;
    int opset;
} red_case;

static q8_graph *red_build(const void *ctx) {
    const red_case *c = ctx;
    q8t_in ins[2] = {{"x", c->dt, c->nd, {0}, NULL},
                     {"axes", Q8_I64, 1, {c->na > 0 ? c->na : 0}, c->axes}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    q8_graph *g = q8t_graph1(c->op, ins, c->axes_input && c->na >= 0 ? 2 : 1, 1);
    g->opset = c->opset ? c->opset : 13;
    if (!c->axes_input && c->na >= 0) q8t_attr_ints(g, "axes", c->axes, c->na);
    if (c->keep >= 0) q8t_attr_int(g, "keepdims", c->keep);
    if (c->noop) q8t_attr_int(g, "noop_with_empty_axes", 1);
    return g;
}

/* Reference: every input element adds into its output slot, in double. */
static void red_check(red_case c, uint64_t seed) {
    int64_t n = q8t_numel(c.dims, c.nd);
    int k = 0;
    while (strcmp(red_ops[k], c.op)) k++;
    float lo = k == 4 ? 0.8f : k == 8 ? 0.1f : -2, hi = k == 4 ? 1.2f : 2;
    float *x = rand_buf(seed, n, lo, hi);
    int64_t *xi = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    int32_t *x32 = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    double *xd = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        xd[i] = x[i];
        xi[i] = (int64_t)(x[i] * 1000) * (k == 4 ? 1 : 1000003);
        if (k == 4) xi[i] = (int64_t)(x[i] * 3);
        x32[i] = (int32_t)xi[i];
    }
    bool red[6] = {false};
    for (int i = 0; i < c.na; i++) red[c.axes[i] < 0 ? c.axes[i] + c.nd : c.axes[i]] = true;
    bool noop = c.na <= 0 && c.noop;
    if (c.na <= 0 && !noop)
        for (int d = 0; d < c.nd; d++) red[d] = true;
    int64_t od[6], odk[6];
    int ond = 0;
    bool keep = c.keep != 0;
    for (int d = 0; d < c.nd; d++) {
        odk[d] = red[d] ? 1 : c.dims[d];
        if (!red[d] || keep) od[ond++] = odk[d];
    }
    int64_t on = q8t_numel(odk, c.nd);
    double *acc = calloc((size_t)(on ? on : 1), sizeof(double)),
           *mx = malloc(sizeof(double) * (size_t)(on + 1));
    double *mn = malloc(sizeof(double) * (size_t)(on + 1)),
           *pr = malloc(sizeof(double) * (size_t)(on + 1));
    double *sa = calloc((size_t)(on + 1), sizeof(double)),
           *sq = calloc((size_t)(on + 1), sizeof(double));
    double *se = calloc((size_t)(on + 1), sizeof(double));
    int64_t *ia = calloc((size_t)(on + 1), sizeof(int64_t)),
            *imx = malloc(sizeof(int64_t) * (size_t)(on + 1));
    int64_t *imn = malloc(sizeof(int64_t) * (size_t)(on + 1)),
            *ipr = malloc(sizeof(int64_t) * (size_t)(on + 1));
    for (int64_t o = 0; o < on; o++) {
        mx[o] = -INFINITY;
        mn[o] = INFINITY;
        pr[o] = 1;
        imx[o] = c.dt == Q8_I32 ? INT32_MIN : INT64_MIN;
        imn[o] = c.dt == Q8_I32 ? INT32_MAX : INT64_MAX;
        ipr[o] = 1;
    }
    int64_t cnt = on ? n / on : 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, o = 0, mul = 1;
        for (int d = c.nd - 1; d >= 0; d--) {
            int64_t cd = rem % c.dims[d];
            rem /= c.dims[d];
            if (!red[d]) o += cd * mul;
            mul *= odk[d];
        }
        double v = x[i];
        acc[o] += v;
        mx[o] = v > mx[o] ? v : mx[o];
        mn[o] = v < mn[o] ? v : mn[o];
        pr[o] *= v;
        sa[o] += fabs(v);
        sq[o] += v * v;
        se[o] += exp(v);
        int64_t iv = c.dt == Q8_I32 ? x32[i] : xi[i];
        ia[o] = (int64_t)((uint64_t)ia[o] + (uint64_t)iv); /* wraps like the kernel */
        imx[o] = iv > imx[o] ? iv : imx[o];
        imn[o] = iv < imn[o] ? iv : imn[o];
        ipr[o] = (int64_t)((uint64_t)ipr[o] * (uint64_t)iv);
    }
    const void *data[] = {c.dt == Q8_F32   ? (void *)x
                          : c.dt == Q8_F64 ? (void *)xd
                          : c.dt == Q8_I32 ? (void *)x32
                                           : (void *)xi};
    void *out[1];
    q8_tensor_info info[1];
    run2((q8t_built){red_build, &c}, data, 1, out, info);
    if (noop) {
        q8t_assert_shape(&info[0], c.dims, c.nd);
        cr_assert(memcmp(out[0], data[0], (size_t)n * q8_dtype_size(c.dt)) == 0, "noop copies");
    } else {
        q8t_assert_shape(&info[0], od, ond);
        cr_assert_eq(info[0].dtype, c.dt);
        for (int64_t o = 0; o < on; o++) {
            double w[] = {acc[o], acc[o] / (double)cnt, mx[o], mn[o],       pr[o],
                          sa[o],  sqrt(sq[o]),          sq[o], log(acc[o]), log(se[o])};
            if (c.dt == Q8_F64) { /* double all the way: far tighter than a float result */
                double want = w[k], got = ((double *)out[0])[o];
                cr_assert(fabs(got - want) <= 1e-12 * (1 + fabs(want)) ||
                              (isnan(want) && isnan(got)) || (isinf(want) && got == want),
                          "%s float64 [%lld]: got %.17g, want %.17g", c.op, (long long)o, got,
                          want);
                continue;
            }
            if (c.dt != Q8_F32) {
                int64_t want = k == 0 ? ia[o] : k == 2 ? imx[o] : k == 3 ? imn[o] : ipr[o];
                int64_t got = c.dt == Q8_I32 ? ((int32_t *)out[0])[o] : ((int64_t *)out[0])[o];
                if (c.dt == Q8_I32) want = (int32_t)want;
                cr_assert_eq(got, want, "%s int [%lld]: %lld vs %lld", c.op, (long long)o,
                             (long long)got, (long long)want);
                continue;
            }
            float want = (float)w[k], got = ((float *)out[0])[o];
            cr_assert(fabsf(got - want) <= 1e-5f + 1e-5f * fabsf(want) ||
                          (isnan(want) && isnan(got)) || (isinf(want) && got == want),
                      "%s [%lld]: got %.9g, want %.9g", c.op, (long long)o, got, want);
        }
    }
    free(out[0]);
    free(x);
    free(xi);
    free(x32);
    free(xd);
    free(acc);
    free(mx);
    free(mn);
    free(pr);
    free(sa);
    free(sq);
    free(se);
    free(ia);
    free(imx);
    free(imn);
    free(ipr);
}

Test(reduce, all_ops_axes_keepdims) {
    uint64_t seed = 1000;
    static const struct {
        int nd;
        int64_t dims[6];
        int na;
        int64_t axes[6];
    } shapes[] = {
        {4, {2, 13, 9, 7}, 1, {1}},
        {4, {2, 13, 9, 7}, 2, {0, 2}},
        {4, {2, 13, 9, 7}, 1, {-1}},
        {4, {2, 13, 9, 7}, 2, {3, 1}},
        {4, {2, 13, 9, 7}, -1, {0}},
        {4, {2, 13, 9, 7}, 3, {-4, 1, 2}},
        {1, {5}, 1, {0}},
        {3, {3, 1, 4}, 1, {1}},
        {2, {1, 1}, 1, {0}},
        {3, {2, 300, 257}, 1, {1}},
        {2, {3, 1001}, 1, {1}},
        {5, {2, 1, 3, 1, 5}, 2, {1, 2}},
        {3, {2, 0, 3}, 1, {1}},
        {2, {0, 3}, 1, {1}},
    };
    for (int k = 0; k < 10; k++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int keep = 0; keep < 3; keep++) { /* 2: float64, keepdims 1 */
                red_case c = {.op = red_ops[k],
                              .dt = keep == 2 ? Q8_F64 : Q8_F32,
                              .nd = shapes[s].nd,
                              .na = shapes[s].na,
                              .keep = keep != 0,
                              .opset = 13};
                memcpy(c.dims, shapes[s].dims, sizeof c.dims);
                memcpy(c.axes, shapes[s].axes, sizeof c.axes);
                if (k == 0) c.axes_input = true; /* ReduceSum 13: axes is an input */
                if (!strcmp(c.op, "ReduceLogSum") && c.dims[1] == 0) continue;
                red_check(c, seed++);
            }
}

Test(reduce, opsets_and_noop) {
    /* ReduceSum before 13: attribute; ReduceMean 18: input */
    red_check((red_case){.op = "ReduceSum",
                         .dt = Q8_F32,
                         .nd = 3,
                         .dims = {4, 5, 6},
                         .na = 1,
                         .axes = {-2},
                         .keep = -1,
                         .opset = 11},
              1);
    red_check((red_case){.op = "ReduceMean",
                         .dt = Q8_F32,
                         .nd = 3,
                         .dims = {4, 5, 6},
                         .na = 2,
                         .axes = {0, 2},
                         .axes_input = true,
                         .keep = 0,
                         .opset = 18},
              2);
    red_check((red_case){.op = "ReduceMax",
                         .dt = Q8_F32,
                         .nd = 3,
                         .dims = {4, 5, 6},
                         .na = 0,
                         .axes_input = true,
                         .keep = 1,
                         .noop = 1,
                         .opset = 18},
              3);
    /* empty axes input: noop copies, otherwise everything is reduced */
    red_check((red_case){.op = "ReduceSum",
                         .dt = Q8_F32,
                         .nd = 3,
                         .dims = {4, 5, 6},
                         .na = 0,
                         .axes_input = true,
                         .keep = 1,
                         .noop = 1},
              4);
    red_check((red_case){.op = "ReduceSum",
                         .dt = Q8_F32,
                         .nd = 3,
                         .dims = {4, 5, 6},
                         .na = 0,
                         .axes_input = true,
                         .keep = 0},
              5);
    red_check((red_case){.op = "ReduceSum",
                         .dt = Q8_F32,
                         .nd = 3,
                         .dims = {4, 5, 6},
                         .na = -1,
                         .keep = 0,
                         .noop = 1},
              6);
}

Test(reduce, integers) {
    const char *ops[] = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"};
    for (int k = 0; k < 4; k++)
        for (int t = 0; t < 2; t++) {
            red_check((red_case){.op = ops[k],
                                 .dt = t ? Q8_I32 : Q8_I64,
                                 .nd = 3,
                                 .dims = {2, 3, 4},
                                 .na = 1,
                                 .axes = {1},
                                 .axes_input = k == 0,
                                 .keep = 0},
                      50 + (uint64_t)k);
            red_check((red_case){.op = ops[k],
                                 .dt = t ? Q8_I32 : Q8_I64,
                                 .nd = 1,
                                 .dims = {3},
                                 .na = -1,
                                 .keep = 1},
                      60 + (uint64_t)k);
            red_check((red_case){.op = ops[k],
                                 .dt = t ? Q8_I32 : Q8_I64,
                                 .nd = 2,
                                 .dims = {3, 0},
                                 .na = 1,
                                 .axes = {1},
                                 .axes_input = k == 0,
                                 .keep = 1},
                      70);
        }
}

Test(reduce, nan_propagates_in_max) {
    float x[6] = {1, NAN, 3, -1, -2, -3};
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    red_case c = {
        .op = "ReduceMax", .dt = Q8_F32, .nd = 2, .dims = {2, 3}, .na = 1, .axes = {1}, .keep = 0};
    run2((q8t_built){red_build, &c}, data, 1, out, info);
    cr_assert(isnan(((float *)out[0])[0]));
    cr_assert_eq(((float *)out[0])[1], -1.0f);
    free(out[0]);
}

Test(reduce, errors) {
    float x[24] = {0};
    const void *data[] = {x};
    red_case c = {.op = "ReduceMean",
                  .dt = Q8_F32,
                  .nd = 3,
                  .dims = {2, 3, 4},
                  .na = 1,
                  .axes = {3},
                  .keep = 1};
    EXPECT_ERR(red_build(&c), data, "axis 3 is out of range for rank 3");
    c.na = 2;
    c.axes[0] = 1;
    c.axes[1] = -2;
    EXPECT_ERR(red_build(&c), data, "axis -2 is given twice");
    c.dt = Q8_I64;
    c.na = 1;
    EXPECT_ERR(red_build(&c), data, "input is int64, supported: float32, float64");
    /* axes computed at run time: not supported */
    q8t_in ins[2] = {{"x", Q8_F32, 3, {2, 3, 4}, NULL}, {"axes", Q8_I64, 1, {1}, NULL}};
    int64_t ax[1] = {1};
    const void *data2[] = {x, ax};
    EXPECT_ERR(q8t_graph1("ReduceSum", ins, 2, 1), data2, "('axes') must be a constant");
}

/* ------------------------------------------------------------------ Resize */

typedef struct rs_case {
    const char *op; /* "Resize" or "Upsample" */
    q8_dtype dt;
    int nd;
    int64_t dims[5];
    int opset;
    const char *mode, *ctm, *nearest; /* NULL: attribute absent */
    float cubic_a;
    bool has_a;
    int exclude;
    bool use_sizes;
    float scales[5];
    int64_t sizes[5];
    float roi[10];
    float extrap;
    const char *impl; /* _resize_impl: "portable" keeps the AVX-512 pass along W out */
} rs_case;

static q8_graph *rs_build(const void *ctx) {
    const rs_case *c = ctx;
    q8t_in ins[4] = {{"x", c->dt, c->nd, {0}, NULL}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    int nin;
    static const float none[1] = {0};
    bool upsample7 = !strcmp(c->op, "Upsample") && c->opset < 9;
    if (upsample7) {
        nin = 1;
    } else if (c->opset < 11) {
        ins[1] = (q8t_in){"scales", Q8_F32, 1, {c->nd}, c->scales};
        nin = 2;
    } else {
        bool crop = c->ctm && !strcmp(c->ctm, "tf_crop_and_resize");
        ins[1] = crop ? (q8t_in){"roi", Q8_F32, 1, {2 * c->nd}, c->roi}
                      : (q8t_in){c->opset < 13 ? "roi" : NULL, Q8_F32, 1, {0}, none};
        if (c->use_sizes) {
            ins[2] = (q8t_in){c->opset < 13 ? "scales" : NULL, Q8_F32, 1, {0}, none};
            ins[3] = (q8t_in){"sizes", Q8_I64, 1, {c->nd}, c->sizes};
            nin = 4;
        } else {
            ins[2] = (q8t_in){"scales", Q8_F32, 1, {c->nd}, c->scales};
            nin = 3;
        }
    }
    q8_graph *g = q8t_graph1(c->op, ins, nin, 1);
    g->opset = c->opset;
    if (upsample7) q8t_attr_floats(g, "scales", c->scales, c->nd);
    if (c->mode) q8t_attr_str(g, "mode", c->mode);
    if (c->ctm) q8t_attr_str(g, "coordinate_transformation_mode", c->ctm);
    if (c->nearest) q8t_attr_str(g, "nearest_mode", c->nearest);
    if (c->has_a) q8t_attr_float(g, "cubic_coeff_a", c->cubic_a);
    if (c->exclude) q8t_attr_int(g, "exclude_outside", 1);
    if (c->extrap != 0) q8t_attr_float(g, "extrapolation_value", c->extrap);
    if (c->impl) q8t_attr_str(g, "_resize_impl", c->impl);
    return g;
}

/* The n indices in [0, limit) nearest to x, preferring smaller ones, sorted
 * (get_neighbor_idxes of the ONNX reference). */
static void nearest_idxes(double x, int n, int64_t limit, int64_t *out) {
    int64_t best[4];
    int got = 0;
    int64_t f = (int64_t)floor(x);
    for (int64_t i = f - n - 1; i <= f + n + 1; i++) {
        if (i < 0 || i >= limit) continue;
        /* insert, keeping the n best by (|x - i|, i) */
        int pos = got;
        while (pos > 0 && (fabs(x - (double)best[pos - 1]) > fabs(x - (double)i))) pos--;
        if (pos >= n) continue;
        for (int j = (got < n ? got : n - 1); j > pos; j--) best[j] = best[j - 1];
        best[pos] = i;
        if (got < n) got++;
    }
    for (int a = 0; a < got; a++) /* sort by index */
        for (int b = a + 1; b < got; b++)
            if (best[b] < best[a]) {
                int64_t t = best[a];
                best[a] = best[b];
                best[b] = t;
            }
    memcpy(out, best, sizeof(int64_t) * (size_t)got);
}

/* Per dim and output index: taps (unclamped index, coefficient) per the
 * ONNX reference; returns the count, or -1 when outside the crop. */
static int ref_taps(const rs_case *c, int d, int64_t o, int64_t *idx, double *cf) {
    int64_t in = c->dims[d];
    double scale = c->use_sizes ? (double)c->sizes[d] / (double)in : (double)c->scales[d];
    int64_t out_len = c->use_sizes ? c->sizes[d] : (int64_t)floor((double)in * scale);
    const char *mode = c->mode ? c->mode : "nearest";
    bool old = c->opset < 11 || !strcmp(c->op, "Upsample");
    double x;
    if (old) {
        x = (double)o / scale;
        if (!strcmp(mode, "nearest")) {
            int64_t i = scale < 1 ? (int64_t)ceil(x) : (int64_t)floor(x);
            idx[0] = i;
            cf[0] = 1;
            return 1;
        }
    } else {
        const char *ctm = c->ctm ? c->ctm : "half_pixel";
        double ow = scale * (double)in;
        if (!strcmp(ctm, "align_corners"))
            x = ow == 1 ? 0 : (double)o * (double)(in - 1) / (ow - 1);
        else if (!strcmp(ctm, "asymmetric"))
            x = (double)o / scale;
        else if (!strcmp(ctm, "tf_half_pixel_for_nn"))
            x = ((double)o + 0.5) / scale;
        else if (!strcmp(ctm, "pytorch_half_pixel"))
            x = out_len > 1 ? ((double)o + 0.5) / scale - 0.5 : 0; /* the spec's 0 */
        else if (!strcmp(ctm, "tf_crop_and_resize")) {
            double rs = c->roi[d], re = c->roi[c->nd + d];
            x = ow == 1 ? (re - rs) * (double)(in - 1) / 2
                        : (double)o * (re - rs) * (double)(in - 1) / (ow - 1);
            x += rs * (double)(in - 1);
            if (x < 0 || x > (double)(in - 1)) return -1;
        } else
            x = ((double)o + 0.5) / scale - 0.5;
    }
    double ratio = x == floor(x) ? 1 : x - floor(x), A = c->has_a ? c->cubic_a : -0.75;
    int n;
    if (!strcmp(mode, "nearest")) {
        const char *nm = c->nearest ? c->nearest : "round_prefer_floor";
        n = 2;
        if (ratio == 1)
            cf[0] = 0, cf[1] = 1;
        else if (!strcmp(nm, "round_prefer_floor"))
            cf[0] = ratio <= 0.5, cf[1] = ratio > 0.5;
        else if (!strcmp(nm, "round_prefer_ceil"))
            cf[0] = ratio < 0.5, cf[1] = ratio >= 0.5;
        else if (!strcmp(nm, "floor"))
            cf[0] = 1, cf[1] = 0;
        else
            cf[0] = 0, cf[1] = 1;
    } else if (!strcmp(mode, "linear")) {
        n = 2;
        cf[0] = 1 - ratio;
        cf[1] = ratio;
    } else {
        n = 4;
        double r = ratio;
        cf[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
        cf[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
        cf[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
        cf[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
    }
    int pad = (n + 1) / 2;
    nearest_idxes(x + pad, n, in + 2 * pad, idx);
    for (int k = 0; k < n; k++) idx[k] -= pad;
    if (c->exclude) {
        double s = 0;
        for (int k = 0; k < n; k++) {
            if (idx[k] < 0 || idx[k] >= in) cf[k] = 0;
            s += cf[k];
        }
        for (int k = 0; k < n; k++) cf[k] /= s;
    }
    return n;
}

static void rs_check(rs_case c, uint64_t seed) {
    if (!c.dt) c.dt = Q8_F32;
    if (!c.opset) c.opset = 13;
    int nd = c.nd;
    int64_t n = q8t_numel(c.dims, nd), od[5];
    for (int d = 0; d < nd; d++) {
        double len = (double)c.dims[d];
        if (c.ctm && !strcmp(c.ctm, "tf_crop_and_resize") && !c.use_sizes)
            len *= (double)(c.roi[nd + d] - c.roi[d]);
        od[d] = c.use_sizes ? c.sizes[d] : (int64_t)floor(len * (double)c.scales[d]);
    }
    int64_t on = q8t_numel(od, nd);
    float *x = rand_buf(seed, n, -10, 10);
    int8_t *x8 = malloc((size_t)n + 1);
    uint8_t *xu8 = malloc((size_t)n + 1);
    int64_t *x64 = malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        x8[i] = (int8_t)(x[i] * 12);
        xu8[i] = (uint8_t)(x[i] * 12 + 128);
        x64[i] = (int64_t)(x[i] * 1e9);
    }
    const void *data[] = {c.dt == Q8_F32  ? (void *)x
                          : c.dt == Q8_I8 ? (void *)x8
                          : c.dt == Q8_U8 ? (void *)xu8
                                          : (void *)x64};
    /* int8 / uint8 linear: integer weights (resize.h), checked exactly */
    bool ilin = (c.dt == Q8_I8 || c.dt == Q8_U8) && c.mode && !strcmp(c.mode, "linear");
    void *out[1];
    q8_tensor_info info[1];
    run2((q8t_built){rs_build, &c}, data, 1, out, info);
    q8t_assert_shape(&info[0], od, nd);
    for (int64_t o = 0; o < on; o++) {
        int64_t oc[5], rem = o;
        for (int d = nd - 1; d >= 0; d--) {
            oc[d] = rem % od[d];
            rem /= od[d];
        }
        int64_t idx[5][4];
        double cf[5][4];
        int nt[5];
        bool outside = false;
        for (int d = 0; d < nd; d++) {
            nt[d] = ref_taps(&c, d, oc[d], idx[d], cf[d]);
            if (nt[d] < 0) outside = true;
        }
        double want = c.extrap;
        int64_t want_i = 0;
        int shift = 0;
        if (!outside) {
            want = 0;
            int64_t combos = 1;
            for (int d = 0; d < nd; d++) combos *= nt[d];
            for (int64_t k = 0; k < combos; k++) {
                int64_t r2 = k, flat = 0;
                double w = 1;
                for (int d = nd - 1; d >= 0; d--) {
                    int t = (int)(r2 % nt[d]);
                    r2 /= nt[d];
                    w *= cf[d][t];
                    (void)flat;
                }
                if (w == 0) continue;
                r2 = k;
                int tsel[5];
                for (int d = nd - 1; d >= 0; d--) {
                    tsel[d] = (int)(r2 % nt[d]);
                    r2 /= nt[d];
                }
                for (int d = 0; d < nd; d++) {
                    int64_t i = idx[d][tsel[d]];
                    i = i < 0 ? 0 : i >= c.dims[d] ? c.dims[d] - 1 : i;
                    flat = flat * c.dims[d] + i;
                }
                double xv = c.dt == Q8_F32  ? x[flat]
                            : c.dt == Q8_I8 ? x8[flat]
                            : c.dt == Q8_U8 ? xu8[flat]
                                            : (double)x64[flat];
                want += w * xv;
                if (ilin) { /* a dim whose taps are (1, 0) or (0, 1) is a copy */
                    int64_t wi = 1;
                    for (int d = 0; d < nd; d++) {
                        if (cf[d][1] == 0 || cf[d][1] == 1) {
                            wi *= cf[d][tsel[d]] != 0;
                            continue;
                        }
                        int64_t w1 = lrintf((float)cf[d][1] * 2048.0f);
                        wi *= tsel[d] ? w1 : 2048 - w1;
                    }
                    want_i += wi * (int64_t)xv;
                }
            }
            for (int d = 0; ilin && d < nd; d++) shift += cf[d][1] == 0 || cf[d][1] == 1 ? 0 : 11;
        }
        double got = c.dt == Q8_F32  ? ((float *)out[0])[o]
                     : c.dt == Q8_I8 ? ((int8_t *)out[0])[o]
                     : c.dt == Q8_U8 ? ((uint8_t *)out[0])[o]
                                     : (double)((int64_t *)out[0])[o];
        if (ilin) {
            /* want_i / 2^shift, to nearest, ties to even */
            int64_t q = want_i >> shift, r = want_i - q * ((int64_t)1 << shift);
            int64_t half = shift ? (int64_t)1 << (shift - 1) : 1;
            if (shift && (r > half || (r == half && (q & 1)))) q++;
            cr_assert_eq((int64_t)got, q, "int linear %s, output %lld: got %g, want %lld",
                         c.ctm ? c.ctm : "-", (long long)o, got, (long long)q);
            /* and within half a step (plus the weights' 2^-12) of the real value */
            cr_assert(fabs(got - want) <= 0.5 + 2 * 255.0 / 4096, "output %lld: %g vs %.6f",
                      (long long)o, got, want);
            continue;
        }
        cr_assert(fabs(got - want) <= 2e-5 * (1 + fabs(want)),
                  "%s %s/%s/%s opset %d, output %lld: got %.9g, want %.9g", c.op,
                  c.mode ? c.mode : "-", c.ctm ? c.ctm : "-", c.nearest ? c.nearest : "-", c.opset,
                  (long long)o, got, want);
    }
    free(out[0]);
    free(x);
    free(x8);
    free(xu8);
    free(x64);
}

static const char *const rs_ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn"};
static const char *const rs_nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};
static const float rs_factors[] = {2.0f, 0.5f, 1.7f, 0.6f};

/* Every factor (and 7->9, 5->9 by sizes) for one mode/ctm/nearest setting. */
static void rs_factors_check(rs_case c, uint64_t seed) {
    c.nd = 4;
    int64_t d[4] = {1, 2, 7, 5};
    memcpy(c.dims, d, sizeof d);
    for (size_t f = 0; f < sizeof rs_factors / sizeof rs_factors[0]; f++) {
        float s[4] = {1, 1, rs_factors[f], rs_factors[f]};
        memcpy(c.scales, s, sizeof s);
        c.use_sizes = false;
        rs_check(c, seed + f);
    }
    int64_t sz[4] = {1, 2, 9, 9};
    memcpy(c.sizes, sz, sizeof sz);
    c.use_sizes = true;
    rs_check(c, seed + 9);
    int64_t sz2[4] = {1, 2, 3, 1};
    memcpy(c.sizes, sz2, sizeof sz2);
    rs_check(c, seed + 10);
}

Test(resize, nearest_all_modes) {
    for (int t = 0; t < 5; t++)
        for (int m = 0; m < 4; m++)
            rs_factors_check(
                (rs_case){
                    .op = "Resize", .mode = "nearest", .ctm = rs_ctms[t], .nearest = rs_nearest[m]},
                100 + (uint64_t)(t * 4 + m) * 16);
    rs_factors_check((rs_case){.op = "Resize"}, 999); /* all defaults */
}

Test(resize, linear_and_cubic) {
    for (int t = 0; t < 5; t++) {
        rs_factors_check((rs_case){.op = "Resize", .mode = "linear", .ctm = rs_ctms[t]},
                         200 + (uint64_t)t * 16);
        rs_factors_check((rs_case){.op = "Resize", .mode = "cubic", .ctm = rs_ctms[t]},
                         300 + (uint64_t)t * 16);
        rs_factors_check((rs_case){.op = "Resize",
                                   .mode = "cubic",
                                   .ctm = rs_ctms[t],
                                   .cubic_a = -0.5f,
                                   .has_a = true,
                                   .exclude = 1},
                         400 + (uint64_t)t * 16);
    }
}

/* Linear: the AVX-512 pass along W (resize_x86.h: runs of 16 outputs whose
 * taps lie within 16 inputs), float32 and int8 / uint8, against the
 * portable loops, bit for bit:
 * random 2-D geometries (up and down by various factors, so some rows take
 * the runs and some not), every coordinate mode, widths around the 16-lane
 * runs, -0, infinities and NaN among the inputs (NaN out where NaN out). */
Test(resize, linear_same_bits_as_portable) {
    q8t_rng r = q8t_seed(81);
    const int64_t widths[] = {1, 2, 7, 15, 16, 17, 31, 33, 40, 80};
    /* 0.97 and 1.03: 16 outputs whose taps span 16 or 17 inputs, the runs' limit */
    const float factors[] = {2.0f, 1.5f, 3.0f, 1.1f, 4.0f, 1.0f, 0.5f, 0.97f, 1.03f, 2.5f};
    for (int it = 0; it < 120; it++) {
        /* float32, then int8 and uint8 (their integer pass along W) */
        q8_dtype dt = it < 80 ? Q8_F32 : it % 2 ? Q8_I8 : Q8_U8;
        rs_case c = {.op = "Resize", .dt = dt, .nd = 4, .opset = 13, .mode = "linear",
                     .ctm = rs_ctms[it % 4]};
        c.dims[0] = 1 + (int64_t)(q8t_next(&r) % 2);
        c.dims[1] = 1 + (int64_t)(q8t_next(&r) % 3);
        c.dims[2] = 1 + (int64_t)(q8t_next(&r) % 9);
        c.dims[3] = widths[q8t_next(&r) % 10];
        c.scales[0] = c.scales[1] = 1.0f;
        c.scales[2] = factors[q8t_next(&r) % 10];
        c.scales[3] = factors[q8t_next(&r) % 10];
        if (floorf((float)c.dims[3] * c.scales[3]) < 1 || floorf((float)c.dims[2] * c.scales[2]) < 1)
            c.scales[2] = c.scales[3] = 2.0f;
        int64_t n = q8t_numel(c.dims, 4);
        float *x = rand_buf(900 + (uint64_t)it, n, -10, 10);
        for (int64_t i = 0; i < n; i += 11) x[i] = (i / 11) % 4 == 0   ? -0.0f
                                                 : (i / 11) % 4 == 1 ? INFINITY
                                                 : (i / 11) % 4 == 2 ? -INFINITY
                                                                     : NAN;
        int8_t *x8 = malloc((size_t)(n > 0 ? n : 1));
        for (int64_t i = 0; i < n; i++) x8[i] = (int8_t)(i * 37 + it); /* every byte value */
        const void *data[] = {dt == Q8_F32 ? (const void *)x : (const void *)x8};
        void *out[2][1];
        q8_tensor_info info[2][1];
        for (int v = 0; v < 2; v++) {
            c.impl = v ? "portable" : "auto";
            run2((q8t_built){rs_build, &c}, data, 1, out[v], info[v]);
        }
        int64_t on = q8t_numel(info[0][0].dims, 4);
        cr_assert_eq(on, q8t_numel(info[1][0].dims, 4));
        if (dt != Q8_F32)
            cr_assert(memcmp(out[0][0], out[1][0], (size_t)on) == 0,
                      "case %d (%s, %lld x %lld, factors %g, %g, %s): not the portable bytes", it,
                      q8_dtype_name(dt), (long long)c.dims[2], (long long)c.dims[3], c.scales[2],
                      c.scales[3], c.ctm);
        for (int64_t i = 0; dt == Q8_F32 && i < on; i++) {
            float a = ((float *)out[0][0])[i], b = ((float *)out[1][0])[i];
            cr_assert(memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)),
                      "case %d (%lld x %lld, factors %g, %g, %s) [%lld]: %a against the "
                      "portable %a", it, (long long)c.dims[2], (long long)c.dims[3],
                      c.scales[2], c.scales[3], c.ctm, (long long)i, a, b);
        }
        free(out[0][0]);
        free(out[1][0]);
        free(x);
        free(x8);
    }
}

/* int8 / uint8 linear: every coordinate mode and factor, two dims at once,
 * one dim, a rank-3 input; three interpolated dims are refused (and so is
 * tf_half_pixel_for_nn here: it moves N and C by half a step as well). */
Test(resize, int8_linear) {
    for (int t = 0; t < 4; t++)
        for (int u = 0; u < 2; u++)
            rs_factors_check(
                (rs_case){.op = "Resize", .mode = "linear", .ctm = rs_ctms[t],
                          .dt = u ? Q8_U8 : Q8_I8},
                500 + (uint64_t)(t * 2 + u) * 16);
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .dt = Q8_I8,
                       .nd = 4,
                       .dims = {1, 3, 64, 60},
                       .scales = {1, 1, 2, 2}},
             11);
    /* rows wider than the separable path's buffers (2048) */
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .dt = Q8_U8,
                       .nd = 4,
                       .dims = {1, 1, 3, 1100},
                       .scales = {1, 1, 2, 2}},
             14);
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .dt = Q8_U8,
                       .nd = 3,
                       .dims = {2, 5, 6},
                       .scales = {1, 1.5f, 1}},
             12);
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .dt = Q8_I8,
                       .nd = 4,
                       .dims = {2, 3, 4, 5},
                       .scales = {1, 1.5f, 2, 1},
                       .ctm = "align_corners"},
             13);
    rs_case three = {.op = "Resize",
                     .mode = "linear",
                     .dt = Q8_I8,
                     .opset = 13,
                     .nd = 4,
                     .dims = {1, 3, 4, 5},
                     .scales = {1, 1.5f, 2, 2}};
    int8_t x8[60] = {0};
    const void *data[] = {x8};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_neq(q8t_run(rs_build(&three), data, 1, out, info, 1, &err), Q8_OK);
    cr_assert(strstr(err.msg, "interpolates at most 2 dims, this one 3"), "%s", err.msg);
}

Test(resize, other_dims_and_ranks) {
    /* channels resized too (linear over C, H, W) */
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .nd = 4,
                       .dims = {2, 3, 4, 5},
                       .scales = {1, 1.5f, 2, 1}},
             1);
    rs_check((rs_case){.op = "Resize",
                       .mode = "cubic",
                       .nd = 4,
                       .dims = {1, 3, 4, 5},
                       .scales = {1, 2, 0.5f, 1.7f}},
             2);
    rs_check((rs_case){.op = "Resize",
                       .mode = "nearest",
                       .nd = 4,
                       .dims = {2, 3, 4, 5},
                       .scales = {2, 0.5f, 1, 3}},
             3);
    /* 1D, 3D, 1x1 spatial */
    rs_check((rs_case){.op = "Resize", .mode = "linear", .nd = 1, .dims = {7}, .scales = {1.7f}},
             4);
    rs_check((rs_case){.op = "Resize",
                       .mode = "cubic",
                       .nd = 1,
                       .dims = {7},
                       .use_sizes = true,
                       .sizes = {9},
                       .ctm = "align_corners"},
             5);
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .nd = 5,
                       .dims = {1, 2, 3, 4, 5},
                       .scales = {1, 1, 2, 1.5f, 0.5f}},
             6);
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .nd = 4,
                       .dims = {1, 13, 1, 1},
                       .scales = {1, 1, 3, 2},
                       .ctm = "align_corners"},
             7);
    rs_check((rs_case){.op = "Resize",
                       .mode = "cubic",
                       .nd = 4,
                       .dims = {1, 2, 1, 1},
                       .use_sizes = true,
                       .sizes = {1, 2, 3, 4}},
             8);
    /* identity sizes */
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .nd = 4,
                       .dims = {1, 2, 9, 7},
                       .use_sizes = true,
                       .sizes = {1, 2, 9, 7}},
             9);
    /* large enough to split rows across threads */
    rs_check((rs_case){.op = "Resize",
                       .mode = "linear",
                       .nd = 4,
                       .dims = {1, 3, 64, 60},
                       .scales = {1, 1, 2, 2}},
             10);
}

Test(resize, crop_and_resize) {
    const char *modes[] = {"nearest", "linear", "cubic"};
    for (int m = 0; m < 3; m++) {
        rs_check((rs_case){.op = "Resize",
                           .mode = modes[m],
                           .ctm = "tf_crop_and_resize",
                           .nd = 4,
                           .dims = {1, 2, 7, 5},
                           .use_sizes = true,
                           .sizes = {1, 2, 5, 6},
                           .roi = {0, 0, 0.4f, 0.6f, 1, 1, 0.9f, 1.3f},
                           .extrap = 10},
                 1);
        rs_check((rs_case){.op = "Resize",
                           .mode = modes[m],
                           .ctm = "tf_crop_and_resize",
                           .nd = 4,
                           .dims = {1, 2, 7, 5},
                           .use_sizes = true,
                           .sizes = {1, 2, 3, 1},
                           .roi = {0, 0, -0.2f, 0.1f, 1, 1, 0.5f, 0.4f}},
                 2);
    }
}

Test(resize, old_opsets_and_upsample) {
    rs_check((rs_case){.op = "Resize",
                       .opset = 10,
                       .mode = "nearest",
                       .nd = 4,
                       .dims = {1, 2, 7, 5},
                       .scales = {1, 1, 2, 3}},
             1);
    rs_check((rs_case){.op = "Resize",
                       .opset = 10,
                       .mode = "nearest",
                       .nd = 4,
                       .dims = {1, 2, 7, 5},
                       .scales = {1, 1, 0.6f, 0.5f}},
             2);
    rs_check((rs_case){.op = "Resize",
                       .opset = 10,
                       .mode = "linear",
                       .nd = 4,
                       .dims = {1, 2, 7, 5},
                       .scales = {1, 1, 1.7f, 0.5f}},
             3);
    rs_check((rs_case){.op = "Resize",
                       .opset = 11,
                       .mode = "linear",
                       .nd = 4,
                       .dims = {1, 2, 7, 5},
                       .use_sizes = true,
                       .sizes = {1, 2, 9, 9}},
             4);
    rs_check((rs_case){.op = "Upsample",
                       .opset = 9,
                       .mode = "nearest",
                       .nd = 4,
                       .dims = {1, 2, 3, 4},
                       .scales = {1, 1, 2, 3}},
             5);
    rs_check((rs_case){.op = "Upsample",
                       .opset = 9,
                       .mode = "linear",
                       .nd = 4,
                       .dims = {1, 2, 3, 4},
                       .scales = {1, 1, 2, 1.5f}},
             6);
    rs_check((rs_case){.op = "Upsample",
                       .opset = 7,
                       .mode = "nearest",
                       .nd = 3,
                       .dims = {2, 3, 4},
                       .scales = {1, 2, 2}},
             7);
}

Test(resize, integer_nearest) {
    rs_check((rs_case){.op = "Resize",
                       .dt = Q8_I8,
                       .mode = "nearest",
                       .nd = 4,
                       .dims = {1, 3, 7, 5},
                       .scales = {1, 1, 1.7f, 0.6f}},
             1);
    rs_check((rs_case){.op = "Resize",
                       .dt = Q8_I64,
                       .mode = "nearest",
                       .nd = 2,
                       .dims = {7, 5},
                       .use_sizes = true,
                       .sizes = {9, 9},
                       .ctm = "asymmetric",
                       .nearest = "floor"},
             2);
    /* upsampling along H: output rows that repeat the row before them */
    rs_check((rs_case){.op = "Resize",
                       .dt = Q8_I8,
                       .mode = "nearest",
                       .nd = 4,
                       .dims = {2, 3, 5, 7},
                       .scales = {1, 1, 3, 2},
                       .ctm = "asymmetric",
                       .nearest = "floor"},
             3);
    rs_check((rs_case){.op = "Resize",
                       .dt = Q8_I64,
                       .mode = "nearest",
                       .nd = 4,
                       .dims = {1, 2, 4, 3},
                       .scales = {1, 2, 2.5f, 1}},
             4);
    /* 2x along W on rows long enough for the vectorized doubling (int8
     * and float), and an odd width */
    for (int k = 0; k < 3; k++)
        rs_check((rs_case){.op = "Resize",
                           .dt = k == 1 ? Q8_F32 : Q8_I8,
                           .mode = "nearest",
                           .nd = 4,
                           .dims = {1, 3, 5, k == 2 ? 37 : 70},
                           .scales = {1, 1, 2, 2},
                           .ctm = "asymmetric",
                           .nearest = "floor"},
                 5 + (uint64_t)k);
}

Test(resize, errors) {
    float x[70] = {0}, sc[4] = {1, 1, 2, 2};
    int64_t sz[4] = {1, 2, 14, 10};
    const void *data[] = {x};
    q8t_in ins[4] = {{"x", Q8_F32, 4, {1, 2, 7, 5}, NULL},
                     {NULL, Q8_F32, 1, {0}, NULL},
                     {NULL, Q8_F32, 1, {0}, NULL},
                     {NULL, Q8_I64, 1, {4}, NULL}};
    EXPECT_ERR(q8t_graph1("Resize", ins, 3, 1), data,
               "needs scales or sizes, and neither is given");
    ins[2] = (q8t_in){"scales", Q8_F32, 1, {4}, sc};
    ins[3] = (q8t_in){"sizes", Q8_I64, 1, {4}, sz};
    EXPECT_ERR(q8t_graph1("Resize", ins, 4, 1), data, "both scales and sizes are given");
    ins[2] = (q8t_in){"scales", Q8_F32, 1, {3}, sc};
    EXPECT_ERR(q8t_graph1("Resize", ins, 3, 1), data, "scales has 3 values, expected 4");
    ins[2].dims[0] = 4;
    sc[1] = 0;
    EXPECT_ERR(q8t_graph1("Resize", ins, 3, 1), data, "scales[1] is 0, must be > 0");
    sc[1] = 1;
    q8_graph *g = q8t_graph1("Resize", ins, 3, 1);
    q8t_attr_str(g, "mode", "bicubic");
    EXPECT_ERR(g, data, "mode is 'bicubic'");
    g = q8t_graph1("Resize", ins, 3, 1);
    q8t_attr_str(g, "coordinate_transformation_mode", "half");
    EXPECT_ERR(g, data, "coordinate_transformation_mode 'half' is unknown");
    g = q8t_graph1("Resize", ins, 3, 1);
    q8t_attr_str(g, "coordinate_transformation_mode", "tf_crop_and_resize");
    EXPECT_ERR(g, data, "tf_crop_and_resize needs the roi input");
    ins[0].dtype = Q8_I8;
    g = q8t_graph1("Resize", ins, 3, 1);
    q8t_attr_str(g, "mode", "cubic");
    EXPECT_ERR(g, data, "cubic float32");
    /* scales computed at run time */
    ins[0].dtype = Q8_F32;
    ins[2].data = NULL;
    const void *data2[] = {x, sc};
    EXPECT_ERR(q8t_graph1("Resize", ins, 3, 1), data2, "('scales') must be a constant");
}

Test(resize, opset18_axes_and_aspect_ratio) {
    float *x = rand_buf(3, 70, -1, 1);
    const void *data[] = {x};
    float sc2[2] = {2.0f, 1.7f}, sc4[4] = {1, 1, 2.0f, 1.7f};
    int64_t ax[2] = {2, 3};
    q8t_in ins[3] = {{"x", Q8_F32, 4, {1, 2, 7, 5}, NULL},
                     {NULL, Q8_F32, 1, {0}, NULL},
                     {"scales", Q8_F32, 1, {2}, sc2}};
    q8_error err = {0};
    void *o1[1], *o2[1];
    q8_tensor_info i1[1], i2[1];
    q8_graph *g = q8t_graph1("Resize", ins, 3, 1);
    g->opset = 18;
    q8t_attr_str(g, "mode", "linear");
    q8t_attr_ints(g, "axes", ax, 2);
    cr_assert_eq(q8t_run(g, data, 2, o1, i1, 1, &err), Q8_OK, "%s", err.msg);
    ins[2] = (q8t_in){"scales", Q8_F32, 1, {4}, sc4};
    g = q8t_graph1("Resize", ins, 3, 1);
    q8t_attr_str(g, "mode", "linear");
    cr_assert_eq(q8t_run(g, data, 2, o2, i2, 1, &err), Q8_OK, "%s", err.msg);
    int64_t want[4] = {1, 2, 14, 8};
    q8t_assert_shape(&i1[0], want, 4);
    cr_assert(memcmp(o1[0], o2[0], sizeof(float) * 2 * 14 * 8) == 0, "axes = the full scales");
    free(o1[0]);
    free(o2[0]);
    /* keep_aspect_ratio_policy with sizes {10, 20} on 7x5: one common scale */
    const char *pol[2] = {"not_larger", "not_smaller"};
    int64_t sizes[2] = {10, 20}, want_dims[2][4] = {{1, 2, 10, 7}, {1, 2, 28, 20}};
    for (int k = 0; k < 2; k++) {
        q8t_in in4[4] = {ins[0],
                         {NULL, Q8_F32, 1, {0}, NULL},
                         {NULL, Q8_F32, 1, {0}, NULL},
                         {"sizes", Q8_I64, 1, {2}, sizes}};
        g = q8t_graph1("Resize", in4, 4, 1);
        g->opset = 18;
        q8t_attr_ints(g, "axes", ax, 2);
        q8t_attr_str(g, "keep_aspect_ratio_policy", pol[k]);
        cr_assert_eq(q8t_run(g, data, 1, o1, i1, 1, &err), Q8_OK, "%s", err.msg);
        q8t_assert_shape(&i1[0], want_dims[k], 4);
        free(o1[0]);
    }
    g = q8t_graph1("Resize", ins, 3, 1);
    q8t_attr_int(g, "antialias", 1);
    EXPECT_ERR(g, data, "antialias=1 is not supported");
    free(x);
}

Test(resize, too_large) {
    float x[4] = {0}, sc[2] = {1e30f, 1};
    int64_t sz[2] = {(int64_t)1 << 40, 0};
    const void *data[] = {x};
    q8t_in ins[4] = {{"x", Q8_F32, 2, {2, 2}, NULL}, {NULL, Q8_F32, 1, {0}, NULL},
                     {"scales", Q8_F32, 1, {2}, sc}, {"sizes", Q8_I64, 1, {2}, sz}};
    EXPECT_ERR(q8t_graph1("Resize", ins, 3, 1), data, "output dim 0 would have");
    ins[2] = (q8t_in){NULL, Q8_F32, 1, {0}, NULL};
    EXPECT_ERR(q8t_graph1("Resize", ins, 4, 1), data, "is too large");
}

Test(resize, crop_needs_float) {
    int8_t x[4] = {0};
    float roi[4] = {0, 0, 1, 1};
    int64_t sz[2] = {3, 3};
    const void *data[] = {x};
    q8t_in ins[4] = {{"x", Q8_I8, 2, {2, 2}, NULL}, {"roi", Q8_F32, 1, {4}, roi},
                     {NULL, Q8_F32, 1, {0}, NULL}, {"sizes", Q8_I64, 1, {2}, sz}};
    q8_graph *g = q8t_graph1("Resize", ins, 4, 1);
    q8t_attr_str(g, "coordinate_transformation_mode", "tf_crop_and_resize");
    EXPECT_ERR(g, data, "tf_crop_and_resize needs float32 data");
}

/* ---------------------------------------------------------------- ArgMax / ArgMin */

typedef struct am_case {
    const char *op;
    q8_dtype dt;
    int nd;
    int64_t dims[4];
    int64_t axis;
    int keep, last;         /* -1: attribute absent (defaults 1 and 0) */
} am_case;

static q8_graph *am_build(const void *ctx) {
    const am_case *c = ctx;
    q8t_in in = {"x", c->dt, c->nd, {0}, NULL};
    memcpy(in.dims, c->dims, sizeof c->dims);
    q8_graph *g = q8t_graph1(c->op, &in, 1, 1);
    q8t_attr_int(g, "axis", c->axis);
    if (c->keep >= 0) q8t_attr_int(g, "keepdims", c->keep);
    if (c->last >= 0) q8t_attr_int(g, "select_last_index", c->last);
    return g;
}

/* The element as a double (NaN stays NaN; int64 values here fit). */
static double am_val(q8_dtype dt, const void *x, int64_t i) {
    switch (dt) {
    case Q8_F32: return ((const float *)x)[i];
    case Q8_F64: return ((const double *)x)[i];
    case Q8_I8: return ((const int8_t *)x)[i];
    case Q8_U8: return ((const uint8_t *)x)[i];
    case Q8_I32: return ((const int32_t *)x)[i];
    default: return (double)((const int64_t *)x)[i];
    }
}

static void am_check(const am_case *c, const void *x) {
    void *out[1];
    q8_tensor_info info[1];
    q8t_built b = {am_build, c};
    const void *data[1] = {x};
    run2(b, data, 1, out, info);
    int ax = (int)(c->axis < 0 ? c->axis + c->nd : c->axis);
    int64_t outer = q8t_numel(c->dims, ax), len = c->dims[ax];
    int64_t inner = q8t_numel(c->dims + ax + 1, c->nd - ax - 1);
    cr_assert_eq(info[0].dtype, Q8_I64);
    cr_assert_eq(info[0].ndim, c->keep == 0 ? c->nd - 1 : c->nd);
    bool min = !strcmp(c->op, "ArgMin"), last = c->last == 1;
    const int64_t *y = out[0];
    for (int64_t o = 0; o < outer * inner; o++) {
        /* reference: NaN beats numbers; ties by first (or last) index */
        int64_t base = (o / inner) * len * inner + o % inner, want = 0;
        for (int64_t i = 1; i < len; i++) {
            double v = am_val(c->dt, x, base + i * inner), bv = am_val(c->dt, x, base + want * inner);
            bool replace;
            if (isnan(bv)) replace = isnan(v) && last;
            else if (isnan(v)) replace = true;
            else if (v == bv) replace = last;
            else replace = min ? v < bv : v > bv;
            if (replace) want = i;
        }
        cr_assert_eq(y[o], want, "%s %s axis %lld: output %lld is %lld, want %lld", c->op,
                     q8_dtype_name(c->dt), (long long)c->axis, (long long)o, (long long)y[o],
                     (long long)want);
    }
    free(out[0]);
}

Test(argmax, random_shapes_ties_and_nan) {
    q8t_rng r = q8t_seed(99);
    const am_case shapes[] = {
        {"ArgMax", Q8_F32, 3, {2, 13, 9}, 1, -1, -1},
        {"ArgMin", Q8_F32, 3, {2, 13, 9}, -1, 0, 1},
        {"ArgMax", Q8_F32, 1, {31}, 0, 0, 0},
        {"ArgMin", Q8_F32, 4, {3, 1, 7, 5}, 2, 1, 0},
        {"ArgMax", Q8_F32, 2, {1000, 3}, 0, 1, 1},
        {"ArgMax", Q8_F32, 2, {3, 4097}, 1, 0, -1},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        am_case c = shapes[k];
        int64_t n = q8t_numel(c.dims, c.nd);
        float *x = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) /* few distinct values: many ties */
            x[i] = (float)(q8t_next(&r) % 5) - 2.0f;
        if (n > 20) x[7] = NAN, x[n - 3] = NAN;
        am_check(&c, x);
        c.last = c.last == 1 ? 0 : 1;
        am_check(&c, x);
        free(x);
    }
}

Test(argmax, every_dtype) {
    q8t_rng r = q8t_seed(98);
    const q8_dtype dts[] = {Q8_F64, Q8_I8, Q8_U8, Q8_I32, Q8_I64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++)
        for (int m = 0; m < 2; m++) {
            am_case c = {m ? "ArgMin" : "ArgMax", dts[k], 3, {4, 6, 5}, 1, 1, m};
            int64_t n = 4 * 6 * 5;
            size_t es = q8_dtype_size(dts[k]);
            uint8_t *x = malloc(es * (size_t)n);
            for (int64_t i = 0; i < n; i++) {
                int64_t v = (int64_t)(q8t_next(&r) % 7) - 3;
                if (dts[k] == Q8_U8) v += 3;
                if (dts[k] == Q8_F64) ((double *)x)[i] = (double)v;
                else if (dts[k] == Q8_I64) ((int64_t *)x)[i] = v;
                else if (dts[k] == Q8_I32) ((int32_t *)x)[i] = (int32_t)v;
                else ((uint8_t *)x)[i] = (uint8_t)v;
            }
            am_check(&c, x);
            free(x);
        }
}

Test(argmax, errors) {
    float x[4] = {0};
    const void *data[1] = {x};
    am_case bad = {"ArgMax", Q8_F32, 2, {2, 2}, 2, -1, -1};
    EXPECT_ERR(am_build(&bad), data, "axis 2 is out of range for rank 2");
    am_case empty = {"ArgMax", Q8_F32, 2, {2, 0}, 1, -1, -1};
    EXPECT_ERR(am_build(&empty), data, "is empty");
    am_case keep = {"ArgMin", Q8_F32, 2, {2, 2}, 0, 2, -1};
    EXPECT_ERR(am_build(&keep), data, "must be 0 or 1");
    bool t[4] = {0};
    const void *bd[1] = {t};
    am_case b = {"ArgMax", Q8_BOOL, 1, {4}, 0, -1, -1};
    EXPECT_ERR(am_build(&b), bd, "numbers only");
}

/* ------------------------------- InstanceNormalization, MVN and LRN */

typedef struct norm_case {
    const char *op;
    int nd;
    int64_t dims[Q8_MAX_DIMS];
    float eps;                  /* InstanceNormalization; 0: the default */
    int64_t size;               /* LRN */
    float alpha, beta, bias;    /* LRN; alpha 0: the defaults */
    int n_axes;                 /* MVN; 0: the default axes */
    int64_t axes[Q8_MAX_DIMS];
} norm_case;

static q8_graph *norm_build(const void *ctx) {
    const norm_case *c = ctx;
    q8t_in ins[3] = {{"x", Q8_F32, c->nd, {0}, NULL},
                     {"s", Q8_F32, 1, {c->dims[1]}, NULL},
                     {"b", Q8_F32, 1, {c->dims[1]}, NULL}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    bool inst = !strcmp(c->op, "InstanceNormalization");
    q8_graph *g = q8t_graph1(c->op, ins, inst ? 3 : 1, 1);
    if (c->eps) q8t_attr_float(g, "epsilon", c->eps);
    if (c->size) q8t_attr_int(g, "size", c->size);
    if (c->alpha) {
        q8t_attr_float(g, "alpha", c->alpha);
        q8t_attr_float(g, "beta", c->beta);
        q8t_attr_float(g, "bias", c->bias);
    }
    if (c->n_axes) q8t_attr_ints(g, "axes", c->axes, c->n_axes);
    return g;
}

/* The reference: the spec's formulas in double over plain index loops. */
static void norm_ref(const norm_case *c, const float *x, const float *s, const float *b,
                     double *y) {
    int64_t n = q8t_numel(c->dims, c->nd), C = c->dims[1], inner = 1, idx[Q8_MAX_DIMS];
    for (int d = 2; d < c->nd; d++) inner *= c->dims[d];
    if (!strcmp(c->op, "LRN")) {
        double alpha = c->alpha ? c->alpha : 1e-4, beta = c->alpha ? c->beta : 0.75,
               bias = c->alpha ? c->bias : 1;
        for (int64_t e = 0; e < n; e++) {
            int64_t ch = (e / inner) % C, base = e - ch * inner;
            double s2 = 0;
            for (int64_t j = ch - (c->size - 1) / 2; j <= ch + c->size / 2; j++)
                if (j >= 0 && j < C) s2 += (double)x[base + j * inner] * x[base + j * inner];
            y[e] = x[e] / pow(bias + alpha / (double)c->size * s2, beta);
        }
        return;
    }
    bool red[Q8_MAX_DIMS] = {false};
    if (!strcmp(c->op, "InstanceNormalization")) {
        for (int d = 2; d < c->nd; d++) red[d] = true;
    } else if (!c->n_axes) {
        red[0] = red[2] = red[3] = true;
    } else {
        for (int i = 0; i < c->n_axes; i++) red[c->axes[i] < 0 ? c->axes[i] + c->nd : c->axes[i]] = true;
    }
    /* for each element, the mean and variance of the elements that share its
     * kept coordinates (quadratic, but the shapes are small) */
    for (int64_t e = 0; e < n; e++) {
        int64_t ie[Q8_MAX_DIMS];
        for (int64_t r = e, d = c->nd - 1; d >= 0; d--) ie[d] = r % c->dims[d], r /= c->dims[d];
        double sum = 0, sum2 = 0, cnt = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int64_t f = 0; f < n; f++) {
                for (int64_t r = f, d = c->nd - 1; d >= 0; d--) idx[d] = r % c->dims[d], r /= c->dims[d];
                bool same = true;
                for (int d = 0; d < c->nd; d++) same = same && (red[d] || idx[d] == ie[d]);
                if (!same) continue;
                if (pass == 0) sum += x[f], cnt++;
                else sum2 += (x[f] - sum / cnt) * (x[f] - sum / cnt);
            }
        double mean = sum / cnt, var = sum2 / cnt;
        if (!strcmp(c->op, "InstanceNormalization"))
            y[e] = s[ie[1]] * (x[e] - mean) / sqrt(var + (c->eps ? c->eps : 1e-5)) + b[ie[1]];
        else
            y[e] = (x[e] - mean) / (sqrt(var) + 1e-9);
    }
}

Test(normalizations, instance_mvn_lrn_vs_reference) {
    static const norm_case cases[] = {
        {"InstanceNormalization", 4, {2, 3, 4, 5}, 0, 0, 0, 0, 0, 0, {0}},
        {"InstanceNormalization", 3, {3, 2, 17}, 0.01f, 0, 0, 0, 0, 0, {0}},
        {"InstanceNormalization", 2, {2, 5}, 0, 0, 0, 0, 0, 0, {0}},
        {"InstanceNormalization", 5, {1, 2, 3, 2, 4}, 0, 0, 0, 0, 0, 0, {0}},
        {"MeanVarianceNormalization", 4, {3, 3, 3, 1}, 0, 0, 0, 0, 0, 0, {0}},
        {"MeanVarianceNormalization", 4, {2, 3, 4, 5}, 0, 0, 0, 0, 0, 2, {1, -1}},
        {"MeanVarianceNormalization", 3, {4, 6, 3}, 0, 0, 0, 0, 0, 1, {1}},
        {"LRN", 4, {2, 7, 3, 4}, 0, 3, 0, 0, 0, 0, {0}},
        {"LRN", 4, {1, 5, 2, 2}, 0, 4, 0.002f, 0.5f, 2.0f, 0, {0}},
        {"LRN", 3, {2, 9, 5}, 0, 1, 0.1f, 0.9f, 0.5f, 0, {0}},
        {"LRN", 2, {3, 4}, 0, 7, 0, 0, 0, 0, {0}},
    };
    q8t_rng r = q8t_seed(251);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const norm_case *c = &cases[ci];
        int64_t n = q8t_numel(c->dims, c->nd), C = c->dims[1];
        float *x = malloc(sizeof(float) * (size_t)n), s[16], b[16];
        q8t_fill(&r, x, n, -3, 5);
        q8t_fill(&r, s, C, -2, 2);
        q8t_fill(&r, b, C, -1, 1);
        double *ref = malloc(sizeof(double) * (size_t)n);
        norm_ref(c, x, s, b, ref);
        float *want = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) want[i] = (float)ref[i];
        const void *data[3] = {x, s, b};
        void *outs[1];
        q8_tensor_info info[1];
        run2((q8t_built){norm_build, c}, data, 1, outs, info);
        q8t_assert_shape(&info[0], c->dims, c->nd);
        q8t_assert_close(outs[0], want, n, 2e-5f, 2e-6f, c->op);
        free(outs[0]);
        free(x);
        free(ref);
        free(want);
    }
}

Test(normalizations, errors) {
    float x[24] = {0};
    const void *data[3] = {x, x, x};
    norm_case c = {"LRN", 4, {1, 2, 3, 4}, 0, 0, 0, 0, 0, 0, {0}};
    EXPECT_ERR(norm_build(&c), data, "size 0: expected a positive number");
    c = (norm_case){"MeanVarianceNormalization", 2, {4, 6}, 0, 0, 0, 0, 0, 0, {0}};
    EXPECT_ERR(norm_build(&c), data, "axis 2 is out of range for rank 2");
    c = (norm_case){"InstanceNormalization", 1, {4}, 0, 0, 0, 0, 0, 0, {0}};
    EXPECT_ERR(norm_build(&c), data, "has rank 1, expected >= 2");
}

/* ------------------------------------------------------------ GridSample */

typedef struct gs_case {
    const char *mode, *padding;
    int align;
    int64_t n, c, h, w, ho, wo;
} gs_case;

static q8_graph *gs_build(const void *ctx) {
    const gs_case *c = ctx;
    q8t_in ins[2] = {{"x", Q8_F32, 4, {c->n, c->c, c->h, c->w}, NULL},
                     {"grid", Q8_F32, 4, {c->n, c->ho, c->wo, 2}, NULL}};
    q8_graph *g = q8t_graph1("GridSample", ins, 2, 1);
    g->opset = 16;
    q8t_attr_str(g, "mode", c->mode);
    q8t_attr_str(g, "padding_mode", c->padding);
    q8t_attr_int(g, "align_corners", c->align);
    return g;
}

/* The ONNX reference implementation's structure, in double: reflection by
 * whole ranges, every row interpolated along W, then the rows along H. */
static double gs_reflect(double x, double lo, double hi) {
    double rng = hi - lo;
    if (!(rng > 0)) return lo; /* one pixel with align_corners: the spec divides by 0 */
    if (x < lo) {
        double dx = lo - x;
        long k = (long)(dx / rng);
        double r = dx - k * rng;
        return k % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        long k = (long)(dx / rng);
        double r = dx - k * rng;
        return k % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

static double gs_at(const gs_case *c, const double *a, long i, long d) {
    double lo = c->align ? 0 : -0.5, hi = c->align ? d - 1 : d - 0.5;
    if (!strcmp(c->padding, "zeros")) return i >= 0 && i < d ? a[i] : 0;
    if (!strcmp(c->padding, "border")) return a[i < 0 ? 0 : i >= d ? d - 1 : i];
    return a[(long)gs_reflect((double)i, lo, hi)];
}

static void gs_coeffs(const gs_case *c, double t, double *k) {
    if (!strcmp(c->mode, "bilinear")) {
        k[0] = 1 - t, k[1] = t;
        return;
    }
    double A = -0.75;
    k[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
    k[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    k[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
    k[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

static double gs_interp1(const gs_case *c, const double *a, long d, double x) {
    long x0 = (long)floor(x), taps = strcmp(c->mode, "bilinear") ? 4 : 2, first = taps == 4 ? -1 : 0;
    double k[4], s = 0;
    gs_coeffs(c, x - (double)x0, k);
    for (long j = 0; j < taps; j++) s += k[j] * gs_at(c, a, x0 + first + j, d);
    return s;
}

static double gs_ref_one(const gs_case *c, const float *img, float gx, float gy) {
    long H = c->h, W = c->w;
    float cx = c->align ? (float)((gx + 1) / 2.0 * (W - 1)) : (float)(((gx + 1) * W - 1) / 2.0);
    float cy = c->align ? (float)((gy + 1) / 2.0 * (H - 1)) : (float)(((gy + 1) * H - 1) / 2.0);
    double v[2] = {cy, cx};
    long d[2] = {H, W};
    bool nearest = !strcmp(c->mode, "nearest");
    for (int i = 0; i < 2; i++) {
        if (nearest) v[i] = nearbyint(v[i]);
        double lo = c->align ? 0 : -0.5, hi = c->align ? d[i] - 1 : d[i] - 0.5;
        if (v[i] < lo || v[i] > hi) {
            if (!strcmp(c->padding, "border")) v[i] = v[i] < 0 ? 0 : v[i] > d[i] - 1 ? d[i] - 1 : v[i];
            else if (!strcmp(c->padding, "reflection")) v[i] = gs_reflect(v[i], lo, hi);
        }
    }
    double rowbuf[64], col[64];
    if (nearest) {
        long r = (long)v[0], q = (long)v[1];
        for (long i = 0; i < H; i++) rowbuf[i] = 0;
        /* the row as the padding rule picks it, then the column in it */
        double rowv[64];
        for (long i = 0; i < H; i++) rowv[i] = (double)i;
        double ri = gs_at(c, rowv, r, H);
        bool out = !strcmp(c->padding, "zeros") && (r < 0 || r >= H);
        if (out) return 0;
        for (long j = 0; j < W; j++) col[j] = img[(long)ri * W + j];
        return gs_at(c, col, q, W);
    }
    for (long i = 0; i < H; i++) {
        for (long j = 0; j < W; j++) col[j] = img[i * W + j];
        rowbuf[i] = gs_interp1(c, col, W, v[1]);
    }
    return gs_interp1(c, rowbuf, H, v[0]);
}

Test(gridsample, modes_paddings_corners_vs_reference) {
    static const char *modes[3] = {"bilinear", "nearest", "bicubic"};
    static const char *pads[3] = {"zeros", "border", "reflection"};
    q8t_rng r = q8t_seed(263);
    for (int it = 0; it < 36; it++) {
        gs_case c = {modes[it % 3], pads[(it / 3) % 3], (it / 9) % 2, 1 + it % 2, 1 + it % 3,
                     1 + (int64_t)(q8t_next(&r) % 6), 1 + (int64_t)(q8t_next(&r) % 6),
                     1 + (int64_t)(q8t_next(&r) % 5), 1 + (int64_t)(q8t_next(&r) % 5)};
        int64_t nx = c.n * c.c * c.h * c.w, ng = c.n * c.ho * c.wo * 2, ny = c.n * c.c * c.ho * c.wo;
        float *x = malloc(sizeof(float) * (size_t)nx), *grid = malloc(sizeof(float) * (size_t)ng);
        q8t_fill(&r, x, nx, -2, 2);
        q8t_fill(&r, grid, ng, -1.6f, 1.6f); /* outside [-1, 1] too: the padding */
        if (it % 4 == 0) grid[0] = 3.7f, grid[1] = -4.2f; /* reflected more than once */
        float *want = malloc(sizeof(float) * (size_t)ny);
        for (int64_t n = 0; n < c.n; n++)
            for (int64_t ch = 0; ch < c.c; ch++)
                for (int64_t o = 0; o < c.ho * c.wo; o++) {
                    const float *g = grid + (n * c.ho * c.wo + o) * 2;
                    want[(n * c.c + ch) * c.ho * c.wo + o] =
                        (float)gs_ref_one(&c, x + (n * c.c + ch) * c.h * c.w, g[0], g[1]);
                }
        const void *data[2] = {x, grid};
        void *outs[1];
        q8_tensor_info info[1];
        run2((q8t_built){gs_build, &c}, data, 1, outs, info);
        char what[96];
        snprintf(what, sizeof what, "GridSample %s %s align %d (case %d)", c.mode, c.padding,
                 c.align, it);
        q8t_assert_close(outs[0], want, ny, 1e-5f, 1e-5f, what);
        free(outs[0]);
        free(x);
        free(grid);
        free(want);
    }
}

/* nearest rounds half to even, as the reference's np.rint: 0.5 -> 0, 1.5
 * -> 2 (a half-away rounding would read pixels 1 and 2) */
Test(gridsample, nearest_ties_to_even) {
    float x[3] = {10, 20, 30}, grid[4] = {-0.5f, 0, 0.5f, 0}; /* x = g + 1 exactly */
    gs_case c = {"nearest", "zeros", 1, 1, 1, 1, 3, 1, 2};
    const void *data[2] = {x, grid};
    void *outs[1];
    q8_tensor_info info[1];
    run2((q8t_built){gs_build, &c}, data, 1, outs, info);
    const float *y = outs[0];
    cr_assert(y[0] == 10 && y[1] == 30, "got %g, %g; want 10, 30", y[0], y[1]);
    free(outs[0]);
}

/* Coordinates far outside (and NaN) in every mode and padding: finite
 * results where the reference gives them, and no undefined float-to-int
 * casts (UBSan's float-cast-overflow runs this in CI). */
Test(gridsample, far_coordinates) {
    static const char *modes[3] = {"bilinear", "nearest", "bicubic"};
    static const char *pads[3] = {"zeros", "border", "reflection"};
    float x[6] = {1, 2, 3, 4, 5, 6}, grid[8] = {1e20f, -1e20f, -3e38f, 2e30f, 1e9f, 7.5f,
                                                -INFINITY, 0};
    for (int m = 0; m < 3; m++)
        for (int pd = 0; pd < 3; pd++) {
            gs_case c = {modes[m], pads[pd], pd == 1, 1, 1, 2, 3, 2, 2};
            const void *data[2] = {x, grid};
            void *outs[1];
            q8_tensor_info info[1];
            run2((q8t_built){gs_build, &c}, data, 1, outs, info);
            const float *y = outs[0];
            for (int i = 0; i < 3; i++) /* the finite ones */
                cr_assert(isfinite(y[i]), "%s %s: output %d is %g", c.mode, c.padding, i, y[i]);
            if (!strcmp(c.padding, "zeros"))
                for (int i = 0; i < 3; i++) cr_assert_eq(y[i], 0.0f, "%s zeros: %g", c.mode, y[i]);
            free(outs[0]);
        }
}

Test(gridsample, errors) {
    float x[16] = {0};
    const void *data[2] = {x, x};
    gs_case c = {"area", "zeros", 0, 1, 1, 2, 2, 2, 2};
    EXPECT_ERR(gs_build(&c), data, "mode 'area'");
    c = (gs_case){"bilinear", "wrap", 0, 1, 1, 2, 2, 2, 2};
    EXPECT_ERR(gs_build(&c), data, "padding_mode 'wrap'");
}

/* ---------------------- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss */

typedef struct loss_case {
    bool sce, f64, t64, weight, log_prob;
    const char *reduction;      /* NULL: the default (mean) */
    bool has_ii;
    int64_t ii;
    int nd;                     /* x's rank */
    int64_t dims[Q8_MAX_DIMS];
} loss_case;

static q8_graph *loss_build(const void *ctx) {
    const loss_case *c = ctx;
    q8_dtype ft = c->f64 ? Q8_F64 : Q8_F32;
    q8t_in ins[3] = {{"x", ft, c->nd, {0}, NULL},
                     {"t", c->t64 ? Q8_I64 : Q8_I32, c->nd - 1, {0}, NULL},
                     {"w", ft, 1, {c->dims[1]}, NULL}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    ins[1].dims[0] = c->dims[0];
    for (int i = 2; i < c->nd; i++) ins[1].dims[i - 1] = c->dims[i];
    q8_graph *g = q8t_graph1(c->sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss",
                             ins, c->weight ? 3 : 2, c->log_prob ? 2 : 1);
    if (c->reduction) q8t_attr_str(g, "reduction", c->reduction);
    if (c->has_ii) q8t_attr_int(g, "ignore_index", c->ii);
    return g;
}

/* The spec's definition over plain index loops, in double: lp, the per-place
 * losses, then the reduction. Writes log_softmax to lp_out (SCE). */
static double loss_ref(const loss_case *c, const double *x, const int64_t *t, const double *w,
                       double *none, double *lp_out) {
    int64_t N = c->dims[0], C = c->dims[1], D = q8t_numel(c->dims + 2, c->nd - 2);
    double sum = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            for (int64_t k = 0; k < C; k++) {
                double v = x[(n * C + k) * D + d];
                if (c->sce) {
                    double s = 0;
                    for (int64_t j = 0; j < C; j++) s += exp(x[(n * C + j) * D + d]);
                    v -= log(s);
                }
                lp_out[(n * C + k) * D + d] = v;
            }
            int64_t tg = t[n * D + d];
            double l, wt;
            if (c->has_ii && tg == c->ii) l = 0, wt = 0;
            else if (tg < 0 || tg >= C) l = NAN, wt = NAN;
            else wt = c->weight ? w[tg] : 1, l = -wt * lp_out[(n * C + tg) * D + d];
            none[n * D + d] = l;
            sum += l;
            wsum += wt;
        }
    return c->reduction && !strcmp(c->reduction, "sum") ? sum : sum / wsum;
}

/* got (float32 or float64) against want, NaN where want is NaN */
static void loss_check(const loss_case *c, const void *got, const double *want, int64_t n,
                       const char *what) {
    for (int64_t i = 0; i < n; i++) {
        double g = c->f64 ? ((const double *)got)[i] : ((const float *)got)[i];
        if (isnan(want[i])) {
            cr_assert(isnan(g), "%s: [%lld] is %g, want NaN", what, (long long)i, g);
            continue;
        }
        double tol = c->f64 ? 1e-12 : 2e-6;
        cr_assert(fabs(g - want[i]) <= tol * (1 + fabs(want[i])), "%s: [%lld] is %.9g, want %.9g",
                  what, (long long)i, g, want[i]);
    }
}

Test(losses, nll_and_sce_vs_reference) {
    static const char *const reds[4] = {NULL, "none", "sum", "mean"};
    q8t_rng r = q8t_seed(257);
    for (int it = 0; it < 64; it++) {
        loss_case c = {.sce = it % 2, .f64 = it % 5 == 0, .t64 = it % 3 != 0,
                       .weight = (it / 2) % 2, .reduction = reds[(it / 4) % 4],
                       .has_ii = (it / 3) % 3 != 0, .nd = 2 + it % 4};
        c.log_prob = c.sce && (it / 8) % 2;
        c.ii = (it / 3) % 3 == 1 ? -1 : (int64_t)(q8t_next(&r) % 4);
        for (int i = 0; i < c.nd; i++) c.dims[i] = 1 + (int64_t)(q8t_next(&r) % (i == 1 ? 9 : 4));
        int64_t n = q8t_numel(c.dims, c.nd), C = c.dims[1], places = n / C;
        double *xd = malloc(sizeof(double) * (size_t)n), wd[16];
        int64_t *t = malloc(sizeof(int64_t) * (size_t)places);
        float *xf = malloc(sizeof(float) * (size_t)n), wf[16];
        int32_t *t32 = malloc(sizeof(int32_t) * (size_t)places);
        for (int64_t i = 0; i < n; i++) {
            xf[i] = (float)((double)(q8t_next(&r) % 20001) / 1000.0 - 10.0);
            xd[i] = c.f64 ? xf[i] + 1e-9 * (double)(i % 7) : xf[i];
        }
        for (int64_t k = 0; k < C; k++)
            wf[k] = (float)((double)(q8t_next(&r) % 300) / 100.0), wd[k] = wf[k];
        for (int64_t i = 0; i < places; i++) { /* mostly valid, some ignored */
            uint64_t u = q8t_next(&r);
            t[i] = u % 6 == 0 && c.has_ii ? c.ii : (int64_t)(u % (uint64_t)C);
            t32[i] = (int32_t)t[i];
        }
        double *none = malloc(sizeof(double) * (size_t)places), *lp = malloc(sizeof(double) * (size_t)n);
        double red = loss_ref(&c, xd, t, wd, none, lp);
        const void *data[3] = {c.f64 ? (const void *)xd : xf, c.t64 ? (const void *)t : t32,
                               c.f64 ? (const void *)wd : wf};
        void *outs[2];
        q8_tensor_info info[2];
        run2((q8t_built){loss_build, &c}, data, c.log_prob ? 2 : 1, outs, info);
        char what[96];
        snprintf(what, sizeof what, "loss case %d (%s, %s, rank %d)", it, c.sce ? "SCE" : "NLL",
                 c.reduction ? c.reduction : "default", c.nd);
        if (c.reduction && !strcmp(c.reduction, "none")) {
            int64_t td[Q8_MAX_DIMS] = {c.dims[0]};
            for (int i = 2; i < c.nd; i++) td[i - 1] = c.dims[i];
            q8t_assert_shape(&info[0], td, c.nd - 1);
            loss_check(&c, outs[0], none, places, what);
        } else {
            cr_assert_eq(info[0].ndim, 0, "%s: a reduced loss is a scalar", what);
            loss_check(&c, outs[0], &red, 1, what);
        }
        if (c.log_prob) {
            q8t_assert_shape(&info[1], c.dims, c.nd);
            loss_check(&c, outs[1], lp, n, what);
            free(outs[1]);
        }
        free(outs[0]);
        free(xd);
        free(xf);
        free(t);
        free(t32);
        free(none);
        free(lp);
    }
}

/* Every place ignored: mean is 0/0 (NaN, as the reference), sum 0; a target
 * outside [0, C) gives NaN, never a read out of bounds. */
Test(losses, all_ignored_and_out_of_range_targets) {
    float x[6] = {-1, -2, -3, -4, -5, -6};
    int64_t t[2] = {-100, -100}, bad[2] = {1, 7};
    loss_case c = {.t64 = true, .has_ii = true, .ii = -100, .nd = 2, .dims = {2, 3}};
    const void *data[2] = {x, t};
    void *outs[1];
    q8_tensor_info info[1];
    run2((q8t_built){loss_build, &c}, data, 1, outs, info);
    cr_assert(isnan(*(float *)outs[0]), "mean over no place: %g", *(float *)outs[0]);
    free(outs[0]);
    c.reduction = "sum";
    run2((q8t_built){loss_build, &c}, data, 1, outs, info);
    cr_assert_eq(*(float *)outs[0], 0.0f);
    free(outs[0]);
    c.reduction = "none";
    c.sce = true;
    data[1] = bad;
    run2((q8t_built){loss_build, &c}, data, 1, outs, info);
    float *y = outs[0];
    double lse = -4 + log(exp(0.0) + exp(-1.0) + exp(-2.0));
    cr_assert(fabs(y[0] - (5 + lse)) < 1e-5, "SCE loss %g, want %g", y[0], 5 + lse);
    cr_assert(isnan(y[1]), "target 7 of 3 classes: %g, want NaN", y[1]);
    free(outs[0]);
}

Test(losses, errors) {
    float x[24] = {0};
    const void *data[3] = {x, x, x};
    loss_case c = {.reduction = "avg", .nd = 2, .dims = {2, 3}};
    EXPECT_ERR(loss_build(&c), data, "reduction 'avg': expected none, sum or mean");
    c = (loss_case){.nd = 2, .dims = {2, 3}};
    q8_graph *g = loss_build(&c);
    q8_graph_tensor(g, g->nodes[0]->inputs[1])->dims[0] = 3;
    EXPECT_ERR(g, data, "targets must have the input's shape without its dim 1");
    c = (loss_case){.weight = true, .nd = 3, .dims = {2, 3, 4}};
    g = loss_build(&c);
    q8_graph_tensor(g, g->nodes[0]->inputs[2])->dims[0] = 4;
    EXPECT_ERR(g, data, "weights must be [C] = [3]");
}

/* ------------------------------------------------------------- MaxUnpool */

typedef struct unpool_case {
    bool f64, with_shape;
    int nd;                         /* x's rank */
    int64_t dims[Q8_MAX_DIMS];
    int64_t k[3], s[3], pads[6];
    int64_t extra[3];               /* output_shape beyond the unpooled dims */
    int64_t unpooled[Q8_MAX_DIMS], out[Q8_MAX_DIMS];
} unpool_case;

static q8_graph *unpool_build(const void *ctx) {
    const unpool_case *c = ctx;
    q8t_in ins[3] = {{"x", c->f64 ? Q8_F64 : Q8_F32, c->nd, {0}, NULL},
                     {"i", Q8_I64, c->nd, {0}, NULL},
                     {"shape", Q8_I64, 1, {c->nd}, c->out}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    memcpy(ins[1].dims, c->dims, sizeof c->dims);
    q8_graph *g = q8t_graph1("MaxUnpool", ins, c->with_shape ? 3 : 2, 1);
    g->opset = 11;
    int k = c->nd - 2;
    q8t_attr_ints(g, "kernel_shape", c->k, k);
    q8t_attr_ints(g, "strides", c->s, k);
    q8t_attr_ints(g, "pads", c->pads, 2 * k);
    return g;
}

Test(maxunpool, random_indices_shapes_and_output_shape) {
    q8t_rng r = q8t_seed(269);
    for (int it = 0; it < 24; it++) {
        unpool_case c = {.f64 = it % 3 == 0, .with_shape = it % 2, .nd = 3 + it % 3};
        int k = c.nd - 2;
        c.dims[0] = 1 + (int64_t)(q8t_next(&r) % 2);
        c.dims[1] = 1 + (int64_t)(q8t_next(&r) % 3);
        memcpy(c.unpooled, c.dims, sizeof c.dims);
        for (int i = 0; i < k; i++) {
            c.dims[2 + i] = 1 + (int64_t)(q8t_next(&r) % 4);
            c.k[i] = 1 + (int64_t)(q8t_next(&r) % 3);
            c.s[i] = 1 + (int64_t)(q8t_next(&r) % 3);
            c.pads[i] = c.k[i] > 1 ? (int64_t)(q8t_next(&r) % 2) : 0; /* keep dims >= 1 */
            c.pads[k + i] = 0;
            c.unpooled[2 + i] = (c.dims[2 + i] - 1) * c.s[i] + c.k[i] - c.pads[i];
            c.extra[i] = (int64_t)(q8t_next(&r) % 3);
        }
        c.unpooled[0] = c.dims[0];
        c.unpooled[1] = c.dims[1];
        memcpy(c.out, c.unpooled, sizeof c.out);
        if (c.with_shape)
            for (int i = 0; i < k; i++) c.out[2 + i] += c.extra[i];
        int64_t n = q8t_numel(c.dims, c.nd), un = q8t_numel(c.unpooled, c.nd),
                on = q8t_numel(c.out, c.nd);
        double *xd = malloc(sizeof(double) * (size_t)n), *want = calloc((size_t)on, sizeof(double));
        float *xf = malloc(sizeof(float) * (size_t)n);
        int64_t *ind = malloc(sizeof(int64_t) * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            xf[i] = (float)(q8t_next(&r) % 1000) - 500, xd[i] = xf[i] + 0.25;
            uint64_t u = q8t_next(&r);
            /* mostly in range (some repeated), a few outside on either side */
            ind[i] = u % 11 == 0 ? -1 - (int64_t)(u % 3) : u % 13 == 0 ? un + (int64_t)(u % 5)
                                                                        : (int64_t)(u % (uint64_t)un);
        }
        for (int64_t i = 0; i < n; i++) { /* in order: the last repeated index wins */
            if (ind[i] < 0 || ind[i] >= un) continue;
            int64_t rem = ind[i], off = 0, mul = 1;
            for (int d = c.nd - 1; d >= 0; d--) {
                off += (rem % c.unpooled[d]) * mul;
                rem /= c.unpooled[d];
                mul *= c.out[d];
            }
            want[off] = c.f64 ? xd[i] : xf[i];
        }
        const void *data[2] = {c.f64 ? (const void *)xd : xf, ind};
        void *outs[1];
        q8_tensor_info info[1];
        run2((q8t_built){unpool_build, &c}, data, 1, outs, info);
        q8t_assert_shape(&info[0], c.out, c.nd);
        for (int64_t i = 0; i < on; i++) {
            double got = c.f64 ? ((double *)outs[0])[i] : ((float *)outs[0])[i];
            cr_assert_eq(got, want[i], "unpool case %d [%lld]: %g, want %g", it, (long long)i, got,
                         want[i]);
        }
        free(outs[0]);
        free(xd);
        free(xf);
        free(ind);
        free(want);
    }
}

Test(maxunpool, errors) {
    float x[16] = {0};
    int64_t i[16] = {0};
    const void *data[2] = {x, i};
    unpool_case c = {.with_shape = true, .nd = 4, .dims = {1, 1, 2, 2}, .k = {2, 2},
                     .s = {2, 2}, .out = {1, 1, 3, 4}};
    EXPECT_ERR(unpool_build(&c), data, "output_shape dim 2 is 3, the unpooled tensor's 4");
    c = (unpool_case){.nd = 4, .dims = {1, 1, 2, 2}, .k = {2, 0}, .s = {2, 2}};
    EXPECT_ERR(unpool_build(&c), data, "kernel_shape and strides must be positive");
    c = (unpool_case){.nd = 4, .dims = {1, 1, 1, 1}, .k = {1, 1}, .s = {1, 1}, .pads = {1, 0, 1, 0}};
    EXPECT_ERR(unpool_build(&c), data, "pads exceed the unpooled dim 0");
    /* a declared shape of no elements whose unpooled dim would overflow */
    c = (unpool_case){.nd = 3, .dims = {0, 1, (int64_t)1 << 40}, .k = {1}, .s = {1 << 30}};
    EXPECT_ERR(unpool_build(&c), data, "the unpooled shape is too large (dim 0)");
}

/* -------------------------------------------------------------- RoiAlign */

typedef struct roi_case {
    const char *mode, *ct;          /* NULL: the default */
    int opset;
    int64_t n, c, h, w, rois, oh, ow, ratio;
    float scale;
} roi_case;

static q8_graph *roi_build(const void *ctx) {
    const roi_case *c = ctx;
    q8t_in ins[3] = {{"x", Q8_F32, 4, {c->n, c->c, c->h, c->w}, NULL},
                     {"rois", Q8_F32, 2, {c->rois, 4}, NULL},
                     {"b", Q8_I64, 1, {c->rois}, NULL}};
    q8_graph *g = q8t_graph1("RoiAlign", ins, 3, 1);
    g->opset = c->opset;
    if (c->mode) q8t_attr_str(g, "mode", c->mode);
    if (c->ct) q8t_attr_str(g, "coordinate_transformation_mode", c->ct);
    q8t_attr_int(g, "output_height", c->oh);
    q8t_attr_int(g, "output_width", c->ow);
    q8t_attr_int(g, "sampling_ratio", c->ratio);
    q8t_attr_float(g, "spatial_scale", c->scale);
    return g;
}

/* A sample of plane x at (y, x) as the spec's bilinear rule: 0 beyond one
 * pixel outside, else clamped to the plane; the four weighted corners. */
static void roi_sample(const float *x, int64_t h, int64_t w, double yy, double xx, double v[4]) {
    v[0] = v[1] = v[2] = v[3] = 0;
    if (yy < -1 || yy > (double)h || xx < -1 || xx > (double)w) return;
    yy = fmin(fmax(yy, 0), (double)(h - 1));
    xx = fmin(fmax(xx, 0), (double)(w - 1));
    int64_t y0 = (int64_t)floor(yy), x0 = (int64_t)floor(xx);
    int64_t y1 = y0 + 1 < h ? y0 + 1 : y0, x1 = x0 + 1 < w ? x0 + 1 : x0;
    double ly = yy - (double)y0, lx = xx - (double)x0;
    v[0] = (1 - ly) * (1 - lx) * x[y0 * w + x0];
    v[1] = (1 - ly) * lx * x[y0 * w + x1];
    v[2] = ly * (1 - lx) * x[y1 * w + x0];
    v[3] = ly * lx * x[y1 * w + x1];
}

Test(roialign, modes_transforms_and_grids_vs_reference) {
    q8t_rng r = q8t_seed(271);
    for (int it = 0; it < 24; it++) {
        roi_case c = {.mode = it % 3 == 0 ? "max" : it % 3 == 1 ? "avg" : NULL,
                      .ct = it % 4 == 0 ? "output_half_pixel" : it % 4 == 1 ? "half_pixel" : NULL,
                      .opset = it % 2 ? 16 : 10, .n = 1 + it % 2, .c = 1 + it % 3,
                      .h = 3 + (int64_t)(q8t_next(&r) % 9), .w = 3 + (int64_t)(q8t_next(&r) % 9),
                      .rois = 1 + it % 4, .oh = 1 + it % 3, .ow = 1 + (it / 3) % 3,
                      .ratio = it % 5 == 0 ? 0 : (int64_t)(q8t_next(&r) % 3), .scale = it % 2 ? 0.5f : 1.0f};
        if (c.opset == 10 && c.ct && !strcmp(c.ct, "half_pixel")) c.ct = NULL;
        int64_t xn = c.n * c.c * c.h * c.w;
        float *x = malloc(sizeof(float) * (size_t)xn), rois[16];
        int64_t bi[4];
        q8t_fill(&r, x, xn, -4, 4);
        /* some ROIs reach past the edges; every sixth case's are up to 30x
         * larger than the map (only the samples on the map are visited) */
        float big = it % 6 == 0 ? 30.0f : 1.0f;
        for (int64_t k = 0; k < c.rois; k++) {
            float ax = ((float)(q8t_next(&r) % 200) / 10.0f - 3) * big,
                  ay = ((float)(q8t_next(&r) % 200) / 10.0f - 3) * big;
            rois[k * 4 + 0] = ax, rois[k * 4 + 1] = ay;
            rois[k * 4 + 2] = ax + (float)(q8t_next(&r) % 120) / 10.0f * big;
            rois[k * 4 + 3] = ay + (float)(q8t_next(&r) % 120) / 10.0f * big;
            bi[k] = (int64_t)(q8t_next(&r) % (uint64_t)c.n);
        }
        bool half = c.ct ? !strcmp(c.ct, "half_pixel") : c.opset >= 16;
        bool mx = c.mode && !strcmp(c.mode, "max");
        int64_t yn = c.rois * c.c * c.oh * c.ow;
        float *want = malloc(sizeof(float) * (size_t)yn);
        for (int64_t k = 0; k < c.rois; k++) {
            double off = half ? 0.5 : 0, sx = rois[k * 4] * (double)c.scale - off,
                   sy = rois[k * 4 + 1] * (double)c.scale - off;
            double rw = rois[k * 4 + 2] * (double)c.scale - off - sx,
                   rh = rois[k * 4 + 3] * (double)c.scale - off - sy;
            if (!half) rw = fmax(rw, 1), rh = fmax(rh, 1);
            double bh = rh / (double)c.oh, bw = rw / (double)c.ow;
            /* adaptive: ceil(size / bins), 0 for an empty or reversed ROI */
            double ah = ceil(rh / (double)c.oh), aw = ceil(rw / (double)c.ow);
            int64_t gh = c.ratio ? c.ratio : ah < 1 ? 0 : (int64_t)ah;
            int64_t gw = c.ratio ? c.ratio : aw < 1 ? 0 : (int64_t)aw;
            for (int64_t ch = 0; ch < c.c; ch++)
                for (int64_t ph = 0; ph < c.oh; ph++)
                    for (int64_t pw = 0; pw < c.ow; pw++) {
                        const float *pl = x + (bi[k] * c.c + ch) * c.h * c.w;
                        double acc = mx ? -INFINITY : 0, v[4];
                        for (int64_t iy = 0; iy < gh; iy++)
                            for (int64_t ix = 0; ix < gw; ix++) {
                                roi_sample(pl, c.h, c.w, sy + ((double)ph + ((double)iy + 0.5) / (double)gh) * bh,
                                           sx + ((double)pw + ((double)ix + 0.5) / (double)gw) * bw, v);
                                if (mx) acc = fmax(acc, fmax(fmax(v[0], v[1]), fmax(v[2], v[3])));
                                else acc += v[0] + v[1] + v[2] + v[3];
                            }
                        want[((k * c.c + ch) * c.oh + ph) * c.ow + pw] =
                            gh * gw == 0 ? 0.0f : (float)(mx ? acc : acc / (double)(gh * gw));
                    }
        }
        const void *data[3] = {x, rois, bi};
        void *outs[1];
        q8_tensor_info info[1];
        run2((q8t_built){roi_build, &c}, data, 1, outs, info);
        int64_t od[4] = {c.rois, c.c, c.oh, c.ow};
        q8t_assert_shape(&info[0], od, 4);
        char what[64];
        snprintf(what, sizeof what, "roialign case %d", it);
        q8t_assert_close(outs[0], want, yn, 1e-5f, 1e-5f, what);
        free(outs[0]);
        free(x);
        free(want);
    }
}

/* Bad ROI data gives NaN for that ROI (never a read out of bounds, never
 * a loop over 10^60 samples). */
Test(roialign, bad_batch_index_nonfinite_and_huge_rois) {
    float x[2 * 3 * 3], rois[12] = {0, 0, 2, 2, 0, 0, INFINITY, 1, -1e30f, -1e30f, 1e30f, 1e30f};
    for (int i = 0; i < 18; i++) x[i] = 2;
    int64_t bi[3] = {5, 0, 1};
    roi_case c = {"avg", "half_pixel", 16, 2, 1, 3, 3, 3, 1, 1, 0, 1.0f};
    const void *data[3] = {x, rois, bi};
    void *outs[1];
    q8_tensor_info info[1];
    run2((q8t_built){roi_build, &c}, data, 1, outs, info);
    float *y = outs[0];
    cr_assert(isnan(y[0]), "batch index 5 of 2: %g", y[0]);
    cr_assert(isnan(y[1]), "an infinite coordinate: %g", y[1]);
    cr_assert(isnan(y[2]), "a ROI of 2e30 pixels: %g", y[2]);
    free(outs[0]);
}

/* A ROI 1000x the map's size: 9 million samples on a 3000 x 3000 grid, of
 * which the few on the map are visited; the same average and max as the
 * full loop. */
Test(roialign, large_roi_visits_only_the_map) {
    float x[9], rois[4] = {-1500, -1400, 1500, 1600};
    for (int i = 0; i < 9; i++) x[i] = (float)(i + 1);
    int64_t bi[1] = {0};
    for (int m = 0; m < 2; m++) {
        roi_case c = {m ? "max" : "avg", "half_pixel", 16, 1, 1, 3, 3, 1, 1, 1, 0, 1.0f};
        double acc = m ? -INFINITY : 0, v[4];
        int64_t g = 3000;
        for (int64_t iy = 0; iy < g; iy++)
            for (int64_t ix = 0; ix < g; ix++) {
                roi_sample(x, 3, 3, -1400.5 + ((double)iy + 0.5) * 3000.0 / (double)g,
                           -1500.5 + ((double)ix + 0.5) * 3000.0 / (double)g, v);
                if (m) acc = fmax(acc, fmax(fmax(v[0], v[1]), fmax(v[2], v[3])));
                else acc += v[0] + v[1] + v[2] + v[3];
            }
        float want = (float)(m ? acc : acc / (double)(g * g));
        const void *data[3] = {x, rois, bi};
        void *outs[1];
        q8_tensor_info info[1];
        run2((q8t_built){roi_build, &c}, data, 1, outs, info);
        float got = *(float *)outs[0];
        cr_assert(fabsf(got - want) <= 1e-6f * fabsf(want) + 1e-12f, "%s: %.9g, want %.9g",
                  c.mode, got, want);
        cr_assert(want != 0, "the map is inside the ROI");
        free(outs[0]);
    }
}

/* An empty ROI (x1 == x2) in half_pixel mode has an adaptive grid of 0
 * samples: 0, as the ONNX reference's empty loops give (not the map's
 * value under it). */
Test(roialign, empty_roi_is_zero) {
    float x[16], rois[4] = {1.5f, 1, 1.5f, 3};
    for (int i = 0; i < 16; i++) x[i] = 1;
    int64_t bi[1] = {0};
    for (int m = 0; m < 2; m++) {
        roi_case c = {m ? "max" : "avg", "half_pixel", 16, 1, 1, 4, 4, 1, 1, 1, 0, 1.0f};
        const void *data[3] = {x, rois, bi};
        void *outs[1];
        q8_tensor_info info[1];
        run2((q8t_built){roi_build, &c}, data, 1, outs, info);
        cr_assert_eq(*(float *)outs[0], 0.0f, "%s: %g", c.mode, *(float *)outs[0]);
        free(outs[0]);
    }
}

/* max over a bin some of whose samples fall off the map: those count as
 * 0, so a map of negative values gives 0 there, and its own max inside. */
Test(roialign, max_counts_samples_off_the_map_as_zero) {
    float x[16], rois[8] = {-3, -3, 2, 2, 0.5f, 0.5f, 2.5f, 2.5f};
    for (int i = 0; i < 16; i++) x[i] = -1.0f - (float)i;
    int64_t bi[2] = {0, 0};
    roi_case c = {"max", "half_pixel", 16, 1, 1, 4, 4, 2, 1, 1, 2, 1.0f};
    const void *data[3] = {x, rois, bi};
    void *outs[1];
    q8_tensor_info info[1];
    run2((q8t_built){roi_build, &c}, data, 1, outs, info);
    float *y = outs[0];
    cr_assert_eq(y[0], 0.0f, "partly off the map: %g", y[0]);
    cr_assert(y[1] < 0, "all on the map: %g", y[1]);
    free(outs[0]);
}

Test(roialign, errors) {
    float x[64] = {0};
    int64_t b[4] = {0};
    const void *data[3] = {x, x, b};
    roi_case c = {"mean", NULL, 16, 1, 1, 4, 4, 1, 1, 1, 0, 1.0f};
    EXPECT_ERR(roi_build(&c), data, "mode 'mean': expected avg or max");
    c = (roi_case){"avg", "asymmetric", 16, 1, 1, 4, 4, 1, 1, 1, 0, 1.0f};
    EXPECT_ERR(roi_build(&c), data, "coordinate_transformation_mode 'asymmetric'");
    c = (roi_case){"avg", NULL, 16, 1, 1, 4, 4, 1, 0, 1, 0, 1.0f};
    EXPECT_ERR(roi_build(&c), data, "output_height and output_width must be positive");
    c = (roi_case){"avg", NULL, 16, 1, 1, 4, 4, 1, 1 << 16, 1 << 10, 1024, 1.0f};
    EXPECT_ERR(roi_build(&c), data, "sampling_ratio 1024 asks for over 2^36 samples");
}
