/* libFuzzer harness: the whole ONNX load pipeline from a buffer (parse,
 * import, passes), then, for graphs small enough, a CPU session that runs
 * once on zeros. Any crash, leak, sanitizer report, assertion or hang is a
 * bug; a failure must come with a message. External data is read from a
 * temp folder holding one 64-byte file, data.bin. */
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "onnx_import.h"
#include "passes.h"

/* Sessions run for graphs whose tensors hold at most this much: enough for
 * every kernel path, and little enough that legitimate work (a 2^19-point
 * chirp-z DFT, a large MatMul) stays well inside the 10 s timeout of an
 * ASan build. */
#define MAX_SESSION_BYTES (4u << 20)

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_onnx: invariant broken: %s\n", what);
        abort();
    }
}

/* A failure is one non-empty line... or at least non-empty. */
static void check_failure(q8_status s, const q8_error *err) {
    check(s != Q8_OK && err->status == s, "status and err.status differ");
    check(err->msg[0] != 0, "failure without a message");
}

/* Give every dynamic or unknown input dim the value 2 (rank 1 if unknown). */
static int fix_shapes(const q8_graph *g, q8_input_shape *shapes, int max) {
    int n = 0;
    for (int i = 0; i < g->n_inputs && n < max; i++) {
        const q8_tensor *t = g->tensors[g->inputs[i]];
        if (t->shape_known) continue;
        q8_input_shape *s = &shapes[n++];
        s->name = t->name;
        s->ndim = t->ndim < 0 ? 1 : t->ndim;
        for (int d = 0; d < s->ndim; d++)
            s->dims[d] = t->ndim < 0 || t->dims[d] < 0 ? 2 : t->dims[d];
    }
    return n;
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

static void run_session(q8_graph *g) {
    q8_model *m = NULL;
    q8_error err = {0};
    if (q8_model_from_graph(g, "fuzz", &m, &err) != Q8_OK) return; /* g freed */
    q8_session *s = NULL;
    q8_session_options so = {.n_threads = 1};
    q8_status st = q8_session_create(m, &so, &s, &err);
    if (st != Q8_OK) {
        check_failure(st, &err);
        q8_model_free(m);
        return;
    }
    for (int i = 0; i < q8_model_num_inputs(m); i++) {
        q8_tensor_info info;
        q8_model_input_info(m, i, &info, NULL);
        int64_t numel = 1;
        for (int d = 0; d < info.ndim; d++) numel *= info.dims[d];
        size_t bytes = (size_t)numel * q8_dtype_size(info.dtype);
        void *zeros = calloc(1, bytes ? bytes : 1);
        check(zeros != NULL, "calloc");
        st = q8_session_set_input(s, info.name, info.dtype, info.dims, info.ndim, zeros, &err);
        free(zeros);
        if (st != Q8_OK) check_failure(st, &err);
    }
    st = q8_session_run(s, &err);
    if (st != Q8_OK) check_failure(st, &err);
    q8_session_free(s);
    q8_model_free(m);
}

static char base_dir[64] = "/tmp/q8fuzzXXXXXX", data_file[96];

static void cleanup(void) {
    unlink(data_file);
    rmdir(base_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    check(mkdtemp(base_dir) != NULL, "mkdtemp");
    snprintf(data_file, sizeof data_file, "%s/data.bin", base_dir);
    FILE *f = fopen(data_file, "wb");
    check(f != NULL, "fopen data.bin");
    for (int i = 0; i < 64; i++) fputc(i * 7, f);
    fclose(f);
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    q8_graph *g = NULL;
    q8_error err = {0};
    q8_status s = q8_onnx_parse(data, size, base_dir, &g, &err);
    if (s != Q8_OK) {
        check_failure(s, &err);
        check(g == NULL, "graph returned on failure");
        return 0;
    }
    q8_input_shape shapes[64];
    q8_load_options lo = {.input_shapes = shapes, .n_input_shapes = fix_shapes(g, shapes, 64)};
    s = q8_passes_run(g, &lo, &err);
    if (s != Q8_OK) {
        check_failure(s, &err);
        q8_graph_free(g);
        return 0;
    }
    if (small_enough(g)) run_session(g); /* takes g */
    else q8_graph_free(g);
    return 0;
}
