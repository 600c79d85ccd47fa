/* q8.If (ops/if.h): both sides' outputs must have one dtype and shape, so
 * that the If's outputs have one whichever side runs. */
#include "op.h"
#include "ops/if.h"

static bool cond_dtype_ok(q8_dtype t) {
    return t == Q8_BOOL || t == Q8_U8 || t == Q8_I8 || t == Q8_I32 || t == Q8_I64 || t == Q8_F32;
}

static q8_status if_infer(q8_graph *g, q8_node *n, q8_error *err) {
    if (n->n_outputs < 1 || n->n_inputs != 1 + 2 * n->n_outputs)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "has %d inputs and %d outputs, expected "
                            "1 + 2 x outputs inputs", n->n_inputs, n->n_outputs);
    for (int i = 0; i < n->n_inputs; i++) Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *c = q8_in(g, n, 0);
    if (q8_tensor_numel(c) != 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "condition '%s' must hold one value", c->name);
    if (!cond_dtype_ok(c->dtype))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "condition '%s' has dtype %s", c->name,
                            q8_dtype_name(c->dtype));
    int64_t ts = q8_attr_int(n, "then_scope", 0), es = q8_attr_int(n, "else_scope", 0);
    if (ts < 1 || es < 1 || ts == es || ts > INT32_MAX || es > INT32_MAX)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "needs distinct then_scope and else_scope > 0");
    int k_out = n->n_outputs;
    for (int k = 0; k < k_out; k++) {
        const q8_tensor *a = q8_in(g, n, 1 + k), *b = q8_in(g, n, 1 + k_out + k);
        bool same = a->dtype == b->dtype && a->ndim == b->ndim;
        for (int d = 0; same && d < a->ndim; d++) same = a->dims[d] == b->dims[d];
        /* int8 values carry a scale: both sides must carry the same one */
        if (same && (a->q.n || b->q.n))
            same = a->q.n == 1 && b->q.n == 1 && a->q.scale[0] == b->q.scale[0] &&
                   a->q.zero_point == b->q.zero_point;
        if (!same) {
            char sa[96], sb[96];
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "output %d: then_branch gives %s %s ('%s'), else_branch %s %s "
                                "('%s'); both branches must give one dtype, shape and scale",
                                k, q8_dtype_name(a->dtype),
                                q8_shape_str(a->dims, a->ndim, sa, sizeof sa),
                                a->name, q8_dtype_name(b->dtype),
                                q8_shape_str(b->dims, b->ndim, sb, sizeof sb), b->name);
        }
        Q8_TRY(q8_set_output(g, n, k, a->dtype, a->dims, a->ndim, err));
        q8_tensor *y = q8_out(g, n, k);
        if (y && a->q.n && !y->q.n) {
            float *s = malloc(sizeof(float));
            if (!s) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            s[0] = a->q.scale[0];
            y->q.scale = s;
            y->q.n = 1;
            y->q.axis = -1;
            y->q.zero_point = a->q.zero_point;
        }
    }
    q8_if_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->n_out = k_out;
    p->then_scope = (int)ts;
    p->else_scope = (int)es;
    p->fails[0] = q8_attr_str(n, "_then_fails", NULL);
    p->fails[1] = q8_attr_str(n, "_else_fails", NULL);
    if (p->fails[0] && p->fails[1])
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "neither branch can run: %s", p->fails[0]);
    return Q8_OK;
}

/* Not foldable: with a constant condition the import inlines the branch
 * instead, and the branch's nodes must not outlive their If. */
const q8_op_schema q8_schema_if = {.infer = if_infer, .flags = Q8_OPF_NO_FOLD};
