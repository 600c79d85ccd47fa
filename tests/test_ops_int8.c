/* INT8: requantization, the INT8 GEMM on every code path, the q8.Q* ops and
 * QuantizeLinear/DequantizeLinear. Everything integer is compared for exact
 * equality with plain references written here from docs/int8-ops.md (int64
 * loops, __int128 for the requantization). */
#include <math.h>
#include <string.h>

#include "igemm.h"
#include "igemv_sparse.h"
#include "model.h"
#include "requant.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static int8_t rnd_i8(q8t_rng *r) { return (int8_t)(q8t_next(r) >> 56); }

/* Fill with random int8, or with one extreme value everywhere (mode 1: -128,
 * mode 2: 127, mode 3: alternating -128/127). */
static void fill_i8(q8t_rng *r, int8_t *x, int64_t n, int mode) {
    for (int64_t i = 0; i < n; i++)
        x[i] = mode == 0 ? rnd_i8(r) : mode == 1 ? -128 : mode == 2 ? 127 : (i & 1 ? 127 : -128);
}

/* round_half_up(num / 2^sh) for an exact rational, in 128 bits. */
static __int128 rhu_shift(__int128 num, int sh) {
    __int128 d = (__int128)1 << sh;
    __int128 q = num / d, rem = num % d;
    if (rem < 0) {
        q -= 1;
        rem += d;
    }
    return 2 * rem >= d ? q + 1 : q;
}

/* ---- requantization ----------------------------------------------------- */

Test(requant, make_matches_the_spec) {
    q8_requant r = q8_requant_make(1.0);
    cr_assert_eq(r.mult, 1 << 30);
    cr_assert_eq(r.shift, 30);
    r = q8_requant_make(0.5);
    cr_assert_eq(r.mult, 1 << 30);
    cr_assert_eq(r.shift, 31);
    /* m just below 1 rounds up to 2^31: mult 2^30, e + 1 */
    r = q8_requant_make(1.0 - 1e-12);
    cr_assert_eq(r.mult, 1 << 30);
    cr_assert_eq(r.shift, 30);
    r = q8_requant_make(1e-30); /* 31 - e > 62 */
    cr_assert_eq(r.mult, 0);
    cr_assert_eq(q8_requant_raw(2147483647, r.mult, r.shift), 0);
    r = q8_requant_make(1e12); /* shift clamped to 1 */
    cr_assert_eq(r.shift, 1);
    cr_assert(r.mult >= 1 << 30);
}

Test(requant, half_way_rounds_up) {
    q8_requant r = q8_requant_make(0.5);
    cr_assert_eq(q8_requant_raw(3, r.mult, r.shift), 2);   /* 1.5 */
    cr_assert_eq(q8_requant_raw(-3, r.mult, r.shift), -1); /* -1.5 */
    cr_assert_eq(q8_requant_raw(-1, r.mult, r.shift), 0);  /* -0.5 */
    cr_assert_eq(q8_requant_raw(1, r.mult, r.shift), 1);   /* 0.5 */
    r = q8_requant_make(0.25);
    cr_assert_eq(q8_requant_raw(-6, r.mult, r.shift), -1); /* -1.5 */
    cr_assert_eq(q8_requant_raw(-10, r.mult, r.shift), -2); /* -2.5 */
}

/* M with at most 31 significant bits is represented exactly: the result is
 * round_half_up of the exact rational acc * M. */
Test(requant, exact_for_exactly_representable_multipliers) {
    q8t_rng g = q8t_seed(11);
    for (int t = 0; t < 200000; t++) {
        int64_t m = (int64_t)(q8t_next(&g) >> 33) | 1; /* odd, < 2^31 */
        int e = 10 + (int)(q8t_next(&g) % 50);          /* M = m / 2^e */
        double M = ldexp((double)m, -e);
        if (!(M >= 1e-9 && M <= 1e4)) continue;
        int32_t acc = (int32_t)(q8t_next(&g) >> 32);
        if (t % 3 == 0) acc >>= q8t_next(&g) % 31;
        q8_requant r = q8_requant_make(M);
        int64_t got = q8_requant_raw(acc, r.mult, r.shift);
        __int128 want = rhu_shift((__int128)acc * m, e);
        cr_assert(got == (int64_t)want, "M=%.17g acc=%d: got %lld want %lld", M, acc,
                  (long long)got, (long long)want);
    }
}

/* Any M: the fixed-point product is computed exactly (checked in 128 bits)
 * and lies within 1 of acc * M where |acc * M| < 2^30. */
Test(requant, within_one_of_the_double_product) {
    q8t_rng g = q8t_seed(12);
    for (int t = 0; t < 200000; t++) {
        double M = exp(log(1e-6) + (log(100.0) - log(1e-6)) * (q8t_next(&g) >> 11) * 0x1p-53);
        int32_t acc = (int32_t)(q8t_next(&g) >> 32);
        acc >>= q8t_next(&g) % 32;
        q8_requant r = q8_requant_make(M);
        int64_t got = q8_requant_raw(acc, r.mult, r.shift);
        cr_assert(got == (int64_t)rhu_shift((__int128)acc * r.mult, r.shift));
        /* exact: M = mant * 2^ex with a 53-bit integer mant */
        int ex;
        double fr = frexp(M, &ex);
        int64_t mant = (int64_t)ldexp(fr, 53);
        ex -= 53;
        __int128 num = (__int128)acc * mant; /* acc * M = num * 2^ex, ex < 0 here */
        __int128 want = rhu_shift(num, -ex);
        if (fabs((double)acc * M) < 0x1p30) {
            __int128 d = (__int128)got - want;
            cr_assert(d >= -1 && d <= 1, "M=%.17g acc=%d: got %lld exact %lld", M, acc,
                      (long long)got, (long long)want);
        }
    }
}

Test(requant, act_bounds_and_leaky_table) {
    int32_t lo, hi;
    q8_qact a = {Q8_QACT_RELU, -INFINITY, INFINITY, 0};
    q8_act_i8_bounds(&a, 0.1f, &lo, &hi);
    cr_assert(lo == 0 && hi == 127);
    a = (q8_qact){Q8_QACT_CLIP, 0.0f, 6.0f, 0};
    q8_act_i8_bounds(&a, 0.05f, &lo, &hi); /* 6 / 0.05 = 120 */
    cr_assert(lo == 0 && hi == 120, "%d %d", lo, hi);
    a = (q8_qact){Q8_QACT_CLIP, -1.0f, 1.0f, 0};
    q8_act_i8_bounds(&a, 0.004f, &lo, &hi); /* +-250 -> saturate */
    cr_assert(lo == -128 && hi == 127);
    a = (q8_qact){Q8_QACT_CLIP, -0.25f, 0.25f, 0};
    q8_act_i8_bounds(&a, 0.5f, &lo, &hi); /* +-0.5 -> even: 0 */
    cr_assert(lo == 0 && hi == 0, "%d %d", lo, hi);
    a = (q8_qact){Q8_QACT_CLIP, -0.75f, 0.75f, 0};
    q8_act_i8_bounds(&a, 0.5f, &lo, &hi); /* +-1.5 -> even: +-2 */
    cr_assert(lo == -2 && hi == 2, "%d %d", lo, hi);
    int8_t lut[128];
    q8_act_leaky_lut(0.1f, lut);
    cr_assert_eq(lut[-5 + 128], -1);   /* -0.5 -> away from zero */
    cr_assert_eq(lut[-128 + 128], -13); /* -12.8 */
    cr_assert_eq(lut[-4 + 128], 0);    /* -0.4 */
    q8_act_leaky_lut(2.0f, lut);
    cr_assert_eq(lut[-100 + 128], -128); /* clamped */
}

/* ---- INT8 GEMM ---------------------------------------------------------- */

/* Every ISA variant this CPU has is forced in turn (the others are skipped). */
static const q8_igemm_path k_paths[] = {Q8_IGEMM_C,          Q8_IGEMM_AVX2,    Q8_IGEMM_AVXVNNI,
                                        Q8_IGEMM_AVX512VNNI, Q8_IGEMM_NEONDOT, Q8_IGEMM_NEONI8MM};
#define N_PATHS (int)(sizeof k_paths / sizeof k_paths[0])

/* One GEMM problem with its exact reference accumulators. R is [I][K], L is
 * [J][K]; bias goes with rows (conv orientation) or columns (gemm). */
typedef struct gemm_case {
    int64_t I, J, K;
    bool conv; /* rows = signed weights, lanes = unsigned activations */
    int8_t *R, *L;
    int32_t *bias;
    int32_t *ref;
    /* packed */
    uint8_t *rows, *lanes;
    int32_t *init;
} gemm_case;

static void gemm_case_init(gemm_case *c, int64_t I, int64_t J, int64_t K, bool conv, int mode,
                           uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    c->I = I, c->J = J, c->K = K, c->conv = conv;
    c->R = malloc((size_t)(I * K + 1));
    c->L = malloc((size_t)(J * K + 1));
    fill_i8(&g, c->R, I * K, mode);
    fill_i8(&g, c->L, J * K, mode == 3 ? 1 : mode);
    int64_t nb = conv ? I : J;
    c->bias = malloc(sizeof(int32_t) * (size_t)nb);
    bool room = K * 16384 + 1000000 <= INT32_MAX; /* else no bias: the sums need it all */
    for (int64_t i = 0; i < nb; i++)
        c->bias[i] = room ? (int32_t)(q8t_next(&g) % 2000001) - 1000000 : 0;
    c->ref = malloc(sizeof(int32_t) * (size_t)(I * J));
    for (int64_t i = 0; i < I; i++)
        for (int64_t j = 0; j < J; j++) {
            int64_t s = c->bias[conv ? i : j];
            for (int64_t k = 0; k < K; k++) s += (int64_t)c->R[i * K + k] * c->L[j * K + k];
            cr_assert(s >= INT32_MIN && s <= INT32_MAX);
            c->ref[i * J + j] = (int32_t)s;
        }
    c->rows = q8_aligned_alloc(q8_ig_rows_bytes(I, K) + 64);
    c->lanes = q8_aligned_alloc(q8_ig_lanes_bytes(J, K) + 64);
    int32_t *sums = malloc(sizeof(int32_t) * (size_t)nb);
    c->init = malloc(sizeof(int32_t) * (size_t)nb);
    if (conv) {
        q8_ig_pack_rows(c->R, K, I, K, false, c->rows, sums, NULL);
        int8_t *lt = malloc((size_t)(J * K + 1)); /* [K][J] */
        for (int64_t j = 0; j < J; j++)
            for (int64_t k = 0; k < K; k++) lt[k * J + j] = c->L[j * K + k];
        q8_ig_pack_lanes_kj(lt, J, K, J, true, c->lanes, NULL);
        free(lt);
    } else {
        q8_ig_pack_rows(c->R, K, I, K, true, c->rows, NULL, NULL);
        q8_ig_pack_lanes_jk(c->L, K, J, K, false, c->lanes, sums);
    }
    for (int64_t i = 0; i < nb; i++)
        c->init[i] = (int32_t)((uint32_t)c->bias[i] - 128u * (uint32_t)sums[i]);
    free(sums);
}

static void gemm_case_free(gemm_case *c) {
    free(c->R);
    free(c->L);
    free(c->bias);
    free(c->ref);
    q8_aligned_free(c->rows);
    q8_aligned_free(c->lanes);
    free(c->init);
}

static void gemm_case_run(const gemm_case *c, const q8_epilogue *e, q8_igemm_path path,
                          q8_pool *pool, void *out) {
    q8_igemm_args a = {.I = c->I, .J = c->J, .K = c->K, .rows = c->rows, .lanes = c->lanes,
                       .rows_u8 = !c->conv, .init_row = c->conv ? c->init : NULL,
                       .init_col = c->conv ? NULL : c->init, .epi = e, .out = out,
                       .ldo = c->J};
    q8_igemm(&a, pool, path);
}

/* The scalar epilogue applied to the reference accumulators. */
static void ref_epilogue(const gemm_case *c, const q8_epilogue *e, void *out) {
    size_t es = e->kind == Q8_EPI_I8 ? 1 : 4;
    for (int64_t i = 0; i < c->I; i++)
        q8_epilogue_row_c(e, c->ref + i * c->J, c->J, q8_epi_ch0(e, i, 0),
                          (char *)out + (size_t)(i * c->J) * es);
}

static void check_gemm_i32(int64_t I, int64_t J, int64_t K, bool conv, int mode,
                           q8_pool *pool3) {
    gemm_case c;
    gemm_case_init(&c, I, J, K, conv, mode, (uint64_t)(I * 1000003 + J * 1009 + K + mode));
    q8_epilogue e = {.kind = Q8_EPI_I32, .chan = conv ? Q8_CH_ROW : Q8_CH_COL};
    int32_t *out = malloc(sizeof(int32_t) * (size_t)(I * J) + 64);
    for (int p = 0; p < N_PATHS; p++) {
        if (!q8_igemm_path_supported(k_paths[p])) continue;
        for (int th = 0; th < 2; th++) {
            memset(out, 0x5a, sizeof(int32_t) * (size_t)(I * J) + 64);
            gemm_case_run(&c, &e, k_paths[p], th ? pool3 : NULL, out);
            for (int64_t x = 0; x < I * J; x++)
                cr_assert(out[x] == c.ref[x],
                          "%s %s I=%lld J=%lld K=%lld mode %d threads %d: [%lld][%lld] = %d, "
                          "want %d", q8_igemm_path_name(k_paths[p]), conv ? "conv" : "gemm",
                          (long long)I, (long long)J, (long long)K, mode, th ? 3 : 1,
                          (long long)(x / J), (long long)(x % J), out[x], c.ref[x]);
            const uint8_t *guard = (const uint8_t *)(out + I * J);
            for (int x = 0; x < 64; x++) cr_assert(guard[x] == 0x5a, "wrote past the output");
        }
    }
    free(out);
    gemm_case_free(&c);
}

Test(igemm, exact_on_awkward_shapes_every_path) {
    static const int64_t sz[] = {1, 3, 13, 17, 64, 65, 127, 255, 1000};
    q8_pool *pool = q8_pool_create(3);
    for (int a = 0; a < 9; a++)
        for (int b = 0; b < 9; b++)
            for (int k = 0; k < 9; k++) {
                int64_t I = sz[a], J = sz[b], K = sz[k];
                if (I * J * K > 300000 && !(I * J * K <= 20000000 && (a + b + k) % 7 == 0))
                    continue;
                check_gemm_i32(I, J, K, (a + b + k) & 1, 0, pool);
            }
    q8_pool_free(pool);
}

/* -128/127 everywhere: the products that saturate vpmaddubsw (and a careless
 * +128 correction) */
Test(igemm, extreme_values) {
    q8_pool *pool = q8_pool_create(3);
    for (int mode = 1; mode <= 3; mode++)
        for (int conv = 0; conv < 2; conv++) {
            check_gemm_i32(17, 65, 1000, conv, mode, pool);
            check_gemm_i32(7, 33, 8191, conv, mode, pool);
            check_gemm_i32(3, 17, 3, conv, mode, pool);
        }
    q8_pool_free(pool);
}

/* The largest K whose sums still fit in int32, all products +2^14. */
Test(igemm, longest_reduction) {
    check_gemm_i32(2, 17, Q8_IG_MAX_K, false, 1, NULL);
    check_gemm_i32(2, 17, Q8_IG_MAX_K, true, 1, NULL);
}

static void check_epilogues(int64_t I, int64_t J, int64_t K, bool conv, q8_pool *pool3) {
    gemm_case c;
    gemm_case_init(&c, I, J, K, conv, 0, (uint64_t)(I * 31 + J * 7 + K));
    int64_t nc = conv ? I : J;
    int32_t *mult = malloc(sizeof(int32_t) * (size_t)nc);
    int32_t *shift = malloc(sizeof(int32_t) * (size_t)nc);
    float *scale = malloc(sizeof(float) * (size_t)nc);
    q8t_rng g = q8t_seed(5);
    for (int64_t i = 0; i < nc; i++) {
        /* multipliers around 1/(sqrt(K) * 64): outputs spread over the int8 range */
        double M = q8t_uniform(&g, 0.2f, 3.0f) / (sqrt((double)K) * 64.0);
        if (i % 5 == 4) M *= 100; /* many saturate */
        q8_requant r = q8_requant_make(M);
        mult[i] = r.mult;
        shift[i] = r.shift;
        scale[i] = (float)M * q8t_uniform(&g, 0.5f, 2.0f);
    }
    int8_t lut[128];
    q8_act_leaky_lut(0.1f, lut);
    struct { q8_qact act; } acts[] = {
        {{Q8_QACT_NONE, -INFINITY, INFINITY, 0}}, {{Q8_QACT_RELU, -INFINITY, INFINITY, 0}},
        {{Q8_QACT_CLIP, -0.5f, 1.5f, 0}}, {{Q8_QACT_LEAKY, -INFINITY, INFINITY, 0.1f}},
    };
    size_t nb = (size_t)(I * J) * 4;
    void *want = malloc(nb), *got = malloc(nb);
    for (int kind = Q8_EPI_I8; kind <= Q8_EPI_F32; kind++)
        for (int ch = 0; ch < 3; ch++)
            for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
                if ((ch == Q8_CH_ROW && !conv) || (ch == Q8_CH_COL && conv)) continue;
                q8_epilogue e = {.kind = kind, .chan = ch, .mult = mult, .shift = shift,
                                 .scale = scale};
                if (kind == Q8_EPI_I8) {
                    q8_act_i8_bounds(&acts[ai].act, 0.01f, &e.lo, &e.hi);
                    if (acts[ai].act.kind == Q8_QACT_LEAKY) e.leaky_lut = lut;
                } else {
                    q8_epilogue_set_f32_act(&e, &acts[ai].act);
                }
                ref_epilogue(&c, &e, want);
                for (int p = 0; p < N_PATHS; p++) {
                    if (!q8_igemm_path_supported(k_paths[p])) continue;
                    for (int th = 0; th < 2; th++) {
                        memset(got, 0x33, nb);
                        gemm_case_run(&c, &e, k_paths[p], th ? pool3 : NULL, got);
                        size_t n = (size_t)(I * J) * (kind == Q8_EPI_I8 ? 1 : 4);
                        cr_assert(memcmp(got, want, n) == 0,
                                  "%s epilogue %d chan %d act %zu I=%lld J=%lld: differs",
                                  q8_igemm_path_name(k_paths[p]), kind, ch, ai, (long long)I,
                                  (long long)J);
                    }
                }
            }
    free(want);
    free(got);
    free(mult);
    free(shift);
    free(scale);
    gemm_case_free(&c);
}

Test(igemm, epilogues_bit_identical_on_every_path) {
    q8_pool *pool = q8_pool_create(3);
    check_epilogues(13, 65, 77, true, pool);
    check_epilogues(13, 65, 77, false, pool);
    check_epilogues(64, 255, 300, true, pool);
    check_epilogues(65, 127, 64, false, pool);
    check_epilogues(1, 1000, 17, false, pool);
    check_epilogues(17, 33, 40, true, pool); /* fused conv tiles with a partial last row tile */
    q8_pool_free(pool);
}

Test(igemm, reports_paths) {
    for (int p = 0; p < N_PATHS; p++)
        cr_log_info("igemm path %s: %s", q8_igemm_path_name(k_paths[p]),
                    q8_igemm_path_supported(k_paths[p]) ? "supported" : "not supported here");
    cr_assert(q8_igemm_path_supported(Q8_IGEMM_C));
}

/* ---- op harness ---------------------------------------------------------- */

#include "passes.h"

/* Inputs of a one-node test graph; scales != NULL gives the tensor
 * quantization parameters (axis -1 for one scale, else 0). */
typedef struct qin {
    const char *name;
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
    const void *data; /* constant, or NULL for a graph input */
    const float *scales;
    int nscales;
} qin;

typedef struct qattrs {
    const char *act;        /* NULL, "Relu", "Clip", "LeakyRelu" */
    float act_min, act_max, act_alpha;
    float y_scale;          /* 0: float32 output */
} qattrs;

static void set_q(q8_tensor *t, const float *s, int n, int axis) {
    free(t->q.scale);
    t->q.scale = malloc(sizeof(float) * (size_t)n);
    memcpy(t->q.scale, s, sizeof(float) * (size_t)n);
    t->q.n = n;
    t->q.axis = axis;
    t->q.zero_point = 0;
}

static q8_graph *qgraph(const char *op, const char *domain, const qin *ins, int n_in,
                        const qattrs *qa, const char *path) {
    q8t_in tin[16];
    for (int i = 0; i < n_in; i++) {
        tin[i] = (q8t_in){ins[i].name, ins[i].dtype, ins[i].ndim, {0}, ins[i].data};
        memcpy(tin[i].dims, ins[i].dims, sizeof tin[i].dims);
    }
    q8_graph *g = q8t_graph1(op, tin, n_in, 1);
    q8_node *n = g->nodes[g->n_nodes - 1];
    free(n->domain);
    n->domain = q8_strdup(domain);
    for (int i = 0; i < n_in; i++)
        if (ins[i].name && ins[i].scales)
            set_q(g->tensors[q8_graph_find(g, ins[i].name)], ins[i].scales, ins[i].nscales,
                  ins[i].nscales == 1 && ins[i].data == NULL ? -1 : 0);
    if (qa) {
        if (qa->act) {
            q8t_attr_str(g, "_act", qa->act);
            q8t_attr_float(g, "_act_min", qa->act_min);
            q8t_attr_float(g, "_act_max", qa->act_max);
            q8t_attr_float(g, "_act_alpha", qa->act_alpha);
        }
        if (qa->y_scale > 0) q8t_attr_float(g, "y_scale", qa->y_scale);
    }
    if (path) q8t_attr_str(g, "_igemm_path", path);
    return g;
}

typedef q8_graph *(*qbuild_fn)(const void *ctx, const char *path);

/* Run with 1 and 3 threads on every supported GEMM path (or once, without
 * choosing one: paths false), in a session that shares the model and in
 * one that owns it (where pruned weights may stay compressed); the output
 * must equal want exactly (int8 and uint8: bytes; float32: ==, so -0
 * matches +0). */
static void check_op_paths(qbuild_fn build, const void *ctx, const void *const *in, q8_dtype dt,
                           const int64_t *dims, int ndim, const void *want, const char *what,
                           bool paths) {
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) numel *= dims[d];
    for (int p = 0; p < (paths ? N_PATHS : 1); p++) {
        if (!q8_igemm_path_supported(k_paths[p])) continue;
        for (int run = 0; run < 4; run++) {
            int th = run & 1 ? 3 : 1;
            bool owning = run >= 2;
            q8_graph *g = build(ctx, paths ? q8_igemm_path_name(k_paths[p]) : NULL);
            void *out[1] = {0};
            q8_tensor_info info[1];
            q8_error err = {0};
            q8_status s = owning ? q8t_run_owning(g, in, th, out, info, 1, &err)
                                 : q8t_run(g, in, th, out, info, 1, &err);
            cr_assert_eq(s, Q8_OK, "%s: %s", what, err.msg);
            cr_assert_eq(info[0].dtype, dt, "%s: output is %s", what,
                         q8_dtype_name(info[0].dtype));
            cr_assert_eq(info[0].ndim, ndim, "%s: output rank %d, want %d", what, info[0].ndim,
                         ndim);
            for (int d = 0; d < ndim; d++)
                cr_assert_eq(info[0].dims[d], dims[d], "%s: dim %d is %lld, want %lld", what, d,
                             (long long)info[0].dims[d], (long long)dims[d]);
            for (int64_t i = 0; i < numel; i++) {
                bool ok;
                double gv, wv;
                if (dt == Q8_F32) {
                    gv = ((const float *)out[0])[i];
                    wv = ((const float *)want)[i];
                    ok = ((const float *)out[0])[i] == ((const float *)want)[i];
                } else if (dt == Q8_I8) {
                    gv = ((const int8_t *)out[0])[i];
                    wv = ((const int8_t *)want)[i];
                    ok = gv == wv;
                } else {
                    gv = ((const uint8_t *)out[0])[i];
                    wv = ((const uint8_t *)want)[i];
                    ok = gv == wv;
                }
                cr_assert(ok, "%s (%s, %d threads%s): [%lld] = %.9g, want %.9g", what,
                          q8_igemm_path_name(k_paths[p]), th, owning ? ", owning" : "",
                          (long long)i, gv, wv);
            }
            free(out[0]);
        }
    }
}

static void check_op(qbuild_fn build, const void *ctx, const void *const *in, q8_dtype dt,
                     const int64_t *dims, int ndim, const void *want, const char *what) {
    check_op_paths(build, ctx, in, dt, dims, ndim, want, what, true);
}

/* Expect the passes to fail with a message containing needle. */
static void check_fails(q8_graph *g, const char *needle, const char *what) {
    q8_error err = {0};
    q8_status s = q8_passes_run(g, NULL, &err);
    cr_assert_neq(s, Q8_OK, "%s: expected an error", what);
    cr_assert(strstr(err.msg, needle), "%s: message '%s' lacks '%s'", what, err.msg, needle);
    q8_graph_free(g);
}

/* g passes infer, but the CPU backend refuses it when the session is made
 * (what prepare checks: the _igemm_path a test pins). */
