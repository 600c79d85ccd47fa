/* LayerNormalization on the CPU (params: src/core/ops/layernorm.h). Scale
 * and B, when not already X.shape[axis:], are expanded once per run into
 * scratch. Mean and variance are summed in double in q8_row_sum16's order
 * (the GPU's too), one row per work item; the loops are cloned per x86
 * vector width, built without FMA contraction (CMakeLists.txt): the same
 * bits in every clone. */
#include <math.h>

#include "bcast_expand.h"
#include "clones.h"
#include "cpu_op.h"
#include "ops/layernorm.h"
#include "row_sum16.h"

static size_t ln_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                         int n_threads) {
    const q8_layernorm_params *p = n->params;
    size_t one = q8_align_up((size_t)p->len * sizeof(float), Q8_ALIGN);
    return (p->s_full ? 0 : one) + (p->b_full ? 0 : one);
}

typedef struct ln_args {
    const q8_layernorm_params *p;
    const float *x, *scale, *bias;
    float *y, *mean, *inv;
} ln_args;

Q8_CLONES static void ln_range(void *arg, int64_t b, int64_t e, int t) {
    const ln_args *a = arg;
    int64_t len = a->p->len;
    for (int64_t r = b; r < e; r++) {
        const float *x = a->x + r * len;
        float *y = a->y + r * len;
        double mean = len ? q8_row_sum16(x, len) / (double)len : 0.0;
        double v = q8_row_sqdev16(x, len, mean);
        float var = len ? (float)(v / (double)len) : 0.0f;
        float inv = 1.0f / sqrtf(var + a->p->eps), m = (float)mean;
        if (a->bias)
            for (int64_t i = 0; i < len; i++) y[i] = (x[i] - m) * inv * a->scale[i] + a->bias[i];
        else
            for (int64_t i = 0; i < len; i++) y[i] = (x[i] - m) * inv * a->scale[i];
        if (a->mean) a->mean[r] = m;
        if (a->inv) a->inv[r] = inv;
    }
}

static void ln_run(const q8_exec *x, const q8_node *n) {
    const q8_layernorm_params *p = n->params;
    ln_args a = {p,
                 Q8_IN_PTR(x, n, 0),
                 Q8_IN_PTR(x, n, 1),
                 p->has_b ? Q8_IN_PTR(x, n, 2) : NULL,
                 Q8_OUT_PTR(x, n, 0),
                 NULL,
                 NULL};
    if (n->n_outputs > 1 && n->outputs[1] >= 0) a.mean = Q8_OUT_PTR(x, n, 1);
    if (n->n_outputs > 2 && n->outputs[2] >= 0) a.inv = Q8_OUT_PTR(x, n, 2);
    float *s = x->scratch;
    if (!p->s_full) {
        q8_bcast_expand(a.scale, p->dims, p->nd, p->sstride, p->len, s);
        a.scale = s;
        s += q8_align_up((size_t)p->len * sizeof(float), Q8_ALIGN) / sizeof(float);
    }
    if (p->has_b && !p->b_full) {
        q8_bcast_expand(a.bias, p->dims, p->nd, p->bstride, p->len, s);
        a.bias = s;
    }
    q8_parallel_for(x->pool, p->rows, p->len >= 8192 ? 1 : 8192 / (p->len ? p->len : 1), ln_range,
                    &a);
}

const q8_cpu_op q8_cpu_layer_norm = {.run = ln_run, .scratch = ln_scratch};
