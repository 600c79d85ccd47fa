/* Slice on the CPU (params: src/core/ops/slice.h): a strided copy. */
#include "ops/slice.h"
#include "tensor_util.h"

static void slice_run(const q8_exec *x, const q8_node *n) {
    const q8_slice_params *p = n->params;
    const q8_tensor *in = q8_in(x->g, n, 0), *y = q8_out(x->g, n, 0);
    q8_strided s;
    q8_strided_slice(&s, in->dims, in->ndim, p->start, p->step, y->dims, p->esize);
    q8_tu_strided_copy(x->pool, Q8_OUT_PTR(x, n, 0), Q8_IN_PTR(x, n, 0), &s);
}

const q8_cpu_op q8_cpu_slice = {.run = slice_run};
