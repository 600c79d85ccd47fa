/* Q8_SCALAR_TABLES_AUTO (and, the same way, Q8_INT8_PRELU_AUTO: whether
 * PRelu runs as q8.QPRelu): whether Add/Sub/Mul/Div by a constant scalar
 * between INT8 layers run as int8 tables, decided by what the tables do to
 * the model's output. The INT8 model is built both ways (same ranges, by the
 * caller's builder), run on calibration samples and compared with FP32's
 * outputs (output_eval.c); the tables are taken unless they cost more than
 * Q8_TABLES_MAX_LOSS_DB of output SQNR. They save a dequantize, an FP32 op
 * and a quantize per chain, but round once more (at the INT8 layer's
 * output, before the chain): PP-OCR detection loses about a tenth of a dB,
 * recognition several (docs/int8-cpu.md). */
#ifndef Q8_TABLES_CHOOSE_H
#define Q8_TABLES_CHOOSE_H

#include "graph.h"
#include "q8_tools.h"
#include "samples.h"

/* Makes the INT8 graph with the tables (on) or without. */
typedef q8_status (*q8_tables_build_fn)(void *arg, bool on, q8_graph **out, q8_error *err);

typedef struct q8_tables_choice {
    bool on;            /* taken */
    bool differ;        /* the two graphs differ (else nothing was scored) */
    double db[2];       /* output SQNR off, on (NAN when not scored) */
    int n_scored;
} q8_tables_choice;

/* fp32 (not consumed) is the graph the builder rewrites, at the samples'
 * shapes. The two graphs differ when they have other counts of the q8 op
 * `op` ("QLut", "QPRelu"); "on" is taken unless it loses more than max_loss
 * dB. Scores at most max_samples samples (the first ones). The caller
 * checks that the model has candidates at all (each build imports the
 * model again). */
q8_status q8_tables_choose(const q8_graph *fp32, const q8_sample_set *s, int max_samples,
                           int n_threads, q8_tables_build_fn build, void *arg, const char *op,
                           double max_loss, q8_tables_choice *out, q8_error *err);

#endif
