#define _GNU_SOURCE
/* .q8 container: round trip, sparse encoding, and a corrupt-file corpus made
 * by mutating a valid file (checksums recomputed where the point is to reach
 * the deeper checks). */
#include <string.h>

#include "codes.h"
#include "crc32c.h"
#include "layout.h"
#include "q8file.h"
#include "scale16.h"
#include "zsection.h"
#include "testutil.h"

static int add_const(q8_graph *g, const char *name, q8_dtype dt, const int64_t *dims, int nd) {
    int t = q8_graph_add_tensor(g, name, NULL);
    q8_tensor_set_shape(g->tensors[t], dt, dims, nd);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    return t;
}

/* A graph whose one output is an int8 [d0, d1] constant (kept by the
 * writer as an output), beside an unused int8 input: for the encodings of
 * one constant. Its data is the caller's to fill. */
static q8_graph *const_output_graph(const char *name, const int64_t d[2]) {
    q8_graph *g = q8_graph_new();
    g->opset = Q8_OPSET_CANONICAL;
    int t = add_const(g, name, Q8_I8, d, 2);
    int64_t xd[1] = {4};
    int x = q8_graph_add_tensor(g, "x", NULL);
    q8_tensor_set_shape(g->tensors[x], Q8_I8, xd, 1);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = t;
    return g;
}

/* A graph exercising every record type (not meant to run). */
static q8_graph *sample_graph(void) {
    q8_graph *g = q8_graph_new();
    g->opset = Q8_OPSET_CANONICAL;
    q8t_rng r = q8t_seed(7);
    int64_t wd[2] = {13, 9}, sd[2] = {16, 40}, id[1] = {3};
    int w = add_const(g, "w.f32", Q8_F32, wd, 2);
    q8t_fill(&r, g->tensors[w]->data, 13 * 9, -1, 1);
    int s8 = add_const(g, "w.int8.sparse", Q8_I8, sd, 2);
    int8_t *q = g->tensors[s8]->data;
    for (int i = 0; i < 16 * 40; i++) q[i] = (q8t_next(&r) % 10 < 7) ? 0 : (int8_t)(q8t_next(&r) % 255 - 127);
    q8_tensor *st = g->tensors[s8];
    st->q.axis = 0;
    st->q.n = 16;
    st->q.scale = malloc(sizeof(float) * 16);
    for (int i = 0; i < 16; i++) st->q.scale[i] = 0.01f * (float)(i + 1);
    int ii = add_const(g, "shape", Q8_I64, id, 1);
    int64_t *iv = g->tensors[ii]->data;
    iv[0] = 1;
    iv[1] = -1;
    iv[2] = 7;
    int x = q8_graph_add_tensor(g, "x", NULL);
    int64_t xd[3] = {1, 13, 9};
    q8_tensor_set_shape(g->tensors[x], Q8_I8, xd, 3);
    g->tensors[x]->q.n = 1;
    g->tensors[x]->q.scale = malloc(sizeof(float));
    g->tensors[x]->q.scale[0] = 0.05f;
    int y = q8_graph_add_tensor(g, "y", NULL);
    q8_tensor_set_shape(g->tensors[y], Q8_F32, xd, 3);
    g->tensors[y]->io_dtype = Q8_F16; /* handed out as float16 */
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = y;
    int ni = q8_graph_add_node(g, "node/with:odd name", "QGemm");
    q8_node *n = g->nodes[ni];
    free(n->domain);
    n->domain = q8_strdup("q8");
    n->op = Q8_OP_QGEMM; /* files store resolved ops */
    int in[5] = {x, w, -1, s8, ii}, out[1] = {y};
    q8_node_set_io(n, in, 5, out, 1, NULL);
    q8_node_set_attr(n, "f", Q8_ATTR_FLOAT)->f = 0.5f;
    q8_node_set_attr(n, "i", Q8_ATTR_INT)->i = -42;
    q8_node_set_attr(n, "s", Q8_ATTR_STRING)->s = q8_strdup("half_pixel");
    q8_attr *a = q8_node_set_attr(n, "ints", Q8_ATTR_INTS);
    a->n = 3;
    a->ints = malloc(3 * sizeof(int64_t));
    a->ints[0] = 1, a->ints[1] = 2, a->ints[2] = INT64_MIN;
    a = q8_node_set_attr(n, "floats", Q8_ATTR_FLOATS);
    a->n = 2;
    a->floats = malloc(2 * sizeof(float));
    a->floats[0] = 1.5f, a->floats[1] = -2;
    a = q8_node_set_attr(n, "strings", Q8_ATTR_STRINGS);
    a->n = 2;
    a->strings = malloc(2 * sizeof(char *));
    a->strings[0] = q8_strdup("a"), a->strings[1] = q8_strdup("");
    a = q8_node_set_attr(n, "t", Q8_ATTR_TENSOR);
    a->t = calloc(1, sizeof *a->t);
    a->t->name = q8_strdup("t");
    q8_tensor_set_shape(a->t, Q8_F32, id, 1);
    q8_tensor_alloc_data(a->t, NULL);
    ((float *)a->t->data)[1] = 3.25f;
    q8_node_set_attr(n, "empty_ints", Q8_ATTR_INTS)->n = 0;
    /* an int8 weight [3][5] already in the INT8 GEMM's lanes layout (as a
     * parsed .q8 holds it): written as it is, 128 bytes with padding */
    int64_t ld[2] = {3, 5};
    int lw = q8_graph_add_tensor(g, "w.lanes", NULL);
    q8_tensor *lt = g->tensors[lw];
    q8_tensor_set_shape(lt, Q8_I8, ld, 2);
    int8_t plain[15];
    for (int i = 0; i < 15; i++) plain[i] = (int8_t)(i - 7);
    lt->data = q8_aligned_alloc(q8_layout_bytes(Q8_LAYOUT_LANES16, (q8_wshape){3, 5, 1}));
    lt->owns_data = true;
    q8_layout_pack(Q8_LAYOUT_LANES16, plain, (q8_wshape){3, 5, 1}, lt->data);
    lt->layout = Q8_LAYOUT_LANES16;
    int in6[6] = {x, w, -1, s8, ii, lw};
    q8_node_set_io(n, in6, 6, out, 1, NULL);
    return g;
}

/* g written as .q8 version `version` (3, or this q8's: 4) */
static uint8_t *encode_v(const q8_graph *g, uint32_t version, size_t *len) {
    q8_meta m = {0};
    q8_meta_set_str(&m, "producer", "q8 test", NULL);
    q8_meta_set_int(&m, "calib.samples", 64, NULL);
    q8_meta_set_float(&m, "prune.fraction", 0.5, NULL);
    q8_meta_set_int(&m, "layer.node/with:odd name.fp32", -3, NULL);
    uint8_t *buf;
    q8_error err = {0};
    cr_assert_eq(q8_file_encode_version(g, &m, version, &buf, len, &err), Q8_OK, "%s", err.msg);
    q8_meta_free(&m);
    return buf;
}

static uint8_t *encode(const q8_graph *g, size_t *len) { return encode_v(g, Q8_FILE_VERSION, len); }

typedef struct layout_t {
    uint64_t off[5], size[5];
    uint64_t entry[5]; /* section table entry offset by kind */
} layout_t;

static layout_t read_layout(const uint8_t *buf) {
    layout_t l = {0};
    uint64_t toff;
    uint32_t n;
    memcpy(&toff, buf + 24, 8);
    memcpy(&n, buf + 32, 4);
    for (uint32_t i = 0; i < n && i < 4; i++) { /* the writer emits 3 */
        const uint8_t *e = buf + toff + 32 * i;
        uint32_t kind;
        memcpy(&kind, e, 4);
        if (kind < 1 || kind > 4) continue;
        memcpy(&l.off[kind], e + 8, 8);
        memcpy(&l.size[kind], e + 16, 8);
        l.entry[kind] = toff + 32 * i;
    }
    return l;
}

