/* Gather on the CPU (params: src/core/ops/gather.h). */
#include <string.h>

#include "ops/gather.h"
#include "tensor_util.h"

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
        int64_t o = t / a->nidx, v = q8_ta_index(a->it->dtype, a->idx, t % a->nidx);
        if (v < 0) v += a->dim;
        uint8_t *dst = a->y + (size_t)t * a->block;
        if (v < 0 || v >= a->dim) memset(dst, 0, a->block); /* bad index: zeros, no read */
        else memcpy(dst, a->x + (size_t)(o * a->dim + v) * a->block, a->block);
    }
}

static void gather_run(const q8_exec *x, const q8_node *n) {
    const q8_gather_params *p = n->params;
    const q8_tensor *xt = q8_in(x->g, n, 0), *it = q8_in(x->g, n, 1);
    gather_args a = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), it, Q8_OUT_PTR(x, n, 0),
                     q8_tensor_numel(it), xt->dims[p->axis], 0};
    a.block = (size_t)q8_ta_prod(xt->dims, p->axis + 1, xt->ndim) * p->esize;
    if (a.block == 0 || a.nidx == 0) return;
    int64_t outer = q8_ta_prod(xt->dims, 0, p->axis);
    q8_parallel_for(x->pool, outer * a.nidx, q8_tu_grain(a.block), gather_range, &a);
}

const q8_cpu_op q8_cpu_gather = {.run = gather_run};
