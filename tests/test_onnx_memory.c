/* Importing an ONNX file holds its weights at most twice at the peak: the
 * file's bytes and the unpacked protos while protobuf-c unpacks, then the
 * unpacked protos and the graph's tensors while they are copied (the file's
 * bytes are freed as soon as they are unpacked). Before, all three were
 * alive at once: 3x. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "onnx_import.h"
#include "testutil.h"

#define MNIST Q8_SOURCE_DIR "/models/mnist"

/* AddressSanitizer keeps freed blocks in quarantine: peaks mean nothing there */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif
#define BIG_FLOATS (24 << 20) /* 96 MiB of weights */

/* mlp.onnx with one more (unused) initializer of BIG_FLOATS floats */
static size_t write_big_model(const char *out) {
    size_t len;
    uint8_t *buf = (uint8_t *)q8t_slurp(MNIST "/mlp.onnx", &len);
    cr_assert(buf);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    cr_assert(mp && mp->graph);
    Onnx__TensorProto big = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[2] = {BIG_FLOATS / 1024, 1024};
    big.name = "big";
    big.has_data_type = true;
    big.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    big.n_dims = 2;
    big.dims = dims;
    big.has_raw_data = true;
    big.raw_data.len = (size_t)BIG_FLOATS * 4;
    big.raw_data.data = malloc(big.raw_data.len);
    cr_assert(big.raw_data.data);
    for (size_t i = 0; i < (size_t)BIG_FLOATS; i++) ((float *)big.raw_data.data)[i] = (float)i;
    Onnx__GraphProto *g = mp->graph;
    Onnx__TensorProto **inits = malloc(sizeof(void *) * (g->n_initializer + 1));
    memcpy(inits, g->initializer, sizeof(void *) * g->n_initializer);
    inits[g->n_initializer] = &big;
    Onnx__TensorProto **old = g->initializer;
    g->initializer = inits;
    g->n_initializer++;
    size_t n = onnx__model_proto__get_packed_size(mp);
    uint8_t *o = malloc(n);
    cr_assert(o);
    onnx__model_proto__pack(mp, o);
    q8t_write_file(out, o, n);
    free(o);
    g->initializer = old;
    g->n_initializer--;
    free(inits);
    free(big.raw_data.data);
    onnx__model_proto__free_unpacked(mp, NULL);
    return n;
}

static long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) sscanf(line + strlen(key), "%ld", &v);
    if (f) fclose(f);
    return v;
}

Test(onnx_memory, import_holds_the_weights_at_most_twice, .timeout = 120) {
    if (UNDER_ASAN) cr_skip("AddressSanitizer's quarantine keeps freed memory resident");
    char path[] = "/tmp/q8_big_onnx_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    size_t file = write_big_model(path);
    /* a child with its peak reset (clear_refs 5), so the parent's history
     * does not count */
    pid_t pid = fork();
    if (pid == 0) {
        FILE *c = fopen("/proc/self/clear_refs", "w");
        if (!c || fputs("5", c) < 0 || fclose(c)) _exit(3);
        long before = status_kb("VmRSS:");
        q8_graph *g = NULL;
        q8_error err = {0};
        if (q8_onnx_load(path, &g, &err) != Q8_OK) _exit(4);
        long peak = status_kb("VmHWM:");
        int t = q8_graph_find(g, "big");
        if (t < 0 || ((const float *)g->tensors[t]->data)[BIG_FLOATS - 1] != BIG_FLOATS - 1)
            _exit(5);
        double x = (double)(peak - before) * 1024 / (double)file;
        fprintf(stderr, "import peak: %.2fx the %zu-byte file\n", x, file);
        _exit(x <= 2.2 ? 0 : 6);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    unlink(path);
    cr_assert(WIFEXITED(st), "the importing child died");
    /* qemu-user and some containers do not emulate clear_refs */
    if (WEXITSTATUS(st) == 3) cr_skip("cannot reset the peak (/proc/self/clear_refs)");
    cr_assert_neq(WEXITSTATUS(st), 4, "the model does not import");
    cr_assert_neq(WEXITSTATUS(st), 5, "the big initializer's values are wrong");
    cr_assert_eq(WEXITSTATUS(st), 0, "importing holds the weights more than twice at the peak");
}
