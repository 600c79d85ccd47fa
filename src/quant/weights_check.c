/* Before quantizing: the weights the INT8 rewrite turns into integers, and
 * the BatchNormalization parameters folded into them, must be finite (a
 * NaN weight would be cast to int8, which C leaves undefined, and silently
 * become 0). Checked on the graph as imported, so that the message names
 * the ONNX initializer rather than a tensor the passes derived from it. */
#include <math.h>
#include <string.h>

#include "quantize.h"

static bool is_op(const q8_node *n, const char *op) {
    return !*n->domain && strcmp(n->op_type, op) == 0;
}

/* Input k of n when it is a float32 constant, else NULL. */
static const q8_tensor *const_f32_in(const q8_graph *g, const q8_node *n, int k) {
    const q8_tensor *t = q8_in(g, n, k);
    return t && t->data && t->dtype == Q8_F32 ? t : NULL;
}

static q8_status check_finite(const q8_node *n, const char *what, const q8_tensor *t,
                              q8_error *err) {
    const float *v = t->data;
    int64_t numel = q8_tensor_numel(t), nan = 0, inf = 0, first = -1;
    for (int64_t i = 0; i < numel; i++) {
        if (isfinite(v[i])) continue;
        if (isnan(v[i])) nan++;
        else inf++;
        if (first < 0) first = i;
    }
    if (first < 0) return Q8_OK;
    return q8_node_fail(err, Q8_ERR_FORMAT, n,
                        "%s '%s' holds %lld NaN and %lld infinite values (the first at element "
                        "%lld): q8 cannot quantize non-finite weights; fix the model",
                        what, t->name, (long long)nan, (long long)inf, (long long)first);
}

static q8_status check_batchnorm(const q8_graph *g, const q8_node *n, q8_error *err) {
    static const char *const what[5] = {NULL, "scale", "bias", "mean", "variance"};
    for (int k = 1; k < 5 && k < n->n_inputs; k++) {
        const q8_tensor *t = const_f32_in(g, n, k);
        if (t) Q8_TRY(check_finite(n, what[k], t, err));
    }
    const q8_tensor *var = n->n_inputs > 4 ? const_f32_in(g, n, 4) : NULL;
    if (!var) return Q8_OK;
    float eps = q8_attr_float(n, "epsilon", 1e-5f);
    const float *v = var->data;
    for (int64_t c = 0; c < q8_tensor_numel(var); c++)
        if (!(v[c] + eps > 0))
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "variance '%s' is %g at channel %lld (epsilon %g): a variance "
                                "cannot be negative, the normalization would divide by the "
                                "square root of %g; fix the model",
                                var->name, (double)v[c], (long long)c, (double)eps,
                                (double)(v[c] + eps));
    return Q8_OK;
}

q8_status q8_check_weights(const q8_graph *g, q8_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead) continue;
        if (is_op(n, "BatchNormalization")) {
            Q8_TRY(check_batchnorm(g, n, err));
            continue;
        }
        if (!is_op(n, "Conv") && !is_op(n, "ConvTranspose") && !is_op(n, "Gemm") &&
            !is_op(n, "MatMul"))
            continue;
        const q8_tensor *w = const_f32_in(g, n, 1), *b = const_f32_in(g, n, 2);
        if (w) Q8_TRY(check_finite(n, "weight", w, err));
        if (b) Q8_TRY(check_finite(n, "bias", b, err));
    }
    return Q8_OK;
}
