/* Expand: broadcast the input to a shape given by a constant int64 tensor
 * (bidirectional: the result is broadcast(input shape, shape), so a 1 in
 * shape keeps the input's dim). Any dtype; only the element size matters. */
#include <string.h>

#include "elementwise.h"

#define EXPAND_ROW(NAME, T)                                                                \
    static void NAME(void *o_, const void *const *in, const int64_t *st, int64_t n,       \
                     const void *ctx) {                                                   \
        T *o = o_;                                                                        \
        const T *a = in[0];                                                               \
        (void)ctx;                                                                        \
        if (st[0]) {                                                                      \
            if (o != a) memcpy(o, a, sizeof(T) * (size_t)n);                              \
        } else {                                                                          \
            const T v = a[0];                                                             \
            for (int64_t i = 0; i < n; i++) o[i] = v;                                     \
        }                                                                                 \
    }
EXPAND_ROW(expand_1, uint8_t)
EXPAND_ROW(expand_2, uint16_t)
EXPAND_ROW(expand_4, uint32_t)
EXPAND_ROW(expand_8, uint64_t)

static q8_bcast_row_fn expand_row(size_t size) {
    switch (size) {
    case 1: return expand_1;
    case 2: return expand_2;
    case 4: return expand_4;
    case 8: return expand_8;
    default: return NULL;
    }
}

static q8_status expand_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *a = q8_in(g, n, 0), *s = q8_in(g, n, 1);
    if (!expand_row(q8_dtype_size(a->dtype)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported",
                            q8_dtype_name(a->dtype));
    if (s->ndim != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "shape input has rank %d, expected 1",
                            s->ndim);
    int64_t shape[Q8_MAX_DIMS], dims[Q8_MAX_DIMS];
    int ns, nd;
    Q8_TRY(q8_const_ints(g, n, 1, shape, Q8_MAX_DIMS, &ns, err));
    for (int i = 0; i < ns; i++)
        if (shape[i] < 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "shape[%d] is %lld, expected >= 0", i,
                                (long long)shape[i]);
    Q8_TRY(q8_broadcast_shape(n, a->dims, a->ndim, shape, ns, dims, &nd, err));
    Q8_TRY(q8_bcast_plan_new(n, g, 0, 1, dims, nd, err));
    return q8_set_output(g, n, 0, a->dtype, dims, nd, err);
}

static void expand_run(const q8_exec *x, const q8_node *n) {
    size_t es = q8_dtype_size(q8_in(x->g, n, 0)->dtype);
    const void *in[1] = {Q8_IN_PTR(x, n, 0)};
    q8_bcast_run(x->pool, n->params, Q8_OUT_PTR(x, n, 0), es, in, &es, expand_row(es), NULL,
                 Q8_EW_GRAIN);
}

/* In place only when nothing is expanded: then the copy is skipped. */
const q8_op_schema q8_schema_expand = {.infer = expand_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_expand = {.run = expand_run};
