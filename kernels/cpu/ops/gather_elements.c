/* GatherElements on the CPU (params: src/core/ops/gather_elements.h). */
#include <string.h>

#include "ops/gather_elements.h"
#include "tensor_util.h"

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
            int64_t v = q8_ta_index(a->it->dtype, a->idx, row * len + j);
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
    const q8_gather_elements_params *p = n->params;
    ge_args a = {q8_in(x->g, n, 0), q8_in(x->g, n, 1), Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                 Q8_OUT_PTR(x, n, 0), p->axis, p->esize, {0}};
    if (q8_tensor_numel(a.it) == 0) return;
    q8_row_strides(a.x->dims, a.x->ndim, a.xstride);
    int r = a.it->ndim;
    int64_t rows = q8_ta_prod(a.it->dims, 0, r - 1);
    q8_parallel_for(x->pool, rows, q8_tu_grain((size_t)a.it->dims[r - 1] * 16), ge_rows, &a);
}

const q8_cpu_op q8_cpu_gather_elements = {.run = ge_run};
