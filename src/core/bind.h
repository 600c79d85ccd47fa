/* Inputs bound to a value at load (q8_input_value, q8.h): an ONNX graph's
 * input becomes a constant that the passes fold; a .q8 graph's bound inputs
 * are checked against the values asked for. */
#ifndef Q8_BIND_H
#define Q8_BIND_H

#include "graph.h"

/* Bind (or, for an input bound already, check) each value of opts. */
q8_status q8_graph_bind_inputs(q8_graph *g, const q8_load_options *opts, q8_error *err);
/* The bound tensor named name, or -1. */
int q8_graph_find_bound(const q8_graph *g, const char *name);
/* Does (dtype, dims, data) equal bound tensor t's value? Else a message
 * that says both values. */
q8_status q8_bound_check(const q8_tensor *t, q8_dtype dtype, const int64_t *dims, int ndim,
                         const void *data, q8_error *err);

#endif
