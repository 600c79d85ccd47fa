/* ConstantOfShape: a tensor of the shape given by a constant int64 input,
 * filled with the one-element `value` attribute (default float32 0). Its
 * input is constant, so it is folded at load time. */
#include <string.h>

#include "tensor_util.h"

typedef struct cos_params {
    size_t esize;
    uint8_t value[8];
} cos_params;

static q8_status cos_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_const_ints(g, n, 0, dims, Q8_MAX_DIMS, &nd, err));
    char sb[160];
    for (int i = 0; i < nd; i++)
        if (dims[i] < 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "shape %s has a negative dim",
                                q8_tu_list_str(dims, nd, sb, sizeof sb));
    cos_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    q8_dtype dt = Q8_F32;
    p->esize = 4;
    const q8_attr *a = q8_attr_find(n, "value");
    if (a) {
        const q8_tensor *v = a->t;
        if (a->type != Q8_ATTR_TENSOR || !v || !v->data || !v->shape_known ||
            q8_tensor_numel(v) != 1)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "attribute 'value' must be a one-element tensor");
        dt = v->dtype;
        p->esize = q8_dtype_size(dt);
        if (p->esize == 0 || p->esize > sizeof p->value || dt == Q8_STRING)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "value of dtype %s", q8_dtype_name(dt));
        memcpy(p->value, v->data, p->esize);
    }
    return q8_set_output(g, n, 0, dt, dims, nd, err);
}

static void cos_run(const q8_exec *x, const q8_node *n) {
    const cos_params *p = n->params;
    q8_tu_fill(Q8_OUT_PTR(x, n, 0), p->value, q8_tensor_numel(q8_out(x->g, n, 0)), p->esize);
}

const q8_op_schema q8_schema_constant_of_shape = {.infer = cos_infer};
const q8_cpu_op q8_cpu_constant_of_shape = {.run = cos_run};
