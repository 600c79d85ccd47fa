/* q8.QGlobalAveragePool (the definition: qgap.h). Input X: an int8
 * activation with a per-tensor scale, rank >= 2; attribute y_scale: the
 * output's scale. */
#include "ops/qgap.h"

#include <math.h>

#include "op.h"
#include "ops/qop.h"

void q8_qgap_multiplier(double M, q8_qgap_params *p) {
    int e;
    double m = frexp(M, &e); /* M = m * 2^e, m in [0.5, 1) */
    int64_t mult = (int64_t)nearbyint(ldexp(m, 31));
    if (mult == (int64_t)1 << 31) {
        mult = (int64_t)1 << 30;
        e += 1;
    }
    int shift = 31 - e;
    if (shift > 62) { /* |acc * M| < 1/2 for every sum: always 0 */
        mult = 0;
        shift = 62;
    }
    if (shift < 1) shift = 1; /* M >= 2^30: every nonzero sum saturates anyway */
    p->mult = (int32_t)mult;
    p->shift = shift;
}

static q8_status qgap_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    float sx, sy;
    Q8_TRY(q8_qop_act_scale(g, n, 0, "X", &sx, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "X '%s' has rank %d, expected N x C x ...",
                            x->name, x->ndim);
    bool i8;
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    if (!i8) return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is missing");
    q8_qgap_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    int64_t ydims[Q8_MAX_DIMS];
    p->s = 1;
    for (int d = 0; d < x->ndim; d++) {
        ydims[d] = d < 2 ? x->dims[d] : 1;
        if (d >= 2) p->s *= x->dims[d];
    }
    if (p->s < 1 || p->s > Q8_QGAP_MAX_S)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "X '%s' has %lld values per plane, q8.QGlobalAveragePool takes "
                            "1 to %lld", x->name, (long long)p->s, (long long)Q8_QGAP_MAX_S);
    p->rows = x->dims[0] * x->dims[1];
    q8_qgap_multiplier((double)sx / ((double)p->s * sy), p);
    Q8_TRY(q8_set_output(g, n, 0, Q8_I8, ydims, x->ndim, err));
    return q8_qop_set_out_scale(g, n, sy, err);
}

const q8_op_schema q8_schema_qglobal_average_pool = {.infer = qgap_infer};
