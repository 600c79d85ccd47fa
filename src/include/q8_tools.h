/* The q8 tools library (libq8tools): ONNX import, quantization, accuracy and
 * memory reports, tensor files. The command-line tools are built on it and
 * on q8.h alone. It links protobuf-c; a program that only runs .q8 models
 * needs q8.h and libq8, nothing from here. */
#ifndef Q8_TOOLS_H
#define Q8_TOOLS_H

#include <stdbool.h>

#include "q8.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- models ------------------------------------------------------------ */

/* A model of either kind: a .q8 (as q8_model_load), or an ONNX file,
 * imported and optimized for the given input shapes (run in FP32). */
q8_status q8_model_open(const char *path, const q8_load_options *opts, q8_model **out,
                        q8_error *err);

/* ---- tensor files -------------------------------------------------------- */

/* A tensor read from a file, with its data (owned). */
typedef struct q8_host_tensor {
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
    void *data;             /* 64-byte aligned */
    size_t nbytes;
} q8_host_tensor;

/* NumPy .npy or ONNX TensorProto .pb, told apart by content. */
q8_status q8_tensor_file_read(const char *path, q8_host_tensor **out, q8_error *err);
void q8_host_tensor_free(q8_host_tensor *t);
int64_t q8_host_tensor_numel(const q8_host_tensor *t);
/* A .npy file image in a malloc'd buffer. */
q8_status q8_npy_encode(q8_dtype dtype, const int64_t *dims, int ndim, const void *data,
                        uint8_t **buf, size_t *len, q8_error *err);

/* ---- quantization -------------------------------------------------------- */

typedef enum q8_calib_method {
    Q8_CALIB_MINMAX = 0,
    Q8_CALIB_PERCENTILE,
    Q8_CALIB_ENTROPY,
    Q8_CALIB_MSE,           /* least squared quantization error (calib_mse.c) */
    Q8_CALIB_AUTO,          /* percentile or mse, by the model's output SQNR (calib_choose.c) */
} q8_calib_method;

typedef enum q8_prune_mode { Q8_PRUNE_NONE = 0, Q8_PRUNE_UNSTRUCTURED, Q8_PRUNE_2_4 } q8_prune_mode;

typedef struct q8_prune_options {
    q8_prune_mode mode;
    double fraction;            /* unstructured: fraction of weights set to zero */
    bool global;                /* one magnitude threshold over all layers */
    const char *const *skip;    /* node names left dense */
    int n_skip;
    /* unstructured: `fraction` of the prunable weights (all layers but the
     * skipped and protected ones) is shared out over the layers by their
     * measured sensitivity on the calibration samples; overrides global */
    bool sensitivity;
    bool protect_ends;          /* with sensitivity: the first and last layers stay dense */
    /* with sensitivity: each layer's curve scaled by the error it causes at
     * the model's outputs, measured by pruning it alone (prune_probe.c) */
    bool output_aware;
    /* re-fit the kept weights of each pruned layer on the calibration
     * samples to reproduce the dense layer's output (any mode) */
    bool refit;
    /* with refit: to the dense *model's* output at that layer, on the inputs
     * the layers before it, already pruned and re-fitted, give it (so each
     * layer also takes back the error upstream); one capture pass per layer
     * (up to 64 passes) */
    bool refit_dense;
} q8_prune_options;

/* q8_quant_options.weight_rounding: how FP32 weights become int8 */
typedef enum q8_weight_rounding {
    Q8_WROUND_NEAREST = 0,  /* each weight to its nearest grid point */
    /* GPTQ (Frantar et al., 2022): a row's weights rounded one input at a
     * time, each rounding error moved onto the inputs not yet rounded by
     * the inverse input covariance of the calibration samples */
    Q8_WROUND_GPTQ = 1,
    /* nearest, then each convolution window's taps (one output channel,
     * one input channel) moved one step back where rounding moved them most
     * until the window's sum is the nearest whole step to the FP32 sum: a
     * flat input region gives the FP32 response (BatchNorm-folded depthwise
     * filters are zero-sum edge detectors; docs/accuracy.md, PoseNet). The
     * quantize tool's default; zero-initialized options: nearest */
    Q8_WROUND_SUMS = 2,
    /* q8_quantize_model: sums or gptq, whichever gives the INT8 model the
     * better output SQNR on calibration samples the GPTQ fit did not see
     * (wround_choose.h; the quantize tool's default); anywhere else, sums */
    Q8_WROUND_AUTO = 3,
} q8_weight_rounding;

