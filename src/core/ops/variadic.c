/* Max, Min (float32/64, all integers), Sum, Mean (float32/64): 1 to
 * Q8_BCAST_MAX_IN inputs of one dtype, all broadcast together. Params: the
 * broadcast plan (ops/broadcast.h).
 *
 * Inputs are combined left to right (in0 op in1 op in2 ...), so float sums
 * do not depend on the thread count. Max/Min propagate NaN (like numpy's
 * maximum/minimum). */
#include "op.h"
#include "ops/elementwise.h"

static q8_status var_infer(q8_graph *g, q8_node *n, unsigned dtypes, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, Q8_BCAST_MAX_IN, 1, 1, err));
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", i);
        Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    }
    q8_dtype dt = q8_in(g, n, 0)->dtype;
    for (int i = 1; i < n->n_inputs; i++)
        if (q8_in(g, n, i)->dtype != dt)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is %s, input 0 is %s", i,
                                q8_dtype_name(q8_in(g, n, i)->dtype), q8_dtype_name(dt));
    if (!q8_ew_dtype_in(dtypes, dt)) {
        char list[256];
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "dtype %s is not supported (only %s)",
                            q8_dtype_name(dt), q8_ew_dtype_list(dtypes, list, sizeof list));
    }
    int64_t dims[Q8_MAX_DIMS];
    int nd;
    Q8_TRY(q8_bcast_shapes(g, n, 0, n->n_inputs, dims, &nd, err));
    Q8_TRY(q8_bcast_plan_new(n, g, 0, n->n_inputs, dims, nd, err));
    return q8_set_output(g, n, 0, dt, dims, nd, err);
}

#define VAR_OP(VAR, DTYPES)                                                                \
    static q8_status VAR##_infer(q8_graph *g, q8_node *n, q8_error *err) {               \
        return var_infer(g, n, DTYPES, err);                                              \
    }                                                                                     \
    const q8_op_schema q8_schema_##VAR = {.infer = VAR##_infer, .flags = Q8_OPF_INPLACE};

VAR_OP(max, Q8_EW_DT_NUMS)
VAR_OP(min, Q8_EW_DT_NUMS)
VAR_OP(sum, Q8_EW_DT_FLOATS)
VAR_OP(mean, Q8_EW_DT_FLOATS)
