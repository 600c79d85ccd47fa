/* q8.QPRelu on the CPU (the definition: src/core/ops/qprelu.h). A channel
 * plane of 512 or more values is looked up in a 256-entry table made for
 * its slope (the definition run on the 256 int8 values: one table costs
 * about half a plane of that size); a smaller plane is dequantized,
 * activated and quantized in blocks. Both compute each value as
 * DequantizeLinear, PRelu and QuantizeLinear do (QuantizeLinear's own
 * vector code, quant_simd.h): the same bytes either way. */
#include "clones.h"
#include "cpu_op.h"
#include "ops/qprelu.h"
#include "qlut.h"
#include "qop_util.h"
#include "quant_simd.h"

#define QP_BLOCK 1024
#define QP_TABLE_MIN 512 /* plane values from which a table pays */

/* PRelu's v < 0 ? v * s : v of DequantizeLinear's (float)x * sx (this file
 * is built without FP contraction: CMakeLists.txt). */
Q8_CLONES static void dequant_prelu(const int8_t *x, float sx, float s, float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float f = (float)x[i] * sx;
        v[i] = f < 0 ? f * s : f;
    }
}

typedef struct qprelu_args {
    const q8_qprelu_params *p;
    q8_qlut_path path;
    const int8_t *x;
    const float *slope;
    int8_t *y;
} qprelu_args;

/* n values of one slope s. */
static void qprelu_span(const qprelu_args *a, const int8_t *x, float s, int8_t *y, int64_t n) {
    const q8_qprelu_params *p = a->p;
    float v[QP_BLOCK];
    if (n >= QP_TABLE_MIN) {
        int8_t q[256], t[256];
        for (int k = 0; k < 256; k++) q[k] = (int8_t)(k - 128);
        dequant_prelu(q, p->sx, s, v, 256);
        q8_quantize_f32(v, t, 256, p->sy, 0, true);
        q8_qlut_apply(a->path, x, t, y, n);
        return;
    }
    for (int64_t i = 0; i < n; i += QP_BLOCK) {
        int64_t m = n - i < QP_BLOCK ? n - i : QP_BLOCK;
        dequant_prelu(x + i, p->sx, s, v, m);
        q8_quantize_f32(v, y + i, m, p->sy, 0, true);
    }
}

/* Planes b..e under QP_TABLE_MIN values each: as many planes as fill a
 * block are activated into it, then quantized in one call (one call per
 * small plane was slower than the float PRelu and quantize it replaces:
 * the iris model's 53 PRelu, mostly 256-value planes, 0.40 against 0.31
 * ms). X may be Y: a block's planes are read before they are written. */
static void qprelu_small_planes(const qprelu_args *a, int64_t b, int64_t e) {
    const q8_qprelu_params *p = a->p;
    const int64_t n = p->inner;
    float v[QP_BLOCK];
    for (int64_t pl = b; pl < e;) {
        int64_t first = pl, m = 0;
        for (; pl < e && m + n <= QP_BLOCK; pl++, m += n)
            dequant_prelu(a->x + pl * n, p->sx, a->slope[pl % p->channels], v + m, n);
        if (m > 0) q8_quantize_f32(v, a->y + first * n, m, p->sy, 0, true);
    }
}

/* Planes b..e (a per-channel slope) or element chunks b..e (one slope). */
static void qprelu_range(void *arg, int64_t b, int64_t e, int tid) {
    (void)tid;
    const qprelu_args *a = arg;
    const q8_qprelu_params *p = a->p;
    if (p->channels > 1 && p->inner < QP_TABLE_MIN) {
        qprelu_small_planes(a, b, e);
        return;
    }
    if (p->channels > 1) {
        for (int64_t pl = b; pl < e; pl++)
            qprelu_span(a, a->x + pl * p->inner, a->slope[pl % p->channels],
                        a->y + pl * p->inner, p->inner);
        return;
    }
    int64_t i0 = b * QP_BLOCK, i1 = e * QP_BLOCK < p->inner ? e * QP_BLOCK : p->inner;
    qprelu_span(a, a->x + i0, a->slope[0], a->y + i0, i1 - i0);
}

static void qprelu_run(const q8_exec *x, const q8_node *n) {
    const q8_qprelu_params *p = n->params;
    const q8_qlut_path *path = x->prep;
    qprelu_args a = {p, *path, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0)};
    if (p->channels > 1) {
        q8_parallel_for(x->pool, p->planes, 1 + 32768 / (p->inner + 1), qprelu_range, &a);
        return;
    }
    /* chunks of QP_BLOCK values, 32 to a task */
    q8_parallel_for(x->pool, (p->inner + QP_BLOCK - 1) / QP_BLOCK, 32, qprelu_range, &a);
}

const q8_cpu_op q8_cpu_qprelu = {.prepare = q8_qlut_prepare, .run = qprelu_run};
