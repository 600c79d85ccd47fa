/* QuantizeLinear (ONNX opsets 10-19): y = saturate(round_half_even(x / scale)
 * + zero_point), int8 or uint8 (the zero point's type; uint8 without one),
 * per tensor or per axis. Scale and zero point must be constants; the output
 * gets them as its quantization parameters (when the zero points agree). */
#include <string.h>

#include "qop_util.h"
#include "quant_simd.h"

typedef struct quant_params {
    q8_qdq q;
    bool in_i32, out_i8;
    int64_t rows;           /* numel / inner */
} quant_params;

static q8_status quant_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    quant_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    Q8_TRY(q8_qdq_parse(g, n, &p->q, err));
    const q8_tensor *x = q8_in(g, n, 0), *s = q8_in(g, n, 1), *z = q8_in(g, n, 2);
    if (x->dtype != Q8_F32 && x->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "x '%s' is %s, expected float32 or "
                            "int32", x->name, q8_dtype_name(x->dtype));
    if (z && z->dtype != Q8_I8 && z->dtype != Q8_U8)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "zero point '%s' is %s, expected int8 "
                            "or uint8", z->name, q8_dtype_name(z->dtype));
    p->in_i32 = x->dtype == Q8_I32;
    p->out_i8 = z && z->dtype == Q8_I8;
    p->rows = q8_tensor_numel(x) / (p->q.inner ? p->q.inner : 1);
    Q8_TRY(q8_set_output(g, n, 0, p->out_i8 ? Q8_I8 : Q8_U8, x->dims, x->ndim, err));

    /* The output's quantization parameters, when one zero point fits all. */
    int32_t zp0 = 0;
    for (int64_t c = 0; z && c < p->q.count; c++) {
        int32_t v = p->out_i8 ? ((const int8_t *)z->data)[c] : ((const uint8_t *)z->data)[c];
        if (c == 0) zp0 = v;
        else if (v != zp0) return Q8_OK;
    }
    q8_tensor *y = q8_out(g, n, 0);
    float *sc = malloc(sizeof(float) * (size_t)p->q.count);
    if (!sc) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    memcpy(sc, s->data, sizeof(float) * (size_t)p->q.count);
    free(y->q.scale);
    y->q = (q8_qparams){.axis = p->q.axis, .n = (int)p->q.count, .scale = sc, .zero_point = zp0};
    return Q8_OK;
}

/* round_half_even(x / s) + z, saturated to [lo, hi]; NaN gives z. */
static inline int32_t quant1(float x, float s, int32_t z, int32_t lo, int32_t hi) {
    return q8_round_sat(x / s, z, lo, hi);
}

typedef struct quant_args {
    const quant_params *p;
    const void *x;
    const float *scale;
    const void *zp;
    void *y;
} quant_args;

static void quant_range(void *arg, int64_t b, int64_t e, int t) {
    const quant_args *a = arg;
    const quant_params *p = a->p;
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
    const quant_params *p = n->params;
    quant_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                    n->n_inputs > 2 && n->inputs[2] >= 0 ? Q8_IN_PTR(x, n, 2) : NULL,
                    Q8_OUT_PTR(x, n, 0)};
    if (p->q.count == 1 && !p->in_i32) {
        q8_parallel_for(x->pool, p->rows * p->q.inner, 16384, quant_flat_range, &a);
        return;
    }
    q8_parallel_for(x->pool, p->rows, 1 + 16384 / (p->q.inner + 1), quant_range, &a);
}

const q8_op_schema q8_schema_quantize_linear = {.infer = quant_infer};
const q8_cpu_op q8_cpu_quantize_linear = {.run = quant_run};
