/* quantize --weight-rounding gptq|sums over a model (weight_round.h): which
 * layers, their input statistics (prune_fit.h's capture), and each row
 * rounded with its block factors (gptq) or window by window (sums). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prune_fit.h"
#include "weight_round.h"

#define Q8_WROUND_MEM ((int64_t)256 << 20) /* statistics held at once */
#define Q8_WROUND_PASSES 8                 /* capture passes over the samples, at most */

static bool is_op(const q8_node *n, const char *op) {
    return !n->dead && !*n->domain && strcmp(n->op_type, op) == 0;
}

static bool listed(const q8_quant_options *o, const char *name) {
    for (int i = 0; i < o->n_fp32_layers; i++)
        if (strcmp(o->fp32_layers[i], name) == 0) return true;
    return false;
}

/* A layer whose weight (input 1) the rewrite turns into per-row int8 as
 * the statistics see its rows: Conv, Gemm with alpha 1 (the rewrite scales
 * by alpha first), MatMul; constant FP32 weights; not kept FP32. */
static bool int8_layer(const q8_graph *g, const q8_node *n, const q8_quant_options *o) {
    if (!is_op(n, "Conv") && !is_op(n, "Gemm") && !is_op(n, "MatMul")) return false;
    if (is_op(n, "Gemm") && q8_attr_float(n, "alpha", 1.0f) != 1.0f) return false;
    const q8_tensor *w = n->n_inputs > 1 && n->inputs[1] >= 0 ? g->tensors[n->inputs[1]] : NULL;
    return w && w->data && w->dtype == Q8_F32 && w->ndim >= 2 && !listed(o, n->name);
}

/* Calibration rows per layer: Q8_WROUND_ROWS_PER_INPUT per input (a fit
 * on a few rows per input reproduces those rows, not the others: with the
 * prune re-fit's 1024 rows, ppocr_rec's CER was 1.98% against 1.52%;
 * docs/accuracy.md), within a budget of multiply-adds for H
 * (rows * k * block), and never fewer than the re-fit takes. */
#define Q8_WROUND_ROWS_PER_INPUT 256
#define Q8_WROUND_H_MACS ((int64_t)1 << 31)

static int64_t max_rows(const q8_pfit_layer *l) {
    int64_t r = Q8_WROUND_ROWS_PER_INPUT * l->k, budget = Q8_WROUND_H_MACS / (l->k * l->blk + 1);
    if (r > budget) r = budget;
    return r < Q8_PFIT_ROWS ? Q8_PFIT_ROWS : r;
}

/* The weight tensors to round: those every reader of which is such a
 * layer reading it as its weight (a weight shared with an FP32 layer, or
 * read as anything else, keeps its values). l[] gets one entry per tensor,
 * described by its first layer. Returns the count, -1 without memory. */
static int list_layers(const q8_graph *g, const q8_quant_options *o, q8_pfit_layer *l) {
    uint8_t *bad = calloc((size_t)g->n_tensors + 1, 1), *seen = calloc((size_t)g->n_tensors + 1, 1);
    if (!bad || !seen) {
        free(bad);
        free(seen);
        return -1;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->dead) continue;
        bool ok = int8_layer(g, n, o);
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0 && !(ok && k == 1)) bad[n->inputs[k]] = 1;
    }
    for (int i = 0; i < g->n_outputs; i++) bad[g->outputs[i]] = 1;
    int nt = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (!int8_layer(g, n, o) || bad[n->inputs[1]] || seen[n->inputs[1]]) continue;
        seen[n->inputs[1]] = 1;
        q8_pfit_describe(g, i, n->inputs[1], &l[nt]);
        l[nt].max_rows = max_rows(&l[nt]);
        if (l[nt].kind != Q8_PFIT_NONE) nt++;
    }
    free(bad);
    free(seen);
    return nt;
}

static int chunk_end(const q8_pfit_layer *l, int from, int n, int max_layers) {
    int64_t bytes = q8_pfit_h_bytes(&l[from]);
    int to = from + 1;
    while (to < n && to - from < max_layers && bytes + q8_pfit_h_bytes(&l[to]) <= Q8_WROUND_MEM)
        bytes += q8_pfit_h_bytes(&l[to++]);
    return to;
}

