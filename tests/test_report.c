/* q8report and quantize --max-drop: the report's numbers recomputed here
 * independently (from the models' outputs, with plain loops), the HTML
 * well-formed and self-contained, the search meeting its criterion where
 * plain INT8 misses it and saying so when it cannot. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "npy.h"
#include "passes.h"
#include "quantize.h"
#include "search.h"
#include "report.h"
#include "q8_tools.h"
#include "testutil.h"

#define MNIST Q8_SOURCE_DIR "/models/mnist"

/* ---- temp folders and data ---- */

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    (void)sb;
    (void)flag;
    (void)f;
    return remove(p);
}

static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static char *tmp_dir(void) {
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/q8report_test_XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp");
    return dir;
}

static void path_in(char *out, size_t n, const char *dir, const char *name) {
    snprintf(out, n, "%s/%s", dir, name);
}

/* Rows [first, first+rows) of the MNIST test set into dir/data/<name>.npy
 * and their labels appended to lab (int64). */
static void write_rows(const char *dir, const char *name, int64_t first, int64_t rows) {
    q8_tensor *x = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(MNIST "/test_x.npy", &x, &err), Q8_OK, "%s", err.msg);
    char p[512];
    snprintf(p, sizeof p, "%s/data", dir);
    mkdir(p, 0777);
    snprintf(p, sizeof p, "%s/data/%s.npy", dir, name);
    int64_t dims[4] = {rows, 1, 28, 28};
    cr_assert_eq(q8_npy_write(p, Q8_F32, dims, 4, (const float *)x->data + first * 784, &err),
                 Q8_OK, "%s", err.msg);
    q8_tensor_free(x);
}

static void write_labels(const char *dir, int64_t rows) {
    q8_tensor *y = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(MNIST "/test_y.npy", &y, &err), Q8_OK, "%s", err.msg);
    char p[512];
    path_in(p, sizeof p, dir, "labels.npy");
    cr_assert_eq(q8_npy_write(p, Q8_I64, &rows, 1, y->data, &err), Q8_OK, "%s", err.msg);
    q8_tensor_free(y);
}

static void quantize_to(const char *onnx, const char *out, int64_t batch, q8_prune_mode mode,
                        double fraction, const char *skip) {
    q8_input_shape sh = {.name = "input", .ndim = 4, .dims = {batch, 1, 28, 28}};
    const char *sk[1] = {skip};
    q8_quantize_options o = {.input_shapes = &sh, .n_input_shapes = 1, .calib_dir = MNIST "/calib",
                             .method = Q8_CALIB_PERCENTILE, .percentile = 99.99, .n_threads = 2,
                             .prune = {.mode = mode, .fraction = fraction, .skip = sk,
                                       .n_skip = skip ? 1 : 0}};
    q8_quantize_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(onnx, out, &o, &r, &err), Q8_OK, "%s", err.msg);
}

/* ---- a small JSON reader: validity, and numbers by key ---- */

static const char *jws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

static const char *jvalue(const char *p);

static const char *jstring(const char *p) {
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *jvalue(const char *p) {
    p = jws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        bool obj = *p == '{';
        p = jws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (obj) {
                if (!(p = jstring(jws(p)))) return NULL;
                p = jws(p);
                if (*p++ != ':') return NULL;
            }
            if (!(p = jvalue(p))) return NULL;
            p = jws(p);
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (*p == '"') return jstring(p);
    if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    char *end;
    strtod(p, &end);
    return end == p || !strchr("-0123456789", *p) ? NULL : end;
}

static void assert_json(const char *doc) {
    const char *end = jvalue(doc);
    cr_assert(end, "the JSON does not parse");
    cr_assert_eq(*jws(end), 0, "trailing text after the JSON value");
}

/* The number after "key": following the first occurrence of anchor. */
static double jnum(const char *doc, const char *anchor, const char *key) {
    const char *a = anchor ? strstr(doc, anchor) : doc;
    cr_assert(a, "no '%s' in the JSON", anchor);
    char k[128];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *p = strstr(a, k);
    cr_assert(p, "no %s after '%s'", key, anchor ? anchor : "");
    p += strlen(k);
    if (!strncmp(p, "null", 4)) return NAN;
    return strtod(p, NULL);
}

static void assert_rel(double got, double want, double rel, const char *what) {
    cr_assert(fabs(got - want) <= rel * fabs(want) + 1e-12, "%s: report %.10g, recomputed %.10g",
              what, got, want);
}

/* ---- independent accumulation from outputs ---- */

typedef struct sums {
    double ref2, err2, dot, q2, maxabs;
} sums;

static void add(sums *s, const float *ref, const float *q, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = q[i], d = v - r;
        s->ref2 += r * r;
        s->err2 += d * d;
        s->dot += r * v;
        s->q2 += v * v;
        if (fabs(d) > s->maxabs) s->maxabs = fabs(d);
    }
}

static double sqnr(const sums *s) { return 10 * log10(s->ref2 / s->err2); }
static double cosine(const sums *s) { return s->dot / sqrt(s->ref2 * s->q2); }

static int argmax10(const float *v) {
    int a = 0;
    for (int k = 1; k < 10; k++)
        if (v[k] > v[a]) a = k;
    return a;
}

static q8_session *open_session(const char *path, int64_t batch, q8_model **m) {
    q8_input_shape sh = {.name = NULL, .ndim = 4, .dims = {batch, 1, 28, 28}};
    q8_load_options lo = {.input_shapes = &sh, .n_input_shapes = 1};
    q8_error err = {0};
    cr_assert_eq(q8_model_open(path, &lo, m, &err), Q8_OK, "%s", err.msg);
    q8_session *s;
    q8_session_options so = {.n_threads = 2};
    cr_assert_eq(q8_session_create(*m, &so, &s, &err), Q8_OK, "%s", err.msg);
    return s;
}

static const float *run_file(q8_session *s, const char *path) {
    q8_tensor *x = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(path, &x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, NULL, x->dtype, x->dims, x->ndim, x->data, &err), Q8_OK,
                 "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_free(x);
    q8_tensor_info info;
    const void *out;
    q8_session_output(s, 0, &info, &out, NULL);
    return out;
}

static size_t file_size(const char *p) {
    struct stat st;
    cr_assert_eq(stat(p, &st), 0, "%s", p);
    return (size_t)st.st_size;
}

/* ---- the JSON's numbers on the MLP, two sample files of 100 digits ---- */

