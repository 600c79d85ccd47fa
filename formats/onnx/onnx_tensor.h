/* ONNX TensorProto -> q8 tensor: dtype, shape and data from raw_data, the
 * typed fields, or an external data file beside the model. */
#ifndef Q8_ONNX_TENSOR_H
#define Q8_ONNX_TENSOR_H

#include "graph.h"
#include "onnx.pb-c.h"

/* ONNX TensorProto.DataType -> q8_dtype (Q8_UNDEFINED if unknown). */
q8_dtype q8_onnx_dtype(int32_t onnx_type);

/* Fill t's dtype, shape and data (t->data owned). base_dir is the folder of
 * the model for external data, or NULL to refuse external data. what names
 * the tensor in messages. */
q8_status q8_onnx_tensor_fill(const Onnx__TensorProto *tp, const char *base_dir,
                              q8_tensor *t, q8_error *err);
/* The same, with raw_data pointing into map (the mapped model file): its
 * pages are dropped as they are copied. */
q8_status q8_onnx_tensor_fill_mapped(const Onnx__TensorProto *tp, const char *base_dir,
                                     const q8_mapping *map, q8_tensor *t, q8_error *err);

/* Read a serialized TensorProto file (.pb, as in ONNX test data). Returns a
 * standalone tensor (free with q8_tensor_free); its name is the proto's name
 * or "". */
q8_status q8_pb_read(const char *path, q8_tensor **out, q8_error *err);
q8_status q8_pb_parse(const uint8_t *buf, size_t len, const char *what,
                      q8_tensor **out, q8_error *err);

#endif