/* Factor every block of l's H, then round each row; returns the rows
 * rounded (the others stay for the rewrite's nearest rounding), -1
 * without memory. */
static int64_t round_layer(q8_graph *g, q8_pfit_layer *l) {
    float *w = g->tensors[l->wt]->data;
    float *row = malloc(sizeof(float) * (size_t)(2 * l->k));
    int8_t *qt = malloc((size_t)l->k);
    const float **u = malloc(sizeof *u * (size_t)l->nblk);
    int64_t done = 0;
    if (!row || !qt || !u) done = -1;
    for (int64_t grp = 0; done >= 0 && grp < l->groups; grp++)
        for (int64_t bi = 0; bi < l->nblk; bi++) {
            int64_t c0 = bi * l->blk, bs = l->k - c0 < l->blk ? l->k - c0 : l->blk;
            q8_pfit_factor(l->h + (grp * l->nblk + bi) * l->blk * l->blk, bs,
                           q8_pfit_damping(l, bs));
        }
    int64_t per_group = l->m / l->groups;
    for (int64_t r = 0; done >= 0 && r < l->m; r++) {
        int64_t grp = r / per_group;
        for (int64_t bi = 0; bi < l->nblk; bi++)
            u[bi] = l->h + (grp * l->nblk + bi) * l->blk * l->blk;
        q8_pfit_get_row(l, w, r, row);
        if (q8_wround_row(row, l->k, l->blk, u, row + l->k, qt)) {
            q8_pfit_put_row(l, w, r, row);
            done++;
        }
    }
    free(row);
    free(qt);
    free(u);
    return done;
}

static bool save(q8_wround_saved *sv, const q8_tensor *t);

/* Q8_WROUND_SUMS over the convolutions of l[0..nt) with windows of more
 * than one tap (a 1x1 convolution, Gemm or MatMul has nothing to keep:
 * nearest), each tensor saved first when saved is given. Returns the taps
 * moved, -1 without memory. */
static int64_t round_sums(q8_graph *g, const q8_pfit_layer *l, int nt, q8_wround_saved *saved) {
    int64_t moved = 0;
    for (int i = 0; i < nt && moved >= 0; i++) {
        const q8_tensor *t = g->tensors[l[i].wt];
        int64_t win = 1;
        for (int d = 2; d < t->ndim; d++) win *= t->dims[d];
        if (l[i].kind != Q8_PFIT_CONV || win < 2 || l[i].k % win) continue;
        float *tmp = malloc(sizeof(float) * (size_t)l[i].k);
        int8_t *qt = malloc((size_t)l[i].k);
        if (!tmp || !qt || (saved && !save(saved, t))) moved = -1;
        for (int64_t r = 0; moved >= 0 && r < l[i].m; r++) {
            int64_t n = q8_wround_row_sums((float *)t->data + r * l[i].k, l[i].k, win, tmp, qt);
            if (n > 0) moved += n;
        }
        free(tmp);
        free(qt);
    }
    return moved;
}

/* The values go to an unlinked temporary file when one can be made (they
 * are read back only for the few layers left FP32; in memory they were one
 * more copy of the convolutions' weights: ResNet-18's quantize peak 104 ->
 * 147 MB), else to memory. */
