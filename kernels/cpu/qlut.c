/* q8.QLut: an elementwise function of an int8 tensor as a 256-entry table,
 * y = T[x + 128]. The quantizer builds T by running the FP32 op (HardSwish,
 * Sigmoid, Gelu, ...) on every int8 value times the input scale and
 * quantizing the results with the output scale, so a smooth activation
 * between two INT8 layers costs one byte lookup instead of a dequantize, a
 * float function and a quantize. Inputs: X int8, T int8 [256] constant.
 * Attribute y_scale: the output's scale. */
#include "qop_util.h"

static q8_status qlut_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_I8, err));
    const q8_tensor *x = q8_in(g, n, 0), *t = q8_in(g, n, 1);
    if (!t || !t->data || t->dtype != Q8_I8 || q8_tensor_numel(t) != 256)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "the table must be a constant int8 [256]");
    bool i8;
    float sy;
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    if (!i8) return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is missing");
    Q8_TRY(q8_set_output(g, n, 0, Q8_I8, x->dims, x->ndim, err));
    return q8_qop_set_out_scale(g, n, sy, err);
}

typedef struct qlut_args {
    const int8_t *x, *t;
    int8_t *y;
} qlut_args;

static void qlut_range(void *p, int64_t b, int64_t e, int tid) {
    const qlut_args *a = p;
    for (int64_t i = b; i < e; i++) a->y[i] = a->t[a->x[i] + 128];
}

static void qlut_run(const q8_exec *x, const q8_node *n) {
    qlut_args a = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0)};
    q8_parallel_for(x->pool, q8_tensor_numel(q8_in(x->g, n, 0)), 32768, qlut_range, &a);
}

const q8_op_def q8_op_qlut = {
    .name = "QLut", .domain = "q8", .infer = qlut_infer, .run = qlut_run,
    .flags = Q8_OP_INPLACE,
};
