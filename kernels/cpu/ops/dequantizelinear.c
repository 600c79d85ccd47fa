/* DequantizeLinear (ONNX opsets 10-19): y = (x - zero_point) * scale for
 * int8, uint8 and int32 x, per tensor or per axis, float32 output. Scale and
 * zero point must be constants. */
#include "qop_util.h"

typedef struct dequant_params {
    q8_qdq q;
    q8_dtype xt;
    int64_t rows;           /* numel / inner */
} dequant_params;

static q8_status dequant_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    dequant_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    Q8_TRY(q8_qdq_parse(g, n, &p->q, err));
    const q8_tensor *x = q8_in(g, n, 0), *z = q8_in(g, n, 2);
    if (x->dtype != Q8_I8 && x->dtype != Q8_U8 && x->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "x '%s' is %s, expected int8, uint8 or "
                            "int32", x->name, q8_dtype_name(x->dtype));
    if (z && z->dtype != x->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "zero point '%s' is %s, x is %s", z->name,
                            q8_dtype_name(z->dtype), q8_dtype_name(x->dtype));
    p->xt = x->dtype;
    p->rows = q8_tensor_numel(x) / (p->q.inner ? p->q.inner : 1);
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err);
}

typedef struct dequant_args {
    const dequant_params *p;
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
    const dequant_params *p = a->p;
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
 * vectorizes, split over elements */
static void dequant_flat_i8(void *arg, int64_t b, int64_t e, int t) {
    const dequant_args *a = arg;
    const int8_t *x = a->x;
    int32_t z = a->zp ? *(const int8_t *)a->zp : 0;
    float s = a->scale[0];
    float *y = a->y;
    for (int64_t i = b; i < e; i++) y[i] = (float)(x[i] - z) * s;
}

static void dequant_run(const q8_exec *x, const q8_node *n) {
    const dequant_params *p = n->params;
    dequant_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1),
                      n->n_inputs > 2 && n->inputs[2] >= 0 ? Q8_IN_PTR(x, n, 2) : NULL,
                      Q8_OUT_PTR(x, n, 0)};
    if (p->q.count == 1 && p->xt == Q8_I8) {
        q8_parallel_for(x->pool, p->rows * p->q.inner, 16384, dequant_flat_i8, &a);
        return;
    }
    q8_parallel_for(x->pool, p->rows, 1 + 16384 / (p->q.inner + 1), dequant_range, &a);
}

const q8_op_schema q8_schema_dequantize_linear = {.infer = dequant_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_dequantize_linear = {.run = dequant_run};
