/* Relu: y = max(x, 0). */
#include "registry.h"

static q8_status relu_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

typedef struct relu_args {
    const float *x;
    float *y;
} relu_args;

static void relu_range(void *p, int64_t b, int64_t e, int t) {
    const relu_args *a = p;
    for (int64_t i = b; i < e; i++) a->y[i] = a->x[i] > 0.0f ? a->x[i] : 0.0f;
}

static void relu_run(const q8_exec *x, const q8_node *n) {
    relu_args a = {Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    q8_parallel_for(x->pool, q8_tensor_numel(q8_in(x->g, n, 0)), 16384, relu_range, &a);
}

const q8_op_def q8_op_relu = {
    .name = "Relu", .infer = relu_infer, .run = relu_run, .flags = Q8_OP_INPLACE,
};