/* q8_quant_options.scalar_tables */
typedef enum q8_scalar_tables {
    Q8_SCALAR_TABLES_OFF = 0,   /* the ops stay FP32 */
    Q8_SCALAR_TABLES_ON = 1,
    /* q8_quantize_model: on unless it costs the INT8 model more than
     * Q8_TABLES_MAX_LOSS_DB of output SQNR on the calibration samples (the
     * quantize tool's default); anywhere else, off */
    Q8_SCALAR_TABLES_AUTO = 2,
} q8_scalar_tables;

/* Output SQNR that Q8_SCALAR_TABLES_AUTO gives up for the tables' speed */
#define Q8_TABLES_MAX_LOSS_DB 1.5

/* q8_quant_options.int8_prelu */
typedef enum q8_int8_prelu {
    Q8_INT8_PRELU_OFF = 0,      /* PRelu stays FP32 */
    Q8_INT8_PRELU_ON = 1,
    /* q8_quantize_model: on unless the INT8 model's output SQNR on the
     * calibration samples is lower with it (the quantize tool's default);
     * anywhere else, off */
    Q8_INT8_PRELU_AUTO = 2,
} q8_int8_prelu;

/* q8_quant_options.fp32_heads */
typedef enum q8_fp32_heads {
    Q8_FP32_HEADS_OFF = 0,      /* the heads are quantized like any layer */
    /* the layers that write the model's outputs (src/quant/quantize.h,
     * q8_head_layers) stay FP32 when they hold at most 2% of its weights */
    Q8_FP32_HEADS_ON = 1,
    /* q8_quantize_model: on when it gains the INT8 model Q8_HEADS_MIN_GAIN_DB
     * of output SQNR on the calibration samples and grows its activation
     * arena by at most half, and nothing is pruned; anywhere else, off.
     * Not the quantize tool's default: the float heads cost MoveNet 13% of
     * its INT8 time, over issue 11's speed target (docs/accuracy.md, "FP32
     * heads") */
    Q8_FP32_HEADS_AUTO = 2,
} q8_fp32_heads;

/* Output SQNR FP32 heads must gain for Q8_FP32_HEADS_AUTO to keep them:
 * they work at the outputs' resolution, in float (MoveNet's cost 13% of its
 * INT8 time for 1.1 dB, Selfie's 9% for 0.4; docs/accuracy.md, "FP32
 * heads") */
#define Q8_HEADS_MIN_GAIN_DB 1.0

/* Q8_FP32_HEADS_AUTO's other bound: the INT8 model's activation arena with
 * the heads FP32 (on) at most half more than without (off). */
static inline bool q8_heads_arena_fits(size_t off, size_t on) { return on <= off + off / 2; }

