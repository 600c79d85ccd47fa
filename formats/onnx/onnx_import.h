/* ONNX model file -> q8 IR graph (attributes, constants, subgraphs; no
 * shape inference: that is the passes' job). */
#ifndef Q8_ONNX_IMPORT_H
#define Q8_ONNX_IMPORT_H

#include "graph.h"

q8_status q8_onnx_load(const char *path, q8_graph **out, q8_error *err);
/* base_dir: folder for external data, NULL to refuse it. */
q8_status q8_onnx_parse(const uint8_t *buf, size_t len, const char *base_dir,
                        q8_graph **out, q8_error *err);

#endif
