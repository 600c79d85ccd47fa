/* --calib-method auto: choose the activation ranges by what they do to the
 * model's output. Every candidate range method (percentile, mse) gives a
 * threshold per tensor; the INT8 model built with them (weights, rewrite
 * and all, by the caller's builder) runs on calibration samples and its
 * outputs are compared with FP32's (output_eval.c). The candidate
 * with the best output SQNR is taken; then, tensor group by tensor group in
 * execution order, the other candidate's thresholds are tried and kept
 * where they raise the output SQNR. No single method is right for every
 * model (docs/accuracy.md): MSE wins on recognition and loses on ISNet. */
#ifndef Q8_CALIB_CHOOSE_H
#define Q8_CALIB_CHOOSE_H

#include "calibrate.h"

/* Candidates compared by auto (Q8_CALIB_PERCENTILE uses o->percentile). */
#define Q8_CHOOSE_N_CANDIDATES 2

/* Groups of tensors, in execution order, tried one at a time after the
 * model-wide choice. */
#define Q8_CHOOSE_GROUPS 6

/* At most this many calibration samples are used to score (the first ones;
 * the ranges themselves come from every sample). */
#define Q8_CHOOSE_MAX_SAMPLES 16

/* c holds the histograms of every float activation of g (q8_calibrate's
 * passes); sets c->threshold and c->chosen, chosen_db, score_db,
 * n_switched, n_scored. o->build makes the INT8 graph for thresholds
 * indexed like g's tensors. Samples flagged in skip (outliers) are not
 * scored. */
q8_status q8_calib_choose(const q8_graph *g, const q8_sample_set *s, const q8_calib_options *o,
                          const bool *skip, q8_calibration *c, q8_error *err);

#endif
