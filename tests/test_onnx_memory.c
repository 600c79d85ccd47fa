/* Importing an ONNX file holds its weights once at the peak: the model's
 * wire bytes are unpacked without the initializers' raw_data
 * (formats/onnx/onnx_strip.c) and each weight is copied from the mapped file
 * into the graph, its pages dropped once copied. Before, the file's bytes,
 * the unpacked protos and the graph were alive two (earlier three) at a
 * time. A session that owns its model (q8_session_create_owning) frees the
 * graph's copy of each weight its kernels packed, so a run holds it once. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "onnx.pb-c.h"
#include "onnx_import.h"
#include "onnx_strip.h"
#include "q8_tools.h"
#include "testutil.h"

#define MNIST Q8_SOURCE_DIR "/models/mnist"

/* AddressSanitizer keeps freed blocks in quarantine: peaks mean nothing there */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif
#define BIG_FLOATS (24 << 20) /* 96 MiB of weights */

/* mlp.onnx with one more (unused) weight of BIG_FLOATS floats: an
 * initializer, or the value of a Constant node (paddle2onnx stores every
 * weight so) */
static size_t write_big_model(const char *out, bool as_constant) {
    size_t len;
    uint8_t *buf = (uint8_t *)q8t_slurp(MNIST "/mlp.onnx", &len);
    cr_assert(buf);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    cr_assert(mp && mp->graph);
    Onnx__TensorProto big = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[2] = {BIG_FLOATS / 1024, 1024};
    big.name = "big";
    big.has_data_type = true;
    big.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    big.n_dims = 2;
    big.dims = dims;
    big.has_raw_data = true;
    big.raw_data.len = (size_t)BIG_FLOATS * 4;
    big.raw_data.data = malloc(big.raw_data.len);
    cr_assert(big.raw_data.data);
    for (size_t i = 0; i < (size_t)BIG_FLOATS; i++) ((float *)big.raw_data.data)[i] = (float)i;
    Onnx__GraphProto *g = mp->graph;
    Onnx__TensorProto **inits = malloc(sizeof(void *) * (g->n_initializer + 1));
    Onnx__NodeProto **nodes = malloc(sizeof(void *) * (g->n_node + 1));
    cr_assert(inits && nodes);
    memcpy(inits, g->initializer, sizeof(void *) * g->n_initializer);
    memcpy(nodes + 1, g->node, sizeof(void *) * g->n_node);
    Onnx__NodeProto cn = ONNX__NODE_PROTO__INIT;
    Onnx__AttributeProto value = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[1] = {&value};
    char *outs[1] = {"big"};
    cn.op_type = "Constant";
    cn.n_output = 1;
    cn.output = outs;
    cn.n_attribute = 1;
    cn.attribute = attrs;
    value.name = "value";
    value.has_type = true;
    value.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    value.t = &big;
    nodes[0] = &cn;
    inits[g->n_initializer] = &big;
    Onnx__TensorProto **old = g->initializer;
    Onnx__NodeProto **old_nodes = g->node;
    if (as_constant) {
        g->node = nodes;
        g->n_node++;
    } else {
        g->initializer = inits;
        g->n_initializer++;
    }
    size_t n = onnx__model_proto__get_packed_size(mp);
    uint8_t *o = malloc(n);
    cr_assert(o);
    onnx__model_proto__pack(mp, o);
    q8t_write_file(out, o, n);
    free(o);
    if (as_constant) {
        g->node = old_nodes;
        g->n_node--;
    } else {
        g->initializer = old;
        g->n_initializer--;
    }
    free(inits);
    free(nodes);
    free(big.raw_data.data);
    onnx__model_proto__free_unpacked(mp, NULL);
    return n;
}

static long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) sscanf(line + strlen(key), "%ld", &v);
    if (f) fclose(f);
    return v;
}