static void check_session_fails(q8_graph *g, const char *needle, const char *what) {
    q8_error err = {0};
    static const int8_t zeros[4096];
    const void *in[8] = {zeros, zeros, zeros, zeros, zeros, zeros, zeros, zeros};
    void *out[1] = {0};
    q8_tensor_info info[1];
    cr_assert_leq(g->n_inputs, 8);
    for (int i = 0; i < g->n_inputs; i++)
        cr_assert_leq(q8_tensor_nbytes(g->tensors[g->inputs[i]]), sizeof zeros);
    q8_status s = q8t_run(g, in, 1, out, info, 1, &err);
    free(out[0]);
    cr_assert_neq(s, Q8_OK, "%s: expected an error", what);
    cr_assert(strstr(err.msg, needle), "%s: message '%s' lacks '%s'", what, err.msg, needle);
}

/* ---- the spec's epilogue, written out ----------------------------------- */

static int32_t clamp8(double v) { return v < -128 ? -128 : v > 127 ? 127 : (int32_t)v; }

static int8_t spec_i8(int64_t acc, double M, const qattrs *qa) {
    q8_requant r = q8_requant_make(M);
    int64_t y = (int64_t)rhu_shift((__int128)acc * r.mult, r.shift);
    int64_t lo = -128, hi = 127;
    if (qa->act && strcmp(qa->act, "Relu") == 0) lo = 0;
    if (qa->act && strcmp(qa->act, "Clip") == 0) {
        lo = clamp8(nearbyint((double)qa->act_min / qa->y_scale));
        hi = clamp8(nearbyint((double)qa->act_max / qa->y_scale));
    }
    y = y < lo ? lo : y;
    y = y > hi ? hi : y;
    if (qa->act && strcmp(qa->act, "LeakyRelu") == 0 && y < 0)
        y = clamp8(roundf((float)y * qa->act_alpha));
    return (int8_t)y;
}

static float spec_f32(int64_t acc, double sxw, const qattrs *qa) {
    float y = (float)acc * (float)sxw;
    if (qa->act && strcmp(qa->act, "Relu") == 0) y = y > 0 ? y : 0;
    if (qa->act && strcmp(qa->act, "Clip") == 0) y = fminf(fmaxf(y, qa->act_min), qa->act_max);
    if (qa->act && strcmp(qa->act, "LeakyRelu") == 0) y = y < 0 ? y * qa->act_alpha : y;
    return y;
}

/* Output value for accumulator acc of a channel with input scale product sxw. */
static void spec_out(void *out, int64_t i, int64_t acc, double sxw, const qattrs *qa) {
    if (qa->y_scale > 0) ((int8_t *)out)[i] = spec_i8(acc, sxw / qa->y_scale, qa);
    else ((float *)out)[i] = spec_f32(acc, sxw, qa);
}

static const qattrs k_acts[] = {
    {NULL, 0, 0, 0, 0},           {NULL, 0, 0, 0, 0.05f},
    {"Relu", -INFINITY, INFINITY, 0, 0.04f}, {"Relu", -INFINITY, INFINITY, 0, 0},
    {"Clip", -0.5f, 2.0f, 0, 0.02f},        {"Clip", 0.0f, 6.0f, 0, 0},
    {"LeakyRelu", -INFINITY, INFINITY, 0.1f, 0.03f}, {"LeakyRelu", -INFINITY, INFINITY, 0.2f, 0},
};
#define N_ACTS (int)(sizeof k_acts / sizeof k_acts[0])

static float *rand_scales(q8t_rng *g, int64_t n, float lo, float hi) {
    float *s = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) s[i] = q8t_uniform(g, lo, hi);
    return s;
}

static int8_t *rand_i8(q8t_rng *g, int64_t n, int lo) {
    int8_t *x = malloc((size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        int8_t v = rnd_i8(g);
        x[i] = v < lo ? (int8_t)lo : v;
    }
    return x;
}

static int32_t *rand_bias(q8t_rng *g, int64_t n) {
    int32_t *b = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) b[i] = (int32_t)(q8t_next(g) % 20001) - 10000;
    return b;
}

/* ---- q8.QConv / q8.QConvTranspose --------------------------------------- */

typedef struct conv_case {
    const char *what;
    bool transpose;
    int nsp;
    int64_t N, C, H, W, M, KH, KW, sh, sw, dh, dw, group;
    int64_t pads[4];        /* resolved top, left, bottom, right (the reference's) */
    const char *auto_pad;   /* given to the op instead of pads */
    int64_t oph, opw;       /* transpose: output_padding */
    bool give_oshape;       /* transpose: output_shape instead of pads */
    bool bias;
    double keep;            /* > 0: that share of W nonzero (pruned), else dense; < 0: none */
    /* filled by conv_setup */
    qattrs qa;
    int8_t *x, *w;
    int32_t *b;
    float sx, *swc;
    int64_t OH, OW;
} conv_case;

static void conv_setup(conv_case *c, uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    if (c->nsp == 1) c->H = c->KH = c->sh = c->dh = 1;
    int64_t Cg = c->C / c->group;
    c->x = rand_i8(&g, c->N * c->C * c->H * c->W, -128);
    c->w = rand_i8(&g, c->M * Cg * c->KH * c->KW, -127);
    for (int64_t i = 0; c->keep != 0 && i < c->M * Cg * c->KH * c->KW; i++)
        if (q8t_uniform(&g, 0, 1) >= c->keep) c->w[i] = 0;
    c->b = c->bias ? rand_bias(&g, c->M) : NULL;
    c->sx = q8t_uniform(&g, 0.01f, 0.05f);
    c->swc = rand_scales(&g, c->M, 0.001f, 0.02f);
    int64_t eh = (c->KH - 1) * c->dh + 1, ew = (c->KW - 1) * c->dw + 1;
    if (!c->transpose) {
        c->OH = (c->H + c->pads[0] + c->pads[2] - eh) / c->sh + 1;
        c->OW = (c->W + c->pads[1] + c->pads[3] - ew) / c->sw + 1;
    } else {
        c->OH = c->sh * (c->H - 1) + c->oph + eh - c->pads[0] - c->pads[2];
        c->OW = c->sw * (c->W - 1) + c->opw + ew - c->pads[1] - c->pads[3];
    }
}

static void conv_free(conv_case *c) {
    free(c->x);
    free(c->w);
    free(c->b);
    free(c->swc);
}

static q8_graph *conv_build(const void *ctx, const char *path) {
    const conv_case *c = ctx;
    int r = 2 + c->nsp;
    qin ins[3] = {
        {"x", Q8_I8, r, {c->N, c->C, c->H, c->W}, NULL, &c->sx, 1},
        {"w", Q8_I8, r, {c->M, c->C / c->group, c->KH, c->KW}, c->w, c->swc, (int)c->M},
        {"b", Q8_I32, 1, {c->M}, c->b, NULL, 0},
    };
    if (c->nsp == 1) {
        ins[0].dims[2] = c->W;
        ins[1].dims[2] = c->KW;
    }
    q8_graph *g = qgraph(c->transpose ? "QConvTranspose" : "QConv", "q8", ins, c->bias ? 3 : 2,
                         &c->qa, path);
    int64_t s[2] = {c->sh, c->sw}, d[2] = {c->dh, c->dw}, k[2] = {c->KH, c->KW};
    int64_t p[4] = {c->pads[0], c->pads[1], c->pads[2], c->pads[3]};
    int64_t op[2] = {c->oph, c->opw}, os[2] = {c->OH, c->OW};
    int o = c->nsp == 1; /* 1-D: the W entries only */
    int64_t p1[2] = {c->pads[1], c->pads[3]};
    q8t_attr_ints(g, "strides", s + o, c->nsp);
    q8t_attr_ints(g, "dilations", d + o, c->nsp);
    q8t_attr_ints(g, "kernel_shape", k + o, c->nsp);
    q8t_attr_int(g, "group", c->group);
    if (c->auto_pad) q8t_attr_str(g, "auto_pad", c->auto_pad);
    else if (c->give_oshape) q8t_attr_ints(g, "output_shape", os + o, c->nsp);
    else q8t_attr_ints(g, "pads", c->nsp == 1 ? p1 : p, 2 * c->nsp);
    if (c->transpose && (c->oph || c->opw)) q8t_attr_ints(g, "output_padding", op + o, c->nsp);
    return g;
}

/* int64 reference accumulators [N][M][OH][OW] straight from the definition. */
static int64_t *conv_ref_acc(const conv_case *c) {
    int64_t Cg = c->C / c->group, Mg = c->M / c->group;
    int64_t *acc = calloc((size_t)(c->N * c->M * c->OH * c->OW) + 1, sizeof(int64_t));
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++) {
            int64_t *a = acc + (n * c->M + m) * c->OH * c->OW;
            for (int64_t i = 0; i < c->OH * c->OW; i++) a[i] = c->b ? c->b[m] : 0;
            int64_t grp = m / Mg;
            for (int64_t cl = 0; cl < Cg; cl++)
                for (int64_t kh = 0; kh < c->KH; kh++)
                    for (int64_t kw = 0; kw < c->KW; kw++) {
                        int64_t wv = c->w[((m * Cg + cl) * c->KH + kh) * c->KW + kw];
                        const int8_t *xc = c->x + (n * c->C + grp * Cg + cl) * c->H * c->W;
                        if (!c->transpose) {
                            for (int64_t oh = 0; oh < c->OH; oh++)
                                for (int64_t ow = 0; ow < c->OW; ow++) {
                                    int64_t ih = oh * c->sh - c->pads[0] + kh * c->dh;
                                    int64_t iw = ow * c->sw - c->pads[1] + kw * c->dw;
                                    if (ih >= 0 && ih < c->H && iw >= 0 && iw < c->W)
                                        a[oh * c->OW + ow] += wv * xc[ih * c->W + iw];
                                }
                        } else {
                            for (int64_t ih = 0; ih < c->H; ih++)
                                for (int64_t iw = 0; iw < c->W; iw++) {
                                    int64_t oh = ih * c->sh - c->pads[0] + kh * c->dh;
                                    int64_t ow = iw * c->sw - c->pads[1] + kw * c->dw;
                                    if (oh >= 0 && oh < c->OH && ow >= 0 && ow < c->OW)
                                        a[oh * c->OW + ow] += wv * xc[ih * c->W + iw];
                                }
                        }
                    }
        }
    return acc;
}

static void check_held_compressed(qbuild_fn build, const void *ctx, const void *dense,
                                  const void *in0, size_t n, const char *what);

static void check_conv(conv_case c, uint64_t seed) {
    conv_setup(&c, seed);
    int64_t *acc = conv_ref_acc(&c);
    int64_t P = c.OH * c.OW, total = c.N * c.M * P;
    void *want = malloc(sizeof(float) * (size_t)(total + 1));
    const void *in[1] = {c.x};
    int64_t dims[4] = {c.N, c.M, c.OH, c.OW};
    if (c.nsp == 1) dims[2] = c.OW;
    for (int a = 0; a < N_ACTS; a++) {
        c.qa = k_acts[a];
        for (int64_t i = 0; i < total; i++)
            spec_out(want, i, acc[i], (double)c.sx * c.swc[i / P % c.M], &c.qa);
        char what[160];
        snprintf(what, sizeof what, "%s, act %s, %s output", c.what, c.qa.act ? c.qa.act : "none",
                 c.qa.y_scale > 0 ? "int8" : "float32");
        check_op(conv_build, &c, in, c.qa.y_scale > 0 ? Q8_I8 : Q8_F32, dims, 2 + c.nsp, want,
                 what);
    }
    size_t wn = (size_t)(c.M * c.C / c.group * c.KH * c.KW);
    c.qa = k_acts[1];
    if (c.keep > 0 && c.keep < 1 && wn >= 8192 && !c.transpose) {
        conv_case d = c;
        q8t_rng g = q8t_seed(seed + 1000);
        d.w = rand_i8(&g, (int64_t)wn, -127);
        check_held_compressed(conv_build, &c, &d, c.x, wn, c.what);
        free(d.w);
    }
    free(want);
    free(acc);
    conv_free(&c);
}

Test(qconv, im2col_and_direct) {
    check_conv((conv_case){.what = "3x3 pad 1, C=13 M=17, 9x7, N=2", .nsp = 2, .N = 2, .C = 13,
                           .H = 9, .W = 7, .M = 17, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1,
                           .dw = 1, .group = 1, .pads = {1, 1, 1, 1}, .bias = true}, 1);
    check_conv((conv_case){.what = "1x1 direct, C=64 M=65 5x5", .nsp = 2, .N = 1, .C = 64,
                           .H = 5, .W = 5, .M = 65, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1,
                           .dw = 1, .group = 1, .bias = true}, 2);
    check_conv((conv_case){.what = "1x1 stride 2", .nsp = 2, .N = 1, .C = 16, .H = 9, .W = 8,
                           .M = 8, .KH = 1, .KW = 1, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
                           .group = 1}, 3);
    check_conv((conv_case){.what = "5x3 stride (2,3) dilation (2,1) asymmetric pads", .nsp = 2,
                           .N = 1, .C = 5, .H = 17, .W = 13, .M = 7, .KH = 5, .KW = 3, .sh = 2,
                           .sw = 3, .dh = 2, .dw = 1, .group = 1, .pads = {2, 0, 1, 3},
                           .bias = true}, 4);
    check_conv((conv_case){.what = "grouped 3x3 dilation 2, group 4", .nsp = 2, .N = 2, .C = 8,
                           .H = 11, .W = 10, .M = 12, .KH = 3, .KW = 3, .sh = 1, .sw = 1,
                           .dh = 2, .dw = 2, .group = 4, .pads = {1, 0, 2, 1}, .bias = true}, 5);
    check_conv((conv_case){.what = "7x7 stride 2 pad 3 (a stem), C=3 M=16 23x19", .nsp = 2,
                           .N = 1, .C = 3, .H = 23, .W = 19, .M = 16, .KH = 7, .KW = 7, .sh = 2,
                           .sw = 2, .dh = 1, .dw = 1, .group = 1, .pads = {3, 3, 3, 3},
                           .bias = true}, 6);
    /* KH x 1 kernels without horizontal padding: each im2col row one run of
     * whole input rows (a speech embedding's 3x1 convs); with vertical
     * padding and dilation the runs start and end inside the output */
    check_conv((conv_case){.what = "3x1 valid, C=24 M=24 34x16", .nsp = 2, .N = 2, .C = 24,
                           .H = 34, .W = 16, .M = 24, .KH = 3, .KW = 1, .sh = 1, .sw = 1,
                           .dh = 1, .dw = 1, .group = 1, .bias = true}, 7);
    check_conv((conv_case){.what = "5x1 pads (3,1) dilation 2, group 2", .nsp = 2, .N = 1,
                           .C = 8, .H = 13, .W = 5, .M = 6, .KH = 5, .KW = 1, .sh = 1, .sw = 1,
                           .dh = 2, .dw = 1, .group = 2, .pads = {3, 0, 1, 0}, .bias = true}, 8);
    check_conv((conv_case){.what = "3x1 pad 4 (rows of only padding)", .nsp = 2, .N = 1,
                           .C = 4, .H = 3, .W = 7, .M = 5, .KH = 3, .KW = 1, .sh = 1, .sw = 1,
                           .dh = 1, .dw = 1, .group = 1, .pads = {4, 0, 4, 0}}, 9);
}

/* Pruned W: where the CPU keeps it compressed (AVX-512 VBMI2, owning
 * sessions), every GEMM lowering makes the weight rows from it (one row
 * block: groups of 4 rows; several: M = 65; groups and images, each a GEMM
 * call; the implicit conv; lanes made block by block, where each thread
 * makes all rows; the long-kernel runs; plain im2col; K = 603), on 1 and 3
 * threads, against the definition. */
Test(qconv, pruned_weights_every_lowering) {
    check_conv((conv_case){.what = "pruned 3x3 pad 1, C=32 M=17", .nsp = 2, .N = 2, .C = 32,
                           .H = 9, .W = 7, .M = 17, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1,
                           .dw = 1, .group = 1, .pads = {1, 1, 1, 1}, .bias = true, .keep = 0.3},
               61);
    check_conv((conv_case){.what = "pruned 1x1 direct, C=64 M=65", .nsp = 2, .N = 1, .C = 64,
                           .H = 5, .W = 7, .M = 65, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1,
                           .dw = 1, .group = 1, .bias = true, .keep = 0.3}, 62);
    check_conv((conv_case){.what = "pruned 1x1 stride 2, C=64 M=24", .nsp = 2, .N = 1, .C = 64,
                           .H = 9, .W = 8, .M = 24, .KH = 1, .KW = 1, .sh = 2, .sw = 2, .dh = 1,
                           .dw = 1, .group = 1, .keep = 0.3}, 63);
    check_conv((conv_case){.what = "pruned 5x3 stride (2,3) dilation (2,1), C=24", .nsp = 2,
                           .N = 1, .C = 24, .H = 17, .W = 13, .M = 16, .KH = 5, .KW = 3, .sh = 2,
                           .sw = 3, .dh = 2, .dw = 1, .group = 1, .pads = {2, 0, 1, 3},
                           .bias = true, .keep = 0.3}, 64);
    check_conv((conv_case){.what = "pruned grouped 3x3, C=64 group 4", .nsp = 2, .N = 2, .C = 64,
                           .H = 11, .W = 10, .M = 32, .KH = 3, .KW = 3, .sh = 1, .sw = 1,
                           .dh = 2, .dw = 2, .group = 4, .pads = {1, 0, 2, 1}, .bias = true,
                           .keep = 0.3}, 65);
    check_conv((conv_case){.what = "pruned implicit 3x3, C=32 M=20 12x62", .nsp = 2, .N = 1,
                           .C = 32, .H = 12, .W = 62, .M = 20, .KH = 3, .KW = 3, .sh = 1,
                           .sw = 1, .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 1, 1},
                           .bias = true, .keep = 0.3}, 66);
    check_conv((conv_case){.what = "pruned 3x3 lanes in blocks, C=64 M=9 48x48", .nsp = 2,
                           .N = 1, .C = 64, .H = 50, .W = 50, .M = 9, .KH = 3, .KW = 3, .sh = 1,
                           .sw = 1, .dh = 1, .dw = 1, .group = 1, .bias = true, .keep = 0.3},
               67);
    check_conv((conv_case){.what = "pruned 1-D k31 stride 8 (runs), M=40", .nsp = 1, .N = 1,
                           .C = 2, .W = 400, .M = 40, .KW = 31, .sw = 8, .dw = 1, .group = 1,
                           .bias = true, .keep = 0.3}, 68);
    /* groups of 4 rows (one row block), two images: a thread's rows kept
     * across calls would be the last group's */
    check_conv((conv_case){.what = "pruned grouped 3x3, C=128 M=16 group 4, N=2", .nsp = 2,
                           .N = 2, .C = 128, .H = 6, .W = 20, .M = 16, .KH = 3, .KW = 3,
                           .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 4,
                           .pads = {1, 1, 1, 1}, .bias = true, .keep = 0.3}, 70);
    check_conv((conv_case){.what = "pruned implicit 3x3, C=64 M=22 group 2, N=2", .nsp = 2,
                           .N = 2, .C = 64, .H = 8, .W = 40, .M = 22, .KH = 3, .KW = 3,
                           .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 2,
                           .pads = {1, 1, 1, 1}, .bias = true, .keep = 0.3}, 71);
    check_conv((conv_case){.what = "pruned 3x1 stride 2 (im2col), C=60 N=3", .nsp = 2, .N = 3,
                           .C = 60, .H = 20, .W = 9, .M = 24, .KH = 3, .KW = 1, .sh = 2,
                           .sw = 2, .dh = 1, .dw = 1, .group = 1, .pads = {1, 0, 1, 0},
                           .bias = true, .keep = 0.3}, 72);
    check_conv((conv_case){.what = "pruned 3x3, K=603", .nsp = 2, .N = 1, .C = 67, .H = 8,
                           .W = 8, .M = 20, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1,
                           .dw = 1, .group = 1, .pads = {1, 1, 1, 1}, .bias = true,
                           .keep = 0.3}, 73);
    check_conv((conv_case){.what = "pruned 3x3 lanes in blocks, C=64 M=40 48x48", .nsp = 2,
                           .N = 1, .C = 64, .H = 50, .W = 50, .M = 40, .KH = 3, .KW = 3,
                           .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .keep = 0.3}, 74);
    check_conv((conv_case){.what = "pruned to nothing, 3x3 C=8 M=16", .nsp = 2, .N = 1, .C = 8,
                           .H = 6, .W = 20, .M = 16, .KH = 3, .KW = 3, .sh = 1, .sw = 1,
                           .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 1, 1}, .bias = true,
                           .keep = -1}, 69);
}

Test(qconv, depthwise_direct_kernel) {
    check_conv((conv_case){.what = "depthwise 3x3 stride 2 pad 1, C=M=13", .nsp = 2, .N = 2,
                           .C = 13, .H = 9, .W = 7, .M = 13, .KH = 3, .KW = 3, .sh = 2, .sw = 2,
                           .dh = 1, .dw = 1, .group = 13, .pads = {1, 1, 1, 1}, .bias = true}, 7);
    check_conv((conv_case){.what = "depthwise multiplier 2, 5x5 dilation 2", .nsp = 2, .N = 1,
                           .C = 5, .H = 12, .W = 13, .M = 10, .KH = 5, .KW = 5, .sh = 1,
                           .sw = 1, .dh = 2, .dw = 2, .group = 5, .pads = {4, 4, 3, 2}}, 8);
    check_conv((conv_case){.what = "one input channel, M=8 (group 1)", .nsp = 2, .N = 1, .C = 1,
                           .H = 6, .W = 5, .M = 8, .KH = 3, .KW = 2, .sh = 1, .sw = 2, .dh = 1,
                           .dw = 1, .group = 1, .bias = true}, 9);
    check_conv((conv_case){.what = "depthwise 3x3 stride 1 pad 1, 33x40", .nsp = 2, .N = 1,
                           .C = 3, .H = 33, .W = 40, .M = 3, .KH = 3, .KW = 3, .sh = 1, .sw = 1,
                           .dh = 1, .dw = 1, .group = 3, .pads = {1, 1, 1, 1}, .bias = true}, 10);
    check_conv((conv_case){.what = "depthwise 2x4 (even taps), stride (2,1), 9x70", .nsp = 2,
                           .N = 1, .C = 4, .H = 9, .W = 70, .M = 4, .KH = 2, .KW = 4, .sh = 2,
                           .sw = 1, .dh = 1, .dw = 2, .group = 4, .pads = {0, 3, 1, 0}}, 18);
    check_conv((conv_case){.what = "depthwise 1x1 (one tap), 3x15", .nsp = 2, .N = 2, .C = 5,
                           .H = 3, .W = 15, .M = 5, .KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1,
                           .dw = 1, .group = 5, .bias = true}, 19);
}

Test(qconv, auto_pad) {
    /* in 7, k 4, s 1: out 7, total pad 3 -> SAME_UPPER (1, 2), SAME_LOWER (2, 1) */
    check_conv((conv_case){.what = "SAME_UPPER", .nsp = 2, .N = 1, .C = 3, .H = 7, .W = 7,
                           .M = 4, .KH = 4, .KW = 4, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                           .group = 1, .pads = {1, 1, 2, 2}, .auto_pad = "SAME_UPPER"}, 11);
    check_conv((conv_case){.what = "SAME_LOWER", .nsp = 2, .N = 1, .C = 3, .H = 7, .W = 7,
                           .M = 4, .KH = 4, .KW = 4, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                           .group = 1, .pads = {2, 2, 1, 1}, .auto_pad = "SAME_LOWER"}, 12);
    /* in 9, k 3, s 2: out 5, total 2 */
    check_conv((conv_case){.what = "SAME_UPPER stride 2", .nsp = 2, .N = 1, .C = 2, .H = 9,
                           .W = 9, .M = 3, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
                           .group = 1, .pads = {1, 1, 1, 1}, .auto_pad = "SAME_UPPER"}, 13);
    check_conv((conv_case){.what = "VALID", .nsp = 2, .N = 1, .C = 2, .H = 9, .W = 8, .M = 3,
                           .KH = 3, .KW = 2, .sh = 2, .sw = 1, .dh = 1, .dw = 1, .group = 1,
                           .auto_pad = "VALID"}, 14);
}

Test(qconv, one_d) {
    check_conv((conv_case){.what = "1-D k5 stride 2 pad 2 dilation 2", .nsp = 1, .N = 2, .C = 6,
                           .W = 20, .M = 4, .KW = 5, .sw = 2, .dw = 2, .group = 1,
                           .pads = {0, 2, 0, 2}, .bias = true}, 15);
    check_conv((conv_case){.what = "1-D depthwise k3", .nsp = 1, .N = 1, .C = 4, .W = 17, .M = 4,
                           .KW = 3, .sw = 1, .dw = 1, .group = 4, .pads = {0, 1, 0, 1}}, 16);
    check_conv((conv_case){.what = "1-D 1x1 direct", .nsp = 1, .N = 1, .C = 9, .W = 33, .M = 5,
                           .KW = 1, .sw = 1, .dw = 1, .group = 1, .bias = true}, 17);
}