static void round_trip(uint32_t version) {
    q8_graph *g = sample_graph();
    size_t len;
    uint8_t *buf = encode_v(g, version, &len);
    cr_assert_eq(len % 64, 0);
    q8_graph *h;
    q8_meta m = {0};
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(buf, len, &h, &m, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(h->opset, Q8_OPSET_CANONICAL);
    cr_assert_eq(h->n_tensors, g->n_tensors);
    for (int i = 0; i < g->n_tensors; i++) {
        const q8_tensor *a = g->tensors[i], *b = h->tensors[i];
        cr_assert_str_eq(a->name, b->name);
        cr_assert_eq(a->dtype, b->dtype);
        cr_assert_eq(a->io_dtype, b->io_dtype, "%s", a->name);
        cr_assert_eq(a->ndim, b->ndim);
        cr_assert_eq(memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->ndim), 0);
        cr_assert_eq(!!a->data, !!b->data);
        cr_assert_eq(a->layout, b->layout, "%s", a->name);
        if (a->data)
            cr_assert_eq(memcmp(a->data, b->data, q8_tensor_stored_bytes(a)), 0, "%s", a->name);
        cr_assert_eq(a->q.n, b->q.n);
        if (a->q.n) {
            cr_assert_eq(a->q.axis, b->q.axis);
            cr_assert_eq(memcmp(a->q.scale, b->q.scale, sizeof(float) * (size_t)a->q.n), 0);
        }
    }
    /* dense data is used in place; sparse data was expanded */
    cr_assert(!h->tensors[0]->owns_data);
    cr_assert((uint8_t *)h->tensors[0]->data >= buf && (uint8_t *)h->tensors[0]->data < buf + len);
    cr_assert(h->tensors[1]->owns_data, "the 70%%-zero int8 tensor should be stored sparse");
    /* version 3: DATA starts on a page; version 4: only when DATA is 64 pages
     * or more (not this one); laid-out weights are in place, 64-aligned */
    layout_t fl = read_layout(buf);
    cr_assert_eq(fl.off[Q8_SECTION_DATA] % 4096 == 0, version == 3);
    const q8_tensor *lt = h->tensors[h->n_tensors - 1];
    cr_assert_str_eq(lt->name, "w.lanes");
    cr_assert(!lt->owns_data && ((uintptr_t)lt->data - (uintptr_t)buf) % 64 == 0);
    const q8_node *n = h->nodes[0];
    cr_assert_str_eq(n->name, "node/with:odd name");
    cr_assert_eq(n->op, Q8_OP_QGEMM);
    cr_assert_str_eq(n->op_type, "QGemm");
    cr_assert_str_eq(n->domain, "q8");
    cr_assert_eq(n->n_inputs, 6);
    cr_assert_eq(n->inputs[2], -1);
    cr_assert_float_eq(q8_attr_float(n, "f", 0), 0.5f, 0);
    cr_assert_eq(q8_attr_int(n, "i", 0), -42);
    cr_assert_str_eq(q8_attr_str(n, "s", ""), "half_pixel");
    int cnt;
    const int64_t *iv = q8_attr_ints(n, "ints", &cnt);
    cr_assert_eq(cnt, 3);
    cr_assert_eq(iv[2], INT64_MIN);
    const float *fv = q8_attr_floats(n, "floats", &cnt);
    cr_assert_eq(cnt, 2);
    cr_assert_float_eq(fv[1], -2.0f, 0);
    const q8_attr *sa = q8_attr_find(n, "strings");
    cr_assert_eq(sa->n, 2);
    cr_assert_str_eq(sa->strings[1], "");
    const q8_attr *ta = q8_attr_find(n, "t");
    cr_assert_float_eq(((float *)ta->t->data)[1], 3.25f, 0);
    q8_attr_ints(n, "empty_ints", &cnt);
    cr_assert_eq(cnt, 0);
    cr_assert_eq(h->n_inputs, 1);
    cr_assert_eq(h->n_outputs, 1);
    cr_assert_eq(q8_meta_get(&m, "calib.samples")->i, 64);
    cr_assert_str_eq(q8_meta_get(&m, "producer")->s, "q8 test");
    cr_assert_eq(q8_meta_get(&m, "prune.fraction")->f, 0.5);
    cr_assert_eq(q8_meta_get(&m, "layer.node/with:odd name.fp32")->i, -3);
    q8_meta_free(&m);
    q8_graph_free(h);
    q8_graph_free(g);
    free(buf);
}

Test(q8file, round_trip_keeps_everything) {
    round_trip(Q8_FILE_VERSION);
    round_trip(3);
}

Test(q8file, sparse_weights_are_smaller) {
    q8_graph *g = sample_graph();
    size_t sparse_len;
    uint8_t *a = encode(g, &sparse_len);
    /* make the int8 tensor dense: no zeros */
    int8_t *q = g->tensors[1]->data;
    for (int i = 0; i < 16 * 40; i++) q[i] = (int8_t)(i % 100 + 1);
    size_t dense_len;
    uint8_t *b = encode(g, &dense_len);
    cr_assert_lt(sparse_len, dense_len);
    free(a);
    free(b);
    q8_graph_free(g);
}

/* ---- corrupt files ---- */



/* Recompute every checksum so that only the deeper checks can object. */
static void reseal_with(uint8_t *buf, layout_t l) {
    for (int k = 1; k <= 4; k++) {
        if (!l.entry[k]) continue;
        uint32_t c = q8_crc32c(0, buf + l.off[k], l.size[k]);
        memcpy(buf + l.entry[k] + 24, &c, 4);
    }
    uint32_t h = q8_crc32c(0, buf, 60);
    memcpy(buf + 60, &h, 4);
}
/* The layout of the unmodified file: the mutation may have broken the table. */
#define reseal(b) reseal_with(b, l)

static void expect_fail(const uint8_t *buf, size_t len, const char *substr) {
    q8_graph *g = NULL;
    q8_error err = {0};
    q8_status s = q8_file_parse(buf, len, &g, NULL, &err);
    cr_assert_neq(s, Q8_OK, "expected a failure mentioning '%s'", substr);
    cr_assert(g == NULL);
    cr_assert(strstr(err.msg, substr), "message '%s' lacks '%s'", err.msg, substr);
}

/* Version 3's records (fixed-width fields at known offsets); version 4's
 * compact ones: corrupt_corpus_v4_fails_cleanly. */
