/* A graph output's error per sample and per channel (report_outputs.c). */
#ifndef Q8_REPORT_OUTPUTS_H
#define Q8_REPORT_OUTPUTS_H

#include "model.h"
#include "q8_tools.h"

/* The axis of output t that per-channel SQNR is taken along, or -1: the last
 * of a 2-D [N, C] or 3-D [N, rows, fields] output; of a 4-D one none for a
 * one-channel [N, H, W, 1] map (H, W >= 8), axis 3 when it is smaller than
 * axes 1 and 2 (N, H, W, C), else axis 1 (N, C, H, W), else axis 3 of
 * [N, 1, K, C] with C <= 4 and C < K (keypoints: x, y, score); axis 1 of 5-D
 * and more; never an axis of 1. */
int q8_report_channel_axis(const q8_tensor *t);

/* Per-channel sums of one output over the samples. */
typedef struct q8_output_acc {
    int64_t outer, channels, inner;  /* the output's layout around its channel axis */
    q8_err_stats *ch;                /* per channel; NULL: not measured */
    bool per_sample;                 /* 16 or more values a sample and 2 or more samples:
                                      * the worst sample is kept */
} q8_output_acc;

/* Sets o's per-sample and per-channel fields to "not measured" and a to
 * accumulate output t over n_samples samples when that is measurable. */
q8_status q8_output_acc_init(q8_output_acc *a, const q8_tensor *t, int n_samples,
                             q8_report_output *o, q8_error *err);
void q8_output_acc_add(q8_output_acc *a, const float *ref, const float *q);
/* o's channel_* fields from the sums. */
q8_status q8_output_acc_finish(const q8_output_acc *a, q8_report_output *o, q8_error *err);
void q8_output_acc_free(q8_output_acc *a);

/* s += one (one sample's sums). */
void q8_err_stats_add(q8_err_stats *s, const q8_err_stats *one);
/* Keeps sample `sample` (one: its sums; path: its first input file) as o's
 * worst if its SQNR is the lowest yet. */
q8_status q8_output_sample(q8_report_output *o, const q8_err_stats *one, int sample,
                           const char *path, q8_error *err);

#endif