typedef struct q8_quant_options {
    const char *const *fp32_layers; /* node names kept in FP32 */
    int n_fp32_layers;
    /* rescale Conv -> depthwise Conv pairs so that the tensor between them
     * has equal channel ranges (measured on the calibration samples) */
    bool equalize;
    /* with equalize: also pairs with other activations between (HardSwish,
     * Clip(0, 6), Sigmoid, ...), rescaled around them by per-channel Mul
     * nodes that the INT8 rewrite folds into one per-channel table */
    bool equalize_through;
    /* Add/Sub/Mul/Div by a constant scalar between INT8 layers run as int8
     * tables (faster, one more rounding per chain: it cost PP-OCR
     * recognition accuracy, not detection's; docs/int8-cpu.md) */
    q8_scalar_tables scalar_tables;
    /* a Mul of two int8 activations (a squeeze-excite gate scaling a block
     * output) runs as q8.QMul between INT8 layers (faster; off by default:
     * it cost PP-OCR's angle classifier held-out output SQNR, 44.3 -> 39.9
     * dB; docs/performance.md) */
    bool int8_gates;
    /* a PRelu with a constant slope between int8 nodes runs as q8.QPRelu,
     * and with it the residual sum before it as q8.QAdd (MediaPipe's face
     * and iris nets: the sum -> PRelu stream in int8 instead of float) */
    q8_int8_prelu int8_prelu;
    /* Gather lookups of float constant tables (token / position embeddings)
     * read an int8 copy with one scale per row (quantize's default: on;
     * docs/accuracy.md, "Embedding tables in INT8") */
    bool int8_embeddings;
    q8_weight_rounding weight_rounding;
    /* activations whose range varies by orders of magnitude from sample to
     * sample (and what linear layers compute from them) keep a static INT8
     * scale anyway (quantize --wide-range int8); false, the default: their
     * layers stay FP32 (src/quant/calib_span.h; docs/accuracy.md) */
    bool wide_int8;
    /* a layer of fewer than Q8_MIN_ALONE_MACS multiply-adds with no int8
     * neighbour but its own tables stays FP32 (src/quant/rewrite.c): its
     * conversions and calls cost more than FP32's arithmetic (quantize's
     * default: on) */
    bool small_alone_fp32;
    /* tables and views that lead to no INT8 layer (only to the model's
     * outputs or to float ops) run in FP32, so the last INT8 layers write
     * their accumulators dequantized instead of rounded to an int8 step at
     * a calibrated, possibly clipped, range (quantize --int8-tails off;
     * default: false, int8 as far as the int8 flow goes; docs/accuracy.md,
     * "Outputs in int8") */
    bool fp32_tails;
    /* int8 tensors that reach a graph output through tables and views only
     * (and feed no INT8 layer) take their observed extremes as range, not
     * the calibration method's, so the outputs keep their rare peaks
     * (quantize --output-ranges full, the default; calibrated: the method's
     * ranges; docs/accuracy.md, "Output ranges from the extremes") */
    bool output_ranges_full;
    q8_fp32_heads fp32_heads;
} q8_quant_options;

struct q8_meta;

/* Dense weights deflated in the .q8 too (quantize --compress-weights): the
 * smallest file, every weight inflated into memory at load instead of used
 * in place from the mapping. Auto: on when something is pruned (pruned
 * weights are expanded at load anyway, and a smaller file is why one
 * prunes), off otherwise. */
typedef enum q8_compress_weights {
    Q8_COMPRESS_AUTO = 0,
    Q8_COMPRESS_OFF,
    Q8_COMPRESS_ON,
} q8_compress_weights;

typedef struct q8_quantize_options {
    const q8_input_shape *input_shapes; /* none: from the first calibration sample */
    int n_input_shapes;
    const char *calib_dir;
    /* inputs bound to a value (quantize --bind); an integer or bool input
     * the same in every calibration sample that decides shapes or If
     * branches is bound to that value too */
    const q8_input_value *input_values;
    int n_input_values;
    q8_calib_method method;
    double percentile;
    q8_prune_options prune;
    q8_quant_options quant;
    int n_threads;                      /* for calibration; 0 = all CPUs */
    q8_compress_weights compress;
    const struct q8_meta *extra_meta;   /* internal (the --max-drop search): NULL */
    /* Called with each warning a person should see (calibration data that
     * looks wrong: non-finite or all-zero activations, outlier samples);
     * NULL: warnings are dropped. One line each, no newline. */
    void (*warn)(void *arg, const char *msg);
    void *warn_arg;
} q8_quantize_options;

/* What pruning left: over the layers it considers (not the --prune-skip
 * ones), their weights, the zeros among them, and the weights of the first
 * and last layers when scope sensitivity kept them dense (--prune-protect
 * ends). */
