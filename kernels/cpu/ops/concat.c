/* Concat on the CPU (params: src/core/ops/concat.h). Each output row (the
 * dims before the axis) is the inputs' rows in order. */
#include <string.h>

#include "ops/concat.h"
#include "tensor_util.h"

typedef struct concat_args {
    const q8_exec *x;
    const q8_node *n;
    int64_t inner;      /* elements per unit of the axis */
    size_t row_bytes;   /* one output row */
} concat_args;

/* Task t: input (t % n_inputs) of output row (t / n_inputs). */
static void concat_range(void *arg, int64_t b, int64_t e, int thread) {
    const concat_args *a = arg;
    const q8_concat_params *p = a->n->params;
    int ni = a->n->n_inputs;
    uint8_t *out = Q8_OUT_PTR(a->x, a->n, 0);
    int64_t row = b / ni;
    int i = (int)(b % ni);
    size_t off = 0;
    for (int k = 0; k < i; k++)
        off += (size_t)(q8_in(a->x->g, a->n, k)->dims[p->axis] * a->inner) * p->esize;
    for (int64_t t = b; t < e; t++) {
        size_t nb = (size_t)(q8_in(a->x->g, a->n, i)->dims[p->axis] * a->inner) * p->esize;
        if (nb)
            memcpy(out + (size_t)row * a->row_bytes + off,
                   (const uint8_t *)Q8_IN_PTR(a->x, a->n, i) + (size_t)row * nb, nb);
        off += nb;
        if (++i == ni) {
            i = 0;
            off = 0;
            row++;
        }
    }
}

static void concat_run(const q8_exec *x, const q8_node *n) {
    const q8_concat_params *p = n->params;
    const q8_tensor *y = q8_out(x->g, n, 0);
    concat_args a = {x, n, q8_ta_prod(y->dims, p->axis + 1, y->ndim), 0};
    a.row_bytes = (size_t)(y->dims[p->axis] * a.inner) * p->esize;
    if (a.row_bytes == 0) return;
    int64_t rows = q8_ta_prod(y->dims, 0, p->axis), tasks = rows * n->n_inputs;
    q8_parallel_for(x->pool, tasks, q8_tu_grain(a.row_bytes / (size_t)n->n_inputs + 1),
                    concat_range, &a);
}

const q8_cpu_op q8_cpu_concat = {.run = concat_run};
