/* Magnitude pruning of the weights of GEMM-like nodes, before calibration
 * and quantization (so activation ranges are measured on the pruned model).
 *   unstructured: the `fraction` smallest |w| of each layer (or of all layers
 *                 together with global scope) become zero; with sensitivity,
 *                 that share of all prunable weights is spread over the
 *                 layers by their measured output error (prune_fit.h);
 *   2:4:          of every 4 consecutive weights along the input-channel
 *                 axis, the 2 largest stay (the pattern sparse tensor cores
 *                 run). */
#include <math.h>
#include <string.h>

#include "prune_fit.h"
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

static int64_t count_zeros(const q8_tensor *t) {
    int64_t n = q8_tensor_numel(t), z = 0;
    const float *d = t->data;
    for (int64_t i = 0; i < n; i++) z += d[i] == 0.0f;
    return z;
}

static double zero_fraction(const q8_tensor *t) {
    int64_t n = q8_tensor_numel(t);
    return n ? (double)count_zeros(t) / (double)n : 0;
}

/* Whether layer i of nt stays dense as a protected end (scope sensitivity,
 * --prune-protect ends). */
static bool kept_dense_end(const q8_prune_options *o, int i, int nt) {
    return o->mode == Q8_PRUNE_UNSTRUCTURED && o->sensitivity && o->protect_ends &&
           (i == 0 || i == nt - 1);
}

/* The magnitude masks of scope layer / global and of 2:4, applied in place. */
static q8_status prune_magnitude(q8_graph *g, const q8_prune_options *o, const int *nodes,
                                 const int *tensors, int nt, q8_error *err) {
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
    return s;
}

/* Layers by graph order, in chunks whose statistics fit Q8_PFIT_MEM bytes. */
#define Q8_PFIT_MEM ((int64_t)256 << 20)
#ifndef Q8_PFIT_PASSES
#define Q8_PFIT_PASSES 8
#endif
#define Q8_PFIT_SEQ_PASSES 64   /* with a dense target: up to one layer per pass */

static int chunk_end(const q8_pfit_layer *l, int from, int n, int max_layers) {
    int64_t bytes = q8_pfit_h_bytes(&l[from]);
    int to = from + 1;
    while (to < n && to - from < max_layers && bytes + q8_pfit_h_bytes(&l[to]) <= Q8_PFIT_MEM)
        bytes += q8_pfit_h_bytes(&l[to++]);
    return to;
}

static void free_stats(q8_pfit_layer *l, int from, int to) {
    for (int i = from; i < to; i++) {
        free(l[i].h);
        free(l[i].c);
        q8_pfit_drop_rows(&l[i]);
        l[i].h = l[i].c = NULL;
    }
}

/* Statistics for l[from..to); a layer no sample reached is measured
 * without them (H = identity) rather than as free to prune. */
static q8_status capture(const q8_graph *g, q8_pfit_layer *l, int from, int to,
                         const q8_sample_set *smp, int n_threads, q8_error *err) {
    q8_status s = q8_pfit_capture(g, l + from, to - from, smp, n_threads, Q8_PFIT_H, err);
    for (int i = from; i < to; i++)
        if (l[i].h && l[i].n_rows == 0) {
            free(l[i].h);
            l[i].h = NULL;
        }
    return s;
}

static void swap_weights(q8_graph *g, const q8_pfit_layer *l, float **dense, int n) {
    for (int i = 0; i < n; i++) {
        if (!dense[i]) continue;
        float *t = g->tensors[l[i].wt]->data;
        g->tensors[l[i].wt]->data = dense[i];
        dense[i] = t;
    }
}

/* Statistics for a re-fit to the dense model's outputs: the rows of
 * l[from] in the dense model (the pruned layers before it given their
 * dense weights back for one pass), then H of l[from..to) and l[from]'s
 * cross term in the model pruned so far. Only the chunk's first layer
 * aims at the dense output: a later one would make up again for the error
 * the first already took back. Without anything pruned yet both models are
 * one. */
static q8_status capture_dense_target(q8_graph *g, q8_pfit_layer *l, float **dense, int from,
                                      int to, const q8_sample_set *smp, int n_threads,
                                      q8_error *err) {
    bool upstream = false;
    for (int i = 0; i < from; i++) upstream = upstream || dense[i];
    if (!upstream) return capture(g, l, from, to, smp, n_threads, err);
    swap_weights(g, l, dense, from);
    q8_status s = q8_pfit_capture(g, l + from, 1, smp, n_threads, Q8_PFIT_ROWS_KEEP, err);
    swap_weights(g, l, dense, from);
    if (s == Q8_OK)
        s = q8_pfit_capture(g, l + from, to - from, smp, n_threads, Q8_PFIT_H_CROSS, err);
    for (int i = from; i < to; i++) {
        q8_pfit_drop_rows(&l[i]);
        if (l[i].h && l[i].n_rows == 0) {
            free(l[i].h);
            free(l[i].c);
            l[i].h = l[i].c = NULL;
        }
    }
    return s;
}

