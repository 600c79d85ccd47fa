/* Embedding tables in INT8 (src/quant/gather_tables.c): a Gather from a
 * float constant table reads an int8 copy with one scale per row; what
 * stays FP32 (tables read by other ops, small ones, --fp32-layers, rows that
 * would lose too much, the option off); the outputs against a plain
 * per-row reference, on every backend of the build. */
#include <math.h>
#include <string.h>

#include "calibrate.h"
#include "passes.h"
#include "quantize.h"
#include "testutil.h"

#define T q8t_tensor

enum { NIDS = 7 };
static const int64_t ids[NIDS] = {0, 5, -1, 17, 5, 298, 123}; /* -1: the last row */

/* ids[1,7] -> Gather(table[rows, cols]) -> y; with other_reader, an Add
 * of y and the table (rows = 7) is the output: the table has a second
 * reader. */
static q8_graph *lookup(int64_t rows, int64_t cols, const float *table, bool other_reader) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "ids"), w = T(g, "table"), y = T(g, "y");
    int64_t xd[2] = {1, NIDS}, wd[2] = {rows, cols};
    q8_tensor_set_shape(g->tensors[x], Q8_I64, xd, 2);
    q8_tensor_set_shape(g->tensors[w], Q8_F32, wd, 2);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[w], NULL), Q8_OK);
    memcpy(g->tensors[w]->data, table, sizeof(float) * (size_t)(rows * cols));
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    int k = q8_graph_add_node(g, "embed", "Gather");
    int in[2] = {w, x}, out = y;
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, 2, &out, 1, NULL), Q8_OK);
    int yo = y;
    if (other_reader) {
        int z = T(g, "z");
        k = q8_graph_add_node(g, "plus_table", "Add");
        int in2[2] = {y, w};
        cr_assert_eq(q8_node_set_io(g->nodes[k], in2, 2, &z, 1, NULL), Q8_OK);
        yo = z;
        cr_assert_eq(rows, NIDS, "the Add broadcasts [1,7,cols] with [7,cols]");
    }
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = yo;
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

static const q8_tensor *table_of(const q8_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->name, "embed")) return g->tensors[g->nodes[i]->inputs[0]];
    cr_assert_fail("no node 'embed'");
    return NULL;
}

static float *random_table(int64_t n, uint64_t seed) {
    float *t = malloc(sizeof(float) * (size_t)n);
    q8t_rng r = q8t_seed(seed);
    q8t_fill(&r, t, n, -1, 1);
    return t;
}

/* Output 0 of g (consumed) on the ids, on every backend of the build:
 * none may skip it (the CUDA backend runs the int8 Gather -> Cast -> Mul
 * too), and each must give the CPU's bits. */
