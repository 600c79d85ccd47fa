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
    bool keep_wide;         /* no wide-tensor rule (calib_span.h): thresholds as measured */
    void (*warn)(void *arg, const char *msg);   /* may be NULL */
    void *warn_arg;
    /* Q8_CALIB_AUTO: the INT8 graph (*out, the caller's to free) the
     * quantizer makes from g with thresholds thr (indexed like g's tensors) */
    q8_status (*build)(void *arg, const float *thr, q8_graph **out, q8_error *err);
    void *build_arg;
} q8_calib_options;

/* A sample whose input reaches more than this many times the largest |x|
 * of the other samples is an outlier (see mark_outliers in calibrate.c):
 * percentile and entropy leave it out, minmax keeps it and warns. */
#define Q8_CALIB_OUTLIER_FACTOR 64.0

#define Q8_CALIB_MAX_NOTES 8

typedef struct q8_calibration {
    int n_tensors;
    float *threshold;       /* per tensor index of g; 0 where not a float activation */
    q8_hist **hist;         /* per tensor, NULL where not observed */
    /* per tensor: the fraction of samples a static scale rounds to a few
     * steps where the tensor is wide (calib_span.h; its threshold is then
     * 0), else 0; NULL when not measured */
    float *wide;
    int n_wide;
    int n_samples;
    /* If branches no sample ran (their nodes stay FP32): one line each, also
     * given to the options' warn */
    int n_untaken;          /* may exceed Q8_CALIB_MAX_NOTES: the first ones are kept */
    char untaken[Q8_CALIB_MAX_NOTES][256];
    /* Q8_CALIB_AUTO (calib_choose.c): the candidate taken, each
     * candidate's output SQNR (percentile, mse), the samples scored */
    q8_calib_method chosen;
    double score_db[2];
    int n_scored;
} q8_calibration;

/* g must be the optimized FP32 graph the quantizer will rewrite; its input
 * shapes must match the samples'. Refuses samples that cannot calibrate
 * anything (no values, NaN or inf in an input, an input 0 in every sample);
 * warns (o->warn) about outlier samples, tensors with non-finite values
 * (those with no finite value at all stay in FP32: threshold 0), tensors
 * that are 0 on every sample, and wide tensors (calib_span.h: threshold 0,
 * recorded in wide). */
q8_status q8_calibrate(const q8_graph *g, const q8_sample_set *s, const q8_calib_options *o,
                       q8_calibration *out, q8_error *err);
void q8_calibration_free(q8_calibration *c);
/* The thresholds of `from` (measured on graph src) for the tensors of dst
 * with the same names; tensors without a match get 0 (left in FP32). */
q8_status q8_calibration_by_name(const q8_calibration *from, const q8_graph *src,
                                 const q8_graph *dst, q8_calibration *out, q8_error *err);

#endif
