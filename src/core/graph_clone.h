/* A copy of a graph. */
#ifndef Q8_GRAPH_CLONE_H
#define Q8_GRAPH_CLONE_H

#include "graph.h"

/* *out: a graph like src (tensors, nodes, attributes; node params made again
 * by shape inference, so src must have been through the passes: shapes
 * inferred, no subgraphs left). With
 * share_constants, its constants point at src's data without owning it: src
 * must outlive the copy, and nothing may write into that data through the
 * copy (quantize's --calib-method auto scores INT8 graphs made from the
 * calibration graph this way, without a second copy of the weights). */
q8_status q8_graph_clone(const q8_graph *src, bool share_constants, q8_graph **out,
                         q8_error *err);

#endif
