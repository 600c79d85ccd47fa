/* Dropout and its internal form q8.DropoutMask (see dropout.h). */
#include "ops/dropout.h"

#include <string.h>

#include "op.h"
#include "ops/tensor_args.h"

static bool const_is_zero(const q8_tensor *t) {
    if (!t || !t->data || q8_tensor_numel(t) != 1) return false;
    switch (t->dtype) {
    case Q8_F32: return *(const float *)t->data == 0.0f;
    case Q8_F64: return *(const double *)t->data == 0.0;
    case Q8_F16: case Q8_BF16: return (*(const uint16_t *)t->data & 0x7fff) == 0;
    default: return false;
    }
}

static q8_status dropout_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 3, 1, 2, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0), *tm = q8_in(g, n, 2);
    if (tm) {
        if (!tm->data)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "input 2 ('%s') must be a constant: training_mode decides whether "
                                "Dropout is the identity (q8 runs inference only)", tm->name);
        if (q8_tensor_numel(tm) != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "training_mode must be a scalar");
        bool training = *(const uint8_t *)tm->data != 0;
        const q8_tensor *ratio = q8_in(g, n, 1);
        if (training && ratio && !ratio->data)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "input 1 ('%s') must be a constant: with training_mode true only "
                                "ratio 0 (the identity) is supported", ratio->name);
        if (training && !const_is_zero(ratio))
            return q8_node_fail(
                err, Q8_ERR_UNSUPPORTED, n,
                "training_mode is true: training-mode Dropout (random masks) is not "
                "supported, q8 runs inference only");
    }
    Q8_TRY(q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err));
    bool want_mask = n->n_outputs > 1 && n->outputs[1] >= 0;
    /* A view of a constant is not planned (the planner only aliases
     * activations), so constant data that does not fold (a run-time ratio)
     * is copied too. */
    n->op = want_mask || x->data ? Q8_OP_DROPOUT_MASK : Q8_OP_DROPOUT;
    if (n->op == Q8_OP_DROPOUT) return Q8_OK;
    q8_dropout_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    if (!want_mask) return Q8_OK;
    p->mask = true;
    return q8_set_output(g, n, 1, Q8_BOOL, x->dims, x->ndim, err);
}

const q8_op_schema q8_schema_dropout = {.infer = dropout_infer, .flags = Q8_OPF_VIEW};
/* An internal form (q8.DropoutMask): dropout_infer switches to it when the
 * mask is read. */
const q8_op_schema q8_schema_dropout_mask = {.infer = dropout_infer, .flags = Q8_OPF_INPLACE};
