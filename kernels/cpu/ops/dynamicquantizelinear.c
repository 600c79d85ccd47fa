/* DynamicQuantizeLinear on the CPU (the op: src/core/ops/dynamicquantizelinear.c). */
#include "cpu_op.h"
#include "requant.h"

typedef struct dql_args {
    const float *x;
    uint8_t *y;
    float scale;
    int32_t zp;
} dql_args;

static void dql_range(void *arg, int64_t b, int64_t e, int t) {
    const dql_args *a = arg;
    for (int64_t i = b; i < e; i++)
        a->y[i] = (uint8_t)(a->scale > 0 ? q8_round_sat(a->x[i] / a->scale, a->zp, 0, 255) : 0);
}

static void dql_run(const q8_exec *x, const q8_node *n) {
    int64_t cnt = q8_tensor_numel(q8_in(x->g, n, 0));
    const float *xs = Q8_IN_PTR(x, n, 0);
    float mn = 0, mx = 0;
    for (int64_t i = 0; i < cnt; i++) {
        mn = xs[i] < mn ? xs[i] : mn;
        mx = xs[i] > mx ? xs[i] : mx;
    }
    dql_args a = {xs, Q8_OUT_PTR(x, n, 0), (mx - mn) / 255.0f, 0};
    if (a.scale > 0) { /* saturate, then round (x's range includes 0: v >= 0) */
        float v = 0 - mn / a.scale;
        a.zp = q8_round_sat(v > 255 ? 255 : v, 0, 0, 255);
    }
    if (n->n_outputs > 1 && n->outputs[1] >= 0) *(float *)Q8_OUT_PTR(x, n, 1) = a.scale;
    if (n->n_outputs > 2 && n->outputs[2] >= 0) *(uint8_t *)Q8_OUT_PTR(x, n, 2) = (uint8_t)a.zp;
    q8_parallel_for(x->pool, cnt, 16384, dql_range, &a);
}

const q8_cpu_op q8_cpu_dynamic_quantize_linear = {.run = dql_run};
