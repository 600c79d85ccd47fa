/* q8.QAdd (the definition: qadd.h). Inputs A and B: int8 activations of the
 * same shape with per-tensor scales; attribute y_scale: the output's scale.
 * No broadcasting: the quantizer emits it only for same-shape sums. */
#include "ops/qadd.h"

#include <math.h>
#include <string.h>

#include "op.h"
#include "ops/qop.h"

void q8_qadd_multipliers(double sa, double sb, double sy, q8_qadd_params *p) {
    double ra = sa / sy, rb = sb / sy, r = ra > rb ? ra : rb;
    int s = 30;
    while (s > 1 && nearbyint(ldexp(r, s)) > 32767) s--;
    double ma = nearbyint(ldexp(ra, s)), mb = nearbyint(ldexp(rb, s));
    /* only a ratio above 2^14 (every nonzero input saturates) is clamped */
    p->ma = (int32_t)(ma > 32767 ? 32767 : ma);
    p->mb = (int32_t)(mb > 32767 ? 32767 : mb);
    p->shift = s;
    p->lo = -128; /* no fused Relu */
}

static q8_status qadd_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    float sa, sb, sy;
    Q8_TRY(q8_qop_act_scale(g, n, 0, "A", &sa, err));
    Q8_TRY(q8_qop_act_scale(g, n, 1, "B", &sb, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++) same = a->dims[d] == b->dims[d];
    if (!same)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "A '%s' and B '%s' differ in shape (q8.QAdd does not broadcast)",
                            a->name, b->name);
    bool i8;
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    if (!i8) return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is missing");
    q8_qadd_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    q8_qadd_multipliers(sa, sb, sy, p);
    p->n = q8_tensor_numel(a);
    const char *act = q8_attr_str(n, "_act", NULL);
    if (act) {
        if (strcmp(act, "Relu") != 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "fused activation '%s' (q8.QAdd takes Relu)",
                                act);
        p->lo = 0; /* int8 activations are symmetric: Relu is max(y, 0) */
    }
    Q8_TRY(q8_set_output(g, n, 0, Q8_I8, a->dims, a->ndim, err));
    return q8_qop_set_out_scale(g, n, sy, err);
}

const q8_op_schema q8_schema_qadd = {.infer = qadd_infer, .flags = Q8_OPF_INPLACE};
