/* Shapes of a graph for fixed input shapes (see shapes.c). */
#ifndef Q8_SHAPES_H
#define Q8_SHAPES_H

#include "graph.h"

/* Bind the inputs opts gives values for (bind.h), then fix the graph
 * inputs' shapes from the model and opts; errors name every dynamic dim
 * left without a value. */
q8_status q8_graph_fix_inputs(q8_graph *g, const q8_load_options *opts, q8_error *err);
/* Run (again) a node's infer: params are rebuilt from its current inputs and
 * attributes; an int8 output of an op that sets no scale inherits its
 * input's. */
q8_status q8_node_reinfer(q8_graph *g, q8_node *n, q8_error *err);
/* Resolve every node's op and infer its shapes, in order (no folding: a
 * node left with unknown ops or shapes is an error). */
q8_status q8_graph_infer_shapes(q8_graph *g, q8_error *err);

#endif
