/* ConstantOfShape on the CPU (params: src/core/ops/constantofshape.h): a
 * fill. */
#include "ops/constantofshape.h"
#include "tensor_util.h"

static void cos_run(const q8_exec *x, const q8_node *n) {
    const q8_constant_of_shape_params *p = n->params;
    q8_tu_fill(Q8_OUT_PTR(x, n, 0), p->value, q8_tensor_numel(q8_out(x->g, n, 0)), p->esize);
}

const q8_cpu_op q8_cpu_constant_of_shape = {.run = cos_run};
