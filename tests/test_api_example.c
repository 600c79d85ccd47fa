/* The C API example of docs/api.md compiles, links against the runtime, and
 * classifies the shipped MNIST sample correctly from .q8 files made here
 * with the tools library; an ONNX file or a missing file gives -1. */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../docs/examples/classify.c"
#include "npy.h"
#include "q8_tools.h"

/* models/mnist/README.md: sample.npy is test_x[0], so its label is test_y[0] */
static int sample_label(void) {
    q8_tensor *y = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(Q8_SOURCE_DIR "/models/mnist/test_y.npy", &y, &err), Q8_OK, "%s", err.msg);
    int label = (int)((const int64_t *)y->data)[0];
    q8_tensor_free(y);
    return label;
}

static void quantize(const char *name, char *out, size_t n) {
    char onnx[512];
    snprintf(onnx, sizeof onnx, Q8_SOURCE_DIR "/models/mnist/%s.onnx", name);
    snprintf(out, n, "/tmp/q8_api_%d_%s.q8", (int)getpid(), name);
    q8_quantize_options o = {.calib_dir = Q8_SOURCE_DIR "/models/mnist/calib",
                             .method = Q8_CALIB_PERCENTILE, .percentile = 99.99, .n_threads = 2};
    q8_quantize_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(onnx, out, &o, &r, &err), Q8_OK, "%s", err.msg);
}

Test(api, example_classifies_the_sample) {
    q8_tensor *x = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(Q8_SOURCE_DIR "/models/mnist/sample.npy", &x, &err), Q8_OK, "%s", err.msg);
    int label = sample_label();
    const char *names[] = {"cnn", "mlp"};
    for (int i = 0; i < 2; i++) {
        char q8[256];
        quantize(names[i], q8, sizeof q8);
        cr_assert_eq(classify(q8, x->data, x->dims, x->ndim), label, "%s", names[i]);
        unlink(q8);
    }
    q8_tensor_free(x);
}

Test(api, example_reports_what_it_cannot_load) {
    float px[784] = {0};
    int64_t dims[4] = {1, 1, 28, 28};
    cr_assert_eq(classify("/nonexistent/model.q8", px, dims, 4), -1);
    /* the runtime reads .q8 files; ONNX goes through q8_model_open */
    cr_assert_eq(classify(Q8_SOURCE_DIR "/models/mnist/cnn.onnx", px, dims, 4), -1);
}
