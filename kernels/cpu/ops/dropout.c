/* Dropout on the CPU (params: src/core/ops/dropout.h): a view, and its
 * internal form q8.DropoutMask, which copies the data (unless in place) and
 * fills the mask. */
#include <string.h>

#include "cpu_op.h"
#include "ops/dropout.h"

static void dropout_mask_run(const q8_exec *x, const q8_node *n) {
    const q8_dropout_params *p = n->params;
    const q8_tensor *in = q8_in(x->g, n, 0);
    size_t nb = q8_tensor_nbytes(in);
    void *y = Q8_OUT_PTR(x, n, 0);
    const void *src = Q8_IN_PTR(x, n, 0);
    if (nb && y != src) memcpy(y, src, nb);
    if (p->mask) memset(Q8_OUT_PTR(x, n, 1), 1, (size_t)q8_tensor_numel(in));
}

const q8_cpu_op q8_cpu_dropout = {.run = NULL};
const q8_cpu_op q8_cpu_dropout_mask = {.run = dropout_mask_run};