Test(qconvtranspose, shapes_and_attributes) {
    check_conv((conv_case){.what = "T 3x3 stride 2 pad 1 output_padding 1", .transpose = true,
                           .nsp = 2, .N = 2, .C = 5, .H = 4, .W = 6, .M = 7, .KH = 3, .KW = 3,
                           .sh = 2, .sw = 2, .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 1, 1},
                           .oph = 1, .opw = 1, .bias = true}, 21);
    check_conv((conv_case){.what = "T grouped, dilation 2, stride (1,3)", .transpose = true,
                           .nsp = 2, .N = 1, .C = 6, .H = 5, .W = 4, .M = 4, .KH = 2, .KW = 3,
                           .sh = 1, .sw = 3, .dh = 2, .dw = 1, .group = 2, .pads = {0, 1, 1, 0},
                           .bias = true}, 22);
    check_conv((conv_case){.what = "T 4x4 stride 2 no pad (upsampling)", .transpose = true,
                           .nsp = 2, .N = 1, .C = 16, .H = 7, .W = 9, .M = 8, .KH = 4, .KW = 4,
                           .sh = 2, .sw = 2, .dh = 1, .dw = 1, .group = 1}, 23);
    /* output_shape 8x8 from 4x4, k3 s2: full 9 -> total 1, pads begin 1 (NOTSET) */
    check_conv((conv_case){.what = "T output_shape", .transpose = true, .nsp = 2, .N = 1, .C = 3,
                           .H = 4, .W = 4, .M = 2, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1,
                           .dw = 1, .group = 1, .pads = {1, 1, 0, 0}, .give_oshape = true}, 24);
    /* SAME_UPPER: out = in * s = 8, total 1 -> end gets it */
    check_conv((conv_case){.what = "T SAME_UPPER", .transpose = true, .nsp = 2, .N = 1, .C = 3,
                           .H = 4, .W = 4, .M = 2, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1,
                           .dw = 1, .group = 1, .pads = {0, 0, 1, 1}, .auto_pad = "SAME_UPPER"},
               25);
    check_conv((conv_case){.what = "T 1-D depthwise-like group 3", .transpose = true, .nsp = 1,
                           .N = 2, .C = 3, .W = 10, .M = 6, .KW = 4, .sw = 2, .dw = 1,
                           .group = 3, .pads = {0, 1, 0, 2}, .bias = true}, 26);
}

/* ---- q8.QGemm ------------------------------------------------------------ */

typedef struct gemm_op_case {
    int ndim;
    int64_t adims[4];       /* A's dims; the last is K */
    int64_t N;
    bool bias;
    qattrs qa;
    int8_t *a, *w;
    int32_t *b;
    float sa, *sw;
} gemm_op_case;

/* The weight bytes a CPU session of g holds after a run on in0 (its one
 * input); owning: the session owns the model (q8run's). Consumes g. */
static size_t held_weights(q8_graph *g, const void *in0, bool owning) {
    q8_error err = {0};
    q8_model *m = NULL;
    q8_session *s = NULL;
    q8_session_options so = {.n_threads = 2, .device = Q8_DEVICE_CPU};
    cr_assert_eq(q8t_model_of(g, &m, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *x = m->g->tensors[m->g->inputs[0]];
    if (owning) cr_assert_eq(q8_session_create_owning(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    else cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, NULL, x->dtype, x->dims, x->ndim, in0, &err), Q8_OK,
                 "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_memory_info mi;
    q8_session_memory(s, &mi);
    q8_session_free(s);
    if (!owning) q8_model_free(m);
    return mi.weights_bytes;
}

/* A pruned W of n bytes (ctx) against the same op with a dense W (dense),
 * both in owning sessions, on every GEMM path: where the CPU keeps pruned
 * weights compressed for the path, the pruned one holds at least 30% of n
 * less; never more. */
static void check_held_compressed(qbuild_fn build, const void *ctx, const void *dense,
                                  const void *in0, size_t n, const char *what) {
    for (int p = -1; p < Q8_IGEMM_PATH_COUNT; p++) {
        if (p >= 0 && (p == Q8_IGEMM_AUTO || !q8_igemm_path_supported(p))) continue;
        const char *name = p < 0 ? NULL : q8_igemm_path_name(p);
        size_t pruned = held_weights(build(ctx, name), in0, true);
        size_t full = held_weights(build(dense, name), in0, true);
        if (q8_isp_kept(p < 0 ? Q8_IGEMM_AUTO : (q8_igemm_path)p))
            cr_assert_lt((double)pruned + 0.3 * (double)n, (double)full,
                         "%s, path %s: %zu weight bytes pruned, %zu dense", what,
                         name ? name : "auto", pruned, full);
        else
            cr_assert_leq(pruned, full, "%s, path %s: %zu weight bytes pruned, %zu dense", what,
                          name ? name : "auto", pruned, full);
    }
}

static q8_graph *qgemm_build(const void *ctx, const char *path) {
    const gemm_op_case *c = ctx;
    int64_t K = c->adims[c->ndim - 1];
    qin ins[3] = {{"a", Q8_I8, c->ndim, {0}, NULL, &c->sa, 1},
                  {"w", Q8_I8, 2, {c->N, K}, c->w, c->sw, (int)c->N},
                  {"b", Q8_I32, 1, {c->N}, c->b, NULL, 0}};
    memcpy(ins[0].dims, c->adims, sizeof c->adims);
    return qgraph("QGemm", "q8", ins, c->bias ? 3 : 2, &c->qa, path);
}

/* density < 1: that share of W's weights nonzero (a pruned W, which the
 * CPU keeps compressed for few rows where it can: igemv_sparse.h) */
static void check_qgemm(int ndim, const int64_t *adims, int64_t N, bool bias, uint64_t seed,
                        double density) {
    gemm_op_case c = {.ndim = ndim, .N = N, .bias = bias};
    memcpy(c.adims, adims, sizeof(int64_t) * (size_t)ndim);
    q8t_rng g = q8t_seed(seed);
    int64_t K = adims[ndim - 1], M = 1;
    for (int i = 0; i < ndim - 1; i++) M *= adims[i];
    c.a = rand_i8(&g, M * K, -128);
    c.w = rand_i8(&g, N * K, -127);
    for (int64_t i = 0; density < 1 && i < N * K; i++)
        if (q8t_uniform(&g, 0, 1) >= density) c.w[i] = 0;
    c.b = bias ? rand_bias(&g, N) : NULL;
    c.sa = q8t_uniform(&g, 0.01f, 0.1f);
    c.sw = rand_scales(&g, N, 0.001f, 0.01f);
    int64_t *acc = malloc(sizeof(int64_t) * (size_t)(M * N + 1));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t s = bias ? c.b[n] : 0;
            for (int64_t k = 0; k < K; k++) s += (int64_t)c.a[m * K + k] * c.w[n * K + k];
            acc[m * N + n] = s;
        }
    int64_t dims[4];
    memcpy(dims, adims, sizeof(int64_t) * (size_t)ndim);
    dims[ndim - 1] = N;
    void *want = malloc(sizeof(float) * (size_t)(M * N + 1));
    const void *in[1] = {c.a};
    for (int a = 0; a < N_ACTS; a++) {
        c.qa = k_acts[a];
        for (int64_t i = 0; i < M * N; i++)
            spec_out(want, i, acc[i], (double)c.sa * c.sw[i % N], &c.qa);
        char what[128];
        snprintf(what, sizeof what, "QGemm M=%lld N=%lld K=%lld density %g act %s %s",
                 (long long)M, (long long)N, (long long)K, density, c.qa.act ? c.qa.act : "none",
                 c.qa.y_scale > 0 ? "int8" : "float32");
        check_op(qgemm_build, &c, in, c.qa.y_scale > 0 ? Q8_I8 : Q8_F32, dims, ndim, want, what);
    }
    c.qa = k_acts[1];
    if (density < 1 && M > 0 && N * K >= 4096) {
        gemm_op_case d = c;
        d.w = rand_i8(&g, N * K, -127);
        check_held_compressed(qgemm_build, &c, &d, c.a, (size_t)(N * K), "QGemm, pruned W");
        free(d.w);
    }
    free(want);
    free(acc);
    free(c.a);
    free(c.w);
    free(c.b);
    free(c.sw);
}

Test(qgemm, shapes_and_activations) {
    check_qgemm(2, (int64_t[]){13, 77}, 65, true, 31, 1);
    check_qgemm(2, (int64_t[]){1, 1000}, 17, true, 32, 1);
    check_qgemm(3, (int64_t[]){2, 3, 64}, 10, false, 33, 1);
    check_qgemm(1, (int64_t[]){255}, 3, true, 34, 1);
    check_qgemm(2, (int64_t[]){65, 3}, 129, true, 35, 1);
    check_qgemm(2, (int64_t[]){0, 16}, 8, true, 36, 1); /* no rows */
    /* narrow W (at most 8 outputs: dot products on W in place) */
    check_qgemm(2, (int64_t[]){1, 672}, 1, true, 51, 1);
    check_qgemm(2, (int64_t[]){5, 3}, 2, true, 52, 1);
    check_qgemm(2, (int64_t[]){30, 33}, 7, false, 53, 1);  /* rows over the threads */
    check_qgemm(2, (int64_t[]){300, 33}, 7, false, 58, 1); /* many rows: the GEMM */
    check_qgemm(3, (int64_t[]){2, 3, 4}, 8, true, 54, 1);
    check_qgemm(2, (int64_t[]){1, 4096}, 1, true, 55, 1);  /* a long row: int32 range */
    check_qgemm(2, (int64_t[]){2, 300}, 5, true, 56, 0.3); /* narrow and pruned */
}

/* A head of one output reads its plain W in place: the session holds W's
 * bytes and a few per-channel words, not a 16-lane panel (16 x K bytes). */
Test(qgemm, narrow_w_is_read_in_place) {
    int64_t K = 672;
    gemm_op_case c = {.ndim = 2, .adims = {1, K}, .N = 1, .bias = true, .qa = k_acts[1]};
    q8t_rng r = q8t_seed(57);
    c.a = rand_i8(&r, K, -128);
    c.w = rand_i8(&r, K, -127);
    c.b = rand_bias(&r, 1);
    c.sa = 0.02f;
    c.sw = rand_scales(&r, 1, 0.001f, 0.01f);
    for (int own = 0; own < 2; own++) {
        size_t held = held_weights(qgemm_build(&c, NULL), c.a, own);
        cr_assert_leq(held, (size_t)K + 256, "%s session: %zu weight bytes for a %lld-byte W",
                      own ? "owning" : "sharing", held, (long long)K);
    }
    free(c.a);
    free(c.w);
    free(c.b);
    free(c.sw);
}

/* Sparse W: where the CPU keeps it compressed (owning sessions), the GEMV
 * on the form for one row, lanes panels made from it for more. */
Test(qgemm, sparse_weights) {
    check_qgemm(2, (int64_t[]){13, 600}, 70, true, 43, 0.3);
    check_qgemm(3, (int64_t[]){2, 5, 300}, 130, false, 44, 0.2);
    check_qgemm(2, (int64_t[]){1, 200}, 37, true, 37, 0.3);
    check_qgemm(1, (int64_t[]){64}, 9, false, 38, 0.5);
    check_qgemm(3, (int64_t[]){1, 1, 3136}, 20, true, 39, 0.05);
    check_qgemm(2, (int64_t[]){1, 65}, 16, true, 40, 0);  /* all zero */
    check_qgemm(2, (int64_t[]){4, 130}, 33, true, 41, 0.4);
    check_qgemm(2, (int64_t[]){0, 70}, 8, true, 42, 0.3); /* no rows */
}

/* ---- q8.QMatMul ---------------------------------------------------------- */

typedef struct matmul_case {
    int ra, rb;
    int64_t ad[4], bd[4];
    qattrs qa;
    int8_t *a, *b;
    float sa, sb;
} matmul_case;

static q8_graph *qmatmul_build(const void *ctx, const char *path) {
    const matmul_case *c = ctx;
    qin ins[2] = {{"a", Q8_I8, c->ra, {0}, NULL, &c->sa, 1},
                  {"b", Q8_I8, c->rb, {0}, NULL, &c->sb, 1}};
    memcpy(ins[0].dims, c->ad, sizeof c->ad);
    memcpy(ins[1].dims, c->bd, sizeof c->bd);
    return qgraph("QMatMul", "q8", ins, 2, &c->qa, path);
}

static void check_qmatmul(int ra, const int64_t *ad, int rb, const int64_t *bd, uint64_t seed) {
    matmul_case c = {.ra = ra, .rb = rb};
    memcpy(c.ad, ad, sizeof(int64_t) * (size_t)ra);
    memcpy(c.bd, bd, sizeof(int64_t) * (size_t)rb);
    q8t_rng g = q8t_seed(seed);
    int64_t M = ad[ra - 2], K = ad[ra - 1], N = bd[rb - 1];
    /* broadcast batch dims, right-aligned */
    int nb = (ra > rb ? ra : rb) - 2;
    int64_t od[6], na = 1, nbb = 1, batches = 1;
    for (int i = 0; i < ra - 2; i++) na *= ad[i];
    for (int i = 0; i < rb - 2; i++) nbb *= bd[i];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - (ra - 2)), ib = i - (nb - (rb - 2));
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        od[i] = da == 1 ? db : da;
        batches *= od[i];
    }
    od[nb] = M;
    od[nb + 1] = N;
    c.a = rand_i8(&g, na * M * K, -128);
    c.b = rand_i8(&g, nbb * K * N, -128);
    c.sa = q8t_uniform(&g, 0.01f, 0.1f);
    c.sb = q8t_uniform(&g, 0.01f, 0.1f);
    int64_t *acc = malloc(sizeof(int64_t) * (size_t)(batches * M * N + 1));
    for (int64_t bt = 0; bt < batches; bt++) {
        /* unravel bt over od, then index A and B (size-1 dims broadcast) */
        int64_t ia = 0, ib = 0, r = bt, sa = 1, sb = 1;
        for (int i = nb - 1; i >= 0; i--) {
            int64_t idx = r % od[i];
            r /= od[i];
            int xa = i - (nb - (ra - 2)), xb = i - (nb - (rb - 2));
            if (xa >= 0) {
                ia += (ad[xa] == 1 ? 0 : idx) * sa;
                sa *= ad[xa];
            }
            if (xb >= 0) {
                ib += (bd[xb] == 1 ? 0 : idx) * sb;
                sb *= bd[xb];
            }
        }
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                int64_t s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (int64_t)c.a[(ia * M + m) * K + k] * c.b[(ib * K + k) * N + n];
                acc[(bt * M + m) * N + n] = s;
            }
    }
    void *want = malloc(sizeof(float) * (size_t)(batches * M * N + 1));
    const void *in[2] = {c.a, c.b};
    for (int a = 0; a < N_ACTS; a++) {
        c.qa = k_acts[a];
        for (int64_t i = 0; i < batches * M * N; i++)
            spec_out(want, i, acc[i], (double)c.sa * c.sb, &c.qa);
        char what[128];
        snprintf(what, sizeof what, "QMatMul M=%lld K=%lld N=%lld batches %lld act %s %s",
                 (long long)M, (long long)K, (long long)N, (long long)batches,
                 c.qa.act ? c.qa.act : "none", c.qa.y_scale > 0 ? "int8" : "float32");
        check_op(qmatmul_build, &c, in, c.qa.y_scale > 0 ? Q8_I8 : Q8_F32, od, nb + 2, want,
                 what);
    }
    free(want);
    free(acc);
    free(c.a);
    free(c.b);
}

Test(qmatmul, broadcasting_and_activations) {
    check_qmatmul(2, (int64_t[]){13, 17}, 2, (int64_t[]){17, 9}, 41);
    check_qmatmul(4, (int64_t[]){2, 1, 5, 33}, 3, (int64_t[]){3, 33, 20}, 42);
    check_qmatmul(3, (int64_t[]){3, 7, 64}, 2, (int64_t[]){64, 65}, 43);
    check_qmatmul(2, (int64_t[]){1, 255}, 3, (int64_t[]){2, 255, 3}, 44);
}

/* ---- QuantizeLinear / DequantizeLinear ---------------------------------- */

typedef struct qdq_case {
    const char *op;
    int opset;
    q8_dtype xt, zt;        /* zt Q8_UNDEFINED: no zero point */
    int ndim;
    int64_t dims[4];
    int64_t nscale;         /* 1: per tensor (scalar), else per axis (1-D) */
    int64_t axis;           /* attribute, when per axis */
    bool const_x;
    float *scale;
    void *zp;
    void *x;
} qdq_case;

static q8_graph *qdq_build(const void *ctx, const char *path) {
    const qdq_case *c = ctx;
    qin ins[3] = {{"x", c->xt, c->ndim, {0}, c->const_x ? c->x : NULL, NULL, 0},
                  {"s", Q8_F32, c->nscale > 1, {c->nscale}, c->scale, NULL, 0},
                  {"z", c->zt, c->nscale > 1, {c->nscale}, c->zp, NULL, 0}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    q8_graph *g = qgraph(c->op, "", ins, c->zt ? 3 : 2, NULL, path);
    g->opset = c->opset;
    if (c->nscale > 1) q8t_attr_int(g, "axis", c->axis);
    return g;
}

static int64_t qdq_numel(const qdq_case *c) {
    int64_t n = 1;
    for (int i = 0; i < c->ndim; i++) n *= c->dims[i];
    return n;
}

/* Channel of element i (per axis) or 0. */
static int64_t qdq_chan(const qdq_case *c, int64_t i) {
    if (c->nscale == 1) return 0;
    int ax = (int)(c->axis < 0 ? c->axis + c->ndim : c->axis);
    int64_t inner = 1;
    for (int d = ax + 1; d < c->ndim; d++) inner *= c->dims[d];
    return i / inner % c->dims[ax];
}

static int64_t zp_at(const qdq_case *c, int64_t ch) {
    if (!c->zt) return 0;
    return c->zt == Q8_I8 ? ((const int8_t *)c->zp)[ch] : c->zt == Q8_U8
                                                            ? ((const uint8_t *)c->zp)[ch]
                                                            : ((const int32_t *)c->zp)[ch];
}

static void check_quantize(qdq_case c, uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    int64_t n = qdq_numel(&c);
    c.op = "QuantizeLinear";
    c.scale = rand_scales(&g, c.nscale, 0.02f, 0.1f);
    c.scale[0] = 0.5f; /* halfway cases below are exact */
    c.zp = malloc((size_t)c.nscale & 0xffff);
    for (int64_t i = 0; i < c.nscale; i++)
        ((uint8_t *)c.zp)[i] = c.zt == Q8_I8 ? (uint8_t)(int8_t)(q8t_next(&g) % 21 - 10)
                                             : (uint8_t)(120 + q8t_next(&g) % 16);
    c.x = malloc(sizeof(float) * (size_t)n);
    static const float special[] = {0.25f, 0.75f, -0.25f, -0.75f, 1.25f, -1.25f, 2.75f, 1e6f,
                                    -1e6f, 63.25f, -64.25f, 0.0f, -0.0f, 127.75f};
    for (int64_t i = 0; i < n; i++) {
        float v = q8t_uniform(&g, -8, 8);
        if (c.xt == Q8_I32) ((int32_t *)c.x)[i] = (int32_t)(v * 40);
        else ((float *)c.x)[i] = i % 3 == 0 ? special[i / 3 % 14] : v;
    }
    bool i8 = c.zt == Q8_I8;
    uint8_t *want = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = qdq_chan(&c, i);
        float xv = c.xt == Q8_I32 ? (float)((int32_t *)c.x)[i] : ((float *)c.x)[i];
        double q = nearbyint((double)(xv / c.scale[ch])) + (double)zp_at(&c, ch);
        double lo = i8 ? -128 : 0, hi = i8 ? 127 : 255;
        q = q < lo ? lo : q > hi ? hi : q;
        want[i] = i8 ? (uint8_t)(int8_t)q : (uint8_t)q;
    }
    const void *in[1] = {c.x};
    char what[96];
    snprintf(what, sizeof what, "QuantizeLinear opset %d %s x, %s, %lld scales", c.opset,
             q8_dtype_name(c.xt), c.zt ? q8_dtype_name(c.zt) : "no zero point",
             (long long)c.nscale);
    check_op_paths(qdq_build, &c, c.const_x ? NULL : in, i8 ? Q8_I8 : Q8_U8, c.dims, c.ndim, want,
                   what, false);
    /* the output's quantization parameters */
    q8_graph *gr = qdq_build(&c, NULL);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(gr, NULL, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *y = gr->tensors[gr->outputs[0]];
    bool uniform = true;
    for (int64_t i = 1; i < c.nscale; i++) uniform &= zp_at(&c, i) == zp_at(&c, 0);
    if (uniform) {
        cr_assert_eq(y->q.n, c.nscale, "%s: output has %d scales", what, y->q.n);
        int ax = (int)(c.axis < 0 ? c.axis + c.ndim : c.axis);
        cr_assert_eq(y->q.axis, c.nscale > 1 ? ax : -1);
        for (int64_t i = 0; i < c.nscale; i++) cr_assert_eq(y->q.scale[i], c.scale[i]);
        cr_assert_eq(y->q.zero_point, zp_at(&c, 0));
    } else {
        cr_assert_eq(y->q.n, 0, "%s: mixed zero points give no parameters", what);
    }
    q8_graph_free(gr);
    free(want);
    free(c.x);
    free(c.zp);
    free(c.scale);
}

Test(quantizelinear, per_tensor_per_axis_halfway_saturation) {
    check_quantize((qdq_case){.opset = 13, .xt = Q8_F32, .zt = Q8_I8, .ndim = 3,
                              .dims = {2, 3, 7}, .nscale = 1}, 51);
    check_quantize((qdq_case){.opset = 13, .xt = Q8_F32, .zt = Q8_U8, .ndim = 3,
                              .dims = {2, 3, 7}, .nscale = 1}, 52);
    check_quantize((qdq_case){.opset = 10, .xt = Q8_F32, .ndim = 2, .dims = {13, 9},
                              .nscale = 1}, 53); /* uint8, no zero point */
    check_quantize((qdq_case){.opset = 13, .xt = Q8_F32, .zt = Q8_I8, .ndim = 4,
                              .dims = {2, 5, 3, 4}, .nscale = 5, .axis = 1}, 54);
    check_quantize((qdq_case){.opset = 13, .xt = Q8_F32, .zt = Q8_U8, .ndim = 3,
                              .dims = {3, 2, 6}, .nscale = 6, .axis = -1}, 55);
    check_quantize((qdq_case){.opset = 17, .xt = Q8_I32, .zt = Q8_I8, .ndim = 2,
                              .dims = {4, 33}, .nscale = 1}, 56);
    check_quantize((qdq_case){.opset = 13, .xt = Q8_F32, .zt = Q8_I8, .ndim = 2,
                              .dims = {6, 5}, .nscale = 6, .axis = 0, .const_x = true}, 57);
}

static void check_dequantize(qdq_case c, uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    int64_t n = qdq_numel(&c);
    c.op = "DequantizeLinear";
    c.scale = rand_scales(&g, c.nscale, 0.001f, 0.1f);
    size_t es = q8_dtype_size(c.xt);
    c.zp = malloc(es * (size_t)c.nscale);
    c.x = malloc(es * (size_t)n);
    for (int64_t i = 0; i < c.nscale; i++) {
        int32_t v = (int32_t)(q8t_next(&g) % 41) - 20 + (c.xt == Q8_U8 ? 128 : 0);
        if (c.xt == Q8_I32) ((int32_t *)c.zp)[i] = v * 1000;
        else ((uint8_t *)c.zp)[i] = (uint8_t)v;
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = q8t_next(&g);
        if (c.xt == Q8_I32) ((int32_t *)c.x)[i] = (int32_t)(r >> 32) >> (r % 24);
        else ((uint8_t *)c.x)[i] = (uint8_t)(r >> 56);
    }
    float *want = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = qdq_chan(&c, i), xv;
        xv = c.xt == Q8_I8 ? ((int8_t *)c.x)[i] : c.xt == Q8_U8 ? ((uint8_t *)c.x)[i]
                                                                 : ((int32_t *)c.x)[i];
        want[i] = (float)(xv - zp_at(&c, ch)) * c.scale[ch];
    }
    const void *in[1] = {c.x};
    char what[96];
    snprintf(what, sizeof what, "DequantizeLinear %s x, %s, %lld scales", q8_dtype_name(c.xt),
             c.zt ? "zero point" : "no zero point", (long long)c.nscale);
    check_op_paths(qdq_build, &c, in, Q8_F32, c.dims, c.ndim, want, what, false);
    free(want);
    free(c.x);
    free(c.zp);
    free(c.scale);
}

Test(dequantizelinear, types_and_axes) {
    check_dequantize((qdq_case){.opset = 13, .xt = Q8_I8, .zt = Q8_I8, .ndim = 3,
                                .dims = {2, 3, 7}, .nscale = 1}, 61);
    check_dequantize((qdq_case){.opset = 10, .xt = Q8_U8, .zt = Q8_U8, .ndim = 2,
                                .dims = {9, 13}, .nscale = 1}, 62);
    check_dequantize((qdq_case){.opset = 13, .xt = Q8_I8, .ndim = 1, .dims = {100},
                                .nscale = 1}, 63);
    check_dequantize((qdq_case){.opset = 13, .xt = Q8_I32, .ndim = 2, .dims = {5, 17},
                                .nscale = 1}, 64);
    check_dequantize((qdq_case){.opset = 13, .xt = Q8_I32, .zt = Q8_I32, .ndim = 2,
                                .dims = {5, 17}, .nscale = 17, .axis = 1}, 65);
    check_dequantize((qdq_case){.opset = 13, .xt = Q8_U8, .zt = Q8_U8, .ndim = 4,
                                .dims = {2, 4, 3, 3}, .nscale = 4, .axis = -3}, 66);
}

/* ---- errors --------------------------------------------------------------- */

static const float k_s1 = 0.05f;
static const float k_s4[4] = {0.01f, 0.02f, 0.03f, 0.04f};
static const int8_t k_w[4 * 3 * 2 * 2] = {1, 2, 3};
static const float k_wf[4 * 3 * 2 * 2] = {1, 2, 3};
static const int32_t k_b[5] = {1, 2, 3, 4, 5};
static const float k_bf[4] = {1, 2, 3, 4};