static bool save(q8_wround_saved *sv, const q8_tensor *t) {
    if (sv->n == sv->cap) {
        int cap = sv->cap ? 2 * sv->cap : 16;
        char **nm = realloc(sv->names, sizeof *nm * (size_t)cap);
        if (nm) sv->names = nm;
        float **d = realloc(sv->data, sizeof *d * (size_t)cap);
        if (d) sv->data = d;
        int64_t *ne = realloc(sv->numel, sizeof *ne * (size_t)cap);
        if (ne) sv->numel = ne;
        int64_t *off = realloc(sv->off, sizeof *off * (size_t)cap);
        if (off) sv->off = off;
        if (!nm || !d || !ne || !off) return false;
        sv->cap = cap;
    }
    int64_t n = q8_tensor_numel(t);
    char *name = q8_strdup(t->name);
    if (!name) return false;
    if (!sv->file && !sv->no_file && !(sv->file = tmpfile())) sv->no_file = true;
    float *copy = NULL;
    int64_t off = -1;
    if (sv->file && fseeko(sv->file, 0, SEEK_END) == 0 && (off = ftello(sv->file)) >= 0 &&
        fwrite(t->data, sizeof(float), (size_t)n, sv->file) == (size_t)n) {
        /* in the file */
    } else if ((copy = malloc(sizeof(float) * (size_t)(n + 1)))) {
        memcpy(copy, t->data, sizeof(float) * (size_t)n);
        off = -1;
    } else {
        free(name);
        return false;
    }
    sv->names[sv->n] = name;
    sv->data[sv->n] = copy;
    sv->off[sv->n] = off;
    sv->numel[sv->n++] = n;
    return true;
}

void q8_wround_saved_free(q8_wround_saved *sv) {
    for (int i = 0; i < sv->n; i++) {
        free(sv->names[i]);
        free(sv->data[i]);
    }
    free(sv->names);
    free(sv->data);
    free(sv->numel);
    free(sv->off);
    if (sv->file) fclose(sv->file);
    memset(sv, 0, sizeof *sv);
}

static int restore(q8_graph *g, const q8_wround_saved *sv, bool only_fp32, bool own) {
    int restored = 0;
    for (int i = 0; i < sv->n; i++) {
        int t = q8_graph_find(g, sv->names[i]);
        q8_tensor *w = t >= 0 ? g->tensors[t] : NULL;
        if (!w || !w->data || w->dtype != Q8_F32 || q8_tensor_numel(w) != sv->numel[i]) continue;
        bool fp32_reader = !only_fp32;
        for (int k = 0; k < g->n_nodes && !fp32_reader; k++) {
            const q8_node *n = g->nodes[k];
            for (int j = 0; !n->dead && !*n->domain && j < n->n_inputs; j++)
                fp32_reader = fp32_reader || n->inputs[j] == t;
        }
        if (!fp32_reader) continue;
        /* a clone's shared constant: data of its own, the source untouched */
        if (own && !w->owns_data && q8_tensor_alloc_data(w, NULL) != Q8_OK) return -1;
        if (sv->data[i]) memcpy(w->data, sv->data[i], sizeof(float) * (size_t)sv->numel[i]);
        else if (fseeko(sv->file, sv->off[i], SEEK_SET) != 0 ||
                 fread(w->data, sizeof(float), (size_t)sv->numel[i], sv->file) !=
                     (size_t)sv->numel[i])
            return -1;
        restored++;
    }
    return restored;
}

int q8_wround_restore_fp32(q8_graph *g, const q8_wround_saved *sv) {
    return restore(g, sv, true, false);
}

int q8_wround_restore_fp32_owned(q8_graph *g, const q8_wround_saved *sv) {
    return restore(g, sv, true, true);
}

int q8_wround_restore_all(q8_graph *g, const q8_wround_saved *sv) {
    return restore(g, sv, false, false);
}