/* Sensitivity allocation and / or re-fit. Masks come from the sensitivity
 * counts (the smallest |w| of each row) or from the magnitude modes. */
static q8_status prune_fitted(q8_graph *g, const q8_prune_options *o, const q8_sample_set *smp,
                              int n_threads, const int *nodes, const int *tensors, int nt,
                              q8_meta *meta, q8_error *err) {
    bool alloc = o->mode == Q8_PRUNE_UNSTRUCTURED && o->sensitivity;
    q8_pfit_layer *l = calloc((size_t)nt + 1, sizeof *l);
    uint8_t **masks = calloc((size_t)nt + 1, sizeof *masks);
    if (!l || !masks) {
        free(l);
        free(masks);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
    }
    q8_status s = Q8_OK;
    for (int i = 0; i < nt; i++) q8_pfit_describe(g, nodes[i], tensors[i], &l[i]);
    if (!alloc) {
        /* the magnitude modes' masks, then the dense weights back for the re-fit */
        float **orig = calloc((size_t)nt + 1, sizeof *orig);
        if (!orig) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
        for (int i = 0; i < nt && s == Q8_OK; i++) {
            size_t bytes = sizeof(float) * (size_t)l[i].numel;
            if (!(orig[i] = malloc(bytes)) || !(masks[i] = malloc((size_t)l[i].numel + 1)))
                s = q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
            else memcpy(orig[i], g->tensors[tensors[i]]->data, bytes);
        }
        if (s == Q8_OK) s = prune_magnitude(g, o, nodes, tensors, nt, err);
        for (int i = 0; i < nt && s == Q8_OK; i++) {
            float *w = g->tensors[tensors[i]]->data;
            for (int64_t j = 0; j < l[i].numel; j++) masks[i][j] = w[j] == 0.0f;
            memcpy(w, orig[i], sizeof(float) * (size_t)l[i].numel);
        }
        for (int i = 0; orig && i < nt; i++) free(orig[i]);
        free(orig);
    } else {
        int64_t total = 0;
        for (int i = 0; i < nt; i++) {
            l[i].eligible = !kept_dense_end(o, i, nt);
            if (l[i].eligible) total += l[i].numel;
        }
        q8_pfit_probe probe = {0};
        if (o->output_aware)
            s = q8_pfit_probe_open(g, l, nt, smp, o->fraction, n_threads, &probe, err);
        for (int from = 0, to; from < nt && s == Q8_OK; from = to) {
            to = chunk_end(l, from, nt, nt);
            s = capture(g, l, from, to, smp, n_threads, err);
            for (int i = from; i < to && s == Q8_OK; i++) {
                if (!l[i].eligible) continue;
                q8_pfit_curve(g, &l[i], o->refit);
                s = q8_pfit_probe_layer(g, &l[i], o->refit, &probe, err);
            }
            free_stats(l, from, to);
        }
        if (s == Q8_OK && o->output_aware)
            s = q8_meta_set_int(meta, "prune.probe_samples", probe.n_samples, err);
        if (s == Q8_OK && o->output_aware)
            s = q8_meta_set_int(meta, "prune.probed_layers", probe.n_probed, err);
        q8_pfit_probe_close(&probe);
        if (s == Q8_OK) q8_pfit_allocate(l, nt, (int64_t)floor(o->fraction * (double)total));
    }
    /* in graph order, in up to Q8_PFIT_PASSES chunks: a chunk's statistics
     * come from the model with the chunks before it already pruned, so its
     * re-fit also makes up for their error */
    bool dense_target = o->refit && o->refit_dense;
    int passes = dense_target ? Q8_PFIT_SEQ_PASSES : Q8_PFIT_PASSES;
    int per_pass = (nt + passes - 1) / passes;
    float **dense = calloc((size_t)nt + 1, sizeof *dense);
    if (!dense && s == Q8_OK) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
    for (int from = 0, to; from < nt && s == Q8_OK; from = to) {
        to = o->refit ? chunk_end(l, from, nt, per_pass) : nt;
        bool have = true;
        for (int i = from; i < to; i++) have = have && (l[i].h || l[i].kind == Q8_PFIT_NONE);
        if (o->refit && !have)
            s = dense_target ? capture_dense_target(g, l, dense, from, to, smp, n_threads, err)
                             : capture(g, l, from, to, smp, n_threads, err);
        for (int i = from; i < to && s == Q8_OK; i++) {
            if (!masks[i] && l[i].count == 0) continue;
            size_t bytes = sizeof(float) * (size_t)l[i].numel;
            if (dense_target && !(dense[i] = malloc(bytes)))
                s = q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
            else if (dense_target) memcpy(dense[i], g->tensors[l[i].wt]->data, bytes);
            if (s == Q8_OK) s = q8_pfit_apply(g, &l[i], masks[i], o->refit, err);
        }
        free_stats(l, from, to);
    }
    for (int i = 0; dense && i < nt; i++) free(dense[i]);
    free(dense);
    free_stats(l, 0, nt);
    for (int i = 0; i < nt; i++) free(masks[i]);
    free(masks);
    free(l);
    return s;
}