Test(q8file, corrupt_corpus_fails_cleanly) {
    q8_graph *g = sample_graph();
    size_t len;
    uint8_t *orig = encode_v(g, 3, &len);
    q8_graph_free(g);
    uint8_t *b = malloc(len);
    layout_t l = read_layout(orig);
    uint32_t u32;
    uint64_t u64;

#define FRESH() memcpy(b, orig, len)
    FRESH();
    b[0] = 'X';
    expect_fail(b, len, "bad magic");

    FRESH();
    expect_fail(b, 40, "truncated");

    FRESH();
    expect_fail(b, len - 64, "truncated or padded");

    FRESH();
    u32 = 99;
    memcpy(b + 8, &u32, 4);
    expect_fail(b, len, "header checksum");
    reseal(b);
    expect_fail(b, len, "a .q8 file of format version 99, made by a newer q8");
    u32 = Q8_FILE_VERSION + 1; /* the next version: what this q8 says of it */
    memcpy(b + 8, &u32, 4);
    reseal(b);
    char newer[80];
    snprintf(newer, sizeof newer, "made by a newer q8: this q8 reads versions 2 to %d",
             Q8_FILE_VERSION);
    expect_fail(b, len, newer);
    u32 = 1; /* the first format: refused with what to do */
    memcpy(b + 8, &u32, 4);
    reseal(b);
    expect_fail(b, len, "re-quantize the model");

    FRESH();
    u32 = 1000;
    memcpy(b + 32, &u32, 4);
    reseal(b);
    expect_fail(b, len, "section count");

    FRESH();
    u64 = len - 8;
    memcpy(b + 24, &u64, 8);
    reseal(b);
    expect_fail(b, len, "section table");

    FRESH();
    b[l.off[Q8_SECTION_DATA] + 3] ^= 0x40;
    expect_fail(b, len, "checksum mismatch");

    FRESH();
    u64 = len; /* GRAPH size past the end */
    memcpy(b + l.entry[Q8_SECTION_GRAPH] + 16, &u64, 8);
    reseal(b);
    expect_fail(b, len, "runs past the end");

    FRESH();
    u64 = UINT64_MAX - 10; /* offset + size overflows */
    memcpy(b + l.entry[Q8_SECTION_META] + 8, &u64, 8);
    reseal(b);
    expect_fail(b, len, "runs past the end");

    /* GRAPH: tensor count far beyond what fits */
    FRESH();
    u32 = 0x7fffffff;
    memcpy(b + l.off[Q8_SECTION_GRAPH], &u32, 4);
    reseal(b);
    expect_fail(b, len, "bad tensor count");

    /* first tensor: name len 5 "w.f32", dtype, ndim, flags, enc, layout,
     * dims[2], then the data offset and size: point it past the blob */
    size_t t0 = l.off[Q8_SECTION_GRAPH] + 4 + 4 + 5;
    FRESH();
    b[t0] = 200; /* dtype */
    reseal(b);
    expect_fail(b, len, "invalid dtype");

    FRESH();
    b[t0 + 2] |= 16; /* flags: a bit no version defines */
    reseal(b);
    expect_fail(b, len, "unknown flags");

    FRESH();
    b[t0 + 2] |= 4; /* float16 exchange on a constant */
    reseal(b);
    expect_fail(b, len, "exchanged as float16 but not a float32 activation");

    FRESH();
    u64 = (uint64_t)1 << 62; /* dims overflow */
    memcpy(b + t0 + 5, &u64, 8);
    memcpy(b + t0 + 13, &u64, 8);
    reseal(b);
    expect_fail(b, len, "overflowing");

    size_t data_ref = t0 + 5 + 16;
    FRESH();
    u64 = l.size[Q8_SECTION_DATA];
    memcpy(b + data_ref, &u64, 8);
    reseal(b);
    expect_fail(b, len, "runs past");

    FRESH();
    u64 = 1ull << 40; /* size */
    memcpy(b + data_ref + 8, &u64, 8);
    reseal(b);
    expect_fail(b, len, "runs past");

    FRESH();
    u64 = 4; /* dense size not matching the shape */
    memcpy(b + data_ref + 8, &u64, 8);
    reseal(b);
    expect_fail(b, len, "shape needs");

    /* a node input index out of range, and an op code nobody knows: find
     * the node's name, then its op code and its inputs */
    FRESH();
    uint8_t *p = memmem(b + l.off[Q8_SECTION_GRAPH], l.size[Q8_SECTION_GRAPH],
                        "node/with:odd name", 18);
    cr_assert(p);
    size_t code = (size_t)(p - b) + 18, in0 = code + 2 + 4; /* op code, n_in */
    int32_t bad = 1000;
    memcpy(b + in0, &bad, 4);
    reseal(b);
    expect_fail(b, len, "refers to tensor 1000");
    FRESH();
    uint16_t op = 60000;
    memcpy(b + code, &op, 2);
    reseal(b);
    expect_fail(b, len, "op code 60000");
    /* a dtype code that is not q8's (8 is string: never stored) */
    FRESH();
    b[t0] = 8;
    reseal(b);
    expect_fail(b, len, "invalid dtype");
    FRESH();
    b[t0 + 3] = Q8_ENC_VARINT; /* version 4's encoding in a version 3 file */
    reseal(b);
    expect_fail(b, len, "unknown encoding 3");

    /* version 3's weight layouts: the record of "w.lanes" ([3][5] int8 in
     * lanes16: 128 bytes): name, dtype, ndim, flags, enc, layout, dims[2],
     * data offset, size */
    FRESH();
    p = memmem(b + l.off[Q8_SECTION_GRAPH], l.size[Q8_SECTION_GRAPH], "w.lanes", 7);
    cr_assert(p);
    size_t lrec = (size_t)(p - b) + 7, lref = lrec + 5 + 16;
    uint64_t loff;
    memcpy(&loff, b + lref, 8);
    b[lrec + 4] = 9;
    reseal(b);
    expect_fail(b, len, "unknown layout 9");
    FRESH();
    b[lrec + 4] = Q8_LAYOUT_TAPS4; /* version 10's layout in a version 3 file */
    reseal(b);
    expect_fail(b, len, "unknown layout 3");
    FRESH();
    b[t0 + 4] = Q8_LAYOUT_LANES16; /* on the float32 tensor */
    reseal(b);
    expect_fail(b, len, "needs dense int8");
    FRESH();
    b[lrec + 4] = Q8_LAYOUT_ROWS4; /* the size says lanes16 */
    reseal(b);
    expect_fail(b, len, "layout rows4 needs 24");
    FRESH();
    u64 = 64;
    memcpy(b + lref + 8, &u64, 8);
    reseal(b);
    expect_fail(b, len, "layout lanes16 needs 128");
    FRESH();
    u64 = loff - 8; /* misaligned offset */
    memcpy(b + lref, &u64, 8);
    reseal(b);
    expect_fail(b, len, "not 64-byte aligned");
    FRESH();
    b[l.off[Q8_SECTION_DATA] + loff + 3 * 4] = 1; /* lane 3 of 3: padding */
    reseal(b);
    expect_fail(b, len, "non-zero padding in layout lanes16");
    FRESH();
    u64 = loff + 64; /* DATA truncated inside the weight */
    memcpy(b + l.entry[Q8_SECTION_DATA] + 16, &u64, 8);
    layout_t cut = l;
    cut.size[Q8_SECTION_DATA] = u64;
    reseal_with(b, cut);
    expect_fail(b, len, "runs past the");
    FRESH();
    u64 = l.off[Q8_SECTION_DATA] - 64; /* DATA no longer on a page */
    memcpy(b + l.entry[Q8_SECTION_DATA] + 8, &u64, 8);
    reseal(b);
    expect_fail(b, len, "not page (4096-byte) aligned");

    free(b);
    free(orig);
}

/* Where a byte string sits inside a section (the test fails if absent). */
static size_t find_in(const uint8_t *b, layout_t l, int kind, const char *what, size_t n) {
    const uint8_t *p = memmem(b + l.off[kind], l.size[kind], what, n);
    cr_assert(p, "'%.*s' not found", (int)n, what);
    return (size_t)(p - b);
}

/* Version 4 (docs/format.md, "GRAPH, version 4"): every field the compact
 * encoding added or changed, mutated in place (same length) and resealed. */
