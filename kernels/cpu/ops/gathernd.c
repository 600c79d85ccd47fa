/* GatherND: indices [..., k] pick slices data[b..., i_0..i_{k-1}, :] where
 * the first batch_dims dims of data and indices match. Output shape:
 * indices dims but the last, then data dims from batch_dims + k on.
 * Negative indices count from the end. Constant indices are range-checked in
 * infer; an out-of-range tuple at run time reads nothing and gives a zero
 * slice. */
#include <string.h>

#include "tensor_util.h"

typedef struct gnd_params {
    int batch, k;
    size_t esize;
} gnd_params;

static int64_t index_at(q8_dtype dt, const void *p, int64_t i) {
    return dt == Q8_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static q8_status gnd_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    size_t es;
    Q8_TRY(q8_tu_elem_size(g, n, 0, &es, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *it = q8_in(g, n, 1);
    if (it->dtype != Q8_I64 && it->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "indices '%s' are %s, expected int64",
                            it->name, q8_dtype_name(it->dtype));
    int64_t b = q8_attr_int(n, "batch_dims", 0);
    char sa[96], sb[96];
    q8_shape_str(it->dims, it->ndim, sa, sizeof sa);
    q8_shape_str(x->dims, x->ndim, sb, sizeof sb);
    if (x->ndim < 1 || it->ndim < 1 || b < 0 || b >= x->ndim || b >= it->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "batch_dims %lld does not fit data %s and indices %s", (long long)b, sb,
                            sa);
    int64_t k = it->dims[it->ndim - 1];
    if (k < 1 || k > x->ndim - b)
        return q8_node_fail(
            err, Q8_ERR_SHAPE, n,
            "indices %s: last dim %lld must be in 1..%lld (data %s, batch_dims %lld)", sa,
            (long long)k, (long long)(x->ndim - b), sb, (long long)b);
    for (int d = 0; d < b; d++)
        if (x->dims[d] != it->dims[d])
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "batch dim %d differs: data %s, indices %s",
                                d, sb, sa);
    if (it->data) {
        int64_t nt = q8_tensor_numel(it) / k;
        for (int64_t t = 0; t < nt; t++)
            for (int64_t j = 0; j < k; j++) {
                int64_t v = index_at(it->dtype, it->data, t * k + j), dim = x->dims[b + j];
                if (v < -dim || v >= dim)
                    return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                        "index %lld (at position %lld of '%s') is out of range for "
                                        "axis %lld of size %lld",
                                        (long long)v, (long long)(t * k + j), it->name,
                                        (long long)(b + j), (long long)dim);
            }
    }
    int64_t dims[2 * Q8_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < it->ndim - 1; d++) dims[nd++] = it->dims[d];
    for (int d = (int)(b + k); d < x->ndim; d++) dims[nd++] = x->dims[d];
    if (nd > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", nd,
                            Q8_MAX_DIMS);
    gnd_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->batch = (int)b;
    p->k = (int)k;
    p->esize = es;
    return q8_set_output(g, n, 0, x->dtype, dims, nd, err);
}

typedef struct gnd_args {
    const gnd_params *p;
    const q8_tensor *x, *it;
    const uint8_t *src;
    const void *idx;
    uint8_t *dst;
    int64_t per_batch;      /* index tuples per batch */
    int64_t batch_elems;    /* data elements per batch */
    size_t slice;           /* bytes per tuple */
    int64_t xstride[Q8_MAX_DIMS];
} gnd_args;

static void gnd_range(void *arg, int64_t b, int64_t e, int thread) {
    const gnd_args *a = arg;
    const gnd_params *p = a->p;
    for (int64_t t = b; t < e; t++) {
        int64_t off = (t / a->per_batch) * a->batch_elems;
        bool ok = true;
        for (int j = 0; j < p->k && ok; j++) {
            int64_t v = index_at(a->it->dtype, a->idx, t * p->k + j),
                    dim = a->x->dims[p->batch + j];
            if (v < 0) v += dim;
            ok = v >= 0 && v < dim;
            off += v * a->xstride[p->batch + j];
        }
        uint8_t *d = a->dst + (size_t)t * a->slice;
        if (!ok) memset(d, 0, a->slice); /* bad run-time index: zeros, no read */
        else memcpy(d, a->src + (size_t)off * p->esize, a->slice);
    }
}

static void gnd_run(const q8_exec *x, const q8_node *n) {
    const gnd_params *p = n->params;
    gnd_args a = {p, q8_in(x->g, n, 0), q8_in(x->g, n, 1), Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                  Q8_OUT_PTR(x, n, 0), 0, 0, 0, {0}};
    int64_t tuples = q8_tensor_numel(a.it) / p->k;
    int64_t batches = q8_tu_prod(a.x->dims, 0, p->batch);
    a.slice = (size_t)q8_tu_prod(a.x->dims, p->batch + p->k, a.x->ndim) * p->esize;
    if (tuples == 0 || a.slice == 0) return;
    a.per_batch = tuples / batches;
    a.batch_elems = q8_tu_prod(a.x->dims, p->batch, a.x->ndim);
    q8_tu_strides(a.x->dims, a.x->ndim, a.xstride);
    q8_parallel_for(x->pool, tuples, q8_tu_grain(a.slice), gnd_range, &a);
}

const q8_op_schema q8_schema_gather_nd = {.infer = gnd_infer};
const q8_cpu_op q8_cpu_gather_nd = {.run = gnd_run};
