/* Cast and CastLike between all numeric dtypes and bool (not strings).
 *
 * Each block of elements is read into a carrier that holds every source
 * value exactly (double for floats, int64 for signed ints, uint64 for
 * uint64), then written out with one rounding: float16/bfloat16 round to
 * nearest even in software (through round-to-odd floats, see half.h);
 * float -> int truncates toward zero, NaN gives 0 and values out of range
 * saturate (C leaves these undefined); int -> narrower int wraps; anything
 * -> bool is "!= 0" (NaN is true). */
#include "elementwise.h"
#include "half.h"
#include "onnx_tensor.h"

#define BLOCK 256

typedef enum { C_F, C_S, C_U } carrier_kind;

typedef union carrier {
    double f;
    int64_t s;
    uint64_t u;
} carrier;

typedef struct cast_params {
    q8_dtype from, to;
} cast_params;

static bool castable(q8_dtype t) {
    return t == Q8_BOOL || q8_dtype_is_float(t) || q8_dtype_is_int(t);
}

static carrier_kind kind_of(q8_dtype t) {
    if (q8_dtype_is_float(t)) return C_F;
    return t == Q8_U64 ? C_U : C_S;
}

/* Source elements [off, off + m) into c. */
static void load(q8_dtype t, const void *src, int64_t off, int64_t m, carrier *c) {
#define LOAD(T, FIELD, EXPR)                                                               \
    {                                                                                     \
        const T *s = (const T *)src + off;                                                \
        for (int64_t i = 0; i < m; i++) c[i].FIELD = (EXPR);                              \
    }                                                                                     \
    break;
    switch (t) {
    case Q8_F32: LOAD(float, f, s[i])
    case Q8_F64: LOAD(double, f, s[i])
    case Q8_F16: LOAD(uint16_t, f, q8_f16_to_f32(s[i]))
    case Q8_BF16: LOAD(uint16_t, f, q8_bf16_to_f32(s[i]))
    case Q8_I8: LOAD(int8_t, s, s[i])
    case Q8_U8: LOAD(uint8_t, s, s[i])
    case Q8_I16: LOAD(int16_t, s, s[i])
    case Q8_U16: LOAD(uint16_t, s, s[i])
    case Q8_I32: LOAD(int32_t, s, s[i])
    case Q8_U32: LOAD(uint32_t, s, s[i])
    case Q8_I64: LOAD(int64_t, s, s[i])
    case Q8_U64: LOAD(uint64_t, u, s[i])
    case Q8_BOOL: LOAD(uint8_t, s, s[i] != 0)
    default: Q8_ASSERT(!"cast: unexpected source dtype");
    }
#undef LOAD
}

/* One store loop per (carrier, destination): FIELD names the carrier member. */
#define STORE_LOOP(T, FIELD, EXPR)                                                         \
    {                                                                                     \
        T *o = (T *)dst + off;                                                            \
        for (int64_t i = 0; i < m; i++) {                                                 \
            __typeof__(c[0].FIELD) v = c[i].FIELD;                                        \
            o[i] = (EXPR);                                                                \
        }                                                                                 \
    }                                                                                     \
    break;

/* Integers (signed carrier s or unsigned u) to every destination. */
#define STORE_INT(FIELD, ODD)                                                              \
    switch (t) {                                                                          \
    case Q8_F32: STORE_LOOP(float, FIELD, (float)v)                                       \
    case Q8_F64: STORE_LOOP(double, FIELD, (double)v)                                     \
    case Q8_F16: STORE_LOOP(uint16_t, FIELD, q8_f32_to_f16(ODD(v)))                       \
    case Q8_BF16: STORE_LOOP(uint16_t, FIELD, q8_f32_to_bf16(ODD(v)))                     \
    case Q8_I8: STORE_LOOP(int8_t, FIELD, (int8_t)v)                                      \
    case Q8_U8: STORE_LOOP(uint8_t, FIELD, (uint8_t)v)                                    \
    case Q8_I16: STORE_LOOP(int16_t, FIELD, (int16_t)v)                                   \
    case Q8_U16: STORE_LOOP(uint16_t, FIELD, (uint16_t)v)                                 \
    case Q8_I32: STORE_LOOP(int32_t, FIELD, (int32_t)v)                                   \
    case Q8_U32: STORE_LOOP(uint32_t, FIELD, (uint32_t)v)                                 \
    case Q8_I64: STORE_LOOP(int64_t, FIELD, (int64_t)v)                                   \
    case Q8_U64: STORE_LOOP(uint64_t, FIELD, (uint64_t)v)                                 \
    case Q8_BOOL: STORE_LOOP(uint8_t, FIELD, v != 0)                                      \
    default: Q8_ASSERT(!"cast: unexpected destination dtype");                            \
    }

