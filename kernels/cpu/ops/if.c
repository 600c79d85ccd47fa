/* q8.If on the CPU: the chosen side's outputs copied to the If's. The
 * backend's run loop skips the other side's nodes (kernels/cpu/backend.c). */
#include <string.h>

#include "control.h"
#include "cpu_op.h"
#include "ops/if.h"

static void if_run(const q8_exec *x, const q8_node *n) {
    const q8_if_params *p = n->params;
    const q8_tensor *c = q8_in(x->g, n, 0);
    int base = q8_cond_value(Q8_IN_PTR(x, n, 0), c->dtype) ? 1 : 1 + p->n_out;
    for (int k = 0; k < p->n_out; k++) {
        if (n->outputs[k] < 0) continue;
        void *dst = Q8_OUT_PTR(x, n, k);
        const void *src = Q8_IN_PTR(x, n, base + k);
        if (dst && src != dst) memcpy(dst, src, q8_tensor_nbytes(q8_out(x->g, n, k)));
    }
}

const q8_cpu_op q8_cpu_if = {.run = if_run};
