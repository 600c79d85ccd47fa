/* Pow on the CPU (semantics and params: src/core/ops/pow.c): one row
 * function per (base, exponent) dtype pair, and x * x for a float32 base
 * with a constant exponent 2. */
#include "ew_kernels.h"

static inline uint64_t upow(uint64_t a, uint64_t e) {
    uint64_t r = 1;
    for (; e; e >>= 1, a *= a)
        if (e & 1) r *= a;
    return r;
}

static inline int64_t spow(int64_t a, int64_t e) {
    if (e >= 0) return (int64_t)upow((uint64_t)a, (uint64_t)e);
    if (a == 1) return 1;
    if (a == -1) return (e & 1) ? -1 : 1;
    return 0;
}

#define FPOW(a, b) pow((double)(a), (double)(b))

/* Float bases: every exponent type. */
#define POW_F32(E, T, S, W) Q8_EW_BINARY_ROW(pow_f32_##S, float, T, float, FPOW(a, b))
#define POW_F64(E, T, S, W) Q8_EW_BINARY_ROW(pow_f64_##S, double, T, double, FPOW(a, b))
Q8_EW_NUMS(POW_F32)
Q8_EW_NUMS(POW_F64)

/* Integer bases by exponent kind: float, signed, unsigned. */
#define POW_I32_F(E, T, S, W)                                                              \
    Q8_EW_BINARY_ROW(pow_i32_##S, int32_t, T, int32_t, q8_f2i_i32(FPOW(a, b)))
#define POW_I32_S(E, T, S, W) Q8_EW_BINARY_ROW(pow_i32_##S, int32_t, T, int32_t, spow(a, b))
#define POW_I32_U(E, T, S, W)                                                              \
    Q8_EW_BINARY_ROW(pow_i32_##S, int32_t, T, int32_t, upow((uint64_t)a, b))
#define POW_I64_F(E, T, S, W)                                                              \
    Q8_EW_BINARY_ROW(pow_i64_##S, int64_t, T, int64_t, q8_f2i_i64(FPOW(a, b)))
#define POW_I64_S(E, T, S, W) Q8_EW_BINARY_ROW(pow_i64_##S, int64_t, T, int64_t, spow(a, b))
#define POW_I64_U(E, T, S, W)                                                              \
    Q8_EW_BINARY_ROW(pow_i64_##S, int64_t, T, int64_t, upow((uint64_t)a, b))
Q8_EW_FLOATS(POW_I32_F)
Q8_EW_SINTS(POW_I32_S)
Q8_EW_UINTS(POW_I32_U)
Q8_EW_FLOATS(POW_I64_F)
Q8_EW_SINTS(POW_I64_S)
Q8_EW_UINTS(POW_I64_U)

#define TAB_F32(E, T, S, W) [E] = pow_f32_##S,
#define TAB_F64(E, T, S, W) [E] = pow_f64_##S,
#define TAB_I32(E, T, S, W) [E] = pow_i32_##S,
#define TAB_I64(E, T, S, W) [E] = pow_i64_##S,

/* pow_rows[base dtype][exponent dtype] */
static const q8_bcast_row_fn pow_rows[Q8_DTYPE_COUNT][Q8_DTYPE_COUNT] = {
    [Q8_F32] = {Q8_EW_NUMS(TAB_F32)},
    [Q8_F64] = {Q8_EW_NUMS(TAB_F64)},
    [Q8_I32] = {Q8_EW_NUMS(TAB_I32)},
    [Q8_I64] = {Q8_EW_NUMS(TAB_I64)},
};

/* x^2 as x * x: the exact product rounded once, the same value as the
 * double pow rounded to float (LayerNorm exports use Pow(x, 2)). */
static void square_f32(void *o_, const void *const *in, const int64_t *st, int64_t n,
                       const void *ctx) {
    float *o = o_;
    const float *a = in[0];
    (void)ctx;
    if (st[0])
        for (int64_t i = 0; i < n; i++) o[i] = a[i] * a[i];
    else
        for (int64_t i = 0; i < n; i++) o[i] = a[0] * a[0];
}

static void pow_run(const q8_exec *x, const q8_node *n) {
    const q8_tensor *a = q8_in(x->g, n, 0), *b = q8_in(x->g, n, 1);
    const void *in[2] = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1)};
    size_t sz[2] = {q8_dtype_size(a->dtype), q8_dtype_size(b->dtype)};
    const q8_bcast *p = n->params;
    bool square = a->dtype == Q8_F32 && p->aux;
    Q8_ASSERT(square || pow_rows[a->dtype][b->dtype]);
    q8_bcast_run(x->pool, p, Q8_OUT_PTR(x, n, 0), sz[0], in, sz,
                 square ? square_f32 : pow_rows[a->dtype][b->dtype], NULL,
                 square ? Q8_EW_GRAIN : Q8_EW_GRAIN_MATH);
}

const q8_cpu_op q8_cpu_pow = {.run = pow_run};