typedef struct q8_prune_counts {
    int layers;
    int64_t weights, zeros, protected_weights;
} q8_prune_counts;

typedef struct q8_quantize_result {
    size_t onnx_bytes, q8_bytes;
    size_t fp32_arena_bytes, q8_arena_bytes;
    /* every float activation of one FP32 run at the calibration samples'
     * shapes, summed (no reuse): what the per-layer comparison of a
     * --min-sqnr search on those samples holds, twice */
    size_t fp32_activation_bytes;
    int n_quantized;                    /* nodes running in INT8 */
    /* the model's own integer ops (ConvInteger, MatMulInteger, QLinearConv,
     * QLinearMatMul: quantized by another tool), which run as they are */
    int n_onnx_integer;
    int n_samples;
    double seconds;
    /* --calib-method auto: the range method taken, and the output SQNR of
     * the INT8 model with each candidate's ranges on the calibration
     * samples scored (calib_scored of them; 0 for the other methods) */
    q8_calib_method calib_chosen;
    int calib_scored;
    double calib_candidate_db[2];   /* percentile, mse */
    /* Q8_SCALAR_TABLES_AUTO: whether the tables were taken, and the
     * output SQNR without and with them on tables_scored calibration
     * samples (0 samples: not decided so) */
    bool tables_chosen;
    int tables_scored;
    double tables_db[2];            /* off, on */
    /* Q8_INT8_PRELU_AUTO: the same for q8.QPRelu */
    bool prelu_chosen;
    int prelu_scored;
    double prelu_db[2];             /* off, on */
    /* Q8_FP32_HEADS_AUTO: the same for the heads in FP32 (n_heads of them
     * under the size bound; 0: none, not scored) */
    bool heads_chosen;
    int heads_scored, n_heads;
    double heads_db[2];             /* off, on */
    /* the INT8 model's activation arena without and with them (auto: not
     * scored, off, when it would grow by more than half) */
    size_t heads_arena[2];
    int n_int8_tables;              /* embedding lookups reading int8 tables */
    int n_int8_added_tables;        /* tables added to activations, in int8 */
    int n_equalized;                /* Conv -> depthwise pairs equalized ... */
    int n_equalized_through;        /* ... of them through activations (per-channel tables) */
    /* Q8_WROUND_AUTO: the rounding taken, and the output SQNR of the INT8
     * model with each (sums, gptq) on wround_scored held-out calibration
     * samples (0 samples: not compared, sums taken; wround_note says why) */
    q8_weight_rounding wround_chosen;
    int wround_scored;
    double wround_db[2];
    char wround_note[160];
    q8_prune_counts prune;          /* --prune / --prune-mode: what it came to */
} q8_quantize_result;

/* ONNX -> FP32 passes -> prune -> calibrate -> INT8 rewrite -> .q8 file,
 * written atomically. */
q8_status q8_quantize_model(const char *onnx_path, const char *out_path,
                            const q8_quantize_options *o, q8_quantize_result *r, q8_error *err);

/* Accuracy-aware quantization (quantize --max-drop): quantize, measure the
 * accuracy drop against FP32 on the user's data, and while it is larger
 * than allowed, fall back on the most damaged layer (pruned INT8 -> dense
 * INT8 -> FP32), one step per trial, within a trial budget. */
