/* The FP32 graph run on every calibration sample with an observer: the
 * passes that measure statistics of chosen tensors before calibration
 * (equalize.c, bias_correct.c). */
#ifndef Q8_QUANT_SAMPLE_RUN_H
#define Q8_QUANT_SAMPLE_RUN_H

#include "backend.h"
#include "graph.h"
#include "samples.h"

/* fn sees every node's outputs (backend.h) and, first, each float graph
 * input as a node-less call (n NULL, ptr indexed like the graph's tensors,
 * only the input's entry set). */
q8_status q8_run_samples(const q8_graph *g, const q8_sample_set *s, int n_threads,
                         q8_node_observer fn, void *arg, q8_error *err);

#endif