static q8_graph *conv_graph(qin x, qin w, const qin *b) {
    qin ins[3] = {x, w, b ? *b : (qin){0}};
    return qgraph("QConv", "q8", ins, b ? 3 : 2, NULL, NULL);
}

Test(errors, qconv_messages) {
    qin x = {"x", Q8_I8, 4, {1, 3, 5, 5}, NULL, &k_s1, 1};
    qin w = {"w", Q8_I8, 4, {4, 3, 2, 2}, k_w, k_s4, 4};
    qin wf = {"w", Q8_F32, 4, {4, 3, 2, 2}, k_wf, k_s4, 4};
    qin wnos = {"w", Q8_I8, 4, {4, 3, 2, 2}, k_w, NULL, 0};
    qin wone = {"w", Q8_I8, 4, {4, 3, 2, 2}, k_w, &k_s1, 1};
    qin wvar = {"w", Q8_I8, 4, {4, 3, 2, 2}, NULL, k_s4, 4};
    qin xnos = {"x", Q8_I8, 4, {1, 3, 5, 5}, NULL, NULL, 0};
    qin xf = {"x", Q8_F32, 4, {1, 3, 5, 5}, NULL, NULL, 0};
    qin b5 = {"b", Q8_I32, 1, {5}, k_b, NULL, 0};
    qin bf = {"b", Q8_F32, 1, {4}, k_bf, NULL, 0};
    check_fails(conv_graph(x, wf, NULL), "W 'w' is float32, expected int8", "float W");
    check_fails(conv_graph(x, wnos, NULL), "needs per-channel scales (4 on axis 0), it has 0",
                "W without scales");
    check_fails(conv_graph(x, wone, NULL), "needs per-channel scales", "W with one scale");
    check_fails(conv_graph(x, wvar, NULL), "must be a constant", "W not constant");
    check_fails(conv_graph(xnos, w, NULL), "X 'x' has no quantization scale", "X without scale");
    check_fails(conv_graph(xf, w, NULL), "X 'x' is float32, expected int8", "float X");
    check_fails(conv_graph(x, w, &b5), "B 'b' has 5 values, expected 4", "bias length");
    check_fails(conv_graph(x, w, &bf), "B 'b' is float32, expected int32", "float bias");
    q8_graph *g = conv_graph(x, w, NULL);
    q8t_attr_str(g, "_act", "Gelu");
    check_fails(g, "fused activation 'Gelu' is not supported", "unknown activation");
    g = conv_graph(x, w, NULL);
    q8t_attr_float(g, "y_scale", -1.0f);
    check_fails(g, "y_scale is -1, must be positive", "negative y_scale");
    g = conv_graph(x, w, NULL);
    q8t_attr_int(g, "group", 2);
    check_fails(g, "group 2 must divide", "bad group");
    g = conv_graph(x, w, NULL);
    q8t_attr_ints(g, "strides", (int64_t[]){1}, 1);
    check_fails(g, "strides has 1 values, expected 2", "strides length");
    g = conv_graph(x, w, NULL);
    q8t_attr_ints(g, "pads", (int64_t[]){0, 0, -1, 0}, 4);
    check_fails(g, "pads[2] is -1", "negative pad");
    g = conv_graph(x, w, NULL);
    q8t_attr_str(g, "auto_pad", "SAME");
    check_fails(g, "auto_pad 'SAME' is not one of", "bad auto_pad");
    g = conv_graph(x, w, NULL);
    q8t_attr_str(g, "_igemm_path", "sse9");
    check_session_fails(g, "unknown _igemm_path 'sse9'", "bad path");
    qin xs = {"x", Q8_I8, 4, {1, 3, 1, 5}, NULL, &k_s1, 1};
    check_fails(conv_graph(xs, w, NULL), "smaller than the dilated kernel", "input too small");
}

Test(errors, gemm_matmul_qdq_messages) {
    static const int8_t w[1] = {0};
    qin a = {"a", Q8_I8, 2, {3, 5}, NULL, &k_s1, 1};
    qin wk = {"w", Q8_I8, 2, {4, 6}, k_w, k_s4, 4};
    qin ins[2] = {a, wk};
    check_fails(qgraph("QGemm", "q8", ins, 2, NULL, NULL), "has 5 values per row, W has K = 6",
                "QGemm K");
    /* K too long for int32 sums (the check comes before W is read) */
    int8_t *big = calloc(Q8_IG_MAX_K + 1, 1);
    qin along = {"a", Q8_I8, 2, {1, Q8_IG_MAX_K + 1}, NULL, &k_s1, 1};
    qin wlong = {"w", Q8_I8, 2, {1, Q8_IG_MAX_K + 1}, big, &k_s1, 1};
    qin ins2[2] = {along, wlong};
    check_fails(qgraph("QGemm", "q8", ins2, 2, NULL, NULL), "too long for int32", "long K");
    free(big);
    qin b = {"b", Q8_I8, 2, {6, 2}, NULL, &k_s1, 1};
    qin ins3[2] = {a, b};
    check_fails(qgraph("QMatMul", "q8", ins3, 2, NULL, NULL), "A has K = 5, B has 6 rows",
                "QMatMul K");
    qin bnos = {"b", Q8_I8, 2, {5, 2}, NULL, NULL, 0};
    qin ins4[2] = {a, bnos};
    check_fails(qgraph("QMatMul", "q8", ins4, 2, NULL, NULL), "B 'b' has no quantization scale",
                "QMatMul B scale");
    (void)w;
    /* QuantizeLinear: non-constant scale, per-axis length, opset */
    float sc[3] = {0.1f, 0.2f, 0.3f};
    qin qx = {"x", Q8_F32, 2, {2, 4}, NULL, NULL, 0};
    qin qs_var = {"s", Q8_F32, 0, {0}, NULL, NULL, 0};
    qin qs3 = {"s", Q8_F32, 1, {3}, sc, NULL, 0};
    qin q1[2] = {qx, qs_var};
    q8_graph *gv = qgraph("QuantizeLinear", "", q1, 2, NULL, NULL);
    q8_graph_tensor(gv, gv->nodes[0]->inputs[1])->dtype = Q8_F64;
    check_fails(gv, "scale 's' is float64, only float32", "float64 scale");
    qin q2[2] = {qx, qs3};
    check_fails(qgraph("QuantizeLinear", "", q2, 2, NULL, NULL), "axis 1 of x has 4",
                "per-axis length");
    q8_graph *g = qgraph("QuantizeLinear", "", q2, 2, NULL, NULL);
    g->opset = 10;
    check_fails(g, "per-axis scales need opset 13", "per-axis at opset 10");
    float zero = 0;
    qin qs0 = {"s", Q8_F32, 0, {0}, &zero, NULL, 0};
    qin q3[2] = {qx, qs0};
    check_fails(qgraph("QuantizeLinear", "", q3, 2, NULL, NULL), "must be positive",
                "zero scale");
    qin dx = {"x", Q8_F32, 2, {2, 4}, NULL, NULL, 0};
    qin d1[2] = {dx, {"s", Q8_F32, 0, {0}, &k_s1, NULL, 0}};
    check_fails(qgraph("DequantizeLinear", "", d1, 2, NULL, NULL), "expected int8, uint8 or int32",
                "float DequantizeLinear");
}

/* ---- int8 through other ops ---------------------------------------------- */

/* x -> QuantizeLinear -> (pass-through op) -> Identity -> q8.QGemm: the
 * int8 tensor keeps QuantizeLinear's scale through the ops in between. */
static void check_passthrough(const char *mid, uint64_t seed) {
    q8t_rng r = q8t_seed(seed);
    float x[24], s = 0.03f, sw[5];
    int8_t w[5 * 4], zp = 0;
    q8t_fill(&r, x, 24, -3, 3);
    for (int i = 0; i < 20; i++) w[i] = rnd_i8(&r) | 1;
    for (int i = 0; i < 5; i++) sw[i] = q8t_uniform(&r, 0.01f, 0.02f);
    int64_t shape[2] = {6, 4};
    q8_graph *g = q8_graph_new();
    int tx = q8_graph_add_tensor(g, "x", NULL), ts = q8_graph_add_tensor(g, "s", NULL);
    int tz = q8_graph_add_tensor(g, "z", NULL), tq = q8_graph_add_tensor(g, "q", NULL);
    int tsh = q8_graph_add_tensor(g, "shape", NULL), tm = q8_graph_add_tensor(g, "m", NULL);
    int ti = q8_graph_add_tensor(g, "i", NULL), tw = q8_graph_add_tensor(g, "w", NULL);
    int ty = q8_graph_add_tensor(g, "y", NULL);
    q8_tensor_set_shape(g->tensors[tx], Q8_F32, (int64_t[]){2, 12}, 2);
    struct { int t; q8_dtype dt; int nd; int64_t d; const void *src; } consts[] = {
        {ts, Q8_F32, 0, 0, &s}, {tz, Q8_I8, 0, 0, &zp}, {tsh, Q8_I64, 1, 2, shape},
        {tw, Q8_I8, 2, 5, w}};
    for (int k = 0; k < 4; k++) {
        q8_tensor *t = g->tensors[consts[k].t];
        int64_t dims[2] = {consts[k].d, 4};
        q8_tensor_set_shape(t, consts[k].dt, dims, consts[k].nd);
        cr_assert_eq(q8_tensor_alloc_data(t, NULL), Q8_OK);
        memcpy(t->data, consts[k].src, q8_tensor_nbytes(t));
    }
    set_q(g->tensors[tw], sw, 5, 0);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = tx;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = ty;
    int n0 = q8_graph_add_node(g, "quant", "QuantizeLinear");
    q8_node_set_io(g->nodes[n0], (int[]){tx, ts, tz}, 3, &tq, 1, NULL);
    int n1 = q8_graph_add_node(g, "mid", mid);
    if (strcmp(mid, "Reshape") == 0)
        q8_node_set_io(g->nodes[n1], (int[]){tq, tsh}, 2, &tm, 1, NULL);
    else q8_node_set_io(g->nodes[n1], &tq, 1, &tm, 1, NULL);
    if (strcmp(mid, "Transpose") == 0) {
        q8_attr *a = q8_node_set_attr(g->nodes[n1], "perm", Q8_ATTR_INTS);
        a->n = 2;
        a->ints = malloc(2 * sizeof(int64_t));
        a->ints[0] = 1, a->ints[1] = 0;
    }
    int n2 = q8_graph_add_node(g, "id", "Identity");
    q8_node_set_io(g->nodes[n2], &tm, 1, &ti, 1, NULL);
    int n3 = q8_graph_add_node(g, "gemm", "QGemm");
    free(g->nodes[n3]->domain);
    g->nodes[n3]->domain = q8_strdup("q8");
    q8_node_set_io(g->nodes[n3], (int[]){ti, tw}, 2, &ty, 1, NULL);
    /* Reshape: [2,12] -> [6,4], K = 4; Transpose: [12,2], K = 2 */
    bool tr = strcmp(mid, "Transpose") == 0;
    if (tr) {
        q8_tensor *t = g->tensors[tw];
        t->dims[1] = 2; /* W [5, 2] */
    }
    int64_t M = tr ? 12 : 6, K = tr ? 2 : 4;
    int8_t q[24];
    for (int i = 0; i < 24; i++) {
        double v = nearbyint((double)(x[i] / s));
        q[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
    float want[12 * 5];
    for (int64_t m = 0; m < M; m++)
        for (int n = 0; n < 5; n++) {
            int64_t acc = 0;
            for (int64_t k = 0; k < K; k++) {
                int8_t a = tr ? q[k * 12 + m] : q[m * K + k];
                acc += (int64_t)a * w[n * K + k];
            }
            want[m * 5 + n] = (float)acc * (float)((double)s * sw[n]);
        }
    const void *in[1] = {x};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(g, in, 1, out, info, 1, &err), Q8_OK, "%s: %s", mid, err.msg);
    cr_assert_eq(info[0].dims[0], M);
    for (int64_t i = 0; i < M * 5; i++)
        cr_assert(((float *)out[0])[i] == want[i], "%s: y[%lld] = %g, want %g", mid,
                  (long long)i, ((float *)out[0])[i], want[i]);
    free(out[0]);
}

Test(passthrough, int8_keeps_its_scale) {
    check_passthrough("Reshape", 71);
    check_passthrough("Transpose", 72);
}

/* ---- ONNX integer ops: MatMulInteger, QLinearMatMul, ConvInteger,
 *      QLinearConv, DynamicQuantizeLinear ---------------------------------- */

static int32_t rnd_byte(q8t_rng *g, bool u8) {
    uint8_t b = (uint8_t)(q8t_next(g) >> 56);
    return u8 ? (int32_t)b : (int32_t)(int8_t)b;
}

static void *bytes_of(const int32_t *v, int64_t n) {
    uint8_t *b = malloc((size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) b[i] = (uint8_t)v[i];
    return b;
}

/* requantized QLinear output, the multiplier in float as in ONNX Runtime */
static int32_t ql_out(int64_t acc, float sa, float sb, float sy, int32_t zy, bool u8) {
    float m = sa * sb / sy;
    double q = nearbyint((double)((float)acc * m)) + zy;
    double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    return (int32_t)(q < lo ? lo : q > hi ? hi : q);
}

typedef struct imm_case {
    bool qlinear, a_u8, b_u8, y_u8;
    int ra, rb;
    int64_t ad[4], bd[4];
    int64_t nza, nzb;       /* zero point counts: 0 (absent), 1, M or N */
    bool za_runtime;        /* A's zero point (one) is a graph input: given at run time */
    void *a, *b, *za, *zb;
    float *sa, *sb, sy;
    int64_t nsa, nsb;
    uint8_t zy;
} imm_case;

static q8_graph *imm_build(const void *ctx, const char *path) {
    const imm_case *c = ctx;
    q8_dtype at = c->a_u8 ? Q8_U8 : Q8_I8, bt = c->b_u8 ? Q8_U8 : Q8_I8;
    qin a = {"a", at, c->ra, {0}, NULL, NULL, 0}, b = {"b", bt, c->rb, {0}, NULL, NULL, 0};
    memcpy(a.dims, c->ad, sizeof c->ad);
    memcpy(b.dims, c->bd, sizeof c->bd);
    qin za = {c->nza ? "za" : NULL, at, 1, {c->nza}, c->za_runtime ? NULL : c->za, NULL, 0};
    qin zb = {c->nzb ? "zb" : NULL, bt, 1, {c->nzb}, c->zb, NULL, 0};
    if (!c->qlinear) {
        qin ins[4] = {a, b, za, zb};
        return qgraph("MatMulInteger", "", ins, 4, NULL, path);
    }
    qin ins[8] = {a, {"sa", Q8_F32, 1, {c->nsa}, c->sa, NULL, 0}, za, b,
                  {"sb", Q8_F32, 1, {c->nsb}, c->sb, NULL, 0}, zb,
                  {"sy", Q8_F32, 0, {0}, &c->sy, NULL, 0},
                  {"zy", c->y_u8 ? Q8_U8 : Q8_I8, 0, {0}, &c->zy, NULL, 0}};
    return qgraph("QLinearMatMul", "", ins, 8, NULL, path);
}

static void check_imm(imm_case c, uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    int ra = c.ra, rb = c.rb;
    int64_t M = c.ad[ra - 2], K = c.ad[ra - 1], N = c.bd[rb - 1];
    int nb = (ra > rb ? ra : rb) - 2;
    int64_t od[6], na = 1, nbb = 1, batches = 1;
    for (int i = 0; i < ra - 2; i++) na *= c.ad[i];
    for (int i = 0; i < rb - 2; i++) nbb *= c.bd[i];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - (ra - 2)), ib = i - (nb - (rb - 2));
        int64_t da = ia >= 0 ? c.ad[ia] : 1, db = ib >= 0 ? c.bd[ib] : 1;
        od[i] = da == 1 ? db : da;
        batches *= od[i];
    }
    od[nb] = M;
    od[nb + 1] = N;
    int32_t *av = malloc(sizeof(int32_t) * (size_t)(na * M * K));
    int32_t *bv = malloc(sizeof(int32_t) * (size_t)(nbb * K * N));
    int32_t zav[1024], zbv[1024];
    for (int64_t i = 0; i < na * M * K; i++) av[i] = rnd_byte(&g, c.a_u8);
    for (int64_t i = 0; i < nbb * K * N; i++) bv[i] = rnd_byte(&g, c.b_u8);
    for (int64_t i = 0; i < 1024; i++) {
        zav[i] = c.nza ? rnd_byte(&g, c.a_u8) : 0;
        zbv[i] = c.nzb ? rnd_byte(&g, c.b_u8) : 0;
    }
    c.a = bytes_of(av, na * M * K);
    c.b = bytes_of(bv, nbb * K * N);
    c.za = bytes_of(zav, 1024);
    c.zb = bytes_of(zbv, 1024);
    c.sa = rand_scales(&g, c.nsa, 0.01f, 0.05f);
    c.sb = rand_scales(&g, c.nsb, 0.01f, 0.05f);
    c.sy = q8t_uniform(&g, 0.5f, 4.0f);
    c.zy = (uint8_t)(q8t_next(&g) >> 56);
    size_t es = c.qlinear ? 1 : 4;
    void *want = malloc(es * (size_t)(batches * M * N));
    for (int64_t bt = 0; bt < batches; bt++) {
        int64_t ia = 0, ib = 0, r = bt, sa = 1, sb = 1;
        for (int i = nb - 1; i >= 0; i--) {
            int64_t idx = r % od[i];
            r /= od[i];
            int xa = i - (nb - (ra - 2)), xb = i - (nb - (rb - 2));
            if (xa >= 0) {
                ia += (c.ad[xa] == 1 ? 0 : idx) * sa;
                sa *= c.ad[xa];
            }
            if (xb >= 0) {
                ib += (c.bd[xb] == 1 ? 0 : idx) * sb;
                sb *= c.bd[xb];
            }
        }
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                int64_t s = 0, za = zav[c.nza > 1 ? m : 0], zb = zbv[c.nzb > 1 ? n : 0];
                for (int64_t k = 0; k < K; k++)
                    s += (av[(ia * M + m) * K + k] - za) * (bv[(ib * K + k) * N + n] - zb);
                int64_t o = (bt * M + m) * N + n;
                if (!c.qlinear) ((int32_t *)want)[o] = (int32_t)s;
                else
                    ((uint8_t *)want)[o] = (uint8_t)ql_out(s, c.sa[c.nsa > 1 ? m : 0],
                                                         c.sb[c.nsb > 1 ? n : 0], c.sy,
                                                         c.y_u8 ? c.zy : (int8_t)c.zy, c.y_u8);
            }
    }
    /* graph inputs in order: A, B (see the builder), then a run-time zero point */
    const void *in[3] = {c.a, c.b, c.za};
    char what[160];
    snprintf(what, sizeof what, "%s %s x %s, M=%lld K=%lld N=%lld, zp counts %lld/%lld%s",
             c.qlinear ? "QLinearMatMul" : "MatMulInteger", c.a_u8 ? "u8" : "s8",
             c.b_u8 ? "u8" : "s8", (long long)M, (long long)K, (long long)N, (long long)c.nza,
             (long long)c.nzb, c.za_runtime ? " (A's at run time)" : "");
    q8_dtype yt = !c.qlinear ? Q8_I32 : c.y_u8 ? Q8_U8 : Q8_I8;
    check_op(imm_build, &c, in, yt, od, nb + 2, want, what);
    free(want);
    free(av);
    free(bv);
    free(c.a);
    free(c.b);
    free(c.za);
    free(c.zb);
    free(c.sa);
    free(c.sb);
}

Test(matmulinteger, types_zero_points_broadcasting) {
    check_imm((imm_case){.a_u8 = true, .b_u8 = true, .ra = 2, .ad = {13, 17}, .rb = 2,
                         .bd = {17, 9}, .nza = 1, .nzb = 1}, 81);
    check_imm((imm_case){.a_u8 = true, .b_u8 = false, .ra = 2, .ad = {13, 65}, .rb = 2,
                         .bd = {65, 33}, .nza = 13, .nzb = 33}, 82);
    check_imm((imm_case){.a_u8 = false, .b_u8 = true, .ra = 3, .ad = {2, 5, 64}, .rb = 2,
                         .bd = {64, 20}, .nza = 0, .nzb = 20}, 83);
    check_imm((imm_case){.a_u8 = false, .b_u8 = false, .ra = 4, .ad = {2, 1, 3, 7}, .rb = 3,
                         .bd = {3, 7, 5}, .nza = 1, .nzb = 0}, 84);
    check_imm((imm_case){.a_u8 = true, .b_u8 = true, .ra = 2, .ad = {1, 1000}, .rb = 2,
                         .bd = {1000, 17}, .nza = 1, .nzb = 17}, 85);
}

/* ONNX Runtime's dynamic quantization: A's zero point comes from
 * DynamicQuantizeLinear, one value known only at run time. */
Test(matmulinteger, zero_point_of_a_at_run_time) {
    check_imm((imm_case){.a_u8 = true, .b_u8 = true, .ra = 2, .ad = {13, 17}, .rb = 2,
                         .bd = {17, 9}, .nza = 1, .nzb = 1, .za_runtime = true}, 86);
    check_imm((imm_case){.a_u8 = true, .b_u8 = false, .ra = 3, .ad = {2, 5, 64}, .rb = 2,
                         .bd = {64, 3}, .nza = 1, .nzb = 3, .za_runtime = true}, 87);
    check_imm((imm_case){.a_u8 = false, .b_u8 = true, .ra = 2, .ad = {1, 1000}, .rb = 2,
                         .bd = {1000, 17}, .nza = 1, .nzb = 0, .za_runtime = true}, 88);
}

Test(qlinearmatmul, requantized_outputs) {
    check_imm((imm_case){.qlinear = true, .a_u8 = true, .b_u8 = true, .y_u8 = true, .ra = 2,
                         .ad = {13, 17}, .rb = 2, .bd = {17, 9}, .nza = 1, .nzb = 1, .nsa = 1,
                         .nsb = 1}, 91);
    check_imm((imm_case){.qlinear = true, .a_u8 = true, .b_u8 = false, .y_u8 = false, .ra = 3,
                         .ad = {2, 6, 40}, .rb = 3, .bd = {2, 40, 19}, .nza = 6, .nzb = 19,
                         .nsa = 6, .nsb = 19}, 92);
    check_imm((imm_case){.qlinear = true, .a_u8 = false, .b_u8 = false, .y_u8 = true, .ra = 2,
                         .ad = {65, 64}, .rb = 2, .bd = {64, 65}, .nza = 1, .nzb = 1,
                         .nsa = 1, .nsb = 65}, 93);
}

typedef struct iconv_case {
    bool qlinear, x_u8, w_u8, y_u8, bias;
    int64_t N, C, H, W, M, KH, KW, s, d, group;
    int64_t pads[4];
    int64_t nzw;            /* 0, 1 or M */
    bool zx_runtime;        /* x's zero point is a graph input: given at run time */
    void *x, *w, *zx, *zw;
    int32_t *b;
    float xs, *ws, ys;
    uint8_t zy;
    int64_t OH, OW;
} iconv_case;

static q8_graph *iconv_build(const void *ctx, const char *path) {
    const iconv_case *c = ctx;
    q8_dtype xt = c->x_u8 ? Q8_U8 : Q8_I8, wt = c->w_u8 ? Q8_U8 : Q8_I8;
    qin x = {"x", xt, 4, {c->N, c->C, c->H, c->W}, NULL, NULL, 0};
    qin w = {"w", wt, 4, {c->M, c->C / c->group, c->KH, c->KW}, c->w, NULL, 0};
    qin zx = {"zx", xt, 0, {0}, c->zx_runtime ? NULL : c->zx, NULL, 0};
    qin zw = {c->nzw ? "zw" : NULL, wt, 1, {c->nzw}, c->zw, NULL, 0};
    q8_graph *g;
    if (!c->qlinear) {
        qin ins[4] = {x, w, zx, zw};
        g = qgraph("ConvInteger", "", ins, 4, NULL, path);
    } else {
        qin ins[9] = {x, {"xs", Q8_F32, 0, {0}, &c->xs, NULL, 0}, zx, w,
                      {"ws", Q8_F32, 1, {c->M}, c->ws, NULL, 0}, zw,
                      {"ys", Q8_F32, 0, {0}, &c->ys, NULL, 0},
                      {"zy", c->y_u8 ? Q8_U8 : Q8_I8, 0, {0}, &c->zy, NULL, 0},
                      {"b", Q8_I32, 1, {c->M}, c->b, NULL, 0}};
        g = qgraph("QLinearConv", "", ins, c->bias ? 9 : 8, NULL, path);
    }
    q8t_attr_ints(g, "strides", (int64_t[]){c->s, c->s}, 2);
    q8t_attr_ints(g, "dilations", (int64_t[]){c->d, c->d}, 2);
    q8t_attr_ints(g, "pads", c->pads, 4);
    q8t_attr_int(g, "group", c->group);
    return g;
}

