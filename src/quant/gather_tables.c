/* Gather tables (token and position embeddings) stored in INT8 (quantize.h,
 * q8_quantize_gather_tables).
 *
 * An embedding lookup Gather(table, ids) with a float constant table is
 * often the largest tensor of a language model, and the rewrite leaves it
 * FP32 (Gather is not a layer it computes in int8). Here the table becomes
 * int8 with one scale per row (per entry of the gathered axis), symmetric,
 * and the lookup becomes, with standard ops only,
 *
 *     Gather(table_q8, ids) -> Cast(float) -> Mul -> the old output
 *     Gather(row_scales, ids) --------------^
 *
 * so that only the gathered rows are widened at run time. Per row, not per
 * column: rows of a trained embedding differ widely in norm (rare words are
 * short vectors), and a column's scale is set by the longest rows. On real
 * GloVe vectors (341,479 x 100, docs/accuracy.md) per-row scales give rows
 * a median SQNR of 44.2 dB (1st percentile 40.8), per-column ones 35.6
 * (32.1), and the shortest rows 0 dB. The table stays FP32 when its 1st
 * percentile row is under Q8_TABLE_MIN_ROW_SQNR_DB. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"

static bool gather_of_table(const q8_graph *g, const q8_node *n) {
    if (*n->domain || strcmp(n->op_type, "Gather") != 0 || n->n_inputs != 2) return false;
    const q8_tensor *x = g->tensors[n->inputs[0]], *ids = g->tensors[n->inputs[1]];
    const q8_tensor *y = g->tensors[n->outputs[0]];
    /* rows are the slices along axis 0 of a rank >= 2 table */
    return x->data && x->dtype == Q8_F32 && x->ndim >= 2 && !ids->data &&
           q8_attr_int(n, "axis", 0) == 0 && q8_tensor_numel(x) >= Q8_TABLE_MIN_ELEMS &&
           y->dtype == Q8_F32;
}

/* Is every reader of tensor t a Gather of a table (as its data), none of
 * them kept FP32 by --fp32-layers, and t no graph output? */
static bool only_gathered(const q8_graph *g, int t, const q8_quant_options *o) {
    if (q8_graph_is_output(g, t)) return false;
    int readers = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            if (n->inputs[k] != t) continue;
            if (k != 0 || !gather_of_table(g, n)) return false;
            for (int j = 0; o && j < o->n_fp32_layers; j++)
                if (strcmp(o->fp32_layers[j], n->name) == 0) return false;
            readers++;
        }
    }
    return readers > 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double q8_quantize_table_rows(const float *w, int64_t rows, int64_t cols, int8_t *q,
                              float *scales) {
    double *db = malloc(sizeof(double) * (size_t)rows);
    if (!db) return NAN;
    for (int64_t r = 0; r < rows; r++) {
        const float *wr = w + r * cols;
        q8_quantize_weights(wr, 1, cols, q + r * cols, scales + r);
        double sig = 0, noise = 0;
        for (int64_t c = 0; c < cols; c++) {
            double e = (double)wr[c] - (double)q[r * cols + c] * scales[r];
            sig += (double)wr[c] * wr[c];
            noise += e * e;
        }
        db[r] = noise > 0 ? 10 * log10(sig / noise) : 999;
    }
    qsort(db, (size_t)rows, sizeof *db, cmp_double);
    double p1 = db[rows / 100];
    free(db);
    return p1;
}

int q8_table_new_tensor(q8_graph *g, const char *base, const char *suffix, q8_error *err) {
    char name[600];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    int t = q8_graph_add_tensor_unique(g, name);
    if (t < 0) q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    return t;
}

int q8_table_new_const(q8_graph *g, const char *base, const char *suffix, q8_dtype dt,
                       const int64_t *dims, int nd, q8_error *err) {
    int t = q8_table_new_tensor(g, base, suffix, err);
    if (t < 0) return -1;
    q8_tensor_set_shape(g->tensors[t], dt, dims, nd);
    return q8_tensor_alloc_data(g->tensors[t], err) == Q8_OK ? t : -1;
}

q8_status q8_table_place_node(q8_graph *g, const char *base, const char *suffix, const char *op,
                              const int *in, int n_in, int out, int scope, int *at,
                              q8_error *err) {
    char name[600];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    int ni = q8_graph_add_node(g, name, op);
    if (ni < 0) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_node *n = g->nodes[ni];
    Q8_TRY(q8_node_set_io(n, in, n_in, &out, 1, err));
    n->scope = scope;
    memmove(g->nodes + *at + 1, g->nodes + *at, sizeof(q8_node *) * (size_t)(ni - *at));
    g->nodes[(*at)++] = n;
    return Q8_OK;
}

