/* GatherND on the CPU (params: src/core/ops/gathernd.h). */
#include <string.h>

#include "ops/gathernd.h"
#include "tensor_util.h"

typedef struct gnd_args {
    const q8_gather_nd_params *p;
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
    const q8_gather_nd_params *p = a->p;
    for (int64_t t = b; t < e; t++) {
        int64_t off = (t / a->per_batch) * a->batch_elems;
        bool ok = true;
        for (int j = 0; j < p->k && ok; j++) {
            int64_t v = q8_ta_index(a->it->dtype, a->idx, t * p->k + j),
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
    const q8_gather_nd_params *p = n->params;
    gnd_args a = {p, q8_in(x->g, n, 0), q8_in(x->g, n, 1), Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                  Q8_OUT_PTR(x, n, 0), 0, 0, 0, {0}};
    int64_t tuples = q8_tensor_numel(a.it) / p->k;
    int64_t batches = q8_ta_prod(a.x->dims, 0, p->batch);
    a.slice = (size_t)q8_ta_prod(a.x->dims, p->batch + p->k, a.x->ndim) * p->esize;
    if (tuples == 0 || a.slice == 0) return;
    a.per_batch = tuples / batches;
    a.batch_elems = q8_ta_prod(a.x->dims, p->batch, a.x->ndim);
    q8_row_strides(a.x->dims, a.x->ndim, a.xstride);
    q8_parallel_for(x->pool, tuples, q8_tu_grain(a.slice), gnd_range, &a);
}

const q8_cpu_op q8_cpu_gather_nd = {.run = gnd_run};
