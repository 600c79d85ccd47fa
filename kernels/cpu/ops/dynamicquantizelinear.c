/* DynamicQuantizeLinear (ONNX opset 11): uint8 quantization of float32 x
 * with a scale and zero point computed from x's range (extended to
 * include 0): y_scale = (max - min) / 255, y_zero_point =
 * round_half_even(saturate(0 - min / y_scale)), y = saturate(
 * round_half_even(x / y_scale) + y_zero_point). An all-zero x (scale 0)
 * gives scale 0, zero point 0 and y = 0. NaNs are left out of the range
 * and quantize to the zero point. */
#include "qop_util.h"

static q8_status dql_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 3, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    Q8_TRY(q8_set_output(g, n, 0, Q8_U8, x->dims, x->ndim, err));
    Q8_TRY(q8_set_output(g, n, 1, Q8_F32, NULL, 0, err));
    return q8_set_output(g, n, 2, Q8_U8, NULL, 0, err);
}

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

const q8_op_schema q8_schema_dynamic_quantize_linear = {.infer = dql_infer};
const q8_cpu_op q8_cpu_dynamic_quantize_linear = {.run = dql_run};