Test(q8file, corrupt_corpus_v4_fails_cleanly) {
    q8_graph *g = sample_graph();
    size_t len;
    uint8_t *orig = encode_v(g, 4, &len);
    q8_graph_free(g);
    uint8_t *b = malloc(len);
    layout_t l = read_layout(orig);
    uint64_t u64;
    size_t gs = l.off[Q8_SECTION_GRAPH], ge = gs + l.size[Q8_SECTION_GRAPH];
    /* the attribute table: count 8, then "f" (float) first: [1 'f' type f32] */
    cr_assert_eq(orig[gs], 8);
    cr_assert_eq(orig[gs + 2], 'f');
    FRESH();
    b[gs] = 0x7f; /* more entries than there are */
    reseal(b);
    expect_fail(b, len, "attribute table");
    FRESH();
    b[gs + 3] = 5; /* a subgraph */
    reseal(b);
    expect_fail(b, len, "attribute table: attribute 'f' has unknown type 5");
    FRESH();
    b[gs + 1] = 0xff; /* a name of 16383 bytes: past the limit */
    b[gs + 2] = 0x7f;
    reseal(b);
    expect_fail(b, len, "attribute table: truncated attribute");

    /* the first tensor: [shared 0, length 5] "w.f32", dtype, ndim, flags,
     * encoding, layout, dims 13 and 9 (zigzag: 26, 18), data offset 0, data
     * size 468 (2 bytes) */
    size_t t0 = find_in(orig, l, Q8_SECTION_GRAPH, "\x00\x05w.f32", 7) + 7;
    cr_assert_eq(orig[t0 + 5], 26);
    cr_assert_eq(orig[t0 + 7], 0);
    FRESH();
    b[t0 + 5] = 25; /* a negative dim */
    reseal(b);
    expect_fail(b, len, "negative or overflowing dims");
    FRESH();
    b[t0 + 2] = 0; /* not a constant: no encoding or layout bytes follow */
    reseal(b);
    expect_fail(b, len, "tensor 'w.f32'");
    FRESH();
    b[t0 + 9] = 0x7f; /* size 468 -> 16340: past DATA */
    reseal(b);
    expect_fail(b, len, "runs past");
    FRESH();
    b[t0 + 7] = 0x08; /* offset 8 with 468 bytes: not 64-aligned */
    reseal(b);
    expect_fail(b, len, "not 64-byte aligned");
    /* the second: front-coded, [shared 2 ("w."), length 11] "int8.sparse" */
    size_t t1 = find_in(orig, l, Q8_SECTION_GRAPH, "\x02\x0bint8.sparse", 13);
    FRESH();
    b[t1] = 6; /* shares more than "w.f32" has */
    reseal(b);
    expect_fail(b, len, "tensor 1 is truncated");
    /* ... dtype, ndim, flags, encoding, layout, dims 16 and 40, axis 0 */
    size_t ax = t1 + 13 + 5 + 2;
    cr_assert_eq(orig[ax - 2], 32);
    cr_assert_eq(orig[ax], 0);
    FRESH();
    b[ax] = 4; /* axis 2 of a 2-d tensor */
    reseal(b);
    expect_fail(b, len, "quantization axis 2 out of range");
    FRESH();
    memset(b + ax, 0xff, 11); /* a varint longer than 10 bytes */
    reseal(b);
    expect_fail(b, len, "truncated quantization parameters");
    FRESH();
    b[ax] = 3; /* axis -2 */
    reseal(b);
    expect_fail(b, len, "quantization axis -2 out of range");

    /* the int64 "shape" {1, -1, 7}: varints (zigzag 2, 1, 14): [0, 5] "shape",
     * dtype, ndim, flags, encoding 3, layout, dim 3 (6), offset (1 or 2
     * bytes), size 3 */
    size_t sh = find_in(orig, l, Q8_SECTION_GRAPH, "\x00\x05shape", 7) + 7;
    cr_assert_eq(orig[sh + 3], Q8_ENC_VARINT);
    cr_assert_eq(orig[sh + 5], 6);
    size_t shsize = sh + 7 + (orig[sh + 6] >= 0x80);
    cr_assert_eq(orig[shsize], 3);
    FRESH();
    b[t0 + 3] = Q8_ENC_VARINT; /* on the float32 tensor */
    reseal(b);
    expect_fail(b, len, "varint encoding of a float32 tensor");
    FRESH();
    b[shsize] = 2;
    reseal(b);
    expect_fail(b, len, "tensor 'shape': 3 values cannot fit in 2 varint bytes");
    size_t shoff = orig[sh + 6] & 0x7f;
    if (orig[sh + 6] >= 0x80) shoff |= (size_t)orig[sh + 7] << 7;
    cr_assert_eq(orig[l.off[Q8_SECTION_DATA] + shoff + 2], 14);
    FRESH();
    b[l.off[Q8_SECTION_DATA] + shoff + 2] |= 0x80; /* the last one continues */
    reseal(b);
    expect_fail(b, len, "tensor 'shape': varint 2 is truncated");
    FRESH();
    /* one byte more, starting one byte earlier (varints are stored last in
     * DATA: the one after them would be past its end): the byte before
     * reads as a varint of its own, and the last is left over */
    cr_assert(shoff >= 1 && orig[l.off[Q8_SECTION_DATA] + shoff - 1] < 0x80);
    cr_assert(orig[sh + 6] >= 0x80 && (shoff - 1) >> 7 == shoff >> 7, "a 2-byte offset");
    b[sh + 6] = (uint8_t)(((shoff - 1) & 0x7f) | 0x80);
    b[shsize] = 4;
    reseal(b);
    expect_fail(b, len, "tensor 'shape': 1 bytes after its 3 varints");
    FRESH();
    b[sh + 5] = 100; /* 50 values in 3 bytes */
    reseal(b);
    expect_fail(b, len, "50 values cannot fit in 3 varint bytes");

    /* the node: [0, 18] "node/with:odd name", op code 95, 6 inputs
     * (index + 1), 1 output, 8 attributes (table indices 0..7) */
    size_t nd = find_in(orig, l, Q8_SECTION_GRAPH, "\x00\x12node/with:odd name", 20) + 20;
    cr_assert_eq(orig[nd], 95);
    cr_assert_eq(orig[nd + 1], 6);
    cr_assert_eq(orig[nd + 4], 0); /* the absent input */
    cr_assert_eq(orig[nd + 10], 8);
    FRESH();
    b[nd] = 0xff; /* a two-byte code (127 + 6 * 128): nobody's */
    reseal(b);
    expect_fail(b, len, "which this q8 does not know");
    FRESH();
    b[nd + 2] = 0x7f;
    reseal(b);
    expect_fail(b, len, "input 0 refers to tensor 126 of 6");
    FRESH();
    b[nd + 11] = 8; /* one past the table */
    reseal(b);
    expect_fail(b, len, "not in the attribute table");
    FRESH();
    b[nd + 10] = 0x7f; /* more attributes than bytes */
    reseal(b);
    expect_fail(b, len, "bad attribute count");
    /* the graph's outputs: count 1, index 4 ("y"); the last byte */
    cr_assert_eq(orig[ge - 1], 4);
    FRESH();
    b[ge - 1] = 6;
    reseal(b);
    expect_fail(b, len, "graph output 0 refers to tensor 6 of 6");
    FRESH();
    b[ge - 2] = 0x7f; /* the output count */
    reseal(b);
    expect_fail(b, len, "bad graph output count");

    /* META: front-coded keys; "calib.samples" shares nothing with "producer" */
    size_t mk = find_in(orig, l, Q8_SECTION_META, "\x00\x0d" "calib.samples", 15);
    FRESH();
    b[mk] = 9; /* "producer" has 8 bytes */
    reseal(b);
    expect_fail(b, len, "META: entry 1 is truncated");
    FRESH();
    b[l.off[Q8_SECTION_META]] = 0x7f;
    reseal(b);
    expect_fail(b, len, "META: bad entry count");
    /* version 4's DATA need not start on a page: 64 bytes is enough */
    cr_assert_neq(l.off[Q8_SECTION_DATA] % 4096, 0);
    FRESH();
    u64 = l.off[Q8_SECTION_DATA] - 32;
    memcpy(b + l.entry[Q8_SECTION_DATA] + 8, &u64, 8);
    reseal(b);
    expect_fail(b, len, "not 64-byte aligned");
    free(b);
    free(orig);
}

/* Version 4 stores an all-zero constant with no bytes (encoding 4), reads it
 * back as zeros, and refuses the encoding with data or in version 3. */
