/* The CUDA backend against the CPU executor, op by op (random inputs,
 * awkward shapes) and on the MNIST models quantized with `quantize`.
 *
 * Every test runs twice: in the suite `cuda` on the GPU (skipped, with the
 * reason, when there is none) and in `cuda_emulated` with Q8_CUDA_EMULATE=1,
 * where the same backend runs every kernel's element function on the host
 * and a reference loop replaces cuBLASLt: that checks the plans, pointers,
 * layouts and kernel arithmetic on machines without a GPU.
 *
 * Each CUDA session runs three times: first on the real inputs (right after
 * creation: a first run must not see weights still being copied; on the
 * GPU this run is eager and captures the graph), then on the inputs
 * reversed, then on the real inputs again (graph replays); the first and
 * the last must agree bit for bit, and with the CPU: INT8 outputs exactly (q8's INT8 ops
 * are bit-exact on every backend), float32 within 1e-4 relative (plus a
 * floor of 1e-5 of the output's largest magnitude, for values near 0). */
#include <dlfcn.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_cuda.h"
#include "calibrate.h"
#include "model.h"
#include "npy.h"
#include "passes.h"
#include "planner.h"
#include "convert.h"
#include "quantize.h"
#include "samples.h"
#include "testutil.h"

static bool g_emu;
static q8_session_stats g_stats; /* of the last CUDA session run_model made */
static q8_memory_info g_mem;     /* of the same session */

static void use_gpu_or_skip(void) {
    unsetenv("Q8_CUDA_EMULATE");
    char why[200];
    if (!q8_cuda_device_available(why, sizeof why))
        cr_skip_test("%s (GPU tests skipped; suite cuda_emulated runs them on the host)", why);
    g_emu = false;
}

static void use_emulation(void) {
    setenv("Q8_CUDA_EMULATE", "1", 1);
    g_emu = true;
}

#define CU_TEST(name)                                                                      \
    static void name##_body(void);                                                         \
    Test(cuda, name) {                                                                     \
        use_gpu_or_skip();                                                                 \
        name##_body();                                                                     \
    }                                                                                      \
    Test(cuda_emulated, name) {                                                            \
        use_emulation();                                                                   \
        name##_body();                                                                     \
    }                                                                                      \
    static void name##_body(void)

/* ---- one-node graphs ---------------------------------------------------------- */

typedef struct qin {
    const char *name;
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
    const void *data;       /* constant, or NULL for a graph input */
    const float *scales;    /* quantization scales, or NULL */
    int nscales;
} qin;

typedef struct attr {
    const char *name;
    q8_attr_type type;
    int64_t i;
    float f;
    const char *s;
    int n;
    int64_t ints[8];
    float floats[8];
} attr;

#define AI(nm, v) ((attr){.name = (nm), .type = Q8_ATTR_INT, .i = (v)})
#define AF(nm, v) ((attr){.name = (nm), .type = Q8_ATTR_FLOAT, .f = (v)})
#define AS(nm, v) ((attr){.name = (nm), .type = Q8_ATTR_STRING, .s = (v)})
#define AINTS(nm, cnt, ...)                                                               \
    ((attr){.name = (nm), .type = Q8_ATTR_INTS, .n = (cnt), .ints = __VA_ARGS__})

typedef struct spec {
    const char *op, *domain;
    int opset;              /* 0: the default (17) */
    int n_in, n_out;
    qin in[8];
    int n_attr;
    attr at[10];
} spec;

static void set_q(q8_tensor *t, const float *s, int n, int axis) {
    free(t->q.scale);
    t->q.scale = malloc(sizeof(float) * (size_t)n);
    memcpy(t->q.scale, s, sizeof(float) * (size_t)n);
    t->q = (q8_qparams){.axis = axis, .n = n, .scale = t->q.scale, .zero_point = 0};
}

static q8_graph *build_spec(const spec *sp) {
    q8t_in tin[8];
    for (int i = 0; i < sp->n_in; i++) {
        tin[i] = (q8t_in){sp->in[i].name, sp->in[i].dtype, sp->in[i].ndim, {0}, sp->in[i].data};
        memcpy(tin[i].dims, sp->in[i].dims, sizeof tin[i].dims);
    }
    q8_graph *g = q8t_graph1(sp->op, tin, sp->n_in, sp->n_out);
    if (sp->opset) g->opset = sp->opset;
    q8_node *n = g->nodes[g->n_nodes - 1];
    if (sp->domain) {
        free(n->domain);
        n->domain = q8_strdup(sp->domain);
    }
    for (int i = 0; i < sp->n_in; i++)
        if (sp->in[i].name && sp->in[i].scales)
            set_q(g->tensors[q8_graph_find(g, sp->in[i].name)], sp->in[i].scales,
                  sp->in[i].nscales, sp->in[i].nscales == 1 && !sp->in[i].data ? -1 : 0);
    for (int i = 0; i < sp->n_attr; i++) {
        const attr *a = &sp->at[i];
        switch (a->type) {
        case Q8_ATTR_INT: q8t_attr_int(g, a->name, a->i); break;
        case Q8_ATTR_FLOAT: q8t_attr_float(g, a->name, a->f); break;
        case Q8_ATTR_STRING: q8t_attr_str(g, a->name, a->s); break;
        case Q8_ATTR_INTS: q8t_attr_ints(g, a->name, a->ints, a->n); break;
        case Q8_ATTR_FLOATS: q8t_attr_floats(g, a->name, a->floats, a->n); break;
        default: cr_assert_fail("bad attribute type");
        }
    }
    return g;
}

/* ---- running on the CPU and on CUDA --------------------------------------------- */

#define MAX_OUT 4

typedef struct result {
    int n;
    void *data[MAX_OUT];
    q8_tensor_info info[MAX_OUT];
    size_t bytes[MAX_OUT];
} result;

static void result_free(result *r) {
    for (int i = 0; i < r->n; i++) free(r->data[i]);
    memset(r, 0, sizeof *r);
}

/* The same bytes, elements in reverse order. */
static void *reversed(const void *src, size_t bytes, size_t es) {
    uint8_t *d = malloc(bytes ? bytes : 1);
    size_t n = es ? bytes / es : 0;
    for (size_t i = 0; i < n; i++) memcpy(d + i * es, (const uint8_t *)src + (n - 1 - i) * es, es);
    return d;
}

static q8_status set_inputs(q8_session *s, const q8_graph *g, const void *const *in,
                            q8_error *err) {
    for (int i = 0; i < g->n_inputs; i++) {
        const q8_tensor *t = g->tensors[g->inputs[i]];
        Q8_TRY(q8_session_set_input(s, t->name, t->dtype, t->dims, t->ndim, in[i], err));
    }
    return Q8_OK;
}

static void collect(const q8_session *s, const q8_graph *g, result *r) {
    r->n = g->n_outputs < MAX_OUT ? g->n_outputs : MAX_OUT;
    for (int k = 0; k < r->n; k++) {
        const void *d;
        q8_session_output(s, k, &r->info[k], &d, NULL);
        int64_t numel;
        cr_assert(q8_shape_numel(r->info[k].dims, r->info[k].ndim, &numel));
        r->bytes[k] = (size_t)numel * q8_dtype_size(r->info[k].dtype);
        r->data[k] = malloc(r->bytes[k] ? r->bytes[k] : 1);
        cr_assert(d || !r->bytes[k], "output %d has no data", k);
        if (r->bytes[k]) memcpy(r->data[k], d, r->bytes[k]);
        r->info[k].name = NULL;
    }
}

/* Run the graph (consumed) on the device; see the file comment. */
static q8_status run_model(q8_model *m, const void *const *in, bool cuda, result *r,
                           q8_error *err) {
    q8_session *s;
    q8_session_options so = {.n_threads = 2, .device = cuda ? Q8_DEVICE_CUDA : Q8_DEVICE_CPU};
    Q8_TRY(q8_session_create(m, &so, &s, err));
    const q8_graph *g = m->g;
    q8_status st = set_inputs(s, g, in, err);
    if (st == Q8_OK) st = q8_session_run(s, err);
    if (st == Q8_OK) collect(s, g, r);
    if (st == Q8_OK && cuda) {
        void *alt[8] = {0};
        cr_assert(g->n_inputs <= 8);
        for (int i = 0; i < g->n_inputs; i++) {
            const q8_tensor *t = g->tensors[g->inputs[i]];
            alt[i] = reversed(in[i], q8_tensor_nbytes(t), q8_dtype_size(t->dtype));
        }
        st = set_inputs(s, g, (const void *const *)alt, err);
        if (st == Q8_OK) st = q8_session_run(s, err);
        for (int i = 0; i < g->n_inputs; i++) free(alt[i]);
    }
    if (st == Q8_OK && cuda) { /* a replay on the first inputs gives the same bytes */
        st = set_inputs(s, g, in, err);
        if (st == Q8_OK) st = q8_session_run(s, err);
        result again = {0};
        if (st == Q8_OK) collect(s, g, &again);
        for (int k = 0; st == Q8_OK && k < r->n; k++)
            cr_assert(memcmp(r->data[k], again.data[k], r->bytes[k]) == 0,
                      "output %d changed between two runs on the same inputs", k);
        result_free(&again);
        q8_memory_info mi;
        q8_session_memory(s, &mi);
        /* weights + arena, one allocation each */
        cr_assert_geq(mi.device_bytes, mi.arena_bytes);
        cr_assert_gt(mi.device_bytes, 0);
        q8_session_stats_get(s, &g_stats);
        g_mem = mi;
    }
    q8_session_free(s);
    return st;
}

static q8_status run_graph(q8_graph *g, const void *const *in, bool cuda, result *r,
                           q8_error *err) {
    q8_model *m;
    Q8_TRY(q8t_model_of(g, &m, err));
    q8_status s = run_model(m, in, cuda, r, err);
    q8_model_free(m);
    return s;
}

typedef struct tol {
    float rtol, floor;      /* float32: |d| <= rtol |want| + floor max |want| */
    int lsb;                /* integers: |d| <= lsb */
} tol;

static const tol k_exact = {0, 0, 0};
static const tol k_f32 = {1e-4f, 1e-5f, 0};

/* Kernels that do the CPU's float operations in the CPU's order give its
 * bits exactly; on a GPU, those calling libm-style functions (tanh, erf,
 * log, exp in double) may differ by an ulp, hence k_f32 there. */
static tol exact_on_host(void) { return g_emu ? k_exact : k_f32; }

static void compare(const result *want, const result *got, tol t, const char *what) {
    cr_assert_eq(got->n, want->n, "%s: %d outputs, want %d", what, got->n, want->n);
    for (int k = 0; k < want->n; k++) {
        const q8_tensor_info *a = &want->info[k], *b = &got->info[k];
        cr_assert_eq(b->dtype, a->dtype, "%s: output %d is %s, want %s", what, k,
                     q8_dtype_name(b->dtype), q8_dtype_name(a->dtype));
        cr_assert_eq(b->ndim, a->ndim, "%s: output %d rank", what, k);
        for (int d = 0; d < a->ndim; d++)
            cr_assert_eq(b->dims[d], a->dims[d], "%s: dim %d", what, d);
        size_t es = q8_dtype_size(a->dtype);
        int64_t n = (int64_t)(want->bytes[k] / (es ? es : 1));
        if (a->dtype == Q8_F32) {
            const float *w = want->data[k], *g = got->data[k];
            float mx = 0;
            for (int64_t i = 0; i < n; i++)
                if (isfinite(w[i]) && fabsf(w[i]) > mx) mx = fabsf(w[i]);
            for (int64_t i = 0; i < n; i++) {
                if (isnan(w[i])) {
                    cr_assert(isnan(g[i]), "%s: [%lld] = %g, want NaN", what, (long long)i, g[i]);
                    continue;
                }
                if (isinf(w[i])) {
                    cr_assert(g[i] == w[i], "%s: [%lld] = %g, want %g", what, (long long)i, g[i],
                              w[i]);
                    continue;
                }
                float d = fabsf(g[i] - w[i]);
                cr_assert(d <= t.rtol * fabsf(w[i]) + t.floor * mx, "%s: output %d [%lld] = %.9g, "
                          "the CPU gives %.9g", what, k, (long long)i, g[i], w[i]);
            }
        } else if (a->dtype == Q8_I8 || a->dtype == Q8_U8) {
            const uint8_t *w = want->data[k], *g = got->data[k];
            for (int64_t i = 0; i < n; i++) {
                int wv = a->dtype == Q8_I8 ? (int8_t)w[i] : w[i];
                int gv = a->dtype == Q8_I8 ? (int8_t)g[i] : g[i];
                cr_assert(abs(gv - wv) <= t.lsb, "%s: output %d [%lld] = %d, the CPU gives %d",
                          what, k, (long long)i, gv, wv);
            }
        } else {
            cr_assert(memcmp(want->data[k], got->data[k], want->bytes[k]) == 0,
                      "%s: output %d (%s) differs", what, k, q8_dtype_name(a->dtype));
        }
    }
}

