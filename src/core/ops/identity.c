/* Identity: a view of its input (removed by the passes where possible). */
#include "op.h"

static q8_status identity_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_identity = {.infer = identity_infer, .flags = Q8_OPF_VIEW};
