/* The window ops, ReverseSequence and Det (see windows.h). */
#include "ops/windows.h"

#include "op.h"

static q8_status window_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    int64_t size[1];
    int ns = 0;
    Q8_TRY(q8_const_ints(g, n, 0, size, 1, &ns, err));
    if (ns != 1 || size[0] < 0 || size[0] > ((int64_t)1 << 31))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "size must be one value in [0, 2^31]");
    int64_t dt = q8_attr_int(n, "output_datatype", 1), per = q8_attr_int(n, "periodic", 1);
    if (dt != 1 && dt != 11)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output_datatype %lld: float32 (1) and "
                            "float64 (11) are supported", (long long)dt);
    q8_window_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->kind = n->op == Q8_OP_HANN_WINDOW ? 0 : n->op == Q8_OP_HAMMING_WINDOW ? 1 : 2;
    p->f64 = dt == 11;
    p->size = size[0];
    p->period = per ? size[0] : size[0] - 1;
    return q8_set_output(g, n, 0, p->f64 ? Q8_F64 : Q8_F32, size, 1, err);
}

static q8_status revseq_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_I64, err));
    const q8_tensor *x = q8_in(g, n, 0), *l = q8_in(g, n, 1);
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has rank %d, expected >= 2",
                            x->name, x->ndim);
    if (x->dtype == Q8_STRING) return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "string data");
    int64_t ba = q8_attr_int(n, "batch_axis", 1), ta = q8_attr_int(n, "time_axis", 0);
    if (!((ba == 1 && ta == 0) || (ba == 0 && ta == 1)))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "batch_axis %lld and time_axis %lld: expected "
                            "1 and 0, or 0 and 1", (long long)ba, (long long)ta);
    q8_revseq_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->elem = q8_dtype_size(x->dtype);
    p->batch_first = ba == 0;
    p->b = x->dims[ba];
    p->t = x->dims[ta];
    p->inner = 1;
    for (int d = 2; d < x->ndim; d++) p->inner *= x->dims[d];
    if (l->ndim != 1 || l->dims[0] != p->b)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "sequence_lens must be [%lld] (the batch)",
                            (long long)p->b);
    return q8_set_output(g, n, 0, x->dtype, x->dims, x->ndim, err);
}

static q8_status det_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 2 || x->dims[x->ndim - 1] != x->dims[x->ndim - 2])
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' must be [..., M, M]", x->name);
    q8_det_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->m = x->dims[x->ndim - 1];
    p->batch = 1;
    for (int d = 0; d < x->ndim - 2; d++) p->batch *= x->dims[d];
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim - 2, err);
}

const q8_op_schema q8_schema_hann_window = {.infer = window_infer};
const q8_op_schema q8_schema_hamming_window = {.infer = window_infer};
const q8_op_schema q8_schema_blackman_window = {.infer = window_infer};
const q8_op_schema q8_schema_reverse_sequence = {.infer = revseq_infer};
const q8_op_schema q8_schema_det = {.infer = det_infer};