/* The spec on the CPU and on CUDA; outputs compared. in: graph inputs. */
/* The spec through the one op harness (q8t_run_backends: the CPU, then
 * every other backend against it), which must have run it on CUDA. */
static void check_spec(const spec *sp, const void *const *in, tol t, const char *what) {
    void *out[MAX_OUT] = {0};
    q8_tensor_info info[MAX_OUT];
    q8_error err = {0};
    int others = 0;
    cr_assert_eq(q8t_run_backends(build_spec(sp), in, 2, out, info, MAX_OUT, t.rtol == 0, &others,
                                  &err), Q8_OK, "%s: %s", what, err.msg);
    cr_assert_geq(others, 1, "%s: the cuda backend did not run it", what);
    for (int k = 0; k < MAX_OUT; k++) free(out[k]);
}

/* ---- data ---------------------------------------------------------------------- */

static int64_t numel_of(const qin *q) {
    int64_t n = 1;
    for (int d = 0; d < q->ndim; d++) n *= q->dims[d];
    return n;
}

/* allocation sizes GCC can see are in range */
static size_t nbytes(int64_t n, size_t es) { return (n > 0 ? (size_t)n : 1) * es; }

static int8_t *rand_i8(q8t_rng *r, int64_t n, int lo) {
    int8_t *x = malloc(nbytes(n, 1));
    for (int64_t i = 0; i < n; i++) {
        int8_t v = (int8_t)(q8t_next(r) >> 56);
        x[i] = v < lo ? (int8_t)lo : v;
    }
    return x;
}

static float *rand_f32(q8t_rng *r, int64_t n, float lo, float hi) {
    float *x = malloc(nbytes(n, sizeof(float)));
    q8t_fill(r, x, n, lo, hi);
    return x;
}

static float *rand_scales(q8t_rng *r, int64_t n, float lo, float hi) {
    return rand_f32(r, n, lo, hi);
}

static int32_t *rand_bias(q8t_rng *r, int64_t n) {
    int32_t *b = malloc(nbytes(n, sizeof(int32_t)));
    for (int64_t i = 0; i < n; i++) b[i] = (int32_t)(q8t_next(r) % 20001) - 10000;
    return b;
}

/* Fused activations and output kinds of the q8.Q* ops. */
typedef struct qact {
    const char *act;
    float lo, hi, alpha, y_scale;   /* y_scale 0: float32 output */
} qact;

static const qact k_acts[] = {
    {NULL, 0, 0, 0, 0},
    {NULL, 0, 0, 0, 0.05f},
    {"Relu", 0, 0, 0, 0.04f},
    {"Relu", 0, 0, 0, 0},
    {"Clip", -0.5f, 2.0f, 0, 0.02f},
    {"Clip", 0.0f, 6.0f, 0, 0},
    {"LeakyRelu", 0, 0, 0.1f, 0.03f},
    {"LeakyRelu", 0, 0, 0.2f, 0},
};
#define N_ACTS (int)(sizeof k_acts / sizeof k_acts[0])

static void add_act(spec *sp, const qact *a) {
    if (a->act) sp->at[sp->n_attr++] = AS("_act", a->act);
    if (a->act && strcmp(a->act, "Clip") == 0) {
        sp->at[sp->n_attr++] = AF("_act_min", a->lo);
        sp->at[sp->n_attr++] = AF("_act_max", a->hi);
    }
    if (a->act && strcmp(a->act, "LeakyRelu") == 0)
        sp->at[sp->n_attr++] = AF("_act_alpha", a->alpha);
    if (a->y_scale > 0) sp->at[sp->n_attr++] = AF("y_scale", a->y_scale);
}

/* ---- q8.QGemm ------------------------------------------------------------------- */

static void qgemm_case(int ndim, const int64_t *adims, int64_t N, bool bias, int act_step,
                       uint64_t seed) {
    q8t_rng r = q8t_seed(seed);
    int64_t K = adims[ndim - 1], rows = 1;
    for (int d = 0; d < ndim; d++) rows *= adims[d];
    int8_t *a = rand_i8(&r, rows, -128), *w = rand_i8(&r, N * K, -127);
    int32_t *b = rand_bias(&r, N);
    float sx = q8t_uniform(&r, 0.01f, 0.05f), *sw = rand_scales(&r, N, 0.001f, 0.02f);
    for (int ai = 0; ai < N_ACTS; ai += act_step) {
        spec sp = {.op = "QGemm", .domain = "q8", .n_in = bias ? 3 : 2, .n_out = 1};
        sp.in[0] = (qin){"a", Q8_I8, ndim, {0}, NULL, &sx, 1};
        memcpy(sp.in[0].dims, adims, sizeof(int64_t) * (size_t)ndim);
        sp.in[1] = (qin){"w", Q8_I8, 2, {N, K}, w, sw, (int)N};
        sp.in[2] = (qin){"b", Q8_I32, 1, {N}, b, NULL, 0};
        add_act(&sp, &k_acts[ai]);
        char what[128];
        snprintf(what, sizeof what, "QGemm rows %lld K %lld N %lld act %d", (long long)rows,
                 (long long)K, (long long)N, ai);
        const void *in[1] = {a};
        check_spec(&sp, in, k_exact, what);
    }
    free(a), free(w), free(b), free(sw);
}

CU_TEST(qgemm) {
    qgemm_case(1, (int64_t[]){13}, 5, true, 1, 1);           /* odd K: padded operands */
    qgemm_case(2, (int64_t[]){3, 32}, 7, false, 3, 2);       /* K % 16 == 0, N % 4 != 0 */
    qgemm_case(3, (int64_t[]){2, 3, 48}, 64, true, 2, 3);    /* weights used as stored */
    qgemm_case(2, (int64_t[]){9, 100}, 17, true, 4, 4);
    qgemm_case(2, (int64_t[]){1, 784}, 128, true, 5, 5);    /* the MNIST MLP's first layer */
}

/* ---- q8.QConv / q8.QConvTranspose ------------------------------------------------ */

typedef struct conv_case {
    const char *what;
    bool transpose;
    int nsp;
    int64_t N, C, H, W, M, KH, KW, sh, sw, dh, dw, group;
    int64_t pads[4];            /* top, left, bottom, right */
    const char *auto_pad;
    int64_t oph, opw;           /* transpose: output_padding */
    bool bias;
    int act_step;
} conv_case;

static void conv_check(conv_case c, uint64_t seed) {
    q8t_rng r = q8t_seed(seed);
    if (c.nsp == 1) c.H = c.KH = c.sh = c.dh = 1;
    int64_t Cg = c.C / c.group, wc = c.M;
    int8_t *x = rand_i8(&r, c.N * c.C * c.H * c.W, -128);
    int8_t *w = rand_i8(&r, wc * Cg * c.KH * c.KW, -127);
    int32_t *b = rand_bias(&r, c.M);
    float sx = q8t_uniform(&r, 0.01f, 0.05f), *swc = rand_scales(&r, c.M, 0.001f, 0.02f);
    int r_ = 2 + c.nsp, o = c.nsp == 1;
    for (int ai = 0; ai < N_ACTS; ai += c.act_step ? c.act_step : 1) {
        spec sp = {.op = c.transpose ? "QConvTranspose" : "QConv", .domain = "q8",
                   .n_in = c.bias ? 3 : 2, .n_out = 1};
        sp.in[0] = (qin){"x", Q8_I8, r_, {c.N, c.C, c.H, c.W}, NULL, &sx, 1};
        sp.in[1] = (qin){"w", Q8_I8, r_, {c.M, Cg, c.KH, c.KW}, w, swc, (int)c.M};
        sp.in[2] = (qin){"b", Q8_I32, 1, {c.M}, b, NULL, 0};
        if (c.nsp == 1) {
            sp.in[0].dims[2] = c.W;
            sp.in[1].dims[2] = c.KW;
        }
        int64_t s[2] = {c.sh, c.sw}, d[2] = {c.dh, c.dw}, k[2] = {c.KH, c.KW};
        int64_t p4[4] = {c.pads[0], c.pads[1], c.pads[2], c.pads[3]};
        int64_t p2[2] = {c.pads[1], c.pads[3]};
        int64_t op[2] = {c.oph, c.opw};
        attr a = {.name = "strides", .type = Q8_ATTR_INTS, .n = c.nsp};
        memcpy(a.ints, s + o, sizeof(int64_t) * (size_t)c.nsp);
        sp.at[sp.n_attr++] = a;
        a.name = "dilations";
        memcpy(a.ints, d + o, sizeof(int64_t) * (size_t)c.nsp);
        sp.at[sp.n_attr++] = a;
        a.name = "kernel_shape";
        memcpy(a.ints, k + o, sizeof(int64_t) * (size_t)c.nsp);
        sp.at[sp.n_attr++] = a;
        sp.at[sp.n_attr++] = AI("group", c.group);
        if (c.auto_pad) {
            sp.at[sp.n_attr++] = AS("auto_pad", c.auto_pad);
        } else {
            a.name = "pads";
            a.n = 2 * c.nsp;
            memcpy(a.ints, c.nsp == 1 ? p2 : p4, sizeof(int64_t) * (size_t)a.n);
            sp.at[sp.n_attr++] = a;
        }
        if (c.transpose && (c.oph || c.opw)) {
            a.name = "output_padding";
            a.n = c.nsp;
            memcpy(a.ints, op + o, sizeof(int64_t) * (size_t)c.nsp);
            sp.at[sp.n_attr++] = a;
        }
        add_act(&sp, &k_acts[ai]);
        char what[200];
        snprintf(what, sizeof what, "%s, act %d", c.what, ai);
        const void *in[1] = {x};
        check_spec(&sp, in, k_exact, what);
    }
    free(x), free(w), free(b), free(swc);
}

