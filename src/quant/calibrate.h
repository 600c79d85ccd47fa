/* Calibration: run the FP32 executor over the user's samples and derive a
 * symmetric INT8 threshold for every float activation tensor. Samples are
 * read one at a time, so memory is bounded whatever their number. */
#ifndef Q8_CALIBRATE_H
#define Q8_CALIBRATE_H

#include "calib_stats.h"
#include "graph.h"
#include "samples.h"

typedef struct q8_calib_options {
    q8_calib_method method;
    double percentile;      /* for Q8_CALIB_PERCENTILE, e.g. 99.99 */
    int n_threads;
} q8_calib_options;

typedef struct q8_calibration {
    int n_tensors;
    float *threshold;       /* per tensor index of g; 0 where not a float activation */
    q8_hist **hist;         /* per tensor, NULL where not observed */
    int n_samples;
} q8_calibration;

/* g must be the optimized FP32 graph the quantizer will rewrite; its input
 * shapes must match the samples'. */
q8_status q8_calibrate(const q8_graph *g, const q8_sample_set *s, const q8_calib_options *o,
                       q8_calibration *out, q8_error *err);
void q8_calibration_free(q8_calibration *c);
/* The thresholds of `from` (measured on graph src) for the tensors of dst
 * with the same names; tensors without a match get 0 (left in FP32). */
q8_status q8_calibration_by_name(const q8_calibration *from, const q8_graph *src,
                                 const q8_graph *dst, q8_calibration *out, q8_error *err);

#endif