static void check_iconv(iconv_case c, uint64_t seed) {
    q8t_rng g = q8t_seed(seed);
    int64_t Cg = c.C / c.group, Mg = c.M / c.group, nx = c.N * c.C * c.H * c.W;
    int64_t nw = c.M * Cg * c.KH * c.KW;
    c.OH = (c.H + c.pads[0] + c.pads[2] - ((c.KH - 1) * c.d + 1)) / c.s + 1;
    c.OW = (c.W + c.pads[1] + c.pads[3] - ((c.KW - 1) * c.d + 1)) / c.s + 1;
    int32_t *xv = malloc(sizeof(int32_t) * (size_t)nx), *wv = malloc(sizeof(int32_t) * (size_t)nw);
    int32_t zxv = rnd_byte(&g, c.x_u8), zwv[256];
    for (int64_t i = 0; i < nx; i++) xv[i] = rnd_byte(&g, c.x_u8);
    for (int64_t i = 0; i < nw; i++) wv[i] = rnd_byte(&g, c.w_u8);
    for (int i = 0; i < 256; i++) zwv[i] = c.nzw ? rnd_byte(&g, c.w_u8) : 0;
    c.x = bytes_of(xv, nx);
    c.w = bytes_of(wv, nw);
    c.zx = bytes_of(&zxv, 1);
    c.zw = bytes_of(zwv, 256);
    c.b = rand_bias(&g, c.M);
    c.xs = q8t_uniform(&g, 0.01f, 0.05f);
    c.ws = rand_scales(&g, c.M, 0.01f, 0.05f);
    c.ys = q8t_uniform(&g, 0.5f, 4.0f);
    c.zy = (uint8_t)(q8t_next(&g) >> 56);
    int64_t P = c.OH * c.OW, total = c.N * c.M * P;
    size_t es = c.qlinear ? 1 : 4;
    void *want = malloc(es * (size_t)total);
    for (int64_t n = 0; n < c.N; n++)
        for (int64_t m = 0; m < c.M; m++)
            for (int64_t oh = 0; oh < c.OH; oh++)
                for (int64_t ow = 0; ow < c.OW; ow++) {
                    int64_t s = c.qlinear && c.bias ? c.b[m] : 0, zw = zwv[c.nzw > 1 ? m : 0];
                    for (int64_t cl = 0; cl < Cg; cl++)
                        for (int64_t kh = 0; kh < c.KH; kh++)
                            for (int64_t kw = 0; kw < c.KW; kw++) {
                                int64_t ih = oh * c.s - c.pads[0] + kh * c.d;
                                int64_t iw = ow * c.s - c.pads[1] + kw * c.d;
                                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                                int64_t ci = m / Mg * Cg + cl;
                                s += (int64_t)(xv[((n * c.C + ci) * c.H + ih) * c.W + iw] - zxv) *
                                     (wv[((m * Cg + cl) * c.KH + kh) * c.KW + kw] - zw);
                            }
                    int64_t o = ((n * c.M + m) * c.OH + oh) * c.OW + ow;
                    if (!c.qlinear) ((int32_t *)want)[o] = (int32_t)s;
                    else
                        ((uint8_t *)want)[o] = (uint8_t)ql_out(s, c.xs, c.ws[m], c.ys,
                                                             c.y_u8 ? c.zy : (int8_t)c.zy, c.y_u8);
                }
    const void *in[2] = {c.x, c.zx}; /* zx: a graph input when given at run time */
    char what[160];
    snprintf(what, sizeof what, "%s x %s w %s, %lldx%lld k%lld s%lld d%lld group %lld%s",
             c.qlinear ? "QLinearConv" : "ConvInteger", c.x_u8 ? "u8" : "s8",
             c.w_u8 ? "u8" : "s8", (long long)c.H, (long long)c.W, (long long)c.KH,
             (long long)c.s, (long long)c.d, (long long)c.group,
             c.zx_runtime ? ", x's zero point at run time" : "");
    int64_t dims[4] = {c.N, c.M, c.OH, c.OW};
    q8_dtype yt = !c.qlinear ? Q8_I32 : c.y_u8 ? Q8_U8 : Q8_I8;
    check_op(iconv_build, &c, in, yt, dims, 4, want, what);
    free(want);
    free(xv);
    free(wv);
    free(c.x);
    free(c.w);
    free(c.zx);
    free(c.zw);
    free(c.b);
    free(c.ws);
}

Test(convinteger, types_zero_points_padding) {
    check_iconv((iconv_case){.x_u8 = true, .w_u8 = true, .N = 2, .C = 5, .H = 9, .W = 7,
                             .M = 6, .KH = 3, .KW = 3, .s = 1, .d = 1, .group = 1,
                             .pads = {1, 1, 1, 1}, .nzw = 1}, 101);
    check_iconv((iconv_case){.x_u8 = true, .w_u8 = false, .N = 1, .C = 8, .H = 10, .W = 11,
                             .M = 12, .KH = 3, .KW = 2, .s = 2, .d = 2, .group = 4,
                             .pads = {2, 0, 1, 3}, .nzw = 12}, 102);
    check_iconv((iconv_case){.x_u8 = false, .w_u8 = true, .N = 1, .C = 16, .H = 5, .W = 6,
                             .M = 17, .KH = 1, .KW = 1, .s = 1, .d = 1, .group = 1,
                             .nzw = 0}, 103); /* direct 1x1 */
    check_iconv((iconv_case){.x_u8 = true, .w_u8 = false, .N = 1, .C = 6, .H = 8, .W = 8,
                             .M = 6, .KH = 3, .KW = 3, .s = 1, .d = 1, .group = 6,
                             .pads = {1, 1, 1, 1}, .nzw = 6}, 104); /* depthwise */
}

/* Dynamic quantization: x's zero point (also the padding value) from
 * DynamicQuantizeLinear, known only at run time. */
Test(convinteger, zero_point_of_x_at_run_time) {
    check_iconv((iconv_case){.x_u8 = true, .w_u8 = true, .N = 2, .C = 5, .H = 9, .W = 7,
                             .M = 6, .KH = 3, .KW = 3, .s = 1, .d = 1, .group = 1,
                             .pads = {1, 1, 1, 1}, .nzw = 1, .zx_runtime = true}, 105);
    check_iconv((iconv_case){.x_u8 = true, .w_u8 = false, .N = 1, .C = 8, .H = 10, .W = 11,
                             .M = 12, .KH = 3, .KW = 2, .s = 2, .d = 2, .group = 4,
                             .pads = {2, 0, 1, 3}, .nzw = 12, .zx_runtime = true}, 106);
    check_iconv((iconv_case){.x_u8 = false, .w_u8 = true, .N = 1, .C = 16, .H = 5, .W = 6,
                             .M = 17, .KH = 1, .KW = 1, .s = 1, .d = 1, .group = 1,
                             .nzw = 0, .zx_runtime = true}, 107);
    check_iconv((iconv_case){.x_u8 = true, .w_u8 = false, .N = 1, .C = 6, .H = 8, .W = 8,
                             .M = 6, .KH = 3, .KW = 3, .s = 1, .d = 1, .group = 6,
                             .pads = {1, 1, 1, 1}, .nzw = 6, .zx_runtime = true}, 108);
}

Test(qlinearconv, requantized_outputs) {
    check_iconv((iconv_case){.qlinear = true, .x_u8 = true, .w_u8 = true, .y_u8 = true,
                             .bias = true, .N = 1, .C = 5, .H = 9, .W = 7, .M = 6, .KH = 3,
                             .KW = 3, .s = 1, .d = 1, .group = 1, .pads = {1, 1, 1, 1},
                             .nzw = 1}, 111);
    check_iconv((iconv_case){.qlinear = true, .x_u8 = true, .w_u8 = false, .y_u8 = false,
                             .N = 2, .C = 4, .H = 12, .W = 9, .M = 8, .KH = 3, .KW = 3,
                             .s = 2, .d = 1, .group = 2, .pads = {1, 1, 0, 0}, .nzw = 8}, 112);
    check_iconv((iconv_case){.qlinear = true, .x_u8 = false, .w_u8 = false, .y_u8 = true,
                             .bias = true, .N = 1, .C = 32, .H = 7, .W = 7, .M = 65, .KH = 1,
                             .KW = 1, .s = 1, .d = 1, .group = 1, .nzw = 65}, 113);
}

static q8_graph *dql_build(const void *ctx, const char *path) {
    const int64_t *n = ctx;
    qin x = {"x", Q8_F32, 1, {*n}, NULL, NULL, 0};
    return qgraph("DynamicQuantizeLinear", "", &x, 1, NULL, path);
}

