/* ConstantOfShape (see constantofshape.h). */
#include "ops/constantofshape.h"

#include <string.h>

#include "op.h"
#include "ops/tensor_args.h"

static q8_status cos_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_const_ints(g, n, 0, dims, Q8_MAX_DIMS, &nd, err));
    char sb[160];
    for (int i = 0; i < nd; i++)
        if (dims[i] < 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "shape %s has a negative dim",
                                q8_ta_list_str(dims, nd, sb, sizeof sb));
    q8_constant_of_shape_params *p = q8_node_params(n, sizeof *p, err);
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

const q8_op_schema q8_schema_constant_of_shape = {.infer = cos_infer};
