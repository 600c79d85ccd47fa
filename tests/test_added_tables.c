/* Float tables added to an activation stored in INT8 (src/quant/
 * add_tables.c): Add(x, table) reads a DequantizeLinear of an int8 copy
 * with one scale per row; what stays FP32; the output against a plain
 * per-row reference, on every backend of the build. */
#include <math.h>
#include <string.h>

#include "calibrate.h"
#include "passes.h"
#include "quantize.h"
#include "testutil.h"

#define T q8t_tensor

/* x[dims] + table[tdims] -> y (table first when swap); with mul, a Mul of
 * the sum and the table is the output: the table has a second reader. */
static q8_graph *added(const int64_t *dims, int nd, const int64_t *tdims, int tnd,
                       const float *table, bool swap, bool mul) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x"), w = T(g, "table");
    q8_tensor_set_shape(g->tensors[x], Q8_F32, dims, nd);
    q8_tensor_set_shape(g->tensors[w], Q8_F32, tdims, tnd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[w], NULL), Q8_OK);
    memcpy(g->tensors[w]->data, table, sizeof(float) * (size_t)q8_tensor_numel(g->tensors[w]));
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    int y = T(g, "y"), k = q8_graph_add_node(g, "pos_add", "Add");
    int in[2] = {swap ? w : x, swap ? x : w};
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, 2, &y, 1, NULL), Q8_OK);
    int out = y;
    if (mul) {
        int z = T(g, "z");
        k = q8_graph_add_node(g, "times_table", "Mul");
        int in2[2] = {y, w};
        cr_assert_eq(q8_node_set_io(g->nodes[k], in2, 2, &z, 1, NULL), Q8_OK);
        out = z;
    }
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = out;
    return g;
}

/* The quantizer on g (no ranges: it has no INT8 layers) with qo. */
static q8_graph *quantized(q8_graph *g, const q8_quant_options *qo) {
    q8_error err = {0};
    cr_assert_eq(q8_passes_run_for_quantize(g, NULL, &err), Q8_OK, "%s", err.msg);
    float *thr = calloc((size_t)g->n_tensors + 1, sizeof(float));
    q8_calibration cal = {.n_tensors = g->n_tensors, .threshold = thr};
    q8_meta meta = {0};
    cr_assert_eq(q8_quantize_graph(g, &cal, qo, &meta, &err), Q8_OK, "%s", err.msg);
    q8_meta_free(&meta);
    free(thr);
    return g;
}

static int count(const q8_graph *g, const char *op) {
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++) c += strcmp(g->nodes[i]->op_type, op) == 0;
    return c;
}

/* The constant the Add reads, directly or through a DequantizeLinear. */
static const q8_tensor *table_of(const q8_graph *g) {
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *n = g->nodes[i];
        if (strcmp(n->name, "pos_add")) continue;
        for (int k = 0; k < 2; k++) {
            const q8_tensor *t = q8_in(g, n, k);
            if (t->data) return t;
            if (t->producer >= 0 && !strcmp(g->nodes[t->producer]->op_type, "DequantizeLinear"))
                return q8_in(g, g->nodes[t->producer], 0);
        }
    }
    cr_assert_fail("no constant table read by 'pos_add'");
    return NULL;
}

static float *random_table(int64_t n, uint64_t seed) {
    float *t = malloc(sizeof(float) * (size_t)n);
    q8t_rng r = q8t_seed(seed);
    q8t_fill(&r, t, n, -1, 1);
    return t;
}

/* Row of the table as the plain reference quantizes it (as the gather
 * tables' test does): scale max|row| / 127 rounded up to 12 significant
 * bits, q = round half to even, float(q) * scale. */
static void reference_row(const float *row, int64_t cols, float *out) {
    float amax = 0;
    for (int64_t c = 0; c < cols; c++) amax = fmaxf(amax, fabsf(row[c]));
    float s = amax > 0 ? amax / 127.0f : 1.0f;
    uint32_t u;
    memcpy(&u, &s, 4);
    if (u & 0xFFFu) u = (u | 0xFFFu) + 1;
    memcpy(&s, &u, 4);
    for (int64_t c = 0; c < cols; c++) {
        float q = nearbyintf(row[c] / s);
        out[c] = (q > 127 ? 127 : q < -127 ? -127 : q) * s;
    }
}