Test(q8file, zero_constants_take_no_bytes) {
    q8_graph *g = q8_graph_new();
    g->opset = Q8_OPSET_CANONICAL;
    int64_t d[4] = {1, 4, 64, 64};
    int x = q8_graph_add_tensor(g, "x", NULL), y = q8_graph_add_tensor(g, "y", NULL);
    q8_tensor_set_shape(g->tensors[x], Q8_F32, d, 4);
    int z = add_const(g, "pad.zeros", Q8_F32, d, 4); /* zero-filled */
    int64_t d2[4] = {1, 8, 64, 64};
    q8_tensor_set_shape(g->tensors[y], Q8_F32, d2, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = y;
    int ni = q8_graph_add_node(g, "concat", "Concat");
    q8_node *n = g->nodes[ni];
    n->op = Q8_OP_CONCAT;
    int in[2] = {x, z};
    q8_node_set_io(n, in, 2, &y, 1, NULL);
    q8_node_set_attr(n, "axis", Q8_ATTR_INT)->i = 1;
    size_t len, l3;
    uint8_t *orig = encode_v(g, 4, &len), *v3 = encode_v(g, 3, &l3);
    layout_t l = read_layout(orig);
    cr_assert_eq(l.size[Q8_SECTION_DATA], 0, "64 KiB of zeros took %llu bytes",
                 (unsigned long long)l.size[Q8_SECTION_DATA]);
    cr_assert_gt(read_layout(v3).size[Q8_SECTION_DATA], 2000); /* a bitmask */
    q8_graph *h;
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(orig, len, &h, NULL, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *t = h->tensors[2];
    cr_assert_str_eq(t->name, "pad.zeros");
    cr_assert(t->owns_data);
    static const uint8_t zero[4 * 64 * 64 * 4];
    cr_assert_eq(memcmp(t->data, zero, sizeof zero), 0);
    q8_graph_free(h);
    /* its record: [shared 0, length 9] "pad.zeros", dtype, ndim, flags,
     * encoding 4, layout, dims 1 4 64 64 (zigzag 2 8 128: 2 bytes, 128),
     * offset 0, size 0 */
    uint8_t *b = malloc(len);
    size_t r = find_in(orig, l, Q8_SECTION_GRAPH, "\x00\x09pad.zeros", 11) + 11;
    cr_assert_eq(orig[r + 3], Q8_ENC_ZEROS);
    size_t size_at = r + 5 + 1 + 1 + 2 + 2 + 1;
    cr_assert_eq(orig[size_at - 1], 0);
    cr_assert_eq(orig[size_at], 0);
    FRESH();
    b[size_at] = 1;
    reseal(b);
    expect_fail(b, len, "runs past"); /* DATA is empty */
    FRESH();
    b[r + 3] = 9;
    reseal(b);
    expect_fail(b, len, "unknown encoding 9");
    free(b);
    /* version 3 knows no such encoding: the first tensor of v3 is "x", the
     * zeros are the third: [len 9] "pad.zeros", dtype, ndim, flags, encoding */
    layout_t l3t = read_layout(v3);
    size_t r3 = find_in(v3, l3t, Q8_SECTION_GRAPH, "pad.zeros", 9) + 9;
    cr_assert_eq(v3[r3 + 3], Q8_ENC_BITMASK);
    v3[r3 + 3] = Q8_ENC_ZEROS;
    reseal_with(v3, l3t);
    expect_fail(v3, l3, "unknown encoding 4");
    free(v3);
    free(orig);
    q8_graph_free(g);
}

/* Version 4 stores each distinct attribute once and front-codes names:
 * a chain of convolutions with the same attributes and long shared names
 * takes a fraction of version 3's GRAPH, and reads back the same. Big DATA
 * (64 pages or more) still starts on a page. */
Test(q8file, compact_graph_is_smaller_and_equal) {
    q8_graph *g = q8_graph_new();
    g->opset = Q8_OPSET_CANONICAL;
    int64_t xd[4] = {1, 8, 8, 8}, wd[4] = {8, 8, 3, 3}, big[1] = {300000};
    char name[128];
    int prev = q8_graph_add_tensor(g, "/backbone/stage0/input", NULL);
    q8_tensor_set_shape(g->tensors[prev], Q8_F32, xd, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = prev;
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "/backbone/stage%d/conv/Conv.weight", i);
        int w = add_const(g, name, Q8_F32, wd, 4);
        ((float *)g->tensors[w]->data)[i] = 1.0f;
        snprintf(name, sizeof name, "/backbone/stage%d/conv/Conv_output_0", i);
        int y = q8_graph_add_tensor(g, name, NULL);
        q8_tensor_set_shape(g->tensors[y], Q8_F32, xd, 4);
        snprintf(name, sizeof name, "/backbone/stage%d/conv/Conv", i);
        int ni = q8_graph_add_node(g, name, "Conv"); /* g->nodes may move */
        q8_node *n = g->nodes[ni];
        n->op = Q8_OP_CONV;
        int in[2] = {prev, w};
        q8_node_set_io(n, in, 2, &y, 1, NULL);
        const char *names[3] = {"pads", "strides", "kernel_shape"};
        for (int k = 0; k < 3; k++) {
            q8_attr *a = q8_node_set_attr(n, names[k], Q8_ATTR_INTS);
            a->n = k == 0 ? 4 : 2;
            a->ints = malloc(sizeof(int64_t) * 4);
            for (int j = 0; j < a->n; j++) a->ints[j] = k == 2 ? 3 : 1;
        }
        q8_node_set_attr(n, "group", Q8_ATTR_INT)->i = 1;
        prev = y;
    }
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = prev;
    size_t l3, l4;
    uint8_t *b3 = encode_v(g, 3, &l3), *b4 = encode_v(g, 4, &l4);
    layout_t f3 = read_layout(b3), f4 = read_layout(b4);
    cr_assert_lt(f4.size[Q8_SECTION_GRAPH] * 4, f3.size[Q8_SECTION_GRAPH], "v4 %llu, v3 %llu",
                 (unsigned long long)f4.size[Q8_SECTION_GRAPH],
                 (unsigned long long)f3.size[Q8_SECTION_GRAPH]);
    cr_assert_lt(f4.size[Q8_SECTION_META], f3.size[Q8_SECTION_META]);
    cr_assert_neq(f4.off[Q8_SECTION_DATA] % 4096, 0); /* 20 x 2.3 KiB */
    for (int v = 3; v <= 4; v++) {
        q8_graph *h;
        q8_error err = {0};
        cr_assert_eq(q8_file_parse(v == 3 ? b3 : b4, v == 3 ? l3 : l4, &h, NULL, &err), Q8_OK,
                     "%s", err.msg);
        cr_assert_eq(h->n_nodes, 20);
        for (int i = 0; i < 20; i++) {
            const q8_node *a = g->nodes[i], *c = h->nodes[i];
            cr_assert_str_eq(a->name, c->name);
            cr_assert_eq(c->n_attrs, 4);
            int cnt;
            const int64_t *p = q8_attr_ints(c, "pads", &cnt);
            cr_assert(p && cnt == 4 && p[3] == 1);
            p = q8_attr_ints(c, "kernel_shape", &cnt);
            cr_assert(p && cnt == 2 && p[1] == 3);
            cr_assert_eq(q8_attr_int(c, "group", 0), 1);
            cr_assert_eq(memcmp(c->inputs, a->inputs, 2 * sizeof(int)), 0);
            cr_assert_str_eq(h->tensors[c->inputs[1]]->name, g->tensors[a->inputs[1]]->name);
        }
        q8_graph_free(h);
    }
    free(b3);
    free(b4);
    /* a constant of 1.2 MB: DATA starts on a page again */
    int t = add_const(g, "big", Q8_F32, big, 1);
    for (int i = 0; i < 300000; i++) ((float *)g->tensors[t]->data)[i] = (float)(i + 1);
    int ni = q8_graph_add_node(g, "add", "Add");
    q8_node *n = g->nodes[ni];
    n->op = Q8_OP_ADD;
    int y = q8_graph_add_tensor(g, "sum", NULL);
    q8_tensor_set_shape(g->tensors[y], Q8_F32, big, 1);
    int in[2] = {t, t};
    q8_node_set_io(n, in, 2, &y, 1, NULL);
    b4 = encode_v(g, 4, &l4);
    cr_assert_eq(read_layout(b4).off[Q8_SECTION_DATA] % 4096, 0);
    free(b4);
    q8_graph_free(g);
}

static void truncations_and_flips(uint32_t version) {
    q8_graph *g = sample_graph();
    size_t len;
    uint8_t *orig = encode_v(g, version, &len);
    q8_graph_free(g);
    for (size_t n = 0; n < len; n += 7) {
        q8_graph *h = NULL;
        q8_error err = {0};
        cr_assert_neq(q8_file_parse(orig, n, &h, NULL, &err), Q8_OK);
        cr_assert(err.msg[0]);
    }
    uint8_t *b = malloc(len);
    for (size_t i = 0; i < len; i += 3) {
        memcpy(b, orig, len);
        b[i] ^= 0x5a;
        q8_graph *h = NULL;
        q8_error err = {0};
        /* Flips inside alignment padding are harmless; everything else must
         * be caught (checksums) and never crash. */
        if (q8_file_parse(b, len, &h, NULL, &err) == Q8_OK) q8_graph_free(h);
        else cr_assert(err.msg[0]);
    }
    free(b);
    free(orig);
}

Test(q8file, every_truncation_and_byte_flip_fails_cleanly) {
    truncations_and_flips(Q8_FILE_VERSION);
    truncations_and_flips(4);
    truncations_and_flips(3);
}

/* Version 5: META and GRAPH deflated; the same records as version 4, and
 * every new field (flags, inflated size, the stream) checked. */
Test(q8file, corrupt_corpus_v5_deflated_fails_cleanly) {
    q8_graph *g = sample_graph();
    size_t len, len4;
    uint8_t *orig = encode_v(g, 5, &len), *v4 = encode_v(g, 4, &len4);
    q8_graph_free(g);
    layout_t l = read_layout(orig), l4 = read_layout(v4);
    uint32_t flags, inflated;
    memcpy(&flags, orig + l.entry[Q8_SECTION_GRAPH] + 4, 4);
    memcpy(&inflated, orig + l.entry[Q8_SECTION_GRAPH] + 28, 4);
    cr_assert_eq(flags, 1);
    cr_assert_eq(inflated, l4.size[Q8_SECTION_GRAPH]);
    cr_assert_lt(l.size[Q8_SECTION_GRAPH], inflated);
    /* the same records: read back and written as version 4, byte-identical */
    q8_graph *h = NULL;
    q8_meta m = {0};
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(orig, len, &h, &m, &err), Q8_OK, "%s", err.msg);
    uint8_t *again;
    size_t again_len;
    cr_assert_eq(q8_file_encode_version(h, &m, 4, &again, &again_len, &err), Q8_OK);
    cr_assert_eq(again_len, len4);
    cr_assert(memcmp(again, v4, len4) == 0);
    free(again);
    q8_graph_free(h);
    q8_meta_free(&m);

    uint8_t *b = malloc(len);
    uint32_t u32;
    const uint64_t ge = l.entry[Q8_SECTION_GRAPH], go = l.off[Q8_SECTION_GRAPH];
    FRESH();
    u32 = 0xffffffffu; /* a zip bomb's claim: refused before allocating */
    memcpy(b + ge + 28, &u32, 4);
    reseal(b);
    expect_fail(b, len, "GRAPH section: declares 4294967295 bytes");
    FRESH();
    u32 = (uint32_t)l.size[Q8_SECTION_GRAPH] * 1032 + 1032; /* past deflate's best ratio */
    memcpy(b + ge + 28, &u32, 4);
    reseal(b);
    expect_fail(b, len, "GRAPH section: declares");
    FRESH();
    u32 = 0;
    memcpy(b + ge + 28, &u32, 4);
    reseal(b);
    expect_fail(b, len, "GRAPH section: declares 0 bytes");
    FRESH();
    u32 = inflated + 1;
    memcpy(b + ge + 28, &u32, 4);
    reseal(b);
    expect_fail(b, len, "GRAPH section: fewer bytes than the table says");
    FRESH();
    u32 = inflated - 1;
    memcpy(b + ge + 28, &u32, 4);
    reseal(b);
    expect_fail(b, len, "GRAPH section: more bytes than the table says");
    FRESH();
    b[go] ^= 0xff; /* the zlib header */
    reseal(b);
    expect_fail(b, len, "GRAPH section: bad compressed stream");
    FRESH();
    b[go + l.size[Q8_SECTION_GRAPH] - 1] ^= 0x01; /* the stream's Adler-32 */
    reseal(b);
    expect_fail(b, len, "GRAPH section: bad compressed stream");
    FRESH();
    layout_t cut = l; /* the stream cut short: the table says fewer bytes */
    cut.size[Q8_SECTION_GRAPH] /= 2;
    memcpy(b + ge + 16, &cut.size[Q8_SECTION_GRAPH], 8);
    reseal_with(b, cut);
    expect_fail(b, len, "GRAPH section: truncated stream");
    FRESH();
    u32 = 3; /* an unknown flag */
    memcpy(b + ge + 4, &u32, 4);
    reseal(b);
    expect_fail(b, len, "GRAPH section: unknown flags 0x3");
    FRESH();
    u32 = 1;
    memcpy(b + l.entry[Q8_SECTION_DATA] + 4, &u32, 4);
    reseal(b);
    expect_fail(b, len, "DATA section: marked deflated");
    FRESH();
    memcpy(b + l.entry[Q8_SECTION_DATA] + 28, &inflated, 4);
    reseal(b);
    expect_fail(b, len, "DATA section: an inflated size");
    FRESH();
    u32 = 0; /* not marked deflated: the stream read as records */
    memcpy(b + ge + 4, &u32, 4);
    memcpy(b + ge + 28, &u32, 4);
    reseal(b);
    q8_graph *bad = NULL;
    cr_assert_neq(q8_file_parse(b, len, &bad, NULL, &err), Q8_OK);
    cr_assert(err.msg[0]);
    FRESH();
    b[l.entry[Q8_SECTION_META] + 28] ^= 0x01; /* META's inflated size */
    reseal(b);
    expect_fail(b, len, "META section:");
    free(b);
    free(orig);
    free(v4);
}

