/* --calib-method auto: choose the activation ranges by what they do to the
 * model's output. Every candidate range method (percentile, mse) gives a
 * threshold per tensor; the INT8 model built with them (weights, rewrite
 * and all, by the caller's builder) runs on calibration samples and its
 * outputs are compared with FP32's (output_eval.c). The candidate
 * with the best output SQNR is taken. No single method is right for every
 * model (docs/accuracy.md): MSE wins on recognition and loses on ISNet.
 * (Trying the other candidate per group of tensors as well was measured:
 * it fit the calibration samples and lost on held-out ones, so it is not
 * done; docs/accuracy.md.) */
#ifndef Q8_CALIB_CHOOSE_H
#define Q8_CALIB_CHOOSE_H

#include "calibrate.h"

/* Candidates compared by auto (Q8_CALIB_PERCENTILE uses o->percentile). */
#define Q8_CHOOSE_N_CANDIDATES 2

/* At most this many calibration samples are used to score (the first ones;
 * the ranges themselves come from every sample). */
#define Q8_CHOOSE_MAX_SAMPLES 64

/* c holds the histograms of every float activation of g (q8_calibrate's
 * passes); sets c->threshold and c->chosen, score_db, n_scored. o->build
 * makes the INT8 graph for thresholds indexed like g's tensors. Samples
 * flagged in skip (outliers) are not scored. */
q8_status q8_calib_choose(const q8_graph *g, const q8_sample_set *s, const q8_calib_options *o,
                          const bool *skip, q8_calibration *c, q8_error *err);

#endif