/* Output of g (consumed) on input x, on every backend of the build. */
static float *run(q8_graph *g, const float *x, int64_t n) {
    q8_error err = {0};
    const void *in[1] = {x};
    void *outs[1];
    q8_tensor_info info;
    cr_assert_eq(q8t_run(g, in, 2, outs, &info, 1, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(info.dtype, Q8_F32);
    int64_t m = 1;
    for (int d = 0; d < info.ndim; d++) m *= info.dims[d];
    cr_assert_eq(m, n);
    return outs[0];
}

/* A ViT's position embedding: x[2,rows,cols] + table[1,rows,cols] (and a
 * [rows,cols] table, first operand): y = x + the per-row reference. */
Test(added_tables, add_reads_int8_rows_scaled_per_row) {
    const int64_t rows = 17, cols = 70, B = 2;
    for (int shape = 0; shape < 2; shape++) {
        float *table = random_table(rows * cols, 3);
        for (int64_t c = 0; c < cols; c++) table[5 * cols + c] *= 1e-3f; /* a short row */
        int64_t xd[3] = {B, rows, cols}, td[3] = {1, rows, cols};
        q8_quant_options qo = {.int8_embeddings = true};
        q8_graph *g = shape ? quantized(added(xd, 3, td + 1, 2, table, true, false), &qo)
                            : quantized(added(xd, 3, td, 3, table, false, false), &qo);
        cr_assert_eq(table_of(g)->dtype, Q8_I8, "the table is int8");
        cr_assert_eq(count(g, "DequantizeLinear"), 1);
        for (int t = 0; t < g->n_tensors; t++)
            cr_assert(!(g->tensors[t]->data && g->tensors[t]->dtype == Q8_F32 &&
                        q8_tensor_numel(g->tensors[t]) == rows * cols),
                      "the FP32 table is gone");
        float *x = random_table(B * rows * cols, 7);
        float *got = run(g, x, B * rows * cols), want[70];
        for (int64_t r = 0; r < rows; r++) {
            reference_row(table + r * cols, cols, want);
            for (int64_t b = 0; b < B; b++)
                for (int64_t c = 0; c < cols; c++) {
                    int64_t i = (b * rows + r) * cols + c;
                    cr_assert_eq(got[i], x[i] + want[c], "shape %d: [%lld,%lld,%lld]: %g, want %g",
                                 shape, (long long)b, (long long)r, (long long)c, got[i],
                                 x[i] + want[c]);
                }
        }
        free(got);
        free(x);
        free(table);
    }
}

Test(added_tables, what_stays_fp32) {
    int64_t xd[3] = {1, 16, 64}, td[3] = {1, 16, 64};
    q8_quant_options on = {.int8_embeddings = true}, off = {.int8_embeddings = false};
    float *table = random_table(2 * 16 * 64, 3);
    q8_graph *g = quantized(added(xd, 3, td, 3, table, false, false), &off);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "--int8-embeddings off");
    cr_assert_eq(count(g, "DequantizeLinear"), 0);
    q8_graph_free(g);
    g = quantized(added(xd, 3, td, 3, table, false, true), &on);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "a Mul reads the table too");
    q8_graph_free(g);
    int64_t sd[3] = {1, 16, 32}; /* 512 < 1024 elements */
    g = quantized(added(sd, 3, sd, 3, table, false, false), &on);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "a small table");
    q8_graph_free(g);
    int64_t wd[3] = {2, 16, 64}; /* rows along axis 1 would need two scale axes */
    g = quantized(added(wd, 3, wd, 3, table, false, false), &on);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "a leading axis > 1");
    q8_graph_free(g);
    table[100] = NAN;
    g = quantized(added(xd, 3, td, 3, table, false, false), &on);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "a non-finite entry");
    q8_graph_free(g);
    free(table);
}

/* Rows of one large entry and many just under half a step keep about
 * 18 dB, under Q8_TABLE_MIN_ROW_SQNR_DB. */
Test(added_tables, rows_that_would_lose_too_much_stay_fp32) {
    const int64_t rows = 4, cols = 1024;
    float *table = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) table[r * cols + c] = c ? 0.499f : 127.0f;
    int64_t d[2] = {rows, cols};
    q8_quant_options qo = {.int8_embeddings = true};
    q8_graph *g = quantized(added(d, 2, d, 2, table, false, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_F32);
    q8_graph_free(g);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 1; c < cols; c++) table[r * cols + c] = (float)(c % 64) - 32;
    g = quantized(added(d, 2, d, 2, table, false, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_I8);
    q8_graph_free(g);
    free(table);
}
