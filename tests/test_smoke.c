#include "testutil.h"

Test(smoke, relu_runs) {
    float x[7] = {-2, -1, 0, 1, 2, -0.5f, 3};
    q8t_in in = {"x", Q8_F32, 1, {7}, NULL};
    q8_graph *g = q8t_graph1("Relu", &in, 1, 1);
    const void *data[] = {x};
    void *out[1];
    q8_tensor_info info[1];
    q8_error err = {0};
    cr_assert_eq(q8t_run(g, data, 1, out, info, 1, &err), Q8_OK, "%s", err.msg);
    float want[7] = {0, 0, 0, 1, 2, 0, 3};
    q8t_assert_close(out[0], want, 7, 0, 0, "relu");
    free(out[0]);
}
