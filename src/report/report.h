/* Reports: an FP32 model and its quantized versions side by side, on the
 * user's data. What each costs (file, weights, activation arena, peak host
 * memory, device memory, latency) and what each loses (top-1, agreement
 * with FP32, output error, per-layer SQNR). The numbers are gathered here;
 * report_json.c, report_html.c and report_md.c render them (docs/reports.md). */
#ifndef Q8_REPORT_H
#define Q8_REPORT_H

#include "samples.h"
#include "model.h"
#include "q8_tools.h"

void q8_err_stats_f32(q8_err_stats *s, const float *ref, const float *q, int64_t n);
/* q is int8 with value = scale * q */
void q8_err_stats_i8(q8_err_stats *s, const float *ref, const int8_t *q, float scale, int64_t n);
/* The samples in data_dir for the model at onnx_path (input names from its
 * raw import; data_dir may also be one .npy/.pb file: one sample of a
 * one-input model), and the shapes of sample 0: names (owned by *inputs, free
 * with q8_report_inputs_free) and shapes (malloc'd, names point into
 * *inputs). "--calib" in messages becomes "--data". Inputs named in bound
 * (their values given: --bind) take no samples. */
q8_status q8_report_open_samples(const char *onnx_path, const char *data_dir,
                                 const q8_input_value *bound, int n_bound, q8_sample_set *s,
                                 q8_tensor_info **inputs, q8_input_shape **shapes, q8_error *err);
void q8_report_inputs_free(q8_tensor_info *inputs, int n);

/* Per tensor of quantized graph g (fmap: its FP32 counterparts in f, -1 for
 * none): k[t] = NULL, or k[t][c] with g's value of t = k[t][c] x f's value
 * in channel c (axis 1): the tensors quantize --equalize rescaled, the
 * factors recovered from the depthwise weights that read them
 * (report_equalized.c). k has g->n_tensors entries, zeroed by the caller;
 * the arrays are malloc'd. */
q8_status q8_report_channel_factors(const q8_graph *g, const q8_graph *f, const int *fmap,
                                    float **k, q8_error *err);
/* Is quantized tensor q the rescaled twin of FP32 tensor f: f's name plus
 * "_eq" (float) or "_eq_q8" (its int8 version)? equalize.c names them so. */
bool q8_report_is_eq_twin(const char *q, const char *f);
/* out[i] = ref[i] x k[channel of i] for tensor t's layout [N, C, ...]. */
void q8_report_apply_factors(const q8_tensor *t, const float *k, const float *ref, float *out);

/* Cost of one model, measured in a forked child process (so that models do
 * not share a heap or a peak): load with the samples' shapes, set sample 0,
 * warm up, time `runs` runs, read the memory sizes and VmHWM. Call it from a
 * process with no threads running. */
q8_status q8_report_measure(const char *path, const q8_sample_set *s, const q8_load_options *lo,
                            q8_device device, int n_threads, int runs, q8_report_cost *out,
                            q8_error *err);

/* Accuracy of quantized models against the FP32 one on every sample, one
 * sample at a time: memory is bounded by one sample's activations. labels
 * (int64/int32, one per row of output 0 over all samples) may be NULL.
 * Fills rows/top1_hits/agree/outputs/layers of out[0] (FP32) and out[1..nq]. */
typedef struct q8_compare_options {
    const q8_tensor *labels;
    bool per_layer;
    /* with per_layer: also each layer's exact_out, the model's float outputs
     * when that layer's outputs are FP32's, on the first gain_samples
     * samples (0: all): one more run per layer and sample */
    bool per_layer_gain;
    int gain_samples;
    int n_threads;
} q8_compare_options;

q8_status q8_report_compare(const q8_model *fp32, const q8_model *const *q, int nq,
                            const q8_sample_set *s, const q8_compare_options *o,
                            q8_report_model *out, q8_error *err);
void q8_report_model_free(q8_report_model *m);


#endif
