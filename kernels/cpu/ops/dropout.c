/* Dropout on the CPU (params: src/core/ops/dropout.h): a view, and its
 * internal form q8.DropoutMask, which copies the data (unless in place) and
 * fills the mask. */
#include <string.h>

#include "ops/dropout.h"
#include "tensor_util.h"

static void dropout_mask_run(const q8_exec *x, const q8_node *n) {
    const q8_dropout_params *p = n->params;
    const q8_tensor *in = q8_in(x->g, n, 0);
    size_t nb = q8_tensor_nbytes(in);
    void *y = Q8_OUT_PTR(x, n, 0);
    const void *src = Q8_IN_PTR(x, n, 0);
    if (nb && y != src) memcpy(y, src, nb);
    if (n->n_outputs > 1 && n->outputs[1] >= 0)
        q8_tu_fill(Q8_OUT_PTR(x, n, 1), p->one, q8_tensor_numel(in), p->mask_esize);
}

const q8_cpu_op q8_cpu_dropout = {.run = NULL};
const q8_cpu_op q8_cpu_dropout_mask = {.run = dropout_mask_run};