static void store(q8_dtype t, carrier_kind k, void *dst, int64_t off, int64_t m,
                  const carrier *c) {
    if (k == C_S) {
        STORE_INT(s, q8_i64_to_f32_odd)
        return;
    }
    if (k == C_U) {
        STORE_INT(u, q8_u64_to_f32_odd)
        return;
    }
    switch (t) {
    case Q8_F32: STORE_LOOP(float, f, (float)v)
    case Q8_F64: STORE_LOOP(double, f, v)
    case Q8_F16: STORE_LOOP(uint16_t, f, q8_f32_to_f16(q8_f64_to_f32_odd(v)))
    case Q8_BF16: STORE_LOOP(uint16_t, f, q8_f32_to_bf16(q8_f64_to_f32_odd(v)))
    case Q8_I8: STORE_LOOP(int8_t, f, q8_f2i_i8(v))
    case Q8_U8: STORE_LOOP(uint8_t, f, q8_f2i_u8(v))
    case Q8_I16: STORE_LOOP(int16_t, f, q8_f2i_i16(v))
    case Q8_U16: STORE_LOOP(uint16_t, f, q8_f2i_u16(v))
    case Q8_I32: STORE_LOOP(int32_t, f, q8_f2i_i32(v))
    case Q8_U32: STORE_LOOP(uint32_t, f, q8_f2i_u32(v))
    case Q8_I64: STORE_LOOP(int64_t, f, q8_f2i_i64(v))
    case Q8_U64: STORE_LOOP(uint64_t, f, q8_f2i_u64(v))
    case Q8_BOOL: STORE_LOOP(uint8_t, f, v != 0)
    default: Q8_ASSERT(!"cast: unexpected destination dtype");
    }
}

typedef struct cast_args {
    const void *x;
    void *y;
    q8_dtype from, to;
} cast_args;

/* Blocks are read whole before they are written, so y may alias x when both
 * dtypes have the same size. */
static void cast_range(void *p, int64_t b, int64_t e, int t) {
    const cast_args *a = p;
    carrier c[BLOCK];
    carrier_kind k = kind_of(a->from);
    for (int64_t off = b; off < e; off += BLOCK) {
        int64_t m = e - off < BLOCK ? e - off : BLOCK;
        load(a->from, a->x, off, m, c);
        store(a->to, k, a->y, off, m, c);
    }
}

static q8_status cast_common(q8_graph *g, q8_node *n, q8_dtype to, q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0);
    if (!castable(x->dtype))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "casting from %s is not supported",
                            q8_dtype_name(x->dtype));
    if (!castable(to))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "casting to %s is not supported",
                            q8_dtype_name(to));
    cast_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->from = x->dtype;
    p->to = to;
    return q8_set_output(g, n, 0, to, x->dims, x->ndim, err);
}

static q8_status cast_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_attr *to = q8_attr_find(n, "to");
    if (!to || to->type != Q8_ATTR_INT)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has no integer attribute 'to'");
    q8_dtype dt = to->i >= 0 && to->i <= INT32_MAX ? q8_onnx_dtype((int32_t)to->i) : Q8_UNDEFINED;
    if (dt == Q8_UNDEFINED)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "to = %lld is not a known data type",
                            (long long)to->i);
    return cast_common(g, n, dt, err);
}

static q8_status castlike_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    return cast_common(g, n, q8_in(g, n, 1)->dtype, err);
}

static void cast_run(const q8_exec *x, const q8_node *n) {
    const cast_params *p = n->params;
    const q8_tensor *t = q8_in(x->g, n, 0);
    cast_args a = {Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), p->from, p->to};
    int64_t numel = q8_tensor_numel(t);
    if (p->from == p->to) {
        if (a.x != a.y) memcpy(a.y, a.x, (size_t)numel * q8_dtype_size(p->to));
        return;
    }
    q8_parallel_for(x->pool, numel, Q8_EW_GRAIN, cast_range, &a);
}

const q8_op_schema q8_schema_cast = {.infer = cast_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_cast = {.run = cast_run};

const q8_op_schema q8_schema_cast_like = {.infer = castlike_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_cast_like = {.run = cast_run};
