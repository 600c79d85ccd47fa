/* Accuracy-aware quantization (quantize --max-drop): quantize, measure the
 * accuracy drop against FP32 on the user's data, and while it is larger
 * than allowed, fall back on the most damaged layer (pruned INT8 -> dense
 * INT8 -> FP32), one step per trial, within a trial budget. */
#ifndef Q8_QUANTIZE_SEARCH_H
#define Q8_QUANTIZE_SEARCH_H

#include "convert.h"

typedef struct q8_search_options {
    const char *data_dir;       /* samples to measure on (same layout as --calib) */
    const char *labels_path;    /* NULL: the drop is 100 - top-1 agreement with FP32 */
    double max_drop;            /* allowed drop, in percentage points (0.5 = half a point) */
    int max_trials;             /* quantizations tried, the first (as asked) included */
} q8_search_options;

typedef enum q8_search_action {
    Q8_SEARCH_AS_ASKED = 0,     /* trial 1: the options as given */
    Q8_SEARCH_DENSE,            /* the layer is no longer pruned (still INT8) */
    Q8_SEARCH_FP32,             /* the layer is kept in FP32 (and dense) */
} q8_search_action;

/* One trial: the step it took and what it measured. */
typedef struct q8_search_trial {
    int index;                  /* 1-based */
    q8_search_action action;
    const char *node;           /* the layer changed (NULL for trial 1) */
    double layer_sqnr_db;       /* that layer's SQNR alone, in the trial before */
    double drop;                /* points */
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

/* --max-drop X: percentage points, "0.5", "0.5pt" or "0.5%" (all half a
 * point). A bare number below 0.1 is refused as ambiguous (it reads like a
 * fraction: 0.005 = half a point?). false with a message on bad input. */
bool q8_parse_max_drop(const char *s, double *points, char *msg, size_t n);

#endif
