/* Q8_WROUND_AUTO (quantize --weight-rounding auto, the default): sums or
 * gptq rounding of the INT8 weights, decided per model by what each does
 * to the model's output. GPTQ fits each layer's rounding to the inputs of
 * the calibration samples, so it is scored on samples the fit did not see:
 * the last quarter of the calibration samples (2 to 8 of them) is held out
 * from the fit, and both INT8 models (same tables, each at the ranges
 * measured on it) are compared with the FP32 model, weights as trained, on
 * those. GPTQ is taken only where it gains Q8_WROUND_AUTO_MARGIN_DB: on the
 * kit it is taken on the pose models, text recognition and a few
 * classifiers, and left where it lost (Selfie, the emotion classifier, the
 * wake word; docs/accuracy.md, "Weight rounding by measurement"). */
#ifndef Q8_WROUND_CHOOSE_H
#define Q8_WROUND_CHOOSE_H

#include "graph.h"
#include "meta.h"
#include "q8_tools.h"
#include "samples.h"
#include "weight_round.h"

#define Q8_WROUND_AUTO_MARGIN_DB 0.5

/* Fewer calibration samples than this: sums, nothing compared (a GPTQ fit
 * on fewer than three samples, or a score on one, says little). */
#define Q8_WROUND_AUTO_MIN_SAMPLES 4

/* Makes the INT8 graph of g's weights as they are now, rounded by wr (the
 * caller's builder: ranges as measured on that model; *out is the caller's
 * to free). */
typedef q8_status (*q8_wround_build_fn)(void *arg, q8_weight_rounding wr, q8_graph **out,
                                        q8_error *err);

typedef struct q8_wround_choice {
    q8_weight_rounding chosen;  /* Q8_WROUND_SUMS or Q8_WROUND_GPTQ */
    int n_scored;               /* held-out samples scored; 0: not compared */
    double db[2];               /* output SQNR with sums, gptq (NAN: not scored) */
    char note[160];             /* why nothing was compared, or "" */
} q8_wround_choice;

/* g: the FP32 graph with its weights rounded by sums (q8_round_weights
 * with *saved: what they were before). Rounds them by gptq too (fit on the
 * samples not held out), builds and scores both, and leaves g with the
 * winner's weights (the builder keeps the winner's ranges) and *saved
 * holding every tensor the winner rounded, as it was before (for
 * q8_wround_restore_fp32). meta gets the winner's quant.weight_rounding. */
q8_status q8_wround_choose(q8_graph *g, const q8_quant_options *o, const q8_sample_set *s,
                           int n_threads, q8_wround_build_fn build, void *arg,
                           q8_wround_saved *saved, q8_meta *meta, q8_wround_choice *out,
                           q8_error *err);

#endif
