#include <stdio.h>
#include <string.h>
#include "q8.h"

/* Run one image through a .q8 model; return the best class, -1 on error.
 * Needs only q8.h and libq8 (the runtime). */
int classify(const char *path, const float *pixels, const int64_t *dims, int ndim) {
    q8_error err = {0};
    q8_model *model = NULL;
    q8_session *sess = NULL;
    q8_session_options opts = {.n_threads = 2, .device = Q8_DEVICE_CPU};
    q8_input_shape shape = {.name = NULL, .ndim = ndim}; /* fixes a dynamic batch dim */
    memcpy(shape.dims, dims, sizeof(int64_t) * (size_t)ndim);
    q8_load_options load = {.input_shapes = &shape, .n_input_shapes = 1};
    q8_tensor_info out;
    const float *score;
    int best = -1;
    if (q8_model_load(path, &load, &model, &err) || q8_session_create(model, &opts, &sess, &err) ||
        q8_session_set_input(sess, NULL, Q8_F32, dims, ndim, pixels, &err) ||
        q8_session_run(sess, &err) || q8_session_output(sess, 0, &out, (const void **)&score, &err))
        fprintf(stderr, "error: %s\n", err.msg);
    else
        for (int64_t i = best = 0; i < out.dims[out.ndim - 1]; i++) best = score[i] > score[best] ? (int)i : best;
    q8_session_free(sess);
    q8_model_free(model);
    return best;
}