CU_TEST(qconv) {
    conv_check((conv_case){.what = "3x3 pad 1, C=13 M=17, 9x7, N=2", .nsp = 2, .N = 2, .C = 13,
                           .H = 9, .W = 7, .M = 17, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1,
                           .dw = 1, .group = 1, .pads = {1, 1, 1, 1}, .bias = true}, 1);
    conv_check((conv_case){.what = "1x1, C=64 M=65 5x5", .nsp = 2, .N = 1, .C = 64, .H = 5,
                           .W = 5, .M = 65, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                           .group = 1, .bias = true, .act_step = 3}, 2);
    conv_check((conv_case){.what = "1x1 stride 2", .nsp = 2, .N = 3, .C = 16, .H = 9, .W = 8,
                           .M = 8, .KH = 1, .KW = 1, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
                           .group = 1, .act_step = 3}, 3);
    conv_check((conv_case){.what = "5x3 stride (2,3) dilation (2,1) asymmetric pads", .nsp = 2,
                           .N = 1, .C = 5, .H = 17, .W = 13, .M = 7, .KH = 5, .KW = 3, .sh = 2,
                           .sw = 3, .dh = 2, .dw = 1, .group = 1, .pads = {2, 0, 1, 3},
                           .bias = true, .act_step = 2}, 4);
    conv_check((conv_case){.what = "grouped 3x3 dilation 2, group 4 (direct kernel)", .nsp = 2,
                           .N = 2, .C = 8, .H = 11, .W = 10, .M = 12, .KH = 3, .KW = 3, .sh = 1,
                           .sw = 1, .dh = 2, .dw = 2, .group = 4, .pads = {1, 0, 2, 1},
                           .bias = true, .act_step = 2}, 5);
    conv_check((conv_case){.what = "grouped, 16 outputs per group (GEMM per group)", .nsp = 2,
                           .N = 2, .C = 6, .H = 7, .W = 6, .M = 32, .KH = 3, .KW = 3, .sh = 1,
                           .sw = 1, .dh = 1, .dw = 1, .group = 2, .pads = {1, 1, 1, 1},
                           .bias = true, .act_step = 3}, 6);
    conv_check((conv_case){.what = "depthwise 3x3 stride 2", .nsp = 2, .N = 2, .C = 24, .H = 9,
                           .W = 11, .M = 24, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1,
                           .dw = 1, .group = 24, .pads = {1, 1, 1, 1}, .bias = true,
                           .act_step = 2}, 7);
    conv_check((conv_case){.what = "7x7 stride 2 pad 3 (a stem), C=3 M=16 23x19", .nsp = 2,
                           .N = 1, .C = 3, .H = 23, .W = 19, .M = 16, .KH = 7, .KW = 7, .sh = 2,
                           .sw = 2, .dh = 1, .dw = 1, .group = 1, .pads = {3, 3, 3, 3},
                           .bias = true, .act_step = 4}, 8);
    conv_check((conv_case){.what = "SAME_UPPER stride 2", .nsp = 2, .N = 1, .C = 4, .H = 8,
                           .W = 9, .M = 5, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
                           .group = 1, .auto_pad = "SAME_UPPER", .act_step = 4}, 9);
    conv_check((conv_case){.what = "1-D k5 stride 2 pad 2", .nsp = 1, .N = 2, .C = 6, .W = 23,
                           .M = 9, .KW = 5, .sw = 2, .dw = 1, .group = 1, .pads = {0, 2, 0, 2},
                           .bias = true, .act_step = 3}, 10);
}

CU_TEST(qconvtranspose) {
    conv_check((conv_case){.what = "transpose k2 s2 (U-Net up-sampling)", .transpose = true,
                           .nsp = 2, .N = 1, .C = 8, .H = 5, .W = 6, .M = 4, .KH = 2, .KW = 2,
                           .sh = 2, .sw = 2, .dh = 1, .dw = 1, .group = 1, .bias = true}, 11);
    conv_check((conv_case){.what = "transpose k3 s2 pads 1 output_padding 1, N=2",
                           .transpose = true, .nsp = 2, .N = 2, .C = 5, .H = 4, .W = 7, .M = 3,
                           .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .group = 1,
                           .pads = {1, 1, 1, 1}, .oph = 1, .opw = 1, .bias = true,
                           .act_step = 2}, 12);
    conv_check((conv_case){.what = "transpose grouped, dilation 2", .transpose = true, .nsp = 2,
                           .N = 1, .C = 6, .H = 5, .W = 4, .M = 4, .KH = 3, .KW = 2, .sh = 1,
                           .sw = 2, .dh = 2, .dw = 1, .group = 2, .pads = {0, 1, 2, 0},
                           .act_step = 3}, 13);
    conv_check((conv_case){.what = "transpose 1-D", .transpose = true, .nsp = 1, .N = 2, .C = 3,
                           .W = 9, .M = 5, .KW = 4, .sw = 3, .dw = 1, .group = 1, .bias = true,
                           .act_step = 4}, 14);
}

/* ---- q8.QMatMul ---------------------------------------------------------------------- */

static void qmatmul_case(int ra, const int64_t *ad, int rb, const int64_t *bd, uint64_t seed) {
    q8t_rng r = q8t_seed(seed);
    int64_t na = 1, nb = 1;
    for (int i = 0; i < ra; i++) na *= ad[i];
    for (int i = 0; i < rb; i++) nb *= bd[i];
    int8_t *a = rand_i8(&r, na, -128), *b = rand_i8(&r, nb, -128);
    float sa = 0.03f, sb = 0.02f;
    for (int ai = 0; ai < N_ACTS; ai += 3) {
        spec sp = {.op = "QMatMul", .domain = "q8", .n_in = 2, .n_out = 1};
        sp.in[0] = (qin){"a", Q8_I8, ra, {0}, NULL, &sa, 1};
        sp.in[1] = (qin){"b", Q8_I8, rb, {0}, NULL, &sb, 1};
        memcpy(sp.in[0].dims, ad, sizeof(int64_t) * (size_t)ra);
        memcpy(sp.in[1].dims, bd, sizeof(int64_t) * (size_t)rb);
        add_act(&sp, &k_acts[ai]);
        const void *in[2] = {a, b};
        char what[64];
        snprintf(what, sizeof what, "QMatMul case %llu act %d", (unsigned long long)seed, ai);
        check_spec(&sp, in, k_exact, what);
    }
    free(a), free(b);
}

CU_TEST(qmatmul) {
    qmatmul_case(4, (int64_t[]){2, 3, 5, 13}, 2, (int64_t[]){13, 6}, 1);   /* B broadcast */
    qmatmul_case(3, (int64_t[]){4, 7, 16}, 3, (int64_t[]){4, 16, 9}, 2);
    qmatmul_case(4, (int64_t[]){1, 3, 8, 13}, 4, (int64_t[]){2, 1, 13, 5}, 3); /* both */
    qmatmul_case(2, (int64_t[]){17, 64}, 2, (int64_t[]){64, 17}, 4);
}

/* ---- QuantizeLinear / DequantizeLinear ------------------------------------------------ */

CU_TEST(quantizelinear) {
    q8t_rng r = q8t_seed(21);
    int64_t dims[4] = {2, 3, 7, 5}, n = 2 * 3 * 7 * 5;
    float *x = rand_f32(&r, n, -3, 3);
    x[0] = 0.025f, x[1] = -0.075f, x[2] = 1e9f, x[3] = -1e9f; /* halfway, saturation */
    int32_t *xi = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) xi[i] = (int32_t)(q8t_next(&r) % 2001) - 1000;
    float s1 = 0.05f, s3[3] = {0.01f, 0.02f, 0.5f};
    int8_t z1 = 3, z3[3] = {0, -5, 7};
    uint8_t u1 = 128;
    for (int c = 0; c < 5; c++) {
        spec sp = {.op = "QuantizeLinear", .n_in = 3, .n_out = 1, .opset = 13};
        sp.in[0] = (qin){"x", c == 4 ? Q8_I32 : Q8_F32, 4, {2, 3, 7, 5}, NULL, NULL, 0};
        sp.in[1] = (qin){"s", Q8_F32, 0, {0}, &s1, NULL, 0};
        sp.in[2] = (qin){"z", Q8_I8, 0, {0}, &z1, NULL, 0};
        if (c == 1) sp.in[2] = (qin){"z", Q8_U8, 0, {0}, &u1, NULL, 0};
        if (c == 2) sp.n_in = 2; /* no zero point: uint8 */
        if (c == 3 || c == 4) {
            sp.in[1] = (qin){"s", Q8_F32, 1, {3}, s3, NULL, 0};
            sp.in[2] = (qin){"z", Q8_I8, 1, {3}, z3, NULL, 0};
            sp.at[sp.n_attr++] = AI("axis", 1);
        }
        const void *in[1] = {c == 4 ? (const void *)xi : x};
        char what[64];
        snprintf(what, sizeof what, "QuantizeLinear case %d", c);
        check_spec(&sp, in, k_exact, what);
    }
    (void)dims;
    free(x), free(xi);
}

CU_TEST(dequantizelinear) {
    q8t_rng r = q8t_seed(22);
    int64_t n = 2 * 4 * 3 * 5;
    int8_t *x8 = rand_i8(&r, n, -128);
    int32_t *x32 = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) x32[i] = (int32_t)q8t_next(&r);
    float s1 = 0.05f, s4[4] = {0.01f, 0.02f, 0.5f, 3.0f};
    int8_t z1 = -3, z4[4] = {0, 1, -2, 3};
    uint8_t u1 = 100;
    int32_t zi = 12345;
    for (int c = 0; c < 4; c++) {
        spec sp = {.op = "DequantizeLinear", .n_in = 3, .n_out = 1, .opset = 13};
        q8_dtype dt = c == 1 ? Q8_U8 : c == 3 ? Q8_I32 : Q8_I8;
        sp.in[0] = (qin){"x", dt, 4, {2, 4, 3, 5}, NULL, NULL, 0};
        sp.in[1] = (qin){"s", Q8_F32, 0, {0}, &s1, NULL, 0};
        sp.in[2] = (qin){"z", dt, 0, {0}, c == 1 ? (const void *)&u1 : c == 3 ? (const void *)&zi
                                                                             : (const void *)&z1,
                         NULL, 0};
        if (c == 2) {
            sp.in[1] = (qin){"s", Q8_F32, 1, {4}, s4, NULL, 0};
            sp.in[2] = (qin){"z", Q8_I8, 1, {4}, z4, NULL, 0};
            sp.at[sp.n_attr++] = AI("axis", 1);
        }
        const void *in[1] = {dt == Q8_I32 ? (const void *)x32 : (const void *)x8};
        char what[64];
        snprintf(what, sizeof what, "DequantizeLinear case %d", c);
        check_spec(&sp, in, k_exact, what);
    }
    free(x8), free(x32);
}

/* ---- elementwise ---------------------------------------------------------------------- */

CU_TEST(unary_float) {
    static const char *const ops[] = {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish",
                                      "Tanh", "Gelu", "Erf", "Sqrt", "Exp", "Log", "Abs", "Neg",
                                      "Reciprocal"};
    q8t_rng r = q8t_seed(31);
    int64_t n = 7 * 13 * 3;
    float *x = rand_f32(&r, n, -5, 5), *xp = rand_f32(&r, n, 0.01f, 5);
    x[0] = -3.0f, x[1] = 3.0f, x[2] = 0.0f, x[3] = -0.0f, x[4] = INFINITY, x[5] = -INFINITY;
    x[6] = NAN;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        bool pos = strcmp(ops[k], "Sqrt") == 0 || strcmp(ops[k], "Log") == 0;
        spec sp = {.op = ops[k], .n_in = 1, .n_out = 1};
        sp.in[0] = (qin){"x", Q8_F32, 3, {7, 13, 3}, NULL, NULL, 0};
        if (strcmp(ops[k], "LeakyRelu") == 0) sp.at[sp.n_attr++] = AF("alpha", 0.3f);
        if (strcmp(ops[k], "HardSigmoid") == 0) {
            sp.at[sp.n_attr++] = AF("alpha", 0.25f);
            sp.at[sp.n_attr++] = AF("beta", 0.4f);
        }
        const void *in[1] = {pos ? xp : x};
        /* plain float arithmetic, or the CPU's own functions
         * (kernels/common/vmath.h's exp, tanh, erf, Gelu, log): exact */
        check_spec(&sp, in, k_exact, ops[k]);
    }
    spec sp = {.op = "Gelu", .n_in = 1, .n_out = 1, .n_attr = 1};
    sp.in[0] = (qin){"x", Q8_F32, 1, {n}, NULL, NULL, 0};
    sp.at[0] = AS("approximate", "tanh");
    const void *in[1] = {x};
    check_spec(&sp, in, exact_on_host(), "Gelu tanh");
    free(x), free(xp);
}