typedef struct q8_search_options {
    const char *data_dir;       /* samples to measure on (same layout as --calib) */
    const char *labels_path;    /* NULL: the drop is 100 - top-1 agreement with FP32 */
    double max_drop;            /* allowed drop, in percentage points (0.5 = half a point) */
    int max_trials;             /* quantizations tried, the first (as asked) included */
    /* quantize --min-sqnr: when by_sqnr, the criterion is instead the
     * output SQNR (worst float output, dB) against FP32 >= min_sqnr_db,
     * label-free, measured on data_dir (NULL: the calibration samples) */
    bool by_sqnr;
    double min_sqnr_db;
    /* 0: no limit. Otherwise the steps' bytes (3 a weight kept in FP32, 1 a
     * pruned weight made dense), summed over the search, stay within this:
     * a layer whose step would exceed it is not a candidate (quantize's
     * default search, --min-sqnr auto, gives it 2% of the INT8 file). */
    size_t max_added_bytes;
    /* 0: any step. Otherwise a step is taken only if its layer, made exact
     * in the trial before, gained the float outputs at least this many dB
     * (quantize's probe above its --min-sqnr auto floor: one large step) */
    double min_step_gain_db;
    /* 0: Q8_SEARCH_MIN_GAIN_DB (0.05). With by_sqnr, a step after which the
     * output SQNR rose by less than this is taken back in one more trial
     * once the target is met (kept back if the target still holds); with a
     * drop, a step after which the drop did not fall */
    double idle_gain_db;
    /* out already holds trial 1's model (quantize wrote it): when no later
     * trial is better, out is left as it is (no search record added) */
    bool out_is_first;
    /* quantize's own default search (--min-sqnr auto), not one the user
     * asked for: the record (search.auto) says so */
    bool automatic;
} q8_search_options;

typedef enum q8_search_action {
    Q8_SEARCH_AS_ASKED = 0,     /* trial 1: the options as given */
    Q8_SEARCH_DENSE,            /* the layer is no longer pruned (still INT8) */
    Q8_SEARCH_FP32,             /* the layer is kept in FP32 (and dense) */
    Q8_SEARCH_UNDO,             /* the steps that did not lower the drop, taken back
                                 * (node: their layers, ", " between) */
} q8_search_action;

/* One trial: the step it took and what it measured. */
typedef struct q8_search_trial {
    int index;                  /* 1-based */
    q8_search_action action;
    const char *node;           /* the layer changed (NULL for trial 1) */
    double layer_sqnr_db;       /* that layer's SQNR alone, in the trial before */
    double layer_gain_db;       /* the float outputs' SQNR gain with that layer's outputs
                                 * exact, in the trial before (NaN: ranked by SQNR alone) */
    double drop;                /* points; with by_sqnr, dB short of min_sqnr_db (0: met) */
    double sqnr_db;             /* output SQNR against FP32, worst float output */
    double top1;                /* fraction with labels, else -1 */
    double agreement;           /* fraction */
    size_t q8_bytes;
} q8_search_trial;

typedef struct q8_search_result {
    bool met;                   /* best.drop <= max_drop */
    int trials;
    bool labels;                /* drop measured against labels (else agreement) */
    double fp32_top1;           /* fraction, -1 without labels */
    int64_t rows;               /* rows the drop was measured on */
    q8_search_trial first, best;
    char **fp32_layers;         /* the best model's fallbacks (owned) */
    int n_fp32_layers;
    char **dense_layers;
    int n_dense_layers;
    bool exhausted;             /* stopped because no layer was left to fall back on */
    bool no_large_step;         /* stopped: the next step would gain < min_step_gain_db */
    bool written;               /* out was written (not with out_is_first and trial 1 best) */
    q8_quantize_result q;       /* the model written */
} q8_search_result;

typedef void (*q8_search_progress)(void *arg, const q8_search_trial *t);

/* Writes the best model found to out_path (always, when no error occurs),
 * with search.* metadata; r says whether the criterion was met. */
q8_status q8_quantize_search(const char *onnx_path, const char *out_path,
                             const q8_quantize_options *o, const q8_search_options *so,
                             q8_search_progress progress, void *arg, q8_search_result *r,
                             q8_error *err);
void q8_search_result_free(q8_search_result *r);
/* The choices q8_quantize_model made by measurement for the options left
 * to auto (ranges, weight rounding, scalar tables), written into o in place
 * of auto, so that quantizing again with o makes the same choices without
 * scoring them again (the search's trials and the model it writes). */
void q8_quantize_pin_auto(q8_quantize_options *o, const q8_quantize_result *r);

