/* Elementwise ops (src/core/ops/, kernels/cpu/ops/): every op against a plain
 * reference written here, over broadcasting shapes, int paths, special
 * values, 1 vs 3 threads, in-place reuse and error messages. */
#include <float.h>
#include <string.h>

#include "ops/broadcast.h"
#include "ewchain_eval.h"
#include "vmath.h"
#include "vmath_x86.h"
#include "half.h"
#include "model.h"
#include "passes.h"
#include "planner.h"
#include "testutil.h"

/* ---------- running one op ---------- */

typedef void (*attr_fn)(q8_graph *g);

/* Build a one-node graph: ins[i].data set = constant, else a graph input
 * fed from data[i]. */
static q8_status run_op(const char *op, const q8t_in *ins, int n_in, const void *const *data,
                        attr_fn attrs, int opset, int threads, void **out, q8_tensor_info *info,
                        q8_error *err) {
    q8_graph *g = q8t_graph1(op, ins, n_in, 1);
    if (opset) g->opset = opset;
    if (attrs) attrs(g);
    const void *feed[16];
    int nf = 0;
    for (int i = 0; i < n_in; i++)
        if (ins[i].name && !ins[i].data) feed[nf++] = data ? data[i] : NULL;
    memset(err, 0, sizeof *err);
    return q8t_run(g, feed, threads, out, info, 1, err);
}

static int64_t numel_of(const int64_t *d, int nd) {
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= d[i];
    return n;
}

/* Numpy broadcast of two shapes (the test's own, for references). */
static bool ref_bshape(const int64_t *a, int na, const int64_t *b, int nb, int64_t *o, int *no) {
    int r = na > nb ? na : nb;
    for (int i = 0; i < r; i++) {
        int64_t da = i - (r - na) >= 0 ? a[i - (r - na)] : 1;
        int64_t db = i - (r - nb) >= 0 ? b[i - (r - nb)] : 1;
        if (da != db && da != 1 && db != 1) return false;
        o[i] = da == 1 ? db : da;
    }
    *no = r;
    return true;
}

/* Flat index into an input of shape id[ind] for output element i. */
static int64_t bidx(const int64_t *od, int ond, int64_t i, const int64_t *id, int ind) {
    int64_t idx = 0, stride = 1;
    for (int d = ond - 1; d >= 0; d--) {
        int64_t c = i % od[d];
        i /= od[d];
        int k = d - (ond - ind);
        if (k >= 0) {
            if (id[k] != 1) idx += c * stride;
            stride *= id[k];
        }
    }
    return idx;
}

static void check_shape(const q8_tensor_info *info, const int64_t *d, int nd) {
    cr_assert_eq(info->ndim, nd, "rank %d, want %d", info->ndim, nd);
    for (int i = 0; i < nd; i++) cr_assert_eq(info->dims[i], d[i], "dim %d", i);
}

typedef struct shp {
    int nd;
    int64_t d[Q8_MAX_DIMS];
} shp;

static const struct {
    shp a, b;
} pairs[] = {
    {{1, {13}}, {1, {13}}},
    {{0, {0}}, {1, {13}}},
    {{1, {13}}, {0, {0}}},
    {{2, {9, 7}}, {1, {7}}},
    {{1, {7}}, {2, {9, 7}}},
    {{2, {9, 7}}, {2, {9, 1}}},
    {{3, {2, 1, 5}}, {2, {3, 1}}},
    {{4, {1, 3, 1, 1}}, {4, {2, 3, 4, 5}}},
    {{4, {2, 3, 4, 5}}, {3, {3, 1, 1}}},
    {{0, {0}}, {0, {0}}},
    {{3, {4, 0, 3}}, {1, {3}}},
    {{2, {5, 1}}, {2, {1, 6}}},
    {{4, {64, 3, 17, 19}}, {3, {3, 1, 1}}}, /* large: split over threads */
    {{2, {300, 257}}, {1, {257}}},
    {{3, {40, 1, 900}}, {3, {1, 50, 1}}},
};
#define N_PAIRS ((int)(sizeof pairs / sizeof pairs[0]))

/* ---------- broadcast plans ---------- */

static q8_bcast *plan2(const int64_t *o, int no, const int64_t *a, int na, const int64_t *b,
                       int nb) {
    q8_bcast *p = calloc(1, q8_bcast_bytes(2));
    const int64_t *in[2] = {a, b};
    int nd[2] = {na, nb};
    q8_bcast_plan_init(p, o, no, 2, in, nd);
    return p;
}

Test(math_bcast, plans_collapse) {
    /* [N,C,H,W] + [C,1,1]: three dims, the bias walks C only. */
    int64_t o[4] = {2, 3, 4, 5}, b[3] = {3, 1, 1};
    q8_bcast *p = plan2(o, 4, o, 4, b, 3);
    cr_assert_eq(p->ndim, 3);
    cr_assert_eq(p->dims[0], 2);
    cr_assert_eq(p->dims[1], 3);
    cr_assert_eq(p->dims[2], 20);
    cr_assert_eq(p->strides[Q8_MAX_DIMS + 0], 0);
    cr_assert_eq(p->strides[Q8_MAX_DIMS + 1], 1);
    cr_assert_eq(p->strides[Q8_MAX_DIMS + 2], 0);
    cr_assert_eq(p->strides[2], 1);
    free(p);
    /* Same shapes: one flat dim. */
    p = plan2(o, 4, o, 4, o, 4);
    cr_assert_eq(p->ndim, 1);
    cr_assert_eq(p->dims[0], 120);
    free(p);
    /* Scalar: one flat dim, step 0. */
    p = plan2(o, 4, o, 4, NULL, 0);
    cr_assert_eq(p->ndim, 1);
    cr_assert_eq(p->strides[Q8_MAX_DIMS], 0);
    free(p);
    /* Rank 0 output. */
    p = plan2(NULL, 0, NULL, 0, NULL, 0);
    cr_assert_eq(p->ndim, 1);
    cr_assert_eq(p->dims[0], 1);
    cr_assert_eq(p->numel, 1);
    free(p);
    /* [9,7] x [9,1] */
    int64_t o2[2] = {9, 7}, b2[2] = {9, 1};
    p = plan2(o2, 2, o2, 2, b2, 2);
    cr_assert_eq(p->ndim, 2);
    cr_assert_eq(p->strides[Q8_MAX_DIMS + 0], 1);
    cr_assert_eq(p->strides[Q8_MAX_DIMS + 1], 0);
    free(p);
}

/* ---------- binary float ops ---------- */

typedef float (*fbin)(float, float);
static float r_add(float a, float b) { return a + b; }
static float r_sub(float a, float b) { return a - b; }
static float r_mul(float a, float b) { return a * b; }
static float r_div(float a, float b) { return a / b; }
static float r_pow(float a, float b) { return (float)pow(a, b); }
static float r_max(float a, float b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static float r_min(float a, float b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static float r_fmod(float a, float b) { return fmodf(a, b); }

static void attr_fmod1(q8_graph *g) { q8t_attr_int(g, "fmod", 1); }

static const struct {
    const char *op;
    fbin ref;
    float lo, hi; /* input range */
    attr_fn attrs;
} fbins[] = {
    {"Add", r_add, -3, 3, NULL}, {"Sub", r_sub, -3, 3, NULL},        {"Mul", r_mul, -3, 3, NULL},
    {"Div", r_div, -3, 3, NULL}, {"Pow", r_pow, 0.1f, 3, NULL},      {"Max", r_max, -3, 3, NULL},
    {"Min", r_min, -3, 3, NULL}, {"Mod", r_fmod, -3, 3, attr_fmod1}, {"Sum", r_add, -3, 3, NULL},
};

Test(math_binary, float_ops_broadcast_threads) {
    q8t_rng r = q8t_seed(1);
    for (size_t o = 0; o < sizeof fbins / sizeof fbins[0]; o++) {
        for (int pi = 0; pi < N_PAIRS; pi++) {
            const shp *sa = &pairs[pi].a, *sb = &pairs[pi].b;
            int64_t od[Q8_MAX_DIMS];
            int ond = 0;
            cr_assert(ref_bshape(sa->d, sa->nd, sb->d, sb->nd, od, &ond));
            int64_t na = numel_of(sa->d, sa->nd), nb = numel_of(sb->d, sb->nd);
            int64_t no = numel_of(od, ond);
            float *a = malloc(sizeof(float) * (size_t)(na + 1));
            float *b = malloc(sizeof(float) * (size_t)(nb + 1));
            float *want = malloc(sizeof(float) * (size_t)(no + 1));
            q8t_fill(&r, a, na, fbins[o].lo, fbins[o].hi);
            q8t_fill(&r, b, nb, fbins[o].lo, fbins[o].hi);
            for (int64_t i = 0; i < no; i++)
                want[i] = fbins[o].ref(a[bidx(od, ond, i, sa->d, sa->nd)],
                                       b[bidx(od, ond, i, sb->d, sb->nd)]);
            q8t_in ins[2] = {{"a", Q8_F32, sa->nd, {0}, NULL}, {"b", Q8_F32, sb->nd, {0}, NULL}};
            memcpy(ins[0].dims, sa->d, sizeof sa->d);
            memcpy(ins[1].dims, sb->d, sizeof sb->d);
            const void *data[2] = {a, b};
            void *out[2][1];
            for (int t = 0; t < 2; t++) {
                q8_tensor_info info;
                q8_error err;
                cr_assert_eq(run_op(fbins[o].op, ins, 2, data, fbins[o].attrs, 0, t ? 3 : 1, out[t],
                                    &info, &err),
                             Q8_OK, "%s: %s", fbins[o].op, err.msg);
                check_shape(&info, od, ond);
                char what[64];
                snprintf(what, sizeof what, "%s pair %d", fbins[o].op, pi);
                float rtol = strcmp(fbins[o].op, "Pow") == 0 ? 2e-7f : 0;
                q8t_assert_close(out[t][0], want, no, rtol, 0, what);
            }
            cr_assert(memcmp(out[0][0], out[1][0], sizeof(float) * (size_t)no) == 0,
                      "%s pair %d: 1 and 3 threads differ", fbins[o].op, pi);
            free(out[0][0]);
            free(out[1][0]);
            free(a);
            free(b);
            free(want);
        }
    }
}

/* A constant input is folded at load time (pool NULL): same results. */
Test(math_binary, constant_folded) {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30};
    q8t_in ins[2] = {{"a", Q8_F32, 2, {2, 3}, a}, {"b", Q8_F32, 1, {3}, b}};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Mul", ins, 2, NULL, NULL, 0, 1, out, &info, &err), Q8_OK, "%s", err.msg);
    float want[6] = {10, 40, 90, 40, 100, 180};
    q8t_assert_close(out[0], want, 6, 0, 0, "folded Mul");
    free(out[0]);
}

Test(math_binary, special_values) {
    float a[8] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e38f, 1.0f, -1.0f};
    float b[8] = {1.0f, INFINITY, INFINITY, 0.0f, 0.0f, 1e38f, 0.0f, -0.0f};
    q8t_in ins[2] = {{"a", Q8_F32, 1, {8}, NULL}, {"b", Q8_F32, 1, {8}, NULL}};
    const void *data[2] = {a, b};
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    fbin refs[] = {r_add, r_sub, r_mul, r_div, r_max, r_min};
    for (int o = 0; o < 6; o++) {
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op(ops[o], ins, 2, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        for (int i = 0; i < 8; i++) {
            float w = refs[o](a[i], b[i]), g = ((float *)out[0])[i];
            if (isnan(w))
                cr_assert(isnan(g), "%s[%d]: got %g want NaN", ops[o], i, g);
            else
                cr_assert(g == w && signbit(g) == signbit(w), "%s[%d]: got %g want %g", ops[o], i,
                          g, w);
        }
        free(out[0]);
    }
    /* NaN on either side of Max/Min propagates. */
    float c[2] = {1.0f, NAN}, d[2] = {NAN, 1.0f};
    const void *data2[2] = {c, d};
    ins[0].dims[0] = ins[1].dims[0] = 2;
    for (int o = 4; o < 6; o++) {
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op(ops[o], ins, 2, data2, NULL, 0, 1, out, &info, &err), Q8_OK);
        cr_assert(isnan(((float *)out[0])[0]) && isnan(((float *)out[0])[1]), "%s NaN", ops[o]);
        free(out[0]);
    }
}

/* ---------- integer arithmetic ---------- */

static int64_t r_idiv(int64_t a, int64_t b, int64_t min) {
    if (b == 0) return 0;
    if (a == min && b == -1) return min;
    return a / b;
}

