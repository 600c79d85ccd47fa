/* Gather along an axis with int32/int64 indices (negative ones count from
 * the end): out[outer, idx..., inner] = data[outer, indices[idx...], inner].
 * Constant indices are range-checked in infer. An index that is out of range
 * at run time (a non-constant indices tensor) is never used to read: its
 * output block is filled with zero bytes instead. */
#include <string.h>

#include "tensor_util.h"

typedef struct gather_params {
    int axis;
    size_t esize;
} gather_params;

static int64_t index_at(const q8_tensor *it, const void *p, int64_t i) {
    return it->dtype == Q8_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static q8_status gather_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    size_t es;
    Q8_TRY(q8_tu_elem_size(g, n, 0, &es, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *it = q8_in(g, n, 1);
    if (it->dtype != Q8_I64 && it->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "indices '%s' are %s, expected int32 or int64",
                            it->name, q8_dtype_name(it->dtype));
    if (x->ndim < 1) return q8_node_fail(err, Q8_ERR_SHAPE, n, "data must have rank >= 1, not 0");
    int64_t ax = q8_attr_int(n, "axis", 0);
    int axis;
    if (!q8_norm_axis(ax, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axis %lld is out of range for rank %d",
                            (long long)ax, x->ndim);
    int rank = x->ndim - 1 + it->ndim;
    if (rank > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", rank,
                            Q8_MAX_DIMS);
    int64_t dim = x->dims[axis];
    if (it->data) {
        int64_t ni = q8_tensor_numel(it);
        for (int64_t i = 0; i < ni; i++) {
            int64_t v = index_at(it, it->data, i);
            if (v < -dim || v >= dim)
                return q8_node_fail(
                    err, Q8_ERR_SHAPE, n,
                    "index %lld (at position %lld of '%s') is out of range for axis "
                    "%d of size %lld",
                    (long long)v, (long long)i, it->name, axis, (long long)dim);
        }
    }
    int64_t dims[Q8_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < axis; d++) dims[k++] = x->dims[d];
    for (int d = 0; d < it->ndim; d++) dims[k++] = it->dims[d];
    for (int d = axis + 1; d < x->ndim; d++) dims[k++] = x->dims[d];
    gather_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->axis = axis;
    p->esize = es;
    return q8_set_output(g, n, 0, x->dtype, dims, rank, err);
}

typedef struct gather_args {
    const uint8_t *x;
    const void *idx;
    const q8_tensor *it;
    uint8_t *y;
    int64_t nidx, dim;
    size_t block;       /* bytes per (outer, index) pair */
} gather_args;

static void gather_range(void *arg, int64_t b, int64_t e, int thread) {
    const gather_args *a = arg;
    for (int64_t t = b; t < e; t++) {
        int64_t o = t / a->nidx, v = index_at(a->it, a->idx, t % a->nidx);
        if (v < 0) v += a->dim;
        uint8_t *dst = a->y + (size_t)t * a->block;
        if (v < 0 || v >= a->dim) memset(dst, 0, a->block); /* bad index: zeros, no read */
        else memcpy(dst, a->x + (size_t)(o * a->dim + v) * a->block, a->block);
    }
}

static void gather_run(const q8_exec *x, const q8_node *n) {
    const gather_params *p = n->params;
    const q8_tensor *xt = q8_in(x->g, n, 0), *it = q8_in(x->g, n, 1);
    gather_args a = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), it, Q8_OUT_PTR(x, n, 0),
                     q8_tensor_numel(it), xt->dims[p->axis], 0};
    a.block = (size_t)q8_tu_prod(xt->dims, p->axis + 1, xt->ndim) * p->esize;
    if (a.block == 0 || a.nidx == 0) return;
    int64_t outer = q8_tu_prod(xt->dims, 0, p->axis);
    q8_parallel_for(x->pool, outer * a.nidx, q8_tu_grain(a.block), gather_range, &a);
}

const q8_op_schema q8_schema_gather = {.infer = gather_infer};
const q8_cpu_op q8_cpu_gather = {.run = gather_run};