/* quantize --speed-check: time every INT8 layer (with the conversions that
 * exist only for it) against its FP32 form on this machine, on calibration
 * sample 0 (minimum over `runs` runs, o->n_threads threads), and keep in FP32
 * the layers where INT8 is slower; the model with those fallbacks is written
 * only if it measures faster as a whole than the first. The decisions go in
 * the .q8's metadata (speed.*). */
typedef struct q8_speed_layer {
    char *node;
    double int8_ms, fp32_ms;    /* per run, the minimum over the runs */
    bool kept;                  /* INT8 lost: a fallback candidate */
} q8_speed_layer;

typedef struct q8_speed_result {
    q8_quantize_result q;       /* the model written */
    q8_speed_layer *layers;     /* every INT8 layer with an FP32 node of its name */
    int n_layers, n_kept;
    double fp32_ms, int8_ms;    /* whole model (sum of its nodes' times) */
    double int8_kept_ms;        /* with the fallbacks (when n_kept) */
    bool reverted;              /* with them it was not faster: written without */
} q8_speed_result;

q8_status q8_quantize_speed(const char *onnx_path, const char *out_path,
                            const q8_quantize_options *o, int runs, q8_speed_result *r,
                            q8_error *err);
void q8_speed_result_free(q8_speed_result *r);

/* --max-drop X: percentage points, "0.5", "0.5pt" or "0.5%" (all half a
 * point). A bare number below 0.1 is refused as ambiguous (it reads like a
 * fraction: 0.005 = half a point?). false with a message on bad input. */
bool q8_parse_max_drop(const char *s, double *points, char *msg, size_t n);

/* ---- reports (docs/reports.md) --------------------------------------------- */

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
    q8_err_stats exact_out; /* the model's float outputs (all together) vs FP32 when this
                             * layer's own error (its output in the "alone" run minus
                             * FP32's) is taken off its output, the rest run as quantized
                             * (q8_compare_options.per_layer_gain; n = 0: not measured);
                             * exact_base: the same sums with nothing taken off */
    q8_err_stats exact_base;
    int64_t weight_elems;   /* elements of its constant weight (QConv, QConvTranspose,
                             * QGemm), else 0 */
} q8_report_layer;

/* One graph output compared with the FP32 model's output of the same name. */
typedef struct q8_report_output {
    char *name;
    q8_err_stats err;       /* over every sample */
    /* One SQNR over all samples hides a sample the model gets wrong: the
     * lowest per-sample SQNR, its sample (index and first input file);
     * worst_sample -1 with fewer than 2 samples. */
    double worst_sample_db;
    int worst_sample;
    char *worst_sample_path;
    /* One SQNR over all channels hides a small-valued channel next to large
     * ones (a detector's score columns beside its box coordinates): SQNR per
     * channel of channel_axis over all samples, their median and the worst
     * (channels 0: not measured, fewer than 32 values a channel; channels
     * whose FP32 values are all 0 are left out). */
    int channel_axis;
    int64_t channels, channels_measured;
    double channel_median_db, channel_worst_db;
    int64_t channel_worst;
} q8_report_output;

typedef struct q8_report_latency {
    int runs;
    double median_ms, min_ms, max_ms, p10_ms, p90_ms;
} q8_report_latency;

/* Cost, measured in a child process. */
typedef struct q8_report_cost {
    size_t file_bytes;
    size_t weights_bytes;   /* constants the run reads */
    size_t arena_bytes;     /* planned activation + scratch arena */
    size_t device_bytes;    /* CUDA only */
    size_t peak_rss_bytes;  /* VmHWM of the child: load + warm-up + timed runs */
    q8_report_latency lat;
} q8_report_cost;

/* What "agreement with FP32" means for output 0: chosen from the output's
 * shape and the FP32 model's values on the first sample (docs/reports.md). */