static int64_t r_imod(int64_t a, int64_t b, bool c_style) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (!c_style && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static int64_t r_int(const char *op, int64_t a, int64_t b, int bits) {
    int64_t min = bits == 64 ? INT64_MIN : INT32_MIN;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b, r;
    if (!strcmp(op, "Add"))
        r = ua + ub;
    else if (!strcmp(op, "Sub"))
        r = ua - ub;
    else if (!strcmp(op, "Mul"))
        r = ua * ub;
    else if (!strcmp(op, "Div"))
        return r_idiv(a, b, min);
    else if (!strcmp(op, "Mod"))
        return r_imod(a, b, false);
    else if (!strcmp(op, "Max"))
        return a > b ? a : b;
    else if (!strcmp(op, "Min"))
        return a < b ? a : b;
    else
        cr_assert_fail("op %s", op);
    return bits == 64 ? (int64_t)r : (int64_t)(int32_t)(uint32_t)r;
}

static int64_t rand_int(q8t_rng *r, int bits) {
    uint64_t v = q8t_next(r);
    switch (v % 8) {
    case 0:
        return 0;
    case 1:
        return -1;
    case 2:
        return bits == 64 ? INT64_MIN : INT32_MIN;
    case 3:
        return bits == 64 ? INT64_MAX : INT32_MAX;
    case 4:
        return (int64_t)(v >> 8) % 1000 - 500;
    default:
        return bits == 64 ? (int64_t)(v >> 3) * ((v & 4) ? -1 : 1) : (int32_t)(v >> 11);
    }
}

Test(math_binary, int_ops) {
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min"};
    q8t_rng r = q8t_seed(7);
    for (int bits = 32; bits <= 64; bits += 32) {
        q8_dtype dt = bits == 64 ? Q8_I64 : Q8_I32;
        for (int o = 0; o < 7; o++) {
            for (int pi = 0; pi < N_PAIRS; pi++) {
                const shp *sa = &pairs[pi].a, *sb = &pairs[pi].b;
                int64_t od[Q8_MAX_DIMS];
                int ond = 0;
                ref_bshape(sa->d, sa->nd, sb->d, sb->nd, od, &ond);
                int64_t na = numel_of(sa->d, sa->nd), nb = numel_of(sb->d, sb->nd);
                int64_t no = numel_of(od, ond);
                int64_t *a = malloc(8 * (size_t)(na + 1)), *b = malloc(8 * (size_t)(nb + 1));
                for (int64_t i = 0; i < na; i++) a[i] = rand_int(&r, bits);
                for (int64_t i = 0; i < nb; i++) b[i] = rand_int(&r, bits);
                /* int32 data packed in place */
                if (bits == 32) {
                    for (int64_t i = 0; i < na; i++) ((int32_t *)a)[i] = (int32_t)a[i];
                    for (int64_t i = 0; i < nb; i++) ((int32_t *)b)[i] = (int32_t)b[i];
                }
                q8t_in ins[2] = {{"a", dt, sa->nd, {0}, NULL}, {"b", dt, sb->nd, {0}, NULL}};
                memcpy(ins[0].dims, sa->d, sizeof sa->d);
                memcpy(ins[1].dims, sb->d, sizeof sb->d);
                /* small cases also through constant folding */
                bool fold = no < 100 && pi % 2 == 0;
                if (fold) {
                    ins[0].data = a;
                    ins[1].data = b;
                }
                const void *data[2] = {a, b};
                void *out[1];
                q8_tensor_info info;
                q8_error err;
                cr_assert_eq(run_op(ops[o], ins, 2, data, NULL, 0, 3, out, &info, &err), Q8_OK,
                             "%s: %s", ops[o], err.msg);
                check_shape(&info, od, ond);
                cr_assert_eq(info.dtype, dt);
                for (int64_t i = 0; i < no; i++) {
                    int64_t ia = bidx(od, ond, i, sa->d, sa->nd),
                            ib = bidx(od, ond, i, sb->d, sb->nd);
                    int64_t x = bits == 64 ? a[ia] : ((int32_t *)a)[ia];
                    int64_t y = bits == 64 ? b[ib] : ((int32_t *)b)[ib];
                    int64_t want = r_int(ops[o], x, y, bits);
                    int64_t got = bits == 64 ? ((int64_t *)out[0])[i] : ((int32_t *)out[0])[i];
                    cr_assert_eq(got, want, "int%d %s(%lld, %lld) = %lld, want %lld (pair %d)",
                                 bits, ops[o], (long long)x, (long long)y, (long long)got,
                                 (long long)want, pi);
                }
                free(out[0]);
                free(a);
                free(b);
            }
        }
    }
}

Test(math_binary, mod_fmod_and_small_ints) {
    int64_t a[6] = {-4, 7, 5, 4, -7, -9}, b[6] = {3, -3, 2, -3, 0, -1};
    q8t_in ins[2] = {{"a", Q8_I64, 1, {6}, NULL}, {"b", Q8_I64, 1, {6}, NULL}};
    const void *data[2] = {a, b};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Mod", ins, 2, data, attr_fmod1, 0, 1, out, &info, &err), Q8_OK);
    int64_t want_c[6] = {-1, 1, 1, 1, 0, 0};
    cr_assert(memcmp(out[0], want_c, sizeof want_c) == 0, "fmod=1");
    free(out[0]);
    cr_assert_eq(run_op("Mod", ins, 2, data, NULL, 0, 1, out, &info, &err), Q8_OK);
    int64_t want_py[6] = {2, -2, 1, -2, 0, 0};
    cr_assert(memcmp(out[0], want_py, sizeof want_py) == 0, "fmod=0");
    free(out[0]);
    /* uint8 wraps */
    uint8_t u[3] = {200, 5, 9}, v[3] = {100, 7, 0};
    q8t_in uins[2] = {{"a", Q8_U8, 1, {3}, NULL}, {"b", Q8_U8, 1, {3}, NULL}};
    const void *udata[2] = {u, v};
    cr_assert_eq(run_op("Add", uins, 2, udata, NULL, 0, 1, out, &info, &err), Q8_OK);
    cr_assert_eq(((uint8_t *)out[0])[0], 44);
    free(out[0]);
    cr_assert_eq(run_op("Div", uins, 2, udata, NULL, 0, 1, out, &info, &err), Q8_OK);
    cr_assert_eq(((uint8_t *)out[0])[0], 2);
    cr_assert_eq(((uint8_t *)out[0])[2], 0, "x / 0 gives 0");
    free(out[0]);
}

/* ---------- BitShift ---------- */

static void a_left(q8_graph *g) { q8t_attr_str(g, "direction", "LEFT"); }
static void a_right(q8_graph *g) { q8t_attr_str(g, "direction", "RIGHT"); }
static void a_up(q8_graph *g) { q8t_attr_str(g, "direction", "UP"); }

/* Every unsigned width, both directions, broadcast amounts [3, 1] over [3,
 * 5], amounts at and past the width (0: C would leave them undefined). */
Test(math_bitshift, widths_directions_broadcast) {
    static const q8_dtype dts[4] = {Q8_U8, Q8_U16, Q8_U32, Q8_U64};
    q8t_rng r = q8t_seed(61);
    for (int di = 0; di < 4; di++)
        for (int left = 0; left < 2; left++) {
            int bits = 8 << di;
            uint64_t x[15], s[3] = {0, (uint64_t)bits - 1, (uint64_t)bits + (uint64_t)di};
            for (int i = 0; i < 15; i++) x[i] = q8t_next(&r);
            size_t es = q8_dtype_size(dts[di]);
            uint8_t xb[15 * 8], sb[3 * 8];
            for (int i = 0; i < 15; i++) memcpy(xb + i * es, &x[i], es); /* little-endian */
            for (int i = 0; i < 3; i++) memcpy(sb + i * es, &s[i], es);
            q8t_in ins[2] = {{"x", dts[di], 2, {3, 5}, NULL}, {"s", dts[di], 2, {3, 1}, NULL}};
            const void *data[2] = {xb, sb};
            void *out[1];
            q8_tensor_info info;
            q8_error err;
            cr_assert_eq(run_op("BitShift", ins, 2, data, left ? a_left : a_right, 11, 2, out,
                                &info, &err), Q8_OK, "%s", err.msg);
            for (int i = 0; i < 15; i++) {
                uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, v = x[i] & mask, want;
                uint64_t sh = s[i / 5];
                want = sh >= (uint64_t)bits ? 0 : ((left ? v << sh : v >> sh) & mask);
                uint64_t got = 0;
                memcpy(&got, (uint8_t *)out[0] + i * es, es);
                cr_assert_eq(got, want, "%d bits, %s, x %llu by %llu", bits,
                             left ? "LEFT" : "RIGHT", (unsigned long long)v,
                             (unsigned long long)sh);
            }
            free(out[0]);
        }
    q8t_in ins[2] = {{"x", Q8_U8, 1, {2}, NULL}, {"s", Q8_U8, 1, {2}, NULL}};
    uint8_t x[2] = {1, 2};
    const void *data[2] = {x, x};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_neq(run_op("BitShift", ins, 2, data, a_up, 11, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "direction 'UP': expected LEFT or RIGHT"), "%s", err.msg);
    q8t_in fins[2] = {{"x", Q8_I32, 1, {2}, NULL}, {"s", Q8_I32, 1, {2}, NULL}};
    cr_assert_neq(run_op("BitShift", fins, 2, data, a_left, 11, 1, out, &info, &err), Q8_OK);
}

/* ---------- window functions and Det ---------- */

static int64_t win_size;
static int win_periodic;
static void a_periodic(q8_graph *g) {
    if (win_periodic >= 0) q8t_attr_int(g, "periodic", win_periodic);
}

Test(math_windows, hann_hamming_blackman) {
    static const char *ops[3] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    static const int64_t sizes[5] = {0, 1, 2, 10, 257};
    for (int o = 0; o < 3; o++)
        for (int si = 0; si < 5; si++)
            for (win_periodic = -1; win_periodic <= 1; win_periodic++) {
                win_size = sizes[si];
                q8t_in ins[1] = {{"size", Q8_I64, 0, {0}, &win_size}};
                void *out[1];
                q8_tensor_info info;
                q8_error err;
                cr_assert_eq(run_op(ops[o], ins, 1, NULL, a_periodic, 17, 1, out, &info, &err),
                             Q8_OK, "%s: %s", ops[o], err.msg);
                cr_assert(info.ndim == 1 && info.dims[0] == win_size);
                int64_t N = win_periodic == 0 ? win_size - 1 : win_size;
                for (int64_t i = 0; i < win_size; i++) {
                    double a = N > 0 ? 2 * M_PI * (double)i / (double)N : 0;
                    double w = o == 0 ? 0.5 - 0.5 * cos(a)
                               : o == 1 ? 25.0 / 46 - 21.0 / 46 * cos(a)
                                        : 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
                    float got = ((float *)out[0])[i];
                    cr_assert(fabs(got - w) <= 1e-7 + 1e-6 * fabs(w), "%s(%lld)[%lld] = %g, "
                              "want %g", ops[o], (long long)win_size, (long long)i, got, w);
                }
                free(out[0]);
            }
}

/* Determinants against the Leibniz formula (every permutation, in long
 * double) on random matrices up to 5 x 5, batched; singular ones give 0. */
static long double leibniz(const float *a, int m) {
    int p[6] = {0, 1, 2, 3, 4, 5};
    long double sum = 0;
    for (;;) {
        long double t = 1;
        int inv = 0;
        for (int i = 0; i < m; i++) {
            t *= a[i * m + p[i]];
            for (int j = i + 1; j < m; j++) inv += p[i] > p[j];
        }
        sum += inv % 2 ? -t : t;
        int i = m - 2; /* next permutation */
        while (i >= 0 && p[i] > p[i + 1]) i--;
        if (i < 0) break;
        int j = m - 1;
        while (p[j] < p[i]) j--;
        int s = p[i];
        p[i] = p[j];
        p[j] = s;
        for (int l = i + 1, h = m - 1; l < h; l++, h--) s = p[l], p[l] = p[h], p[h] = s;
    }
    return sum;
}

Test(math_det, batched_vs_leibniz) {
    q8t_rng r = q8t_seed(67);
    for (int m = 1; m <= 5; m++) {
        float x[6 * 25];
        q8t_fill(&r, x, 6 * m * m, -2, 2);
        for (int j = 0; j < m; j++) x[5 * m * m + j * m] = 0; /* matrix 5: a zero column */
        q8t_in ins[1] = {{"x", Q8_F32, 3, {6, m, m}, NULL}};
        const void *data[1] = {x};
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op("Det", ins, 1, data, NULL, 11, 3, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert(info.ndim == 1 && info.dims[0] == 6);
        for (int k = 0; k < 6; k++) {
            double want = (double)leibniz(x + k * m * m, m), got = ((float *)out[0])[k];
            cr_assert(fabs(got - want) <= 1e-5 + 1e-5 * fabs(want), "%dx%d matrix %d: det %g, "
                      "want %g", m, m, k, got, want);
        }
        cr_assert_eq(((float *)out[0])[5], 0.0f, "singular");
        free(out[0]);
    }
    /* 0 x 0 matrices: the empty product, 1 */
    float none[1] = {0};
    q8t_in ins[1] = {{"x", Q8_F32, 3, {2, 0, 0}, NULL}};
    const void *data[1] = {none};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Det", ins, 1, data, NULL, 11, 1, out, &info, &err), Q8_OK, "%s", err.msg);
    cr_assert(((float *)out[0])[0] == 1 && ((float *)out[0])[1] == 1);
    free(out[0]);
}

/* ---------- Einsum ---------- */

static const char *einsum_eq;
static void a_equation(q8_graph *g) { q8t_attr_str(g, "equation", einsum_eq); }

static void einsum_check(const char *eq, q8t_in *ins, int n_in, const void *const *data,
                         const double *want, int64_t n_want, const int64_t *dims, int nd) {
    einsum_eq = eq;
    for (int th = 1; th <= 3; th += 2) {
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op("Einsum", ins, n_in, data, a_equation, 12, th, out, &info, &err),
                     Q8_OK, "%s: %s", eq, err.msg);
        check_shape(&info, dims, nd);
        for (int64_t i = 0; i < n_want; i++) {
            double got = info.dtype == Q8_F64 ? ((double *)out[0])[i] : ((float *)out[0])[i];
            cr_assert(fabs(got - want[i]) <= 1e-5 * (1 + fabs(want[i])), "%s [%lld]: %g, want %g",
                      eq, (long long)i, got, want[i]);
        }
        free(out[0]);
    }
}

/* Each equation against its own loops. */
Test(math_einsum, equations_vs_loops) {
    q8t_rng r = q8t_seed(71);
    float a[2 * 3 * 4 * 5], b[5 * 4 * 2 * 3];
    q8t_fill(&r, a, 120, -2, 2);
    q8t_fill(&r, b, 120, -2, 2);
    double w[256];
    { /* batched matmul, spaces */
        q8t_in ins[2] = {{"a", Q8_F32, 3, {2, 3, 4}, NULL}, {"b", Q8_F32, 3, {2, 4, 5}, NULL}};
        const void *d[2] = {a, b};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 5; k++) {
                    double s = 0;
                    for (int l = 0; l < 4; l++) s += (double)a[i * 12 + j * 4 + l] * b[i * 20 + l * 5 + k];
                    w[i * 15 + j * 5 + k] = s;
                }
        einsum_check("bij, bjk -> bik", ins, 2, d, w, 30, (int64_t[]){2, 3, 5}, 3);
        /* implicit: b and j appear twice, so "ik", summed over b too */
        double w2[15];
        for (int i = 0; i < 15; i++) w2[i] = w[i] + w[15 + i];
        einsum_check("bij,bjk", ins, 2, d, w2, 15, (int64_t[]){3, 5}, 2);
    }
    { /* implicit output: the once-used labels by character code (B before a) */
        q8t_in ins[1] = {{"a", Q8_F32, 2, {3, 4}, NULL}};
        const void *d[1] = {a};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++) w[i * 3 + j] = a[j * 4 + i];
        einsum_check("aB", ins, 1, d, w, 12, (int64_t[]){4, 3}, 2);
        einsum_check("ij->ji", ins, 1, d, w, 12, (int64_t[]){4, 3}, 2);
        for (int j = 0; j < 3; j++) {
            w[j] = 0;
            for (int i = 0; i < 4; i++) w[j] += a[j * 4 + i];
        }
        einsum_check("ij->i", ins, 1, d, w, 3, (int64_t[]){3}, 1);
        w[0] = 0;
        for (int i = 0; i < 12; i++) w[0] += a[i];
        einsum_check("ij->", ins, 1, d, w, 1, NULL, 0);
    }
    { /* diagonal and trace, batched by "..." */
        q8t_in ins[1] = {{"a", Q8_F32, 3, {2, 3, 3}, NULL}};
        const void *d[1] = {a};
        for (int bt = 0; bt < 2; bt++)
            for (int i = 0; i < 3; i++) w[bt * 3 + i] = a[bt * 9 + i * 4];
        einsum_check("...ii->...i", ins, 1, d, w, 6, (int64_t[]){2, 3}, 2);
        for (int bt = 0; bt < 2; bt++) w[bt] = w[bt * 3] + w[bt * 3 + 1] + w[bt * 3 + 2];
        einsum_check("bii->b", ins, 1, d, w, 2, (int64_t[]){2}, 1);
    }
    { /* "..." broadcast: [2, 1, 3, 4] x [5, 4, 2] -> [2, 5, 3, 2] */
        q8t_in ins[2] = {{"a", Q8_F32, 4, {2, 1, 3, 4}, NULL}, {"b", Q8_F32, 3, {5, 4, 2}, NULL}};
        const void *d[2] = {a, b};
        for (int x = 0; x < 2; x++)
            for (int y = 0; y < 5; y++)
                for (int i = 0; i < 3; i++)
                    for (int k = 0; k < 2; k++) {
                        double s = 0;
                        for (int j = 0; j < 4; j++) s += (double)a[x * 12 + i * 4 + j] * b[y * 8 + j * 2 + k];
                        w[((x * 5 + y) * 3 + i) * 2 + k] = s;
                    }
        einsum_check("...ij,...jk->...ik", ins, 2, d, w, 60, (int64_t[]){2, 5, 3, 2}, 4);
    }
    { /* outer product and three inputs, float64 */
        double x[3] = {1, -2, 0.5}, y[4] = {2, 3, -1, 4}, z[3] = {1, 2, 3};
        q8t_in ins[3] = {{"x", Q8_F64, 1, {3}, NULL}, {"y", Q8_F64, 1, {4}, NULL},
                         {"z", Q8_F64, 1, {3}, NULL}};
        const void *d[3] = {x, y, z};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++) w[i * 4 + j] = x[i] * y[j];
        einsum_check("i,j->ij", ins, 2, d, w, 12, (int64_t[]){3, 4}, 2);
        for (int j = 0; j < 4; j++) w[j] = (x[0] * z[0] + x[1] * z[1] + x[2] * z[2]) * y[j];
        einsum_check("i,j,i->j", ins, 3, d, w, 4, (int64_t[]){4}, 1);
    }
    /* errors */
    einsum_eq = "ij,jk->ik";
    q8t_in e1[2] = {{"a", Q8_F32, 2, {3, 4}, NULL}, {"b", Q8_F32, 2, {5, 2}, NULL}};
    const void *ed[2] = {a, b};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_neq(run_op("Einsum", e1, 2, ed, a_equation, 12, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "label 'j' is 4 in one place and 5 in another"), "%s", err.msg);
    einsum_eq = "ij->k";
    cr_assert_neq(run_op("Einsum", e1, 1, ed, a_equation, 12, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "is in no input"), "%s", err.msg);
    einsum_eq = "ij";
    cr_assert_neq(run_op("Einsum", e1, 2, ed, a_equation, 12, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "fewer terms"), "%s", err.msg);
    einsum_eq = "...ij->ij"; /* numpy refuses to drop "..." dims */
    q8t_in e3[1] = {{"a", Q8_F32, 3, {2, 3, 4}, NULL}};
    cr_assert_neq(run_op("Einsum", e3, 1, ed, a_equation, 12, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "leaves out the dims"), "%s", err.msg);
    einsum_eq = "a,b,c->"; /* 2^66 products: refused before anything runs */
    q8t_in e4[3] = {{"a", Q8_F32, 1, {1 << 22}, NULL}, {"b", Q8_F32, 1, {1 << 22}, NULL},
                    {"c", Q8_F32, 1, {1 << 22}, NULL}};
    const void *ed3[3] = {a, a, a};
    cr_assert_neq(run_op("Einsum", e4, 3, ed3, a_equation, 12, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "more than 2^40 products"), "%s", err.msg);
    einsum_eq = "ijk->i";
    cr_assert_neq(run_op("Einsum", e1, 1, ed, a_equation, 12, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "does not fit input 0 of rank 2"), "%s", err.msg);
}