/* The file's numbers are its own and stable: every op, dtype and attribute
 * type has a unique non-zero code, and a few are pinned to the numbers
 * docs/format.md gives (a change there breaks every file ever written). */
Test(q8file, codes_are_unique_and_stable) {
    bool seen[65536] = {0};
    for (int i = 1; i < Q8_OP_COUNT; i++) {
        uint16_t c = q8_code_of_op((q8_op_id)i);
        cr_assert_neq(c, 0, "op %s has no .q8 code (formats/q8/codes.c)", q8_op_name((q8_op_id)i));
        cr_assert(!seen[c], "op code %u used twice", c);
        seen[c] = true;
        cr_assert_eq((int)q8_op_of_code(c), i);
    }
    cr_assert_eq(q8_code_of_op(Q8_OP_RELU), 1);
    cr_assert_eq(q8_code_of_op(Q8_OP_QCONV), 93);
    cr_assert_eq(q8_op_of_code(0), Q8_OP_NONE);
    for (int t = 1; t < Q8_DTYPE_COUNT; t++) {
        uint8_t c = q8_code_of_dtype((q8_dtype)t);
        cr_assert_neq(c, 0, "dtype %s has no code", q8_dtype_name((q8_dtype)t));
        cr_assert_eq((int)q8_dtype_of_code(c), t);
    }
    cr_assert_eq(q8_code_of_dtype(Q8_F32), 1);
    cr_assert_eq(q8_code_of_dtype(Q8_I8), 3);
    cr_assert_eq(q8_code_of_dtype(Q8_BF16), 16);
    q8_attr_type at;
    cr_assert(q8_attr_of_code(7, &at) && at == Q8_ATTR_INTS);
    cr_assert(!q8_attr_of_code(0, &at) && !q8_attr_of_code(9, &at));
}

