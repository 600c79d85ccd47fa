/* DequantizeLinear on the CPU (params: src/core/ops/dequantizelinear.h). */
#include "clones.h"
#include "cpu_op.h"
#include "ops/dequantizelinear.h"

typedef struct dequant_args {
    const q8_dequantizelinear_params *p;
    const void *x;
    const float *scale;
    const void *zp;
    float *y;
} dequant_args;

static inline int64_t elem(q8_dtype t, const void *d, int64_t i) {
    return t == Q8_I8 ? ((const int8_t *)d)[i] : t == Q8_U8 ? ((const uint8_t *)d)[i]
                                                            : ((const int32_t *)d)[i];
}

static void dequant_range(void *arg, int64_t b, int64_t e, int t) {
    const dequant_args *a = arg;
    const q8_dequantizelinear_params *p = a->p;
    int64_t inner = p->q.inner;
    for (int64_t r = b; r < e; r++) {
        int64_t c = r % p->q.count, i0 = r * inner;
        float s = a->scale[c];
        int64_t z = a->zp ? elem(p->xt, a->zp, c) : 0;
        /* x may alias y (in place, int32 -> float32): read before write */
        for (int64_t i = i0; i < i0 + inner; i++) a->y[i] = (float)(elem(p->xt, a->x, i) - z) * s;
    }
}

/* int8 with one scale, the quantizer's case: a loop the compiler
 * vectorizes (for each vector width: a product alone, nothing to contract),
 * split over elements */
Q8_CLONES static void dequant_flat_i8(void *arg, int64_t b, int64_t e, int t) {
    const dequant_args *a = arg;
    const int8_t *x = a->x;
    int32_t z = a->zp ? *(const int8_t *)a->zp : 0;
    float s = a->scale[0];
    float *y = a->y;
    for (int64_t i = b; i < e; i++) y[i] = (float)(x[i] - z) * s;
}

static void dequant_run(const q8_exec *x, const q8_node *n) {
    const q8_dequantizelinear_params *p = n->params;
    dequant_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                      n->n_inputs > 2 && n->inputs[2] >= 0 ? Q8_IN_PTR(x, n, 2) : NULL,
                      Q8_OUT_PTR(x, n, 0)};
    if (p->q.count == 1 && p->xt == Q8_I8) {
        q8_parallel_for(x->pool, p->rows * p->q.inner, 16384, dequant_flat_i8, &a);
        return;
    }
    q8_parallel_for(x->pool, p->rows, 1 + 16384 / (p->q.inner + 1), dequant_range, &a);
}

const q8_cpu_op q8_cpu_dequantize_linear = {.run = dequant_run};
