/* Read a tensor file by its content: NumPy .npy or ONNX TensorProto .pb. */
#ifndef Q8_TENSOR_FILE_H
#define Q8_TENSOR_FILE_H

#include "graph.h"

q8_status q8_tensor_file_load(const char *path, q8_tensor **out, q8_error *err);
/* True for names ending in .npy or .pb. */
bool q8_is_tensor_file_name(const char *name);

#endif
