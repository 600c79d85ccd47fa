/* The output SQNR of a candidate INT8 graph against the FP32 graph on the
 * calibration samples (output_eval.c): how --calib-method auto compares
 * choices of ranges, with weights and the INT8 rewrite as they will be. */
#ifndef Q8_OUTPUT_EVAL_H
#define Q8_OUTPUT_EVAL_H

#include "graph.h"
#include "model.h"
#include "samples.h"

typedef struct q8_out_eval {
    const q8_sample_set *s;
    int *sample;            /* the sample indices scored */
    int n_samples;
    int n_outputs;
    int n_threads;
    float **ref;            /* [sample]: its FP32 float outputs, output after output
                               (numel[o] values each); NULL when they are made again
                               per score */
    int64_t *numel;         /* per output: elements, 0 where not float */
    /* When the FP32 outputs of all scored samples would take more memory
     * than the FP32 session that makes them (a wide output, e.g. a text
     * recognizer's 40 x 6625 scores, times 64 samples), the session is kept
     * and each score runs it again, one sample at a time: the same values,
     * in the same order, so the same scores. */
    q8_session *fp32;
    q8_model fp32_model;    /* the FP32 graph, not owned */
    float *one;             /* one sample's float outputs, output after output */
    double *mean;           /* per output, over the kept outputs: made by the first
                               q8_out_eval_rel_error */
} q8_out_eval;

/* FP32 outputs are kept while they take at most this much (and beyond it
 * while they take less than the FP32 session's weights and arena). */
#define Q8_OUT_EVAL_REF_BUDGET ((size_t)8 << 20)

typedef enum q8_out_eval_refs {
    Q8_OUT_EVAL_REFS_AUTO,  /* by Q8_OUT_EVAL_REF_BUDGET, as above */
    Q8_OUT_EVAL_REFS_KEEP,  /* always keep the outputs */
    Q8_OUT_EVAL_REFS_RERUN, /* always run the FP32 session again */
} q8_out_eval_refs;

/* Runs fp32 (not consumed; it must outlive e) on the first max_samples
 * samples not flagged in skip (NULL: none) and keeps its float outputs, or
 * the session that makes them (see above). */
q8_status q8_out_eval_open(const q8_graph *fp32, const q8_sample_set *s, const bool *skip,
                           int max_samples, int n_threads, q8_out_eval_refs refs,
                           q8_out_eval *e, q8_error *err);
/* Output SQNR in dB of the worst float output of g (consumed: an INT8 graph
 * with fp32's inputs and outputs) over the scored samples; NAN when no
 * output is float. */
q8_status q8_out_eval_score(q8_out_eval *e, q8_graph *g, double *db, q8_error *err);
/* The error energy of g's float outputs (g not consumed: an FP32 graph with
 * fp32's inputs and outputs, e.g. with one layer's weights changed) over
 * the FP32 outputs' energy about their mean over all scored samples (with
 * the outputs kept), averaged over the float outputs. */
q8_status q8_out_eval_rel_error(q8_out_eval *e, const q8_graph *g, double *rel, q8_error *err);
void q8_out_eval_close(q8_out_eval *e);

#endif
