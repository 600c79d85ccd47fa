/* End to end on the models q8 ships: quantize (calibrated on the shipped
 * samples) and run the held-out set; INT8 must stay close to FP32 in
 * accuracy, and the file must be small. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "npy.h"
#include "convert.h"
#include "q8_tools.h"
#include "testutil.h"

#define MNIST Q8_SOURCE_DIR "/models/mnist"

typedef struct eval {
    double top1;
    float *logits;   /* malloc'd [n, 10] */
    int64_t n;
} eval;

static eval run_test_set(const char *model_path) {
    q8_tensor *x = NULL, *y = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(MNIST "/test_x.npy", &x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_npy_read(MNIST "/test_y.npy", &y, &err), Q8_OK, "%s", err.msg);
    q8_input_shape sh = {.name = NULL, .ndim = x->ndim};
    memcpy(sh.dims, x->dims, sizeof sh.dims);
    q8_load_options lo = {.input_shapes = &sh, .n_input_shapes = 1};
    q8_model *m;
    cr_assert_eq(q8_model_open(model_path, &lo, &m, &err), Q8_OK, "%s", err.msg);
    q8_session *s;
    q8_session_options so = {.n_threads = 2};
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, NULL, x->dtype, x->dims, x->ndim, x->data, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    q8_tensor_info info;
    const float *out;
    q8_session_output(s, 0, &info, (const void **)&out, NULL);
    eval e = {.n = x->dims[0]};
    cr_assert_eq(info.dims[0], e.n);
    cr_assert_eq(info.dims[1], 10);
    e.logits = malloc(sizeof(float) * (size_t)e.n * 10);
    memcpy(e.logits, out, sizeof(float) * (size_t)e.n * 10);
    int64_t hits = 0;
    for (int64_t i = 0; i < e.n; i++) {
        int am = 0;
        for (int k = 1; k < 10; k++)
            if (out[i * 10 + k] > out[i * 10 + am]) am = k;
        hits += am == ((const int64_t *)y->data)[i];
    }
    e.top1 = (double)hits / (double)e.n;
    q8_session_free(s);
    q8_model_free(m);
    q8_tensor_free(x);
    q8_tensor_free(y);
    return e;
}

static size_t file_size(const char *p) {
    struct stat st;
    cr_assert_eq(stat(p, &st), 0, "%s", p);
    return (size_t)st.st_size;
}

/* quantize name.onnx with the given pruning into a temp file; returns path */
static char *quantize(const char *name, q8_prune_mode mode, double fraction, const char *skip) {
    static char path[256];
    snprintf(path, sizeof path, "/tmp/q8e2e_%d_%s_%d.q8", (int)getpid(), name, (int)mode);
    char onnx[512];
    snprintf(onnx, sizeof onnx, MNIST "/%s.onnx", name);
    q8_input_shape sh = {.name = "input", .ndim = 4, .dims = {1000, 1, 28, 28}};
    const char *sk[1] = {skip};
    q8_quantize_options o = {.input_shapes = &sh, .n_input_shapes = 1, .calib_dir = MNIST "/calib",
                             .method = Q8_CALIB_PERCENTILE, .percentile = 99.99, .n_threads = 2,
                             .prune = {.mode = mode, .fraction = fraction, .skip = sk, .n_skip = skip ? 1 : 0}};
    q8_quantize_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(onnx, path, &o, &r, &err), Q8_OK, "%s: %s", name, err.msg);
    cr_assert_gt(r.n_quantized, 0);
    return path;
}

/* max_ratio / max_pruned: .q8 size over the ONNX file. 0.30 and 0.20 are
 * the targets; the 77k-parameter ViT misses them because its graph
 * description (names, shapes, attributes: ~22 KB) is a fifth of its file. */
