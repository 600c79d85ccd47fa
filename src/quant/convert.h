/* The whole conversion behind the `quantize` tool. */
#ifndef Q8_QUANTIZE_MODEL_H
#define Q8_QUANTIZE_MODEL_H

#include "quantize.h"

typedef struct q8_quantize_options {
    const q8_input_shape *input_shapes; /* none: from the first calibration sample */
    int n_input_shapes;
    const char *calib_dir;
    q8_calib_method method;
    double percentile;
    q8_prune_options prune;
    q8_quant_options quant;
    int n_threads;                      /* for calibration; 0 = all CPUs */
    const q8_meta *extra_meta;          /* more metadata to record (e.g. search.*), or NULL */
} q8_quantize_options;

typedef struct q8_quantize_result {
    size_t onnx_bytes, q8_bytes;
    size_t fp32_arena_bytes, q8_arena_bytes;
    int n_quantized;                    /* nodes running in INT8 */
    int n_samples;
    double seconds;
} q8_quantize_result;

q8_status q8_quantize_model(const char *onnx_path, const char *out_path,
                            const q8_quantize_options *o, q8_quantize_result *r, q8_error *err);

#endif