Test(dynamicquantizelinear, scale_zero_point_and_data) {
    static const int64_t sizes[] = {6, 1000, 1};
    for (int t = 0; t < 3; t++) {
        int64_t n = sizes[t];
        q8t_rng g = q8t_seed(120 + t);
        size_t nb = n > 0 ? (size_t)n : 1; /* a range GCC can see */
        float *x = malloc(sizeof(float) * nb);
        q8t_fill(&g, x, n, t == 1 ? 0.5f : -3.0f, t == 1 ? 4.0f : 2.0f);
        if (t == 2) x[0] = 0;
        float mn = 0, mx = 0;
        for (int64_t i = 0; i < n; i++) {
            mn = fminf(mn, x[i]);
            mx = fmaxf(mx, x[i]);
        }
        float s = (mx - mn) / 255.0f;
        double zpf = s > 0 ? nearbyint(fmin(255, fmax(0, 0 - mn / s))) : 0;
        uint8_t *want = malloc(nb);
        for (int64_t i = 0; i < n; i++) {
            double q = s > 0 ? nearbyint((double)(x[i] / s)) + zpf : 0;
            want[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
        }
        const void *in[1] = {x};
        q8_graph *gr = dql_build(&n, NULL);
        /* three outputs: build by hand on the one-node graph */
        q8_node *nd = gr->nodes[0];
        int t1 = q8_graph_add_tensor(gr, "scale", NULL), t2 = q8_graph_add_tensor(gr, "zp", NULL);
        int outs[3] = {nd->outputs[0], t1, t2};
        q8_node_set_io(nd, nd->inputs, 1, outs, 3, NULL);
        gr->outputs = realloc(gr->outputs, 3 * sizeof(int));
        gr->outputs[1] = t1;
        gr->outputs[2] = t2;
        gr->n_outputs = 3;
        void *out[3];
        q8_tensor_info info[3];
        q8_error err = {0};
        cr_assert_eq(q8t_run(gr, in, 3, out, info, 3, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(*(float *)out[1], s, "scale %g, want %g", *(float *)out[1], s);
        cr_assert_eq(*(uint8_t *)out[2], (uint8_t)zpf);
        cr_assert(memcmp(out[0], want, (size_t)n) == 0, "n=%lld: data differs", (long long)n);
        for (int k = 0; k < 3; k++) free(out[k]);
        free(want);
        free(x);
    }
}

#include "qop_util.h"
#include "quant_simd.h"

/* The vectorized QuantizeLinear kernel gives the scalar formula's bytes. */
Test(int8, quantize_simd_matches_scalar) {
    enum { N = 1000 };
    float x[N];
    q8t_rng r = q8t_seed(77);
    for (int i = 0; i < N; i++) x[i] = q8t_uniform(&r, -300, 300);
    x[3] = NAN, x[4] = INFINITY, x[5] = -INFINITY, x[6] = 1e30f, x[7] = 2.5f, x[8] = -2.5f;
    x[9] = 0.5f, x[10] = -0.5f, x[11] = 3.5f;
    for (int i8 = 0; i8 < 2; i8++)
        for (int n = 0; n < 40; n++) { /* every tail length, and the whole */
            int len = n < 39 ? n : N;
            uint8_t got[N], want[N];
            q8_quantize_f32(x, got, len, 1.0f + 0.37f * (float)i8, i8 ? 3 : 100, i8);
            for (int i = 0; i < len; i++) {
                int32_t q = q8_round_sat(x[i] / (1.0f + 0.37f * (float)i8), i8 ? 3 : 100,
                                         i8 ? -128 : 0, i8 ? 127 : 255);
                want[i] = (uint8_t)q;
            }
            cr_assert_eq(memcmp(got, want, (size_t)len), 0, "len %d, int8 %d", len, i8);
        }
}

/* ---- SIMD requantization: every shift, extreme accumulators -------------- */

/* q8_epilogue_row on every path against the scalar reference, for shifts 1..62
 * (the SIMD paths have a fast case for shift >= 33), per-row and per-column
 * channels, ragged lengths. */
Test(igemm, epilogue_every_shift) {
    enum { N = 203 };
    int32_t acc[N], mult[N], shift[N];
    q8t_rng r = q8t_seed(901);
    for (int i = 0; i < N; i++) {
        uint64_t v = q8t_next(&r);
        acc[i] = i % 7 == 0 ? INT32_MIN + i : i % 7 == 1 ? INT32_MAX - i : (int32_t)v;
        if (i % 7 == 2) acc[i] = (int32_t)(v % 2001) - 1000;
    }
    int8_t lut[128];
    q8_act_leaky_lut(0.3f, lut);
    for (int s = 1; s <= 62; s++)
        for (int ch = Q8_CH_ROW; ch <= Q8_CH_COL; ch++) {
            for (int i = 0; i < N; i++) {
                mult[i] = (int32_t)((1u << 30) + (uint32_t)(q8t_next(&r) % (1u << 30)));
                /* per column: mostly s, some lanes below 33 to take the slow case */
                shift[i] = ch == Q8_CH_COL && i % 29 == 5 ? 1 + (int)(q8t_next(&r) % 62) : s;
            }
            if (s == 40) mult[0] = 0; /* a multiplier too small to matter */
            for (int leaky = 0; leaky < 2; leaky++) {
                q8_epilogue e = {.kind = Q8_EPI_I8, .chan = ch, .mult = mult, .shift = shift,
                                 .lo = leaky ? -128 : -100, .hi = leaky ? 127 : 90,
                                 .leaky_lut = leaky ? lut : NULL};
                for (int len = 1; len <= N; len += len < 40 ? 1 : 37) {
                    int8_t want[N], got[N + 16];
                    q8_epilogue_row_c(&e, acc, len, 0, want);
                    for (int p = 0; p < N_PATHS; p++) {
                        if (!q8_igemm_path_supported(k_paths[p])) continue;
                        memset(got, 0x55, sizeof got);
                        q8_epilogue_row(k_paths[p], &e, acc, len, 0, got);
                        cr_assert(memcmp(got, want, (size_t)len) == 0,
                                  "%s shift %d chan %d leaky %d len %d",
                                  q8_igemm_path_name(k_paths[p]), s, ch, leaky, len);
                        cr_assert_eq(got[len], 0x55, "wrote past the end");
                    }
                }
            }
        }
}

/* ---- depthwise SIMD kernels (qconv_dw.h) --------------------------------- */

#include "qconv_dw.h"
#include "layout.h"
#include "model.h"
#include "qconv_im2col.h"
#include "q8file.h"

/* check_conv with the given activations (y_scale 0: float32 output). */
static void check_conv_acts(conv_case c, uint64_t seed, const qattrs *acts, int n_acts) {
    conv_setup(&c, seed);
    int64_t *acc = conv_ref_acc(&c);
    int64_t P = c.OH * c.OW, total = c.N * c.M * P;
    void *want = malloc(sizeof(float) * (size_t)(total + 1));
    const void *in[1] = {c.x};
    int64_t dims[4] = {c.N, c.M, c.OH, c.OW};
    if (c.nsp == 1) dims[2] = c.OW;
    for (int a = 0; a < n_acts; a++) {
        c.qa = acts[a];
        for (int64_t i = 0; i < total; i++)
            spec_out(want, i, acc[i], (double)c.sx * c.swc[i / P % c.M], &c.qa);
        char what[200];
        snprintf(what, sizeof what, "%s [%lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld p%lld,%lld,"
                 "%lld,%lld], act %s, y_scale %g", c.what, (long long)c.H, (long long)c.W,
                 (long long)c.KH, (long long)c.KW, (long long)c.sh, (long long)c.sw,
                 (long long)c.dh, (long long)c.dw, (long long)c.pads[0], (long long)c.pads[1],
                 (long long)c.pads[2], (long long)c.pads[3], c.qa.act ? c.qa.act : "none",
                 c.qa.y_scale);
        check_op(conv_build, &c, in, c.qa.y_scale > 0 ? Q8_I8 : Q8_F32, dims, 2 + c.nsp, want,
                 what);
    }
    free(want);
    free(acc);
    conv_free(&c);
}

/* Small output scales: multipliers above 1/4, the 64-bit requantization. */
static const qattrs k_dw_acts[] = {
    {NULL, 0, 0, 0, 0.05f},          {NULL, 0, 0, 0, 0},
    {"Relu", -INFINITY, INFINITY, 0, 0.0003f},
    {"Clip", -0.5f, 2.0f, 0, 0.02f}, {"Clip", 0.0f, 6.0f, 0, 0},
    {"LeakyRelu", -INFINITY, INFINITY, 0.1f, 0.03f},
    {"LeakyRelu", -INFINITY, INFINITY, 0.2f, 0.0002f},
};
#define N_DW_ACTS (int)(sizeof k_dw_acts / sizeof k_dw_acts[0])

static conv_case dw_case(const char *what, int64_t C, int64_t H, int64_t W, int64_t K,
                         int64_t s, const int64_t pads[4]) {
    return (conv_case){.what = what, .nsp = 2, .N = 1, .C = C, .H = H, .W = W, .M = C,
                       .KH = K, .KW = K, .sh = s, .sw = s, .dh = 1, .dw = 1, .group = C,
                       .pads = {pads[0], pads[1], pads[2], pads[3]}, .bias = true};
}

/* Every input width 1..67 with strides 1 and 2, 3x3 and 5x5 kernels,
 * symmetric and asymmetric pads: the border blocks, the row tails, the
 * narrow-plane blocks (several output rows per vector) and the three-block
 * rows of the AVX-512 kernel, the even/odd outputs of the AVX2 one. */
Test(qconv, depthwise_simd_every_width) {
    static const int64_t pads[4][4] = {{1, 1, 1, 1}, {0, 2, 1, 0}, {2, 0, 0, 1}, {2, 2, 2, 2}};
    for (int64_t W = 1; W <= 67; W++)
        for (int64_t s = 1; s <= 2; s++) {
            int64_t K = (W + s) % 3 == 0 ? 5 : 3;
            const int64_t *p = pads[(W + 2 * s) % 4];
            if (K == 3 && p[1] == 2 && p[3] == 2) p = pads[0];
            int64_t H = 3 + (W * 7 + s) % 8;
            if (W + p[1] + p[3] < K) continue; /* no output */
            if (H + p[0] + p[2] < K) H = K;
            check_conv_acts(dw_case("depthwise width sweep", W % 5 == 0 ? 13 : 2, H, W, K, s,
                                    p), (uint64_t)(1000 + W * 2 + s),
                            W % 9 == 0 ? k_dw_acts : k_acts + (W + s) % N_ACTS,
                            W % 9 == 0 ? N_DW_ACTS : 1);
        }
}

Test(qconv, depthwise_simd_shapes) {
    const int64_t p1[4] = {1, 1, 1, 1}, p0[4] = {0, 0, 0, 0}, pa[4] = {2, 0, 1, 3};
    check_conv_acts(dw_case("C=13 9x7 3x3 s1", 13, 9, 7, 3, 1, p1), 201, k_dw_acts, N_DW_ACTS);
    check_conv_acts(dw_case("C=13 9x7 3x3 s2", 13, 9, 7, 3, 2, pa), 202, k_dw_acts, N_DW_ACTS);
    check_conv_acts(dw_case("C=13 9x7 5x5 s1", 13, 9, 7, 5, 1, pa), 203, k_dw_acts, N_DW_ACTS);
    check_conv_acts(dw_case("7x7 kernel s1 on 20x70", 3, 20, 70, 7, 1, pa), 204, k_acts, N_ACTS);
    check_conv_acts(dw_case("7x7 kernel s2 on 11x33", 3, 11, 33, 7, 2, p1), 205, k_acts, N_ACTS);
    check_conv_acts(dw_case("5x5 s2 unpadded 40x130", 2, 12, 130, 5, 2, p0), 206, k_acts, 2);
    check_conv_acts(dw_case("3x3 s1 1x200 (one row)", 2, 1, 200, 3, 1, p1), 207, k_acts, 2);
    check_conv_acts(dw_case("4x4 kernel (generic groups)", 5, 10, 23, 4, 1, pa), 208, k_acts, 3);
    check_conv_acts(dw_case("2x2 kernel s2", 5, 9, 17, 2, 2, p0), 209, k_acts, 3);
    check_conv_acts(dw_case("11x11 kernel", 2, 14, 21, 11, 1, p0), 210, k_acts, 2);
    conv_case c = dw_case("multiplier 3, 3x3 s2", 4, 9, 20, 3, 2, p1);
    c.M = 12;
    check_conv_acts(c, 211, k_acts, 3);
    c = dw_case("N=3, 1x5 kernel, stride (1,2)", 6, 5, 19, 3, 1, pa);
    c.N = 3, c.KH = 1, c.KW = 5, c.sw = 2, c.pads[0] = c.pads[2] = 0;
    check_conv_acts(c, 212, k_acts, 3);
    c = dw_case("5x1 kernel (two taps per group)", 3, 12, 30, 3, 1, p1);
    c.KH = 5, c.KW = 1, c.pads[1] = c.pads[3] = 0;
    check_conv_acts(c, 213, k_acts, 3);
    c = dw_case("dilation 2, stride 1", 3, 13, 40, 3, 1, pa);
    c.dh = c.dw = 2;
    check_conv_acts(c, 214, k_acts, 3);
    c = dw_case("stride 3", 3, 13, 50, 3, 3, p1);
    check_conv_acts(c, 215, k_acts, 3);
    c = dw_case("stride (2,1) on a narrow plane", 4, 15, 6, 3, 1, pa);
    c.sh = 2;
    check_conv_acts(c, 216, k_acts, 3);
    c = dw_case("1-D, k=5 s2", 3, 1, 45, 5, 2, p1);
    c.nsp = 1, c.pads[0] = c.pads[2] = 0;
    check_conv_acts(c, 217, k_acts, 3);
    c = dw_case("no bias, 4x4 plane 3x3 s1", 7, 4, 4, 3, 1, p1);
    c.bias = false;
    check_conv_acts(c, 218, k_dw_acts, N_DW_ACTS);
}

/* The kernel covers the plane (MobileFaceNet's global depthwise conv):
 * channels in the lanes, 16 at a time with a partial last block; 49 and 9
 * taps end inside a group (the last channel's last group at the image's
 * end), 16 and 64 do not; two images; blocks of 256 channels. */
Test(qconv, depthwise_global) {
    const int64_t p0[4] = {0, 0, 0, 0};
    check_conv_acts(dw_case("global 4x4, C=40", 40, 4, 4, 4, 1, p0), 301, k_dw_acts, N_DW_ACTS);
    check_conv_acts(dw_case("global 7x7, C=37", 37, 7, 7, 7, 1, p0), 302, k_dw_acts, N_DW_ACTS);
    check_conv_acts(dw_case("global 3x3, C=17", 17, 3, 3, 3, 2, p0), 303, k_acts, N_ACTS);
    check_conv_acts(dw_case("global 2x2, C=3", 3, 2, 2, 2, 1, p0), 304, k_acts, 3);
    conv_case c = dw_case("global 8x8, C=300, N=2", 300, 8, 8, 8, 1, p0);
    c.N = 2;
    check_conv_acts(c, 305, k_acts, 3);
    c = dw_case("global 5x3, C=21, no bias", 21, 5, 3, 3, 1, p0);
    c.KH = 5, c.bias = false;
    check_conv_acts(c, 306, k_dw_acts, N_DW_ACTS);
    if (!q8_igemm_path_supported(Q8_IGEMM_AVX512VNNI) || !q8_qdw_has_vbmi()) return;
    q8_qconv_geom g = {.nsp = 2, .N = 1, .C = 512, .M = 512, .group = 512, .H = 7, .W = 7,
                       .OH = 1, .OW = 1, .KH = 7, .KW = 7, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
    q8_qdw d;
    size_t off = 0;
    q8_qdw_plan(&d, &g, Q8_IGEMM_AVX512VNNI, NULL, &off);
    cr_assert(d.kind == Q8_QDW_AVX512 && d.global);
    g.pt = g.pb = 1, g.H = 5; /* padded: the plane kernel */
    q8_qdw_plan(&d, &g, Q8_IGEMM_AVX512VNNI, NULL, &off);
    cr_assert(d.kind == Q8_QDW_AVX512 && !d.global);
}

/* The plan: the SIMD kernels take the MobileNet shapes on the paths that
 * have them, the generic loop what they cannot do. */
Test(qconv, depthwise_plan) {
    q8_qconv_geom g = {.nsp = 2, .N = 1, .C = 16, .M = 16, .group = 16, .H = 112, .W = 112,
                       .OH = 56, .OW = 56, .KH = 3, .KW = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
                       .pt = 1, .pl = 1, .pb = 1, .pr = 1};
    q8_qdw d;
    size_t off = 0;
    q8_qdw_plan(&d, &g, Q8_IGEMM_C, NULL, &off);
    cr_assert_eq(d.kind, Q8_QDW_NONE);
    if (q8_igemm_path_supported(Q8_IGEMM_AVX2)) {
        q8_qdw_plan(&d, &g, Q8_IGEMM_AVX2, NULL, &off);
        cr_assert_eq(d.kind, Q8_QDW_AVX2);
    }
    if (q8_igemm_path_supported(Q8_IGEMM_AVX512VNNI) && q8_qdw_has_vbmi()) {
        q8_qdw_plan(&d, &g, Q8_IGEMM_AVX512VNNI, NULL, &off);
        cr_assert_eq(d.kind, Q8_QDW_AVX512);
        cr_assert_eq(d.R, 1);
        g.H = g.W = 14, g.OH = g.OW = 7, g.KH = g.KW = 5, g.pt = g.pl = g.pb = g.pr = 2;
        q8_qdw_plan(&d, &g, Q8_IGEMM_AVX512VNNI, NULL, &off);
        cr_assert_eq(d.kind, Q8_QDW_AVX512);
        cr_assert_eq(d.R, 2);
        cr_assert_eq(d.G, 7);
        g.sw = 1, g.dw = 5, g.OW = 4; /* a row's bytes (4 lanes) do not fit in 16 or 64 */
        g.KW = 15;
        q8_qdw_plan(&d, &g, Q8_IGEMM_AVX512VNNI, NULL, &off);
        cr_assert_neq(d.kind, Q8_QDW_AVX512);
    }
}

/* ---- q8.QLut kernels ----------------------------------------------------- */

#include "qlut.h"

static const q8_qlut_path k_lut_paths[] = {Q8_QLUT_C, Q8_QLUT_AVX2, Q8_QLUT_AVX512VBMI,
                                           Q8_QLUT_NEON};

static bool lut_path_ok(q8_qlut_path p) {
    return p == Q8_QLUT_C || (p == Q8_QLUT_AVX2 && q8_igemm_path_supported(Q8_IGEMM_AVX2)) ||
           (p == Q8_QLUT_AVX512VBMI && q8_qlut_resolve(Q8_IGEMM_AVX512VNNI) == p) ||
           (p == Q8_QLUT_NEON && q8_qlut_resolve(Q8_IGEMM_NEONDOT) == p);
}

/* Every path gives t[x + 128] for all 256 values, at every offset and
 * length (the vector tails), in place too. */
Test(qlut, simd_matches_the_table) {
    enum { N = 700 };
    int8_t t[256], x[N], y[N + 64], want[N];
    q8t_rng r = q8t_seed(313);
    for (int trial = 0; trial < 3; trial++) {
        for (int i = 0; i < 256; i++) t[i] = trial == 0 ? (int8_t)(255 - i) : rnd_i8(&r);
        for (int i = 0; i < N; i++) x[i] = i < 256 ? (int8_t)(i - 128) : rnd_i8(&r);
        for (int i = 0; i < N; i++) want[i] = t[x[i] + 128];
        for (size_t p = 0; p < sizeof k_lut_paths / sizeof k_lut_paths[0]; p++) {
            if (!lut_path_ok(k_lut_paths[p])) continue;
            for (int len = 0; len <= N; len += len < 140 ? 1 : 97)
                for (int off = 0; off < 3 && off + len <= N; off++) {
                    memset(y, 0x5b, sizeof y);
                    q8_qlut_apply(k_lut_paths[p], x + off, t, y, len);
                    cr_assert(memcmp(y, want + off, (size_t)len) == 0,
                              "path %d len %d off %d", (int)k_lut_paths[p], len, off);
                    cr_assert_eq(y[len], 0x5b, "path %d len %d: wrote past the end",
                                 (int)k_lut_paths[p], len);
                }
            int8_t in[N]; /* in place */
            memcpy(in, x, N);
            q8_qlut_apply(k_lut_paths[p], in, t, in, N);
            cr_assert(memcmp(in, want, N) == 0, "path %d in place", (int)k_lut_paths[p]);
        }
    }
}

typedef struct qlut_case {
    int64_t n;
    const int8_t *t;
} qlut_case;

static q8_graph *qlut_build(const void *ctx, const char *path) {
    const qlut_case *c = ctx;
    static const float s = 0.1f;
    qin ins[2] = {{"x", Q8_I8, 2, {3, c->n}, NULL, &s, 1},
                  {"t", Q8_I8, 1, {256}, c->t, NULL, 0}};
    qattrs qa = {.y_scale = 0.2f};
    return qgraph("QLut", "q8", ins, 2, &qa, path);
}

/* The op on every path, 1 and 3 threads. */
Test(qlut, op_every_path) {
    static const int64_t sizes[] = {1, 31, 100000};
    q8t_rng r = q8t_seed(314);
    int8_t t[256];
    for (int i = 0; i < 256; i++) t[i] = rnd_i8(&r);
    for (int k = 0; k < 3; k++) {
        qlut_case c = {sizes[k], t};
        int8_t *x = rand_i8(&r, 3 * c.n, -128), *want = malloc(c.n > 0 ? (size_t)(3 * c.n) : 1);
        for (int64_t i = 0; i < 3 * c.n; i++) want[i] = t[x[i] + 128];
        const void *in[1] = {x};
        int64_t dims[2] = {3, c.n};
        check_op(qlut_build, &c, in, Q8_I8, dims, 2, want, "QLut");
        free(x);
        free(want);
    }
}

typedef struct qlut_ch_case {
    int64_t n, c, inner, k, ni; /* ni: the index's length (c, or 0 for c) */
    const int8_t *t;
    const uint8_t *idx;
} qlut_ch_case;

static q8_graph *qlut_ch_build(const void *ctx, const char *path) {
    const qlut_ch_case *c = ctx;
    static const float s = 0.1f;
    qin ins[3] = {{"x", Q8_I8, 3, {c->n, c->c, c->inner}, NULL, &s, 1},
                  {"t", Q8_I8, 2, {c->k, 256}, c->t, NULL, 0},
                  {"i", Q8_U8, 1, {c->ni ? c->ni : c->c}, c->idx, NULL, 0}};
    qattrs qa = {.y_scale = 0.2f};
    return qgraph("QLut", "q8", ins, 3, &qa, path);
}

/* One table per channel (quantize --equalize through an activation): K
 * distinct tables, channel c reading table I[c]; planes of 1, odd and
 * large sizes, 1 and 3 threads, every path. */
Test(qlut, per_channel_tables) {
    static const int64_t inner[] = {1, 37, 40000};
    q8t_rng r = q8t_seed(315);
    int8_t t[3 * 256];
    for (int i = 0; i < 3 * 256; i++) t[i] = rnd_i8(&r);
    static const uint8_t idx[5] = {2, 0, 1, 2, 0};
    for (int k = 0; k < 3; k++) {
        qlut_ch_case c = {2, 5, inner[k], 3, 0, t, idx};
        int64_t total = c.n * c.c * c.inner;
        int8_t *x = rand_i8(&r, total, -128), *want = malloc((size_t)total);
        for (int64_t i = 0; i < total; i++)
            want[i] = t[idx[(i / c.inner) % c.c] * 256 + x[i] + 128];
        const void *in[1] = {x};
        int64_t dims[3] = {c.n, c.c, c.inner};
        check_op(qlut_ch_build, &c, in, Q8_I8, dims, 3, want, "QLut per channel");
        free(x);
        free(want);
    }
}

/* An index past the tables, or of another length than the channels, is a
 * format error at load, not a read out of bounds. */
Test(qlut, per_channel_index_is_checked) {
    int8_t t[2 * 256] = {0};
    uint8_t bad[5] = {0, 1, 2, 0, 1}, ok[5] = {0, 1, 1, 0, 1};
    for (int k = 0; k < 2; k++) {
        qlut_ch_case c = {1, k ? 4 : 5, 3, 2, 5, t, k ? ok : bad};
        q8_graph *g = qlut_ch_build(&c, NULL);
        q8_error err = {0};
        cr_assert_eq(q8_pass_infer(g, &err), Q8_ERR_FORMAT, "case %d", k);
        cr_assert(strstr(err.msg, k ? "table index" : "reads table 2 of 2"), "%s", err.msg);
        q8_graph_free(g);
    }
}

/* ---- q8.QPRelu ----------------------------------------------------------- */

/* DequantizeLinear -> PRelu -> QuantizeLinear in plain C: round half to
 * even (nearbyintf in the default mode), NaN to 0, saturated. */
static int8_t qprelu_ref(int8_t x, float sx, float slope, float sy) {
    float v = (float)x * sx;
    if (v < 0) v = v * slope;
    float q = v / sy;
    if (q != q) return 0;
    q = nearbyintf(q);
    return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

typedef struct qprelu_case {
    int ndim;
    int64_t dims[3];
    int64_t ns;             /* slope values: 1 or dims[1] */
    const float *slope;
    float sx, sy;
} qprelu_case;

static q8_graph *qprelu_build(const void *ctx, const char *path) {
    const qprelu_case *c = ctx;
    qin ins[2] = {{"x", Q8_I8, c->ndim, {c->dims[0], c->dims[1], c->dims[2]}, NULL, &c->sx, 1},
                  {"s", Q8_F32, 3, {c->ns, 1, 1}, c->slope, NULL, 0}};
    qattrs qa = {.y_scale = c->sy};
    return qgraph("QPRelu", "q8", ins, 2, &qa, path);
}

/* Against the float definition on every lookup path, 1 and 3 threads (and
 * the other backends through q8t_run): per-channel slopes (negative, 0,
 * above 1, NaN, infinite) on planes of 1, odd, just under and at the size
 * from which a table is made (512), and large; one slope for the whole
 * tensor; output scales that saturate. */
Test(qprelu, matches_dequantize_prelu_quantize) {
    static const int64_t inner[] = {1, 37, 511, 512, 40000};
    static const float slopes[6] = {0.25f, -0.5f, 0.0f, 3.0f, NAN, INFINITY};
    static const float ys[2] = {0.1f, 0.013f};
    q8t_rng r = q8t_seed(316);
    for (int k = 0; k < 5; k++)
        for (int sc = 0; sc < 2; sc++) {
            qprelu_case c = {3, {2, 6, inner[k]}, 6, slopes, 0.05f, ys[sc]};
            int64_t total = 2 * 6 * inner[k];
            int8_t *x = rand_i8(&r, total, -128), *want = malloc((size_t)total);
            for (int64_t i = 0; i < total; i++)
                want[i] = qprelu_ref(x[i], c.sx, slopes[(i / inner[k]) % 6], c.sy);
            const void *in[1] = {x};
            check_op(qprelu_build, &c, in, Q8_I8, c.dims, 3, want, "QPRelu per channel");
            free(x);
            free(want);
        }
    static const int64_t sizes[] = {1, 300, 100000};
    static const float one = -0.3f;
    for (int k = 0; k < 3; k++) {
        qprelu_case c = {2, {3, sizes[k], 0}, 1, &one, 0.02f, 0.01f};
        int64_t total = 3 * sizes[k];
        int8_t *x = rand_i8(&r, total, -128), *want = malloc((size_t)total);
        for (int64_t i = 0; i < total; i++) want[i] = qprelu_ref(x[i], c.sx, one, c.sy);
        const void *in[1] = {x};
        check_op(qprelu_build, &c, in, Q8_I8, c.dims, 2, want, "QPRelu one slope");
        free(x);
        free(want);
    }
}

/* A slope that is neither one value nor one per channel, or not a float32
 * constant, is a format error at load. */
Test(qprelu, slope_is_checked) {
    static const float s4[4] = {1, 2, 3, 4};
    qprelu_case c = {3, {1, 5, 3}, 4, s4, 0.1f, 0.1f};
    q8_graph *g = qprelu_build(&c, NULL);
    q8_error err = {0};
    cr_assert_eq(q8_pass_infer(g, &err), Q8_ERR_FORMAT);
    cr_assert(strstr(err.msg, "the slope must be"), "%s", err.msg);
    q8_graph_free(g);
    c.sy = 0;
    g = qprelu_build((qprelu_case[]){{3, {1, 4, 3}, 4, s4, 0.1f, 0}}, NULL);
    cr_assert_eq(q8_pass_infer(g, &err), Q8_ERR_FORMAT);
    cr_assert(strstr(err.msg, "y_scale"), "%s", err.msg);
    q8_graph_free(g);
}

/* ---- q8.QAdd ------------------------------------------------------------- */

#include "qadd_kern.h"

/* The definition (src/core/ops/qadd.h) in 128 bits: round half up of
 * (a * ma + b * mb) / 2^shift, clamped to [lo, 127]. */
static int8_t qadd_ref(const q8_qadd_params *p, int8_t a, int8_t b) {
    __int128 v = rhu_shift((__int128)a * p->ma + (__int128)b * p->mb, p->shift);
    return (int8_t)(v < p->lo ? p->lo : v > 127 ? 127 : v);
}

/* The multipliers carry 15 significant bits of both ratios; the requantized
 * sum is within one step of the exact real sum. */
Test(qadd, multipliers) {
    static const double sc[][3] = {{0.1, 0.1, 0.1}, {0.02, 0.05, 0.07}, {1e-3, 0.5, 0.9},
                                   {0.3, 0.01, 0.004}, {1e-9, 1e-9, 1.0}, {5.0, 1.0, 1e-5}};
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        q8_qadd_params p;
        q8_qadd_multipliers(sc[i][0], sc[i][1], sc[i][2], &p);
        double ra = sc[i][0] / sc[i][2], rb = sc[i][1] / sc[i][2], r = ra > rb ? ra : rb;
        cr_assert(p.shift >= 1 && p.shift <= 30, "case %zu: shift %d", i, (int)p.shift);
        cr_assert(p.ma >= 0 && p.ma <= 32767 && p.mb >= 0 && p.mb <= 32767, "case %zu", i);
        if (r * 2 < 32767 && r * (1 << 30) >= 16384) {
            int32_t m = p.ma > p.mb ? p.ma : p.mb;
            cr_assert(m >= 16384, "case %zu: largest multiplier %d wastes bits", i, (int)m);
            cr_assert_leq(fabs(ldexp(p.ma, -p.shift) - ra), ldexp(0.5, -p.shift) * 1.0000001);
            cr_assert_leq(fabs(ldexp(p.mb, -p.shift) - rb), ldexp(0.5, -p.shift) * 1.0000001);
            for (int a = -128; a < 128; a += 5)
                for (int b = -128; b < 128; b += 3) {
                    double real = a * ra + b * rb;
                    real = real < -128 ? -128 : real > 127 ? 127 : real;
                    int8_t y = q8_qadd_one(&p, (int8_t)a, (int8_t)b);
                    cr_assert_leq(fabs(y - real), 0.5 + 256 * 32768.0 / ldexp(1, 30) + 0.01,
                                  "case %zu: %d, %d -> %d, real %g", i, a, b, y, real);
                }
        }
    }
}

/* Every kernel gives the definition's bytes at every offset and length (the
 * vector tails), for extreme values and saturating multipliers, with and
 * without a fused Relu (lo 0), in place too. */
Test(qadd, kernels_match_the_definition) {
    enum { N = 300 };
    static const q8_qadd_path paths[] = {Q8_QADD_C, Q8_QADD_AVX2};
    static const q8_qadd_params ps[] = {
        {16384, 16384, 15, -128, 0}, {32767, 1, 1, -128, 0},   {20000, 9000, 30, -128, 0},
        {0, 32767, 14, -128, 0},     {12345, 32767, 16, -128, 0}, {32767, 32767, 8, -128, 0},
        {16384, 16384, 15, 0, 0},    {32767, 32767, 8, 0, 0},   {20000, 9000, 30, 0, 0}};
    int8_t a[N], b[N], y[N + 64], want[N];
    q8t_rng r = q8t_seed(515);
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
        for (int mode = 0; mode < 4; mode++) {
            fill_i8(&r, a, N, mode);
            fill_i8(&r, b, N, mode == 3 ? 0 : 3 - mode);
            for (int i = 0; i < N; i++) want[i] = qadd_ref(&ps[k], a[i], b[i]);
            for (size_t pi = 0; pi < sizeof paths / sizeof paths[0]; pi++) {
                if (paths[pi] == Q8_QADD_AVX2 && q8_qadd_resolve(Q8_IGEMM_AVX2) != Q8_QADD_AVX2)
                    continue;
                for (int len = 0; len <= N; len += len < 70 ? 1 : 53)
                    for (int off = 0; off < 3 && off + len <= N; off++) {
                        memset(y, 0x5b, sizeof y);
                        q8_qadd_apply(paths[pi], &ps[k], a + off, b + off, y, len);
                        cr_assert(memcmp(y, want + off, (size_t)len) == 0,
                                  "params %zu mode %d path %d len %d off %d", k, mode,
                                  (int)paths[pi], len, off);
                        cr_assert_eq(y[len], 0x5b, "path %d len %d: wrote past the end",
                                     (int)paths[pi], len);
                    }
                int8_t in[N]; /* in place, on either input */
                memcpy(in, a, N);
                q8_qadd_apply(paths[pi], &ps[k], in, b, in, N);
                cr_assert(memcmp(in, want, N) == 0, "path %d in place on A", (int)paths[pi]);
                memcpy(in, b, N);
                q8_qadd_apply(paths[pi], &ps[k], a, in, in, N);
                cr_assert(memcmp(in, want, N) == 0, "path %d in place on B", (int)paths[pi]);
            }
        }
}

typedef struct qadd_case {
    int ndim;
    int64_t dims[4];
    float sa, sb, sy;
} qadd_case;

static q8_graph *qadd_build(const void *ctx, const char *path) {
    const qadd_case *c = ctx;
    qin ins[2] = {{"a", Q8_I8, c->ndim, {0}, NULL, &c->sa, 1},
                  {"b", Q8_I8, c->ndim, {0}, NULL, &c->sb, 1}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    memcpy(ins[1].dims, c->dims, sizeof c->dims);
    qattrs qa = {.y_scale = c->sy};
    return qgraph("QAdd", "q8", ins, 2, &qa, path);
}

/* The op on every path, 1 and 3 threads, awkward and large shapes. */
Test(qadd, op_every_path) {
    static const qadd_case cases[] = {{1, {1}, 0.1f, 0.2f, 0.25f},
                                      {4, {1, 3, 5, 7}, 0.013f, 0.05f, 0.04f},
                                      {4, {2, 24, 33, 35}, 0.5f, 0.001f, 0.3f},
                                      {2, {3, 100003}, 0.02f, 0.02f, 0.01f}};
    q8t_rng r = q8t_seed(516);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const qadd_case *c = &cases[k];
        int64_t n = 1;
        for (int d = 0; d < c->ndim; d++) n *= c->dims[d];
        int8_t *a = rand_i8(&r, n, -128), *b = rand_i8(&r, n, -128), *want = malloc((size_t)n);
        q8_qadd_params p;
        q8_qadd_multipliers(c->sa, c->sb, c->sy, &p);
        for (int64_t i = 0; i < n; i++) want[i] = qadd_ref(&p, a[i], b[i]);
        const void *in[2] = {a, b};
        char what[32];
        snprintf(what, sizeof what, "QAdd case %zu", k);
        check_op(qadd_build, c, in, Q8_I8, c->dims, c->ndim, want, what);
        free(a);
        free(b);
        free(want);
    }
}

/* ---- q8.QMul ------------------------------------------------------------- */

#include "ops/qmul.h"

typedef struct qmul_case {
    int ndim;
    int64_t dims[4], bdims[4];
    float sa, sb, sy;
} qmul_case;

static q8_graph *qmul_build(const void *ctx, const char *path) {
    const qmul_case *c = ctx;
    qin ins[2] = {{"a", Q8_I8, c->ndim, {0}, NULL, &c->sa, 1},
                  {"b", Q8_I8, c->ndim, {0}, NULL, &c->sb, 1}};
    memcpy(ins[0].dims, c->dims, sizeof c->dims);
    memcpy(ins[1].dims, c->bdims, sizeof c->bdims);
    qattrs qa = {.y_scale = c->sy};
    return qgraph("QMul", "q8", ins, 2, &qa, path);
}

/* The multiplier keeps 15 bits of sa * sb / sy; each product is within one
 * step of the exact real product. */
Test(qmul, multiplier) {
    static const double rs[] = {1.0, 0.3, 7.7e-3, 1.1e-6, 123.0};
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
        q8_qmul_params p;
        q8_qmul_multiplier(rs[i], &p);
        cr_assert(p.m <= 32767 && p.shift >= 1 && p.shift <= 30, "r %g", rs[i]);
        cr_assert(p.m >= 16384 || (p.shift == 30 && rs[i] < ldexp(1, -16)), "r %g: m %d",
                  rs[i], (int)p.m);
        for (int a = -128; a < 128; a += 3)
            for (int b = -128; b < 128; b += 7) {
                double real = (double)a * b * rs[i];
                real = real < -128 ? -128 : real > 127 ? 127 : real;
                int8_t y = q8_qmul_one(&p, (int8_t)a, (int8_t)b);
                cr_assert_leq(fabs(y - real), 0.5 + 16384.0 * ldexp(0.5, -p.shift) + 1e-9,
                              "r %g: %d * %d -> %d, real %g", rs[i], a, b, y, real);
            }
    }
}

/* The op against the definition written out in 128 bits: per-channel gates
 * ([N, C, 1, 1] and [N, C, 1]), same shapes, one value, wide rows, extreme
 * values; every kernel path this CPU has (C loops, AVX-512), 1 and 3
 * threads. */
Test(qmul, op_shapes) {
    static const qmul_case cases[] = {
        {4, {1, 16, 7, 9}, {1, 16, 1, 1}, 0.05f, 0.0079f, 0.04f},
        {4, {2, 5, 33, 35}, {2, 5, 1, 1}, 0.5f, 0.01f, 0.02f},
        {3, {3, 4, 1000}, {3, 4, 1}, 0.02f, 0.02f, 0.0001f},
        {2, {7, 129}, {7, 129}, 0.1f, 0.2f, 0.3f},
        {1, {1}, {1}, 0.1f, 0.1f, 0.01f},
        {3, {2, 3, 5}, {2, 1, 1}, 1e-4f, 1e-4f, 1.0f}};
    q8t_rng r = q8t_seed(517);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const qmul_case *c = &cases[k];
        int64_t n = 1, nb = 1;
        for (int d = 0; d < c->ndim; d++) n *= c->dims[d], nb *= c->bdims[d];
        int8_t *a = rand_i8(&r, n, -128), *b = rand_i8(&r, nb, -128), *want = malloc((size_t)n);
        if (k == 1) {
            a[0] = b[0] = -128; /* the largest product */
            a[1] = 127;
        }
        q8_qmul_params p;
        q8_qmul_multiplier((double)c->sa * c->sb / c->sy, &p);
        for (int64_t i = 0; i < n; i++) {
            __int128 v = rhu_shift((__int128)a[i] * b[i / (n / nb)] * p.m, p.shift);
            want[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        }
        const void *in[2] = {a, b};
        char what[32];
        snprintf(what, sizeof what, "QMul case %zu", k);
        check_op_paths(qmul_build, c, in, Q8_I8, c->dims, c->ndim, want, what, true);
        free(a);
        free(b);
        free(want);
    }
}

Test(errors, qmul_messages) {
    static const float s = 0.1f;
    qattrs qa = {.y_scale = 0.2f};
    qin a = {"a", Q8_I8, 3, {2, 3, 4}, NULL, &s, 1}, b = {"b", Q8_I8, 3, {2, 3, 1}, NULL, &s, 1};
    qin bt = {"b", Q8_I8, 3, {1, 3, 4}, NULL, &s, 1}, b2 = {"b", Q8_I8, 2, {2, 3}, NULL, &s, 1};
    check_fails(qgraph("QMul", "q8", (qin[]){a, bt}, 2, &qa, NULL),
                "B 'b' must have A 'a''s shape or its leading dims", "trailing broadcast");
    check_fails(qgraph("QMul", "q8", (qin[]){a, b2}, 2, &qa, NULL),
                "B 'b' must have A 'a''s shape", "rank");
    check_fails(qgraph("QMul", "q8", (qin[]){a, b}, 2, NULL, NULL), "y_scale is missing",
                "no y_scale");
}

/* ---- q8.QGlobalAveragePool --------------------------------------------- */

#include "ops/qgap.h"

typedef struct qgap_case {
    int ndim;
    int64_t dims[4];
    float sx, sy;
    int fill; /* 0 random, 1 all -128, 2 all 127 */
} qgap_case;

static q8_graph *qgap_build(const void *ctx, const char *path) {
    const qgap_case *c = ctx;
    qin in = {"x", Q8_I8, c->ndim, {0}, NULL, &c->sx, 1};
    memcpy(in.dims, c->dims, sizeof c->dims);
    qattrs qa = {.y_scale = c->sy};
    return qgraph("QGlobalAveragePool", "q8", &in, 1, &qa, path);
}

/* The multiplier is the INT8 ops' requantization (q8_requant_make), also
 * where it is too small to give anything but 0 and where it saturates. */
Test(qgap, multiplier_is_the_requantization) {
    static const double Ms[] = {1.0, 0.5, 0.3, 7.7e-3, 1.1e-6, 3e-19, 1e-30, 123.0, 2e10};
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++) {
        q8_qgap_params p;
        q8_qgap_multiplier(Ms[i], &p);
        q8_requant r = q8_requant_make(Ms[i]);
        cr_assert(p.mult == r.mult && p.shift == r.shift, "M %g: %d >> %d, want %d >> %d",
                  Ms[i], (int)p.mult, (int)p.shift, (int)r.mult, (int)r.shift);
    }
}

/* The op against the exact sum, rounded half up in 128 bits, and within half
 * a step (plus the multiplier's 2^-31) of the real mean: random planes of
 * awkward sizes, one value per plane, saturating planes, 1 and 3 threads. */
Test(qgap, op_shapes) {
    static const qgap_case cases[] = {
        {4, {1, 16, 7, 9}, 0.05f, 0.01f, 0},   {4, {2, 5, 33, 35}, 0.5f, 0.02f, 0},
        {3, {3, 4, 1000}, 0.02f, 0.0001f, 0},  {2, {7, 13}, 0.1f, 0.3f, 0},
        {4, {1, 1, 1, 1}, 0.1f, 0.1f, 2},      {4, {1, 3, 5, 5}, 0.1f, 0.1f, 1},
        {4, {2, 9, 4, 4}, 1e-4f, 1.0f, 0},     {4, {1, 6, 14, 14}, 0.03f, 0.004f, 2}};
    q8t_rng r = q8t_seed(611);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const qgap_case *c = &cases[k];
        int64_t n = 1, ydims[4];
        for (int d = 0; d < c->ndim; d++) n *= c->dims[d], ydims[d] = d < 2 ? c->dims[d] : 1;
        int64_t rows = c->dims[0] * c->dims[1], s = n / rows;
        int8_t *x = rand_i8(&r, n, -128), *want = malloc((size_t)rows);
        if (c->fill) memset(x, c->fill == 1 ? -128 : 127, (size_t)n);
        q8_qgap_params p;
        double M = (double)c->sx / ((double)s * c->sy);
        q8_qgap_multiplier(M, &p);
        for (int64_t row = 0; row < rows; row++) {
            int64_t acc = 0;
            for (int64_t i = 0; i < s; i++) acc += x[row * s + i];
            __int128 v = rhu_shift((__int128)acc * p.mult, p.shift);
            want[row] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
            double real = (double)acc * M;
            real = real < -128 ? -128 : real > 127 ? 127 : real;
            cr_assert_leq(fabs(want[row] - real), 0.5 + fabs(real) * ldexp(1, -30),
                          "case %zu row %lld: %d, real %g", k, (long long)row, want[row], real);
        }
        const void *in[1] = {x};
        char what[40];
        snprintf(what, sizeof what, "QGlobalAveragePool case %zu", k);
        check_op_paths(qgap_build, c, in, Q8_I8, ydims, c->ndim, want, what, false);
        free(x);
        free(want);
    }
}

Test(errors, qgap_messages) {
    static const float s = 0.1f;
    qattrs qa = {.y_scale = 0.2f};
    qin x = {"x", Q8_I8, 4, {1, 3, 4, 4}, NULL, &s, 1}, x1 = {"x", Q8_I8, 1, {5}, NULL, &s, 1};
    qin xf = {"x", Q8_F32, 4, {1, 3, 4, 4}, NULL, NULL, 0};
    qin x0 = {"x", Q8_I8, 4, {1, 3, 0, 4}, NULL, &s, 1};
    check_fails(qgraph("QGlobalAveragePool", "q8", &x, 1, NULL, NULL), "y_scale is missing",
                "no y_scale");
    check_fails(qgraph("QGlobalAveragePool", "q8", &x1, 1, &qa, NULL),
                "X 'x' has rank 1, expected N x C x ...", "rank 1");
    check_fails(qgraph("QGlobalAveragePool", "q8", &xf, 1, &qa, NULL),
                "X 'x' is float32, expected int8", "float X");
    check_fails(qgraph("QGlobalAveragePool", "q8", &x0, 1, &qa, NULL),
                "X 'x' has 0 values per plane", "empty planes");
}

Test(errors, qadd_messages) {
    static const float s = 0.1f;
    qattrs qa = {.y_scale = 0.2f};
    qin a = {"a", Q8_I8, 2, {3, 4}, NULL, &s, 1}, b = {"b", Q8_I8, 2, {3, 4}, NULL, &s, 1};
    qin b5 = {"b", Q8_I8, 2, {3, 5}, NULL, &s, 1}, bf = {"b", Q8_F32, 2, {3, 4}, NULL, NULL, 0};
    qin bnos = {"b", Q8_I8, 2, {3, 4}, NULL, NULL, 0};
    check_fails(qgraph("QAdd", "q8", (qin[]){a, b5}, 2, &qa, NULL),
                "A 'a' and B 'b' differ in shape", "shapes");
    check_fails(qgraph("QAdd", "q8", (qin[]){a, bf}, 2, &qa, NULL),
                "B 'b' is float32, expected int8", "float B");
    check_fails(qgraph("QAdd", "q8", (qin[]){a, bnos}, 2, &qa, NULL),
                "B 'b' has no quantization scale", "B without scale");
    check_fails(qgraph("QAdd", "q8", (qin[]){a, b}, 2, NULL, NULL), "y_scale is missing",
                "no y_scale");
}

/* ---- im2col against a plain loop ----------------------------------------- */

/* q8_qconv_im2col on KH x 1 kernels without horizontal padding (its
 * whole-rows path) and on any other geometry, against the definition:
 * col[k][p] is x at the tap's input pixel, pad outside. Pads wider than the
 * plane included: a top pad past every output row of a tap wrote before
 * the fix past its row of col (and a negative length after it). Each col is
 * allocated to its exact size, so ASan sees any overflow. */
Test(qconv, im2col_matches_the_definition) {
    q8t_rng r = q8t_seed(4646);
    int done = 0, whole_rows = 0;
    for (int trial = 0; done < 400; trial++) {
        q8_qconv_geom g = {.nsp = 2, .N = 1, .group = 1};
        bool rows = trial % 2 == 0; /* the whole-rows path's geometry */
        g.C = 1 + (int64_t)(q8t_next(&r) % 4);
        g.KH = 1 + (int64_t)(q8t_next(&r) % 5);
        g.KW = rows ? 1 : 1 + (int64_t)(q8t_next(&r) % 4);
        g.sh = rows ? 1 : 1 + (int64_t)(q8t_next(&r) % 3);
        g.sw = rows ? 1 : 1 + (int64_t)(q8t_next(&r) % 3);
        g.dh = 1 + (int64_t)(q8t_next(&r) % 3);
        g.dw = 1 + (int64_t)(q8t_next(&r) % 2);
        g.H = 1 + (int64_t)(q8t_next(&r) % 6);
        g.W = 1 + (int64_t)(q8t_next(&r) % 9);
        g.pt = (int64_t)(q8t_next(&r) % 8), g.pb = (int64_t)(q8t_next(&r) % 8);
        g.pl = rows ? 0 : (int64_t)(q8t_next(&r) % 3);
        g.pr = rows ? 0 : (int64_t)(q8t_next(&r) % 3);
        int64_t eh = (g.KH - 1) * g.dh + 1, ew = (g.KW - 1) * g.dw + 1;
        if (g.H + g.pt + g.pb < eh || g.W + g.pl + g.pr < ew) continue;
        g.OH = (g.H + g.pt + g.pb - eh) / g.sh + 1;
        g.OW = (g.W + g.pl + g.pr - ew) / g.sw + 1;
        g.M = 1;
        int64_t K = g.C * g.KH * g.KW, P = g.OH * g.OW;
        uint8_t *x = malloc((size_t)(g.C * g.H * g.W)), *col = malloc((size_t)(K * P));
        for (int64_t i = 0; i < g.C * g.H * g.W; i++) x[i] = (uint8_t)(q8t_next(&r) | 1);
        for (int th = 0; th < 2; th++) {
            q8_pool *pool = th ? q8_pool_create(3) : NULL;
            memset(col, 0xee, (size_t)(K * P));
            q8_qconv_im2col(&g, x, 0, col, pool);
            for (int64_t k = 0; k < K; k++) {
                int64_t c = k / (g.KH * g.KW), kh = k / g.KW % g.KH, kw = k % g.KW;
                for (int64_t p = 0; p < P; p++) {
                    int64_t ih = p / g.OW * g.sh - g.pt + kh * g.dh;
                    int64_t iw = p % g.OW * g.sw - g.pl + kw * g.dw;
                    bool in = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
                    uint8_t want = in ? x[(c * g.H + ih) * g.W + iw] : 0;
                    cr_assert_eq(col[k * P + p], want,
                                 "C%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld "
                                 "p%lld,%lld,%lld,%lld: col[%lld][%lld] is %d, want %d",
                                 (long long)g.C, (long long)g.H, (long long)g.W,
                                 (long long)g.KH, (long long)g.KW, (long long)g.sh,
                                 (long long)g.sw, (long long)g.dh, (long long)g.dw,
                                 (long long)g.pt, (long long)g.pl, (long long)g.pb,
                                 (long long)g.pr, (long long)k, (long long)p, col[k * P + p],
                                 want);
                }
            }
            if (pool) q8_pool_free(pool);
        }
        whole_rows += rows && g.pt > g.OH;
        free(x);
        free(col);
        done++;
    }
    cr_assert_gt(whole_rows, 0, "no top pad past the output rows was drawn");
}

/* ---- im2col straight into packed lanes (AVX-512 VBMI) -------------------- */

/* The same bytes as im2col + pack_lanes_kj: panels crossing output rows
 * (short rows: several per panel), every K % 4, strides, dilations,
 * asymmetric pads, planes narrower than a row's bytes. */
Test(qconv, lanes_vbmi_match_im2col_pack) {
#if defined(__x86_64__) || defined(__i386__)
    if (!q8_igemm_path_supported(Q8_IGEMM_AVX512VNNI) || !q8_qdw_has_vbmi()) {
        cr_log_info("no AVX-512 VBMI: skipped");
        return;
    }
    q8t_rng r = q8t_seed(4242);
    int done = 0;
    for (int trial = 0; done < 300; trial++) {
        q8_qconv_geom g = {.nsp = 2, .N = 1, .group = 1};
        g.C = 1 + (int64_t)(q8t_next(&r) % 5);
        g.KH = 1 + (int64_t)(q8t_next(&r) % 5);
        g.KW = 3 + (int64_t)(q8t_next(&r) % 5);
        g.sh = 1 + (int64_t)(q8t_next(&r) % 3);
        g.sw = 1 + (int64_t)(q8t_next(&r) % 3);
        g.dh = 1 + (int64_t)(q8t_next(&r) % 2);
        g.dw = 1 + (int64_t)(q8t_next(&r) % 2);
        g.H = 1 + (int64_t)(q8t_next(&r) % 12);
        g.W = 1 + (int64_t)(q8t_next(&r) % (trial % 4 ? 30 : 90));
        g.pt = (int64_t)(q8t_next(&r) % 3), g.pb = (int64_t)(q8t_next(&r) % 3);
        g.pl = (int64_t)(q8t_next(&r) % 4), g.pr = (int64_t)(q8t_next(&r) % 4);
        int64_t eh = (g.KH - 1) * g.dh + 1, ew = (g.KW - 1) * g.dw + 1;
        if (g.H + g.pt + g.pb < eh || g.W + g.pl + g.pr < ew || !q8_qconv_lanes_vbmi_ok(&g))
            continue;
        g.OH = (g.H + g.pt + g.pb - eh) / g.sh + 1;
        g.OW = (g.W + g.pl + g.pr - ew) / g.sw + 1;
        g.M = 1;
        int64_t K = g.C * g.KH * g.KW, P = g.OH * g.OW;
        size_t lb = q8_ig_lanes_bytes(P, K);
        int8_t *x = rand_i8(&r, g.C * g.H * g.W, -128);
        uint8_t *col = malloc((size_t)(K * P)), *want = malloc(lb), *got = malloc(lb);
        uint8_t tab[16 * 64];
        q8_qconv_im2col(&g, (const uint8_t *)x, 0, col, NULL);
        q8_ig_pack_lanes_kj((const int8_t *)col, P, K, P, true, want, NULL);
        q8_qconv_lanes_tab(&g, tab);
        for (int th = 0; th < 2; th++) {
            q8_pool *pool = th ? q8_pool_create(3) : NULL;
            memset(got, 0x3c, lb);
            q8_qconv_lanes_vbmi(&g, g.C, x, tab, got, pool);
            for (size_t i = 0; i < lb; i++)
                cr_assert_eq(got[i], want[i],
                             "C%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld p%lld,%lld,%lld,"
                             "%lld: byte %zu of %zu is %d, want %d", (long long)g.C,
                             (long long)g.H, (long long)g.W, (long long)g.KH, (long long)g.KW,
                             (long long)g.sh, (long long)g.sw, (long long)g.dh, (long long)g.dw,
                             (long long)g.pt, (long long)g.pl, (long long)g.pb, (long long)g.pr,
                             i, lb, got[i], want[i]);
            if (pool) q8_pool_free(pool);
        }
        free(x);
        free(col);
        free(want);
        free(got);
        done++;
    }
#else
    cr_log_info("x86 only: skipped");
#endif
}

/* 1x1 convs with a stride: the same bytes as im2col + pack_lanes_kj, over
 * every C % 4, panels crossing one or several output rows, strides up to
 * 5, planes whose last window ends at the plane's last byte, 1 and 3
 * threads; and whole blocks of panels. */
Test(qconv, lanes_sub_match_im2col_pack) {
#if defined(__x86_64__) || defined(__i386__)
    if (!q8_igemm_path_supported(Q8_IGEMM_AVX512VNNI) || !q8_qdw_has_vbmi()) {
        cr_log_info("no AVX-512 VBMI: skipped");
        return;
    }
    q8t_rng r = q8t_seed(4545);
    int done = 0, refused = 0;
    for (int trial = 0; done < 300; trial++) {
        q8_qconv_geom g = {.nsp = 2, .N = 1, .group = 1, .KH = 1, .KW = 1, .dh = 1, .dw = 1};
        g.C = 1 + (int64_t)(q8t_next(&r) % 9);
        g.sh = 1 + (int64_t)(q8t_next(&r) % 5);
        g.sw = 1 + (int64_t)(q8t_next(&r) % 5);
        g.H = 1 + (int64_t)(q8t_next(&r) % 20);
        g.W = 1 + (int64_t)(q8t_next(&r) % (trial % 4 ? 30 : 70));
        g.OH = (g.H - 1) / g.sh + 1;
        g.OW = (g.W - 1) / g.sw + 1;
        if (!q8_qconv_lanes_sub_ok(&g)) {
            refused++;
            continue;
        }
        g.M = 1;
        int64_t K = g.C, P = g.OH * g.OW;
        size_t lb = q8_ig_lanes_bytes(P, K);
        int8_t *x = rand_i8(&r, g.C * g.H * g.W, -128);
        uint8_t *col = malloc((size_t)(K * P)), *want = malloc(lb), *got = malloc(lb);
        q8_qconv_im2col(&g, (const uint8_t *)x, 0, col, NULL);
        q8_ig_pack_lanes_kj((const int8_t *)col, P, K, P, true, want, NULL);
        for (int th = 0; th < 3; th++) {
            q8_pool *pool = th == 1 ? q8_pool_create(3) : NULL;
            memset(got, 0x3c, lb);
            if (th < 2) {
                q8_qconv_lanes_sub(&g, g.C, x, got, pool);
            } else { /* blocks of 2 panels, as the GEMM asks for them */
                int64_t np = q8_ig_panels(P), G = q8_ig_kpad(K) / 4;
                for (int64_t p0 = 0; p0 < np; p0 += 2)
                    q8_qconv_lanes_sub_block(&g, g.C, x, p0, np - p0 < 2 ? np - p0 : 2,
                                             got + (size_t)(p0 * G) * 64);
            }
            for (size_t i = 0; i < lb; i++)
                cr_assert_eq(got[i], want[i],
                             "C%lld %lldx%lld s%lld,%lld (%d): byte %zu of %zu is %d, want %d",
                             (long long)g.C, (long long)g.H, (long long)g.W, (long long)g.sh,
                             (long long)g.sw, th, i, lb, got[i], want[i]);
            if (pool) q8_pool_free(pool);
        }
        free(x);
        free(col);
        free(want);
        free(got);
        done++;
    }
    /* stride 1 both ways (X is the operand), pads, and panels wider than a
     * window are left to the other paths */
    cr_assert_gt(refused, 0);
    q8_qconv_geom g = {.nsp = 2, .N = 1, .group = 1, .C = 4, .KH = 1, .KW = 1, .dh = 1,
                       .dw = 1, .sh = 2, .sw = 2, .H = 56, .W = 56, .OH = 28, .OW = 28};
    cr_assert(q8_qconv_lanes_sub_ok(&g));
    g.pt = 1;
    cr_assert_not(q8_qconv_lanes_sub_ok(&g));
    g.pt = 0, g.H = 1, g.OH = 1, g.sw = 8, g.W = 225, g.OW = 29; /* 16 pixels: 121 bytes */
    cr_assert(q8_qconv_lanes_sub_ok(&g));
    g.sw = 9, g.W = 253; /* 136: not */
    cr_assert_not(q8_qconv_lanes_sub_ok(&g));
#else
    cr_log_info("x86 only: skipped");
#endif
}

/* ---- long kernels: packed lanes copied from input runs ------------------- */

/* The same bytes as im2col + pack_lanes_kj: KW 16..80 (every K % 4), strides
 * up to past the kernel (gaps between frames), vertical dilation, pads wider
 * than the plane's edge, lanes past P in the last panel, 1 and 3 threads. */
Test(qconv, lanes_runs_match_im2col_pack) {
    q8t_rng r = q8t_seed(4343);
    int done = 0;
    for (int trial = 0; done < 200; trial++) {
        q8_qconv_geom g = {.nsp = 2, .N = 1, .group = 1, .dw = 1};
        g.C = 1 + (int64_t)(q8t_next(&r) % 3);
        g.KH = 1 + (int64_t)(q8t_next(&r) % 3);
        g.KW = 16 + (int64_t)(q8t_next(&r) % 65);
        g.sh = 1 + (int64_t)(q8t_next(&r) % 2);
        g.sw = 1 + (int64_t)(q8t_next(&r) % (trial % 2 ? 8 : 130));
        g.dh = 1 + (int64_t)(q8t_next(&r) % 2);
        g.H = 1 + (int64_t)(q8t_next(&r) % 5);
        g.W = 1 + (int64_t)(q8t_next(&r) % 700);
        g.pt = (int64_t)(q8t_next(&r) % 2), g.pb = (int64_t)(q8t_next(&r) % 2);
        g.pl = (int64_t)(q8t_next(&r) % 40), g.pr = (int64_t)(q8t_next(&r) % 40);
        int64_t eh = (g.KH - 1) * g.dh + 1;
        if (g.H + g.pt + g.pb < eh || g.W + g.pl + g.pr < g.KW) continue;
        g.OH = (g.H + g.pt + g.pb - eh) / g.sh + 1;
        g.OW = (g.W + g.pl + g.pr - g.KW) / g.sw + 1;
        g.M = 1;
        cr_assert(q8_qconv_lanes_runs_ok(&g));
        int64_t K = g.C * g.KH * g.KW, P = g.OH * g.OW;
        size_t lb = q8_ig_lanes_bytes(P, K);
        int8_t *x = rand_i8(&r, g.C * g.H * g.W, -128);
        uint8_t *col = malloc((size_t)(K * P)), *want = malloc(lb), *got = malloc(lb);
        q8_qconv_im2col(&g, (const uint8_t *)x, 0, col, NULL);
        q8_ig_pack_lanes_kj((const int8_t *)col, P, K, P, true, want, NULL);
        for (int th = 0; th < 2; th++) {
            q8_pool *pool = th ? q8_pool_create(3) : NULL;
            memset(got, 0x3c, lb);
            q8_qconv_lanes_runs(&g, g.C, x, got, pool);
            for (size_t i = 0; i < lb; i++)
                cr_assert_eq(got[i], want[i],
                             "C%lld %lldx%lld k%lldx%lld s%lld,%lld dh%lld p%lld,%lld,%lld,"
                             "%lld: byte %zu of %zu is %d, want %d", (long long)g.C,
                             (long long)g.H, (long long)g.W, (long long)g.KH, (long long)g.KW,
                             (long long)g.sh, (long long)g.sw, (long long)g.dh,
                             (long long)g.pt, (long long)g.pl, (long long)g.pb, (long long)g.pr,
                             i, lb, got[i], want[i]);
            if (pool) q8_pool_free(pool);
        }
        free(x);
        free(col);
        free(want);
        free(got);
        done++;
    }
    q8_qconv_geom g = {.nsp = 2, .C = 1, .group = 1, .KH = 1, .KW = 15, .dw = 1};
    cr_assert(!q8_qconv_lanes_runs_ok(&g), "short kernels keep im2col");
    g.KW = 16, g.dw = 2;
    cr_assert(!q8_qconv_lanes_runs_ok(&g), "horizontal dilation breaks the runs");
}

/* Long-kernel convs through the op on every path: an STFT front end (one
 * input channel, many outputs: the GEMM, not the per-channel loop), several
 * channels and rows, pads, groups. */
Test(qconv, long_kernels) {
    check_conv((conv_case){.what = "1-D STFT k256 s128 C=1 M=258 W=1152", .nsp = 1, .N = 1,
                           .C = 1, .W = 1152, .M = 258, .KW = 256, .sw = 128, .dw = 1,
                           .group = 1}, 701);
    check_conv((conv_case){.what = "1-D k40 s7 C=3 M=21 W=203 pads, N=2", .nsp = 1, .N = 2,
                           .C = 3, .W = 203, .M = 21, .KW = 40, .sw = 7, .dw = 1, .group = 1,
                           .pads = {0, 19, 0, 5}, .bias = true}, 702);
    check_conv((conv_case){.what = "2x17 s(1,3) dilation (2,1) C=2 M=9 on 5x60", .nsp = 2,
                           .N = 1, .C = 2, .H = 5, .W = 60, .M = 9, .KH = 2, .KW = 17, .sh = 1,
                           .sw = 3, .dh = 2, .dw = 1, .group = 1, .pads = {1, 8, 0, 8}}, 703);
    check_conv((conv_case){.what = "1-D k33 s16 group 2, C=4 M=6", .nsp = 1, .N = 1, .C = 4,
                           .W = 150, .M = 6, .KW = 33, .sw = 16, .dw = 1, .group = 2,
                           .bias = true}, 704);
    check_conv((conv_case){.what = "one input channel, k3 s3 M=7 (no depthwise kernel)",
                           .nsp = 2, .N = 2, .C = 1, .H = 7, .W = 20, .M = 7, .KH = 3, .KW = 3,
                           .sh = 3, .sw = 3, .dh = 1, .dw = 1, .group = 1, .bias = true}, 705);
}

/* Small-K convs (stems) through the op on every path: the packed-lanes
 * kernel, short rows, K % 4 != 0, groups. */
Test(qconv, small_k_stems) {
    check_conv((conv_case){.what = "stem 3x3 s2 C=3 M=16 on 37x35", .nsp = 2, .N = 2, .C = 3,
                           .H = 37, .W = 35, .M = 16, .KH = 3, .KW = 3, .sh = 2, .sw = 2,
                           .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 1, 1}, .bias = true},
               301);
    check_conv((conv_case){.what = "3x3 s1 C=1 M=5 on 6x5 (panels over 4 rows)", .nsp = 2,
                           .N = 1, .C = 1, .H = 6, .W = 5, .M = 5, .KH = 3, .KW = 3, .sh = 1,
                           .sw = 1, .dh = 1, .dw = 1, .group = 1, .pads = {0, 2, 1, 0}}, 302);
    check_conv((conv_case){.what = "5x5 s2 C=2 groups 2, M=6, 21x40", .nsp = 2, .N = 1, .C = 4,
                           .H = 21, .W = 40, .M = 6, .KH = 5, .KW = 5, .sh = 2, .sw = 2,
                           .dh = 1, .dw = 1, .group = 2, .pads = {2, 1, 2, 3}, .bias = true}, 303);
    check_conv((conv_case){.what = "1-D k=3 s1 C=5 M=7 W=70", .nsp = 1, .N = 1, .C = 5, .W = 70,
                           .M = 7, .KW = 3, .sw = 1, .dw = 1, .group = 1, .pads = {0, 1, 0, 1},
                           .bias = true}, 304);
}

