/* Constant tables added to an activation stored in INT8 (quantize.h,
 * q8_quantize_added_tables).
 *
 * A ViT adds a learned position embedding to its patch tokens, Add(x, pos),
 * and the sum feeds a float LayerNorm, so the Add stays FP32 and pos stayed
 * float32: 4 KB (1x16x64) of the MNIST ViT's 83 KB file. Here such a table
 * becomes int8 with one symmetric scale per row (a row: the slice along the
 * second-to-last axis, one position's vector; per row for the reason
 * gather_tables.c gives), and one standard per-axis DequantizeLinear, placed
 * right before the first Add, widens it each run into the arena (1024
 * values for the ViT). pos keeps 45.3 dB SQNR this way (worst row 41.4; one
 * scale for the whole table: 42.1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"

static bool is_add(const q8_node *n) { return !*n->domain && strcmp(n->op_type, "Add") == 0; }

/* Is every reader of constant t an Add of t and an activation, all in one
 * scope, and t neither an output nor a bound input? Sets *first to the
 * first reader's index. */
static bool only_added(const q8_graph *g, int t, int *first) {
    if (q8_graph_is_output(g, t)) return false;
    for (int i = 0; i < g->n_bound; i++)
        if (g->bound[i] == t) return false;
    *first = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            if (n->inputs[k] != t) continue;
            const q8_tensor *other = n->n_inputs == 2 ? q8_in(g, n, 1 - k) : NULL;
            if (!is_add(n) || !other || other->data || other->dtype != Q8_F32 ||
                n->inputs[1 - k] == t || (*first >= 0 && n->scope != g->nodes[*first]->scope))
                return false;
            if (*first < 0) *first = i;
        }
    }
    return *first >= 0;
}

/* A float table of at least Q8_TABLE_MIN_ELEMS whose axes before the
 * second-to-last are 1: rows along ndim - 2. */
static bool table_shape(const q8_tensor *x) {
    if (!x->data || x->dtype != Q8_F32 || x->ndim < 2 ||
        q8_tensor_numel(x) < Q8_TABLE_MIN_ELEMS)
        return false;
    for (int d = 0; d < x->ndim - 2; d++)
        if (x->dims[d] != 1) return false;
    return true;
}

/* DequantizeLinear(tq, ts, axis) -> tf, placed at index at in scope. */
static q8_status place_dequantize(q8_graph *g, const char *base, int tq, int ts, int tf, int axis,
                                  int at, int scope, q8_error *err) {
    int in[2] = {tq, ts};
    Q8_TRY(q8_table_place_node(g, base, "_dequantize", "DequantizeLinear", in, 2, tf, scope, &at,
                               err));
    q8_attr *a = q8_node_set_attr(g->nodes[at - 1], "axis", Q8_ATTR_INT);
    if (!a) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    a->i = axis;
    return Q8_OK;
}

static q8_status quantize_one(q8_graph *g, int t, int first, q8_meta *meta, int *done,
                              q8_error *err) {
    const q8_tensor *x = g->tensors[t];
    int64_t rows = x->dims[x->ndim - 2], cols = x->dims[x->ndim - 1];
    for (int64_t i = 0; i < rows * cols; i++)
        if (!isfinite(((const float *)x->data)[i])) return Q8_OK; /* stays FP32 */
    char base[600];
    snprintf(base, sizeof base, "%s", x->name);
    int64_t dims[Q8_MAX_DIMS];
    int nd = x->ndim;
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)nd);
    int tq = q8_table_new_const(g, base, "_q8", Q8_I8, dims, nd, err);
    int ts = tq < 0 ? -1 : q8_table_new_const(g, base, "_q8_row_scale", Q8_F32, &rows, 1, err);
    int tf = ts < 0 ? -1 : q8_table_new_tensor(g, base, "_rows", err);
    if (tf < 0) return err->status;
    double p1 = q8_quantize_table_rows(g->tensors[t]->data, rows, cols, g->tensors[tq]->data,
                                       g->tensors[ts]->data);
    if (isnan(p1)) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (p1 < Q8_TABLE_MIN_ROW_SQNR_DB) return Q8_OK; /* the unused int8 copy is dropped */
    for (int i = first; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            if (n->inputs[k] != t) continue;
            n->inputs[k] = tf;
            char key[600];
            snprintf(key, sizeof key, "layer.%s.int8_table_row_sqnr_p1_db", n->name);
            Q8_TRY(q8_meta_set_float(meta, key, (float)p1, err));
        }
    }
    (*done)++;
    return place_dequantize(g, base, tq, ts, tf, nd - 2, first, g->nodes[first]->scope, err);
}

q8_status q8_quantize_added_tables(q8_graph *g, q8_meta *meta, q8_error *err) {
    int done = 0, nt = g->n_tensors;
    for (int t = 0; t < nt; t++) {
        int first;
        if (!table_shape(g->tensors[t]) || !only_added(g, t, &first)) continue;
        Q8_TRY(quantize_one(g, t, first, meta, &done, err));
    }
    q8_graph_fix_producers(g);
    return done ? q8_meta_set_int(meta, "quant.int8_added_tables", done, err) : Q8_OK;
}