typedef enum q8_agree_kind {
    Q8_AGREE_NONE = 0,  /* no class or mask structure: output SQNR and cosine only */
    Q8_AGREE_TOP1,      /* argmax over the last axis: classifier, sequence, NHWC classes */
    Q8_AGREE_PIXEL,     /* argmax over axis 1 of N,C,H,W: per-pixel classes */
    Q8_AGREE_MASK,      /* IoU of the maps thresholded at 0.5: one-channel map in [0, 1] */
} q8_agree_kind;

typedef struct q8_report_model {
    char *path;
    bool quantized;         /* a .q8 (else the FP32 ONNX) */
    q8_report_cost cost;
    /* accuracy */
    int64_t rows;           /* rows of output 0 over all samples (top-1 unit) */
    int64_t top1_hits;      /* vs --labels; -1 without labels or scores */
    q8_agree_kind agree_kind;
    int64_t agree;          /* rows/pixels whose argmax is FP32's, or the masks'
                             * intersection (quantized models); -1 if n/a */
    int64_t agree_of;       /* what agree is out of: rows, pixels, or the masks' union */
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
    double search_min_sqnr, search_sqnr;   /* quantize --min-sqnr; NAN for --max-drop */
    bool search_auto;       /* the default search (--min-sqnr auto), not asked for */
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
    /* inputs bound as the .q8 files were made (quantize --bind): the FP32
     * model is built with them, and the samples leave them out */
    const q8_input_value *input_values;
    int n_input_values;
} q8_report_options;

/* The whole report: cost of every model (each in a forked child, first,
 * before this process grows), then accuracy on the CPU. paths[0] is the
 * FP32 ONNX model, paths[1..n-1] .q8 files. */
q8_status q8_report_build(const char *const *paths, int n, const q8_report_options *o,
                          q8_report *r, q8_error *err);
void q8_report_free(q8_report *r);

/* Renderers: a malloc'd NUL-terminated document. */
q8_status q8_report_json(const q8_report *r, char **out, q8_error *err);
q8_status q8_report_html(const q8_report *r, char **out, q8_error *err);
q8_status q8_report_markdown(const q8_report *r, char **out, q8_error *err);

/* Derived numbers. */
double q8_report_top1(const q8_report_model *m);       /* fraction, or -1 */
double q8_report_agreement(const q8_report_model *m);  /* fraction (IoU for a mask), or -1 */
/* "top-1 agreement with FP32", "per-pixel class agreement with FP32",
 * "mask IoU with FP32 (at 0.5)", or NULL for Q8_AGREE_NONE */
const char *q8_agree_kind_label(q8_agree_kind k);
/* Worst output SQNR, cosine over the model's outputs (NaN if none). */
double q8_report_worst_output_sqnr(const q8_report_model *q);
double q8_report_worst_output_cosine(const q8_report_model *q);
typedef struct q8_report_delta {
    double size_ratio;          /* q.file / f.file */
    double weights_ratio;
    double arena_ratio;
    double peak_rss_ratio;
    double device_ratio;        /* NaN when not measured */
    double latency_ratio;       /* median q / median f */
    double top1_drop_points;    /* (f.top1 - q.top1) * 100, NaN without labels */
    double agreement;           /* fraction, NaN if n/a */
    double disagree_points;     /* (1 - agreement) * 100 */
} q8_report_delta;
q8_report_delta q8_report_delta_of(const q8_report_model *f, const q8_report_model *q);
/* The basename of a path (points into it). */
const char *q8_report_basename(const char *path);
/* Does output j's one SQNR hide its worst sample (*sample) or its median
 * channel (*channel) 6 dB or more below it? Not the channels of class
 * scores (output 0 with an agreement measure): a rare class's small
 * probabilities have a low SQNR and change no decision. */
bool q8_report_output_hides(const q8_report_model *q, int j, bool *sample, bool *channel);
/* Numbers as the reports print them: "12.3 dB", "exact" (no error), "n/a";
 * three significant digits for a ratio or a time: "3.58", "0.142", "125". */
const char *q8_fmt_db(double db, char *buf, size_t n);
const char *q8_fmt_sig(double v, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