static q8_status record_sparsity(const q8_graph *g, q8_meta *meta, q8_error *err) {
    q8_status s = Q8_OK;
    for (int i = 0; i < g->n_nodes && s == Q8_OK; i++) {
        const q8_node *n = g->nodes[i];
        int wi = weight_input(g, n);
        if (wi < 0) continue;
        char key[512];
        snprintf(key, sizeof key, "layer.%s.sparsity", n->name);
        s = q8_meta_set_float(meta, key, zero_fraction(g->tensors[n->inputs[wi]]), err);
    }
    return s;
}

/* The prunable layers in graph order: node indices and weight tensors
 * (shared weights once). Caller frees both. */
static q8_status list_layers(const q8_graph *g, const q8_prune_options *o, int **nodes_out,
                             int **tensors_out, int *nt_out, q8_error *err) {
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
    free(seen);
    *nodes_out = nodes;
    *tensors_out = tensors;
    *nt_out = nt;
    return Q8_OK;
}

q8_status q8_prune(q8_graph *g, const q8_prune_options *o, const q8_sample_set *samples,
                   int n_threads, q8_meta *meta, q8_error *err) {
    if (o->mode == Q8_PRUNE_NONE) return Q8_OK;
    if (o->mode == Q8_PRUNE_UNSTRUCTURED && !(o->fraction >= 0 && o->fraction < 1))
        return q8_fail(err, Q8_ERR_ARG, "--prune %g: the fraction must be in [0, 1)", o->fraction);
    int *nodes, *tensors, nt;
    Q8_TRY(list_layers(g, o, &nodes, &tensors, &nt, err));
    bool fitted = o->refit || (o->mode == Q8_PRUNE_UNSTRUCTURED && o->sensitivity);
    q8_status s = fitted && !samples
                      ? q8_fail(err, Q8_ERR_ARG, "pruning with re-fit or sensitivity needs "
                                "calibration samples")
                  : fitted ? prune_fitted(g, o, samples, n_threads, nodes, tensors, nt, meta, err)
                           : prune_magnitude(g, o, nodes, tensors, nt, err);
    free(nodes);
    free(tensors);
    if (s == Q8_OK) s = record_sparsity(g, meta, err);
    return s;
}

q8_status q8_prune_copy(q8_graph *dst, const q8_graph *src, const q8_prune_options *o,
                        q8_meta *meta, q8_error *err) {
    if (o->mode == Q8_PRUNE_NONE) return Q8_OK;
    int *nodes, *tensors, nt;
    Q8_TRY(list_layers(dst, o, &nodes, &tensors, &nt, err));
    q8_status s = Q8_OK;
    for (int i = 0; i < nt && s == Q8_OK; i++) {
        q8_tensor *d = dst->tensors[tensors[i]];
        int k = q8_graph_find(src, d->name);
        const q8_tensor *t = k >= 0 ? src->tensors[k] : NULL;
        if (!t || !t->data || t->dtype != Q8_F32 || q8_tensor_numel(t) != q8_tensor_numel(d))
            s = q8_fail(err, Q8_ERR_UNSUPPORTED,
                        "pruning: weight '%s' differs between the calibration shapes and "
                        "--input-shape", d->name);
        else memcpy(d->data, t->data, sizeof(float) * (size_t)q8_tensor_numel(d));
    }
    free(nodes);
    free(tensors);
    if (s == Q8_OK) s = record_sparsity(dst, meta, err);
    return s;
}

q8_status q8_prune_count(const q8_graph *g, const q8_prune_options *o, q8_prune_counts *c,
                         q8_error *err) {
    *c = (q8_prune_counts){0};
    if (o->mode == Q8_PRUNE_NONE) return Q8_OK;
    int *nodes, *tensors, nt;
    Q8_TRY(list_layers(g, o, &nodes, &tensors, &nt, err));
    c->layers = nt;
    for (int i = 0; i < nt; i++) {
        const q8_tensor *t = g->tensors[tensors[i]];
        int64_t n = q8_tensor_numel(t);
        c->weights += n;
        c->zeros += count_zeros(t);
        if (kept_dense_end(o, i, nt)) c->protected_weights += n;
    }
    free(nodes);
    free(tensors);
    return Q8_OK;
}
