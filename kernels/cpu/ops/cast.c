/* Cast and CastLike on the CPU (semantics and params: src/core/ops/cast.h).
 *
 * Each block of elements is read into a carrier that holds every source
 * value exactly (double for floats, int64 for signed ints, uint64 for
 * uint64), then written out with one rounding: float16/bfloat16 round to
 * nearest even in software (through round-to-odd floats, see half.h);
 * float -> int truncates toward zero, NaN gives 0 and values out of range
 * saturate (C leaves these undefined); int -> narrower int wraps; anything
 * -> bool is "!= 0" (NaN is true). */
#include "ew_kernels.h"
#include "half.h"
#include "ops/cast.h"

#define BLOCK 256

typedef enum { C_F, C_S, C_U } carrier_kind;

typedef union carrier {
    double f;
    int64_t s;
    uint64_t u;
} carrier;

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

static void cast_run(const q8_exec *x, const q8_node *n) {
    const q8_cast_params *p = n->params;
    const q8_tensor *t = q8_in(x->g, n, 0);
    cast_args a = {Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), p->from, p->to};
    int64_t numel = q8_tensor_numel(t);
    if (p->from == p->to) {
        if (a.x != a.y) memcpy(a.y, a.x, (size_t)numel * q8_dtype_size(p->to));
        return;
    }
    q8_parallel_for(x->pool, numel, Q8_EW_GRAIN, cast_range, &a);
}

const q8_cpu_op q8_cpu_cast = {.run = cast_run};

const q8_cpu_op q8_cpu_cast_like = {.run = cast_run};