/* ---------- Pow ---------- */

Test(math_pow, mixed_types) {
    /* float base, int64 exponent */
    float x[5] = {2, -2, 0.5f, 3, 0};
    int64_t e[5] = {3, 3, -2, 0, -1};
    q8t_in ins[2] = {{"x", Q8_F32, 1, {5}, NULL}, {"e", Q8_I64, 1, {5}, NULL}};
    const void *data[2] = {x, e};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Pow", ins, 2, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s", err.msg);
    float want[5] = {8, -8, 4, 1, INFINITY};
    for (int i = 0; i < 5; i++) cr_assert_eq(((float *)out[0])[i], want[i], "pow f32^i64 [%d]", i);
    free(out[0]);
    /* int32 base, int32 exponent: exact, negative exponents, wrap */
    int32_t b[6] = {3, -2, 1, -1, 2, 7}, k[6] = {4, 3, -5, -3, -1, 20};
    q8t_in iins[2] = {{"x", Q8_I32, 1, {6}, NULL}, {"e", Q8_I32, 1, {6}, NULL}};
    const void *idata[2] = {b, k};
    cr_assert_eq(run_op("Pow", iins, 2, idata, NULL, 0, 3, out, &info, &err), Q8_OK, "%s", err.msg);
    int32_t iwant[6] = {81, -8, 1, -1, 0, (int32_t)(uint32_t)79792266297612001ull};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(((int32_t *)out[0])[i], iwant[i], "int pow [%d]: %d", i,
                     ((int32_t *)out[0])[i]);
    free(out[0]);
    /* int64 base, float exponent: truncated */
    int64_t c[3] = {4, 2, -8};
    float f[3] = {0.5f, 0.5f, 1.0f / 3.0f};
    q8t_in mins[2] = {{"x", Q8_I64, 1, {3}, NULL}, {"e", Q8_F32, 1, {3}, NULL}};
    const void *mdata[2] = {c, f};
    cr_assert_eq(run_op("Pow", mins, 2, mdata, NULL, 0, 1, out, &info, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(((int64_t *)out[0])[0], 2);
    cr_assert_eq(((int64_t *)out[0])[1], 1);
    cr_assert_eq(((int64_t *)out[0])[2], 0, "NaN (negative base, fractional exponent) -> 0");
    free(out[0]);
}

Test(math_pow, constant_square) {
    q8t_rng r = q8t_seed(13);
    float x[1001];
    q8t_fill(&r, x, 1001, -1e20f, 1e20f);
    x[0] = NAN, x[1] = -INFINITY, x[2] = -0.0f, x[3] = 3e-30f;
    float two_f = 2;
    int64_t two_i = 2;
    uint8_t two_u = 2;
    const void *twos[3] = {&two_f, &two_i, &two_u};
    q8_dtype dts[3] = {Q8_F32, Q8_I64, Q8_U8};
    for (int k = 0; k < 3; k++) {
        q8t_in ins[2] = {{"x", Q8_F32, 2, {7, 143}, NULL}, {"e", dts[k], 0, {0}, twos[k]}};
        const void *data[2] = {x, NULL};
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op("Pow", ins, 2, data, NULL, 0, 3, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        for (int i = 0; i < 1001; i++) {
            float w = (float)pow(x[i], 2.0), g = ((float *)out[0])[i];
            cr_assert(isnan(w) ? isnan(g) : g == w && signbit(g) == signbit(w), "%a^2: %a, want %a",
                      x[i], g, w);
        }
        free(out[0]);
    }
}

/* ---------- comparisons and logic ---------- */

Test(math_compare, all_dtypes) {
    const char *ops[] = {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"};
    float fa[6] = {1, 2, NAN, -0.0f, INFINITY, 3}, fb[2] = {2, 0.0f};
    for (int o = 0; o < 5; o++) {
        /* float: [3,2] vs [2] */
        q8t_in ins[2] = {{"a", Q8_F32, 2, {3, 2}, NULL}, {"b", Q8_F32, 1, {2}, NULL}};
        const void *data[2] = {fa, fb};
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op(ops[o], ins, 2, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert_eq(info.dtype, Q8_BOOL);
        for (int i = 0; i < 6; i++) {
            float a = fa[i], b = fb[i % 2];
            bool w = o == 0 ? a == b : o == 1 ? a > b : o == 2 ? a < b : o == 3 ? a >= b : a <= b;
            cr_assert_eq(((uint8_t *)out[0])[i], w, "%s float [%d]", ops[o], i);
        }
        free(out[0]);
        /* int64 and int32 with scalar */
        int64_t ia[4] = {INT64_MIN, -1, 5, INT64_MAX}, ib = 5;
        int32_t ja[4] = {INT32_MIN, -1, 5, INT32_MAX}, jb = 5;
        for (int w64 = 0; w64 < 2; w64++) {
            q8t_in iins[2] = {{"a", w64 ? Q8_I64 : Q8_I32, 1, {4}, NULL},
                              {"b", w64 ? Q8_I64 : Q8_I32, 0, {0}, NULL}};
            const void *idata[2] = {w64 ? (void *)ia : (void *)ja, w64 ? (void *)&ib : (void *)&jb};
            cr_assert_eq(run_op(ops[o], iins, 2, idata, NULL, 0, 1, out, &info, &err), Q8_OK);
            for (int i = 0; i < 4; i++) {
                int64_t a = w64 ? ia[i] : ja[i], b = 5;
                bool w = o == 0   ? a == b
                         : o == 1 ? a > b
                         : o == 2 ? a < b
                         : o == 3 ? a >= b
                                  : a <= b;
                cr_assert_eq(((uint8_t *)out[0])[i], w, "%s int [%d]", ops[o], i);
            }
            free(out[0]);
        }
    }
    /* bool */
    uint8_t ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1};
    q8t_in bins[2] = {{"a", Q8_BOOL, 1, {4}, NULL}, {"b", Q8_BOOL, 1, {4}, NULL}};
    const void *bdata[2] = {ba, bb};
    const char *lops[] = {"Equal", "And", "Or", "Xor", "Greater"};
    uint8_t lwant[5][4] = {{1, 0, 0, 1}, {0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}, {0, 0, 1, 0}};
    for (int o = 0; o < 5; o++) {
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op(lops[o], bins, 2, bdata, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert(memcmp(out[0], lwant[o], 4) == 0, "%s bool", lops[o]);
        free(out[0]);
    }
}

Test(math_compare, logic_broadcast_threads) {
    /* Xor over [2,1,5] x [3,1] and a large [300,257] x [257], 1 vs 3 threads */
    q8t_rng r = q8t_seed(3);
    for (int pi = 0; pi < N_PAIRS; pi++) {
        const shp *sa = &pairs[pi].a, *sb = &pairs[pi].b;
        int64_t od[Q8_MAX_DIMS];
        int ond = 0;
        ref_bshape(sa->d, sa->nd, sb->d, sb->nd, od, &ond);
        int64_t na = numel_of(sa->d, sa->nd), nb = numel_of(sb->d, sb->nd), no = numel_of(od, ond);
        uint8_t *a = malloc((size_t)na + 1), *b = malloc((size_t)nb + 1);
        for (int64_t i = 0; i < na; i++) a[i] = q8t_next(&r) & 1;
        for (int64_t i = 0; i < nb; i++) b[i] = q8t_next(&r) & 1;
        q8t_in ins[2] = {{"a", Q8_BOOL, sa->nd, {0}, NULL}, {"b", Q8_BOOL, sb->nd, {0}, NULL}};
        memcpy(ins[0].dims, sa->d, sizeof sa->d);
        memcpy(ins[1].dims, sb->d, sizeof sb->d);
        const void *data[2] = {a, b};
        void *out[2][1];
        for (int t = 0; t < 2; t++) {
            q8_tensor_info info;
            q8_error err;
            cr_assert_eq(run_op("Xor", ins, 2, data, NULL, 0, t ? 3 : 1, out[t], &info, &err),
                         Q8_OK);
            for (int64_t i = 0; i < no; i++)
                cr_assert_eq(((uint8_t *)out[t][0])[i], a[bidx(od, ond, i, sa->d, sa->nd)] ^
                                                            b[bidx(od, ond, i, sb->d, sb->nd)]);
        }
        cr_assert(memcmp(out[0][0], out[1][0], (size_t)no) == 0);
        free(out[0][0]);
        free(out[1][0]);
        free(a);
        free(b);
    }
}

/* ---------- variadic ---------- */

Test(math_variadic, three_inputs_broadcast) {
    q8t_rng r = q8t_seed(11);
    shp s[3] = {{4, {2, 3, 4, 5}}, {3, {3, 1, 1}}, {0, {0}}};
    int64_t od[4] = {2, 3, 4, 5};
    float *x[3];
    for (int k = 0; k < 3; k++) {
        int64_t n = numel_of(s[k].d, s[k].nd);
        x[k] = malloc(sizeof(float) * (size_t)n);
        q8t_fill(&r, x[k], n, -2, 2);
    }
    x[1][1] = NAN;
    const char *ops[] = {"Sum", "Mean", "Max", "Min"};
    for (int o = 0; o < 4; o++) {
        q8t_in ins[3];
        for (int k = 0; k < 3; k++) {
            ins[k] = (q8t_in){k == 0 ? "a" : k == 1 ? "b" : "c", Q8_F32, s[k].nd, {0}, NULL};
            memcpy(ins[k].dims, s[k].d, sizeof s[k].d);
        }
        const void *data[3] = {x[0], x[1], x[2]};
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op(ops[o], ins, 3, data, NULL, 0, 3, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        check_shape(&info, od, 4);
        float want[120];
        for (int64_t i = 0; i < 120; i++) {
            float v[3];
            for (int k = 0; k < 3; k++) v[k] = x[k][bidx(od, 4, i, s[k].d, s[k].nd)];
            if (o == 0)
                want[i] = (v[0] + v[1]) + v[2];
            else if (o == 1)
                want[i] = ((v[0] + v[1]) + v[2]) / 3.0f;
            else if (o == 2)
                want[i] = r_max(r_max(v[0], v[1]), v[2]);
            else
                want[i] = r_min(r_min(v[0], v[1]), v[2]);
        }
        q8t_assert_close(out[0], want, 120, 0, 0, ops[o]);
        free(out[0]);
    }
    /* one input: a copy */
    q8t_in one = {"a", Q8_F32, 4, {2, 3, 4, 5}, NULL};
    const void *d1[1] = {x[0]};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Max", &one, 1, d1, NULL, 0, 1, out, &info, &err), Q8_OK);
    cr_assert(memcmp(out[0], x[0], 480) == 0);
    free(out[0]);
    for (int k = 0; k < 3; k++) free(x[k]);
}

/* ---------- Where ---------- */

Test(math_where, broadcast_dtypes) {
    q8t_rng r = q8t_seed(5);
    /* cond [2,1,5], X [3,1], Y [] -> [2,3,5]; then large cond [300,257] */
    shp cs[2] = {{3, {2, 1, 5}}, {2, {300, 257}}}, xs[2] = {{2, {3, 1}}, {1, {257}}},
        ys[2] = {{0, {0}}, {2, {300, 1}}};
    q8_dtype dts[4] = {Q8_F32, Q8_I64, Q8_BOOL, Q8_F16};
    for (int c = 0; c < 2; c++)
        for (int di = 0; di < 4; di++) {
            size_t es = q8_dtype_size(dts[di]);
            int64_t od[Q8_MAX_DIMS], t[Q8_MAX_DIMS];
            int ond = 0, nt = 0;
            ref_bshape(cs[c].d, cs[c].nd, xs[c].d, xs[c].nd, t, &nt);
            ref_bshape(t, nt, ys[c].d, ys[c].nd, od, &ond);
            int64_t nc = numel_of(cs[c].d, cs[c].nd), nx = numel_of(xs[c].d, xs[c].nd);
            int64_t ny = numel_of(ys[c].d, ys[c].nd), no = numel_of(od, ond);
            uint8_t *cd = malloc((size_t)nc), *xd = malloc(es * (size_t)nx),
                    *yd = malloc(es * (size_t)ny);
            for (int64_t i = 0; i < nc; i++) cd[i] = q8t_next(&r) & 1;
            for (int64_t i = 0; i < (int64_t)es * nx; i++) xd[i] = (uint8_t)q8t_next(&r);
            for (int64_t i = 0; i < (int64_t)es * ny; i++) yd[i] = (uint8_t)q8t_next(&r);
            q8t_in ins[3] = {{"c", Q8_BOOL, cs[c].nd, {0}, NULL},
                             {"x", dts[di], xs[c].nd, {0}, NULL},
                             {"y", dts[di], ys[c].nd, {0}, NULL}};
            memcpy(ins[0].dims, cs[c].d, sizeof cs[c].d);
            memcpy(ins[1].dims, xs[c].d, sizeof xs[c].d);
            memcpy(ins[2].dims, ys[c].d, sizeof ys[c].d);
            const void *data[3] = {cd, xd, yd};
            void *out[2][1];
            for (int th = 0; th < 2; th++) {
                q8_tensor_info info;
                q8_error err;
                cr_assert_eq(
                    run_op("Where", ins, 3, data, NULL, 0, th ? 3 : 1, out[th], &info, &err), Q8_OK,
                    "%s", err.msg);
                check_shape(&info, od, ond);
                for (int64_t i = 0; i < no; i++) {
                    bool cv = cd[bidx(od, ond, i, cs[c].d, cs[c].nd)];
                    const uint8_t *src = cv ? xd + es * (size_t)bidx(od, ond, i, xs[c].d, xs[c].nd)
                                            : yd + es * (size_t)bidx(od, ond, i, ys[c].d, ys[c].nd);
                    cr_assert(memcmp((uint8_t *)out[th][0] + es * (size_t)i, src, es) == 0,
                              "where %s [%lld]", q8_dtype_name(dts[di]), (long long)i);
                }
            }
            cr_assert(memcmp(out[0][0], out[1][0], es * (size_t)no) == 0);
            free(out[0][0]);
            free(out[1][0]);
            free(cd);
            free(xd);
            free(yd);
        }
}

/* ---------- Expand ---------- */

Test(math_expand, bidirectional) {
    float x[3] = {1, 2, 3};
    int64_t shape[3] = {2, 1, 4};
    q8t_in ins[2] = {{"x", Q8_F32, 2, {3, 1}, NULL}, {"s", Q8_I64, 1, {3}, shape}};
    const void *data[2] = {x, NULL};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Expand", ins, 2, data, NULL, 0, 3, out, &info, &err), Q8_OK, "%s",
                 err.msg);
    int64_t od[3] = {2, 3, 4};
    check_shape(&info, od, 3);
    for (int i = 0; i < 24; i++) cr_assert_eq(((float *)out[0])[i], x[(i / 4) % 3]);
    free(out[0]);
    /* int64 data, constant input (folded), shape shorter than the input */
    int64_t xi[6] = {1, 2, 3, 4, 5, 6}, s2[1] = {1};
    q8t_in ins2[2] = {{"x", Q8_I64, 2, {2, 3}, xi}, {"s", Q8_I64, 1, {1}, s2}};
    cr_assert_eq(run_op("Expand", ins2, 2, NULL, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                 err.msg);
    int64_t od2[2] = {2, 3};
    check_shape(&info, od2, 2);
    cr_assert(memcmp(out[0], xi, sizeof xi) == 0);
    free(out[0]);
    /* a large one over threads: [1,3,1] -> [50,3,400] (uint16 elements) */
    uint16_t h[3] = {7, 8, 9};
    int64_t s3[3] = {50, 3, 400};
    q8t_in ins3[2] = {{"x", Q8_F16, 3, {1, 3, 1}, NULL}, {"s", Q8_I64, 1, {3}, s3}};
    const void *data3[2] = {h, NULL};
    cr_assert_eq(run_op("Expand", ins3, 2, data3, NULL, 0, 3, out, &info, &err), Q8_OK, "%s",
                 err.msg);
    for (int i = 0; i < 60000; i++) cr_assert_eq(((uint16_t *)out[0])[i], h[(i / 400) % 3]);
    free(out[0]);
}

/* ---------- Cast ---------- */

/* The ONNX TensorProto.DataType code of t (Cast's attribute 'to'). */
static int64_t onnx_code(q8_dtype t) {
    return t == Q8_F32    ? 1
           : t == Q8_U8   ? 2
           : t == Q8_I8   ? 3
           : t == Q8_U16  ? 4
           : t == Q8_I16  ? 5
           : t == Q8_I32  ? 6
           : t == Q8_I64  ? 7
           : t == Q8_BOOL ? 9
           : t == Q8_F16  ? 10
           : t == Q8_F64  ? 11
           : t == Q8_U32  ? 12
           : t == Q8_U64  ? 13
                          : 16;
}

/* Cast (or, with like, CastLike from a constant of dtype to) of x [dims]
 * on the CPU; every other backend of the build must run it too (none may
 * skip it as unsupported) and give the same bytes (float32 NaNs: any NaN). */
static void *cast_run_shape(q8_dtype from, q8_dtype to, const void *x, const int64_t *dims,
                            int nd, bool like) {
    static const uint8_t zeros[8] = {0};
    q8t_in in[2] = {{"x", from, nd, {0}, NULL}, {"like", to, 1, {1}, zeros}};
    memcpy(in[0].dims, dims, sizeof(int64_t) * (size_t)nd);
    q8_graph *g = q8t_graph1(like ? "CastLike" : "Cast", in, like ? 2 : 1, 1);
    if (!like) q8t_attr_int(g, "to", onnx_code(to));
    const void *data[1] = {x};
    void *out[1];
    q8_tensor_info info;
    q8_error err = {0};
    int others = 0;
    cr_assert_eq(q8t_run_backends(g, data, 2, out, &info, 1, true, &others, &err), Q8_OK,
                 "%s -> %s: %s", q8_dtype_name(from), q8_dtype_name(to), err.msg);
    cr_assert_eq(info.dtype, to);
    cr_assert_eq(others, q8t_other_backends(), "%s -> %s: a backend skipped the Cast",
                 q8_dtype_name(from), q8_dtype_name(to));
    return out[0];
}

static void *cast_run(q8_dtype from, q8_dtype to, const void *x, int64_t n) {
    return cast_run_shape(from, to, x, &n, 1, false);
}

static uint16_t f16_bits(float f) { return q8_f32_to_f16(f); }

Test(math_cast, float16_corners) {
    float x[] = {0.0f,
                 -0.0f,
                 1.0f,
                 65504.0f,
                 65519.99f,
                 65520.0f,
                 -65520.0f,
                 1e-8f,
                 0x1p-24f,
                 0x1p-25f,
                 0x1.000002p-25f,
                 0x1.8p-24f,
                 1.0f + 0x1p-11f,
                 1.0f + 3 * 0x1p-11f,
                 INFINITY,
                 -INFINITY,
                 0x1p-14f,
                 0x1.ffcp-15f,
                 1e30f,
                 0x1.ff8p-15f,
                 0x1.4p-24f};
    uint16_t want[] = {0x0000, 0x8000, 0x3C00, 0x7BFF, 0x7BFF, 0x7C00, 0xFC00,
                       0x0000, 0x0001, 0x0000, 0x0001, 0x0002, 0x3C00, 0x3C02,
                       0x7C00, 0xFC00, 0x0400, 0x0400, 0x7C00, 0x03FF, 0x0001};
    int n = (int)(sizeof x / sizeof x[0]);
    uint16_t *h = cast_run(Q8_F32, Q8_F16, x, n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(h[i], want[i], "f32 %a -> f16 0x%04x, want 0x%04x", x[i], h[i], want[i]);
    free(h);
    float nan = NAN;
    h = cast_run(Q8_F32, Q8_F16, &nan, 1);
    cr_assert((h[0] & 0x7C00) == 0x7C00 && (h[0] & 0x3FF), "NaN stays NaN: 0x%04x", h[0]);
    free(h);
    /* every half: f16 -> f32 -> f16 is the identity (NaNs stay NaN) */
    uint16_t *all = malloc(sizeof(uint16_t) * 65536);
    for (int i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    float *f = cast_run(Q8_F16, Q8_F32, all, 65536);
    uint16_t *back = cast_run(Q8_F32, Q8_F16, f, 65536);
    for (int i = 0; i < 65536; i++) {
        bool is_nan = (i & 0x7C00) == 0x7C00 && (i & 0x3FF);
        if (is_nan)
            cr_assert(isnan(f[i]) && ((back[i] & 0x7C00) == 0x7C00) && (back[i] & 0x3FF));
        else
            cr_assert_eq(back[i], i, "half 0x%04x -> %a -> 0x%04x", i, f[i], back[i]);
#ifdef __FLT16_MAX__
        _Float16 hv;
        memcpy(&hv, &all[i], 2);
        if (!is_nan) cr_assert_eq(f[i], (float)hv, "half 0x%04x: %a vs %a", i, f[i], (float)hv);
#endif
    }
    free(all);
    free(f);
    free(back);
#ifdef __FLT16_MAX__
    /* random floats and doubles against the compiler's _Float16 */
    q8t_rng r = q8t_seed(17);
    float rf[4096];
    double rd[4096];
    for (int i = 0; i < 4096; i++) {
        uint32_t bits = (uint32_t)q8t_next(&r);
        /* mostly in half range: exponents around 2^-26 .. 2^17 */
        bits = (bits & 0x807FFFFFu) | ((uint32_t)(101 + (q8t_next(&r) % 44)) << 23);
        memcpy(&rf[i], &bits, 4);
        rd[i] = (double)rf[i] * (1.0 + ldexp((double)(q8t_next(&r) % 1024) - 512, -40));
    }
    uint16_t *hf = cast_run(Q8_F32, Q8_F16, rf, 4096), *hd = cast_run(Q8_F64, Q8_F16, rd, 4096);
    for (int i = 0; i < 4096; i++) {
        _Float16 a = (_Float16)rf[i], b = (_Float16)rd[i];
        uint16_t ab, bb;
        memcpy(&ab, &a, 2);
        memcpy(&bb, &b, 2);
        cr_assert_eq(hf[i], ab, "f32 %a -> 0x%04x, want 0x%04x", rf[i], hf[i], ab);
        cr_assert_eq(hd[i], bb, "f64 %a -> 0x%04x, want 0x%04x", rd[i], hd[i], bb);
    }
    free(hf);
    free(hd);
#endif
}

/* Reference float -> bfloat16: the nearer of the two neighbours, ties to
 * even, by value comparison (independent of the kernel's bit trick). */
static uint16_t ref_bf16(float f) {
    uint32_t u = q8_f32_bits(f);
    uint32_t lo = u & 0xFFFF0000u, hi = lo + 0x10000u;
    double dl = fabs((double)f - (double)q8_bits_f32(lo));
    double dh = fabs((double)q8_bits_f32(hi) - (double)f);
    if ((hi & 0x7F800000u) == 0x7F800000u && (lo & 0x7F800000u) != 0x7F800000u) {
        /* rounding up overflows: compare with the midpoint 2^128 * (1 - 2^-9) */
        dh = fabs(ldexp(1.0, 128) - fabs((double)f));
    }
    if (dl < dh || (dl == dh && !((lo >> 16) & 1))) return (uint16_t)(lo >> 16);
    return (uint16_t)(hi >> 16);
}

Test(math_cast, bfloat16_corners) {
    q8t_rng r = q8t_seed(23);
    float x[4096];
    for (int i = 0; i < 4096; i++) {
        uint32_t b = (uint32_t)q8t_next(&r);
        if (i % 4 == 0) b = (b & 0xFFFF0000u) | 0x8000u;        /* exact ties */
        if ((b & 0x7F800000u) == 0x7F800000u) b &= 0xBFFFFFFFu; /* no inf/NaN here */
        memcpy(&x[i], &b, 4);
    }
    x[0] = FLT_MAX;
    x[1] = -FLT_MAX;
    x[2] = 0x1.fep127f; /* rounds up to inf? 0x7F7F0000: exact bf16 */
    uint16_t *h = cast_run(Q8_F32, Q8_BF16, x, 4096);
    for (int i = 0; i < 4096; i++)
        cr_assert_eq(h[i], ref_bf16(x[i]), "f32 %a -> bf16 0x%04x, want 0x%04x", x[i], h[i],
                     ref_bf16(x[i]));
    cr_assert_eq(h[0], 0x7F80, "FLT_MAX rounds to inf");
    free(h);
    float sp[3] = {NAN, INFINITY, -0.0f};
    h = cast_run(Q8_F32, Q8_BF16, sp, 3);
    cr_assert((h[0] & 0x7F80) == 0x7F80 && (h[0] & 0x7F));
    cr_assert_eq(h[1], 0x7F80);
    cr_assert_eq(h[2], 0x8000);
    float *back = cast_run(Q8_BF16, Q8_F32, h, 3);
    cr_assert(isnan(back[0]) && back[1] == INFINITY && signbit(back[2]));
    free(back);
    free(h);
    /* double -> bf16 and int64 -> bf16 round once: just above a tie goes up */
    double d[2] = {1.0 + 0x1p-8 + 0x1p-40, -(1.0 + 0x1p-8 + 0x1p-40)};
    h = cast_run(Q8_F64, Q8_BF16, d, 2);
    cr_assert_eq(h[0], 0x3F81, "double just above a tie: 0x%04x", h[0]);
    cr_assert_eq(h[1], 0xBF81);
    free(h);
    int64_t iv[3] = {(1ll << 40) + (1ll << 32) + 1, (1ll << 40) + (1ll << 32), INT64_MIN};
    h = cast_run(Q8_I64, Q8_BF16, iv, 3);
    cr_assert_eq(h[0], 0x5381, "int64 above a tie: 0x%04x", h[0]);
    cr_assert_eq(h[1], 0x5380, "int64 tie to even: 0x%04x", h[1]);
    cr_assert_eq(h[2], 0xDF00);
    free(h);
    double dh[1] = {1.0 + 0x1p-11 + 0x1p-40};
    h = cast_run(Q8_F64, Q8_F16, dh, 1);
    cr_assert_eq(h[0], 0x3C01, "double just above a half tie: 0x%04x", h[0]);
    free(h);
}

Test(math_cast, int_and_bool) {
    float f[10] = {NAN, 3e9f, -3e9f, -1.7f, 1.7f, 1e30f, -0.0f, 300.0f, -5.0f, INFINITY};
    int32_t *i32 = cast_run(Q8_F32, Q8_I32, f, 10);
    int32_t w32[10] = {0, INT32_MAX, INT32_MIN, -1, 1, INT32_MAX, 0, 300, -5, INT32_MAX};
    for (int i = 0; i < 10; i++) cr_assert_eq(i32[i], w32[i], "f32 %g -> i32 %d", f[i], i32[i]);
    free(i32);
    int64_t *i64 = cast_run(Q8_F32, Q8_I64, f, 10);
    cr_assert_eq(i64[5], INT64_MAX);
    cr_assert_eq(i64[2], -3000000000ll);
    free(i64);
    uint8_t *u8 = cast_run(Q8_F32, Q8_U8, f, 10);
    cr_assert_eq(u8[7], 255, "saturates");
    cr_assert_eq(u8[8], 0, "saturates");
    free(u8);
    uint8_t *b = cast_run(Q8_F32, Q8_BOOL, f, 10);
    uint8_t wb[10] = {1, 1, 1, 1, 1, 1, 0, 1, 1, 1};
    cr_assert(memcmp(b, wb, 10) == 0);
    float *fb = cast_run(Q8_BOOL, Q8_F32, b, 10);
    for (int i = 0; i < 10; i++) cr_assert_eq(fb[i], (float)wb[i]);
    free(fb);
    free(b);
    /* int64 -> narrower ints wrap; int64 -> float rounds once */
    int64_t iv[4] = {300, -129, (1ll << 24) + 1, INT64_MAX};
    int8_t *i8 = cast_run(Q8_I64, Q8_I8, iv, 4);
    cr_assert_eq(i8[0], 44);
    cr_assert_eq(i8[1], 127);
    free(i8);
    float *fv = cast_run(Q8_I64, Q8_F32, iv, 4);
    cr_assert_eq(fv[2], 16777216.0f);
    cr_assert_eq(fv[3], 0x1p63f);
    free(fv);
    uint64_t uv[2] = {UINT64_MAX, 1};
    double *dv = cast_run(Q8_U64, Q8_F64, uv, 2);
    cr_assert_eq(dv[0], 0x1p64);
    free(dv);
    /* float32 -> float64 -> float32 round trip, float64 -> float32 rounding */
    double dd[3] = {0.1, 1e300, -1e-300};
    float *ff = cast_run(Q8_F64, Q8_F32, dd, 3);
    cr_assert_eq(ff[0], 0.1f);
    cr_assert_eq(ff[1], INFINITY);
    cr_assert(ff[2] == 0 && signbit(ff[2]));
    free(ff);
    /* int32 -> float16 */
    int32_t hv[3] = {2049, 70000, -3};
    uint16_t *hh = cast_run(Q8_I32, Q8_F16, hv, 3);
    cr_assert_eq(hh[0], f16_bits(2048.0f), "2049 ties to even 2048");
    cr_assert_eq(hh[1], 0x7C00);
    cr_assert_eq(hh[2], f16_bits(-3.0f));
    free(hh);
}

Test(math_cast, castlike_and_threads) {
    q8t_rng r = q8t_seed(29);
    int64_t n = 100003;
    float *x = malloc(sizeof(float) * (size_t)n);
    q8t_fill(&r, x, n, -1000, 1000);
    double like = 0;
    q8t_in ins[2] = {{"x", Q8_F32, 1, {n}, NULL}, {"like", Q8_F64, 1, {1}, NULL}};
    const void *data[2] = {x, &like};
    void *out[2][1];
    for (int t = 0; t < 2; t++) {
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op("CastLike", ins, 2, data, NULL, 0, t ? 3 : 1, out[t], &info, &err),
                     Q8_OK, "%s", err.msg);
        cr_assert_eq(info.dtype, Q8_F64);
        for (int64_t i = 0; i < n; i++) cr_assert_eq(((double *)out[t][0])[i], (double)x[i]);
    }
    cr_assert(memcmp(out[0][0], out[1][0], 8 * (size_t)n) == 0);
    free(out[0][0]);
    free(out[1][0]);
    free(x);
}

/* Every pair of the 13 dtypes Cast takes, through q8t_run_backends: the
 * CPU, then every other backend of the build (CUDA, emulated without a
 * GPU), which must give the CPU's bytes. Inputs: special values first
 * (NaNs with payloads, infinities, -0, values near .5, at and just past
 * every integer type's limits, float16 / bfloat16 ties and subnormals),
 * then random bit patterns and random fractional values; every float16 and
 * bfloat16 pattern; shapes with 0 elements, a scalar, odd sizes. */

static const q8_dtype cast_dtypes[] = {Q8_BOOL, Q8_F16, Q8_BF16, Q8_F32, Q8_F64,
                                       Q8_I8,   Q8_U8,  Q8_I16,  Q8_U16, Q8_I32,
                                       Q8_U32,  Q8_I64, Q8_U64};
#define N_CAST_DTYPES (int)(sizeof cast_dtypes / sizeof cast_dtypes[0])

static const double cast_fspecial[] = {
    0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 0.50000006,
    -0.50000006, 0.9999999, -0.9999999, 1.0, -1.0, 126.5, 127.0, 127.5, 127.99, 128.0,
    -127.5, -128.0, -128.5, -128.99, -129.0, 254.5, 255.0, 255.5, 255.99, 256.0, -0.001,
    32767.5, 32768.0, -32768.5, -32769.0, 65535.5, 65536.0, 2147483647.0, 2147483647.5,
    2147483648.0, -2147483648.0, -2147483648.5, -2147483904.0, 4294967295.0, 4294967295.5,
    4294967296.0, 0x1p63, -0x1p63, 0x1.fffffffffffffp62, 0x1p64, 0x1.fffffffffffffp63, 1e30,
    -1e30, 65504.0, 65519.99, 65520.0, -65520.0, 1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11,
    1.0 + 0x1p-8, 1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-8 + 0x1p-40, -(1.0 + 0x1p-8 + 0x1p-40),
    0x1p-24, 0x1p-25, 0x1.000002p-25, 0x1.8p-24, 0x1p-14, 0x1.ffcp-15, 1e-40, -1e-45, 1e-300,
    -1e-300, FLT_MAX, -FLT_MAX, 0x1.fffffefffffffp127, 0x1.ffffffp127, DBL_MAX, 16777217.0,
    -16777217.0, 0x1.0000018p0, INFINITY, -INFINITY, NAN, -NAN};
static const uint32_t cast_nan32[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FA5A5A5u,
                                      0xFF812345u, 0x7FFFFFFFu};
static const uint64_t cast_nan64[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull,
                                      0x7FF0000000000001ull, 0x7FF4000123456789ull,
                                      0xFFFABCDEF0123456ull, 0x7FF00000E0000000ull};
static const int64_t cast_ispecial[] = {0, 1, -1, 2, 127, 128, -128, -129, 255, 256, -256,
                                        32767, 32768, -32768, -32769, 65535, 65536, 2049, 2050,
                                        4097, 16777217, 16777219, -16777217, 2147483647,
                                        -2147483647 - 1, 4294967295ll, 4294967296ll,
                                        (1ll << 40) + (1ll << 32) + 1, (1ll << 40) + (1ll << 32),
                                        9007199254740993ll, INT64_MAX, INT64_MIN, INT64_MAX - 1,
                                        (int64_t)0x8000008000000001ull, 0x7FFFFF8000000000ll};

/* n values of dtype t (malloc'd); see above. */
static void *cast_input(q8_dtype t, int64_t n, q8t_rng *r) {
    size_t es = q8_dtype_size(t);
    uint8_t *x = malloc(es * (size_t)(n ? n : 1));
    int64_t i = 0;
#define PUT(T, v)                                                                          \
    do {                                                                                  \
        T v_ = (v);                                                                       \
        memcpy(x + es * (size_t)i, &v_, es);                                              \
    } while (0)
    if (t == Q8_F16 || t == Q8_BF16) /* every pattern, then random ones */
        for (; i < n; i++) PUT(uint16_t, i < 65536 ? (uint16_t)i : (uint16_t)q8t_next(r));
    if (t == Q8_F32 || t == Q8_F64) {
        int nf = (int)(sizeof cast_fspecial / sizeof cast_fspecial[0]);
        for (int k = 0; k < nf && i < n; k++, i++) {
            if (t == Q8_F32) PUT(float, (float)cast_fspecial[k]);
            else PUT(double, cast_fspecial[k]);
        }
        for (int k = 0; k < 6 && i < n; k++, i++) {
            if (t == Q8_F32) PUT(uint32_t, cast_nan32[k]);
            else PUT(uint64_t, cast_nan64[k]);
        }
        for (; i < n; i++) {
            uint64_t b = q8t_next(r);
            double v;
            switch (i % 4) {
            case 0: /* any bits */
                if (t == Q8_F32) PUT(uint32_t, (uint32_t)b);
                else PUT(uint64_t, b);
                continue;
            case 1: v = (double)(int64_t)(b >> 40) - 8388608.0 + 0.5; break; /* k + .5 */
            case 2: v = ldexp((double)(b >> 11), -53) * ldexp(1.0, (int)(b % 80) - 8); break;
            default: v = q8t_uniform(r, -300, 300); break;
            }
            if (b & (1ull << 10)) v = -v;
            if (t == Q8_F32) PUT(float, (float)v);
            else PUT(double, v);
        }
    }
    if (t == Q8_BOOL) {
        static const uint8_t bs[] = {0, 1, 0, 2, 255, 0x80, 1};
        for (; i < n; i++) {
            uint64_t b = q8t_next(r);
            x[i] = i < 7 ? bs[i] : (b & 3) ? (uint8_t)(b >> 8 & 1) : (uint8_t)(b >> 8);
        }
    }
    int ni = (int)(sizeof cast_ispecial / sizeof cast_ispecial[0]);
    if (q8_dtype_is_int(t)) {
        for (int k = 0; k < ni && i < n; k++, i++) {
            uint64_t v = (uint64_t)cast_ispecial[k];
            memcpy(x + es * (size_t)i, &v, es); /* the low bytes (little-endian) */
        }
        for (; i < n; i++) {
            uint64_t v = q8t_next(r);
            if (i % 3 == 0) v = (uint64_t)((int64_t)v >> (int)(v % 64)); /* small ones too */
            memcpy(x + es * (size_t)i, &v, es);
        }
    }
#undef PUT
    return x;
}

/* Element i of x (dtype t) as a double; ints wider than 53 bits round. */
static double cast_value(q8_dtype t, const void *x, int64_t i) {
    switch (t) {
    case Q8_F32: return ((const float *)x)[i];
    case Q8_F64: return ((const double *)x)[i];
    case Q8_F16: return q8_f16_to_f32(((const uint16_t *)x)[i]);
    case Q8_BF16: return q8_bf16_to_f32(((const uint16_t *)x)[i]);
    case Q8_I8: return ((const int8_t *)x)[i];
    case Q8_U8: return ((const uint8_t *)x)[i];
    case Q8_I16: return ((const int16_t *)x)[i];
    case Q8_U16: return ((const uint16_t *)x)[i];
    case Q8_I32: return ((const int32_t *)x)[i];
    case Q8_U32: return ((const uint32_t *)x)[i];
    case Q8_I64: return (double)((const int64_t *)x)[i];
    case Q8_U64: return (double)((const uint64_t *)x)[i];
    default: return ((const uint8_t *)x)[i] != 0;
    }
}

/* The plain reference for float -> int and anything -> bool: truncation,
 * NaN -> 0, saturation; "!= 0" (NaN is true). */
static void cast_check_ref(q8_dtype from, q8_dtype to, const void *x, const void *y, int64_t n) {
    bool ffrom = q8_dtype_is_float(from);
    if (from == to || (to != Q8_BOOL && !(ffrom && q8_dtype_is_int(to)))) return; /* copies */
    for (int64_t i = 0; i < n; i++) {
        double v = cast_value(from, x, i);
        if (to == Q8_BOOL) {
            bool nz = from == Q8_BOOL ? ((const uint8_t *)x)[i] != 0 : (isnan(v) || v != 0);
            cr_assert_eq(((const uint8_t *)y)[i], nz, "%s %.17g -> bool", q8_dtype_name(from), v);
            continue;
        }
        double lo, hi, got = cast_value(to, y, i);
        switch (to) {
        case Q8_I8: lo = INT8_MIN, hi = INT8_MAX; break;
        case Q8_U8: lo = 0, hi = UINT8_MAX; break;
        case Q8_I16: lo = INT16_MIN, hi = INT16_MAX; break;
        case Q8_U16: lo = 0, hi = UINT16_MAX; break;
        case Q8_I32: lo = INT32_MIN, hi = INT32_MAX; break;
        case Q8_U32: lo = 0, hi = UINT32_MAX; break;
        case Q8_I64: lo = -0x1p63, hi = 0x1p63; break; /* the limits, as doubles */
        default: lo = 0, hi = 0x1p64; break;
        }
        double want = isnan(v) ? 0 : v <= lo ? lo : v >= hi ? hi : trunc(v);
        cr_assert(got == want, "%s %.17g -> %s: %.17g, want %.17g", q8_dtype_name(from), v,
                  q8_dtype_name(to), got, want);
    }
}

Test(math_cast, every_pair_on_every_backend) {
    q8t_rng r = q8t_seed(31);
    for (int a = 0; a < N_CAST_DTYPES; a++)
        for (int b = 0; b < N_CAST_DTYPES; b++) {
            q8_dtype from = cast_dtypes[a], to = cast_dtypes[b];
            bool half = from == Q8_F16 || from == Q8_BF16;
            /* 0 elements, a scalar, an odd 2-d shape (every half pattern) */
            const int64_t shapes[3][2] = {{0, 5}, {1, 1}, {half ? 2 : 17, half ? 32771 : 241}};
            const int nds[3] = {2, 0, 2};
            for (int c = 0; c < 3; c++) {
                int64_t n = shapes[c][0] * shapes[c][1];
                void *x = cast_input(from, n, &r);
                for (int like = 0; like < (c == 2 ? 2 : 1); like++) {
                    void *y = cast_run_shape(from, to, x, shapes[c], nds[c], like);
                    cast_check_ref(from, to, x, y, n);
                    free(y);
                }
                free(x);
            }
        }
}

/* More than 65535 blocks of 256 threads on a GPU: the grid-stride loop. */
Test(math_cast, large) {
    q8t_rng r = q8t_seed(37);
    int64_t n = 65536ll * 256 + 77;
    float *x = cast_input(Q8_F32, n, &r);
    int8_t *y = cast_run(Q8_F32, Q8_I8, x, n);
    cast_check_ref(Q8_F32, Q8_I8, x, y, n);
    float *back = cast_run(Q8_I8, Q8_F32, y, n);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(back[i], (float)y[i]);
    free(back);
    free(y);
    free(x);
}

/* ---------- unary ---------- */

static double d_relu(double x) { return x < 0 ? 0 : x; }
static double d_leaky(double x) { return x < 0 ? (double)0.1f * x : x; } /* alpha = 0.1f */
static double d_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double d_hsig(double x) {
    double v = 0.2 * x + 0.5;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}
static double d_hswish(double x) {
    double v = x / 6 + 0.5;
    return x * (v < 0 ? 0 : v > 1 ? 1 : v);
}
static double d_elu(double x) { return x < 0 ? 0.5 * (exp(x) - 1) : x; } /* alpha = 0.5 */
static double d_selu(double x) {
    return x > 0 ? 1.0507009873554804934193349852946 * x
                 : 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717 *
                       (exp(x) - 1);
}
static double d_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); } /* = 1 + erf */
/* long double: 1 + tanh(u) cancels for negative u */
static double d_gelu_t(double x) {
    long double u = sqrtl(2 / (long double)M_PI) * (x + 0.044715L * x * x * x);
    return (double)(0.5L * x * (1 + tanhl(u)));
}
static double d_neg(double x) { return -x; }
static double d_recip(double x) { return 1 / x; }
static double d_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
static double d_softplus(double x) { return log1p(exp(x)); }
static double d_softsign(double x) { return x / (1 + fabs(x)); }
static double d_round(double x) { return nearbyint(x); }

static double d_thr(double x) { return x > 0.5 ? x : 0; }                 /* alpha = 0.5 */
static double d_celu(double x) { return x > 0 ? x : 2.0 * expm1(x / 2.0); } /* alpha = 2 */
static double d_shrink(double x) { return x < -1.5 ? x + 0.25 : x > 1.5 ? x - 0.25 : 0; }
static double d_shrink0(double x) { return x < -0.5 ? x : x > 0.5 ? x : 0; } /* defaults */

static void a_leaky(q8_graph *g) { q8t_attr_float(g, "alpha", 0.1f); }
static void a_half(q8_graph *g) { q8t_attr_float(g, "alpha", 0.5f); }
static void a_two(q8_graph *g) { q8t_attr_float(g, "alpha", 2.0f); }
static void a_shrink(q8_graph *g) {
    q8t_attr_float(g, "lambd", 1.5f);
    q8t_attr_float(g, "bias", 0.25f);
}
static void a_elu(q8_graph *g) { q8t_attr_float(g, "alpha", 0.5f); }
static void a_gelu_tanh(q8_graph *g) { q8t_attr_str(g, "approximate", "tanh"); }

static const struct {
    const char *op;
    double (*ref)(double);
    float lo, hi, rtol, atol;
    attr_fn attrs;
} unaries[] = {
    {"Relu", d_relu, -5, 5, 0, 0, NULL},
    {"LeakyRelu", d_leaky, -5, 5, 1e-7f, 0, a_leaky},
    {"Sigmoid", d_sigmoid, -20, 20, 4e-7f, 1e-30f, NULL},
    {"HardSigmoid", d_hsig, -5, 5, 2e-7f, 1e-7f, NULL},
    {"HardSwish", d_hswish, -5, 5, 3e-7f, 1e-7f, NULL},
    {"Tanh", tanh, -10, 10, 3e-7f, 0, NULL},
    {"Elu", d_elu, -10, 5, 3e-7f, 0, a_elu},
    {"Selu", d_selu, -10, 5, 3e-7f, 0, NULL},
    {"Erf", erf, -4, 4, 3e-7f, 0, NULL},
    {"Gelu", d_gelu, -12, 6, 4e-7f, 1e-30f, NULL}, /* vmath.h's: <= 4 ulp, below */
    {"Gelu", d_gelu_t, -6, 6, 2e-7f, 1e-30f, a_gelu_tanh},
    {"Sqrt", sqrt, 0, 100, 2e-7f, 0, NULL},
    {"Exp", exp, -80, 80, 3e-7f, 0, NULL},
    {"Log", log, 1e-3f, 1e3f, 3e-7f, 1e-7f, NULL},
    {"Abs", fabs, -5, 5, 0, 0, NULL},
    {"Neg", d_neg, -5, 5, 0, 0, NULL},
    {"Reciprocal", d_recip, 0.1f, 10, 1e-7f, 0, NULL},
    {"Floor", floor, -50, 50, 0, 0, NULL},
    {"Ceil", ceil, -50, 50, 0, 0, NULL},
    {"Round", d_round, -50, 50, 0, 0, NULL},
    {"Sign", d_sign, -5, 5, 0, 0, NULL},
    {"Softplus", d_softplus, -30, 30, 3e-7f, 1e-30f, NULL},
    {"Softsign", d_softsign, -30, 30, 2e-7f, 0, NULL},
    /* libm's float functions: within a few ulps; near the zeros of sin,
     * cos and tan the error is absolute */
    {"Sin", sin, -20, 20, 4e-7f, 2e-7f, NULL},
    {"Cos", cos, -20, 20, 4e-7f, 2e-7f, NULL},
    {"Tan", tan, -1.5f, 1.5f, 4e-7f, 2e-7f, NULL},
    {"Asin", asin, -1, 1, 4e-7f, 0, NULL},
    {"Acos", acos, -1, 1, 4e-7f, 0, NULL},
    {"Atan", atan, -30, 30, 4e-7f, 0, NULL},
    {"Sinh", sinh, -80, 80, 4e-7f, 0, NULL},
    {"Cosh", cosh, -80, 80, 4e-7f, 0, NULL},
    {"Asinh", asinh, -1e4f, 1e4f, 4e-7f, 0, NULL},
    {"Acosh", acosh, 1, 1e4f, 4e-7f, 0, NULL},
    {"Atanh", atanh, -0.999f, 0.999f, 4e-7f, 0, NULL},
    {"ThresholdedRelu", d_thr, -3, 3, 0, 0, a_half},
    {"Celu", d_celu, -20, 5, 3e-7f, 0, a_two},
    {"Shrink", d_shrink, -4, 4, 1e-7f, 0, a_shrink},
    {"Shrink", d_shrink0, -2, 2, 0, 0, NULL},
};

Test(math_unary, float_ops_vs_reference) {
    q8t_rng r = q8t_seed(31);
    int64_t sizes[3] = {13, 63, 70001};
    for (size_t o = 0; o < sizeof unaries / sizeof unaries[0]; o++)
        for (int s = 0; s < 3; s++) {
            int64_t n = sizes[s];
            float *x = malloc(sizeof(float) * (size_t)n), *want = malloc(sizeof(float) * (size_t)n);
            q8t_fill(&r, x, n, unaries[o].lo, unaries[o].hi);
            if (n > 13) x[3] = 2.5f, x[4] = -0.5f; /* Round ties */
            for (int64_t i = 0; i < n; i++) want[i] = (float)unaries[o].ref(x[i]);
            q8t_in in = {"x", Q8_F32, 1, {n}, NULL};
            if (s == 1) in = (q8t_in){"x", Q8_F32, 3, {3, 3, 7}, NULL};
            const void *data[1] = {x};
            void *out[2][1];
            for (int t = 0; t < 2; t++) {
                q8_tensor_info info;
                q8_error err;
                cr_assert_eq(run_op(unaries[o].op, &in, 1, data, unaries[o].attrs, 0, t ? 3 : 1,
                                    out[t], &info, &err),
                             Q8_OK, "%s: %s", unaries[o].op, err.msg);
                q8t_assert_close(out[t][0], want, n, unaries[o].rtol, unaries[o].atol,
                                 unaries[o].op);
            }
            cr_assert(memcmp(out[0][0], out[1][0], sizeof(float) * (size_t)n) == 0, "%s threads",
                      unaries[o].op);
            free(out[0][0]);
            free(out[1][0]);
            free(x);
            free(want);
        }
}

/* The piecewise activations run cloned, vectorized loops (kernels/cpu/ops/
 * unary.c): every element, vector body or tail, must round alpha * x + beta
 * twice (no FMA contraction), bit for bit as the scalar formula. */
static float f_mul_add(float a, float x, float b) {
    volatile float p = a * x; /* rounded on its own */
    return p + b;
}

Test(math_unary, piecewise_same_bits_as_scalar) {
    q8t_rng r = q8t_seed(77);
    const char *ops[2] = {"HardSigmoid", "HardSwish"};
    float al[2] = {0.2f, 1.0f / 6}, be = 0.5f;
    for (int o = 0; o < 2; o++)
        for (int64_t n = 1; n <= 100; n += 33) {
            float *x = malloc(sizeof(float) * (size_t)(n * 64));
            int64_t len = n * 64 - 3; /* vector body and a tail */
            q8t_fill(&r, x, len, -7, 7);
            q8t_in in = {"x", Q8_F32, 1, {len}, NULL};
            const void *data[1] = {x};
            void *out[1];
            q8_tensor_info info;
            q8_error err;
            cr_assert_eq(run_op(ops[o], &in, 1, data, NULL, 0, 2, out, &info, &err), Q8_OK,
                         "%s", err.msg);
            const float *y = out[0];
            for (int64_t i = 0; i < len; i++) {
                float h = f_mul_add(al[o], x[i], be), want;
                if (o == 0) want = h < 0 ? 0.0f : h > 1 ? 1.0f : h;
                else want = h <= 0 ? -0.0f : h >= 1 ? x[i] : x[i] * h;
                cr_assert(memcmp(&y[i], &want, 4) == 0, "%s(%a) = %a, want %a", ops[o], x[i],
                          y[i], want);
            }
            free(out[0]);
            free(x);
        }
}

/* Distance in units of the last place of the float nearest to want. */
static double ulp_err(float got, double want) {
    if (isnan(want)) return isnan(got) ? 0 : 1e9;
    if (fabs(want) > FLT_MAX) return (float)want == got ? 0 : 1e9;
    int e;
    frexp(fabs(want), &e);
    double ulp = ldexp(1.0, e - 24);
    if (ulp < 0x1p-149) ulp = 0x1p-149;
    return fabs((double)got - want) / ulp;
}

Test(math_unary, fast_exp_accuracy) {
    double worst_e = 0, worst_s = 0;
    float at_e = 0, at_s = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) {
        float x;
        uint32_t b = (uint32_t)u;
        memcpy(&x, &b, 4);
        double ee = ulp_err(q8_vexp(x), exp((double)x));
        double es = ulp_err(q8_vsigmoid(x), 1.0 / (1.0 + exp(-(double)x)));
        if (ee > worst_e) worst_e = ee, at_e = x;
        if (es > worst_s) worst_s = es, at_s = x;
    }
    cr_assert(worst_e <= 1.5, "exp: %.3f ulp at %a", worst_e, at_e);
    cr_assert(worst_s <= 3.0, "sigmoid: %.3f ulp at %a", worst_s, at_s);
    /* the ends */
    cr_assert_eq(q8_vexp(88.72283f), expf(88.72283f));
    cr_assert_eq(q8_vexp(88.7229f), INFINITY);
    cr_assert_eq(q8_vexp(-103.0f), 0x1p-149f);
    cr_assert_eq(q8_vexp(-100.0f), expf(-100.0f), "subnormal: %a", q8_vexp(-100.0f));
    cr_assert_eq(q8_vexp(-104.0f), 0.0f);
    cr_assert_eq(q8_vexp(0.0f), 1.0f);
    cr_assert_eq(q8_vsigmoid(0.0f), 0.5f);
    cr_assert_eq(q8_vsigmoid(-0.0f), 0.5f);
}

/* Exp, Sigmoid, Tanh, Erf and Gelu run as vectorized loops over vmath.h:
 * over a dense sample of all floats (every 4099th bit pattern), as ops, Exp
 * and Sigmoid give vmath.h's scalar bits (checked above), Tanh and Erf are within
 * 3 ulp of the exact values (+-1 at +-inf, NaN at NaN, -0 at -0), Gelu
 * within 4 ulp where its result is a normal float (from x = -13.2 down it
 * is subnormal: within 1e-44 there), Elu (expm1 below 0), Log (NaN below 0,
 * subnormals included) and Softplus within 3 ulp. */
Test(math_unary, vector_transcendentals) {
    const int64_t n = (int64_t)(0xFFFFFFFFull / 4099) + 1;
    float *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        uint32_t b = (uint32_t)((uint64_t)i * 4099);
        memcpy(&x[i], &b, 4);
    }
    x[0] = -0.0f, x[1] = INFINITY, x[2] = -INFINITY, x[3] = NAN;
    q8t_in in = {"x", Q8_F32, 1, {n}, NULL};
    const void *data[1] = {x};
    const char *ops[8] = {"Exp", "Sigmoid", "Tanh", "Erf", "Gelu", "Elu", "Log", "Softplus"};
    for (int o = 0; o < 8; o++) {
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op(ops[o], &in, 1, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        const float *y = out[0];
        double worst = 0;
        float at = 0;
        for (int64_t i = 0; i < n; i++) {
            if (o < 2) {
                float want = o == 0 ? q8_vexp(x[i]) : q8_vsigmoid(x[i]);
                cr_assert(isnan(want) ? isnan(y[i]) : memcmp(&y[i], &want, 4) == 0,
                          "%s(%a) = %a, want %a", ops[o], x[i], y[i], want);
            } else {
                double xd = x[i], want = o == 2   ? tanh(xd)
                                         : o == 3 ? erf(xd)
                                         : o == 5 ? (xd < 0 ? expm1(xd) : xd)
                                         : o == 6 ? log(xd)
                                         : o == 7 ? (xd > 0 ? xd + log1p(exp(-xd)) : log1p(exp(xd)))
                                                  : 0.5 * xd * erfc(-xd * 0.70710678118654752440);
                if (o == 4 && isinf(xd)) want = xd > 0 ? xd : -0.0;
                if (o == 4 && fabs(want) < FLT_MIN) {
                    cr_assert(fabs(y[i] - want) <= 1e-44, "Gelu(%a) = %a, want %a", x[i], y[i],
                              want);
                    continue;
                }
                double e = ulp_err(y[i], want);
                if (e > worst) worst = e, at = x[i];
            }
        }
        if (o >= 2) {
            cr_assert(worst <= (o == 4 ? 4.0 : 3.0), "%s: %.3f ulp at %a", ops[o], worst, at);
            if (o == 5)
                cr_assert(signbit(y[0]) && y[0] == 0 && y[1] == INFINITY && y[2] == -1 &&
                          isnan(y[3]));
            else if (o == 6)
                cr_assert(y[0] == -INFINITY && y[1] == INFINITY && isnan(y[2]) && isnan(y[3]));
            else if (o == 7)
                cr_assert(y[0] == (float)log(2.0) && y[1] == INFINITY && y[2] == 0 &&
                          isnan(y[3]));
            else if (o < 4)
                cr_assert(signbit(y[0]) && y[0] == 0 && y[1] == 1 && y[2] == -1 && isnan(y[3]));
            else
                cr_assert(signbit(y[0]) && y[0] == 0 && y[1] == INFINITY && y[2] == 0 &&
                          signbit(y[2]) && isnan(y[3]));
        }
        free(out[0]);
    }
    free(x);
}

typedef struct special {
    const char *op;
    float x, want;
} special;

Test(math_unary, special_values) {
    static const special sp[] = {
        {"Relu", NAN, NAN},
        {"Relu", -INFINITY, 0},
        {"Relu", INFINITY, INFINITY},
        {"Sigmoid", INFINITY, 1},
        {"Sigmoid", -INFINITY, 0},
        {"Sigmoid", NAN, NAN},
        {"Sigmoid", -100, 3.7200760e-44f},
        {"Tanh", INFINITY, 1},
        {"Tanh", -INFINITY, -1},
        {"Tanh", NAN, NAN},
        {"Exp", -INFINITY, 0},
        {"Exp", INFINITY, INFINITY},
        {"Exp", 89, INFINITY},
        {"Log", 0, -INFINITY},
        {"Log", -1, NAN},
        {"Log", INFINITY, INFINITY},
        {"Sqrt", -1, NAN},
        {"Sqrt", INFINITY, INFINITY},
        {"Sqrt", -0.0f, -0.0f},
        {"Abs", -0.0f, 0.0f},
        {"Abs", -INFINITY, INFINITY},
        {"Neg", 0.0f, -0.0f},
        {"Reciprocal", 0.0f, INFINITY},
        {"Reciprocal", -0.0f, -INFINITY},
        {"Elu", -INFINITY, -1},
        {"Selu", -INFINITY, -1.7580993408473766f},
        {"Erf", INFINITY, 1},
        {"Erf", -INFINITY, -1},
        {"Erf", NAN, NAN},
        {"Gelu", -INFINITY, -0.0f},
        {"Gelu", INFINITY, INFINITY},
        {"Gelu", NAN, NAN},
        {"Gelu", -30, -0.0f},
        {"Softplus", 100, 100},
        {"Softplus", -100, 3.7200760e-44f},
        {"Softplus", INFINITY, INFINITY},
        {"Softplus", -INFINITY, 0},
        {"Round", 0.5f, 0},
        {"Round", 1.5f, 2},
        {"Round", 2.5f, 2},
        {"Round", -2.5f, -2},
        {"Round", -0.5f, -0.0f},
        {"Round", 8388609.0f, 8388609.0f},
        {"Floor", -0.5f, -1},
        {"Ceil", -0.5f, -0.0f},
        {"Sign", NAN, NAN},
        {"Sign", -0.0f, -0.0f},
        {"HardSigmoid", NAN, NAN},
        {"HardSwish", -INFINITY, -0.0f},
        {"HardSwish", 3, 3},
        {"HardSwish", INFINITY, INFINITY},
        {"LeakyRelu", -INFINITY, -INFINITY},
        {"Softsign", INFINITY, 1},
    };
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        q8t_in in = {"x", Q8_F32, 0, {0}, NULL};
        const void *data[1] = {&sp[i].x};
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op(sp[i].op, &in, 1, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        cr_assert_eq(info.ndim, 0);
        float g = *(float *)out[0];
        if (isnan(sp[i].want))
            cr_assert(isnan(g), "%s(%g) = %g, want NaN", sp[i].op, sp[i].x, g);
        else
            cr_assert(g == sp[i].want && signbit(g) == signbit(sp[i].want),
                      "%s(%g) = %.9g, want %.9g", sp[i].op, sp[i].x, g, sp[i].want);
        free(out[0]);
    }
}

Test(math_unary, int_abs_neg_sign_not) {
    int64_t x64[5] = {INT64_MIN, -7, 0, 7, INT64_MAX};
    int32_t x32[5] = {INT32_MIN, -7, 0, 7, INT32_MAX};
    const char *ops[3] = {"Abs", "Neg", "Sign"};
    for (int o = 0; o < 3; o++)
        for (int w = 0; w < 2; w++) {
            q8t_in in = {"x", w ? Q8_I64 : Q8_I32, 1, {5}, NULL};
            const void *data[1] = {w ? (void *)x64 : (void *)x32};
            void *out[1];
            q8_tensor_info info;
            q8_error err;
            cr_assert_eq(run_op(ops[o], &in, 1, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                         err.msg);
            for (int i = 0; i < 5; i++) {
                int64_t v = w ? x64[i] : x32[i], min = w ? INT64_MIN : INT32_MIN;
                int64_t want = o == 0   ? (v == min ? min
                                           : v < 0  ? -v
                                                    : v)
                               : o == 1 ? (v == min ? min : -v)
                                        : (v > 0) - (v < 0);
                int64_t g = w ? ((int64_t *)out[0])[i] : ((int32_t *)out[0])[i];
                cr_assert_eq(g, want, "%s int%d(%lld) = %lld", ops[o], w ? 64 : 32, (long long)v,
                             (long long)g);
            }
            free(out[0]);
        }
    uint8_t b[3] = {0, 1, 1};
    q8t_in in = {"x", Q8_BOOL, 1, {3}, NULL};
    const void *data[1] = {b};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Not", &in, 1, data, NULL, 0, 1, out, &info, &err), Q8_OK);
    uint8_t want[3] = {1, 0, 0};
    cr_assert(memcmp(out[0], want, 3) == 0);
    free(out[0]);
}

/* ---------- Clip, PRelu ---------- */

Test(math_clip, inputs_attrs_ints) {
    float x[7] = {-3, -1, 0, 0.5f, 2, 5, NAN};
    float lo = -1, hi = 2;
    q8t_in ins[3] = {
        {"x", Q8_F32, 1, {7}, NULL}, {"lo", Q8_F32, 0, {0}, NULL}, {"hi", Q8_F32, 0, {0}, NULL}};
    const void *data[3] = {x, &lo, &hi};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Clip", ins, 3, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s", err.msg);
    float want[7] = {-1, -1, 0, 0.5f, 2, 2, NAN};
    q8t_assert_close(out[0], want, 7, 0, 0, "clip");
    free(out[0]);
    /* min absent (empty name), max given */
    q8t_in ins2[3] = {ins[0], {NULL, Q8_F32, 0, {0}, NULL}, ins[2]};
    const void *data2[3] = {x, NULL, &hi};
    cr_assert_eq(run_op("Clip", ins2, 3, data2, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                 err.msg);
    float want2[7] = {-3, -1, 0, 0.5f, 2, 2, NAN};
    q8t_assert_close(out[0], want2, 7, 0, 0, "clip max only");
    free(out[0]);
    /* min > max: everything becomes max */
    float lo3 = 3, hi3 = 1;
    const void *data3[3] = {x, &lo3, &hi3};
    cr_assert_eq(run_op("Clip", ins, 3, data3, NULL, 0, 1, out, &info, &err), Q8_OK);
    for (int i = 0; i < 6; i++) cr_assert_eq(((float *)out[0])[i], 1.0f);
    free(out[0]);
    /* opset 6: attributes */
    q8_graph *g = q8t_graph1("Clip", ins, 1, 1);
    g->opset = 6;
    q8t_attr_float(g, "min", 0);
    q8t_attr_float(g, "max", 1);
    const void *d1[1] = {x};
    cr_assert_eq(q8t_run(g, d1, 1, out, &info, 1, &err), Q8_OK, "%s", err.msg);
    float want3[7] = {0, 0, 0, 0.5f, 1, 1, NAN};
    q8t_assert_close(out[0], want3, 7, 0, 0, "clip-6");
    free(out[0]);
    /* int8 and int64, no bounds given / bounds given */
    int8_t i8[4] = {-128, -5, 5, 127}, l8 = -3;
    q8t_in ins8[2] = {{"x", Q8_I8, 1, {4}, NULL}, {"lo", Q8_I8, 0, {0}, NULL}};
    const void *data8[2] = {i8, &l8};
    cr_assert_eq(run_op("Clip", ins8, 2, data8, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                 err.msg);
    int8_t want8[4] = {-3, -3, 5, 127};
    cr_assert(memcmp(out[0], want8, 4) == 0);
    free(out[0]);
    int64_t i64[3] = {INT64_MIN, 0, INT64_MAX}, h64 = 10;
    q8t_in ins64[3] = {
        {"x", Q8_I64, 1, {3}, NULL}, {NULL, Q8_I64, 0, {0}, NULL}, {"hi", Q8_I64, 1, {1}, NULL}};
    const void *data64[3] = {i64, NULL, &h64};
    cr_assert_eq(run_op("Clip", ins64, 3, data64, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                 err.msg);
    int64_t want64[3] = {INT64_MIN, 0, 10};
    cr_assert(memcmp(out[0], want64, sizeof want64) == 0);
    free(out[0]);
}

Test(math_prelu, channel_slope) {
    q8t_rng r = q8t_seed(37);
    float x[2 * 3 * 4 * 5], s[3], want[120];
    q8t_fill(&r, x, 120, -2, 2);
    q8t_fill(&r, s, 3, -1, 1);
    for (int i = 0; i < 120; i++) want[i] = x[i] < 0 ? x[i] * s[(i / 20) % 3] : x[i];
    q8t_in ins[2] = {{"x", Q8_F32, 4, {2, 3, 4, 5}, NULL}, {"s", Q8_F32, 3, {3, 1, 1}, NULL}};
    const void *data[2] = {x, s};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("PRelu", ins, 2, data, NULL, 0, 3, out, &info, &err), Q8_OK, "%s", err.msg);
    q8t_assert_close(out[0], want, 120, 0, 0, "prelu");
    free(out[0]);
    /* opset 6: a 1-D slope of length C is per channel */
    ins[1].ndim = 1;
    ins[1].dims[0] = 3;
    cr_assert_eq(run_op("PRelu", ins, 2, data, NULL, 6, 1, out, &info, &err), Q8_OK, "%s", err.msg);
    q8t_assert_close(out[0], want, 120, 0, 0, "prelu-6");
    free(out[0]);
    /* opset 17: the same slope broadcasts numpy-style, against W (5 != 3) */
    cr_assert_neq(run_op("PRelu", ins, 2, data, NULL, 0, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "slope shape 3 does not broadcast to X shape 2x3x4x5"), "%s",
              err.msg);
    /* slope bigger than X: unidirectional only */
    q8t_in ins2[2] = {{"x", Q8_F32, 1, {5}, NULL}, {"s", Q8_F32, 2, {2, 5}, NULL}};
    cr_assert_neq(run_op("PRelu", ins2, 2, data, NULL, 0, 1, out, &info, &err), Q8_OK);
    cr_assert(strstr(err.msg, "does not broadcast to X shape 5"), "%s", err.msg);
}

/* PRelu's vector loops (one slope per row, and a slope per element) on rows
 * longer than a vector with a tail, with -0, +-inf, NaN and denormals in X
 * and zero / negative slopes: the values of x < 0 ? x * s : x, bit for bit
 * (a NaN only where the reference has one). */
Test(math_prelu, vector_rows_special_values) {
    enum { C = 3, W = 37, N = 2 * C * W };
    q8t_rng r = q8t_seed(38);
    float x[N], s_row[C], s_elem[C * W], want[N];
    q8t_fill(&r, x, N, -3, 3);
    const float specials[] = {-0.0f, 0.0f, -INFINITY, INFINITY, NAN, -1e-40f, 1e-40f};
    for (int i = 0; i < N; i += 5) x[i] = specials[(i / 5) % 7];
    q8t_fill(&r, s_elem, C * W, -2, 2);
    s_row[0] = 0.0f, s_row[1] = -0.5f, s_row[2] = 0.25f;
    for (int i = 0; i < C * W; i += 7) s_elem[i] = i % 2 ? -0.0f : 0.0f;
    for (int form = 0; form < 2; form++) {
        const float *s = form ? s_elem : s_row;
        for (int i = 0; i < N; i++) {
            float sv = form ? s_elem[i % (C * W)] : s_row[(i / W) % C];
            want[i] = x[i] < 0 ? x[i] * sv : x[i];
        }
        q8t_in ins[2] = {{"x", Q8_F32, 3, {2, C, W}, NULL},
                         {"s", Q8_F32, 2, {C, form ? W : 1}, NULL}};
        const void *data[2] = {x, s};
        void *out[1];
        q8_tensor_info info;
        q8_error err;
        cr_assert_eq(run_op("PRelu", ins, 2, data, NULL, 0, 1, out, &info, &err), Q8_OK, "%s",
                     err.msg);
        const float *y = out[0];
        for (int i = 0; i < N; i++)
            cr_assert(isnan(want[i]) ? isnan(y[i]) : memcmp(&y[i], &want[i], 4) == 0,
                      "form %d [%d]: x %g got %g want %g", form, i, x[i], y[i], want[i]);
        free(out[0]);
    }
}

/* ---------- legacy broadcast (opset < 7) ---------- */

static void a_bcast_axis1(q8_graph *g) {
    q8t_attr_int(g, "broadcast", 1);
    q8t_attr_int(g, "axis", 1);
}

Test(math_binary, legacy_axis_broadcast) {
    float a[2 * 3 * 2], b[3] = {10, 20, 30};
    for (int i = 0; i < 12; i++) a[i] = (float)i;
    q8t_in ins[2] = {{"a", Q8_F32, 3, {2, 3, 2}, NULL}, {"b", Q8_F32, 1, {3}, NULL}};
    const void *data[2] = {a, b};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_eq(run_op("Add", ins, 2, data, a_bcast_axis1, 6, 1, out, &info, &err), Q8_OK, "%s",
                 err.msg);
    for (int i = 0; i < 12; i++) cr_assert_eq(((float *)out[0])[i], a[i] + b[(i / 2) % 3]);
    free(out[0]);
}

/* ---------- in place ---------- */

/* x -> Neg -> t; op(t, rest...) -> out, so out may take over t's buffer.
 * Returns whether the memory plan gives out and t one buffer; the output
 * goes to *out as in q8t_run. data[pos] feeds x (the op sees -x). */
static bool run_chain(const char *op, const q8t_in *ins, int n_in, int pos, const void *const *data,
                      attr_fn attrs, int threads, void **out, q8_tensor_info *info) {
    q8_graph *g = q8t_graph1(op, ins, n_in, 1);
    if (attrs) attrs(g);
    int t = g->nodes[0]->inputs[pos];
    int x = q8_graph_add_tensor(g, "x_pre", NULL);
    q8_tensor_set_shape(g->tensors[x], ins[pos].dtype, ins[pos].dims, ins[pos].ndim);
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t) g->inputs[i] = x;
    int ni = q8_graph_add_node(g, "neg", "Neg");
    cr_assert(q8_node_set_io(g->nodes[ni], &x, 1, &t, 1, NULL) == Q8_OK);
    g->tensors[t]->shape_known = false;
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_plan plan;
    cr_assert_eq(q8_plan_build(g, NULL, NULL, &plan, &err), Q8_OK, "%s", err.msg);
    int ti = q8_graph_find(g, ins[pos].name), oi = q8_graph_find(g, "out0");
    bool shared = plan.buffer[ti] == plan.buffer[oi];
    q8_plan_free(&plan);
    q8_model *m;
    cr_assert_eq(q8_model_from_graph(g, "chain", &m, &err), Q8_OK);
    q8_session *s;
    q8_session_options so = {.n_threads = threads};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    const void *feed[8];
    int nf = 0;
    for (int i = 0; i < n_in; i++)
        if (ins[i].name && !ins[i].data) feed[nf++] = data[i];
    for (int i = 0; i < m->g->n_inputs; i++) {
        const q8_tensor *it = m->g->tensors[m->g->inputs[i]];
        cr_assert_eq(
            q8_session_set_input(s, it->name, it->dtype, it->dims, it->ndim, feed[i], &err), Q8_OK,
            "%s", err.msg);
    }
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    const void *d;
    q8_session_output(s, 0, info, &d, NULL);
    int64_t n = numel_of(info->dims, info->ndim);
    size_t nb = (size_t)n * q8_dtype_size(info->dtype);
    *out = malloc(nb + 1);
    memcpy(*out, d, nb);
    q8_session_free(s);
    q8_model_free(m);
    return shared;
}

Test(math_inplace, ops_reuse_their_input) {
    enum { N = 1000 };
    q8t_rng r = q8t_seed(41);
    float a[N], b[N], c[N];
    q8t_fill(&r, a, N, -2, 2);
    q8t_fill(&r, b, N, -2, 2);
    q8t_fill(&r, c, N, -2, 2);
    void *out;
    q8_tensor_info info;
    /* Add with the reused input second, the other broadcast from [1] */
    q8t_in add_in[2] = {{"s", Q8_F32, 1, {1}, NULL}, {"t", Q8_F32, 2, {10, 100}, NULL}};
    const void *add_d[2] = {c, a};
    cr_assert(run_chain("Add", add_in, 2, 1, add_d, NULL, 3, &out, &info), "in place");
    for (int i = 0; i < N; i++) cr_assert_eq(((float *)out)[i], c[0] + -a[i]);
    free(out);
    /* Sum of three, reused input in the middle */
    q8t_in sum_in[3] = {
        {"p", Q8_F32, 1, {N}, NULL}, {"t", Q8_F32, 1, {N}, NULL}, {"q", Q8_F32, 1, {N}, NULL}};
    const void *sum_d[3] = {b, a, c};
    cr_assert(run_chain("Sum", sum_in, 3, 1, sum_d, NULL, 3, &out, &info), "in place");
    for (int i = 0; i < N; i++) cr_assert_eq(((float *)out)[i], (b[i] + -a[i]) + c[i]);
    free(out);
    /* Where: X reused, cond broadcast */
    uint8_t cond[100];
    for (int i = 0; i < 100; i++) cond[i] = i % 3 == 0;
    q8t_in wh_in[3] = {{"c", Q8_BOOL, 1, {100}, NULL},
                       {"t", Q8_F32, 2, {10, 100}, NULL},
                       {"y", Q8_F32, 0, {0}, NULL}};
    const void *wh_d[3] = {cond, a, b};
    cr_assert(run_chain("Where", wh_in, 3, 1, wh_d, NULL, 1, &out, &info), "in place");
    for (int i = 0; i < N; i++) cr_assert_eq(((float *)out)[i], cond[i % 100] ? -a[i] : b[0]);
    free(out);
    q8t_in un_in[1] = {{"t", Q8_F32, 1, {N}, NULL}};
    const void *un_d[1] = {a};
    /* Pow with an int32 exponent that dies here */
    q8t_in pow_in[2] = {{"x", Q8_F32, 1, {N}, NULL}, {"t", Q8_I32, 1, {N}, NULL}};
    int32_t e[N];
    for (int i = 0; i < N; i++) e[i] = -(i % 4);
    const void *pow_d[2] = {b, e};
    cr_assert(run_chain("Pow", pow_in, 2, 1, pow_d, NULL, 3, &out, &info), "in place");
    for (int i = 0; i < N; i++)
        cr_assert_eq(((float *)out)[i], (float)pow(b[i], i % 4), "pow [%d]", i);
    free(out);
    /* Unary */
    cr_assert(run_chain("Sigmoid", un_in, 1, 0, un_d, NULL, 3, &out, &info), "in place");
    for (int i = 0; i < N; i++)
        cr_assert(fabsf(((float *)out)[i] - (float)d_sigmoid(-a[i])) < 1e-6f);
    free(out);
}

static void a_to_i32(q8_graph *g) { q8t_attr_int(g, "to", 6); }

Test(math_inplace, cast_same_size) {
    enum { N = 1000 };
    float a[N];
    q8t_rng r = q8t_seed(43);
    q8t_fill(&r, a, N, -100, 100);
    q8t_in in[1] = {{"t", Q8_F32, 1, {N}, NULL}};
    const void *d[1] = {a};
    void *out;
    q8_tensor_info info;
    cr_assert(run_chain("Cast", in, 1, 0, d, a_to_i32, 3, &out, &info), "in place");
    for (int i = 0; i < N; i++) cr_assert_eq(((int32_t *)out)[i], (int32_t)-a[i]);
    free(out);
}

/* ---------- errors ---------- */

static void a_fmod0(q8_graph *g) { q8t_attr_int(g, "fmod", 0); }
static void a_gelu_bad(q8_graph *g) { q8t_attr_str(g, "approximate", "erf"); }
static void a_to_string(q8_graph *g) { q8t_attr_int(g, "to", 8); }
static void a_to_bad(q8_graph *g) { q8t_attr_int(g, "to", 99); }

static void expect_fail(const char *op, const q8t_in *ins, int n_in, attr_fn attrs,
                        const char *msg) {
    float dummy[64] = {0};
    const void *data[8] = {dummy, dummy, dummy, dummy, dummy, dummy, dummy, dummy};
    void *out[1];
    q8_tensor_info info;
    q8_error err;
    cr_assert_neq(run_op(op, ins, n_in, data, attrs, 0, 1, out, &info, &err), Q8_OK,
                  "%s should fail", op);
    cr_assert(strstr(err.msg, msg), "%s: message '%s' lacks '%s'", op, err.msg, msg);
}

Test(math_errors, messages) {
    q8t_in bad[2] = {{"a", Q8_F32, 2, {2, 3}, NULL}, {"b", Q8_F32, 1, {4}, NULL}};
    expect_fail("Add", bad, 2, NULL, "shapes 2x3 and 4 do not broadcast");
    expect_fail("Sum", bad, 2, NULL, "shapes 2x3 and 4 do not broadcast");
    q8t_in mix[2] = {{"a", Q8_F32, 1, {2}, NULL}, {"b", Q8_I64, 1, {2}, NULL}};
    expect_fail("Mul", mix, 2, NULL, "different dtypes (float32 and int64)");
    q8t_in w3[3] = {
        {"c", Q8_F32, 1, {2}, NULL}, {"x", Q8_F32, 1, {2}, NULL}, {"y", Q8_F32, 1, {2}, NULL}};
    expect_fail("Where", w3, 3, NULL, "condition 'c' is float32, expected bool");
    q8t_in w3b[3] = {
        {"c", Q8_BOOL, 1, {2}, NULL}, {"x", Q8_F32, 1, {3}, NULL}, {"y", Q8_F32, 1, {2}, NULL}};
    expect_fail("Where", w3b, 3, NULL, "shapes 2 and 3 do not broadcast");
    q8t_in ex[2] = {{"x", Q8_F32, 1, {3}, NULL}, {"shape", Q8_I64, 1, {2}, NULL}};
    expect_fail("Expand", ex, 2, NULL, "input 1 ('shape') must be a constant");
    int64_t sh[2] = {2, 4};
    q8t_in ex2[2] = {{"x", Q8_F32, 1, {3}, NULL}, {"shape", Q8_I64, 1, {2}, sh}};
    expect_fail("Expand", ex2, 2, NULL, "shapes 3 and 2x4 do not broadcast");
    int64_t shn[1] = {-2};
    q8t_in ex3[2] = {{"x", Q8_F32, 1, {3}, NULL}, {"shape", Q8_I64, 1, {1}, shn}};
    expect_fail("Expand", ex3, 2, NULL, "shape[0] is -2");
    q8t_in f2[2] = {{"a", Q8_F32, 1, {2}, NULL}, {"b", Q8_F32, 1, {2}, NULL}};
    expect_fail("Mod", f2, 2, a_fmod0, "fmod must be 1 for float32");
    q8t_in one = {"x", Q8_F32, 1, {2}, NULL};
    expect_fail("Gelu", &one, 1, a_gelu_bad, "approximate is 'erf'");
    expect_fail("Cast", &one, 1, a_to_string, "casting to string is not supported");
    expect_fail("Cast", &one, 1, a_to_bad, "to = 99 is not a known data type");
    expect_fail("Cast", &one, 1, NULL, "no integer attribute 'to'");
    q8t_in i64 = {"x", Q8_I64, 1, {2}, NULL};
    expect_fail("Sigmoid", &i64, 1, NULL, "dtype int64 is not supported");
    q8t_in u8 = {"x", Q8_U8, 1, {2}, NULL};
    expect_fail("Neg", &u8, 1, NULL, "dtype uint8 is not supported");
    q8t_in clip[2] = {{"x", Q8_F32, 1, {2}, NULL}, {"lo", Q8_F32, 1, {2}, NULL}};
    expect_fail("Clip", clip, 2, NULL, "min ('lo') has 2 values, expected 1");
    q8t_in clipt[2] = {{"x", Q8_F32, 1, {2}, NULL}, {"lo", Q8_I64, 0, {0}, NULL}};
    expect_fail("Clip", clipt, 2, NULL, "only float32 is supported");
    q8t_in pw[2] = {{"x", Q8_U8, 1, {2}, NULL}, {"e", Q8_U8, 1, {2}, NULL}};
    expect_fail("Pow", pw, 2, NULL, "base dtype uint8 is not supported");
    q8t_in sm[2] = {{"a", Q8_I64, 1, {2}, NULL}, {"b", Q8_I64, 1, {2}, NULL}};
    expect_fail("Sum", sm, 2, NULL, "dtype int64 is not supported (only float32, float64)");
    q8t_in an[2] = {{"a", Q8_F32, 1, {2}, NULL}, {"b", Q8_F32, 1, {2}, NULL}};
    expect_fail("And", an, 2, NULL, "dtype float32 is not supported (only bool)");
}

/* Relu on int8 keeps the quantized path in INT8: max(q, 0), every value. */
Test(math, relu_int8_all_values) {
    int8_t x[256], want[256];
    for (int i = 0; i < 256; i++) {
        x[i] = (int8_t)(i - 128);
        want[i] = x[i] > 0 ? x[i] : 0;
    }
    q8t_in in = {"x", Q8_I8, 2, {16, 16}, NULL};
    for (int nt = 1; nt <= 3; nt += 2) {
        q8_graph *g = q8t_graph1("Relu", &in, 1, 1);
        const void *data[] = {x};
        void *out[1];
        q8_tensor_info info[1];
        q8_error err = {0};
        cr_assert_eq(q8t_run(g, data, nt, out, info, 1, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(info[0].dtype, Q8_I8);
        cr_assert_eq(memcmp(out[0], want, 256), 0);
        free(out[0]);
    }
}

/* SiLU and Sigmoid on AVX-512 (kernels/cpu/x86/vmath_avx512.c) against the
 * scalar forms they replace, bit for bit, on a dense sample of all floats
 * (every 251st bit pattern: NaNs, infinities, subnormal results included);
 * run over all 2^32 when written (2026-12-03): no difference. */
Test(math_unary, swish_and_sigmoid_avx512_same_bits) {
    if (!q8_vmath_x86_ok()) return;
    const int64_t n = (int64_t)(0xFFFFFFFFull / 251) + 1;
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    cr_assert(x && y);
    for (int64_t i = 0; i < n; i++) {
        uint32_t b = (uint32_t)((uint64_t)i * 251);
        memcpy(&x[i], &b, 4);
    }
    for (int k = 0; k < 3; k++) {
        /* n - 5: a masked tail */
        if (k == 0) q8_sigmoid_x86(x, y, n - 5);
        else q8_swish_x86(x, y, n - 5, (float)(k - 1));
        for (int64_t i = 0; i < n - 5; i++) {
            float want = k == 0 ? q8_vsigmoid(x[i]) : q8_ew_swish(x[i], (float)(k - 1));
            cr_assert(memcmp(&y[i], &want, 4) == 0, "%s(%a) = %a, want %a",
                      k ? "swish" : "sigmoid", x[i], y[i], want);
        }
    }
    free(x);
    free(y);
}
