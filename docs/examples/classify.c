/* Load a model, run one input, print the best class. */
#include <stdio.h>
#include <stdlib.h>
#include "q8.h"

int classify(const char *model_path, const float *pixels, const int64_t *dims, int ndim) {
    q8_error err = {0};
    q8_model *model = NULL;
    q8_session *sess = NULL;
    q8_session_options opts = {.n_threads = 2, .device = Q8_DEVICE_CPU};
    int best = -1;
    if (q8_model_load(model_path, NULL, &model, &err) == Q8_OK &&
        q8_session_create(model, &opts, &sess, &err) == Q8_OK &&
        q8_session_set_input(sess, NULL, Q8_F32, dims, ndim, pixels, &err) == Q8_OK &&
        q8_session_run(sess, &err) == Q8_OK) {
        q8_tensor_info out;
        const float *scores;
        q8_session_output(sess, 0, &out, (const void **)&scores);
        best = 0;
        for (int64_t i = 1; i < out.dims[out.ndim - 1]; i++)
            if (scores[i] > scores[best]) best = (int)i;
    } else {
        fprintf(stderr, "error: %s\n", err.msg);
    }
    q8_session_free(sess);
    q8_model_free(model);
    return best;
}
