/* Shape and Size on the CPU (params: src/core/ops/shape.h). */
#include "cpu_op.h"
#include "ops/shape.h"

static void shape_run(const q8_exec *x, const q8_node *n) {
    const q8_shape_params *p = n->params;
    const q8_tensor *t = q8_in(x->g, n, 0);
    int64_t *y = Q8_OUT_PTR(x, n, 0);
    for (int i = p->start; i < p->end; i++) y[i - p->start] = t->dims[i];
}

static void size_run(const q8_exec *x, const q8_node *n) {
    *(int64_t *)Q8_OUT_PTR(x, n, 0) = q8_tensor_numel(q8_in(x->g, n, 0));
}

const q8_cpu_op q8_cpu_shape = {.run = shape_run};
const q8_cpu_op q8_cpu_size = {.run = size_run};