Test(report, json_numbers_match_an_independent_computation, .timeout = 120) {
    char *dir = tmp_dir(), q8p[256], data[256], lab[256], a[256], b[256];
    write_rows(dir, "a", 0, 100);
    write_rows(dir, "b", 100, 100);
    write_labels(dir, 200);
    path_in(q8p, sizeof q8p, dir, "mlp24.q8");
    path_in(data, sizeof data, dir, "data");
    path_in(lab, sizeof lab, dir, "labels.npy");
    path_in(a, sizeof a, dir, "data/a.npy");
    path_in(b, sizeof b, dir, "data/b.npy");
    /* 2:4 pruning: an error large enough to show in every number */
    quantize_to(MNIST "/mlp.onnx", q8p, 100, Q8_PRUNE_2_4, 0, NULL);

    const char *paths[2] = {MNIST "/mlp.onnx", q8p};
    q8_report_options o = {.data_dir = data, .labels_path = lab, .runs = 3, .n_threads = 2};
    q8_report r;
    q8_error err = {0};
    cr_assert_eq(q8_report_build(paths, 2, &o, &r, &err), Q8_OK, "%s", err.msg);
    char *json;
    cr_assert_eq(q8_report_json(&r, &json, &err), Q8_OK, "%s", err.msg);
    assert_json(json);

    /* recompute: both models on both files, outputs compared here */
    q8_model *mf, *mq;
    q8_session *sf = open_session(MNIST "/mlp.onnx", 100, &mf), *sq = open_session(q8p, 100, &mq);
    q8_tensor *y = NULL;
    cr_assert_eq(q8_npy_read(lab, &y, &err), Q8_OK, "%s", err.msg);
    sums s = {0}, per_file[2] = {{0}}, per_class[10] = {{0}};
    int64_t agree = 0, hit_f = 0, hit_q = 0;
    const char *files[2] = {a, b};
    for (int f = 0; f < 2; f++) {
        float *ref = malloc(sizeof(float) * 1000);
        memcpy(ref, run_file(sf, files[f]), sizeof(float) * 1000);
        const float *q = run_file(sq, files[f]);
        add(&s, ref, q, 1000);
        add(&per_file[f], ref, q, 1000);
        for (int i = 0; i < 100; i++)
            for (int k = 0; k < 10; k++) add(&per_class[k], ref + 10 * i + k, q + 10 * i + k, 1);
        for (int i = 0; i < 100; i++) {
            int lf = argmax10(ref + 10 * i), lq = argmax10(q + 10 * i);
            int64_t want = ((const int64_t *)y->data)[f * 100 + i];
            agree += lf == lq;
            hit_f += lf == want;
            hit_q += lq == want;
        }
        free(ref);
    }
    cr_log_info(
        "MLP 2:4 on 200 digits: SQNR %.2f dB, cosine %.5f, agreement %lld, top-1 %lld -> %lld",
        sqnr(&s), cosine(&s), (long long)agree, (long long)hit_f, (long long)hit_q);
    const char *int8 = "\"kind\": \"int8\"";
    assert_rel(jnum(json, int8, "sqnr_db"), sqnr(&s), 1e-6, "output SQNR");
    assert_rel(jnum(json, int8, "cosine"), cosine(&s), 1e-6, "output cosine");
    assert_rel(jnum(json, int8, "max_abs_error"), s.maxabs, 1e-6, "output max abs error");
    assert_rel(jnum(json, int8, "top1_agreement"), agree / 200.0, 1e-9, "top-1 agreement");
    assert_rel(jnum(json, int8, "top1"), hit_q / 200.0, 1e-9, "INT8 top-1");
    assert_rel(jnum(json, "\"kind\": \"fp32\"", "top1"), hit_f / 200.0, 1e-9, "FP32 top-1");
    assert_rel(jnum(json, int8, "top1_drop_points"), (hit_f - hit_q) / 2.0, 1e-6, "drop in points");
    assert_rel(jnum(json, "\"data\"", "rows"), 200, 0, "rows");
    /* the worst of the two files, and the ten logits as channels (axis 1 of [100, 10]) */
    int wf = sqnr(&per_file[1]) < sqnr(&per_file[0]);
    assert_rel(jnum(json, int8, "worst_sample_sqnr_db"), sqnr(&per_file[wf]), 1e-6, "worst file");
    assert_rel(jnum(json, int8, "worst_sample"), wf, 0, "worst file's index");
    const char *wp = strstr(strstr(json, int8), "\"worst_sample_file\": \"");
    cr_assert(wp && !strncmp(strchr(wp + 22, '"') - 10, wf ? "data/b.npy" : "data/a.npy", 10),
              "the worst file's path: %.80s", wp ? wp : "(none)");
    double db[10];
    int wc = 0;
    for (int k = 0; k < 10; k++) {
        db[k] = sqnr(&per_class[k]);
        if (db[k] < db[wc]) wc = k;
    }
    for (int i = 1; i < 10; i++) /* sort for the median */
        for (int j = i; j > 0 && db[j] < db[j - 1]; j--) {
            double t = db[j];
            db[j] = db[j - 1];
            db[j - 1] = t;
        }
    assert_rel(jnum(json, int8, "channel_axis"), 1, 0, "channel axis");
    assert_rel(jnum(json, int8, "channels"), 10, 0, "channels");
    assert_rel(jnum(json, int8, "channel_worst"), wc, 0, "worst channel");
    assert_rel(jnum(json, int8, "channel_worst_sqnr_db"), db[0], 1e-6, "worst channel SQNR");
    assert_rel(jnum(json, int8, "channel_median_sqnr_db"), (db[4] + db[5]) / 2, 1e-6,
               "median channel SQNR");
    cr_assert_lt(db[0], sqnr(&s) - 0.5, "one channel worse than all together, or this tests little");
    /* the last Gemm writes the logits in float: its layer error is the output's */
    assert_rel(jnum(json, "\"node\": \"/net/net.5/Gemm\"", "sqnr_db"), sqnr(&s), 1e-6,
               "SQNR of the layer that writes the output");
    /* costs */
    q8_memory_info mi;
    q8_session_memory(sq, &mi);
    assert_rel(jnum(json, int8, "file_bytes"), (double)file_size(q8p), 0, "file bytes");
    assert_rel(jnum(json, int8, "weights_bytes"), (double)mi.weights_bytes, 0, "weights bytes");
    assert_rel(jnum(json, int8, "arena_bytes"), (double)mi.arena_bytes, 0, "arena bytes");
    assert_rel(jnum(json, int8, "size_ratio"),
               (double)file_size(q8p) / (double)file_size(MNIST "/mlp.onnx"), 1e-6, "size ratio");
    cr_assert_gt(jnum(json, int8, "peak_rss_bytes"), 0);
    double med = jnum(json, int8, "median"), mn = jnum(json, int8, "min"),
           mx = jnum(json, int8, "max");
    cr_assert(mn > 0 && mn <= med && med <= mx, "latency %g <= %g <= %g", mn, med, mx);
    /* sparsity from the .q8 metadata: 2:4 zeroes half of every layer */
    assert_rel(jnum(json, "\"node\": \"/net/net.1/Gemm\"", "sparsity"), 0.5, 1e-9, "sparsity");
    /* the range of a layer's weight scales: from its weight, not metadata */
    cr_assert_null(q8_meta_get(&mq->meta, "layer./net/net.1/Gemm.weight_scale_min"));
    const q8_node *gemm = NULL;
    for (int i = 0; i < mq->g->n_nodes; i++)
        if (!strcmp(mq->g->nodes[i]->name, "/net/net.1/Gemm")) gemm = mq->g->nodes[i];
    cr_assert(gemm);
    const q8_tensor *w = q8_in(mq->g, gemm, 1);
    float lo = INFINITY, hi = 0;
    for (int i = 0; i < w->q.n; i++) lo = fminf(lo, w->q.scale[i]), hi = fmaxf(hi, w->q.scale[i]);
    cr_assert_gt(w->q.n, 1);
    assert_rel(jnum(json, "\"node\": \"/net/net.1/Gemm\"", "weight_scale_min"), lo, 1e-6,
               "weight_scale_min");
    assert_rel(jnum(json, "\"node\": \"/net/net.1/Gemm\"", "weight_scale_max"), hi, 1e-6,
               "weight_scale_max");
    cr_assert_eq(r.models[1].n_layers, 3);
    for (int i = 1; i < r.models[1].n_layers; i++)
        cr_assert_leq(q8_err_sqnr_db(&r.models[1].layers[i - 1].in_model),
                      q8_err_sqnr_db(&r.models[1].layers[i].in_model), "layers sorted worst first");

    char *md;
    cr_assert_eq(q8_report_markdown(&r, &md, &err), Q8_OK, "%s", err.msg);
    cr_assert(strstr(md, "| file size |") && strstr(md, "`/net/net.1/Gemm`"));
    cr_assert(strstr(md, ": SQNR of the worst sample, per channel | - | worst sample ") &&
              strstr(md, "per channel (10, axis 1): median "), "%s", md);
    free(md);
    free(json);
    q8_tensor_free(y);
    q8_session_free(sf);
    q8_session_free(sq);
    q8_model_free(mf);
    q8_model_free(mq);
    q8_report_free(&r);
    rm_tree(dir);
}

/* ---- tiny graphs with the IR API ---- */

