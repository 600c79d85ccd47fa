/* Clip: y = min(max(x, lo), hi). Before opset 11 lo/hi are float
 * attributes; from 11 they are optional scalar inputs of x's dtype, read at
 * run time (absent: no bound). float32/float64 and all integer dtypes.
 * lo > hi gives hi everywhere (numpy's clip); NaN in x stays NaN. */
#include <float.h>

#include "elementwise.h"

typedef struct clip_params {
    bool attrs;         /* opset < 11: bounds from attributes */
    float lo, hi;
} clip_params;

typedef struct clip_args {
    const void *x;
    void *y;
    const void *lo, *hi;    /* NULL: unbounded on that side */
    float alo, ahi;         /* attribute bounds */
    bool attrs;
} clip_args;

#define CLIP_RANGE(E, T, S, W)                                                             \
    static void clip_##S(void *p, int64_t b, int64_t e, int t) {                          \
        const clip_args *a = p;                                                           \
        const T *x = a->x;                                                                \
        T *y = a->y;                                                                      \
        T lo = a->lo ? *(const T *)a->lo : clip_min_##S(a->alo, a->attrs);                \
        T hi = a->hi ? *(const T *)a->hi : clip_max_##S(a->ahi, a->attrs);                \
        for (int64_t i = b; i < e; i++) {                                                 \
            T v = x[i];                                                                   \
            v = v < lo ? lo : v;                                                          \
            y[i] = v > hi ? hi : v;                                                       \
        }                                                                                 \
    }

/* Default bounds: the attribute (opset < 11, float only) or the type's range. */
#define CLIP_SINT_LIMITS(E, T, S, W)                                                       \
    static inline T clip_min_##S(float v, bool attrs) {                                   \
        (void)v, (void)attrs;                                                             \
        return (T)((W)1 << (sizeof(T) * 8 - 1));                                          \
    }                                                                                     \
    static inline T clip_max_##S(float v, bool attrs) { return (T)~clip_min_##S(v, attrs); }
#define CLIP_UINT_LIMITS(E, T, S, W)                                                       \
    static inline T clip_min_##S(float v, bool attrs) {                                   \
        (void)v, (void)attrs;                                                             \
        return 0;                                                                         \
    }                                                                                     \
    static inline T clip_max_##S(float v, bool attrs) { return (T)~clip_min_##S(v, attrs); }
Q8_EW_SINTS(CLIP_SINT_LIMITS)
Q8_EW_UINTS(CLIP_UINT_LIMITS)
static inline float clip_min_f32(float v, bool attrs) { return attrs ? v : -INFINITY; }
static inline float clip_max_f32(float v, bool attrs) { return attrs ? v : INFINITY; }
static inline double clip_min_f64(float v, bool attrs) { return attrs ? v : -INFINITY; }
static inline double clip_max_f64(float v, bool attrs) { return attrs ? v : INFINITY; }

Q8_EW_NUMS(CLIP_RANGE)

#define TAB_CLIP(E, T, S, W) [E] = clip_##S,
static const q8_range_fn clip_fns[Q8_DTYPE_COUNT] = {Q8_EW_NUMS(TAB_CLIP)};

static bool has_input(const q8_node *n, int i) { return i < n->n_inputs && n->inputs[i] >= 0; }

static q8_status clip_infer(q8_graph *g, q8_node *n, q8_error *err) {
    bool attrs = g->opset < 11;
    Q8_TRY(q8_check_io(n, 1, attrs ? 1 : 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype <= Q8_UNDEFINED || x->dtype >= Q8_DTYPE_COUNT || !clip_fns[x->dtype] ||
        (attrs && x->dtype != Q8_F32 && x->dtype != Q8_F64))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(x->dtype));
    for (int i = 1; i < 3; i++) {
        if (!has_input(n, i)) continue;
        const q8_tensor *b = q8_in(g, n, i);
        Q8_TRY(q8_check_input(g, n, i, x->dtype, err));
        if (q8_tensor_numel(b) != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s ('%s') has %lld values, expected 1",
                                i == 1 ? "min" : "max", b->name, (long long)q8_tensor_numel(b));
    }
    clip_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->attrs = attrs;
    /* Clip-6 defaults: the float range, as numeric_limits lowest/max. */
    p->lo = q8_attr_float(n, "min", -FLT_MAX);
    p->hi = q8_attr_float(n, "max", FLT_MAX);
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

static void clip_run(const q8_exec *x, const q8_node *n) {
    const clip_params *p = n->params;
    const q8_tensor *t = q8_in(x->g, n, 0);
    clip_args a = {
        .x = Q8_IN_PTR(x, n, 0), .y = Q8_OUT_PTR(x, n, 0),
        .lo = has_input(n, 1) ? Q8_IN_PTR(x, n, 1) : NULL,
        .hi = has_input(n, 2) ? Q8_IN_PTR(x, n, 2) : NULL,
        .alo = p->lo, .ahi = p->hi, .attrs = p->attrs,
    };
    q8_parallel_for(x->pool, q8_tensor_numel(t), Q8_EW_GRAIN, clip_fns[t->dtype], &a);
}

const q8_op_schema q8_schema_clip = {.infer = clip_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_clip = {.run = clip_run};
