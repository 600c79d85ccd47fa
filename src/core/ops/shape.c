/* Shape and Size (see shape.h). */
#include "ops/shape.h"

#include "op.h"

static int clamp_axis(int64_t v, int r) {
    if (v < 0) v += r;
    return v < 0 ? 0 : v > r ? r : (int)v;
}

static q8_status shape_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    q8_shape_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->start = clamp_axis(q8_attr_int(n, "start", 0), x->ndim);
    p->end = clamp_axis(q8_attr_int(n, "end", x->ndim), x->ndim);
    if (p->end < p->start) p->end = p->start;
    int64_t len = p->end - p->start;
    return q8_set_output(g, n, 0, Q8_I64, &len, 1, err);
}

static q8_status size_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    return q8_set_output(g, n, 0, Q8_I64, NULL, 0, err);
}

const q8_op_schema q8_schema_shape = {.infer = shape_infer, .flags = Q8_OPF_SHAPE_ONLY};
const q8_op_schema q8_schema_size = {.infer = size_infer, .flags = Q8_OPF_SHAPE_ONLY};
