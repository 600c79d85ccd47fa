/* BatchNormalization on the CPU (params: src/core/ops/batchnorm.h). The
 * BN-folding pass removes most of these; this runs the ones that follow
 * something other than a Conv/Gemm. */
#include <math.h>
#include <string.h>

#include "cpu_op.h"
#include "ops/batchnorm.h"

typedef struct bn_args {
    const q8_batchnorm_params *p;
    const float *x, *scale, *bias, *mean, *var;
    float *y;
} bn_args;

static void bn_range(void *arg, int64_t b, int64_t e, int t) {
    const bn_args *a = arg;
    const q8_batchnorm_params *p = a->p;
    int64_t s = p->s;
    for (int64_t r = b; r < e; r++) {
        int64_t c = r % p->c;
        const float *x = a->x + r * s;
        float *y = a->y + r * s;
        float k, m;
        q8_bn_channel(a->scale, a->bias, a->mean, a->var, p->eps, c, &k, &m);
        for (int64_t i = 0; i < s; i++) y[i] = x[i] * k + m;
    }
}

static void bn_run(const q8_exec *x, const q8_node *n) {
    const q8_batchnorm_params *p = n->params;
    bn_args a = {p,
                 Q8_IN_PTR(x, n, 0),
                 Q8_IN_PTR(x, n, 1),
                 Q8_IN_PTR(x, n, 2),
                 Q8_IN_PTR(x, n, 3),
                 Q8_IN_PTR(x, n, 4),
                 Q8_OUT_PTR(x, n, 0)};
    int64_t grain = p->s >= 16384 ? 1 : 16384 / (p->s ? p->s : 1);
    q8_parallel_for(x->pool, p->rows, grain, bn_range, &a);
}

const q8_cpu_op q8_cpu_batch_norm = {.run = bn_run};
