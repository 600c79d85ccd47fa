/* GatherElements: out has the shape of indices (same rank as data, each dim
 * but the axis at most data's); out[i] = data[i with i[axis] replaced by
 * indices[i]], negative indices counting from the end. Constant indices are
 * range-checked in infer; an out-of-range index at run time reads nothing
 * and gives a zero element. */
#include <string.h>

#include "tensor_util.h"

typedef struct ge_params {
    int axis;
    size_t esize;
} ge_params;

static int64_t index_at(q8_dtype dt, const void *p, int64_t i) {
    return dt == Q8_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static q8_status ge_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    size_t es;
    Q8_TRY(q8_tu_elem_size(g, n, 0, &es, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *it = q8_in(g, n, 1);
    if (it->dtype != Q8_I64 && it->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "indices '%s' are %s, expected int32 or int64",
                            it->name, q8_dtype_name(it->dtype));
    char sa[96], sb[96];
    if (x->ndim < 1 || it->ndim != x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "indices %s must have data's rank (data %s, rank >= 1)",
                            q8_shape_str(it->dims, it->ndim, sa, sizeof sa),
                            q8_shape_str(x->dims, x->ndim, sb, sizeof sb));
    int64_t ax = q8_attr_int(n, "axis", 0);
    int axis;
    if (!q8_norm_axis(ax, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axis %lld is out of range for rank %d",
                            (long long)ax, x->ndim);
    for (int d = 0; d < x->ndim; d++)
        if (d != axis && it->dims[d] > x->dims[d])
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "indices %s exceed data %s in dim %d",
                                q8_shape_str(it->dims, it->ndim, sa, sizeof sa),
                                q8_shape_str(x->dims, x->ndim, sb, sizeof sb), d);
    int64_t dim = x->dims[axis];
    if (it->data) {
        int64_t ni = q8_tensor_numel(it);
        for (int64_t i = 0; i < ni; i++) {
            int64_t v = index_at(it->dtype, it->data, i);
            if (v < -dim || v >= dim)
                return q8_node_fail(
                    err, Q8_ERR_SHAPE, n,
                    "index %lld (at position %lld of '%s') is out of range for axis "
                    "%d of size %lld",
                    (long long)v, (long long)i, it->name, axis, (long long)dim);
        }
    }
    ge_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->axis = axis;
    p->esize = es;
    return q8_set_output(g, n, 0, x->dtype, it->dims, it->ndim, err);
}

typedef struct ge_args {
    const q8_tensor *x, *it;
    const uint8_t *src;
    const void *idx;
    uint8_t *dst;
    int axis;
    size_t es;
    int64_t xstride[Q8_MAX_DIMS];
} ge_args;

/* One row: all index dims but the last. */
static void ge_rows(void *arg, int64_t b, int64_t e, int thread) {
    const ge_args *a = arg;
    int r = a->it->ndim, last = r - 1;
    int64_t len = a->it->dims[last], dim = a->x->dims[a->axis], sa = a->xstride[a->axis];
    size_t es = a->es;
    for (int64_t row = b; row < e; row++) {
        int64_t rr = row, base = 0;
        for (int k = last - 1; k >= 0; k--) {
            int64_t c = rr % a->it->dims[k];
            rr /= a->it->dims[k];
            if (k != a->axis) base += c * a->xstride[k];
        }
        for (int64_t j = 0; j < len; j++) {
            int64_t v = index_at(a->it->dtype, a->idx, row * len + j);
            if (v < 0) v += dim;
            uint8_t *d = a->dst + (size_t)(row * len + j) * es;
            if (v < 0 || v >= dim) { /* bad run-time index: zero, no read */
                memset(d, 0, es);
                continue;
            }
            int64_t off = base + v * sa + (last != a->axis ? j : 0);
            memcpy(d, a->src + (size_t)off * es, es);
        }
    }
}

static void ge_run(const q8_exec *x, const q8_node *n) {
    const ge_params *p = n->params;
    ge_args a = {q8_in(x->g, n, 0), q8_in(x->g, n, 1), Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                 Q8_OUT_PTR(x, n, 0), p->axis, p->esize, {0}};
    if (q8_tensor_numel(a.it) == 0) return;
    q8_tu_strides(a.x->dims, a.x->ndim, a.xstride);
    int r = a.it->ndim;
    int64_t rows = q8_tu_prod(a.it->dims, 0, r - 1);
    q8_parallel_for(x->pool, rows, q8_tu_grain((size_t)a.it->dims[r - 1] * 16), ge_rows, &a);
}

const q8_op_schema q8_schema_gather_elements = {.infer = ge_infer};
const q8_cpu_op q8_cpu_gather_elements = {.run = ge_run};