CU_TEST(relu_clip_int8_and_clip_float) {
    q8t_rng r = q8t_seed(32);
    int64_t n = 5 * 9 * 7;
    int8_t *x8 = rand_i8(&r, n, -128);
    float *xf = rand_f32(&r, n, -4, 4), sx = 0.05f;
    spec sp = {.op = "Relu", .n_in = 1, .n_out = 1};
    sp.in[0] = (qin){"x", Q8_I8, 3, {5, 9, 7}, NULL, &sx, 1};
    const void *in8[1] = {x8}, *inf[1] = {xf};
    check_spec(&sp, in8, k_exact, "Relu int8");
    int8_t lo = -20, hi = 90;
    spec cl = {.op = "Clip", .n_in = 3, .n_out = 1};
    cl.in[0] = sp.in[0];
    cl.in[1] = (qin){"lo", Q8_I8, 0, {0}, &lo, NULL, 0};
    cl.in[2] = (qin){"hi", Q8_I8, 0, {0}, &hi, NULL, 0};
    check_spec(&cl, in8, k_exact, "Clip int8");
    float flo = -1.5f, fhi = 2.25f;
    spec cf = {.op = "Clip", .n_in = 3, .n_out = 1};
    cf.in[0] = (qin){"x", Q8_F32, 3, {5, 9, 7}, NULL, NULL, 0};
    cf.in[1] = (qin){"lo", Q8_F32, 0, {0}, &flo, NULL, 0};
    cf.in[2] = (qin){"hi", Q8_F32, 0, {0}, &fhi, NULL, 0};
    check_spec(&cf, inf, k_exact, "Clip float (inputs)");
    cf.n_in = 2;
    check_spec(&cf, inf, k_exact, "Clip float (min only)");
    spec c6 = {.op = "Clip", .opset = 6, .n_in = 1, .n_out = 1, .n_attr = 2};
    c6.in[0] = cf.in[0];
    c6.at[0] = AF("min", 0.0f);
    c6.at[1] = AF("max", 6.0f);
    check_spec(&c6, inf, k_exact, "Clip-6 (attributes)");
    free(x8), free(xf);
}

CU_TEST(binary_broadcast) {
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div"};
    static const struct {
        int na, nb;
        int64_t a[4], b[4];
        bool b_const;
    } shapes[] = {
        {3, 3, {2, 3, 4}, {2, 3, 4}, false}, {3, 1, {2, 3, 13}, {13}, true},
        {3, 2, {2, 1, 4}, {3, 1}, false},    {1, 2, {1}, {5, 7}, false},
        {4, 4, {2, 13, 9, 7}, {1, 13, 1, 1}, true},
    };
    q8t_rng r = q8t_seed(33);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int k = 0; k < 4; k++) {
            qin a = {"a", Q8_F32, shapes[s].na, {0}, NULL, NULL, 0};
            qin b = {"b", Q8_F32, shapes[s].nb, {0}, NULL, NULL, 0};
            memcpy(a.dims, shapes[s].a, sizeof a.dims[0] * 4);
            memcpy(b.dims, shapes[s].b, sizeof b.dims[0] * 4);
            float *da = rand_f32(&r, numel_of(&a), -3, 3);
            float *db = rand_f32(&r, numel_of(&b), 0.5f, 3);
            if (shapes[s].b_const) b.data = db;
            spec sp = {.op = ops[k], .n_in = 2, .n_out = 1, .in = {a, b}};
            const void *in[2] = {da, db};
            char what[64];
            snprintf(what, sizeof what, "%s shapes %zu", ops[k], s);
            check_spec(&sp, in, k_exact, what);
            free(da), free(db);
        }
    /* Before opset 7: B [3, 4] broadcast onto A at axis 1 (the core's plan). */
    qin a = {"a", Q8_F32, 4, {2, 3, 4, 5}, NULL, NULL, 0};
    qin b = {"b", Q8_F32, 2, {3, 4}, NULL, NULL, 0};
    float *da = rand_f32(&r, numel_of(&a), -3, 3), *db = rand_f32(&r, numel_of(&b), 0.5f, 3);
    spec sp = {.op = "Mul", .opset = 6, .n_in = 2, .n_out = 1, .in = {a, b}, .n_attr = 2};
    sp.at[0] = AI("broadcast", 1);
    sp.at[1] = AI("axis", 1);
    const void *in[2] = {da, db};
    check_spec(&sp, in, k_exact, "Mul legacy broadcast");
    free(da), free(db);
}

/* ---- normalization, pooling, reductions ------------------------------------------------- */

