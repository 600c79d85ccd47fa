/* GlobalAveragePool and GlobalMaxPool: one value per (n, c) over all spatial
 * dims; output N x C x 1 x ... x 1. The average sums in double, in order, so
 * the result does not depend on the thread count. GlobalMaxPool also takes
 * int8 and uint8; NaN propagates. */
#include "cpu_op.h"

typedef struct gpool_params {
    int64_t rows, s;
    bool avg;
    q8_dtype dtype;
} gpool_params;

static q8_status gpool_infer(q8_graph *g, q8_node *n, q8_error *err, bool avg) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && (avg || (x->dtype != Q8_I8 && x->dtype != Q8_U8)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, supported: float32%s",
                            q8_dtype_name(x->dtype), avg ? "" : ", int8, uint8");
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input has rank %d, expected N x C x ...",
                            x->ndim);
    gpool_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    int64_t ydims[Q8_MAX_DIMS];
    p->s = 1;
    for (int d = 0; d < x->ndim; d++) {
        ydims[d] = d < 2 ? x->dims[d] : 1;
        if (d >= 2) p->s *= x->dims[d];
    }
    p->rows = x->dims[0] * x->dims[1];
    p->avg = avg;
    p->dtype = x->dtype;
    return q8_set_output(g, n, 0, x->dtype, ydims, x->ndim, err);
}

static q8_status gavg_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return gpool_infer(g, n, err, true);
}
static q8_status gmax_infer(q8_graph *g, q8_node *n, q8_error *err) {
    return gpool_infer(g, n, err, false);
}

typedef struct gpool_args {
    const gpool_params *p;
    const void *x;
    void *y;
} gpool_args;

static void gavg_range(void *arg, int64_t b, int64_t e, int t) {
    const gpool_args *a = arg;
    int64_t s = a->p->s;
    for (int64_t r = b; r < e; r++) {
        const float *x = (const float *)a->x + r * s;
        double sum = 0.0;
        for (int64_t i = 0; i < s; i++) sum += x[i];
        ((float *)a->y)[r] = s ? (float)(sum / (double)s) : 0.0f;
    }
}

#define DEFINE_GMAX(NAME, T, LOWEST)                           \
    static void NAME(void *arg, int64_t b, int64_t e, int t) { \
        const gpool_args *a = arg;                             \
        int64_t s = a->p->s;                                   \
        for (int64_t r = b; r < e; r++) {                      \
            const T *x = (const T *)a->x + r * s;              \
            T m = LOWEST;                                      \
            for (int64_t i = 0; i < s; i++) {                  \
                T v = x[i];                                    \
                if (v > m || (v != v && m == m)) m = v;        \
            }                                                  \
            ((T *)a->y)[r] = m;                                \
        }                                                      \
    }

DEFINE_GMAX(gmax_f32, float, -__builtin_inff())
DEFINE_GMAX(gmax_i8, int8_t, INT8_MIN)
DEFINE_GMAX(gmax_u8, uint8_t, 0)

static void gpool_run(const q8_exec *x, const q8_node *n) {
    const gpool_params *p = n->params;
    gpool_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    q8_range_fn fn = p->avg              ? gavg_range
                     : p->dtype == Q8_I8 ? gmax_i8
                     : p->dtype == Q8_U8 ? gmax_u8
                                         : gmax_f32;
    q8_parallel_for(x->pool, p->rows, p->s >= 16384 ? 1 : 16384 / (p->s ? p->s : 1), fn, &a);
}

const q8_op_schema q8_schema_global_average_pool = {.infer = gavg_infer};
const q8_cpu_op q8_cpu_global_average_pool = {.run = gpool_run};

const q8_op_schema q8_schema_global_max_pool = {.infer = gmax_infer};
const q8_cpu_op q8_cpu_global_max_pool = {.run = gpool_run};
