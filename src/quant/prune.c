/* Magnitude pruning of the weights of GEMM-like nodes, before calibration
 * and quantization (so activation ranges are measured on the pruned model).
 *   unstructured: the `fraction` smallest |w| of each layer (or of all layers
 *                 together with global scope) become zero;
 *   2:4:          of every 4 consecutive weights along the input-channel
 *                 axis, the 2 largest stay (the pattern sparse tensor cores
 *                 run). */
#include <math.h>
#include <string.h>

#include "quantize.h"

static bool is_op(const q8_node *n, const char *op) {
    return !n->dead && !*n->domain && strcmp(n->op_type, op) == 0;
}

static bool skipped(const q8_prune_options *o, const char *name) {
    for (int i = 0; i < o->n_skip; i++)
        if (strcmp(o->skip[i], name) == 0) return true;
    return false;
}

/* Weight input index of a prunable node, or -1. */
static int weight_input(const q8_graph *g, const q8_node *n) {
    int wi = -1;
    if (is_op(n, "Conv") || is_op(n, "ConvTranspose") || is_op(n, "Gemm")) wi = 1;
    else if (is_op(n, "MatMul")) wi = 1;
    const q8_tensor *w = wi >= 0 ? q8_in(g, n, wi) : NULL;
    if (!w || !w->data || w->dtype != Q8_F32 || w->ndim < 2) return -1;
    return wi;
}

/* Geometry of the 2:4 groups: element i of the weight belongs to the group
 * formed along the input-channel axis. in_stride is the distance between
 * consecutive input channels; n_in the number of input channels; outer and
 * inner count the other positions. */
typedef struct ic_axis {
    int64_t outer, n_in, inner;
} ic_axis;

static ic_axis input_axis(const q8_graph *g, const q8_node *n, const q8_tensor *w) {
    ic_axis a;
    if (is_op(n, "Conv")) { /* [M, C/g, k...]: axis 1 */
        a.outer = w->dims[0];
        a.n_in = w->dims[1];
        a.inner = q8_tensor_numel(w) / (a.outer * a.n_in);
    } else if (is_op(n, "ConvTranspose")) { /* [C, M/g, k...]: axis 0 */
        a.outer = 1;
        a.n_in = w->dims[0];
        a.inner = q8_tensor_numel(w) / a.n_in;
    } else if (is_op(n, "Gemm") && q8_attr_int(n, "transB", 0)) { /* [N, K]: axis 1 */
        a.outer = w->dims[0];
        a.n_in = w->dims[1];
        a.inner = 1;
    } else { /* Gemm [K, N], MatMul [.., K, N]: axis -2 */
        a.n_in = w->dims[w->ndim - 2];
        a.inner = w->dims[w->ndim - 1];
        a.outer = q8_tensor_numel(w) / (a.n_in * a.inner);
    }
    return a;
}

static void prune_2_4(float *w, ic_axis a) {
    for (int64_t o = 0; o < a.outer; o++)
        for (int64_t i = 0; i < a.inner; i++)
            for (int64_t c0 = 0; c0 < a.n_in; c0 += 4) {
                int64_t len = a.n_in - c0 < 4 ? a.n_in - c0 : 4;
                if (len <= 2) continue;
                float *e[4];
                for (int64_t k = 0; k < len; k++) e[k] = &w[(o * a.n_in + c0 + k) * a.inner + i];
                /* keep the two largest |w|: zero the others (ties: lower index kept) */
                int keep0 = 0, keep1 = -1;
                for (int k = 1; k < len; k++)
                    if (fabsf(*e[k]) > fabsf(*e[keep0])) keep0 = k;
                for (int k = 0; k < len; k++)
                    if (k != keep0 && (keep1 < 0 || fabsf(*e[k]) > fabsf(*e[keep1]))) keep1 = k;
                for (int k = 0; k < len; k++)
                    if (k != keep0 && k != keep1) *e[k] = 0.0f;
            }
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Zero exactly `count` weights: those below the count-th smallest |w|,
 * then ties in index order. */
static void prune_smallest(float *w, int64_t n, int64_t count, float thr) {
    int64_t zeroed = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabsf(w[i]) < thr) {
            w[i] = 0.0f;
            zeroed++;
        }
    for (int64_t i = 0; i < n && zeroed < count; i++)
        if (fabsf(w[i]) == thr && w[i] != 0.0f) {
            w[i] = 0.0f;
            zeroed++;
        }
}