/* An im2col over 1 MiB (K 297 x 4087 pixels): on AVX-512 VBMI it is made
 * block by block inside the GEMM, each thread its own blocks, with 1 and 3
 * threads and on a group's half of the channels. */
Test(qconv, im2col_in_blocks) {
    check_conv((conv_case){.what = "3x3 pad 1, C=33 M=19 on 61x67, N=2", .nsp = 2, .N = 2,
                           .C = 33, .H = 61, .W = 67, .M = 19, .KH = 3, .KW = 3, .sh = 1,
                           .sw = 1, .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 1, 1},
                           .bias = true}, 801);
    check_conv((conv_case){.what = "3x3 dilation 2, group 2, C=66 M=10 on 63x65", .nsp = 2,
                           .N = 1, .C = 66, .H = 63, .W = 65, .M = 10, .KH = 3, .KW = 3,
                           .sh = 1, .sw = 1, .dh = 2, .dw = 2, .group = 2,
                           .pads = {2, 2, 2, 2}}, 802);
}

/* One output pixel (squeeze-excite convs): the images are the GEMM rows. */
Test(qconv, one_pixel_gemv) {
    static const int64_t shapes[][3] = {{1, 576, 144}, {3, 13, 17}, {2, 1, 1}, {1, 130, 33}};
    for (int i = 0; i < 4; i++)
        check_conv((conv_case){.what = "1x1 conv on a 1x1 plane", .nsp = 2, .N = shapes[i][0],
                               .C = shapes[i][1], .H = 1, .W = 1, .M = shapes[i][2], .KH = 1,
                               .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1,
                               .bias = i != 2}, 400 + (uint64_t)i);
    /* 1-D with one output position */
    check_conv((conv_case){.what = "1-D 1x1 on W=1", .nsp = 1, .N = 2, .C = 20, .W = 1, .M = 40,
                           .KW = 1, .sw = 1, .dw = 1, .group = 1, .bias = true}, 405);
}

/* Strided 1x1 (ResNet downsample) and 2-tap kernels on wide rows: the
 * im2col stride-2 copy on every path. */
