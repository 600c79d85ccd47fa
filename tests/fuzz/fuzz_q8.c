/* libFuzzer harness for the .q8 reader: parse, sort, infer, and run once on
 * zeros when small. Every input is tried twice: as it is (the checksums
 * reject almost every mutation), and "resealed" with its checksums
 * recomputed, so that the fuzzer reaches the record parsing, the bounds
 * checks and the ops' infer behind them. */
#include <string.h>

#include "crc32c.h"
#include "model.h"
#include "passes.h"
#include "q8file.h"

#define MAX_SESSION_BYTES (64u << 20)

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_q8: invariant broken: %s\n", what);
        abort();
    }
}

static bool small_enough(const q8_graph *g) {
    size_t total = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        const q8_tensor *t = g->tensors[i];
        if (!t->shape_known || t->data) continue;
        int64_t numel;
        if (!q8_shape_numel(t->dims, t->ndim, &numel)) return false;
        size_t b = (size_t)numel * q8_dtype_size(t->dtype);
        if (b > MAX_SESSION_BYTES || (total += b) > MAX_SESSION_BYTES) return false;
    }
    return true;
}

static void load_and_run(const uint8_t *data, size_t size) {
    q8_graph *g = NULL;
    q8_error err = {0};
    q8_status s = q8_file_parse(data, size, &g, NULL, &err);
    if (s == Q8_OK) s = q8_graph_toposort(g, &err);
    if (s == Q8_OK) s = q8_graph_fix_inputs(g, NULL, &err);
    if (s == Q8_OK) s = q8_graph_infer_shapes(g, &err);
    if (s != Q8_OK) {
        check(err.msg[0] != 0, "failure without a message");
        q8_graph_free(g);
        return;
    }
    if (!small_enough(g)) {
        q8_graph_free(g);
        return;
    }
    q8_model *m = NULL;
    if (q8_model_from_graph(g, "fuzz", &m, &err) != Q8_OK) return;
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = 1};
    /* owning (as q8run's: constants released after prepare, pruned weights
     * possibly kept compressed; the session frees the model, also when it
     * fails) or sharing the model, by one bit of the input */
    bool owning = size & 1;
    q8_status cs = owning ? q8_session_create_owning(m, &so, &sess, &err)
                          : q8_session_create(m, &so, &sess, &err);
    if (cs == Q8_OK) {
        for (int i = 0; i < q8_model_num_inputs(m); i++) {
            q8_tensor_info info;
            q8_model_input_info(m, i, &info, NULL);
            int64_t numel = 1;
            for (int d = 0; d < info.ndim; d++) numel *= info.dims[d];
            void *zeros = calloc(1, (size_t)numel * q8_dtype_size(info.dtype) + 1);
            check(zeros != NULL, "calloc");
            q8_session_set_input(sess, info.name, info.dtype, info.dims, info.ndim, zeros, &err);
            free(zeros);
        }
        q8_session_run(sess, &err);
        q8_session_free(sess);
    }
    if (!owning) q8_model_free(m);
}

/* Recompute the header and section checksums in a copy, where the section
 * table can be read. */
static uint8_t *reseal(const uint8_t *data, size_t size) {
    if (size < 64 || !q8_file_is_q8(data, size)) return NULL;
    uint64_t toff;
    uint32_t n;
    memcpy(&toff, data + 24, 8);
    memcpy(&n, data + 32, 4);
    if (n > 16 || toff > size || (size - toff) / 32 < n) return NULL;
    uint8_t *b = malloc(size);
    check(b != NULL, "malloc");
    memcpy(b, data, size);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = b + toff + 32 * i;
        uint64_t off, len;
        memcpy(&off, e + 8, 8);
        memcpy(&len, e + 16, 8);
        if (off > size || len > size - off) continue;
        uint32_t c = q8_crc32c(0, b + off, (size_t)len);
        memcpy(e + 24, &c, 4);
    }
    uint32_t h = q8_crc32c(0, b, 60);
    memcpy(b + 60, &h, 4);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    load_and_run(data, size);
    uint8_t *b = reseal(data, size);
    if (b) {
        load_and_run(b, size);
        free(b);
    }
    return 0;
}
