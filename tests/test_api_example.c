/* The C API example of docs/api.md compiles and classifies the shipped
 * MNIST sample correctly, from the ONNX model and from a .q8 made here. */
#include <criterion/criterion.h>

#include "../docs/examples/classify.c"
#include "npy.h"

/* models/mnist/README.md: sample.npy is test_x[0], so its label is test_y[0] */
static int sample_label(void) {
    q8_tensor *y = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(Q8_SOURCE_DIR "/models/mnist/test_y.npy", &y, &err), Q8_OK, "%s", err.msg);
    int label = (int)((const int64_t *)y->data)[0];
    q8_tensor_free(y);
    return label;
}

Test(api, example_classifies_the_sample) {
    q8_tensor *x = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(Q8_SOURCE_DIR "/models/mnist/sample.npy", &x, &err), Q8_OK, "%s", err.msg);
    int label = sample_label();
    cr_assert_eq(classify(Q8_SOURCE_DIR "/models/mnist/cnn.onnx", x->data, x->dims, x->ndim), label);
    cr_assert_eq(classify(Q8_SOURCE_DIR "/models/mnist/mlp.onnx", x->data, x->dims, x->ndim), label);
    q8_tensor_free(x);
}

Test(api, example_reports_a_missing_model) {
    float px[784] = {0};
    int64_t dims[4] = {1, 1, 28, 28};
    cr_assert_eq(classify("/nonexistent/model.onnx", px, dims, 4), -1);
}