static void check_import_peak(bool as_constant) {
    if (UNDER_ASAN) cr_skip("AddressSanitizer's quarantine keeps freed memory resident");
    char path[] = "/tmp/q8_big_onnx_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    size_t file = write_big_model(path, as_constant);
    /* a child with its peak reset (clear_refs 5), so the parent's history
     * does not count */
    pid_t pid = fork();
    if (pid == 0) {
        FILE *c = fopen("/proc/self/clear_refs", "w");
        if (!c || fputs("5", c) < 0 || fclose(c)) _exit(3);
        long before = status_kb("VmRSS:");
        q8_graph *g = NULL;
        q8_error err = {0};
        if (q8_onnx_load(path, &g, &err) != Q8_OK) _exit(4);
        long peak = status_kb("VmHWM:");
        int t = q8_graph_find(g, "big");
        const float *big = t < 0 ? NULL : g->tensors[t]->data;
        if (!big || big[BIG_FLOATS - 1] != (float)(BIG_FLOATS - 1)) _exit(5);
        double x = (double)(peak - before) * 1024 / (double)file;
        fprintf(stderr, "import peak: %.2fx the %zu-byte file\n", x, file);
        _exit(x <= 1.2 ? 0 : 6);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    unlink(path);
    cr_assert(WIFEXITED(st), "the importing child died");
    /* qemu-user and some containers do not emulate clear_refs */
    if (WEXITSTATUS(st) == 3) cr_skip("cannot reset the peak (/proc/self/clear_refs)");
    cr_assert_neq(WEXITSTATUS(st), 4, "the model does not import");
    cr_assert_neq(WEXITSTATUS(st), 5, "the big initializer's values are wrong");
    cr_assert_eq(WEXITSTATUS(st), 0, "importing holds the weights more than once at the peak");
}

Test(onnx_memory, import_holds_the_weights_once, .timeout = 120) { check_import_peak(false); }

Test(onnx_memory, import_holds_constant_node_weights_once, .timeout = 120) {
    check_import_peak(true);
}

/* Every shipped ONNX model's initializers, imported from the mapped file
 * with the weights stripped from the wire bytes (load) or from a buffer
 * (parse), hold exactly the bytes protobuf-c unpacks for them. */
/* Every raw_data tensor of init[0..n) is in graphs a (load) and b (parse)
 * with the same bytes; returns how many there were. */
static int check_raw_weights(const char *path, Onnx__TensorProto *const *init, size_t n,
                             const q8_graph *a, const q8_graph *b) {
    int raw = 0;
    for (size_t i = 0; i < n; i++) {
        const Onnx__TensorProto *tp = init[i];
        if (!tp->has_raw_data) continue;
        raw++;
        for (int v = 0; v < 2; v++) {
            const q8_graph *g = v ? b : a;
            int t = q8_graph_find(g, tp->name);
            cr_assert_geq(t, 0, "%s: '%s' is missing", path, tp->name);
            const q8_tensor *x = g->tensors[t];
            cr_assert_eq(q8_tensor_nbytes(x), tp->raw_data.len, "%s: '%s'", path, tp->name);
            cr_assert(!memcmp(x->data, tp->raw_data.data, tp->raw_data.len),
                      "%s: '%s' differs (%s)", path, tp->name, v ? "parse" : "load");
        }
    }
    return raw;
}

Test(onnx_memory, stripped_import_keeps_every_weight) {
    const char *names[] = {"mlp.onnx", "cnn.onnx", "vit.onnx"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", MNIST, names[k]);
        size_t len;
        uint8_t *buf = (uint8_t *)q8t_slurp(path, &len);
        cr_assert(buf, "%s", path);
        q8_onnx_stripped st;
        cr_assert(q8_onnx_strip(buf, len, &st), "%s does not strip", path);
        cr_assert_lt(st.len, len / 4, "%s: the stripped model keeps its weights", path);
        q8_onnx_stripped_free(&st);
        q8_graph *a = NULL, *b = NULL;
        q8_error err = {0};
        cr_assert_eq(q8_onnx_load(path, &a, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_onnx_parse(buf, len, MNIST, &b, &err), Q8_OK, "%s", err.msg);
        Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
        cr_assert(mp && mp->graph);
        free(buf);
        int raw = check_raw_weights(path, mp->graph->initializer, mp->graph->n_initializer, a, b);
        cr_assert_gt(raw, 0, "%s has no raw_data initializers", path);
        onnx__model_proto__free_unpacked(mp, NULL);
        q8_graph_free(a);
        q8_graph_free(b);
    }
}

/* A wire-format stream the stripper cannot follow (a group field) is left
 * to protobuf-c, which refuses it with its own message. */
Test(onnx_memory, strip_refuses_what_it_cannot_follow) {
    const uint8_t group[] = {0x0b, 0x0c};           /* field 1, start and end group */
    const uint8_t truncated[] = {0x3a, 0x10, 0x2a}; /* graph of 16 bytes, 1 there */
    q8_onnx_stripped st;
    cr_assert_not(q8_onnx_strip(group, sizeof group, &st));
    cr_assert_not(q8_onnx_strip(truncated, sizeof truncated, &st));
    cr_assert_null(st.bytes);
}

#define MM_K 1024
#define MM_L 8 /* 8 weights of 4 MiB */

/* Y = X W1 ... W8 with X [4, MM_K] an input and each Wi [MM_K, MM_K] a
 * constant (packed by the CPU MatMul: M > 1). */
static size_t write_matmul_model(const char *out) {
    Onnx__TensorProto w[MM_L], *inits[MM_L];
    Onnx__NodeProto mm[MM_L], *nodes[MM_L];
    char names[3 * MM_L][16], *io[3 * MM_L];
    int64_t wd[2] = {MM_K, MM_K};
    q8t_rng r = q8t_seed(7);
    for (int i = 0; i < MM_L; i++) {
        Onnx__TensorProto *t = &w[i];
        *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
        snprintf(names[3 * i], 16, "W%d", i);
        snprintf(names[3 * i + 1], 16, i ? "H%d" : "X", i);
        snprintf(names[3 * i + 2], 16, i == MM_L - 1 ? "Y" : "H%d", i + 1);
        for (int k = 0; k < 3; k++) io[3 * i + k] = names[3 * i + k];
        t->name = names[3 * i];
        t->has_data_type = true;
        t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        t->n_dims = 2;
        t->dims = wd;
        t->has_raw_data = true;
        t->raw_data.len = sizeof(float) * MM_K * MM_K;
        t->raw_data.data = malloc(t->raw_data.len);
        cr_assert(t->raw_data.data);
        /* scaled so that the product of 8 stays in range */
        q8t_fill(&r, (float *)t->raw_data.data, (int64_t)MM_K * MM_K, -0.05f, 0.05f);
        inits[i] = t;
        mm[i] = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
        mm[i].op_type = "MatMul";
        mm[i].n_input = 2;
        nodes[i] = &mm[i];
    }
    char *ins[MM_L][2], *outs[MM_L][1];
    for (int i = 0; i < MM_L; i++) {
        ins[i][0] = io[3 * i + 1];
        ins[i][1] = io[3 * i];
        outs[i][0] = io[3 * i + 2];
        mm[i].input = ins[i];
        mm[i].n_output = 1;
        mm[i].output = outs[i];
    }
    Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
                                      d1 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    d0.value_case = d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d0.dim_value = 4;
    d1.dim_value = MM_K;
    Onnx__TensorShapeProto__Dimension *dims[2] = {&d0, &d1};
    Onnx__TensorShapeProto shp = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shp.n_dim = 2;
    shp.dim = dims;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = true;
    tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt.shape = &shp;
    Onnx__TypeProto ty = ONNX__TYPE_PROTO__INIT;
    ty.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    ty.tensor_type = &tt;
    Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, y = ONNX__VALUE_INFO_PROTO__INIT;
    x.name = "X";
    x.type = &ty;
    y.name = "Y";
    Onnx__ValueInfoProto *gin[1] = {&x}, *gout[1] = {&y};
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "mm";
    g.n_node = MM_L;
    g.node = nodes;
    g.n_initializer = MM_L;
    g.initializer = inits;
    g.n_input = 1;
    g.input = gin;
    g.n_output = 1;
    g.output = gout;
    Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    os.has_version = true;
    os.version = 17;
    Onnx__OperatorSetIdProto *oss[1] = {&os};
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    mp.has_ir_version = true;
    mp.ir_version = 8;
    mp.n_opset_import = 1;
    mp.opset_import = oss;
    mp.graph = &g;
    size_t n = onnx__model_proto__get_packed_size(&mp);
    uint8_t *o = malloc(n);
    cr_assert(o);
    onnx__model_proto__pack(&mp, o);
    q8t_write_file(out, o, n);
    free(o);
    for (int i = 0; i < MM_L; i++) free(w[i].raw_data.data);
    return n;
}

static q8_status run_once(q8_session *s, const float *x, float *y, q8_error *err) {
    int64_t xd[2] = {4, MM_K};
    Q8_TRY(q8_session_set_input(s, "X", Q8_F32, xd, 2, x, err));
    Q8_TRY(q8_session_run(s, err));
    q8_tensor_info info;
    const void *out;
    Q8_TRY(q8_session_output(s, 0, &info, &out, err));
    memcpy(y, out, sizeof(float) * 4 * MM_K);
    return Q8_OK;
}

/* The owning session gives the same outputs as a plain one, holds the
 * weights once (weights_bytes, and the peak of load + create + run in a
 * child), and the model it took makes no other session. */
Test(onnx_memory, an_owning_session_holds_the_weights_once, .timeout = 120) {
    char path[] = "/tmp/q8_mm_onnx_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    size_t file = write_matmul_model(path);
    float *x = malloc(sizeof(float) * 4 * MM_K), *y0 = malloc(sizeof(float) * 4 * MM_K),
          *y1 = malloc(sizeof(float) * 4 * MM_K);
    cr_assert(x && y0 && y1);
    q8t_rng r = q8t_seed(11);
    q8t_fill(&r, x, 4 * MM_K, -1, 1);
    q8_error err = {0};
    q8_session_options so = {.n_threads = 2};
    q8_model *m = NULL;
    q8_session *s = NULL;
    q8_memory_info plain, owning;
    cr_assert_eq(q8_model_open(path, NULL, &m, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(run_once(s, x, y0, &err), Q8_OK, "%s", err.msg);
    q8_session_memory(s, &plain);
    q8_session_free(s);
    cr_assert_eq(q8_session_create_owning(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(run_once(s, x, y1, &err), Q8_OK, "%s", err.msg);
    cr_assert(!memcmp(y0, y1, sizeof(float) * 4 * MM_K), "the owning session computes otherwise");
    q8_session_memory(s, &owning);
    size_t w = sizeof(float) * MM_K * MM_K * MM_L;
    cr_assert_geq(plain.weights_bytes, 2 * w, "the plain session holds W and its packed copy");
    cr_assert_lt(owning.weights_bytes, w + w / 8, "the owning session holds W once: %zu",
                 owning.weights_bytes);
    q8_session *again = NULL;
    cr_assert_eq(q8_session_create(m, &so, &again, &err), Q8_ERR_ARG);
    cr_assert(strstr(err.msg, "belongs to a session"), "%s", err.msg);
    q8_session_free(s); /* frees m */
    if (!UNDER_ASAN) {
        pid_t pid = fork();
        if (pid == 0) {
            FILE *c = fopen("/proc/self/clear_refs", "w");
            if (!c || fputs("5", c) < 0 || fclose(c)) _exit(3);
            long before = status_kb("VmRSS:");
            q8_model *cm = NULL;
            q8_session *cs = NULL;
            if (q8_model_open(path, NULL, &cm, &err) != Q8_OK ||
                q8_session_create_owning(cm, &so, &cs, &err) != Q8_OK ||
                run_once(cs, x, y1, &err) != Q8_OK)
                _exit(4);
            q8_memory_info mi;
            q8_session_memory(cs, &mi);
            double x1 = ((double)(status_kb("VmHWM:") - before) * 1024 - (double)mi.arena_bytes) /
                        (double)file;
            fprintf(stderr, "load + owning session + run: %.2fx the file + arena\n", x1);
            _exit(x1 <= 1.5 ? 0 : 6);
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st), "the child died");
        if (WEXITSTATUS(st) != 3) {
            cr_assert_neq(WEXITSTATUS(st), 4, "the child could not run the model");
            cr_assert_eq(WEXITSTATUS(st), 0, "an owning session's peak is over 1.5x file + arena");
        }
    }
    unlink(path);
    free(x);
    free(y0);
    free(y1);
}

/* The MNIST models with every other initializer made a Constant node (a
 * tensor attribute, stripped like an initializer) import the same weights
 * as protobuf-c unpacks, from the mapped file (load) and from a buffer
 * (parse). */
Test(onnx_memory, constant_node_weights_are_stripped_and_kept) {
    const char *names[] = {"mlp.onnx", "cnn.onnx"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", MNIST, names[k]);
        size_t len;
        uint8_t *buf = (uint8_t *)q8t_slurp(path, &len);
        cr_assert(buf, "%s", path);
        Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
        free(buf);
        cr_assert(mp && mp->graph);
        Onnx__GraphProto *g = mp->graph;
        size_t ni = g->n_initializer, moved = (ni + 1) / 2;
        Onnx__NodeProto *cn = calloc(moved, sizeof *cn);
        Onnx__AttributeProto *av = calloc(moved, sizeof *av), **ap = calloc(moved, sizeof *ap);
        char **outs = calloc(moved, sizeof *outs);
        Onnx__NodeProto **nodes = malloc(sizeof(void *) * (g->n_node + moved));
        Onnx__TensorProto **keep = malloc(sizeof(void *) * (ni + 1));
        cr_assert(cn && av && ap && outs && nodes && keep);
        size_t nk = 0, nc = 0;
        for (size_t i = 0; i < ni; i++) {
            if (i % 2) {
                keep[nk++] = g->initializer[i];
                continue;
            }
            Onnx__NodeProto init_n = ONNX__NODE_PROTO__INIT;
            Onnx__AttributeProto init_a = ONNX__ATTRIBUTE_PROTO__INIT;
            cn[nc] = init_n;
            av[nc] = init_a;
            av[nc].name = "value";
            av[nc].has_type = true;
            av[nc].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
            av[nc].t = g->initializer[i];
            ap[nc] = &av[nc];
            outs[nc] = g->initializer[i]->name;
            cn[nc].op_type = "Constant";
            cn[nc].n_output = 1;
            cn[nc].output = &outs[nc];
            cn[nc].n_attribute = 1;
            cn[nc].attribute = &ap[nc];
            nodes[nc] = &cn[nc];
            nc++;
        }
        memcpy(nodes + nc, g->node, sizeof(void *) * g->n_node);
        Onnx__TensorProto **old_init = g->initializer;
        Onnx__NodeProto **old_nodes = g->node;
        size_t old_nn = g->n_node;
        g->initializer = keep;
        g->n_initializer = nk;
        g->node = nodes;
        g->n_node = old_nn + nc;
        size_t n = onnx__model_proto__get_packed_size(mp);
        uint8_t *o = malloc(n);
        cr_assert(o);
        onnx__model_proto__pack(mp, o);
        char tmp[] = "/tmp/q8_const_onnx_XXXXXX";
        int fd = mkstemp(tmp);
        cr_assert(fd >= 0);
        close(fd);
        q8t_write_file(tmp, o, n);
        q8_onnx_stripped st;
        cr_assert(q8_onnx_strip(o, n, &st), "%s does not strip", path);
        cr_assert_eq(st.n_attr_raw, nc);
        cr_assert_lt(st.len, n / 4, "%s: the stripped model keeps its Constant weights", path);
        q8_onnx_stripped_free(&st);
        q8_graph *a = NULL, *b = NULL;
        q8_error err = {0};
        cr_assert_eq(q8_onnx_load(tmp, &a, &err), Q8_OK, "%s", err.msg);
        cr_assert_eq(q8_onnx_parse(o, n, MNIST, &b, &err), Q8_OK, "%s", err.msg);
        cr_assert_gt(check_raw_weights(path, old_init, ni, a, b), 1);
        q8_graph_free(a);
        q8_graph_free(b);
        unlink(tmp);
        free(o);
        g->initializer = old_init;
        g->n_initializer = ni;
        g->node = old_nodes;
        g->n_node = old_nn;
        onnx__model_proto__free_unpacked(mp, NULL);
        free(cn);
        free(av);
        free(ap);
        free(outs);
        free(nodes);
        free(keep);
    }
}
