/* Where: out = cond ? X : Y with cond, X and Y broadcast together. X and Y
 * may have any dtype (the same one); only the element size matters. */
#include "elementwise.h"

#define WHERE_ROW(NAME, T)                                                                 \
    static void NAME(void *o_, const void *const *in, const int64_t *st, int64_t n,       \
                     const void *ctx) {                                                   \
        T *o = o_;                                                                        \
        const uint8_t *c = in[0];                                                         \
        const T *a = in[1], *b = in[2];                                                   \
        (void)ctx;                                                                        \
        if (st[0] && st[1] && st[2]) {                                                    \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];                    \
        } else if (!st[0]) {                                                              \
            const T *s = c[0] ? a : b;                                                    \
            int64_t ss = c[0] ? st[1] : st[2];                                            \
            for (int64_t i = 0; i < n; i++) o[i] = s[i * ss];                             \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i * st[1]] : b[i * st[2]];    \
        }                                                                                 \
    }
WHERE_ROW(where_1, uint8_t)
WHERE_ROW(where_2, uint16_t)
WHERE_ROW(where_4, uint32_t)
WHERE_ROW(where_8, uint64_t)

static q8_bcast_row_fn where_row(size_t size) {
    switch (size) {
    case 1: return where_1;
    case 2: return where_2;
    case 4: return where_4;
    case 8: return where_8;
    default: return NULL;
    }
}

static q8_status where_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 3, 3, 1, 1, err));
    for (int i = 0; i < 3; i++) Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *c = q8_in(g, n, 0), *a = q8_in(g, n, 1), *b = q8_in(g, n, 2);
    if (c->dtype != Q8_BOOL)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "condition '%s' is %s, expected bool",
                            c->name, q8_dtype_name(c->dtype));
    if (a->dtype != b->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "X is %s and Y is %s, expected one dtype",
                            q8_dtype_name(a->dtype), q8_dtype_name(b->dtype));
    if (!where_row(q8_dtype_size(a->dtype)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(a->dtype));
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_bcast_shapes(g, n, 0, 3, dims, &nd, err));
    Q8_TRY(q8_bcast_plan_new(n, g, 0, 3, dims, nd, err));
    return q8_set_output(g, n, 0, a->dtype, dims, nd, err);
}

static void where_run(const q8_exec *x, const q8_node *n) {
    size_t es = q8_dtype_size(q8_in(x->g, n, 1)->dtype);
    const void *in[3] = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_IN_PTR(x, n, 2)};
    size_t sz[3] = {1, es, es};
    q8_bcast_run(x->pool, n->params, Q8_OUT_PTR(x, n, 0), es, in, sz, where_row(es), NULL,
                 Q8_EW_GRAIN);
}

const q8_op_schema q8_schema_where = {.infer = where_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_where = {.run = where_run};