#define T q8t_tensor

static void matmul(q8_graph *g, const char *name, const char *x, const char *w, const char *y) {
    int in[2] = {T(g, x), T(g, w)}, out = T(g, y);
    int k = q8_graph_add_node(g, name, "MatMul");
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, 2, &out, 1, NULL), Q8_OK);
}

static void weight(q8_graph *g, const char *name, int64_t r, int64_t c, uint64_t seed, float mul) {
    int t = T(g, name);
    int64_t d[2] = {r, c};
    q8_tensor_set_shape(g->tensors[t], Q8_F32, d, 2);
    cr_assert_eq(q8_tensor_alloc_data(g->tensors[t], NULL), Q8_OK);
    q8t_rng rng = q8t_seed(seed);
    q8t_fill(&rng, g->tensors[t]->data, r * c, -1, 1);
    for (int64_t i = 0; i < r * c; i++) ((float *)g->tensors[t]->data)[i] *= mul;
}

/* x[8,16] -> MatMul W1 -> h[8,12] -> MatMul W2 -> y[8,5]; outputs y and h
 * (so that the test sees h as the quantized model computes it). */
static q8_graph *two_layers(float w_mul) {
    q8_graph *g = q8_graph_new();
    int x = T(g, "x");
    int64_t xd[2] = {8, 16};
    q8_tensor_set_shape(g->tensors[x], Q8_F32, xd, 2);
    g->inputs = malloc(sizeof(int));
    g->inputs[g->n_inputs++] = x;
    weight(g, "W1", 16, 12, 1, w_mul);
    weight(g, "W2", 12, 5, 2, w_mul);
    matmul(g, "layer1", "x", "W1", "h");
    matmul(g, "layer2", "h", "W2", "y");
    g->outputs = malloc(sizeof(int) * 2);
    g->outputs[g->n_outputs++] = T(g, "y");
    g->outputs[g->n_outputs++] = T(g, "h");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    return g;
}