CU_TEST(softmax) {
    q8t_rng r = q8t_seed(41);
    float *x = rand_f32(&r, 3 * 7 * 13, -6, 6);
    static const struct {
        const char *op;
        int opset, axis;
    } cases[] = {{"Softmax", 13, -1}, {"Softmax", 13, 1},    {"Softmax", 11, 1},
                 {"LogSoftmax", 13, -1}, {"LogSoftmax", 13, 0}, {"Softmax", 13, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spec sp = {.op = cases[c].op, .opset = cases[c].opset, .n_in = 1, .n_out = 1, .n_attr = 1};
        sp.in[0] = (qin){"x", Q8_F32, 3, {3, 7, 13}, NULL, NULL, 0};
        sp.at[0] = AI("axis", cases[c].axis);
        const void *in[1] = {x};
        char what[64];
        snprintf(what, sizeof what, "%s opset %d axis %d", cases[c].op, cases[c].opset,
                 cases[c].axis);
        check_spec(&sp, in, exact_on_host(), what);
    }
    free(x);
}

CU_TEST(layernorm) {
    q8t_rng r = q8t_seed(42);
    float *x = rand_f32(&r, 2 * 5 * 13, -3, 5), *sc = rand_f32(&r, 5 * 13, 0.5f, 1.5f);
    float *bi = rand_f32(&r, 5 * 13, -1, 1);
    for (int c = 0; c < 4; c++) {
        spec sp = {.op = "LayerNormalization", .n_in = c == 2 ? 2 : 3, .n_out = 1};
        sp.in[0] = (qin){"x", Q8_F32, 3, {2, 5, 13}, NULL, NULL, 0};
        if (c == 0 || c == 2) { /* axis -1 */
            sp.in[1] = (qin){"s", Q8_F32, 1, {13}, sc, NULL, 0};
            sp.in[2] = (qin){"b", Q8_F32, 1, {13}, bi, NULL, 0};
        } else if (c == 1) { /* axis 1, full scale, broadcast bias */
            sp.in[1] = (qin){"s", Q8_F32, 2, {5, 13}, sc, NULL, 0};
            sp.in[2] = (qin){"b", Q8_F32, 2, {1, 13}, bi, NULL, 0};
            sp.at[sp.n_attr++] = AI("axis", 1);
        } else { /* axis 1, scale [5, 1] broadcast */
            sp.in[1] = (qin){"s", Q8_F32, 2, {5, 1}, sc, NULL, 0};
            sp.in[2] = (qin){"b", Q8_F32, 1, {1}, bi, NULL, 0};
            sp.at[sp.n_attr++] = AI("axis", -2);
            sp.at[sp.n_attr++] = AF("epsilon", 1e-3f);
        }
        const void *in[1] = {x};
        char what[64];
        snprintf(what, sizeof what, "LayerNormalization case %d", c);
        check_spec(&sp, in, k_exact, what); /* the CPU's sums in its order */
    }
    free(x), free(sc), free(bi);
}

CU_TEST(pooling) {
    q8t_rng r = q8t_seed(43);
    int64_t n = 2 * 3 * 9 * 7;
    float *xf = rand_f32(&r, n, -4, 4);
    int8_t *x8 = rand_i8(&r, n, -128);
    float sx = 0.05f;
    for (int c = 0; c < 8; c++) {
        bool avg = c >= 4, i8 = c == 1 || c == 3;
        spec sp = {.op = avg ? "AveragePool" : "MaxPool", .n_in = 1, .n_out = 1};
        sp.in[0] = (qin){"x", i8 ? Q8_I8 : Q8_F32, 4, {2, 3, 9, 7}, NULL, i8 ? &sx : NULL, i8};
        sp.at[sp.n_attr++] = AINTS("kernel_shape", 2, {3, 3});
        if (c % 2 == 0 || c == 5) {
            sp.at[sp.n_attr++] = AINTS("strides", 2, {2, 2});
            sp.at[sp.n_attr++] = AINTS("pads", 4, {1, 1, 1, 0});
        }
        if (c == 2 || c == 6) sp.at[sp.n_attr++] = AI("ceil_mode", 1);
        if (c == 5) sp.at[sp.n_attr++] = AI("count_include_pad", 1);
        if (c == 7) sp.at[sp.n_attr++] = AS("auto_pad", "SAME_LOWER");
        if (c == 3) sp.at[sp.n_attr++] = AINTS("dilations", 2, {2, 1});
        const void *in[1] = {i8 ? (const void *)x8 : (const void *)xf};
        char what[64];
        snprintf(what, sizeof what, "pool case %d", c);
        check_spec(&sp, in, k_exact, what);
    }
    /* planes of 63 (whole 16-lane groups and a tail), 15 (a tail only),
     * 1640 values, and 37 planes (more than one block of 16 on a GPU) */
    static const int64_t gdims[3][4] = {{2, 3, 9, 7}, {1, 37, 3, 5}, {1, 5, 40, 41}};
    for (int c = 0; c < 3; c++) {
        spec g = {.op = "GlobalAveragePool", .n_in = 1, .n_out = 1};
        g.in[0] = (qin){"x", Q8_F32, 4, {gdims[c][0], gdims[c][1], gdims[c][2], gdims[c][3]},
                        NULL, NULL, 0};
        float *gx = rand_f32(&r, numel_of(&g.in[0]), -3, 1e3f);
        const void *in[1] = {gx};
        check_spec(&g, in, k_exact, "GlobalAveragePool");
        free(gx);
    }
    spec p1 = {.op = "MaxPool", .n_in = 1, .n_out = 1, .n_attr = 2};
    p1.in[0] = (qin){"x", Q8_F32, 3, {6, 7, 9}, NULL, NULL, 0};
    p1.at[0] = AINTS("kernel_shape", 1, {4});
    p1.at[1] = AINTS("strides", 1, {3});
    const void *in[1] = {xf};
    check_spec(&p1, in, k_exact, "MaxPool 1-D");
    free(xf), free(x8);
}

CU_TEST(reduce) {
    q8t_rng r = q8t_seed(44);
    float *x = rand_f32(&r, 2 * 3 * 4 * 5, -3, 3);
    static const char *const ops[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"};
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 4; c++) {
            spec sp = {.op = ops[k], .opset = 11, .n_in = 1, .n_out = 1};
            sp.in[0] = (qin){"x", Q8_F32, 4, {2, 3, 4, 5}, NULL, NULL, 0};
            if (c == 0) sp.at[sp.n_attr++] = AINTS("axes", 1, {1});
            if (c == 1) sp.at[sp.n_attr++] = AINTS("axes", 2, {1, 2});
            if (c == 2) sp.at[sp.n_attr++] = AINTS("axes", 2, {-1, 0});
            if (c != 3) sp.at[sp.n_attr++] = AI("keepdims", c % 2);
            const void *in[1] = {x};
            char what[64];
            snprintf(what, sizeof what, "%s case %d", ops[k], c);
            check_spec(&sp, in, k_exact, what);
        }
    int64_t ax[1] = {2};
    spec s13 = {.op = "ReduceSum", .opset = 13, .n_in = 2, .n_out = 1};
    s13.in[0] = (qin){"x", Q8_F32, 4, {2, 3, 4, 5}, NULL, NULL, 0};
    s13.in[1] = (qin){"axes", Q8_I64, 1, {1}, ax, NULL, 0};
    const void *in[1] = {x};
    check_spec(&s13, in, k_exact, "ReduceSum-13 (axes input)");
    free(x);
}

CU_TEST(batchnorm) {
    q8t_rng r = q8t_seed(45);
    float *x = rand_f32(&r, 2 * 13 * 5 * 4, -3, 3), *sc = rand_f32(&r, 13, 0.5f, 1.5f);
    float *bi = rand_f32(&r, 13, -1, 1), *mu = rand_f32(&r, 13, -1, 1);
    float *var = rand_f32(&r, 13, 0.1f, 2);
    spec sp = {.op = "BatchNormalization", .opset = 15, .n_in = 5, .n_out = 1, .n_attr = 1};
    sp.in[0] = (qin){"x", Q8_F32, 4, {2, 13, 5, 4}, NULL, NULL, 0};
    sp.in[1] = (qin){"s", Q8_F32, 1, {13}, sc, NULL, 0};
    sp.in[2] = (qin){"b", Q8_F32, 1, {13}, bi, NULL, 0};
    sp.in[3] = (qin){"m", Q8_F32, 1, {13}, mu, NULL, 0};
    sp.in[4] = (qin){"v", Q8_F32, 1, {13}, var, NULL, 0};
    sp.at[0] = AF("epsilon", 1e-3f);
    const void *in[1] = {x};
    check_spec(&sp, in, k_exact, "BatchNormalization");
    free(x), free(sc), free(bi), free(mu), free(var);
}

CU_TEST(resize) {
    q8t_rng r = q8t_seed(46);
    float *x = rand_f32(&r, 2 * 3 * 5 * 4, -3, 3);
    int8_t *x8 = rand_i8(&r, 2 * 3 * 5 * 4, -128);
    float sx = 0.1f;
    float sc2[4] = {1, 1, 2, 2}, sc3[4] = {1, 1, 1.5f, 3};
    int64_t sizes[4] = {2, 3, 9, 7};
    static const struct {
        const char *mode, *ctm, *nearest;
        int which; /* 0: scales x2, 1: scales (1.5, 3), 2: sizes */
        bool i8;
    } cases[] = {
        {"nearest", "asymmetric", "floor", 0, false}, {"nearest", "half_pixel", NULL, 1, false},
        {"linear", "half_pixel", NULL, 0, false},     {"linear", "align_corners", NULL, 2, false},
        {"linear", "pytorch_half_pixel", NULL, 1, false},
        {"nearest", "asymmetric", "floor", 0, true},
        {"nearest", "align_corners", "round_prefer_ceil", 2, true},
        {"linear", "half_pixel", NULL, 0, true},
        {"linear", "align_corners", NULL, 2, true},
        {"linear", "pytorch_half_pixel", NULL, 1, true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spec sp = {.op = "Resize", .opset = 13, .n_in = 0, .n_out = 1};
        sp.in[0] = (qin){"x", cases[c].i8 ? Q8_I8 : Q8_F32, 4, {2, 3, 5, 4}, NULL,
                         cases[c].i8 ? &sx : NULL, cases[c].i8};
        sp.in[1] = (qin){NULL, Q8_F32, 0, {0}, NULL, NULL, 0}; /* roi: absent */
        if (cases[c].which < 2) {
            sp.in[2] = (qin){"scales", Q8_F32, 1, {4}, cases[c].which ? sc3 : sc2, NULL, 0};
            sp.n_in = 3;
        } else {
            sp.in[2] = (qin){NULL, Q8_F32, 0, {0}, NULL, NULL, 0};
            sp.in[3] = (qin){"sizes", Q8_I64, 1, {4}, sizes, NULL, 0};
            sp.n_in = 4;
        }
        sp.at[sp.n_attr++] = AS("mode", cases[c].mode);
        sp.at[sp.n_attr++] = AS("coordinate_transformation_mode", cases[c].ctm);
        if (cases[c].nearest) sp.at[sp.n_attr++] = AS("nearest_mode", cases[c].nearest);
        const void *in[1] = {cases[c].i8 ? (const void *)x8 : (const void *)x};
        char what[64];
        snprintf(what, sizeof what, "Resize case %zu", c);
        check_spec(&sp, in, k_exact, what);
    }
    /* opset 18: axes (scales / sizes for the last two dims only), keep_aspect_ratio_policy */
    float sc_ax[2] = {3, 1.5f};
    int64_t sz_ax[2] = {9, 7};
    for (int c = 0; c < 2; c++) {
        spec sp = {.op = "Resize", .opset = 18, .n_in = 3, .n_out = 1};
        sp.in[0] = (qin){"x", Q8_F32, 4, {2, 3, 5, 4}, NULL, NULL, 0};
        sp.in[1] = (qin){NULL, Q8_F32, 0, {0}, NULL, NULL, 0}; /* roi: absent */
        if (c == 0) {
            sp.in[2] = (qin){"scales", Q8_F32, 1, {2}, sc_ax, NULL, 0};
            sp.at[sp.n_attr++] = AINTS("axes", 2, {-1, 2});
        } else {
            sp.in[2] = (qin){NULL, Q8_F32, 0, {0}, NULL, NULL, 0};
            sp.in[3] = (qin){"sizes", Q8_I64, 1, {2}, sz_ax, NULL, 0};
            sp.n_in = 4;
            sp.at[sp.n_attr++] = AINTS("axes", 2, {2, 3});
            sp.at[sp.n_attr++] = AS("keep_aspect_ratio_policy", "not_larger");
        }
        sp.at[sp.n_attr++] = AS("mode", "linear");
        const void *in[1] = {x};
        check_spec(&sp, in, k_exact, c ? "Resize axes, not_larger" : "Resize axes");
    }
    free(x), free(x8);
}

/* ---- data movement ---------------------------------------------------------------------- */

CU_TEST(transpose_slice_concat) {
    q8t_rng r = q8t_seed(51);
    int64_t n = 2 * 3 * 4 * 5;
    float *xf = rand_f32(&r, n, -3, 3), *cf = rand_f32(&r, n, -3, 3);
    int8_t *x8 = rand_i8(&r, n, -128);
    float sx = 0.1f;
    for (int i8 = 0; i8 < 2; i8++) {
        const void *in[2] = {i8 ? (const void *)x8 : (const void *)xf, cf};
        qin x = {"x", i8 ? Q8_I8 : Q8_F32, 4, {2, 3, 4, 5}, NULL, i8 ? &sx : NULL, i8};
        static const int64_t perms[3][4] = {{0, 2, 3, 1}, {3, 2, 1, 0}, {1, 0, 2, 3}};
        for (int p = 0; p < 3; p++) {
            spec sp = {.op = "Transpose", .n_in = 1, .n_out = 1, .in = {x}, .n_attr = 1};
            sp.at[0] = (attr){.name = "perm", .type = Q8_ATTR_INTS, .n = 4};
            memcpy(sp.at[0].ints, perms[p], sizeof perms[p]);
            check_spec(&sp, in, k_exact, "Transpose");
        }
        int64_t st[2] = {3, -1}, en[2] = {0, INT64_MIN}, axs[2] = {2, 0}, stp[2] = {-2, -1};
        spec sl = {.op = "Slice", .n_in = 5, .n_out = 1, .in = {x}};
        sl.in[1] = (qin){"st", Q8_I64, 1, {2}, st, NULL, 0};
        sl.in[2] = (qin){"en", Q8_I64, 1, {2}, en, NULL, 0};
        sl.in[3] = (qin){"ax", Q8_I64, 1, {2}, axs, NULL, 0};
        sl.in[4] = (qin){"sp", Q8_I64, 1, {2}, stp, NULL, 0};
        check_spec(&sl, in, k_exact, "Slice negative steps");
        int64_t st2[1] = {1}, en2[1] = {4};
        spec s2 = {.op = "Slice", .n_in = 3, .n_out = 1, .in = {x}};
        s2.in[1] = (qin){"st", Q8_I64, 1, {1}, st2, NULL, 0};
        s2.in[2] = (qin){"en", Q8_I64, 1, {1}, en2, NULL, 0};
        check_spec(&s2, in, k_exact, "Slice first axis");
        if (!i8) {
            spec cc = {.op = "Concat", .n_in = 3, .n_out = 1, .n_attr = 1, .in = {x}};
            cc.in[1] = (qin){"c", Q8_F32, 4, {2, 3, 4, 5}, cf, NULL, 0}; /* a constant */
            cc.in[2] = (qin){"y", Q8_F32, 4, {2, 3, 4, 5}, NULL, NULL, 0};
            cc.at[0] = AI("axis", 2);
            const void *in2[2] = {xf, xf};
            check_spec(&cc, in2, k_exact, "Concat axis 2 with a constant");
        } else {
            spec cc = {.op = "Concat", .n_in = 2, .n_out = 1, .n_attr = 1, .in = {x, x}};
            cc.in[1].name = "y";
            cc.at[0] = AI("axis", -1);
            const void *in2[2] = {x8, x8};
            check_spec(&cc, in2, k_exact, "Concat int8");
        }
    }
    free(xf), free(cf), free(x8);
}

CU_TEST(pad_gather_views) {
    q8t_rng r = q8t_seed(52);
    int64_t n = 2 * 3 * 4 * 5;
    float *xf = rand_f32(&r, n, -3, 3);
    int8_t *x8 = rand_i8(&r, n, -128);
    float sx = 0.1f, cv = 1.5f;
    static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
    for (int m = 0; m < 4; m++)
        for (int i8 = 0; i8 < 2; i8++) {
            int64_t pads[8] = {0, 1, 2, 3, 1, 0, 1, 2};
            if (m == 0) pads[3] = -1; /* a crop */
            spec sp = {.op = "Pad", .opset = 19, .n_in = i8 || m ? 2 : 3, .n_out = 1, .n_attr = 1};
            sp.in[0] = (qin){"x", i8 ? Q8_I8 : Q8_F32, 4, {2, 3, 4, 5}, NULL, i8 ? &sx : NULL, i8};
            sp.in[1] = (qin){"pads", Q8_I64, 1, {8}, pads, NULL, 0};
            sp.in[2] = (qin){"cv", Q8_F32, 0, {0}, &cv, NULL, 0};
            sp.at[0] = AS("mode", modes[m]);
            const void *in[1] = {i8 ? (const void *)x8 : (const void *)xf};
            char what[64];
            snprintf(what, sizeof what, "Pad %s %s", modes[m], i8 ? "int8" : "float");
            check_spec(&sp, in, k_exact, what);
        }
    int64_t idx[5] = {2, -1, 0, 0, 3};
    int32_t idx32[6] = {1, 0, 4, -5, 2, 3};
    for (int axis = 0; axis < 3; axis++) {
        spec sp = {.op = "Gather", .n_in = 2, .n_out = 1, .n_attr = 1};
        sp.in[0] = (qin){"x", Q8_F32, 4, {4, 5, 4, 5}, NULL, NULL, 0};
        sp.in[1] = (qin){"i", Q8_I64, 1, {5}, idx, NULL, 0};
        sp.at[0] = AI("axis", axis);
        float *big = rand_f32(&r, 400, -3, 3);
        const void *in[1] = {big};
        check_spec(&sp, in, k_exact, "Gather int64 constant indices");
        sp.in[1] = (qin){"i", Q8_I32, 2, {2, 3}, NULL, NULL, 0}; /* computed indices */
        sp.in[0].data = big;                                     /* a constant table */
        const void *in2[1] = {idx32};
        check_spec(&sp, in2, k_exact, "Gather int32 index input");
        free(big);
    }
    int64_t shape[3] = {6, -1, 5};
    spec rs = {.op = "Reshape", .n_in = 2, .n_out = 1};
    rs.in[0] = (qin){"x", Q8_I8, 4, {2, 3, 4, 5}, NULL, &sx, 1};
    rs.in[1] = (qin){"shape", Q8_I64, 1, {3}, shape, NULL, 0};
    const void *in[1] = {x8};
    check_spec(&rs, in, k_exact, "Reshape (a view)");
    spec fl = {.op = "Flatten", .n_in = 1, .n_out = 1, .n_attr = 1};
    fl.in[0] = rs.in[0];
    fl.at[0] = AI("axis", 2);
    check_spec(&fl, in, k_exact, "Flatten (a view)");
    free(xf), free(x8);
}

/* ---- Cast -------------------------------------------------------------------------------- */

static const q8_dtype k_cast_dtypes[] = {Q8_BOOL, Q8_F16, Q8_BF16, Q8_F32, Q8_F64, Q8_I8, Q8_U8,
                                         Q8_I16,  Q8_U16, Q8_I32,  Q8_U32, Q8_I64, Q8_U64};
#define N_CAST (int)(sizeof k_cast_dtypes / sizeof k_cast_dtypes[0])

/* Cast's attribute 'to' (ONNX TensorProto.DataType) for t. */
static int64_t cast_code(q8_dtype t) {
    static const struct {
        q8_dtype t;
        int64_t code;
    } codes[] = {{Q8_F32, 1}, {Q8_U8, 2},   {Q8_I8, 3},   {Q8_U16, 4},  {Q8_I16, 5},
                 {Q8_I32, 6}, {Q8_I64, 7},  {Q8_BOOL, 9}, {Q8_F16, 10}, {Q8_F64, 11},
                 {Q8_U32, 12}, {Q8_U64, 13}, {Q8_BF16, 16}};
    for (int i = 0; i < (int)(sizeof codes / sizeof codes[0]); i++)
        if (codes[i].t == t) return codes[i].code;
    cr_assert_fail("no ONNX code for %s", q8_dtype_name(t));
    return 0;
}

/* n values of dtype t: special values first (NaNs with payloads, infinities,
 * -0, values near .5, integer limits and just past them, float16 ties and
 * subnormals, doubles that must round once), then random bit patterns and
 * random fractional values. */
static void *cast_values(q8t_rng *r, q8_dtype t, int64_t n) {
    static const double fs[] = {0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 0.49999997, -0.50000006,
                                127.5, 128.0, -128.5, -129.0, 255.5, 256.0, 32767.5, -32769.0,
                                65535.5, 65536.0, 2147483647.5, -2147483648.5, 4294967295.5,
                                0x1p63, -0x1p63, 0x1p64, 1e30, 65519.99, 65520.0,
                                1.0 + 0x1p-11 + 0x1p-40, -(1.0 + 0x1p-8 + 0x1p-40), 0x1.8p-24,
                                0x1p-25, 1e-40, 1e-300, FLT_MAX, 0x1.ffffffp127, DBL_MAX,
                                16777217.0, INFINITY, -INFINITY, NAN};
    static const uint64_t nan64[] = {0xFFF8000000000000ull, 0x7FF0000000000001ull,
                                     0x7FF4000123456789ull};
    static const uint32_t nan32[] = {0xFFC00000u, 0x7F800001u, 0x7FA5A5A5u};
    static const int64_t is[] = {0, 1, -1, 127, 128, -129, 255, 256, 32768, -32769, 65536,
                                 2049, 16777217, 2147483647, 4294967295ll, 4294967296ll,
                                 (1ll << 40) + (1ll << 32) + 1, (1ll << 40) + (1ll << 32),
                                 9007199254740993ll, INT64_MAX, INT64_MIN};
    size_t es = q8_dtype_size(t);
    uint8_t *x = malloc(nbytes(n, es));
    const int nfs = (int)(sizeof fs / sizeof fs[0]), nis = (int)(sizeof is / sizeof is[0]);
    bool f = t == Q8_F32 || t == Q8_F64;
    for (int64_t i = 0; i < n; i++) {
        uint64_t b = q8t_next(r);
        uint8_t *d = x + es * (size_t)i;
        if (t == Q8_BOOL) { /* 0, 1 and other bytes ("!= 0") */
            *d = i < 4 ? (uint8_t)(i * 85) : (b & 3) ? (uint8_t)(b >> 8 & 1) : (uint8_t)(b >> 8);
        } else if (f && i < nfs + 3) {
            double v = i < nfs ? fs[i] : 0;
            float fv = (float)v;
            if (t == Q8_F64 && i < nfs) memcpy(d, &v, 8);
            else if (t == Q8_F64) memcpy(d, &nan64[i - nfs], 8);
            else if (i < nfs) memcpy(d, &fv, 4);
            else memcpy(d, &nan32[i - nfs], 4);
        } else if (f && i % 2) { /* k + .5 and small fractions, either sign */
            double v = i % 4 == 1 ? (double)(int64_t)(b >> 44) - 524288.0 + 0.5
                                  : ldexp((double)(b >> 11), -53 + (int)(b % 40) - 8);
            float fv = (float)v;
            if (t == Q8_F64) memcpy(d, &v, 8);
            else memcpy(d, &fv, 4);
        } else if (!f && t != Q8_F16 && t != Q8_BF16 && i < nis) {
            memcpy(d, &is[i], es); /* the low bytes */
        } else {
            memcpy(d, &b, es); /* any bits: NaN payloads, subnormals, big ints */
        }
    }
    return x;
}

/* Every pair of dtypes, on 0, 1 and 1281 elements: the CPU's bytes (any
 * NaN for a float32 NaN, the payload otherwise). */
CU_TEST(cast) {
    q8t_rng r = q8t_seed(91);
    const int64_t shapes[3][3] = {{0, 3, 1}, {1, 1, 1}, {3, 7, 61}};
    for (int a = 0; a < N_CAST; a++)
        for (int b = 0; b < N_CAST; b++)
            for (int c = 0; c < 3; c++) {
                q8_dtype from = k_cast_dtypes[a], to = k_cast_dtypes[b];
                void *x = cast_values(&r, from, shapes[c][0] * shapes[c][1] * shapes[c][2]);
                spec sp = {.op = "Cast", .n_in = 1, .n_out = 1, .n_attr = 1};
                sp.in[0] = (qin){"x", from, 3, {shapes[c][0], shapes[c][1], shapes[c][2]}, NULL,
                                 NULL, 0};
                sp.at[0] = AI("to", cast_code(to));
                const void *in[1] = {x};
                char what[64];
                snprintf(what, sizeof what, "Cast %s -> %s, %lld elements", q8_dtype_name(from),
                         q8_dtype_name(to),
                         (long long)(shapes[c][0] * shapes[c][1] * shapes[c][2]));
                check_spec(&sp, in, k_exact, what);
                free(x);
            }
}

/* x -> Neg -> Cast(to int32) -> y: the Cast writes over its input's buffer
 * (float32 and int32 have one size); CastLike the same. */
static q8_graph *neg_cast(bool like) {
    q8_graph *g = q8_graph_new();
    int x = q8t_tensor(g, "x"), t = q8t_tensor(g, "t"), y = q8t_tensor(g, "y");
    int64_t d[2] = {37, 29};
    q8_tensor_set_shape(g->tensors[x], Q8_F32, d, 2);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = y;
    int k = q8_graph_add_node(g, "neg", "Neg");
    cr_assert_eq(q8_node_set_io(g->nodes[k], &x, 1, &t, 1, NULL), Q8_OK);
    int in[2] = {t, -1};
    if (like) {
        in[1] = q8t_tensor(g, "like");
        int64_t one = 1;
        q8_tensor *l = g->tensors[in[1]];
        q8_tensor_set_shape(l, Q8_I32, &one, 1);
        cr_assert_eq(q8_tensor_alloc_data(l, NULL), Q8_OK);
        memset(l->data, 0, 4);
    }
    k = q8_graph_add_node(g, "cast", like ? "CastLike" : "Cast");
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, like ? 2 : 1, &y, 1, NULL), Q8_OK);
    if (!like) q8_node_set_attr(g->nodes[k], "to", Q8_ATTR_INT)->i = 6; /* INT32 */
    return g;
}

