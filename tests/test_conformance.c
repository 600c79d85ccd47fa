/* Every ONNX backend test whose ops q8 supports must pass; the rest are in
 * conformance/skip.txt with a reason. */
#include <criterion/criterion.h>

#include "conformance/runner.h"

Test(conformance, onnx_backend_tests, .timeout = 1800) {
    q8c_options o = {.data_dir = "/usr/share/libonnx-testdata/data",
                     .skip_file = Q8_SOURCE_DIR "/tests/conformance/skip.txt",
                     .n_threads = 2};
    q8c_result r;
    cr_assert(q8c_run(&o, &r), "no ONNX test data: install libonnx-testdata");
    printf("conformance: %d passed, %d failed, %d skipped\n", r.pass, r.fail, r.skip);
    cr_assert_eq(r.fail, 0, "%d conformance tests failed (see above)", r.fail);
    cr_assert_gt(r.pass, 0);
}