/* The k-th smallest (0-based) of |v| over all listed tensors. */
static q8_status kth_magnitude(q8_graph *g, const int *tensors, int nt, int64_t k, float *out,
                               q8_error *err) {
    int64_t total = 0;
    for (int i = 0; i < nt; i++) total += q8_tensor_numel(g->tensors[tensors[i]]);
    float *a = malloc(sizeof(float) * (size_t)(total ? total : 1));
    if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
    int64_t at = 0;
    for (int i = 0; i < nt; i++) {
        const q8_tensor *t = g->tensors[tensors[i]];
        const float *d = t->data;
        for (int64_t j = 0; j < q8_tensor_numel(t); j++) a[at++] = fabsf(d[j]);
    }
    qsort(a, (size_t)total, sizeof(float), cmp_float);
    *out = a[k < total ? k : total - 1];
    free(a);
    return Q8_OK;
}

static double zero_fraction(const q8_tensor *t) {
    int64_t n = q8_tensor_numel(t), z = 0;
    const float *d = t->data;
    for (int64_t i = 0; i < n; i++) z += d[i] == 0.0f;
    return n ? (double)z / (double)n : 0;
}

q8_status q8_prune(q8_graph *g, const q8_prune_options *o, q8_meta *meta, q8_error *err) {
    if (o->mode == Q8_PRUNE_NONE) return Q8_OK;
    if (o->mode == Q8_PRUNE_UNSTRUCTURED && !(o->fraction >= 0 && o->fraction < 1))
        return q8_fail(err, Q8_ERR_ARG, "--prune %g: the fraction must be in [0, 1)", o->fraction);
    int *tensors = malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    int *nodes = malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    bool *seen = calloc((size_t)g->n_tensors + 1, sizeof(bool));
    if (!tensors || !nodes || !seen) {
        free(tensors);
        free(nodes);
        free(seen);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    int nt = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        int wi = weight_input(g, n);
        if (wi < 0 || skipped(o, n->name) || seen[n->inputs[wi]]) continue;
        seen[n->inputs[wi]] = true;
        nodes[nt] = i;
        tensors[nt++] = n->inputs[wi];
    }
    q8_status s = Q8_OK;
    float global_thr = 0;
    int64_t global_k = 0;
    if (o->mode == Q8_PRUNE_UNSTRUCTURED && o->global && nt) {
        int64_t total = 0;
        for (int i = 0; i < nt; i++) total += q8_tensor_numel(g->tensors[tensors[i]]);
        global_k = (int64_t)floor(o->fraction * (double)total);
        if (global_k > 0) s = kth_magnitude(g, tensors, nt, global_k - 1, &global_thr, err);
    }
    for (int i = 0; i < nt && s == Q8_OK; i++) {
        q8_tensor *w = g->tensors[tensors[i]];
        const q8_node *n = g->nodes[nodes[i]];
        int64_t numel = q8_tensor_numel(w);
        if (o->mode == Q8_PRUNE_2_4) {
            prune_2_4(w->data, input_axis(g, n, w));
        } else if (o->global) {
            /* below the global threshold; ties at it are zeroed as well */
            if (global_k > 0) prune_smallest(w->data, numel, numel, global_thr);
        } else {
            int64_t k = (int64_t)floor(o->fraction * (double)numel);
            float thr = 0;
            if (k > 0 && (s = kth_magnitude(g, &tensors[i], 1, k - 1, &thr, err)) == Q8_OK)
                prune_smallest(w->data, numel, k, thr);
        }
    }
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        const q8_node *n = g->nodes[i];
        int wi = weight_input(g, n);
        if (wi < 0) continue;
        char key[512];
        snprintf(key, sizeof key, "layer.%s.sparsity", n->name);
        s = q8_meta_set_float(meta, key, zero_fraction(g->tensors[n->inputs[wi]]), err);
    }
    free(tensors);
    free(nodes);
    free(seen);
    return s;
}
