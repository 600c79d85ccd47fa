/* Shape and Size: int64 results that depend only on the input's shape, so
 * they are always folded to constants. Shape takes start/end (opset 15),
 * clamped to [0, rank] after adding the rank to negative values. */
#include "tensor_util.h"

typedef struct shape_params {
    int start, end;
} shape_params;

static int clamp_axis(int64_t v, int r) {
    if (v < 0) v += r;
    return v < 0 ? 0 : v > r ? r : (int)v;
}

static q8_status shape_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    shape_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->start = clamp_axis(q8_attr_int(n, "start", 0), x->ndim);
    p->end = clamp_axis(q8_attr_int(n, "end", x->ndim), x->ndim);
    if (p->end < p->start) p->end = p->start;
    int64_t len = p->end - p->start;
    return q8_set_output(g, n, 0, Q8_I64, &len, 1, err);
}

static void shape_run(const q8_exec *x, const q8_node *n) {
    const shape_params *p = n->params;
    const q8_tensor *t = q8_in(x->g, n, 0);
    int64_t *y = Q8_OUT_PTR(x, n, 0);
    for (int i = p->start; i < p->end; i++) y[i - p->start] = t->dims[i];
}

static q8_status size_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    return q8_set_output(g, n, 0, Q8_I64, NULL, 0, err);
}

static void size_run(const q8_exec *x, const q8_node *n) {
    *(int64_t *)Q8_OUT_PTR(x, n, 0) = q8_tensor_numel(q8_in(x->g, n, 0));
}

const q8_op_schema q8_schema_shape = {.infer = shape_infer, .flags = Q8_OPF_SHAPE_ONLY};
const q8_cpu_op q8_cpu_shape = {.run = shape_run};
const q8_op_schema q8_schema_size = {.infer = size_infer, .flags = Q8_OPF_SHAPE_ONLY};
const q8_cpu_op q8_cpu_size = {.run = size_run};