CU_TEST(cast_in_place) {
    q8t_rng r = q8t_seed(92);
    float *x = rand_f32(&r, 37 * 29, -3e9f, 3e9f);
    x[0] = NAN, x[1] = -0.5f, x[2] = 2147483520.0f, x[3] = -2147483904.0f;
    for (int like = 0; like < 2; like++) {
        q8_graph *g = neg_cast(like);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_plan plan;
        cr_assert_eq(q8_plan_build(g, NULL, NULL, &plan, &err), Q8_OK, "%s", err.msg);
        int t = q8_graph_find(g, "t"), y = q8_graph_find(g, "y");
        cr_assert_eq(plan.buffer[t], plan.buffer[y], "the Cast is not in place");
        q8_plan_free(&plan);
        q8_model *m;
        cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK, "%s", err.msg);
        const void *in[1] = {x};
        result want = {0}, got = {0};
        cr_assert_eq(run_model(m, in, false, &want, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(run_model(m, in, true, &got, &err), Q8_OK, "%s", err.msg);
        compare(&want, &got, k_exact, like ? "Neg -> CastLike in place" : "Neg -> Cast in place");
        result_free(&want);
        result_free(&got);
        q8_model_free(m);
    }
    free(x);
}

/* ---- an INT8 embedding table (src/quant/gather_tables.c) ----------------------------------- */

enum { EMB_ROWS = 300, EMB_COLS = 32, EMB_OUT = 16, EMB_B = 2, EMB_T = 9 };

/* The front of a BERT-like encoder: ids [2, 9] -> Gather(token table
 * [300, 32]) + position table [9, 32] -> MatMul [32, 16] + bias. */
static q8_graph *embed_model(void) {
    q8t_rng r = q8t_seed(93);
    q8_graph *g = q8_graph_new();
    struct {
        const char *name;
        int64_t d[2];
        int nd;
    } cs[4] = {{"tok_table", {EMB_ROWS, EMB_COLS}, 2},
               {"pos_table", {EMB_T, EMB_COLS}, 2},
               {"w", {EMB_COLS, EMB_OUT}, 2},
               {"b", {EMB_OUT}, 1}};
    for (int i = 0; i < 4; i++) {
        int k = q8t_tensor(g, cs[i].name); /* before reading g->tensors: it moves */
        q8_tensor *t = g->tensors[k];
        q8_tensor_set_shape(t, Q8_F32, cs[i].d, cs[i].nd);
        cr_assert_eq(q8_tensor_alloc_data(t, NULL), Q8_OK);
        q8t_fill(&r, t->data, q8_tensor_numel(t), -1, 1);
    }
    int ids = q8t_tensor(g, "ids");
    int64_t idd[2] = {EMB_B, EMB_T};
    q8_tensor_set_shape(g->tensors[ids], Q8_I64, idd, 2);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = ids;
    const char *nodes[4][4] = {{"/tok/Gather", "Gather", "tok_table", "ids"},
                               {"/pos/Add", "Add", "tok", "pos_table"},
                               {"/proj/MatMul", "MatMul", "h", "w"},
                               {"/proj/Add", "Add", "m", "b"}};
    const char *outs[4] = {"tok", "h", "m", "y"};
    for (int i = 0; i < 4; i++) {
        int in[2] = {q8t_tensor(g, nodes[i][2]), q8t_tensor(g, nodes[i][3])};
        int o = q8t_tensor(g, outs[i]);
        int k = q8_graph_add_node(g, nodes[i][0], nodes[i][1]);
        cr_assert_eq(q8_node_set_io(g->nodes[k], in, 2, &o, 1, NULL), Q8_OK);
    }
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = q8t_tensor(g, "y");
    return g;
}

static void embed_ids(q8t_rng *r, int64_t *ids) {
    for (int i = 0; i < EMB_B * EMB_T; i++) ids[i] = (int64_t)(q8t_next(r) % EMB_ROWS);
    ids[1] = -1; /* the last row */
}

/* Quantized as `quantize` does it (calibrated on samples, INT8 embeddings
 * on), the lookup is Gather(int8 table) -> Cast -> Mul(row scales) and
 * the MatMul INT8: the CUDA backend runs all of it and gives the CPU's
 * bytes. */
CU_TEST(int8_embedding_lookup) {
    q8_graph *g = embed_model();
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    char *dir = q8t_tmpdir("cuemb");
    q8t_rng r = q8t_seed(94);
    int64_t ids[EMB_B * EMB_T], idd[2] = {EMB_B, EMB_T};
    for (int i = 0; i < 4; i++) {
        char p[512], f[32];
        snprintf(f, sizeof f, "s%d.npy", i);
        q8t_path(p, sizeof p, dir, f);
        embed_ids(&r, ids);
        cr_assert_eq(q8_npy_write(p, Q8_I64, idd, 2, ids, &err), Q8_OK, "%s", err.msg);
    }
    q8_sample_set ss;
    cr_assert_eq(q8_samples_from_dir(dir, g, &ss, &err), Q8_OK, "%s", err.msg);
    q8_calib_options co = {.method = Q8_CALIB_MINMAX, .n_threads = 2};
    q8_calibration cal;
    cr_assert_eq(q8_calibrate(g, &ss, &co, &cal, &err), Q8_OK, "%s", err.msg);
    q8_quant_options qo = {.int8_embeddings = true};
    q8_meta meta = {0};
    cr_assert_eq(q8_quantize_graph(g, &cal, &qo, &meta, &err), Q8_OK, "%s", err.msg);
    q8_meta_free(&meta);
    q8_calibration_free(&cal);
    q8_samples_free(&ss);
    q8t_rm_rf(dir);
    free(dir);
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    int casts = 0, int8_ops = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (!strcmp(n->op_type, "Cast") && q8_in(g, n, 0)->dtype == Q8_I8) casts++;
        if (n->op == Q8_OP_QGEMM || n->op == Q8_OP_QMATMUL) int8_ops++;
    }
    cr_assert_eq(casts, 1, "the lookup reads an int8 table through one Cast");
    cr_assert_geq(int8_ops, 1, "the MatMul is INT8");
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "emb", &m, &err), Q8_OK, "%s", err.msg);
    embed_ids(&r, ids);
    const void *in[1] = {ids};
    result want = {0}, got = {0};
    cr_assert_eq(run_model(m, in, false, &want, &err), Q8_OK, "cpu: %s", err.msg);
    cr_assert_eq(run_model(m, in, true, &got, &err), Q8_OK, "cuda: %s", err.msg);
    compare(&want, &got, k_exact, "int8 embedding lookup");
    result_free(&want);
    result_free(&got);
    q8_model_free(m);
}

