/* Inputs bound from calibration: an integer or bool input whose value is
 * the same in every calibration sample, and that decides shapes or If
 * branches, is bound to that value (q8_input_value, q8.h). */
#ifndef Q8_BIND_CALIB_H
#define Q8_BIND_CALIB_H

#include "graph.h"
#include "samples.h"

#define Q8_MAX_BINDS 64

typedef struct q8_binds {
    int n;
    q8_input_value v[Q8_MAX_BINDS];
    q8_tensor *owned[Q8_MAX_BINDS]; /* the values found in the samples */
    bool from_samples[Q8_MAX_BINDS];
} q8_binds;

/* b starts with the caller's values (--bind); adds the inputs that
 * calibration shows constant and that decide shapes or branches (each
 * candidate tried: the model at the samples' shapes lo must import without
 * it bound and no If may depend on it for it to stay an input). */
q8_status q8_binds_from_samples(const char *onnx_path, const q8_sample_set *s,
                                const q8_load_options *lo, q8_binds *b, q8_error *err);
/* A quantization's binds: the caller's values (given: --bind), then
 * q8_binds_from_samples at the samples' shapes (one per sample input). */
q8_status q8_binds_for_quantize(const char *onnx_path, const q8_sample_set *s,
                                const q8_input_shape *shapes, const q8_input_value *given,
                                int n_given, q8_binds *b, q8_error *err);
void q8_binds_free(q8_binds *b);

#endif