Test(q8file, crc32c_matches_known_values) {
    /* RFC 3720 test vector and the classic "123456789" check value. */
    cr_assert_eq(q8_crc32c(0, "123456789", 9), 0xe3069283u);
    uint8_t zeros[32] = {0};
    cr_assert_eq(q8_crc32c(0, zeros, 32), 0x8a9136aau);
    q8t_rng r = q8t_seed(1);
    uint8_t buf[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (uint8_t)q8t_next(&r);
    for (size_t n = 0; n < 1000; n += 37)
        cr_assert_eq(q8_crc32c(0, buf, n), q8_crc32c_portable(0, buf, n));
    /* incremental */
    cr_assert_eq(q8_crc32c(q8_crc32c(0, buf, 400), buf + 400, 600), q8_crc32c(0, buf, 1000));
}

/* Version 7: 16-bit scales. A v7 file with its GRAPH stored inflated (a
 * writer may store it so), for mutating records in place. */
static uint8_t *inflate_graph(const uint8_t *buf, size_t *len, layout_t *out) {
    layout_t l = read_layout(buf);
    uint32_t flags, inflated;
    memcpy(&flags, buf + l.entry[Q8_SECTION_GRAPH] + 4, 4);
    memcpy(&inflated, buf + l.entry[Q8_SECTION_GRAPH] + 28, 4);
    cr_assert_eq(flags, Q8_SECTION_DEFLATED);
    uint8_t *raw;
    q8_error err = {0};
    cr_assert_eq(q8_zsection_inflate("GRAPH", buf + l.off[Q8_SECTION_GRAPH],
                                     l.size[Q8_SECTION_GRAPH], inflated, &raw, &err), Q8_OK);
    cr_assert_lt(l.off[Q8_SECTION_GRAPH], l.off[Q8_SECTION_DATA]);
    layout_t n = l;
    n.size[Q8_SECTION_GRAPH] = inflated;
    n.off[Q8_SECTION_DATA] = (l.off[Q8_SECTION_GRAPH] + inflated + 63) / 64 * 64;
    uint64_t total = (n.off[Q8_SECTION_DATA] + l.size[Q8_SECTION_DATA] + 63) / 64 * 64;
    uint8_t *b = calloc(1, total);
    memcpy(b, buf, l.off[Q8_SECTION_GRAPH]);
    memcpy(b + n.off[Q8_SECTION_GRAPH], raw, inflated);
    memcpy(b + n.off[Q8_SECTION_DATA], buf + l.off[Q8_SECTION_DATA], l.size[Q8_SECTION_DATA]);
    free(raw);
    uint32_t zero = 0;
    memcpy(b + 16, &total, 8);
    memcpy(b + n.entry[Q8_SECTION_GRAPH] + 4, &zero, 4);
    memcpy(b + n.entry[Q8_SECTION_GRAPH] + 16, &n.size[Q8_SECTION_GRAPH], 8);
    memcpy(b + n.entry[Q8_SECTION_GRAPH] + 28, &zero, 4);
    memcpy(b + n.entry[Q8_SECTION_DATA] + 8, &n.off[Q8_SECTION_DATA], 8);
    reseal_with(b, n);
    *len = total;
    *out = n;
    return b;
}

/* quantize's rounding: the smallest float with 12 significant bits >= s */
Test(q8file, scale16_ceil_is_the_next_16bit_float) {
    uint32_t base;
    float s = 1.0f / 127.0f, c = q8_scale16_ceil(s);
    cr_assert(c >= s && (c - s) / s <= 0x1p-11f, "%a -> %a", s, c);
    cr_assert(q8_scale16_fits(&c, 1, &base));
    cr_assert_lt(c - 0x1p-18f, s, "%a is not the smallest", c); /* its spacing at 2^-7 */
    cr_assert_eq(q8_scale16_ceil(c), c);
    cr_assert_eq(q8_scale16_ceil(0x1.fffffep-3f), 0.25f); /* carries into the next binade */
    cr_assert_eq(q8_scale16_ceil(0x1p-140f), 0x1p-140f); /* subnormal: kept, does not fit */
    float two[2] = {1.0f, 0x1p-40f}; /* 41 binades apart: more than 32 */
    cr_assert_not(q8_scale16_fits(two, 2, &base));
    two[1] = 0x1p-31f;
    cr_assert(q8_scale16_fits(two, 2, &base));
    cr_assert_eq(base, 127 - 31);
    float back;
    cr_assert(q8_scale16_unpack(q8_scale16_pack(c, 100), 100, &back) && back == c);
    cr_assert_not(q8_scale16_unpack(0xffff, 240, &back)); /* past 254: not a float */
    cr_assert_not(q8_scale16_unpack(0, 0, &back));
}

/* A tensor whose scales have the 16-bit form is stored with 2 bytes a
 * scale and reads back bit for bit; others keep float32 scales. */
Test(q8file, scales16_are_smaller_and_exact) {
    q8_graph *g = sample_graph();
    q8_tensor *st = g->tensors[q8_graph_find(g, "w.int8.sparse")];
    for (int i = 0; i < 16; i++) st->q.scale[i] = q8_scale16_ceil(0.01f * (float)(i + 1));
    size_t len, len6, rlen, rlen6;
    uint8_t *v7 = encode_v(g, 7, &len), *v6 = encode_v(g, 6, &len6);
    layout_t l, l6;
    uint8_t *raw = inflate_graph(v7, &rlen, &l), *raw6 = inflate_graph(v6, &rlen6, &l6);
    /* 16 scales: 32 bytes less, 1 more for the base exponent */
    cr_assert_eq(l.size[Q8_SECTION_GRAPH] + 31, l6.size[Q8_SECTION_GRAPH]);
    const uint8_t *files[3] = {v7, raw, v6};
    const size_t lens[3] = {len, rlen, len6};
    for (int f = 0; f < 3; f++) {
        q8_graph *h = NULL;
        q8_error err = {0};
        cr_assert_eq(q8_file_parse(files[f], lens[f], &h, NULL, &err), Q8_OK, "%s", err.msg);
        const q8_tensor *ht = h->tensors[q8_graph_find(h, "w.int8.sparse")];
        cr_assert_eq(ht->q.n, 16);
        cr_assert(memcmp(ht->q.scale, st->q.scale, 16 * sizeof(float)) == 0);
        cr_assert_eq(h->tensors[q8_graph_find(h, "x")]->q.scale[0], 0.05f);
        q8_graph_free(h);
    }
    /* the record: [shared 2, length 11] "int8.sparse", dtype, ndim, flags,
     * encoding, layout, dims 16 and 40, axis 0, base, 16 x u16 */
    size_t t1 = find_in(raw, l, Q8_SECTION_GRAPH, "\x02\x0bint8.sparse", 13);
    cr_assert_eq(raw[t1 + 15], 1 | 2 | 16);
    cr_assert_eq(raw[t1 + 20], 0);
    uint8_t *b = malloc(rlen);
    const uint8_t *orig = raw;
    len = rlen;
#undef FRESH
#define FRESH() memcpy(b, orig, len)
    FRESH();
    b[t1 + 21] = 0; /* base exponent 0: below every normal float */
    reseal(b);
    expect_fail(b, len, "tensor 'w.int8.sparse': 16-bit scale 0 (");
    expect_fail(b, len, "is not a finite float");
    FRESH();
    size_t t0 = find_in(raw, l, Q8_SECTION_GRAPH, "\x00\x05w.f32", 7) + 7;
    b[t0 + 2] |= 16; /* 16-bit scales on a tensor without scales */
    reseal(b);
    expect_fail(b, len, "tensor 'w.f32': 16-bit scales without quantization parameters");
    /* every byte of the 16-bit record changed and resealed: a clean error
     * or a valid file, never a crash or a read past the record */
    for (size_t i = t1; i < t1 + 22 + 2 * 16 + 4; i++)
        for (int v = 0; v < 3; v++) {
            FRESH();
            b[i] = v == 0 ? (uint8_t)(b[i] ^ 0xff) : v == 1 ? 0x80 : 0;
            reseal(b);
            q8_graph *h = NULL;
            q8_error err = {0};
            if (q8_file_parse(b, len, &h, NULL, &err) == Q8_OK) q8_graph_free(h);
            else cr_assert(err.msg[0]);
        }
    /* the same flag in a version 6 file: a bit that version does not define */
    free(b);
    b = malloc(rlen6);
    orig = raw6;
    len = rlen6;
    l = l6;
    FRESH();
    b[find_in(raw6, l6, Q8_SECTION_GRAPH, "\x02\x0bint8.sparse", 13) + 15] |= 16;
    reseal(b);
    expect_fail(b, len, "tensor 'w.int8.sparse': unknown flags 0x13");
    free(b);
    free(raw);
    free(raw6);
    free(v7);
    free(v6);
    q8_graph_free(g);
}

/* Version 8: a constant expanded at load anyway (where the bitmask form
 * would be stored) is stored deflated when that is smaller: a QLut-like
 * [8, 256] table of runs round-trips; a damaged stream, a stream one byte
 * short and the encoding in a version 7 file are refused with one line. */
Test(q8file, deflated_tables_round_trip_and_fail_cleanly) {
    int64_t td[2] = {8, 256};
    q8_graph *g = const_output_graph("table", td);
    int8_t *v = g->tensors[q8_graph_find(g, "table")]->data;
    for (int r = 0; r < 8; r++) /* a clipped ramp: zeros, a slope, a flat top */
        for (int i = 0; i < 256; i++) {
            int y = (i - 128 - 10 * r) / 3;
            v[r * 256 + i] = (int8_t)(y < 0 ? 0 : y > 100 ? 100 : y);
        }
    size_t len;
    uint8_t *orig = encode(g, &len), *b = malloc(len);
    layout_t l = read_layout(orig);
    q8_graph *h = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(orig, len, &h, NULL, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *ht = h->tensors[q8_graph_find(h, "table")];
    cr_assert(ht->owns_data, "inflated into memory of its own");
    cr_assert_eq(memcmp(ht->data, v, 8 * 256), 0);
    q8_graph_free(h);
    /* the stream is DATA's only content: well under the bitmask form */
    uint64_t doff = l.off[Q8_SECTION_DATA], dsize = l.size[Q8_SECTION_DATA];
    cr_assert_lt(dsize, 256, "deflated: %llu bytes", (unsigned long long)dsize);
    FRESH();
    b[doff + dsize / 2] ^= 0x5a;
    reseal(b);
    expect_fail(b, len, "tensor 'table': deflated data:");
    FRESH();
    uint32_t v7 = 7;
    memcpy(b + 8, &v7, 4);
    reseal(b);
    expect_fail(b, len, "tensor 'table': unknown encoding 5");
    free(orig);
    free(b);
    q8_graph_free(g);
}


/* A pruned INT8 weight (half its values zero, the rest spread as real
 * weights are) has few repeats for LZ77: zlib's default strategy stores it
 * larger than the bitmask form, Huffman codes alone smaller. The writer
 * tries both: stored deflated, under the bitmask form's size, and read
 * back exactly. */
Test(q8file, pruned_weights_deflate_below_the_bitmask_form) {
    int64_t wd[2] = {64, 576};
    q8_graph *g = const_output_graph("w", wd);
    int8_t *v = g->tensors[q8_graph_find(g, "w")]->data;
    uint32_t s = 12345, nnz = 0;
    for (int i = 0; i < 64 * 576; i++) {
        s = s * 1664525u + 1013904223u;
        int mag = 1 + (int)((s >> 8) % 64) + (int)((s >> 16) % 64); /* 1..127, peaked */
        bool kept = (s >> 28) & 1;
        v[i] = (int8_t)(kept ? ((s >> 27) & 1 ? mag : -mag) : 0);
        nnz += kept;
    }
    size_t len;
    uint8_t *b = encode(g, &len);
    layout_t l = read_layout(b);
    uint64_t bitmask_form = 64 * 576 / 8 + nnz;
    cr_assert_lt(l.size[Q8_SECTION_DATA], bitmask_form, "%llu bytes stored, bitmask form %llu",
                 (unsigned long long)l.size[Q8_SECTION_DATA], (unsigned long long)bitmask_form);
    q8_graph *h = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(b, len, &h, NULL, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *ht = h->tensors[q8_graph_find(h, "w")];
    cr_assert(ht->owns_data, "inflated into memory of its own");
    cr_assert_eq(memcmp(ht->data, v, 64 * 576), 0);
    q8_graph_free(h);
    free(b);
    q8_graph_free(g);
}

/* Dense INT8 weights (no zero among them, spread as trained weights are:
 * most near 0) are used in place from the mapping by default, whatever
 * deflate would save; with q8_file_options.deflate_all they are stored
 * deflated when that is smaller and read back exactly, into memory of
 * their own. Bytes that deflate cannot shrink (uniform noise) stay dense
 * and in place either way. */
Test(q8file, dense_weights_deflate_only_when_asked) {
    int64_t wd[2] = {64, 576};
    q8_graph *g = const_output_graph("w", wd);
    int8_t *v = g->tensors[q8_graph_find(g, "w")]->data;
    uint32_t s = 777;
    for (int i = 0; i < 64 * 576; i++) {
        s = s * 1664525u + 1013904223u;
        int mag = 1 + (int)((s >> 8) % 64) * (int)((s >> 16) % 64) / 32; /* 1..125, peaked at 1 */
        v[i] = (int8_t)((s >> 27) & 1 ? mag : -mag);
    }
    q8_file_options all = {.deflate_all = true};
    for (int noise = 0; noise < 2; noise++) {
        if (noise)
            for (int i = 0; i < 64 * 576; i++) {
                s = s * 1664525u + 1013904223u;
                v[i] = (int8_t)(s >> 24);
            }
        for (int opt = 0; opt < 2; opt++) {
            uint8_t *b;
            size_t len;
            q8_error err = {0};
            cr_assert_eq(q8_file_encode_opts(g, NULL, opt ? &all : NULL, &b, &len, &err), Q8_OK,
                         "%s", err.msg);
            layout_t l = read_layout(b);
            bool deflated = opt && !noise;
            if (deflated)
                cr_assert_lt(l.size[Q8_SECTION_DATA], 64 * 576 * 15 / 16, "%llu bytes stored",
                             (unsigned long long)l.size[Q8_SECTION_DATA]);
            else
                cr_assert_geq(l.size[Q8_SECTION_DATA], 64 * 576, "stored dense");
            q8_graph *h = NULL;
            cr_assert_eq(q8_file_parse(b, len, &h, NULL, &err), Q8_OK, "%s", err.msg);
            const q8_tensor *ht = h->tensors[q8_graph_find(h, "w")];
            cr_assert_eq(ht->owns_data, deflated, "noise %d, deflate_all %d", noise, opt);
            cr_assert_eq(memcmp(ht->data, v, 64 * 576), 0);
            q8_graph_free(h);
            free(b);
        }
    }
    q8_graph_free(g);
}

/* buf (of layout l) relabelled as version v and resealed: refused with msg. */
static void expect_fail_as_version(uint8_t *buf, size_t len, layout_t l, uint32_t v,
                                   const char *msg) {
    memcpy(buf + 8, &v, 4);
    reseal_with(buf, l);
    expect_fail(buf, len, msg);
}

/* Version 9: bitmask data (expanded at load, never read in place) is
 * stored at any offset: after a 5-byte varint constant it starts at DATA
 * offset 5 and reads back exactly; the same bytes labelled version 8 are
 * refused (the rule of version 8 and before: 64-byte aligned). */
Test(q8file, bitmask_data_unaligned_since_version_9) {
    int64_t wd[2] = {16, 8}, bd[1] = {5};
    q8_graph *g = q8_graph_new();
    g->opset = Q8_OPSET_CANONICAL;
    int b = add_const(g, "b", Q8_I32, bd, 1); /* the varint first: the bitmask data after it */
    add_const(g, "w", Q8_I8, wd, 2);
    g->outputs = malloc(2 * sizeof(int));
    g->outputs[g->n_outputs++] = b;
    g->outputs[g->n_outputs++] = q8_graph_find(g, "w");
    int32_t *bv = g->tensors[b]->data;
    for (int i = 0; i < 5; i++) bv[i] = i - 2;
    int8_t *v = g->tensors[q8_graph_find(g, "w")]->data;
    uint32_t s = 99;
    for (int i = 0; i < 128; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (int8_t)(i % 2 ? 0 : (int)(s >> 24) % 127 + 1);
    }
    size_t len;
    uint8_t *orig = encode(g, &len), *bb = malloc(len);
    layout_t l = read_layout(orig);
    cr_assert_eq(l.size[Q8_SECTION_DATA], 5 + 16 + 64, "varints, then mask and values, no gap");
    q8_graph *h = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(orig, len, &h, NULL, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(memcmp(h->tensors[q8_graph_find(h, "w")]->data, v, 128), 0);
    cr_assert_eq(memcmp(h->tensors[q8_graph_find(h, "b")]->data, bv, 20), 0);
    q8_graph_free(h);
    memcpy(bb, orig, len);
    expect_fail_as_version(bb, len, l, 8, "tensor 'w': data at offset 5 is not 64-byte aligned");
    free(orig);
    free(bb);
    q8_graph_free(g);
}

/* Version 9: a constant under 64 bytes is aligned to its element's size,
 * not to 8 bytes: two float scalars and two int8 scalars take 10 bytes of
 * DATA (25 in version 8) and read back exactly; a float moved to offset 5
 * is refused, and so are the version 9 bytes labelled version 8 (its
 * second float is not 8-aligned). */
Test(q8file, small_constants_aligned_to_their_element_since_version_9) {
    q8_graph *g = q8_graph_new();
    g->opset = Q8_OPSET_CANONICAL;
    const char *names[4] = {"s0", "z0", "s1", "z1"};
    g->outputs = malloc(4 * sizeof(int));
    for (int i = 0; i < 4; i++) {
        int t = add_const(g, names[i], i % 2 ? Q8_I8 : Q8_F32, NULL, 0);
        if (i % 2) *(int8_t *)g->tensors[t]->data = (int8_t)(-3 * i);
        else *(float *)g->tensors[t]->data = 0.25f * (float)(i + 1);
        g->outputs[g->n_outputs++] = t;
    }
    size_t len, len8;
    uint8_t *orig = encode(g, &len), *b8 = encode_v(g, 8, &len8);
    layout_t l = read_layout(orig), l8 = read_layout(b8);
    cr_assert_eq(l.size[Q8_SECTION_DATA], 10);
    cr_assert_eq(l8.size[Q8_SECTION_DATA], 25);
    q8_graph *h = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(orig, len, &h, NULL, &err), Q8_OK, "%s", err.msg);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(memcmp(h->tensors[q8_graph_find(h, names[i])]->data,
                            g->tensors[q8_graph_find(g, names[i])]->data, i % 2 ? 1 : 4), 0);
    q8_graph_free(h);
    /* version 9 checks its own rule: s1's data moved to offset 5 (its
     * record: name, dtype, ndim, flags, encoding, layout, then the offset) */
    size_t blen;
    layout_t bl;
    uint8_t *bad = inflate_graph(orig, &blen, &bl);
    size_t at = find_in(bad, bl, Q8_SECTION_GRAPH, "s1", 2) + 2 + 5;
    cr_assert_eq(bad[at], 4, "s1's data offset");
    cr_assert_eq(q8_file_parse(bad, blen, &h, NULL, &err), Q8_OK, "%s", err.msg);
    q8_graph_free(h);
    bad[at] = 5;
    reseal_with(bad, bl);
    expect_fail(bad, blen, "tensor 's1': data at offset 5 is not 4-byte aligned");
    free(bad);
    expect_fail_as_version(orig, len, l, 8, "tensor 's1': data at offset 4 is not 8-byte aligned");
    free(orig);
    free(b8);
    q8_graph_free(g);
}