static float *run(q8_graph *g, int64_t *n_out) {
    q8_error err = {0};
    const void *in[1] = {ids};
    void *outs[1];
    q8_tensor_info info;
    int others = 0;
    cr_assert_eq(q8t_run_backends(g, in, 2, outs, &info, 1, true, &others, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(others, q8t_other_backends(), "a backend skipped the lookup");
    cr_assert_eq(info.dtype, Q8_F32);
    *n_out = 1;
    for (int d = 0; d < info.ndim; d++) *n_out *= info.dims[d];
    return outs[0];
}

/* Row r of the table as the plain reference quantizes it: scale = max|row|
 * / 127 rounded up to 12 significant bits (every int8 scale q8 chooses has
 * the 16-bit form of scale16.h), q = round half to even, then float(q) *
 * scale. */
static void reference_row(const float *row, int64_t cols, float *out) {
    float amax = 0;
    for (int64_t c = 0; c < cols; c++) amax = fmaxf(amax, fabsf(row[c]));
    float s = amax > 0 ? amax / 127.0f : 1.0f;
    uint32_t u;
    memcpy(&u, &s, 4);
    if (u & 0xFFFu) u = (u | 0xFFFu) + 1; /* up to the next float with 12 bits */
    memcpy(&s, &u, 4);
    for (int64_t c = 0; c < cols; c++) {
        float q = nearbyintf(row[c] / s);
        out[c] = (q > 127 ? 127 : q < -127 ? -127 : q) * s;
    }
}

Test(gather_tables, lookup_reads_int8_rows_scaled_per_row) {
    const int64_t rows = 300, cols = 24;
    float *table = random_table(rows * cols, 3);
    for (int64_t c = 0; c < cols; c++) table[17 * cols + c] *= 1e-3f; /* a short row */
    q8_quant_options qo = {.int8_embeddings = true};
    q8_graph *g = quantized(lookup(rows, cols, table, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_I8, "the table is int8");
    cr_assert_eq(count(g, "Gather"), 2, "rows and their scales");
    cr_assert_eq(count(g, "Cast"), 1);
    cr_assert_eq(count(g, "Mul"), 1);
    for (int t = 0; t < g->n_tensors; t++)
        cr_assert(!(g->tensors[t]->data && g->tensors[t]->dtype == Q8_F32 &&
                    q8_tensor_numel(g->tensors[t]) == rows * cols),
                  "the FP32 table is gone");
    int64_t n;
    float *got = run(g, &n);
    cr_assert_eq(n, NIDS * cols);
    float want[24];
    for (int i = 0; i < NIDS; i++) {
        int64_t r = ids[i] < 0 ? ids[i] + rows : ids[i];
        reference_row(table + r * cols, cols, want);
        for (int64_t c = 0; c < cols; c++)
            cr_assert_eq(got[i * cols + c], want[c], "id %lld col %lld: %g, want %g",
                         (long long)ids[i], (long long)c, got[i * cols + c], want[c]);
        /* within half a step of the row's own scale: the short row keeps
         * its relative precision */
        float amax = 0;
        for (int64_t c = 0; c < cols; c++) amax = fmaxf(amax, fabsf(table[r * cols + c]));
        for (int64_t c = 0; c < cols; c++)
            cr_assert_leq(fabsf(got[i * cols + c] - table[r * cols + c]),
                          amax / 127 * 0.5001f, "id %lld col %lld", (long long)ids[i],
                          (long long)c);
    }
    free(got);
    free(table);
}

Test(gather_tables, off_keeps_the_fp32_table) {
    float *table = random_table(300 * 24, 3);
    q8_quant_options qo = {.int8_embeddings = false};
    q8_graph *g = quantized(lookup(300, 24, table, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_F32);
    cr_assert_eq(count(g, "Gather"), 1);
    cr_assert_eq(count(g, "Cast") + count(g, "Mul"), 0);
    q8_graph_free(g);
    free(table);
}

Test(gather_tables, what_stays_fp32) {
    q8_quant_options qo = {.int8_embeddings = true};
    /* read by another op too */
    float *t7 = random_table(NIDS * 200, 4);
    q8_graph *g = quantized(lookup(NIDS, 200, t7, true), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "an Add reads the table too");
    q8_graph_free(g);
    free(t7);
    /* small: 300 x 3 < 1024 elements */
    float *small = random_table(300 * 3, 5);
    g = quantized(lookup(300, 3, small, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "a small table");
    q8_graph_free(g);
    free(small);
    /* --fp32-layers names the lookup */
    const char *keep[] = {"embed"};
    q8_quant_options qk = {.int8_embeddings = true, .fp32_layers = keep, .n_fp32_layers = 1};
    float *table = random_table(300 * 24, 3);
    g = quantized(lookup(300, 24, table, false), &qk);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "--fp32-layers embed");
    q8_graph_free(g);
    free(table);
    /* a non-finite entry */
    table = random_table(300 * 24, 3);
    table[5] = INFINITY;
    g = quantized(lookup(300, 24, table, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_F32, "a non-finite entry");
    q8_graph_free(g);
    free(table);
}

/* Wide rows of one large entry and many just under half a step: every
 * small entry rounds to 0 and the row keeps about 18 dB, under
 * Q8_TABLE_MIN_ROW_SQNR_DB. */
Test(gather_tables, rows_that_would_lose_too_much_stay_fp32) {
    const int64_t rows = 300, cols = 1024;
    float *table = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) table[r * cols + c] = c ? 0.499f : 127.0f;
    q8_quant_options qo = {.int8_embeddings = true};
    q8_graph *g = quantized(lookup(rows, cols, table, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_F32);
    q8_graph_free(g);
    /* the same rows with a larger step between entries are kept in int8 */
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 1; c < cols; c++) table[r * cols + c] = (float)(c % 64) - 32;
    g = quantized(lookup(rows, cols, table, false), &qo);
    cr_assert_eq(table_of(g)->dtype, Q8_I8);
    q8_graph_free(g);
    free(table);
}
