/* The per-sample spread of an activation's range (calib_span.h). */
#include "calib_span.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void q8_span_add(q8_hist *h, float sample_amax) {
    h->samples++;
    if (!(sample_amax > 0)) { /* all zero (or nothing finite): INT8 is exact */
        h->zero_samples++;
        return;
    }
    int e;
    frexpf(sample_amax, &e); /* sample_amax in [2^(e-1), 2^e) */
    int b = e - 1 - Q8_SPAN_LOG2_MIN;
    if (!isfinite(sample_amax) || b >= Q8_SPAN_BINS) b = Q8_SPAN_BINS - 1;
    if (b < 0) b = 0;
    h->span[b]++;
}

double q8_span_quiet_fraction(const q8_hist *h, double threshold, double ratio) {
    if (!h->samples || !(threshold > 0)) return 0;
    double below = threshold / ratio;
    uint32_t quiet = 0;
    /* bin b's samples are below 2^(b + 1 + Q8_SPAN_LOG2_MIN) */
    for (int b = 0; b < Q8_SPAN_BINS - 1; b++)
        if (ldexp(1.0, b + 1 + Q8_SPAN_LOG2_MIN) <= below) quiet += h->span[b];
    return (double)quiet / h->samples;
}

bool q8_span_is_wide(const q8_hist *h, double threshold) {
    return h->samples >= Q8_WIDE_MIN_SAMPLES &&
           h->seen >= (uint64_t)Q8_WIDE_MIN_VALUES * h->samples &&
           q8_span_quiet_fraction(h, threshold, Q8_WIDE_RATIO) >= Q8_WIDE_MIN_FRACTION;
}

static bool is_wide(const q8_calibration *cal, int t) {
    return t >= 0 && t < cal->n_tensors && cal->wide[t] != 0;
}

/* Ops whose float outputs carry an input's amplitude over (up to a
 * constant offset). */
static bool carries(const q8_graph *g, const q8_node *n) {
    static const char *const ops[] = {
        "Conv", "ConvTranspose", "Gemm", "MatMul", "Relu", "LeakyRelu", "PRelu", "Clip",
        "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Pad", "Slice",
        "Concat", "Split", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
        "Identity", "Resize", "Expand", "Tile", "Gather", "Pow", "Sqrt", "Abs", "Neg", "Add",
        "Sub", "Mul", "BatchNormalization", "ReduceMean", "ReduceSum", "ReduceMax",
        "ReduceMin"};
    if (*n->domain) return false;
    /* x / c scales; x / y may normalize (x / |x|) */
    if (!strcmp(n->op_type, "Div")) return n->n_inputs == 2 && q8_in(g, n, 1)->data;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strcmp(n->op_type, ops[k])) return true;
    return false;
}

int q8_span_propagate(const q8_graph *g, q8_calibration *cal) {
    int marked = 0;
    for (int i = 0; cal->wide && i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        bool from_wide = false;
        for (int k = 0; k < n->n_inputs; k++) from_wide |= is_wide(cal, n->inputs[k]);
        if (!from_wide || !carries(g, n)) continue;
        for (int k = 0; k < n->n_outputs; k++) {
            int t = n->outputs[k];
            if (t < 0 || t >= cal->n_tensors || !cal->hist[t] || is_wide(cal, t)) continue;
            cal->wide[t] = -1;
            cal->threshold[t] = 0;
            marked++;
        }
    }
    return marked;
}

q8_status q8_span_note(const q8_graph *g, const q8_calibration *cal, q8_meta *meta,
                       q8_error *err) {
    if (!cal->wide || !meta) return Q8_OK;
    int n = 0;
    char key[600];
    for (int t = 0; t < g->n_tensors && t < cal->n_tensors; t++) {
        if (!is_wide(cal, t)) continue;
        char what[600];
        int p = g->tensors[t]->producer;
        if (cal->wide[t] > 0)
            snprintf(what, sizeof what, "measured: %.0f%% of the samples below 1/%g of the range",
                     100.0 * cal->wide[t], Q8_WIDE_RATIO);
        else
            snprintf(what, sizeof what, "inherited from node '%s'",
                     p >= 0 ? g->nodes[p]->name : "?");
        snprintf(key, sizeof key, "tensor.%s.wide_range", g->tensors[t]->name);
        Q8_TRY(q8_meta_set_str(meta, key, what, err));
        n++;
    }
    static const char *const layers[] = {"Conv", "ConvTranspose", "Gemm", "MatMul"};
    for (int i = 0; n && i < g->n_nodes; i++) {
        const q8_node *d = g->nodes[i];
        bool layer = false;
        for (size_t k = 0; !*d->domain && k < sizeof layers / sizeof layers[0]; k++)
            layer |= strcmp(d->op_type, layers[k]) == 0;
        if (!layer || d->n_inputs < 1 || d->n_outputs < 1) continue;
        if (!is_wide(cal, d->inputs[0]) && !is_wide(cal, d->outputs[0]) &&
            !(d->n_inputs > 1 && is_wide(cal, d->inputs[1])))
            continue;
        snprintf(key, sizeof key, "layer.%s.fp32_wide_range", d->name);
        Q8_TRY(q8_meta_set_int(meta, key, 1, err));
    }
    return n ? q8_meta_set_int(meta, "quant.wide_range_tensors", n, err) : Q8_OK;
}
