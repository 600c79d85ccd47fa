/* INT8: requantization, the INT8 GEMM on every code path, the q8.Q* ops and
 * QuantizeLinear/DequantizeLinear. Everything integer is compared for exact
 * equality with plain references written here from docs/int8-ops.md (int64
 * loops, __int128 for the requantization). */
#include <math.h>
#include <string.h>

#include "igemm.h"
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
    q8_act a = {Q8_ACT_RELU, -INFINITY, INFINITY, 0};
    q8_act_i8_bounds(&a, 0.1f, &lo, &hi);
    cr_assert(lo == 0 && hi == 127);
    a = (q8_act){Q8_ACT_CLIP, 0.0f, 6.0f, 0};
    q8_act_i8_bounds(&a, 0.05f, &lo, &hi); /* 6 / 0.05 = 120 */
    cr_assert(lo == 0 && hi == 120, "%d %d", lo, hi);
    a = (q8_act){Q8_ACT_CLIP, -1.0f, 1.0f, 0};
    q8_act_i8_bounds(&a, 0.004f, &lo, &hi); /* +-250 -> saturate */
    cr_assert(lo == -128 && hi == 127);
    a = (q8_act){Q8_ACT_CLIP, -0.25f, 0.25f, 0};
    q8_act_i8_bounds(&a, 0.5f, &lo, &hi); /* +-0.5 -> even: 0 */
    cr_assert(lo == 0 && hi == 0, "%d %d", lo, hi);
    a = (q8_act){Q8_ACT_CLIP, -0.75f, 0.75f, 0};
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

static const q8_igemm_path k_paths[] = {Q8_IGEMM_C, Q8_IGEMM_AVX2, Q8_IGEMM_AVXVNNI,
                                        Q8_IGEMM_AVX512VNNI};
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
                if (I * J * K > 300000 && !(I * J * K <= 70000000 && (a + b + k) % 7 == 0))
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
    struct { q8_act act; } acts[] = {
        {{Q8_ACT_NONE, -INFINITY, INFINITY, 0}}, {{Q8_ACT_RELU, -INFINITY, INFINITY, 0}},
        {{Q8_ACT_CLIP, -0.5f, 1.5f, 0}}, {{Q8_ACT_LEAKY, -INFINITY, INFINITY, 0.1f}},
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
                    if (acts[ai].act.kind == Q8_ACT_LEAKY) e.leaky_lut = lut;
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
    q8_pool_free(pool);
}

Test(igemm, reports_paths) {
    for (int p = 0; p < N_PATHS; p++)
        cr_log_info("igemm path %s: %s", q8_igemm_path_name(k_paths[p]),
                    q8_igemm_path_supported(k_paths[p]) ? "supported" : "not supported here");
    cr_assert(q8_igemm_path_supported(Q8_IGEMM_C));
}