q8_status q8_round_weights(q8_graph *g, const q8_quant_options *o, const q8_sample_set *smp,
                           int n_threads, q8_meta *meta, q8_wround_saved *saved,
                           q8_error *err) {
    if (o->weight_rounding == Q8_WROUND_NEAREST) return Q8_OK;
    /* auto is q8_quantize_model's choice (wround_choose.h); here, sums */
    if (o->weight_rounding == Q8_WROUND_SUMS || o->weight_rounding == Q8_WROUND_AUTO) {
        q8_pfit_layer *l = calloc((size_t)g->n_nodes + 1, sizeof *l);
        int nt = l ? list_layers(g, o, l) : -1;
        int64_t moved = nt < 0 ? -1 : round_sums(g, l, nt, saved);
        free(l);
        if (moved < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory rounding weights");
        q8_status s = q8_meta_set_str(meta, "quant.weight_rounding", "sums", err);
        if (s == Q8_OK) s = q8_meta_set_int(meta, "quant.weight_sums_moved", moved, err);
        return s;
    }
    if (!smp) return q8_fail(err, Q8_ERR_ARG, "--weight-rounding gptq needs calibration samples");
    q8_pfit_layer *l = calloc((size_t)g->n_nodes + 1, sizeof *l);
    int nt = l ? list_layers(g, o, l) : -1;
    if (nt < 0) {
        free(l);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory rounding weights");
    }
    q8_status s = Q8_OK;
    int per_pass = (nt + Q8_WROUND_PASSES - 1) / Q8_WROUND_PASSES;
    for (int from = 0, to; from < nt && s == Q8_OK; from = to) {
        to = chunk_end(l, from, nt, per_pass);
        s = q8_pfit_capture(g, l + from, to - from, smp, n_threads, Q8_PFIT_H, err);
        if (s != Q8_OK) q8_fail_prefix(err, "--weight-rounding gptq");
        for (int i = from; i < to && s == Q8_OK; i++) {
            /* fewer calibration rows than inputs (a Gemm fed one row a
             * sample: a wake-word head's 1536 inputs on 24 rows) say
             * nothing of the other directions: GPTQ fitted to them moved
             * its held-out score by 0.09 where nearest moves it 0.02; such
             * a layer keeps nearest rounding */
            if (!l[i].h || l[i].n_rows <= 0 || !q8_pfit_fit_trusted(&l[i])) continue;
            if ((saved && !save(saved, g->tensors[l[i].wt])) || round_layer(g, &l[i]) < 0)
                s = q8_fail(err, Q8_ERR_NOMEM, "out of memory rounding weights");
        }
        for (int i = from; i < to; i++) {
            free(l[i].h);
            l[i].h = NULL;
        }
    }
    free(l);
    if (s == Q8_OK) s = q8_meta_set_str(meta, "quant.weight_rounding", "gptq", err);
    return s;
}

double q8_wround_gptq_macs(const q8_graph *g, const q8_quant_options *o) {
    q8_pfit_layer *l = calloc((size_t)g->n_nodes + 1, sizeof *l);
    int nt = l ? list_layers(g, o, l) : -1;
    double macs = nt < 0 ? INFINITY : 0;
    for (int i = 0; i < nt; i++)
        macs += (double)(l[i].max_rows + l[i].m / l[i].groups + l[i].blk) * (double)l[i].k *
                (double)l[i].blk * (double)l[i].groups;
    free(l);
    return macs;
}

q8_status q8_round_weights_copy(q8_graph *dst, const q8_graph *src, const q8_quant_options *o,
                                q8_error *err) {
    if (o->weight_rounding == Q8_WROUND_NEAREST) return Q8_OK;
    q8_pfit_layer *l = calloc((size_t)dst->n_nodes + 1, sizeof *l);
    int nt = l ? list_layers(dst, o, l) : -1;
    q8_status s = nt < 0 ? q8_fail(err, Q8_ERR_NOMEM, "out of memory") : Q8_OK;
    for (int i = 0; i < nt && s == Q8_OK; i++) {
        q8_tensor *d = dst->tensors[l[i].wt];
        int k = q8_graph_find(src, d->name);
        const q8_tensor *t = k >= 0 ? src->tensors[k] : NULL;
        bool same = t && t->data && t->dtype == Q8_F32 && q8_tensor_numel(t) == q8_tensor_numel(d);
        /* sums is the default and needs nothing but the weight: one that
         * does not carry over keeps nearest rounding */
        if (!same && o->weight_rounding != Q8_WROUND_GPTQ) continue;
        if (!same)
            s = q8_fail(err, Q8_ERR_UNSUPPORTED,
                        "--weight-rounding gptq: weight '%s' differs between the calibration "
                        "shapes and --input-shape", d->name);
        else memcpy(d->data, t->data, sizeof(float) * (size_t)q8_tensor_numel(d));
    }
    free(l);
    return s;
}
