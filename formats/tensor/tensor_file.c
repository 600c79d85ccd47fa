#include "tensor_file.h"

#include <string.h>

#include "npy.h"
#include "onnx_tensor.h"

q8_status q8_tensor_file_read(const char *path, q8_tensor **out, q8_error *err) {
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_read_file(path, &buf, &len, err));
    q8_status s;
    if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0) s = q8_npy_parse(buf, len, path, out, err);
    else s = q8_pb_parse(buf, len, path, out, err);
    free(buf);
    return s;
}

bool q8_is_tensor_file_name(const char *name) {
    size_t n = strlen(name);
    return (n > 4 && strcmp(name + n - 4, ".npy") == 0) || (n > 3 && strcmp(name + n - 3, ".pb") == 0);
}
