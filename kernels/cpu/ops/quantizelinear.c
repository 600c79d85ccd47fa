/* QuantizeLinear on the CPU (params: src/core/ops/quantizelinear.h). */
#include "cpu_op.h"
#include "ops/quantizelinear.h"
#include "quant_simd.h"
#include "requant.h"

/* round_half_even(x / s) + z, saturated to [lo, hi]; NaN gives z. */
static inline int32_t quant1(float x, float s, int32_t z, int32_t lo, int32_t hi) {
    return q8_round_sat(x / s, z, lo, hi);
}

typedef struct quant_args {
    const q8_quantizelinear_params *p;
    const void *x;
    const float *scale;
    const void *zp;
    void *y;
} quant_args;

static void quant_range(void *arg, int64_t b, int64_t e, int t) {
    const quant_args *a = arg;
    const q8_quantizelinear_params *p = a->p;
    int64_t inner = p->q.inner;
    int32_t lo = p->out_i8 ? -128 : 0, hi = p->out_i8 ? 127 : 255;
    for (int64_t r = b; r < e; r++) {
        int64_t c = r % p->q.count, i0 = r * inner;
        float s = a->scale[c];
        int32_t z = !a->zp ? 0 : p->out_i8 ? ((const int8_t *)a->zp)[c]
                                           : ((const uint8_t *)a->zp)[c];
        for (int64_t i = i0; i < i0 + inner; i++) {
            float v = p->in_i32 ? (float)((const int32_t *)a->x)[i] : ((const float *)a->x)[i];
            int32_t q = quant1(v, s, z, lo, hi);
            if (p->out_i8) ((int8_t *)a->y)[i] = (int8_t)q;
            else ((uint8_t *)a->y)[i] = (uint8_t)q;
        }
    }
}

/* float32 with one scale: vectorized, split over elements */
static void quant_flat_range(void *arg, int64_t b, int64_t e, int t) {
    const quant_args *a = arg;
    int32_t z = !a->zp ? 0 : a->p->out_i8 ? *(const int8_t *)a->zp : *(const uint8_t *)a->zp;
    q8_quantize_f32((const float *)a->x + b, (uint8_t *)a->y + b, e - b, a->scale[0], z,
                    a->p->out_i8);
}

static void quant_run(const q8_exec *x, const q8_node *n) {
    const q8_quantizelinear_params *p = n->params;
    quant_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                    n->n_inputs > 2 && n->inputs[2] >= 0 ? Q8_IN_PTR(x, n, 2) : NULL,
                    Q8_OUT_PTR(x, n, 0)};
    if (p->q.count == 1 && !p->in_i32) {
        q8_parallel_for(x->pool, p->rows * p->q.inner, 16384, quant_flat_range, &a);
        return;
    }
    q8_parallel_for(x->pool, p->rows, 1 + 16384 / (p->q.inner + 1), quant_range, &a);
}

const q8_cpu_op q8_cpu_quantize_linear = {.run = quant_run};