/* ---- errors ----------------------------------------------------------------------------- */

/* strict_device: no host nodes, the first node CUDA cannot run is named */
CU_TEST(refuses_unsupported_ops_by_name) {
    spec sp = {.op = "Hardmax", .n_in = 1, .n_out = 1};
    sp.in[0] = (qin){"x", Q8_F32, 2, {3, 8}, NULL, NULL, 0};
    q8_graph *g = build_spec(&sp);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK);
    q8_session *s = NULL;
    q8_session_options so = {.device = Q8_DEVICE_CUDA, .strict_device = 1};
    q8_status st = q8_session_create(m, &so, &s, &err);
    cr_assert_eq(st, Q8_ERR_UNSUPPORTED, "status %s: %s", q8_status_str(st), err.msg);
    cr_assert(strstr(err.msg, "node 'node' (Hardmax)") && strstr(err.msg, "cuda backend"),
              "message: %s", err.msg);
    q8_model_free(m);
}

/* Nodes without a CUDA kernel run on the host between device nodes:
 *   x -> Relu (device) -> a -> Softplus (host) -> b -> Sigmoid (device) -> c
 *                                                b -> Mod fmod (host) -> d
 *                             a -> Softsign (host) -> e
 * device -> host and host -> device copies, a host node reading a host
 * node's output (no copy), a second host reader of a device tensor (one
 * copy serves both), graph outputs made on the host and read by no device
 * node. The CPU's outputs, and the stats say which nodes ran there. */
static q8_graph *host_chain(q8t_rng *r) {
    q8_graph *g = q8_graph_new();
    (void)r;
    int x = q8t_tensor(g, "x"), dv = q8t_tensor(g, "dv");
    int64_t xd[4] = {1, 3, 9, 7}, one = 1;
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 4);
    q8_tensor_set_shape(g->tensors[dv], Q8_F32, &one, 1);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[dv], NULL), Q8_OK);
    *(float *)g->tensors[dv]->data = 0.7f;
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    const char *nodes[5][4] = {{"relu", "Relu", "x", NULL}, {"softplus", "Softplus", "a", NULL},
                               {"sig", "Sigmoid", "b", NULL}, {"mod", "Mod", "b", "dv"},
                               {"softsign", "Softsign", "a", NULL}};
    const char *outs[5] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) {
        int in[2] = {q8t_tensor(g, nodes[i][2]), nodes[i][3] ? q8t_tensor(g, nodes[i][3]) : -1};
        int o = q8t_tensor(g, outs[i]);
        int k = q8_graph_add_node(g, nodes[i][0], nodes[i][1]);
        cr_assert_eq(q8_node_set_io(g->nodes[k], in, nodes[i][3] ? 2 : 1, &o, 1, NULL), Q8_OK);
        if (i == 3) q8_node_set_attr(g->nodes[k], "fmod", Q8_ATTR_INT)->i = 1;
    }
    g->outputs = malloc(3 * sizeof(int));
    g->outputs[g->n_outputs++] = q8t_tensor(g, "c");
    g->outputs[g->n_outputs++] = q8t_tensor(g, "d");
    g->outputs[g->n_outputs++] = q8t_tensor(g, "e");
    return g;
}

CU_TEST(nodes_without_a_kernel_run_on_the_host) {
    q8t_rng r = q8t_seed(62);
    q8_graph *g = host_chain(&r);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    /* the nodes the CUDA backend itself refuses: those must go to the host */
    const q8_backend *cu = q8_backend_for(Q8_DEVICE_CUDA);
    int want_host = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        q8_error e = {0};
        want_host += cu->check_node(g, g->nodes[i], &e) == Q8_ERR_UNSUPPORTED;
    }
    cr_assert_geq(want_host, 1, "every node has a CUDA kernel now: pick another op here");
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK, "%s", err.msg);
    float *x = rand_f32(&r, 3 * 9 * 7, -2, 2);
    const void *in[1] = {x};
    result want = {0}, got = {0};
    cr_assert_eq(run_model(m, in, false, &want, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(run_model(m, in, true, &got, &err), Q8_OK, "%s", err.msg);
    compare(&want, &got, exact_on_host(), "host nodes between device nodes");
    cr_assert_eq(g_stats.host_nodes, want_host, "%d host nodes, want %d (%s)", g_stats.host_nodes,
                 want_host, g_stats.host_ops);
    cr_assert(g_stats.host_bytes > 0 && strchr(g_stats.host_ops, 'x'), "host ops '%s'",
              g_stats.host_ops);
    /* strict: refused, naming a node */
    q8_session *s = NULL;
    q8_session_options so = {.device = Q8_DEVICE_CUDA, .strict_device = 1};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_ERR_UNSUPPORTED);
    cr_assert(strstr(err.msg, "cuda backend"), "message: %s", err.msg);
    result_free(&want);
    result_free(&got);
    q8_model_free(m);
    free(x);
}

/* Without a GPU (and without emulation) a session fails with one clear line. */
Test(cuda_no_gpu, session_fails_cleanly) {
    unsetenv("Q8_CUDA_EMULATE");
    char why[200];
    if (q8_cuda_device_available(why, sizeof why)) cr_skip_test("there is a GPU: %s", why);
    spec sp = {.op = "Relu", .n_in = 1, .n_out = 1};
    sp.in[0] = (qin){"x", Q8_F32, 1, {5}, NULL, NULL, 0};
    q8_graph *g = build_spec(&sp);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK);
    q8_session *s = NULL;
    q8_session_options so = {.device = Q8_DEVICE_CUDA};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_ERR_BACKEND);
    cr_assert(strncmp(err.msg, "no CUDA device: ", 16) == 0, "message: %s", err.msg);
    cr_assert(!strchr(err.msg, '\n'));
    q8_model_free(m);
}

/* cuBLASLt is not linked (kernels/cuda/lt_load.c): the process does not map
 * it until a CUDA session asks for it, and then every function resolves. No
 * GPU needed: loading and cublasLtGetVersion do not touch a device. */
Test(cuda_no_gpu, cublaslt_loads_on_first_use) {
    char lib[64], why[600];
    snprintf(lib, sizeof lib, "libcublasLt.so.%d", CUBLAS_VER_MAJOR);
    cr_assert_null(dlopen(lib, RTLD_NOW | RTLD_NOLOAD), "%s mapped before any use", lib);
    cr_assert(q8_cu_lt_load(why, sizeof why), "%s", why);
    cr_assert_not_null(dlopen(lib, RTLD_NOW | RTLD_NOLOAD), "%s not mapped after loading", lib);
    size_t v = cublasLtGetVersion(); /* through the loaded pointer */
    cr_assert_eq(v / 10000, (size_t)CUBLAS_VER_MAJOR, "cuBLASLt %zu, built against %d", v,
                 CUBLAS_VERSION);
}

/* ---- the MNIST models, quantized ------------------------------------------------------ */

#define BATCH 32

/* models/mnist of the source tree; Q8_SOURCE_DIR in the environment wins
 * (the binary may run on another machine, in another copy of the tree) */
static void mnist_path(char *buf, size_t n, const char *file) {
    const char *e = getenv("Q8_SOURCE_DIR");
    snprintf(buf, n, "%s/models/mnist/%s", e && *e ? e : Q8_SOURCE_DIR, file);
}

