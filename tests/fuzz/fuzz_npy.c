/* libFuzzer harness: the readers behind q8run --input, chosen by content as
 * q8_cli_load_tensor does: .npy (then encode and re-read: the round trip
 * must give the same tensor) or an ONNX TensorProto .pb. */
#include <string.h>

#include "npy.h"
#include "onnx_tensor.h"

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_npy: invariant broken: %s\n", what);
        abort();
    }
}

static void round_trip(const q8_tensor *t) {
    uint8_t *buf;
    size_t len;
    q8_error err = {0};
    q8_status s = q8_npy_encode(t->dtype, t->dims, t->ndim, t->data, &buf, &len, &err);
    if (s != Q8_OK) {
        check(err.msg[0] != 0, "encode failed without a message");
        return;
    }
    q8_tensor *u = NULL;
    s = q8_npy_parse(buf, len, "re-encoded", &u, &err);
    check(s == Q8_OK, "cannot re-read what q8_npy_encode wrote");
    check(u->dtype == t->dtype && u->ndim == t->ndim, "round trip changed dtype or rank");
    check(memcmp(u->dims, t->dims, sizeof(int64_t) * (size_t)t->ndim) == 0,
          "round trip changed dims");
    check(memcmp(u->data, t->data, q8_tensor_nbytes(t)) == 0, "round trip changed data");
    q8_tensor_free(u);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    q8_tensor *t = NULL;
    q8_error err = {0};
    bool npy = size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0;
    q8_status s = npy ? q8_npy_parse(data, size, "fuzz", &t, &err)
                      : q8_pb_parse(data, size, "fuzz", &t, &err);
    if (s != Q8_OK) {
        check(err.msg[0] != 0 && err.status == s, "failure without a message");
        check(t == NULL, "tensor returned on failure");
        return 0;
    }
    check(t && t->shape_known && t->ndim >= 0 && t->ndim <= Q8_MAX_DIMS, "bad tensor");
    check(t->data != NULL, "tensor without data");
    if (npy) round_trip(t);
    q8_tensor_free(t);
    return 0;
}
