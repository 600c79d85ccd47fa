/* The output SQNR of a candidate INT8 graph against the FP32 graph on the
 * calibration samples (output_eval.c): how --calib-method auto compares
 * choices of ranges, with weights and the INT8 rewrite as they will be. */
#ifndef Q8_OUTPUT_EVAL_H
#define Q8_OUTPUT_EVAL_H

#include "graph.h"
#include "samples.h"

typedef struct q8_out_eval {
    const q8_sample_set *s;
    int *sample;            /* the sample indices scored */
    int n_samples;
    int n_outputs;
    int n_threads;
    float **ref;            /* [sample][output]: FP32 outputs, NULL where not float */
    int64_t *numel;         /* per output: elements, 0 where not float */
} q8_out_eval;

/* Runs fp32 (not consumed) on the first max_samples samples not flagged in
 * skip (NULL: none) and keeps its float outputs. */
q8_status q8_out_eval_open(const q8_graph *fp32, const q8_sample_set *s, const bool *skip,
                           int max_samples, int n_threads, q8_out_eval *e, q8_error *err);
/* Output SQNR in dB of the worst float output of g (consumed: an INT8 graph
 * with fp32's inputs and outputs) over the scored samples; NAN when no
 * output is float. */
q8_status q8_out_eval_score(q8_out_eval *e, q8_graph *g, double *db, q8_error *err);
void q8_out_eval_close(q8_out_eval *e);

#endif
