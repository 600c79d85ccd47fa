/* The C API example of docs/api.md compiles and classifies the shipped
 * MNIST sample correctly, from the ONNX model and from a .q8 made here. */
#include <criterion/criterion.h>

#include "../docs/examples/classify.c"
#include "npy.h"

static int sample_label(void) {
    /* models/mnist/README.md: the sample is a 7 */
    FILE *f = fopen(Q8_SOURCE_DIR "/models/mnist/sample_label.txt", "r");
    int label = -1;
    cr_assert(f, "models/mnist/sample_label.txt missing");
    cr_assert_eq(fscanf(f, "%d", &label), 1);
    fclose(f);
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
