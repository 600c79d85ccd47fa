/* A model's INT8 ops on one GEMM path, in a session that shares the model
 * (pruned weights kept expanded: the dense kernels) against one that owns
 * it (pruned weights kept compressed where the path has an expander,
 * igemv_sparse.h), runs alternated: what keeping them compressed costs on a
 * path this CPU can run but would not pick (AVX2 on an AVX-512 CPU, say).
 * Not built by CMake: a developer tool. Build from the repository root
 * after a Release build:
 *   cc -O2 -Isrc/include -Isrc/core -Ikernels/cpu -Ikernels/cpu/gemm -Ikernels/common \
 *      tools/bench/path_bench.c build/libq8tools.a build/libq8.a -lpthread -lm -lz -lprotobuf-c \
 *      -o build/path_bench
 *   build/path_bench MODEL.q8 INPUT.npy PATH [THREADS [RUNS [ROUNDS]]]
 * PATH: c, avx2, avxvnni, avx512vnni (igemm.h's names). Prints, per round,
 * the median ms per run of each session, and the weight bytes each holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "graph.h"
#include "model.h"
#include "q8.h"
#include "q8_tools.h"

static void die(const char *what, const q8_error *err) {
    fprintf(stderr, "path_bench: %s: %s\n", what, err->msg);
    exit(1);
}

/* The model with every q8-domain node pinned to path (ops that do not read
 * _igemm_path ignore it). */
static q8_model *load_on(const char *path, const char *igemm) {
    q8_error err = {0};
    q8_model *m;
    if (q8_model_load(path, NULL, &m, &err) != Q8_OK) die(path, &err);
    for (int i = 0; i < m->g->n_nodes; i++) {
        q8_node *n = m->g->nodes[i];
        if (strcmp(n->domain, "q8") != 0) continue;
        q8_attr *a = q8_node_set_attr(n, "_igemm_path", Q8_ATTR_STRING);
        if (!a || !(a->s = strdup(igemm))) exit(1);
    }
    return m;
}

static double median_ms(q8_session *s, int runs) {
    q8_error err = {0};
    double *t = malloc(sizeof(double) * (size_t)runs);
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        if (q8_session_run(s, &err) != Q8_OK) die("run", &err);
        t[r] = 1e3 * (bench_now() - t0);
    }
    qsort(t, (size_t)runs, sizeof *t, bench_cmp_double);
    double m = t[runs / 2];
    free(t);
    return m;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: path_bench MODEL.q8 INPUT.npy PATH [THREADS [RUNS [ROUNDS]]]\n");
        return 2;
    }
    int threads = argc > 4 ? atoi(argv[4]) : 1, runs = argc > 5 ? atoi(argv[5]) : 200;
    int rounds = argc > 6 ? atoi(argv[6]) : 3;
    q8_error err = {0};
    q8_host_tensor *x;
    if (q8_tensor_file_read(argv[2], &x, &err) != Q8_OK) die(argv[2], &err);
    q8_session_options so = {.n_threads = threads, .device = Q8_DEVICE_CPU};
    q8_model *shared = load_on(argv[1], argv[3]), *owned = load_on(argv[1], argv[3]);
    q8_session *s[2];
    if (q8_session_create(shared, &so, &s[0], &err) != Q8_OK) die("session", &err);
    if (q8_session_create_owning(owned, &so, &s[1], &err) != Q8_OK) die("owning session", &err);
    for (int k = 0; k < 2; k++) {
        if (q8_session_set_input(s[k], NULL, x->dtype, x->dims, x->ndim, x->data, &err) != Q8_OK)
            die("input", &err);
        median_ms(s[k], runs / 4 + 1); /* warm */
    }
    q8_memory_info mi[2];
    for (int k = 0; k < 2; k++) q8_session_memory(s[k], &mi[k]);
    printf("path %s, %d threads: weights held %zu (sharing) / %zu (owning) bytes\n", argv[3],
           threads, mi[0].weights_bytes, mi[1].weights_bytes);
    for (int r = 0; r < rounds; r++) {
        double a = median_ms(s[0], runs), b = median_ms(s[1], runs);
        printf("round %d: sharing %.4f ms, owning %.4f ms, owning / sharing %.3f\n", r, a, b, b / a);
    }
    q8_session_free(s[0]);
    q8_session_free(s[1]);
    q8_model_free(shared);
    q8_host_tensor_free(x);
    return 0;
}
