/* BatchNormalization, inference form: y = (x - mean) / sqrt(var + eps) * scale + B
 * per channel (dim 1). The BN-folding pass removes most of these; this runs
 * the ones that follow something other than a Conv/Gemm. Opsets 7-8 with
 * spatial=0 take per-activation statistics of shape C x D1 x ... x Dn. */
#include <math.h>
#include <string.h>

#include "cpu_op.h"

typedef struct bn_params {
    int64_t rows; /* N * C */
    int64_t c;    /* channels */
    int64_t s;    /* elements per (n, c): D1 * ... * Dn */
    float eps;
    bool per_elem; /* statistics hold C * s values (spatial = 0) */
} bn_params;

static q8_status bn_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 5, 5, 1, 5, err));
    if (q8_attr_int(n, "training_mode", 0) != 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "training mode is not supported (training_mode=1); export the model "
                            "in eval mode");
    for (int i = 1; i < n->n_outputs; i++)
        if (n->outputs[i] >= 0)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "output %d (running or saved mean/var) is a training output and "
                                "is not supported; only Y can be computed in inference",
                                i);
    for (int i = 0; i < 5; i++) Q8_TRY(q8_check_input(g, n, i, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim < 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "X has rank %d, expected at least 2 (N x C x ...)", x->ndim);
    int64_t s = 1;
    for (int d = 2; d < x->ndim; d++) s *= x->dims[d];
    int64_t c = x->dims[1];
    /* spatial exists in opsets 7-8 only; later versions are always spatial. */
    bool per_elem = g->opset < 9 && q8_attr_int(n, "spatial", 1) == 0;
    int64_t want = per_elem ? c * s : c;
    static const char *const names[] = {"X", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        if (q8_tensor_numel(t) != want) {
            char sb[96];
            return q8_node_fail(
                err, Q8_ERR_SHAPE, n, "%s has shape %s (%lld values), expected %lld%s", names[i],
                q8_shape_str(t->dims, t->ndim, sb, sizeof sb), (long long)q8_tensor_numel(t),
                (long long)want, per_elem ? " (C x D1 x ... for spatial=0)" : " (one per channel)");
        }
    }
    float eps = q8_attr_float(n, "epsilon", 1e-5f);
    if (!(eps >= 0.0f))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "epsilon is %g, expected >= 0", eps);
    bn_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    *p = (bn_params){.rows = x->dims[0] * c, .c = c, .s = s, .eps = eps, .per_elem = per_elem};
    return q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err);
}

typedef struct bn_args {
    const bn_params *p;
    const float *x, *scale, *bias, *mean, *var;
    float *y;
} bn_args;

static void bn_range(void *arg, int64_t b, int64_t e, int t) {
    const bn_args *a = arg;
    const bn_params *p = a->p;
    int64_t s = p->s;
    for (int64_t r = b; r < e; r++) {
        int64_t c = r % p->c;
        const float *x = a->x + r * s;
        float *y = a->y + r * s;
        if (!p->per_elem) {
            float k = a->scale[c] / sqrtf(a->var[c] + p->eps);
            float m = a->bias[c] - a->mean[c] * k;
            for (int64_t i = 0; i < s; i++) y[i] = x[i] * k + m;
        } else {
            int64_t o = c * s;
            for (int64_t i = 0; i < s; i++) {
                float k = a->scale[o + i] / sqrtf(a->var[o + i] + p->eps);
                y[i] = (x[i] - a->mean[o + i]) * k + a->bias[o + i];
            }
        }
    }
}

static void bn_run(const q8_exec *x, const q8_node *n) {
    const bn_params *p = n->params;
    bn_args a = {p,
                 Q8_IN_PTR(x, n, 0),
                 Q8_IN_PTR(x, n, 1),
                 Q8_IN_PTR(x, n, 2),
                 Q8_IN_PTR(x, n, 3),
                 Q8_IN_PTR(x, n, 4),
                 Q8_OUT_PTR(x, n, 0)};
    int64_t grain = p->s >= 16384 ? 1 : 16384 / (p->s ? p->s : 1);
    q8_parallel_for(x->pool, p->rows, grain, bn_range, &a);
}

const q8_op_schema q8_schema_batch_norm = {.infer = bn_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_batch_norm = {.run = bn_run};