static void check_model(const char *name, const char *first_layer, double max_ratio,
                        double max_pruned, double max_pruned_drop) {
    char onnx[512];
    snprintf(onnx, sizeof onnx, MNIST "/%s.onnx", name);
    eval f = run_test_set(onnx);
    char *q = quantize(name, Q8_PRUNE_NONE, 0, NULL);
    eval i8 = run_test_set(q);
    double ratio = (double)file_size(q) / (double)file_size(onnx);
    unlink(q);
    /* Agreement with FP32 and accuracy within half a point. */
    int64_t agree = 0;
    for (int64_t r = 0; r < f.n; r++) {
        int a = 0, b = 0;
        for (int k = 1; k < 10; k++) {
            if (f.logits[r * 10 + k] > f.logits[r * 10 + a]) a = k;
            if (i8.logits[r * 10 + k] > i8.logits[r * 10 + b]) b = k;
        }
        agree += a == b;
    }
    cr_log_info("%s: FP32 top-1 %.3f, INT8 %.3f, agreement %.3f, size %.3fx", name, f.top1, i8.top1,
                (double)agree / (double)f.n, ratio);
    cr_assert_geq(i8.top1, f.top1 - 0.005, "%s: INT8 %.3f vs FP32 %.3f", name, i8.top1, f.top1);
    cr_assert_geq((double)agree / (double)f.n, 0.98, "%s: INT8 agrees with FP32 on too few digits", name);
    cr_assert_leq(ratio, max_ratio, "%s: .q8 is %.3fx the ONNX file", name, ratio);
    /* 50% unstructured pruning (first layer protected) within one point,
     * and at most 0.20x the ONNX file. */
    q = quantize(name, Q8_PRUNE_UNSTRUCTURED, 0.5, first_layer);
    eval p = run_test_set(q);
    ratio = (double)file_size(q) / (double)file_size(onnx);
    unlink(q);
    cr_log_info("%s: INT8 + 50%% pruning %.3f, size %.3fx", name, p.top1, ratio);
    cr_assert_geq(p.top1, f.top1 - max_pruned_drop, "%s: pruned INT8 %.3f vs FP32 %.3f", name,
                  p.top1, f.top1);
    cr_assert_leq(ratio, max_pruned, "%s: pruned .q8 is %.3fx the ONNX file", name, ratio);
    free(f.logits);
    free(i8.logits);
    free(p.logits);
}

Test(quantize_e2e, mlp, .timeout = 600) { check_model("mlp", NULL, 0.30, 0.20, 0.01); }
Test(quantize_e2e, cnn, .timeout = 600) {
    check_model("cnn", "/features/features.0/Conv", 0.30, 0.20, 0.01);
}
/* One-shot 50% magnitude pruning without fine-tuning costs the small ViT
 * about 7 points (docs/accuracy.md); this guards against it getting worse. */
Test(quantize_e2e, vit, .timeout = 600) {
    check_model("vit", "/patch/Conv", 0.36, 0.28, 0.09);
}

/* quantize --speed-check: every INT8 layer timed against its FP32 node; the
 * layers it keeps in FP32 are FP32 in the file and named in its metadata.
 * Which layers lose depends on the machine: the test checks consistency,
 * not timings. */
Test(quantize_e2e, speed_check_records_its_decisions, .timeout = 300) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/q8e2e_%d_speed.q8", (int)getpid());
    q8_quantize_options o = {.calib_dir = MNIST "/calib", .method = Q8_CALIB_PERCENTILE,
                             .percentile = 99.99, .n_threads = 2};
    q8_quantize_result plain;
    q8_speed_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(MNIST "/cnn.onnx", path, &o, &plain, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(q8_quantize_speed(MNIST "/cnn.onnx", path, &o, 3, &r, &err), Q8_OK, "%s",
                 err.msg);
    cr_assert_eq(r.n_layers, plain.n_quantized, "every INT8 layer of the CNN is timed");
    cr_assert(r.fp32_ms > 0 && r.int8_ms > 0);
    for (int i = 0; i < r.n_layers; i++)
        cr_assert(r.layers[i].int8_ms >= 0 && r.layers[i].fp32_ms >= 0, "%s", r.layers[i].node);
    bool applied = r.n_kept && !r.reverted;
    cr_assert_eq(r.q.n_quantized, applied ? plain.n_quantized - r.n_kept : plain.n_quantized);
    q8_model *m;
    cr_assert_eq(q8_model_open(path, NULL, &m, &err), Q8_OK, "%s", err.msg);
    cr_assert_not_null(q8_meta_get(&m->meta, "speed.check"));
    for (int i = 0; i < r.n_layers; i++) {
        char key[300];
        snprintf(key, sizeof key, "speed.layer.%s", r.layers[i].node);
        cr_assert_eq(q8_meta_get(&m->meta, key) != NULL, r.layers[i].kept, "%s", key);
        for (int j = 0; j < m->g->n_nodes; j++)
            if (!strcmp(m->g->nodes[j]->name, r.layers[i].node))
                cr_assert_eq(strcmp(m->g->nodes[j]->domain, "q8") != 0,
                             applied && r.layers[i].kept, "%s", r.layers[i].node);
    }
    q8_model_free(m);
    unlink(path);
    q8_speed_result_free(&r);
    o.calib_dir = NULL;
    cr_assert_eq(q8_quantize_speed(MNIST "/cnn.onnx", path, &o, 3, &r, &err), Q8_ERR_ARG);
    cr_assert(strstr(err.msg, "--calib"), "%s", err.msg);
}
