/* NumPy .npy files (versions 1-3): read into a tensor, write atomically. */
#ifndef Q8_NPY_H
#define Q8_NPY_H

#include "graph.h"
#include "q8_tools.h"

q8_status q8_npy_read(const char *path, q8_tensor **out, q8_error *err);
q8_status q8_npy_parse(const uint8_t *buf, size_t len, const char *what,
                       q8_tensor **out, q8_error *err);
q8_status q8_npy_write(const char *path, q8_dtype dtype, const int64_t *dims, int ndim,
                       const void *data, q8_error *err);

#endif
