/* Split on the CPU (params: src/core/ops/split.h): each input row (the dims
 * before the axis) is cut into the outputs' rows. */
#include <string.h>

#include "ops/split.h"
#include "tensor_util.h"

typedef struct split_args {
    const q8_exec *x;
    const q8_node *n;
    int64_t inner;
    size_t in_row;      /* bytes of one input row (dims from the axis on) */
} split_args;

/* Task t: output (t % n) of row (t / n). */
static void split_range(void *arg, int64_t b, int64_t e, int thread) {
    const split_args *a = arg;
    const q8_split_params *p = a->n->params;
    const uint8_t *in = Q8_IN_PTR(a->x, a->n, 0);
    int64_t row = b / p->n;
    int i = (int)(b % p->n);
    size_t off = 0;
    for (int k = 0; k < i; k++) off += (size_t)(p->sizes[k] * a->inner) * p->esize;
    for (int64_t t = b; t < e; t++) {
        size_t nb = (size_t)(p->sizes[i] * a->inner) * p->esize;
        if (nb && a->n->outputs[i] >= 0)
            memcpy((uint8_t *)Q8_OUT_PTR(a->x, a->n, i) + (size_t)row * nb,
                   in + (size_t)row * a->in_row + off, nb);
        off += nb;
        if (++i == p->n) {
            i = 0;
            off = 0;
            row++;
        }
    }
}

static void split_run(const q8_exec *x, const q8_node *n) {
    const q8_split_params *p = n->params;
    const q8_tensor *in = q8_in(x->g, n, 0);
    split_args a = {x, n, q8_ta_prod(in->dims, p->axis + 1, in->ndim), 0};
    a.in_row = (size_t)(in->dims[p->axis] * a.inner) * p->esize;
    if (a.in_row == 0) return;
    int64_t rows = q8_ta_prod(in->dims, 0, p->axis);
    q8_parallel_for(x->pool, rows * p->n, q8_tu_grain(a.in_row / (size_t)p->n + 1), split_range,
                    &a);
}

const q8_cpu_op q8_cpu_split = {.run = split_run};
