/* MaxUnpool on the CPU (params: src/core/ops/maxunpool.h): zero the output,
 * then scatter x in element order on one thread (indices may point
 * anywhere, and a repeated one must keep the last value). */
#include <string.h>

#include "cpu_op.h"
#include "ops/maxunpool.h"

/* Offset in the output of flat offset u of the unpooled tensor. */
static int64_t out_offset(const q8_maxunpool_params *p, int64_t u) {
    int64_t off = 0, mul = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
        off += (u % p->unpooled[d]) * mul;
        u /= p->unpooled[d];
        mul *= p->out[d];
    }
    return off;
}

static void maxunpool_run(const q8_exec *x, const q8_node *n) {
    const q8_maxunpool_params *p = n->params;
    const uint8_t *src = Q8_IN_PTR(x, n, 0);
    const int64_t *ind = Q8_IN_PTR(x, n, 1);
    uint8_t *y = Q8_OUT_PTR(x, n, 0);
    memset(y, 0, (size_t)p->out_numel * p->elem);
    for (int64_t i = 0; i < p->in_numel; i++) {
        int64_t u = ind[i];
        if (u < 0 || u >= p->unpooled_numel) continue;
        int64_t o = p->padded ? out_offset(p, u) : u;
        memcpy(y + o * (int64_t)p->elem, src + i * (int64_t)p->elem, p->elem);
    }
}

const q8_cpu_op q8_cpu_max_unpool = {.run = maxunpool_run};
