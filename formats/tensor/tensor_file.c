#include "tensor_file.h"

#include <string.h>

#include "npy.h"
#include "onnx_tensor.h"
#include "q8_tools.h"

q8_status q8_tensor_file_load(const char *path, q8_tensor **out, q8_error *err) {
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_read_file(path, &buf, &len, err));
    /* told apart by content; a file named .npy is held to be one, so that
     * its error speaks of .npy (an empty file is no format at all) */
    size_t n = strlen(path);
    bool npy_name = n > 4 && strcmp(path + n - 4, ".npy") == 0;
    q8_status s;
    if (len == 0) s = q8_fail(err, Q8_ERR_FORMAT, "'%s' is empty", path);
    else if (npy_name || (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0))
        s = q8_npy_parse(buf, len, path, out, err);
    else s = q8_pb_parse(buf, len, path, out, err);
    free(buf);
    return s;
}

bool q8_is_tensor_file_name(const char *name) {
    size_t n = strlen(name);
    return (n > 4 && strcmp(name + n - 4, ".npy") == 0) || (n > 3 && strcmp(name + n - 3, ".pb") == 0);
}

/* The public form (q8_tools.h): the same tensor, its data handed over. */
q8_status q8_tensor_file_read(const char *path, q8_host_tensor **out, q8_error *err) {
    if (!path || !out) return q8_fail(err, Q8_ERR_ARG, "q8_tensor_file_read: NULL argument");
    *out = NULL;
    q8_tensor *t;
    Q8_TRY(q8_tensor_file_load(path, &t, err));
    q8_host_tensor *h = calloc(1, sizeof *h);
    if (!h) {
        q8_tensor_free(t);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    h->dtype = t->dtype;
    h->ndim = t->ndim;
    memcpy(h->dims, t->dims, sizeof h->dims);
    h->nbytes = q8_tensor_nbytes(t);
    if (t->owns_data) {
        h->data = t->data;
        t->data = NULL;
        t->owns_data = false;
    } else if (!(h->data = q8_aligned_alloc(h->nbytes ? h->nbytes : 1))) {
        q8_tensor_free(t);
        free(h);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    } else if (h->nbytes) {
        memcpy(h->data, t->data, h->nbytes);
    }
    q8_tensor_free(t);
    *out = h;
    return Q8_OK;
}

void q8_host_tensor_free(q8_host_tensor *t) {
    if (!t) return;
    q8_aligned_free(t->data);
    free(t);
}

int64_t q8_host_tensor_numel(const q8_host_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->dims[i];
    return n;
}
