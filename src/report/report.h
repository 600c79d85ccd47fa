/* Reports: an FP32 model and its quantized versions side by side, on the
 * user's data. What each costs (file, weights, activation arena, peak host
 * memory, device memory, latency) and what each loses (top-1, agreement
 * with FP32, output error, per-layer SQNR). The numbers are gathered here;
 * report_json.c, report_html.c and report_md.c render them (docs/reports.md). */
#ifndef Q8_REPORT_H
#define Q8_REPORT_H

#include "calibrate.h"
#include "model.h"

/* Error of a quantized tensor q against its FP32 reference r, summed over
 * every element of every sample. */
typedef struct q8_err_stats {
    double ref2;        /* sum r^2 */
    double q2;          /* sum q^2 */
    double dot;         /* sum r*q */
    double err2;        /* sum (q - r)^2 */
    double max_abs;     /* max |q - r| */
    int64_t n;          /* elements */
    int64_t nonfinite;  /* elements where q or r is NaN/inf (left out of the sums) */
} q8_err_stats;

void q8_err_stats_f32(q8_err_stats *s, const float *ref, const float *q, int64_t n);
/* q is int8 with value = scale * q */
void q8_err_stats_i8(q8_err_stats *s, const float *ref, const int8_t *q, float scale, int64_t n);
/* 10 log10(ref2 / err2): +inf when there is no error, NaN when undefined. */
double q8_err_sqnr_db(const q8_err_stats *s);
double q8_err_cosine(const q8_err_stats *s); /* NaN when a norm is 0 */

/* One quantized layer (a q8.* node) of a quantized model. */
typedef struct q8_report_layer {
    char *node;             /* node name, kept from the FP32 graph */
    char *op;               /* QConv, QGemm, QMatMul, QConvTranspose */
    char *tensor;           /* the FP32 tensor its output is compared with */
    int index;              /* position among the layers in execution order */
    float out_scale;        /* int8 output: its scale; 0: float output */
    double sparsity;        /* layer.<node>.sparsity, or -1 */
    double w_scale_min, w_scale_max;    /* layer.<node>.weight_scale_*, or -1 */
    q8_err_stats in_model;  /* output vs FP32 on the same model inputs */
    q8_err_stats alone;     /* output vs FP32 when its inputs are FP32 values */
} q8_report_layer;

/* One graph output compared with the FP32 model's output of the same name. */
typedef struct q8_report_output {
    char *name;
    q8_err_stats err;
} q8_report_output;

typedef struct q8_report_latency {
    int runs;
    double median_ms, min_ms, max_ms, p10_ms, p90_ms;
} q8_report_latency;

/* Cost: measured in a child process (see q8_report_measure). */
typedef struct q8_report_cost {
    size_t file_bytes;
    size_t weights_bytes;   /* constants the run reads */
    size_t arena_bytes;     /* planned activation + scratch arena */
    size_t device_bytes;    /* CUDA only */
    size_t peak_rss_bytes;  /* VmHWM of the child: load + warm-up + timed runs */
    q8_report_latency lat;
} q8_report_cost;

typedef struct q8_report_model {
    char *path;
    bool quantized;         /* a .q8 (else the FP32 ONNX) */
    q8_report_cost cost;
    /* accuracy */
    int64_t rows;           /* rows of output 0 over all samples (top-1 unit) */
    int64_t top1_hits;      /* vs --labels; -1 without labels or scores */
    int64_t agree;          /* argmax equal to FP32's (quantized models); -1 if n/a */
    q8_report_output *outputs;
    int n_outputs;
    q8_report_layer *layers; /* sorted: lowest in-model SQNR first */
    int n_layers;
    /* provenance, from the .q8 metadata */
    char *calib_method;     /* NULL if absent */
    char *prune_mode;
    double prune_fraction;
    char **fp32_layers;     /* nodes kept in FP32 (layer.<node>.fp32) */
    int n_fp32_layers;
    int source_matches;     /* source.sha256 vs the FP32 file: 1 same, 0 differs, -1 unknown */
    /* made by quantize --max-drop (search.* metadata); search_trials 0 if not */
    int search_trials;
    bool search_met;
    double search_max_drop, search_drop;
    char *search_metric;
    char *search_dense;     /* comma-separated layers the search made dense */
} q8_report_model;

typedef struct q8_report {
    char *data_dir;
    char *labels_path;      /* NULL if none */
    int n_samples;
    int n_inputs;
    q8_tensor_info *inputs; /* names (owned) and shapes of one sample */
    q8_device device;
    int n_threads;
    int runs;
    char created[32];       /* UTC, ISO 8601 */
    q8_report_model *models; /* [0]: FP32 */
    int n_models;
} q8_report;

typedef struct q8_report_options {
    const char *data_dir;
    const char *labels_path;    /* NULL: no labels */
    q8_device device;
    int runs;                   /* timed runs per model (>= 1) */
    int n_threads;              /* 0: one per CPU */
} q8_report_options;

/* The whole report: cost of every model (each in a forked child, first,
 * before this process grows), then accuracy on the CPU. paths[0] is the
 * FP32 ONNX model, paths[1..n-1] .q8 files. */
q8_status q8_report_build(const char *const *paths, int n, const q8_report_options *o,
                          q8_report *r, q8_error *err);
void q8_report_free(q8_report *r);

/* The samples in data_dir for the model at onnx_path (input names from its
 * raw import; data_dir may also be one .npy/.pb file: one sample of a
 * one-input model), and the shapes of sample 0: names (owned by *inputs, free
 * with q8_report_inputs_free) and shapes (malloc'd, names point into
 * *inputs). "--calib" in messages becomes "--data". */
q8_status q8_report_open_samples(const char *onnx_path, const char *data_dir, q8_sample_set *s,
                                 q8_tensor_info **inputs, q8_input_shape **shapes, q8_error *err);
void q8_report_inputs_free(q8_tensor_info *inputs, int n);

/* Cost of one model, measured in a forked child process (so that models do
 * not share a heap or a peak): load with the samples' shapes, set sample 0,
 * warm up, time `runs` runs, read the memory sizes and VmHWM. Call it from a
 * process with no threads running. */
q8_status q8_report_measure(const char *path, const q8_sample_set *s, const q8_input_shape *shapes,
                            q8_device device, int n_threads, int runs, q8_report_cost *out,
                            q8_error *err);

/* Accuracy of quantized models against the FP32 one on every sample, one
 * sample at a time: memory is bounded by one sample's activations. labels
 * (int64/int32, one per row of output 0 over all samples) may be NULL.
 * Fills rows/top1_hits/agree/outputs/layers of out[0] (FP32) and out[1..nq]. */
typedef struct q8_compare_options {
    const q8_tensor *labels;
    bool per_layer;
    int n_threads;
} q8_compare_options;

q8_status q8_report_compare(const q8_model *fp32, const q8_model *const *q, int nq,
                            const q8_sample_set *s, const q8_compare_options *o,
                            q8_report_model *out, q8_error *err);
void q8_report_model_free(q8_report_model *m);

/* Renderers: a malloc'd NUL-terminated document. */
q8_status q8_report_json(const q8_report *r, char **out, q8_error *err);
q8_status q8_report_html(const q8_report *r, char **out, q8_error *err);
q8_status q8_report_markdown(const q8_report *r, char **out, q8_error *err);

/* Derived numbers shared by the renderers. */
double q8_report_top1(const q8_report_model *m);       /* fraction, or -1 */
double q8_report_agreement(const q8_report_model *m);  /* fraction, or -1 */
/* The basename of a path (points into it). */
const char *q8_report_basename(const char *path);

#endif