static void write_x_samples(const char *dir, int n) {
    q8t_rng rng = q8t_seed(7);
    for (int i = 0; i < n; i++) {
        float x[8 * 16];
        q8t_fill(&rng, x, 8 * 16, -2, 2);
        char p[512];
        snprintf(p, sizeof p, "%s/s%d.npy", dir, i);
        int64_t d[2] = {8, 16};
        q8_error err = {0};
        cr_assert_eq(q8_npy_write(p, Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
    }
}

static float amax_of(const float *v, int n) {
    float m = 0;
    for (int i = 0; i < n; i++) m = fmaxf(m, fabsf(v[i]));
    return m;
}

static const q8_report_layer *layer_for(const q8_report_model *m, const char *tensor) {
    for (int i = 0; i < m->n_layers; i++)
        if (m->layers[i].tensor && !strcmp(m->layers[i].tensor, tensor)) return &m->layers[i];
    cr_assert_fail("no layer writes '%s'", tensor);
    return NULL;
}

Test(report, per_layer_sqnr_of_int8_and_float_outputs) {
    char *dir = tmp_dir();
    write_x_samples(dir, 3);
    q8_graph *gf = two_layers(1), *gq = two_layers(1);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, gf, &s, &err), Q8_OK, "%s", err.msg);
    /* calibration by hand: the ranges of x, h, y on sample 0 (FP32) */
    q8_model *mf, *mq;
    cr_assert_eq(q8_model_from_graph(gf, "fp32", &mf, &err), Q8_OK);
    q8_session *sf;
    cr_assert_eq(q8_session_create(mf, NULL, &sf, &err), Q8_OK, "%s", err.msg);
    q8_tensor *x0;
    cr_assert_eq(q8_sample_load(&s, 0, 0, &x0, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(sf, "x", Q8_F32, x0->dims, 2, x0->data, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(q8_session_run(sf, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const void *yv, *hv;
    q8_session_output(sf, 0, &info, &yv, NULL);
    q8_session_output(sf, 1, &info, &hv, NULL);
    q8_calibration cal = {.n_tensors = gq->n_tensors};
    cal.threshold = calloc((size_t)gq->n_tensors, sizeof(float));
    cal.threshold[q8_graph_find(gq, "x")] = amax_of(x0->data, 128);
    cal.threshold[q8_graph_find(gq, "h")] = amax_of(hv, 96);
    cal.threshold[q8_graph_find(gq, "y")] = amax_of(yv, 40);
    q8_meta meta = {0};
    cr_assert_eq(q8_quantize_graph(gq, &cal, NULL, &meta, &err), Q8_OK, "%s", err.msg);
    free(cal.threshold);
    q8_meta_free(&meta);
    q8_tensor_free(x0);
    cr_assert_eq(q8_model_from_graph(gq, "int8", &mq, &err), Q8_OK);
    /* h is int8 inside (layer2 reads it in int8) and dequantized for the output */
    cr_assert_geq(q8_graph_find(mq->g, "h_q8"), 0);

    q8_report_model out[2] = {{0}};
    q8_compare_options co = {.per_layer = true, .per_layer_gain = true, .n_threads = 1};
    const q8_model *qs[1] = {mq};
    cr_assert_eq(q8_report_compare(mf, qs, 1, &s, &co, out, &err), Q8_OK, "%s", err.msg);

    /* recompute from the outputs: h (int8 scale * q, exactly) and y */
    q8_session *sq;
    cr_assert_eq(q8_session_create(mq, NULL, &sq, &err), Q8_OK, "%s", err.msg);
    sums sh = {0}, sy = {0};
    float hs = mq->g->tensors[q8_graph_find(mq->g, "h_q8")]->q.scale[0];
    double h_round2 = 0;
    for (int i = 0; i < s.n_samples; i++) {
        q8_tensor *x;
        cr_assert_eq(q8_sample_load(&s, i, 0, &x, &err), Q8_OK, "%s", err.msg);
        q8_session_set_input(sf, "x", Q8_F32, x->dims, 2, x->data, &err);
        q8_session_set_input(sq, "x", Q8_F32, x->dims, 2, x->data, &err);
        cr_assert_eq(q8_session_run(sf, &err), Q8_OK);
        cr_assert_eq(q8_session_run(sq, &err), Q8_OK);
        const void *fy, *fh, *qy, *qh;
        q8_session_output(sf, 0, &info, &fy, NULL);
        q8_session_output(sf, 1, &info, &fh, NULL);
        q8_session_output(sq, 0, &info, &qy, NULL);
        q8_session_output(sq, 1, &info, &qh, NULL);
        add(&sy, fy, qy, 40);
        add(&sh, fh, qh, 96);
        for (int j = 0; j < 96; j++) { /* h_f rounded to h's int8 scale */
            float v = ((const float *)fh)[j], r = nearbyintf(v / hs);
            r = r > 127 ? 127 : r < -128 ? -128 : r;
            h_round2 += ((double)hs * r - v) * ((double)hs * r - v);
        }
        q8_tensor_free(x);
    }
    const q8_report_layer *l1 = layer_for(&out[1], "h"), *l2 = layer_for(&out[1], "y");
    cr_assert_gt(l1->out_scale, 0, "layer1 writes int8");
    cr_assert_eq(l2->out_scale, 0, "layer2 writes float");
    cr_log_info("layer1 %.3f dB, layer2 %.3f dB", sqnr(&sh), sqnr(&sy));
    /* the report dequantizes in double, the graph in float: 1e-6 */
    assert_rel(q8_err_sqnr_db(&l1->in_model), sqnr(&sh), 1e-6, "SQNR of the int8 layer");
    assert_rel(q8_err_sqnr_db(&l2->in_model), sqnr(&sy), 1e-9, "SQNR of the float layer");
    assert_rel(l1->in_model.max_abs, sh.maxabs, 1e-6, "max abs error of the int8 layer");
    assert_rel(q8_err_cosine(&l2->in_model), cosine(&sy), 1e-9, "cosine of the float layer");
    /* layer1 reads the quantized graph input either way: alone = in the model */
    assert_rel(q8_err_sqnr_db(&l1->alone), q8_err_sqnr_db(&l1->in_model), 1e-12, "layer1 alone");
    cr_assert(isfinite(q8_err_sqnr_db(&l2->alone)));
    /* outputs: y and h, same numbers as the layers that write them */
    cr_assert_eq(out[1].n_outputs, 2);
    assert_rel(q8_err_sqnr_db(&out[1].outputs[0].err), sqnr(&sy), 1e-9, "output y");
    assert_rel(q8_err_sqnr_db(&out[1].outputs[1].err), sqnr(&sh), 1e-6, "output h");
    /* the search's gains: with no layer exact, the outputs' own errors; with
     * layer2 (y) exact, h's error alone is left */
    const q8_err_stats *ey = &out[1].outputs[0].err, *eh = &out[1].outputs[1].err;
    cr_assert_eq(l2->exact_base.n, 3 * (40 + 96));
    cr_assert_eq(l2->exact_out.n, 3 * (40 + 96));
    assert_rel(l2->exact_base.err2, ey->err2 + eh->err2, 1e-12, "base: both outputs' errors");
    /* layer1 reads the graph input, so its own error is all of h's: taken
     * off, h is FP32's rounded to its scale, and y is layer2's alone */
    assert_rel(l1->exact_out.err2, l2->alone.err2 + h_round2, 1e-5,
               "layer1 exact: layer2's own error on y + h rounded");
    /* layer2's taken off: y keeps what h's error does through layer2 */
    cr_assert(l2->exact_out.err2 > eh->err2 && l2->exact_out.err2 < l2->exact_base.err2,
              "layer2 exact: between h's error alone (%g) and all (%g): %g", eh->err2,
              l2->exact_base.err2, l2->exact_out.err2);
    cr_assert_eq(l1->weight_elems, 16 * 12, "layer1's weight elements");
    cr_log_info("gain of layer1 exact: %.2f dB, layer2: %.2f dB",
                q8_err_sqnr_db(&l1->exact_out) - q8_err_sqnr_db(&l1->exact_base),
                q8_err_sqnr_db(&l2->exact_out) - q8_err_sqnr_db(&l2->exact_base));

    q8_report_model_free(&out[0]);
    q8_report_model_free(&out[1]);
    q8_session_free(sf);
    q8_session_free(sq);
    q8_model_free(mf);
    q8_model_free(mq);
    q8_samples_free(&s);
    rm_tree(dir);
}

/* A known perturbation: weights scaled by 1.01 scale the outputs by 1.01,
 * so SQNR = -20 log10(0.01) = 40 dB, cosine 1, max error 1% of max |y|. */
Test(report, known_perturbation_gives_40_db) {
    char *dir = tmp_dir();
    write_x_samples(dir, 2);
    q8_graph *ga = two_layers(1), *gb = two_layers(1.01f);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, ga, &s, &err), Q8_OK, "%s", err.msg);
    q8_model *ma, *mb;
    cr_assert_eq(q8_model_from_graph(ga, "a", &ma, &err), Q8_OK);
    cr_assert_eq(q8_model_from_graph(gb, "b", &mb, &err), Q8_OK);
    q8_report_model out[2] = {{0}};
    q8_compare_options co = {.per_layer = true, .n_threads = 1};
    const q8_model *qs[1] = {mb};
    cr_assert_eq(q8_report_compare(ma, qs, 1, &s, &co, out, &err), Q8_OK, "%s", err.msg);
    /* h = x W1 scales by 1.01; y = h W2 by 1.0201 */
    double want_h = -20 * log10(0.01), want_y = -20 * log10(1.01 * 1.01 - 1);
    cr_assert_eq(out[1].n_layers, 0, "no INT8 layers in an FP32 graph");
    cr_assert_float_eq(q8_err_sqnr_db(&out[1].outputs[1].err), want_h, 1e-3);
    cr_assert_float_eq(q8_err_sqnr_db(&out[1].outputs[0].err), want_y, 1e-3);
    cr_assert_float_eq(q8_err_cosine(&out[1].outputs[0].err), 1.0, 1e-9);
    cr_assert_eq(out[1].outputs[0].err.n, 2 * 40);
    /* max |dy| = 0.0201 max |y| over the samples */
    double ymax = 0;
    for (int i = 0; i < s.n_samples; i++) {
        q8_tensor *x;
        q8_session *sa;
        cr_assert_eq(q8_sample_load(&s, i, 0, &x, &err), Q8_OK);
        cr_assert_eq(q8_session_create(ma, NULL, &sa, &err), Q8_OK);
        q8_session_set_input(sa, "x", Q8_F32, x->dims, 2, x->data, &err);
        cr_assert_eq(q8_session_run(sa, &err), Q8_OK);
        q8_tensor_info info;
        const void *y;
        q8_session_output(sa, 0, &info, &y, NULL);
        ymax = fmax(ymax, amax_of(y, 40));
        q8_session_free(sa);
        q8_tensor_free(x);
    }
    cr_assert_float_eq(out[1].outputs[0].err.max_abs, 0.0201 * ymax, 1e-4 * ymax);
    q8_report_model_free(&out[0]);
    q8_report_model_free(&out[1]);
    q8_model_free(ma);
    q8_model_free(mb);
    q8_samples_free(&s);
    rm_tree(dir);
}

/* Two inputs, one subfolder each: y = (a + b) W, against W scaled by 1.01. */
static q8_graph *two_inputs(float w_mul) {
    q8_graph *g = q8_graph_new();
    int64_t d[2] = {4, 6};
    g->inputs = malloc(sizeof(int) * 2);
    for (int i = 0; i < 2; i++) {
        int t = T(g, i ? "b" : "a");
        q8_tensor_set_shape(g->tensors[t], Q8_F32, d, 2);
        g->inputs[g->n_inputs++] = t;
    }
    int in[2] = {T(g, "a"), T(g, "b")}, out = T(g, "s");
    int k = q8_graph_add_node(g, "add", "Add");
    cr_assert_eq(q8_node_set_io(g->nodes[k], in, 2, &out, 1, NULL), Q8_OK);
    weight(g, "W", 6, 3, 3, w_mul);
    matmul(g, "mm", "s", "W", "y");
    g->outputs = malloc(sizeof(int));
    g->outputs[g->n_outputs++] = T(g, "y");
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    return g;
}

Test(report, multi_input_samples_from_subfolders) {
    char *dir = tmp_dir();
    q8t_rng rng = q8t_seed(11);
    for (int i = 0; i < 2; i++) {
        char sub[256], p[300];
        snprintf(sub, sizeof sub, "%s/%s", dir, i ? "b" : "a");
        mkdir(sub, 0777);
        for (int k = 0; k < 3; k++) {
            float x[24];
            q8t_fill(&rng, x, 24, -1, 1);
            snprintf(p, sizeof p, "%s/%d.npy", sub, k);
            int64_t d[2] = {4, 6};
            q8_error err = {0};
            cr_assert_eq(q8_npy_write(p, Q8_F32, d, 2, x, &err), Q8_OK, "%s", err.msg);
        }
    }
    q8_graph *ga = two_inputs(1), *gb = two_inputs(1.01f);
    q8_error err = {0};
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(dir, ga, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(s.n_samples, 3);
    cr_assert_eq(s.n_inputs, 2);
    q8_model *ma, *mb;
    cr_assert_eq(q8_model_from_graph(ga, "a", &ma, &err), Q8_OK);
    cr_assert_eq(q8_model_from_graph(gb, "b", &mb, &err), Q8_OK);
    q8_report_model out[2] = {{0}};
    q8_compare_options co = {.per_layer = true, .n_threads = 1};
    const q8_model *qs[1] = {mb};
    cr_assert_eq(q8_report_compare(ma, qs, 1, &s, &co, out, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(out[1].outputs[0].err.n, 3 * 12);
    cr_assert_float_eq(q8_err_sqnr_db(&out[1].outputs[0].err), 40.0, 1e-3);
    cr_assert_eq(out[1].agree, 4 * 3, "scaling the scores keeps every argmax");
    q8_report_model_free(&out[0]);
    q8_report_model_free(&out[1]);
    q8_model_free(ma);
    q8_model_free(mb);
    q8_samples_free(&s);
    rm_tree(dir);
}

/* ---- the HTML ---- */

static bool is_void(const char *tag) {
    static const char *const v[] = {"meta", "br",  "hr",    "img",    "input", "link", "area",
                                    "base", "col", "embed", "source", "track", "wbr"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!strcmp(tag, v[i])) return true;
    return false;
}

/* Every tag closed in order; returns the number of <svg> elements. */
static int check_tags(const char *html) {
    char stack[256][16];
    int depth = 0, svgs = 0;
    for (const char *p = strchr(html, '<'); p; p = strchr(p, '<')) {
        if (!strncmp(p, "<!DOCTYPE", 9) || !strncmp(p, "<!--", 4)) {
            p = strchr(p, '>');
            cr_assert(p);
            continue;
        }
        bool close = p[1] == '/';
        const char *n = p + 1 + close;
        char tag[16];
        int k = 0;
        while (((*n >= 'a' && *n <= 'z') || (*n >= '0' && *n <= '9')) && k < 15) tag[k++] = *n++;
        tag[k] = 0;
        cr_assert(k > 0, "a '<' that starts no tag: %.40s", p);
        const char *end = strchr(n, '>');
        cr_assert(end, "unterminated tag <%s", tag);
        bool self = end[-1] == '/';
        if (close) {
            cr_assert(depth > 0 && !strcmp(stack[depth - 1], tag), "</%s> closes <%s>", tag,
                      depth ? stack[depth - 1] : "nothing");
            depth--;
        } else if (!self && !is_void(tag)) {
            cr_assert(depth < 256);
            strcpy(stack[depth++], tag);
            svgs += !strcmp(tag, "svg");
            if (!strcmp(tag, "style")) { /* CSS: no markup inside */
                end = strstr(end, "</style>");
                cr_assert(end);
                end--;
            }
        }
        p = end + 1;
    }
    cr_assert_eq(depth, 0, "%d unclosed tags, the innermost <%s>", depth,
                 depth ? stack[depth - 1] : "");
    return svgs;
}

static int count(const char *s, const char *what) {
    int c = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) c++;
    return c;
}

Test(report, html_is_well_formed_and_self_contained, .timeout = 120) {
    char *dir = tmp_dir(), q1[256], q2[256], data[256];
    write_rows(dir, "a", 0, 100);
    path_in(q1, sizeof q1, dir, "mlp.q8");
    path_in(q2, sizeof q2, dir, "mlp_2of4 <&>.q8"); /* a name that needs escaping */
    path_in(data, sizeof data, dir, "data");
    quantize_to(MNIST "/mlp.onnx", q1, 100, Q8_PRUNE_NONE, 0, NULL);
    quantize_to(MNIST "/mlp.onnx", q2, 100, Q8_PRUNE_2_4, 0, NULL);
    const char *paths[3] = {MNIST "/mlp.onnx", q1, q2};
    q8_report_options o = {.data_dir = data, .runs = 1, .n_threads = 2};
    q8_report r;
    q8_error err = {0};
    cr_assert_eq(q8_report_build(paths, 3, &o, &r, &err), Q8_OK, "%s", err.msg);
    char *html, *json;
    cr_assert_eq(q8_report_html(&r, &html, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_report_json(&r, &json, &err), Q8_OK, "%s", err.msg);
    assert_json(json);
    cr_assert(!strncmp(html, "<!DOCTYPE html>", 15));
    /* one svg per chart: size, memory, latency, and one per-layer plot per .q8 */
    int svgs = check_tags(html);
    cr_assert_eq(svgs, 3 + 2, "%d <svg> elements", svgs);
    cr_assert_eq(count(html, "<figure"), 5);
    cr_assert_eq(count(html, "aria-label=\"Size\""), 1);
    cr_assert_eq(count(html, "aria-label=\"Memory\""), 1);
    cr_assert_eq(count(html, "aria-label=\"Latency"), 1);
    cr_assert_eq(count(html, "aria-label=\"per-layer SQNR\""), 2);
    /* nothing to fetch */
    static const char *const external[] = {"<script", "<link", "<img",   "<iframe",
                                           "<object", "http:", "https:", "url(",
                                           "@import", "src=",  "href=",  "//"};
    for (size_t i = 0; i < sizeof external / sizeof external[0]; i++)
        cr_assert_null(strstr(html, external[i]), "the HTML contains '%s'", external[i]);
    cr_assert(strstr(html, "mlp_2of4 &lt;&amp;&gt;.q8"), "names are escaped");
    cr_assert_null(strstr(html, "mlp_2of4 <&>"));
    /* every layer is in the page and in the JSON */
    for (int m = 1; m < 3; m++)
        for (int i = 0; i < r.models[m].n_layers; i++) {
            cr_assert(strstr(html, r.models[m].layers[i].node));
            cr_assert(strstr(json, r.models[m].layers[i].node));
        }
    free(html);
    free(json);
    q8_report_free(&r);
    rm_tree(dir);
}

/* ---- quantize --max-drop ---- */

static q8_search_result search(const char *onnx, const char *out, q8_prune_mode mode,
                               double fraction, const char *skip, const char *data,
                               const char *labels, double max_drop, int trials, int64_t batch) {
    q8_input_shape sh = {.name = "input", .ndim = 4, .dims = {batch, 1, 28, 28}};
    const char *sk[1] = {skip};
    q8_quantize_options o = {.input_shapes = &sh, .n_input_shapes = 1, .calib_dir = MNIST "/calib",
                             .method = Q8_CALIB_PERCENTILE, .percentile = 99.99, .n_threads = 2,
                             .prune = {.mode = mode, .fraction = fraction, .skip = sk,
                                       .n_skip = skip ? 1 : 0}};
    q8_search_options so = {.data_dir = data, .labels_path = labels, .max_drop = max_drop,
                            .max_trials = trials};
    q8_search_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_search(onnx, out, &o, &so, NULL, NULL, &r, &err), Q8_OK, "%s",
                 err.msg);
    return r;
}

static int64_t meta_int(const q8_model *m, const char *key) {
    const q8_meta_entry *e = q8_meta_get(&m->meta, key);
    cr_assert(e && e->type == Q8_META_INT, "%s", key);
    return e->i;
}

/* 2:4 pruning costs the MLP ~4 points of top-1 on the 1000 test digits;
 * the search gets within one point, and the model it writes does. */
Test(report, max_drop_meets_its_target_where_plain_int8_misses_it, .timeout = 120) {
    char *dir = tmp_dir(), out[256], data[256];
    path_in(out, sizeof out, dir, "mlp_24.q8");
    path_in(data, sizeof data, dir, "data");
    mkdir(data, 0777);
    char link[300];
    snprintf(link, sizeof link, "%s/test_x.npy", data);
    cr_assert_eq(symlink(MNIST "/test_x.npy", link), 0);
    q8_search_result r = search(MNIST "/mlp.onnx", out, Q8_PRUNE_2_4, 0, NULL, data,
                                MNIST "/test_y.npy", 1.0, 8, 1000);
    cr_log_info("as asked %.2f points, best %.2f after %d trials, %d dense, %d FP32", r.first.drop,
                r.best.drop, r.trials, r.n_dense_layers, r.n_fp32_layers);
    cr_assert_gt(r.first.drop, 1.0, "plain 2:4 INT8 should miss the target (drop %.2f)",
                 r.first.drop);
    cr_assert(r.met);
    cr_assert_leq(r.best.drop, 1.0);
    cr_assert_gt(r.trials, 1);
    cr_assert_gt(r.n_dense_layers + r.n_fp32_layers, 0);
    /* the file written: measured here, from scratch */
    q8_model *mf, *mq;
    q8_session *sf = open_session(MNIST "/mlp.onnx", 1000, &mf), *sq = open_session(out, 1000, &mq);
    q8_tensor *y = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(MNIST "/test_y.npy", &y, &err), Q8_OK, "%s", err.msg);
    const float *lf = run_file(sf, MNIST "/test_x.npy"), *lq = run_file(sq, MNIST "/test_x.npy");
    int64_t hf = 0, hq = 0;
    for (int i = 0; i < 1000; i++) {
        hf += argmax10(lf + 10 * i) == ((const int64_t *)y->data)[i];
        hq += argmax10(lq + 10 * i) == ((const int64_t *)y->data)[i];
    }
    double drop = (double)(hf - hq) / 10.0;
    cr_assert_leq(drop, 1.0, "the written model loses %.2f points", drop);
    cr_assert_float_eq(drop, r.best.drop, 1e-9);
    cr_assert_eq(meta_int(mq, "search.met"), 1);
    cr_assert_eq(meta_int(mq, "search.trials"), r.trials);
    q8_search_result_free(&r);
    q8_tensor_free(y);
    q8_session_free(sf);
    q8_session_free(sq);
    q8_model_free(mf);
    q8_model_free(mq);
    rm_tree(dir);
}

/* 50% pruning costs the ViT ~7 points; two trials cannot recover them: the
 * search says so, and still writes the best model it found. */
Test(report, max_drop_reports_a_miss_honestly, .timeout = 120) {
    char *dir = tmp_dir(), out[256], data[256], lab[256];
    write_rows(dir, "a", 0, 200);
    write_labels(dir, 200);
    path_in(out, sizeof out, dir, "vit.q8");
    path_in(data, sizeof data, dir, "data");
    path_in(lab, sizeof lab, dir, "labels.npy");
    q8_search_result r = search(MNIST "/vit.onnx", out, Q8_PRUNE_UNSTRUCTURED, 0.5, "/patch/Conv",
                                data, lab, 0.5, 2, 200);
    cr_log_info("as asked %.2f points, best %.2f after %d trials", r.first.drop, r.best.drop,
                r.trials);
    cr_assert_not(r.met);
    cr_assert_eq(r.trials, 2);
    cr_assert_gt(r.best.drop, 0.5);
    cr_assert_leq(r.best.drop, r.first.drop);
    q8_model *mq;
    q8_session *sq = open_session(out, 200, &mq);
    cr_assert_eq(meta_int(mq, "search.met"), 0);
    cr_assert_eq(meta_int(mq, "search.trials"), 2);
    /* nothing but the model left behind (no trial files) */
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(n, 3, "vit.q8, labels.npy, data/ and nothing else (%d entries)", n);
    q8_search_result_free(&r);
    q8_session_free(sq);
    q8_model_free(mq);
    rm_tree(dir);
}

/* --min-sqnr: label-free, on the calibration samples. 50% pruning takes
 * the ViT to ~7 dB against FP32; a target 1.5 dB above what plain INT8
 * gets is met by making layers dense or FP32, and the file says so. */
static q8_search_result sqnr_search(const char *out, double target, int trials) {
    const char *sk[1] = {"/patch/Conv"};
    q8_quantize_options o = {.calib_dir = MNIST "/calib", .method = Q8_CALIB_PERCENTILE,
                             .percentile = 99.99, .n_threads = 2,
                             .prune = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5,
                                       .skip = sk, .n_skip = 1}};
    q8_search_options so = {.by_sqnr = true, .min_sqnr_db = target, .max_trials = trials};
    q8_search_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_search(MNIST "/vit.onnx", out, &o, &so, NULL, NULL, &r, &err),
                 Q8_OK, "%s", err.msg);
    return r;
}

Test(report, min_sqnr_meets_its_target_where_plain_int8_misses_it, .timeout = 300) {
    char *dir = tmp_dir(), out[256];
    path_in(out, sizeof out, dir, "vit.q8");
    q8_search_result r0 = sqnr_search(out, 1000, 1);
    cr_assert_not(r0.met);
    cr_assert_eq(r0.trials, 1);
    double s0 = r0.first.sqnr_db, target = s0 + 1.5;
    cr_assert(isfinite(s0) && s0 > 0, "%g", s0);
    q8_search_result r = sqnr_search(out, target, 8);
    cr_log_info("as asked %.1f dB, best %.1f after %d trials", s0, r.best.sqnr_db, r.trials);
    cr_assert_float_eq(r.first.sqnr_db, s0, 1e-9);
    cr_assert(r.met, "best %.1f dB < %.1f", r.best.sqnr_db, target);
    cr_assert_geq(r.best.sqnr_db, target);
    cr_assert_gt(r.trials, 1);
    cr_assert_gt(r.n_dense_layers + r.n_fp32_layers, 0);
    q8_model *mq;
    q8_load_options lo = {0};
    q8_error err = {0};
    cr_assert_eq(q8_model_open(out, &lo, &mq, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(meta_int(mq, "search.met"), 1);
    cr_assert_eq(meta_int(mq, "search.trials"), r.trials);
    const q8_meta_entry *e = q8_meta_get(&mq->meta, "search.sqnr_db");
    cr_assert(e && e->type == Q8_META_FLOAT && fabs(e->f - r.best.sqnr_db) < 1e-6);
    q8_model_free(mq);
    q8_search_result_free(&r0);
    q8_search_result_free(&r);
    rm_tree(dir);
}

/* Steps after which the output did not gain go back in one more trial
 * (beyond max_trials) once the target is met, and stay back when the
 * target holds without them: the written model names only the steps that
 * counted. */
static q8_search_trial seen[32];
static char seen_node[32][512];
static int n_seen;
static void record_trial(void *arg, const q8_search_trial *t) {
    (void)arg;
    if (n_seen < 32) {
        seen[n_seen] = *t;
        snprintf(seen_node[n_seen], sizeof seen_node[0], "%s", t->node ? t->node : "");
        cr_log_info("trial %d action %d %s: %.2f dB", t->index, t->action, seen_node[n_seen],
                    t->sqnr_db);
        n_seen++;
    }
}

Test(report, min_sqnr_takes_back_the_steps_that_gained_nothing, .timeout = 300) {
    char *dir = tmp_dir(), out[256];
    path_in(out, sizeof out, dir, "vit.q8");
    const char *sk[1] = {"/patch/Conv"};
    q8_quantize_options o = {
        .calib_dir = MNIST "/calib",
        .method = Q8_CALIB_PERCENTILE,
        .percentile = 99.99,
        .n_threads = 2,
        .prune = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5, .skip = sk, .n_skip = 1}};
    /* a step counts from 1 dB on: of the ViT's first three FP32 steps
     * (+1.1, +0.6, +1.3 dB when measured) the second is idle; without it
     * the ViT measured 9.36 dB: the undo is kept for 9.3, not for 9.5 */
    bool kept_seen[2] = {false, false};
    for (int target = 0; target < 2; target++) {
        q8_search_options so = {.by_sqnr = true,
                                .min_sqnr_db = target ? 9.3 : 9.5,
                                .max_trials = 4,
                                .idle_gain_db = 1.0};
        q8_search_result r;
        q8_error err = {0};
        n_seen = 0;
        cr_assert_eq(
            q8_quantize_search(MNIST "/vit.onnx", out, &o, &so, record_trial, NULL, &r, &err),
            Q8_OK, "%s", err.msg);
        cr_assert(n_seen >= 3, "%d trials", n_seen);
        /* the idle steps, from what the trials measured */
        char idle[1024] = "";
        int met_at = -1;
        for (int k = 1; k < n_seen && met_at < 0; k++) {
            if (seen[k].sqnr_db - seen[k - 1].sqnr_db < 1.0) {
                if (*idle) strcat(idle, ", ");
                strcat(idle, seen_node[k]);
            }
            if (seen[k].sqnr_db >= so.min_sqnr_db) met_at = k;
        }
        cr_assert(met_at > 0 && *idle, "the setting this test needs moved: met at %d, idle '%s'",
                  met_at, idle);
        /* one more trial, beyond max_trials when the target took all of them */
        cr_assert_eq(n_seen, met_at + 2);
        const q8_search_trial *u = &seen[n_seen - 1];
        cr_assert_eq(u->action, Q8_SEARCH_UNDO);
        cr_assert_str_eq(seen_node[n_seen - 1], idle);
        cr_assert_eq(r.trials, n_seen);
        cr_assert(r.met);
        bool kept = u->sqnr_db >= so.min_sqnr_db;
        cr_log_info("undo of '%s': %.2f dB, %s", idle, u->sqnr_db, kept ? "kept" : "not kept");
        cr_assert_eq(r.best.index, kept ? u->index : seen[met_at].index);
        for (int i = 0; i < r.n_fp32_layers; i++)
            cr_assert_eq(strstr(idle, r.fp32_layers[i]) != NULL, !kept, "%s", r.fp32_layers[i]);
        /* the file written is the best trial's: its SQNR recorded */
        q8_model *mq;
        q8_load_options lo = {0};
        cr_assert_eq(q8_model_open(out, &lo, &mq, &err), Q8_OK, "%s", err.msg);
        const q8_meta_entry *e = q8_meta_get(&mq->meta, "search.sqnr_db");
        cr_assert(e && e->type == Q8_META_FLOAT && fabs(e->f - r.best.sqnr_db) < 1e-6);
        cr_assert_eq(meta_int(mq, "search.trials"), r.trials);
        q8_model_free(mq);
        q8_search_result_free(&r);
        kept_seen[kept] = true;
    }
    cr_assert(kept_seen[0] && kept_seen[1], "both outcomes of the undo trial expected");
    rm_tree(dir);
}

/* A byte budget (quantize's default search, --min-sqnr auto, has 2% of the
 * file): no step that would exceed it is taken. Every trial's file grows
 * by at most the budget (un-pruning a layer grows it by less than the
 * pruned weights: their bitmask goes too), plus the search's metadata;
 * the same search without a budget grows it further, and a budget too
 * small for any step with weights takes only weightless ones (the
 * attention MatMuls: the weakest alone, when no exact output gains the
 * model's) and grows the file by no weight. */
static size_t max_bytes;
static void track_bytes(void *arg, const q8_search_trial *t) {
    (void)arg;
    if (t->q8_bytes > max_bytes) max_bytes = t->q8_bytes;
}

static q8_search_result budget_search(const char *out, size_t budget) {
    const char *sk[1] = {"/patch/Conv"};
    q8_quantize_options o = {.calib_dir = MNIST "/calib", .method = Q8_CALIB_PERCENTILE,
                             .percentile = 99.99, .n_threads = 2,
                             .prune = {.mode = Q8_PRUNE_UNSTRUCTURED, .fraction = 0.5,
                                       .skip = sk, .n_skip = 1}};
    q8_search_options so = {.by_sqnr = true, .min_sqnr_db = 1000, .max_trials = 4,
                            .max_added_bytes = budget};
    q8_search_result r;
    q8_error err = {0};
    max_bytes = 0;
    cr_assert_eq(q8_quantize_search(MNIST "/vit.onnx", out, &o, &so, track_bytes, NULL, &r, &err),
                 Q8_OK, "%s", err.msg);
    return r;
}

Test(report, min_sqnr_stays_within_its_byte_budget, .timeout = 300) {
    char *dir = tmp_dir(), out[256];
    path_in(out, sizeof out, dir, "vit.q8");
    q8_search_result r0 = budget_search(out, 0);
    size_t grew0 = max_bytes - r0.first.q8_bytes;
    const size_t budget = 1500;
    q8_search_result r = budget_search(out, budget);
    size_t grew = max_bytes - r.first.q8_bytes;
    cr_log_info("no budget: %d trials, +%zu bytes; budget %zu: %d trials, +%zu bytes", r0.trials,
                grew0, budget, r.trials, grew);
    cr_assert_gt(grew0, budget + 1024, "without a budget the file grows by %zu only", grew0);
    cr_assert_gt(r.trials, 1, "the budget leaves room for a step");
    cr_assert_leq(grew, budget + 1024, "grew by %zu bytes with a budget of %zu", grew, budget);
    q8_model *mq;
    q8_load_options lo = {0};
    q8_error err = {0};
    cr_assert_eq(q8_model_open(out, &lo, &mq, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(meta_int(mq, "search.max_added_bytes"), (int64_t)budget);
    q8_model_free(mq);
    q8_search_result r1 = budget_search(out, 1);
    size_t grew1 = max_bytes - r1.first.q8_bytes;
    cr_log_info("budget 1: %d trials, %d layers FP32, +%zu bytes", r1.trials, r1.n_fp32_layers,
                grew1);
    cr_assert_leq(grew1, 1 + 1024, "grew by %zu bytes with a budget of 1", grew1);
    cr_assert_eq(r1.n_dense_layers, 0, "no pruned layer made dense within 1 byte");
    for (int i = 0; i < r1.n_fp32_layers; i++)
        cr_assert(strstr(r1.fp32_layers[i], "MatMul"), "%s kept FP32 within 1 byte",
                  r1.fp32_layers[i]);
    q8_search_result_free(&r0);
    q8_search_result_free(&r);
    q8_search_result_free(&r1);
    rm_tree(dir);
}

/* --calib-method auto chooses its ranges on the first trial; the other
 * trials and the model written keep that choice (choosing again could flip
 * the method and undo the fallbacks' gain). */
Test(report, search_keeps_the_ranges_auto_chose_first, .timeout = 300) {
    char *dir = tmp_dir(), out[256];
    path_in(out, sizeof out, dir, "vit.q8");
    q8_quantize_options o = {.calib_dir = MNIST "/calib", .method = Q8_CALIB_AUTO,
                             .percentile = 99.99, .n_threads = 2};
    q8_search_options so = {.by_sqnr = true, .min_sqnr_db = 1000, .max_trials = 2};
    q8_search_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_search(MNIST "/vit.onnx", out, &o, &so, NULL, NULL, &r, &err),
                 Q8_OK, "%s", err.msg);
    cr_assert_eq(r.trials, 2);
    q8_model *mq;
    q8_load_options lo = {0};
    cr_assert_eq(q8_model_open(out, &lo, &mq, &err), Q8_OK, "%s", err.msg);
    const q8_meta_entry *e = q8_meta_get(&mq->meta, "calib.method");
    cr_assert(e && e->type == Q8_META_STR);
    cr_assert(!strcmp(e->s, "percentile") || !strcmp(e->s, "mse"),
              "the written model chose its ranges again: calib.method %s", e->s);
    q8_model_free(mq);
    q8_search_result_free(&r);
    rm_tree(dir);
}

/* What the search pins after its first trial: every choice auto made by
 * measurement, and nothing the user gave (nor a choice auto did not
 * score: the tables of a model whose two forms are the same). */
Test(report, search_pins_what_auto_chose) {
    q8_quantize_options o = {.method = Q8_CALIB_AUTO,
                             .quant = {.weight_rounding = Q8_WROUND_AUTO,
                                       .scalar_tables = Q8_SCALAR_TABLES_AUTO}};
    q8_quantize_result r = {.calib_chosen = Q8_CALIB_MSE, .calib_scored = 32,
                            .wround_chosen = Q8_WROUND_GPTQ, .wround_scored = 8,
                            .tables_chosen = true, .tables_scored = 8};
    q8_quantize_options a = o;
    q8_quantize_pin_auto(&a, &r);
    cr_assert_eq(a.method, Q8_CALIB_MSE);
    cr_assert_eq(a.quant.weight_rounding, Q8_WROUND_GPTQ);
    cr_assert_eq(a.quant.scalar_tables, Q8_SCALAR_TABLES_ON);
    r.tables_chosen = false;
    a = o;
    q8_quantize_pin_auto(&a, &r);
    cr_assert_eq(a.quant.scalar_tables, Q8_SCALAR_TABLES_OFF);
    r.tables_scored = 0; /* the two forms were the same: nothing to pin */
    r.calib_scored = 0;
    a = o;
    q8_quantize_pin_auto(&a, &r);
    cr_assert_eq(a.quant.scalar_tables, Q8_SCALAR_TABLES_AUTO);
    cr_assert_eq(a.method, Q8_CALIB_AUTO);
    q8_quantize_options given = {.method = Q8_CALIB_PERCENTILE,
                                 .quant = {.weight_rounding = Q8_WROUND_NEAREST,
                                           .scalar_tables = Q8_SCALAR_TABLES_OFF}};
    r = (q8_quantize_result){.calib_chosen = Q8_CALIB_MSE, .calib_scored = 32,
                             .wround_chosen = Q8_WROUND_GPTQ, .tables_chosen = true,
                             .tables_scored = 8};
    a = given;
    q8_quantize_pin_auto(&a, &r);
    cr_assert_eq(a.method, Q8_CALIB_PERCENTILE);
    cr_assert_eq(a.quant.weight_rounding, Q8_WROUND_NEAREST);
    cr_assert_eq(a.quant.scalar_tables, Q8_SCALAR_TABLES_OFF);
}

Test(report, max_drop_values) {
    double v;
    char msg[400];
    cr_assert(q8_parse_max_drop("0.5", &v, msg, sizeof msg) && v == 0.5);
    cr_assert(q8_parse_max_drop("0.5pt", &v, msg, sizeof msg) && v == 0.5);
    cr_assert(q8_parse_max_drop("0.5%", &v, msg, sizeof msg) && v == 0.5);
    cr_assert(q8_parse_max_drop("2", &v, msg, sizeof msg) && v == 2);
    cr_assert(q8_parse_max_drop("0", &v, msg, sizeof msg) && v == 0);
    cr_assert(q8_parse_max_drop("0.05pt", &v, msg, sizeof msg) && v == 0.05);
    cr_assert_not(q8_parse_max_drop("0.005", &v, msg, sizeof msg));
    cr_assert(strstr(msg, "ambiguous"), "%s", msg);
    cr_assert_not(q8_parse_max_drop("-1", &v, msg, sizeof msg));
    cr_assert_not(q8_parse_max_drop("101", &v, msg, sizeof msg));
    cr_assert_not(q8_parse_max_drop("half", &v, msg, sizeof msg));
    cr_assert_not(q8_parse_max_drop("0.5x", &v, msg, sizeof msg));
    cr_assert_not(q8_parse_max_drop("nan", &v, msg, sizeof msg));
}

/* ---- the command-line tools ---- */

/* Run a command; its stderr lands in err (one string). */
static int sh(const char *dir, const char *cmd, char *err, size_t n) {
    char full[2048], ef[512];
    path_in(ef, sizeof ef, dir, "stderr.txt");
    snprintf(full, sizeof full, "%s >/dev/null 2>'%s'", cmd, ef);
    int rc = system(full);
    FILE *f = fopen(ef, "r");
    size_t got = f ? fread(err, 1, n - 1, f) : 0;
    err[got] = 0;
    if (f) fclose(f);
    unlink(ef);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void assert_one_line(const char *err, const char *want) {
    const char *nl = strchr(err, '\n');
    cr_assert(nl && (nl[1] == 0 || !strncmp(nl + 1, "usage:", 6)), "not one line: %s", err);
    cr_assert(strstr(err, want), "'%s' not in: %s", want, err);
}

Test(report, cli_errors_are_one_line_and_leave_no_files, .timeout = 120) {
    char *dir = tmp_dir(), q[256], cmd[1024], err[4096], data[256], out[256];
    write_rows(dir, "a", 0, 50);
    path_in(q, sizeof q, dir, "mlp.q8");
    path_in(data, sizeof data, dir, "data");
    path_in(out, sizeof out, dir, "out/r.html");
    quantize_to(MNIST "/mlp.onnx", q, 50, Q8_PRUNE_NONE, 0, NULL);
    const char *tool = Q8_BINARY_DIR "/q8report";
    snprintf(cmd, sizeof cmd, "%s " MNIST "/mlp.onnx %s -o %s", tool, q, out);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 2);
    assert_one_line(err, "--data DIR is required");
    snprintf(cmd, sizeof cmd, "%s %s " MNIST "/mlp.onnx --data %s -o %s", tool, q, data, out);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 1);
    assert_one_line(err, "the first model must be the FP32 .onnx");
    snprintf(cmd, sizeof cmd, "%s " MNIST "/mlp.onnx %s --data %s/nope -o %s", tool, q, dir, out);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 1);
    assert_one_line(err, "--data");
    snprintf(cmd, sizeof cmd,
             "%s " MNIST "/mlp.onnx %s --data %s --labels " MNIST "/test_y.npy -o %s", tool, q,
             data, out);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 1);
    assert_one_line(err, "expected 50 int64/int32 labels");
    /* a .q8 built for another batch: the shapes, and how to fix it */
    snprintf(cmd, sizeof cmd, "%s " MNIST "/mlp.onnx %s --data " MNIST "/calib -o %s", tool, q,
             out);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 1);
    assert_one_line(err, "--input-shape input=1x1x28x28");
    snprintf(cmd, sizeof cmd, "%s " MNIST "/mlp.onnx %s --data %s --device cuda --runs 1 -o %s",
             tool, q, data, out);
    int rc = sh(dir, cmd, err, sizeof err);
    if (rc != 0) assert_one_line(err, "CUDA");
    else cr_log_info("this build has CUDA: --device cuda ran");
    if (rc != 0) {
        char p[512];
        path_in(p, sizeof p, dir, "out");
        DIR *d = opendir(p);
        int n = 0;
        for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
        if (d) closedir(d);
        cr_assert_eq(n, 0, "a failed run left %d files", n);
    }
    /* success: three files, nothing else */
    snprintf(cmd, sizeof cmd, "%s " MNIST "/mlp.onnx %s --data %s --runs 1 --threads 2 -o %s", tool,
             q, data, out);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 0, "%s", err);
    static const char *const names[] = {"out/r.html", "out/r.json", "out/r.md"};
    for (int i = 0; i < 3; i++) {
        char p[512];
        path_in(p, sizeof p, dir, names[i]);
        cr_assert_gt(file_size(p), 100, "%s", p);
    }
    char p[512];
    path_in(p, sizeof p, dir, "out");
    DIR *d = opendir(p);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(n, 3);
    /* quantize --max-drop that cannot be met in one trial: exit 3, model written */
    char o2[256];
    path_in(o2, sizeof o2, dir, "m.q8");
    snprintf(cmd, sizeof cmd, Q8_BINARY_DIR "/quantize " MNIST "/mlp.onnx -o %s --calib " MNIST
             "/calib --prune-mode 2:4 --prune-refit off --max-drop 0 --max-trials 1 --data %s",
             o2, data);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 3, "%s", err);
    cr_assert_gt(file_size(o2), 1000);
    snprintf(cmd, sizeof cmd, Q8_BINARY_DIR "/quantize " MNIST "/mlp.onnx -o %s --calib " MNIST
             "/calib --max-drop 0.01 --data %s", o2, data);
    cr_assert_eq(sh(dir, cmd, err, sizeof err), 2);
    assert_one_line(err, "ambiguous");
    rm_tree(dir);
}
