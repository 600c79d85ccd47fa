/* The model's heads (src/quant/heads.c, quantize --fp32-heads): the
 * weighted layers that write the outputs, and those that feed them. */
#include <stdlib.h>
#include <string.h>

#include "quantize.h"
#include "testutil.h"

#define T q8t_tensor

static void weight(q8_graph *g, const char *name, int64_t m, int64_t c) {
    int t = T(g, name);
    int64_t d[4] = {m, c, 1, 1};
    q8_tensor_set_shape(g->tensors[t], Q8_F32, d, 4);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    memset(g->tensors[t]->data, 0, sizeof(float) * (size_t)(m * c));
}

static void node(q8_graph *g, const char *op, int n_in, const char **in, const char *out) {
    int ii[4], oo = T(g, out);
    for (int i = 0; i < n_in; i++) ii[i] = T(g, in[i]);
    int k = q8_graph_add_node(g, out, op);
    cr_assert_eq(q8_node_set_io(g->nodes[k], ii, n_in, &oo, 1, NULL), Q8_OK);
}

static void output(q8_graph *g, const char *name) {
    g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
    g->outputs[g->n_outputs++] = T(g, name);
}

/* x -> Conv trunk (c_trunk x 64) -> Relu -> two heads of two 1x1 convs
 * each: b (2 x c_trunk) -> Relu -> c (1 x 2) -> Sigmoid -> out1, and d
 * (2 x c_trunk) -> e (3 x 2) -> out2; a MatMul of two activations (not a
 * weighted layer) between e and out2 when via_matmul. */
static q8_graph *make(int64_t c_trunk, bool via_matmul) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x");
    int64_t xd[4] = {1, 64, 2, 2};
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 4);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    weight(g, "wt", c_trunk, 64);
    weight(g, "wb", 2, c_trunk);
    weight(g, "wc", 1, 2);
    weight(g, "wd", 2, c_trunk);
    weight(g, "we", 3, 2);
    node(g, "Conv", 2, (const char *[]){"x", "wt"}, "trunk");
    node(g, "Relu", 1, (const char *[]){"trunk"}, "t");
    node(g, "Conv", 2, (const char *[]){"t", "wb"}, "b");
    node(g, "Relu", 1, (const char *[]){"b"}, "br");
    node(g, "Conv", 2, (const char *[]){"br", "wc"}, "c");
    node(g, "Sigmoid", 1, (const char *[]){"c"}, "out1");
    node(g, "Conv", 2, (const char *[]){"t", "wd"}, "d");
    node(g, "Conv", 2, (const char *[]){"d", "we"}, "e");
    if (via_matmul) {
        node(g, "MatMul", 2, (const char *[]){"e", "e"}, "out2");
    } else {
        node(g, "Relu", 1, (const char *[]){"e"}, "out2");
    }
    output(g, "out1");
    output(g, "out2");
    return g;
}

static bool has(const q8_name_list *l, const char *name) {
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], name)) return true;
    return false;
}

/* Both heads, two layers each; not the trunk. The weights: trunk 65536,
 * heads 2 x 2048 + 2 + 6 = 4104, 5.9% of all: within an 8% bound, not 4%. */
Test(heads, two_layers_per_output_within_the_bound) {
    for (int mm = 0; mm < 2; mm++) {
        q8_graph *g = make(1024, mm);
        q8_name_list l;
        q8_error err = {0};
        cr_assert_eq(q8_head_layers(g, 0.08, &l, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(l.n, 4, "matmul %d: %d heads", mm, l.n);
        cr_assert(has(&l, "b") && has(&l, "c") && has(&l, "d") && has(&l, "e"));
        cr_assert(!has(&l, "trunk"));
        q8_name_list_free(&l);
        cr_assert_eq(q8_head_layers(g, 0.04, &l, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(l.n, 0, "over the bound: none");
        q8_name_list_free(&l);
        q8_graph_free(g);
    }
}

/* An output that comes from the input through float ops only has no head;
 * a model whose every layer is a head has them all over the bound. */
Test(heads, none_when_no_layer_or_all_layers) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x");
    int64_t xd[2] = {1, 8};
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 2);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    node(g, "Relu", 1, (const char *[]){"x"}, "y");
    output(g, "y");
    q8_name_list l;
    q8_error err = {0};
    cr_assert_eq(q8_head_layers(g, 1.0, &l, &err), Q8_OK);
    cr_assert_eq(l.n, 0);
    q8_graph_free(g);
    g = make(4, false); /* heads 24 of 280 weights */
    cr_assert_eq(q8_head_layers(g, Q8_HEADS_MAX_SHARE, &l, &err), Q8_OK);
    cr_assert_eq(l.n, 0);
    cr_assert_eq(q8_head_layers(g, 1.0, &l, &err), Q8_OK);
    cr_assert_eq(l.n, 4);
    q8_name_list_free(&l);
    q8_graph_free(g);
}