static void check_model(const char *name, tol t, const char *map_mode) {
    char path[256], onnx[512], calib[512], xs[512];
    snprintf(path, sizeof path, "/tmp/q8cuda_%d_%s.q8", (int)getpid(), name);
    char file[64];
    snprintf(file, sizeof file, "%s.onnx", name);
    mnist_path(onnx, sizeof onnx, file);
    mnist_path(calib, sizeof calib, "calib");
    mnist_path(xs, sizeof xs, "test_x.npy");
    q8_input_shape sh = {.name = "input", .ndim = 4, .dims = {BATCH, 1, 28, 28}};
    q8_quantize_options o = {.input_shapes = &sh, .n_input_shapes = 1, .calib_dir = calib,
                             .method = Q8_CALIB_PERCENTILE, .percentile = 99.99, .n_threads = 2};
    q8_quantize_result qr;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(onnx, path, &o, &qr, &err), Q8_OK, "%s: %s", name, err.msg);
    q8_tensor *x = NULL;
    cr_assert_eq(q8_npy_read(xs, &x, &err), Q8_OK, "%s", err.msg);
    q8_load_options lo = {.input_shapes = &sh, .n_input_shapes = 1};
    q8_model *m;
    cr_assert_eq(q8_model_load(path, &lo, &m, &err), Q8_OK, "%s", err.msg);
    const void *in[1] = {x->data}; /* the first BATCH images */
    result want = {0}, got = {0};
    cr_assert_eq(run_model(m, in, false, &want, &err), Q8_OK, "%s (cpu): %s", name, err.msg);
    if (map_mode) setenv("Q8_CUDA_MAP", map_mode, 1);
    q8_status st = run_model(m, in, true, &got, &err);
    unsetenv("Q8_CUDA_MAP");
    cr_assert_eq(st, Q8_OK, "%s (cuda): %s", name, err.msg);
    compare(&want, &got, t, name);
    cr_log_info("%s: %d INT8 GEMM(s) on the plain kernel, %zu weight bytes read in place, "
                "%zu of host staging, %s",
                name, g_stats.igemm_fallbacks, g_stats.mapped_weights_bytes,
                g_stats.weights_staging_bytes, g_stats.library);
    if (map_mode && !strcmp(map_mode, "force") && g_emu)
        cr_assert_gt(g_stats.mapped_weights_bytes, 0, "%s: Q8_CUDA_MAP=force mapped nothing",
                     name);
    if (map_mode && !strcmp(map_mode, "0"))
        cr_assert_eq(g_stats.mapped_weights_bytes, 0, "%s: Q8_CUDA_MAP=0 mapped weights", name);
    /* the host never holds a copy of all the copied weights: plain ones go
     * from where they lie, computed ones one node at a time */
    size_t copied = g_mem.weights_bytes - g_stats.mapped_weights_bytes;
    cr_assert_lt(g_stats.weights_staging_bytes, copied / 2,
                 "%s: %zu bytes of host staging for %zu bytes of weights", name,
                 g_stats.weights_staging_bytes, copied);
    /* and the same predictions */
    const float *a = want.data[0], *b = got.data[0];
    for (int i = 0; i < BATCH; i++) {
        int am = 0, bm = 0;
        for (int k = 1; k < 10; k++) {
            if (a[i * 10 + k] > a[i * 10 + am]) am = k;
            if (b[i * 10 + k] > b[i * 10 + bm]) bm = k;
        }
        cr_assert_eq(am, bm, "%s: image %d: the CPU says %d, CUDA %d", name, i, am, bm);
    }
    result_free(&want);
    result_free(&got);
    q8_model_free(m);
    q8_tensor_free(x);
    unlink(path);
}

/* mlp and cnn are integer from their first QuantizeLinear on: bit-exact.
 * The ViT requantizes the outputs of float LayerNorm, Softmax and Gelu,
 * whose last bits may differ on a GPU (libm, summation order): a value on a
 * rounding boundary can move one INT8 step, which moves the logits by
 * about one weight's worth; hence the looser bound for it (in emulation it
 * is bit-identical too). */
CU_TEST(mnist_mlp) { check_model("mlp", k_exact, NULL); }
CU_TEST(mnist_cnn) { check_model("cnn", k_exact, NULL); }
CU_TEST(mnist_vit) { check_model("vit", g_emu ? k_exact : (tol){1e-4f, 2e-2f, 0}, NULL); }

/* The integrated-GPU path (weights read in place from the mapped .q8) on
 * any GPU that can register read-only host memory, and in emulation; and
 * the copy path forced even where mapping would be the default. */
CU_TEST(mnist_cnn_mapped_weights) { check_model("cnn", k_exact, "force"); }
CU_TEST(mnist_cnn_copied_weights) { check_model("cnn", k_exact, "0"); }

/* q8.QLut: a 256-entry table over int8 data, any shape. */
CU_TEST(qlut) {
    q8t_rng r = q8t_seed(81);
    int8_t table[256];
    for (int i = 0; i < 256; i++) table[i] = (int8_t)(q8t_next(&r) & 0xff);
    const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {2, 64, 33}, {1, 1, 4099}};
    for (int c = 0; c < 4; c++) {
        int64_t n = shapes[c][0] * shapes[c][1] * shapes[c][2];
        int8_t *x = rand_i8(&r, n, -128);
        float sx = 0.05f;
        spec sp = {.op = "QLut", .domain = "q8", .n_in = 2, .n_out = 1, .n_attr = 1};
        sp.in[0] = (qin){"x", Q8_I8, 3, {shapes[c][0], shapes[c][1], shapes[c][2]}, NULL, &sx, 1};
        sp.in[1] = (qin){"t", Q8_I8, 1, {256}, table, NULL, 0};
        sp.at[0] = AF("y_scale", 0.1f);
        const void *in[1] = {x};
        char what[64];
        snprintf(what, sizeof what, "QLut %lldx%lldx%lld", (long long)shapes[c][0],
                 (long long)shapes[c][1], (long long)shapes[c][2]);
        check_spec(&sp, in, k_exact, what);
        /* one table per channel: the table of index[c] (quantize --equalize
         * through an activation) */
        int8_t tables[3 * 256];
        for (int i = 0; i < 3 * 256; i++) tables[i] = (int8_t)(q8t_next(&r) & 0xff);
        uint8_t index[64];
        for (int i = 0; i < 64; i++) index[i] = (uint8_t)(q8t_next(&r) % 3);
        sp.n_in = 3;
        sp.in[1] = (qin){"t", Q8_I8, 2, {3, 256}, tables, NULL, 0};
        sp.in[2] = (qin){"i", Q8_U8, 1, {shapes[c][1]}, index, NULL, 0};
        snprintf(what, sizeof what, "QLut per channel %lldx%lldx%lld", (long long)shapes[c][0],
                 (long long)shapes[c][1], (long long)shapes[c][2]);
        check_spec(&sp, in, k_exact, what);
        free(x);
    }
}

/* q8.QAdd and q8.QMul (per-channel gate and same shapes): the CPU's bytes. */
CU_TEST(qadd_qmul) {
    q8t_rng r = q8t_seed(82);
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {1, 16, 7, 9}, {2, 5, 33, 35}};
    for (int c = 0; c < 3; c++) {
        int64_t n = shapes[c][0] * shapes[c][1] * shapes[c][2] * shapes[c][3];
        int8_t *a = rand_i8(&r, n, -128), *b = rand_i8(&r, n, -128);
        float sa = 0.05f, sb = 0.02f;
        const void *in[2] = {a, b};
        char what[64];
        for (int op = 0; op < 3; op++) {
            spec sp = {.op = op == 0 ? "QAdd" : "QMul", .domain = "q8", .n_in = 2, .n_out = 1,
                       .n_attr = 1};
            sp.in[0] = (qin){"a", Q8_I8, 4,
                             {shapes[c][0], shapes[c][1], shapes[c][2], shapes[c][3]}, NULL,
                             &sa, 1};
            sp.in[1] = sp.in[0];
            sp.in[1].name = "b";
            sp.in[1].scales = &sb;
            if (op == 2) sp.in[1].dims[2] = sp.in[1].dims[3] = 1; /* the gate */
            sp.at[0] = AF("y_scale", op == 0 ? 0.06f : 0.003f);
            snprintf(what, sizeof what, "%s %d case %d", sp.op, op, c);
            check_spec(&sp, in, k_exact, what);
        }
        free(a);
        free(b);
    }
}

/* q8.QGlobalAveragePool: the CPU's bytes on awkward planes, one value per
 * plane and saturating sums. */
CU_TEST(qgap) {
    q8t_rng r = q8t_seed(83);
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {1, 16, 7, 9}, {2, 5, 33, 35}};
    const float sys[] = {0.1f, 0.004f, 0.0005f};
    for (int c = 0; c < 3; c++) {
        int64_t n = shapes[c][0] * shapes[c][1] * shapes[c][2] * shapes[c][3];
        int8_t *x = rand_i8(&r, n, -128);
        float sx = 0.05f;
        const void *in[1] = {x};
        spec sp = {.op = "QGlobalAveragePool", .domain = "q8", .n_in = 1, .n_out = 1,
                   .n_attr = 1};
        sp.in[0] = (qin){"x", Q8_I8, 4, {shapes[c][0], shapes[c][1], shapes[c][2], shapes[c][3]},
                         NULL, &sx, 1};
        sp.at[0] = AF("y_scale", sys[c]);
        char what[64];
        snprintf(what, sizeof what, "QGlobalAveragePool case %d", c);
        check_spec(&sp, in, k_exact, what);
        free(x);
    }
}

/* Profiling runs eagerly and times every node. */
CU_TEST(profile_times_nodes) {
    q8t_rng r = q8t_seed(71);
    float *x = rand_f32(&r, 64, -1, 1);
    spec sp = {.op = "Relu", .n_in = 1, .n_out = 1};
    sp.in[0] = (qin){"x", Q8_F32, 2, {8, 8}, NULL, NULL, 0};
    q8_graph *g = build_spec(&sp);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK);
    q8_session *s;
    q8_session_options so = {.device = Q8_DEVICE_CUDA, .profile = 1};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        int64_t dims[2] = {8, 8};
        cr_assert_eq(q8_session_set_input(s, NULL, Q8_F32, dims, 2, x, &err), Q8_OK);
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    }
    const char *name, *op;
    double ms = -1;
    cr_assert_eq(q8_session_node_profile(s, 0, &name, &op, &ms, NULL), Q8_OK);
    cr_assert_geq(ms, 0.0);
    q8_tensor_info info;
    const float *y;
    q8_session_output(s, 0, &info, (const void **)&y, NULL);
    for (int i = 0; i < 64; i++) cr_assert_eq(y[i], x[i] > 0 ? x[i] : 0.0f);
    q8_session_free(s);
    q8_model_free(m);
    free(x);
}

/* ---- control flow ------------------------------------------------------------- */

/* A q8.If (an If on a condition computed at run time) is refused by the
 * CUDA backend's check_node, naming the node; the CPU runs it. */
CU_TEST(if_on_a_run_time_condition_is_refused_cleanly) {
    q8_graph *g = q8_graph_new();
    int64_t d[1] = {4};
    int x = q8_graph_add_tensor(g, "x", NULL), c = q8_graph_add_tensor(g, "c", NULL);
    int a = q8_graph_add_tensor(g, "a", NULL), b = q8_graph_add_tensor(g, "b", NULL);
    int y = q8_graph_add_tensor(g, "y", NULL);
    q8_tensor_set_shape(g->tensors[x], Q8_F32, d, 1);
    q8_tensor_set_shape(g->tensors[c], Q8_BOOL, d, 0);
    g->inputs = malloc(2 * sizeof(int));
    g->inputs[g->n_inputs++] = x;
    g->inputs[g->n_inputs++] = c;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = y;
    const char *ops[3] = {"Relu", "Neg", "If"};
    int ins[3][3] = {{x}, {x}, {c, a, b}}, outs[3] = {a, b, y};
    for (int i = 0; i < 3; i++) {
        int k = q8_graph_add_node(g, ops[i], ops[i]); /* before reading g->nodes: it moves */
        q8_node *n = g->nodes[k];
        q8_node_set_io(n, ins[i], i == 2 ? 3 : 1, &outs[i], 1, NULL);
        n->scope = i < 2 ? i + 1 : 0;
        if (i < 2) continue;
        free(n->domain);
        n->domain = q8_strdup("q8");
        q8_node_set_attr(n, "then_scope", Q8_ATTR_INT)->i = 1;
        q8_node_set_attr(n, "else_scope", Q8_ATTR_INT)->i = 2;
    }
    q8_error err = {0};
    cr_assert_eq(q8_graph_infer_shapes(g, &err), Q8_OK, "%s", err.msg);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "t", &m, &err), Q8_OK, "%s", err.msg);
    q8_session *s = NULL;
    q8_session_options so = {.device = Q8_DEVICE_CUDA};
    cr_assert_neq(q8_session_create(m, &so, &s, &err), Q8_OK);
    cr_assert(strstr(err.msg, "node 'If' (If): the cuda backend does not support an If with a "
                              "condition computed at run time"), "%s", err.msg);
    so.device = Q8_DEVICE_CPU;
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    q8_session_free(s);
    q8_model_free(m);
}