Test(qconv, strided_im2col_wide_rows) {
    check_conv((conv_case){.what = "1x1 s2 C=8 M=20 on 9x71", .nsp = 2, .N = 1, .C = 8, .H = 9,
                           .W = 71, .M = 20, .KH = 1, .KW = 1, .sh = 2, .sw = 2, .dh = 1,
                           .dw = 1, .group = 1, .bias = true}, 501);
    check_conv((conv_case){.what = "2x2 s2 C=3 M=5 on 6x100, pads", .nsp = 2, .N = 1, .C = 3,
                           .H = 6, .W = 100, .M = 5, .KH = 2, .KW = 2, .sh = 2, .sw = 2,
                           .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 0, 1}}, 502);
}

/* The sliding row windows of the AVX-512 kernel: every (R, stride) pairing
 * of the MobileNet shapes and their neighbours, 1 and 3 threads. */
/* A CPU session on conv_build's graph for c (path NULL: the best), W stored
 * in layout l: output 0 (malloc'd) and the session's weights_bytes; owning:
 * the session owns the model (q8run's), which releases what prepare packed. */
static void *conv_session_own(conv_case *c, const char *path, q8_layout l, bool owning,
                              size_t *weights_bytes) {
    q8_graph *g = conv_build(c, path);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    for (int i = 0; l != Q8_LAYOUT_PLAIN && i < g->n_tensors; i++) {
        q8_tensor *t = g->tensors[i];
        q8_wshape ws;
        if (strcmp(t->name, "w") || !q8_layout_shape(t, &ws)) continue;
        int8_t *laid = q8_aligned_alloc(q8_layout_bytes(l, ws));
        q8_layout_pack(l, t->data, ws, laid);
        q8_tensor_free_data(t);
        t->data = laid;
        t->owns_data = true;
        t->layout = (uint8_t)l;
    }
    q8_model *m = NULL;
    q8_session *s = NULL;
    q8_session_options so = {.n_threads = 1, .device = Q8_DEVICE_CPU};
    cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *x = m->g->tensors[m->g->inputs[0]];
    if (owning) cr_assert_eq(q8_session_create_owning(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    else cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, NULL, x->dtype, x->dims, x->ndim, c->x, &err), Q8_OK,
                 "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *y;
    cr_assert_eq(q8_session_output(s, 0, &info, &y, &err), Q8_OK, "%s", err.msg);
    size_t nb = (size_t)(c->N * c->M * c->OH * c->OW);
    void *out = malloc(nb);
    memcpy(out, y, nb);
    q8_memory_info mi;
    q8_session_memory(s, &mi);
    *weights_bytes = mi.weights_bytes;
    q8_session_free(s);
    if (!owning) q8_model_free(m);
    return out;
}

static void *conv_session(conv_case *c, const char *path, q8_layout l, size_t *weights_bytes) {
    return conv_session_own(c, path, l, false, weights_bytes);
}

/* The bias is folded into init at prepare, so a session that owns its model
 * releases it (q8run's; a .q8's varint bias is expanded into owned memory),
 * and W too where the kernel packed it; the output is the same. One conv per
 * kind of prepare: the im2col GEMM (K = 27: rows4 packed from plain W), the
 * one-pixel GEMV, depthwise, transposed (W always packed). */
Test(qconv, owning_session_releases_bias_and_packed_weights) {
    conv_case cs[] = {
        {.what = "gemm", .nsp = 2, .N = 1, .C = 6, .H = 6, .W = 7, .M = 20, .KH = 3, .KW = 3,
         .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 2, .pads = {1, 1, 1, 1}, .bias = true},
        {.what = "gemv", .nsp = 2, .N = 1, .C = 64, .H = 1, .W = 1, .M = 48, .KH = 1, .KW = 1,
         .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .bias = true},
        {.what = "dw", .nsp = 2, .N = 1, .C = 16, .H = 9, .W = 11, .M = 16, .KH = 3, .KW = 3,
         .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 16, .pads = {1, 1, 1, 1}, .bias = true},
        {.what = "transposed", .transpose = true, .nsp = 2, .N = 1, .C = 8, .H = 5, .W = 6,
         .M = 12, .KH = 2, .KW = 2, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .group = 1,
         .bias = true},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        conv_case *c = &cs[i];
        conv_setup(c, 40 + i);
        c->qa = k_acts[1]; /* int8 output */
        size_t wb, wb_own, bias = 4 * (size_t)c->M;
        void *y = conv_session_own(c, NULL, Q8_LAYOUT_PLAIN, false, &wb);
        void *y_own = conv_session_own(c, NULL, Q8_LAYOUT_PLAIN, true, &wb_own);
        size_t ny = (size_t)(c->N * c->M * c->OH * c->OW);
        cr_assert(memcmp(y, y_own, ny) == 0, "%s: outputs differ", c->what);
        bool packed = i == 0 || c->transpose;
        size_t w = packed ? (size_t)(c->M * c->C / c->group * c->KH * c->KW) : 0;
        cr_assert_leq(wb_own + bias + w, wb, "%s: %zu weight bytes owning, %zu not", c->what,
                      wb_own, wb);
        free(y);
        free(y_own);
        conv_free(c);
    }
}

/* A small conv's blob is its header and 12 bytes a channel (init, mult,
 * shift, 16-byte aligned), not 64 bytes an array plus an inline LeakyRelu
 * table: an 8-channel squeeze-excite conv, read in place (plain W as rows),
 * its bias released by the owning session. */
Test(qconv, small_conv_blob_is_small) {
    conv_case c = {.what = "se8", .nsp = 2, .N = 1, .C = 64, .H = 1, .W = 1, .M = 8, .KH = 1,
                   .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .bias = true};
    conv_setup(&c, 60);
    c.qa = k_acts[1]; /* int8 output, no activation */
    size_t wb;
    void *y = conv_session_own(&c, NULL, Q8_LAYOUT_PLAIN, true, &wb);
    size_t w = (size_t)(c.M * c.C), blob = wb - w;
    cr_assert_leq(blob, 12 * (size_t)c.M + 192, "%zu blob bytes for 8 channels", blob);
    free(y);
    conv_free(&c);
}

/* A session that owns its model releases W (plain here: packed as lanes)
 * and the bias (folded into init) after prepare; same output. */
Test(qgemm, owning_session_releases_bias_and_packed_weights) {
    int64_t M = 3, K = 40, N = 24;
    gemm_op_case c = {.ndim = 2, .adims = {M, K}, .N = N, .bias = true, .qa = k_acts[1]};
    q8t_rng r = q8t_seed(50);
    c.a = rand_i8(&r, M * K, -128);
    c.w = rand_i8(&r, N * K, -127);
    c.b = rand_bias(&r, N);
    c.sa = 0.02f;
    c.sw = rand_scales(&r, N, 0.001f, 0.01f);
    int8_t y[2][3 * 24];
    size_t wb[2];
    for (int own = 0; own < 2; own++) {
        q8_graph *g = qgemm_build(&c, NULL);
        q8_error err = {0};
        cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
        q8_model *m = NULL;
        q8_session *s = NULL;
        q8_session_options so = {.n_threads = 1, .device = Q8_DEVICE_CPU};
        cr_assert_eq(q8_model_from_graph(g, "test", &m, &err), Q8_OK, "%s", err.msg);
        if (own) cr_assert_eq(q8_session_create_owning(m, &so, &s, &err), Q8_OK, "%s", err.msg);
        else cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_session_set_input(s, NULL, Q8_I8, c.adims, 2, c.a, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
        q8_tensor_info info;
        const void *out;
        cr_assert_eq(q8_session_output(s, 0, &info, &out, &err), Q8_OK, "%s", err.msg);
        memcpy(y[own], out, sizeof y[own]);
        q8_memory_info mi;
        q8_session_memory(s, &mi);
        wb[own] = mi.weights_bytes;
        q8_session_free(s);
        if (!own) q8_model_free(m);
    }
    cr_assert(memcmp(y[0], y[1], sizeof y[0]) == 0);
    cr_assert_leq(wb[1] + (size_t)(N * K + 4 * N), wb[0], "%zu weight bytes owning, %zu not",
                  wb[1], wb[0]);
    free(c.a);
    free(c.w);
    free(c.b);
    free(c.sw);
}

/* The layout a .q8 stores conv_build's W in for c (q8_layout_to_store). */
static q8_layout conv_stored_layout(conv_case *c) {
    q8_graph *g = conv_build(c, NULL);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_layout l = q8_layout_to_store(g, q8_graph_find(g, "w"));
    q8_graph_free(g);
    return l;
}

/* Depthwise weights stored as rows4 ([M][kp], what quantize writes): the
 * AVX-512 kernel reads them in place, so the session holds fewer bytes than
 * with plain weights (which it packs into the same [M][kp]), and every
 * kernel gives the same bytes from either. */
Test(qconv, depthwise_rows4_read_in_place) {
    conv_case c = {.what = "dw", .nsp = 2, .N = 1, .C = 32, .H = 10, .W = 20, .M = 32, .KH = 3,
                   .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 32,
                   .pads = {1, 1, 1, 1}, .bias = true};
    conv_setup(&c, 7);
    c.qa = k_acts[1]; /* int8 output */
    size_t wb_plain, wb_rows;
    void *y_plain = conv_session(&c, NULL, Q8_LAYOUT_PLAIN, &wb_plain);
    void *y_rows = conv_session(&c, NULL, Q8_LAYOUT_ROWS4, &wb_rows);
    cr_assert(memcmp(y_plain, y_rows, (size_t)(c.M * c.OH * c.OW)) == 0);
    for (int p = 0; p < N_PATHS; p++) { /* the AVX2 kernel and the C loop pack from rows4 */
        if (!q8_igemm_path_supported(k_paths[p])) continue;
        size_t wb;
        void *y = conv_session(&c, q8_igemm_path_name(k_paths[p]), Q8_LAYOUT_ROWS4, &wb);
        cr_assert(memcmp(y_plain, y, (size_t)(c.M * c.OH * c.OW)) == 0, "path %s",
                  q8_igemm_path_name(k_paths[p]));
        free(y);
    }
    /* quantize stores it so, a third more bytes notwithstanding */
    cr_assert_eq(conv_stored_layout(&c), Q8_LAYOUT_ROWS4);
    /* rows4 stores 3 more bytes per channel; a packed copy would add 12 */
    if (q8_igemm_path_supported(Q8_IGEMM_AVX512VNNI) && q8_qdw_has_vbmi())
        cr_assert_lt(wb_rows, wb_plain, "rows4: %zu weight bytes, plain: %zu", wb_rows,
                     wb_plain);
    free(y_plain);
    free(y_rows);
    conv_free(&c);
}

/* The layout quantize stores conv c's weight in. */
static q8_layout layout_of_case(conv_case c, uint64_t seed) {
    conv_setup(&c, seed);
    q8_layout l = conv_stored_layout(&c);
    conv_free(&c);
    return l;
}

/* The convs q8_qconv_implicit takes run as the implicit conv
 * (kernels/cpu/qconv_implicit.h): a padded, 4-channel interleaved copy of X
 * read in place by the AVX-512 tile (packed block by block for the other
 * kernels), the padded width computed and dropped. Awkward shapes: rows
 * narrower than a vector (a 9x1 kernel on rows of 5: a 16-lane vector spans
 * 4 grid rows), one output column, channels not a multiple of 4, groups,
 * asymmetric and all-padding rows, 1-D, two images. */
Test(qconv, implicit_stride_one) {
    const conv_case cases[] = {
        {.what = "implicit 9x1 pad 4, C=16 M=13, 14x5 (grid rows of 5)", .nsp = 2, .N = 2,
         .C = 16, .H = 14, .W = 5, .M = 13, .KH = 9, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .group = 1, .pads = {4, 0, 4, 0}, .bias = true},
        {.what = "implicit 3x3 valid, C=20 M=7, 19x35", .nsp = 2, .N = 1, .C = 20, .H = 19,
         .W = 35, .M = 7, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1},
        {.what = "implicit 9x1 one output column, C=8 M=6, 12x1", .nsp = 2, .N = 1, .C = 8,
         .H = 12, .W = 1, .M = 6, .KH = 9, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .group = 1, .bias = true},
        {.what = "implicit 5x5 asymmetric pads, C=12 M=40, 9x60", .nsp = 2, .N = 1, .C = 12,
         .H = 9, .W = 60, .M = 40, .KH = 5, .KW = 5, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .group = 1, .pads = {2, 1, 1, 3}, .bias = true},
        {.what = "implicit group 2, Cg=18 (cp 20), 3x3 pad (5,1), 4x33", .nsp = 2, .N = 2,
         .C = 36, .H = 4, .W = 33, .M = 10, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
         .group = 2, .pads = {5, 1, 5, 1}, .bias = true},
        {.what = "implicit 1-D k9 pad 4, C=8 M=9, 130", .nsp = 1, .N = 1, .C = 8, .W = 130,
         .M = 9, .KW = 9, .sw = 1, .dw = 1, .group = 1, .pads = {0, 4, 0, 4}, .bias = true},
        {.what = "implicit 3x3 pad 1, C=64 M=70, 33x61 (many panels)", .nsp = 2, .N = 1,
         .C = 64, .H = 33, .W = 61, .M = 70, .KH = 3, .KW = 3, .sh = 1, .sw = 1, .dh = 1,
         .dw = 1, .group = 1, .pads = {1, 1, 1, 1}, .bias = true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(layout_of_case(cases[i], 40 + i), Q8_LAYOUT_TAPS4, "%s", cases[i].what);
        check_conv(cases[i], 40 + i);
    }
    /* not the implicit conv (stored and run as before): taps4 would pad C=10
     * by a fifth; rows of 64 (the im2col's panels fit them); 3 taps; rows
     * of 19 for 17 outputs (2/19 of the work dropped); a dilation */
    const conv_case others[] = {
        {.what = "C=10", .nsp = 2, .N = 1, .C = 10, .H = 6, .W = 33, .M = 4, .KH = 3, .KW = 3,
         .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1},
        {.what = "OW=64", .nsp = 2, .N = 1, .C = 16, .H = 6, .W = 64, .M = 4, .KH = 3, .KW = 3,
         .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 1, 1}},
        {.what = "3 taps", .nsp = 2, .N = 1, .C = 16, .H = 6, .W = 33, .M = 4, .KH = 1, .KW = 3,
         .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .pads = {0, 1, 0, 1}},
        {.what = "W=17", .nsp = 2, .N = 1, .C = 16, .H = 6, .W = 17, .M = 4, .KH = 3, .KW = 3,
         .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .pads = {1, 1, 1, 1}},
        {.what = "dilation 2", .nsp = 2, .N = 1, .C = 16, .H = 9, .W = 90, .M = 4, .KH = 3,
         .KW = 3, .sh = 1, .sw = 1, .dh = 2, .dw = 2, .group = 1, .pads = {2, 2, 2, 2}},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        q8_layout l = layout_of_case(others[i], 50 + i);
        cr_assert(l == Q8_LAYOUT_PLAIN || l == Q8_LAYOUT_ROWS4, "%s: %s", others[i].what,
                  q8_layout_name(l));
    }
}

/* The implicit conv reads taps4 weights in place: its session holds fewer
 * weight bytes than one given plain weights (which it packs into taps4),
 * and every kernel gives the same bytes from either. */
Test(qconv, implicit_reads_taps4_in_place) {
    conv_case c = {.what = "imp", .nsp = 2, .N = 1, .C = 32, .H = 12, .W = 33, .M = 24, .KH = 3,
                   .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1,
                   .pads = {1, 1, 1, 1}, .bias = true};
    conv_setup(&c, 61);
    c.qa = k_acts[1]; /* int8 output */
    size_t n = (size_t)(c.M * c.OH * c.OW), wb_plain, wb_taps;
    void *y_plain = conv_session(&c, NULL, Q8_LAYOUT_PLAIN, &wb_plain);
    void *y_taps = conv_session(&c, NULL, Q8_LAYOUT_TAPS4, &wb_taps);
    cr_assert(memcmp(y_plain, y_taps, n) == 0);
    for (int p = 0; p < N_PATHS; p++) {
        if (!q8_igemm_path_supported(k_paths[p])) continue;
        size_t wb;
        void *y = conv_session(&c, q8_igemm_path_name(k_paths[p]), Q8_LAYOUT_TAPS4, &wb);
        cr_assert(memcmp(y_plain, y, n) == 0, "path %s", q8_igemm_path_name(k_paths[p]));
        cr_assert_eq(wb, wb_taps, "path %s: a packed copy", q8_igemm_path_name(k_paths[p]));
        free(y);
    }
    cr_assert_geq(wb_plain, wb_taps + (size_t)(c.M * c.C * 9), "plain %zu, taps4 %zu", wb_plain,
                  wb_taps);
    free(y_plain);
    free(y_taps);
    conv_free(&c);
}

/* A file from before version 10 stores an implicit conv's weight as the
 * old rule said (rows4 here: K = 162): it loads, laid out again as taps4,
 * and gives the bytes of a session on taps4 weights. */
Test(qconv, version_9_rows4_weight_is_laid_out_again) {
    conv_case c = {.what = "v9", .nsp = 2, .N = 1, .C = 18, .H = 9, .W = 33, .M = 5, .KH = 3,
                   .KW = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1,
                   .pads = {1, 1, 1, 1}, .bias = true};
    conv_setup(&c, 62);
    c.qa = k_acts[1];
    size_t wb_taps;
    void *want = conv_session(&c, NULL, Q8_LAYOUT_TAPS4, &wb_taps);
    q8_graph *g = conv_build(&c, NULL);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_tensor *w = g->tensors[q8_graph_find(g, "w")];
    q8_wshape ws;
    cr_assert(q8_layout_shape(w, &ws));
    int8_t *rows = q8_aligned_alloc(q8_layout_bytes(Q8_LAYOUT_ROWS4, ws));
    q8_layout_pack(Q8_LAYOUT_ROWS4, w->data, ws, rows);
    q8_tensor_free_data(w);
    w->data = rows;
    w->owns_data = true;
    w->layout = Q8_LAYOUT_ROWS4;
    uint8_t *buf;
    size_t len;
    cr_assert_eq(q8_file_encode_version(g, NULL, 9, &buf, &len, &err), Q8_OK, "%s", err.msg);
    q8_graph_free(g);
    char *dir = q8t_tmpdir("implicit"), path[512];
    snprintf(path, sizeof path, "%s/v9.q8", dir);
    q8t_write_file(path, buf, len);
    free(buf);
    q8_model *m = NULL;
    q8_session *s = NULL;
    q8_session_options so = {.n_threads = 2, .device = Q8_DEVICE_CPU};
    cr_assert_eq(q8_model_load(path, NULL, &m, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(m->g->tensors[q8_graph_find(m->g, "w")]->layout, Q8_LAYOUT_TAPS4);
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *x = m->g->tensors[m->g->inputs[0]];
    cr_assert_eq(q8_session_set_input(s, NULL, x->dtype, x->dims, x->ndim, c.x, &err), Q8_OK,
                 "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *y;
    cr_assert_eq(q8_session_output(s, 0, &info, &y, &err), Q8_OK, "%s", err.msg);
    cr_assert(memcmp(y, want, (size_t)(c.M * c.OH * c.OW)) == 0);
    q8_session_free(s);
    q8_model_free(m);
    free(want);
    conv_free(&c);
    q8t_rm_rf(dir);
    free(dir);
}

/* A 1x1 conv on one pixel with few output channels (squeeze-excite): the
 * GEMM reads its plain weights in place as rows instead of packing a copy
 * padded to 16 lanes (which the file would not store: > 1/8 padding). */
Test(qconv, few_channels_one_pixel_reads_plain_rows) {
    conv_case c = {.what = "se", .nsp = 2, .N = 1, .C = 256, .H = 1, .W = 1, .M = 4, .KH = 1,
                   .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .bias = true};
    conv_setup(&c, 9);
    c.qa = k_acts[1]; /* int8 output */
    size_t wb;
    void *y = conv_session(&c, NULL, Q8_LAYOUT_PLAIN, &wb);
    size_t plain = (size_t)(c.M * c.C);
    size_t lanes = q8_layout_bytes(Q8_LAYOUT_LANES16, (q8_wshape){c.M, c.C, 1});
    cr_assert_lt(wb - plain - 4 * (size_t)c.M, lanes, "%zu weight bytes: a packed copy", wb);
    cr_assert_eq(conv_stored_layout(&c), Q8_LAYOUT_PLAIN);
    free(y);
    conv_free(&c);
    /* 64 lanes for 60 channels: the GEMV, its weights stored as lanes */
    conv_case c60 = {.what = "fc", .nsp = 2, .N = 1, .C = 256, .H = 1, .W = 1, .M = 60, .KH = 1,
                     .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1};
    conv_setup(&c60, 10);
    c60.qa = k_acts[1];
    cr_assert_eq(conv_stored_layout(&c60), Q8_LAYOUT_LANES16);
    conv_free(&c60);
}

Test(qconv, depthwise_simd_row_windows) {
    const int64_t p2[4] = {2, 2, 2, 2}, p1[4] = {1, 1, 1, 1}, pa[4] = {1, 2, 2, 0};
    check_conv_acts(dw_case("5x5 s1 7x7 (R 2, slide 2)", 9, 7, 7, 5, 1, p2), 601, k_acts, 2);
    check_conv_acts(dw_case("5x5 s2 14x14 (R 2, slide 4)", 9, 14, 14, 5, 2, p2), 602, k_acts, 2);
    check_conv_acts(dw_case("5x5 s1 4x4 (R 4, slide 4)", 9, 4, 4, 5, 1, p2), 603, k_acts, 2);
    check_conv_acts(dw_case("3x3 s2 8x8 (R 4, reload)", 9, 8, 8, 3, 2, p1), 604, k_acts, 2);
    check_conv_acts(dw_case("7x7 s1 9x6 asym (R 2)", 5, 9, 6, 7, 1, pa), 605, k_acts, 2);
    check_conv_acts(dw_case("5x5 s1 14x14 (R 1, slide 1)", 9, 14, 14, 5, 1, p2), 606, k_acts, 2);
    check_conv_acts(dw_case("3x3 s2 28x28 (R 1, slide 2)", 9, 28, 28, 3, 2, p1), 607, k_acts, 2);
    check_conv_acts(dw_case("3x3 s1 28x50 (3 blocks, slide 1)", 5, 28, 50, 3, 1, pa), 608,
                    k_acts, 2);
    conv_case c = dw_case("3x3 s1 dilation (2,1) (R 1, reload)", 5, 12, 40, 3, 1, p1);
    c.dh = 2;
    check_conv_acts(c, 609, k_acts, 2);
    c = dw_case("3x3 s(3,1) (R 1, reload)", 5, 17, 30, 3, 1, pa);
    c.sh = 3;
    check_conv_acts(c, 610, k_acts, 2);
}

/* QuantizeLinear and DequantizeLinear with the scale and zero point computed
 * at run time (graph inputs here; DynamicQuantizeLinear's expanded form),
 * per tensor and per axis, against the formulas. */
Test(qdq, run_time_scale_and_zero_point) {
    q8t_rng r = q8t_seed(263);
    for (int it = 0; it < 8; it++) {
        bool per_axis = it % 2, i8 = (it / 2) % 2, dq = it / 4;
        int64_t rows = 3, cols = 5, cnt = per_axis ? cols : 1;
        float x[15], s[5];
        uint8_t z[5], xq[15];
        q8t_fill(&r, x, 15, -40, 40);
        for (int64_t c = 0; c < cnt; c++) {
            s[c] = 0.05f + (float)(q8t_next(&r) % 100) / 200.0f;
            z[c] = (uint8_t)(q8t_next(&r) % 256);
        }
        for (int i = 0; i < 15; i++) xq[i] = (uint8_t)(q8t_next(&r) % 256);
        q8_dtype qt = i8 ? Q8_I8 : Q8_U8;
        q8t_in ins[3] = {{"x", dq ? qt : Q8_F32, 2, {rows, cols}, NULL},
                         {"s", Q8_F32, per_axis ? 1 : 0, {cnt}, NULL},
                         {"z", qt, per_axis ? 1 : 0, {cnt}, NULL}};
        q8_graph *g = q8t_graph1(dq ? "DequantizeLinear" : "QuantizeLinear", ins, 3, 1);
        g->opset = 13;
        const void *data[3] = {dq ? (const void *)xq : x, s, z};
        void *out[1];
        q8_tensor_info info[1];
        q8_error err = {0};
        cr_assert_eq(q8t_run(g, data, 2, out, info, 1, &err), Q8_OK, "%s", err.msg);
        for (int i = 0; i < 15; i++) {
            int c = per_axis ? i % 5 : 0;
            int32_t zc = i8 ? (int8_t)z[c] : z[c];
            if (dq) {
                int32_t q = i8 ? (int8_t)xq[i] : xq[i];
                float want = (float)(q - zc) * s[c], got = ((float *)out[0])[i];
                cr_assert_float_eq(got, want, 1e-6f * (1 + fabsf(want)), "case %d [%d]", it, i);
            } else {
                double v = rint((double)(x[i] / s[c])) + zc;
                int32_t lo = i8 ? -128 : 0, hi = i8 ? 127 : 255;
                int32_t want = v < lo ? lo : v > hi ? hi : (int32_t)v;
                int32_t got = i8 ? ((int8_t *)out[0])[i] : ((uint8_t *)out[0])[i];
                cr_assert_eq(got, want, "case %d [%d]: %d, want %d", it, i, got, want);
            }
        }
        free(out[0]);
    }
}