/* Gather node gi reads table_q8 and writes int8 rows; a Gather of the row
 * scales, a Cast and a Mul placed right after it write its old output. */
static q8_status dequantize_after(q8_graph *g, int gi, int table_q8, int row_scales,
                                  q8_error *err) {
    char base[600];
    snprintf(base, sizeof base, "%s", g->nodes[gi]->name);
    int y = g->nodes[gi]->outputs[0], ids = g->nodes[gi]->inputs[1];
    int scope = g->nodes[gi]->scope, at = gi + 1;
    int y8 = q8_table_new_tensor(g, g->tensors[y]->name, "_q8", err);
    int ys = y8 < 0 ? -1 : q8_table_new_tensor(g, g->tensors[y]->name, "_row_scale", err);
    int yf = ys < 0 ? -1 : q8_table_new_tensor(g, g->tensors[y]->name, "_rows", err);
    if (yf < 0) return err->status;
    int in_s[2] = {row_scales, ids}, in_c[1] = {y8}, in_m[2] = {yf, ys};
    Q8_TRY(q8_table_place_node(g, base, "_row_scale", "Gather", in_s, 2, ys, scope, &at, err));
    Q8_TRY(q8_table_place_node(g, base, "_widen", "Cast", in_c, 1, yf, scope, &at, err));
    q8_attr *a = q8_node_set_attr(g->nodes[at - 1], "to", Q8_ATTR_INT);
    if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    a->i = 1; /* ONNX TensorProto FLOAT */
    Q8_TRY(q8_table_place_node(g, base, "_scale", "Mul", in_m, 2, y, scope, &at, err));
    g->nodes[gi]->inputs[0] = table_q8;
    g->nodes[gi]->outputs[0] = y8;
    return Q8_OK;
}

static q8_status quantize_one(q8_graph *g, int t, q8_meta *meta, int *done, q8_error *err) {
    const q8_tensor *x = g->tensors[t];
    int64_t rows = x->dims[0], cols = q8_tensor_numel(x) / rows;
    for (int64_t i = 0; i < rows * cols; i++)
        if (!isfinite(((const float *)x->data)[i])) return Q8_OK; /* stays FP32 */
    char base[600];
    snprintf(base, sizeof base, "%s", x->name);
    int64_t dims[Q8_MAX_DIMS], sdims[Q8_MAX_DIMS];
    int nd = x->ndim;
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)nd);
    for (int d = 0; d < nd; d++) sdims[d] = d ? 1 : rows;
    int tq = q8_table_new_const(g, base, "_q8", Q8_I8, dims, nd, err);
    int ts = tq < 0 ? -1 : q8_table_new_const(g, base, "_q8_row_scale", Q8_F32, sdims, nd, err);
    if (ts < 0) return err->status;
    double p1 = q8_quantize_table_rows(g->tensors[t]->data, rows, cols, g->tensors[tq]->data,
                              g->tensors[ts]->data);
    if (isnan(p1)) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (p1 < Q8_TABLE_MIN_ROW_SQNR_DB) return Q8_OK; /* the unused int8 copy is dropped */
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (n->n_inputs != 2 || n->inputs[0] != t) continue;
        char key[600];
        snprintf(key, sizeof key, "layer.%s.int8_table_row_sqnr_p1_db", n->name);
        Q8_TRY(q8_meta_set_float(meta, key, (float)p1, err));
        Q8_TRY(dequantize_after(g, i, tq, ts, err));
        (*done)++;
    }
    return Q8_OK;
}

q8_status q8_quantize_gather_tables(q8_graph *g, const q8_quant_options *o, q8_meta *meta,
                                    q8_error *err) {
    int done = 0, nt = g->n_tensors;
    for (int t = 0; t < nt; t++) {
        const q8_tensor *x = g->tensors[t];
        if (!x->data || x->dtype != Q8_F32 || !only_gathered(g, t, o)) continue;
        Q8_TRY(quantize_one(g, t, meta, &done, err));
    }
    q8_graph_fix_producers(g);
    return done ? q8_meta_set_int(meta, "quant.int8_tables", done, err) : Q8_OK;
}
