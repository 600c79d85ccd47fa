#define _GNU_SOURCE
/* Weights stored kernel-ready (src/core/layout.h, docs/format.md version 3):
 * quantize writes q8.QGemm's W as the INT8 GEMM's lanes and q8.QConv's W
 * with K % 4 != 0 as padded rows; a CPU session reads them in place from
 * the mapping and packs no weights (weights_bytes stays within 1.02x the
 * file), and gives byte for byte the outputs of the same model stored plain
 * (whose weights the session packs, the path old files take). */
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "igemv_sparse.h"
#include "layout.h"
#include "npy.h"
#include "q8.h"
#include "q8_tools.h"
#include "q8file.h"
#include "scale16.h"
#include "testutil.h"

/* prune > 0: that fraction of every layer, or with protect_ends of the
 * layers between the first and the last (by sensitivity), those dense. */
static void quantize_with(const char *name, const char *dir, double prune, bool protect_ends,
                          q8_compress_weights compress, char *out, size_t n) {
    char onnx[512];
    snprintf(onnx, sizeof onnx, Q8_SOURCE_DIR "/models/mnist/%s.onnx", name);
    snprintf(out, n, "%s/%s%s_c%d.q8", dir, name, prune > 0 ? "_pruned" : "", (int)compress);
    q8_quantize_options o = {.calib_dir = Q8_SOURCE_DIR "/models/mnist/calib",
                             .method = Q8_CALIB_PERCENTILE, .percentile = 99.99, .n_threads = 2,
                             .compress = compress};
    if (prune > 0) {
        o.prune.mode = Q8_PRUNE_UNSTRUCTURED;
        o.prune.fraction = prune;
        o.prune.sensitivity = o.prune.protect_ends = protect_ends;
    }
    q8_quantize_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(onnx, out, &o, &r, &err), Q8_OK, "%s", err.msg);
}

static void quantize_pruned(const char *name, const char *dir, double prune, char *out,
                            size_t n) {
    quantize_with(name, dir, prune, false, Q8_COMPRESS_AUTO, out, n);
}

static void quantize(const char *name, const char *dir, char *out, size_t n) {
    quantize_pruned(name, dir, 0, out, n);
}

/* Runs path on the shipped sample: output 0's bytes (malloc'd) and memory.
 * owning: the session owns the model, as q8run's does, and releases the
 * constants it reads only through what prepare made. */
static void *run_sample_as(const char *path, bool owning, size_t *nbytes, q8_memory_info *mi) {
    q8_tensor *x = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(Q8_SOURCE_DIR "/models/mnist/sample.npy", &x, &err), Q8_OK, "%s",
                 err.msg);
    q8_model *m = NULL;
    q8_session *s = NULL;
    q8_session_options so = {.n_threads = 2, .device = Q8_DEVICE_CPU};
    q8_tensor_info info;
    const void *y;
    cr_assert_eq(q8_model_load(path, NULL, &m, &err), Q8_OK, "%s: %s", path, err.msg);
    if (owning) cr_assert_eq(q8_session_create_owning(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    else cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, NULL, Q8_F32, x->dims, x->ndim, x->data, &err), Q8_OK,
                 "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_output(s, 0, &info, &y, &err), Q8_OK, "%s", err.msg);
    int64_t numel = 1;
    for (int d = 0; d < info.ndim; d++) numel *= info.dims[d];
    *nbytes = (size_t)numel * 4;
    void *copy = malloc(*nbytes);
    memcpy(copy, y, *nbytes);
    q8_session_memory(s, mi);
    q8_session_free(s);
    if (!owning) q8_model_free(m);
    q8_tensor_free(x);
    return copy;
}

static void *run_sample(const char *path, size_t *nbytes, q8_memory_info *mi) {
    return run_sample_as(path, false, nbytes, mi);
}

/* How many tensors of the file at path are stored in layout l. */
static int count_layout(const uint8_t *buf, size_t len, q8_layout l) {
    q8_graph *g = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(buf, len, &g, NULL, &err), Q8_OK, "%s", err.msg);
    int n = 0;
    for (int i = 0; i < g->n_tensors; i++) n += g->tensors[i]->layout == l;
    q8_graph_free(g);
    return n;
}

/* The size of a .q8 file's DATA section (the stored constants). */
static size_t data_bytes(const uint8_t *buf) {
    uint64_t toff, size = 0;
    uint32_t n, kind;
    memcpy(&toff, buf + 24, 8);
    memcpy(&n, buf + 32, 4);
    for (uint32_t i = 0; i < n; i++) {
        memcpy(&kind, buf + toff + 32 * i, 4);
        if (kind == 4) memcpy(&size, buf + toff + 32 * i + 16, 8);
    }
    cr_assert_gt(size, 0);
    return (size_t)size;
}

/* The same model with every weight stored plain: parsed (no params, so the
 * writer picks no layout), weights unpacked, written again. */
static void write_plain(const uint8_t *buf, size_t len, const char *path) {
    q8_graph *g = NULL;
    q8_meta meta = {0};
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(buf, len, &g, &meta, &err), Q8_OK, "%s", err.msg);
    for (int i = 0; i < g->n_tensors; i++) {
        q8_tensor *t = g->tensors[i];
        if (t->layout == Q8_LAYOUT_PLAIN) continue;
        const void *plain;
        void *tmp;
        cr_assert_eq(q8_tensor_plain(t, &plain, &tmp, &err), Q8_OK, "%s", err.msg);
        t->data = tmp;
        t->owns_data = true;
        t->layout = Q8_LAYOUT_PLAIN;
    }
    cr_assert_eq(q8_file_write(path, g, &meta, &err), Q8_OK, "%s", err.msg);
    q8_meta_free(&meta);
    q8_graph_free(g);
}

Test(layouts, cpu_sessions_read_weights_in_place, .timeout = 300) {
    char *dir = q8t_tmpdir("layouts");
    const char *names[] = {"mlp", "cnn"};
    for (int i = 0; i < 2; i++) {
        char path[512], plain_path[512];
        quantize(names[i], dir, path, sizeof path);
        size_t len;
        uint8_t *buf = (uint8_t *)q8t_slurp(path, &len);
        /* both MNIST models' q8.QGemm weights have N % 16 == 0 somewhere (the
         * CNN's first conv, K = 9, would grow by a third as rows4: plain) */
        cr_assert_gt(count_layout(buf, len, Q8_LAYOUT_LANES16), 0, "%s: no lanes", names[i]);
        snprintf(plain_path, sizeof plain_path, "%s/%s_plain.q8", dir, names[i]);
        write_plain(buf, len, plain_path);

        size_t n_laid, n_plain;
        q8_memory_info m_laid, m_plain;
        void *y_laid = run_sample(path, &n_laid, &m_laid);
        void *y_plain = run_sample(plain_path, &n_plain, &m_plain);
        cr_assert_eq(n_laid, n_plain);
        cr_assert(memcmp(y_laid, y_plain, n_laid) == 0, "%s: outputs differ", names[i]);
        /* no packed copy beside the mapping: the per-channel sums and
         * requantization tables are all a session adds to the stored
         * constants (3.5% on the CNN; a copy would double them). Measured
         * against DATA, not the file: version 4 dropped the 4 KiB page gap
         * of small files, which had been this bound's slack. */
        size_t data = data_bytes(buf);
        cr_assert_leq((double)m_laid.weights_bytes, 1.05 * (double)data,
                      "%s: %zu weight bytes for %zu bytes of DATA", names[i],
                      m_laid.weights_bytes, data);
        /* the plain file's session packs what the laid-out one reads in place */
        cr_assert_gt(m_plain.weights_bytes, m_laid.weights_bytes + len / 4, "%s", names[i]);
        free(y_laid);
        free(y_plain);
        free(buf);
    }
    q8t_rm_rf(dir);
    free(dir);
}

/* Packing and unpacking are inverse, padding is zero, and a row reads back
 * (taps: a conv weight's kernel size, which taps4 arranges by). */
Test(layouts, pack_unpack_round_trip) {
    const int64_t shapes[][3] = {{1, 1, 1},  {3, 5, 1},  {16, 4, 1}, {17, 27, 9},
                                 {40, 64, 1}, {5, 30, 3}, {4, 18, 9}, {2, 64, 4}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        q8_wshape ws = {shapes[s][0], shapes[s][1], shapes[s][2]};
        int64_t n = ws.n, k = ws.k;
        int8_t *src = malloc((size_t)(n * k)), *back = malloc((size_t)(n * k)), row[64];
        for (int64_t i = 0; i < n * k; i++) src[i] = (int8_t)(i * 37 % 255 - 127);
        for (int l = Q8_LAYOUT_PLAIN; l < Q8_LAYOUT_COUNT; l++) {
            size_t bytes = q8_layout_bytes((q8_layout)l, ws);
            cr_assert_geq(bytes, (size_t)(n * k));
            int8_t *packed = malloc(bytes);
            q8_layout_pack((q8_layout)l, src, ws, packed);
            cr_assert(q8_layout_padding_zero((q8_layout)l, packed, ws));
            q8_layout_unpack((q8_layout)l, packed, ws, back);
            cr_assert(memcmp(src, back, (size_t)(n * k)) == 0, "%s %lldx%lld",
                      q8_layout_name((q8_layout)l), (long long)n, (long long)k);
            q8_layout_row((q8_layout)l, packed, ws, n - 1, row);
            cr_assert(memcmp(row, src + (n - 1) * k, (size_t)k) == 0);
            if (bytes > (size_t)(n * k)) { /* a padding byte set is seen */
                int8_t *u = malloc((size_t)(n * k));
                memset(u, 0, (size_t)(n * k));
                q8_layout_unpack((q8_layout)l, packed, ws, u);
                bool found = false;
                for (size_t b = 0; b < bytes && !found; b++) {
                    packed[b] ^= 1;
                    q8_layout_unpack((q8_layout)l, packed, ws, back);
                    if (memcmp(u, back, (size_t)(n * k)) == 0) {
                        cr_assert(!q8_layout_padding_zero((q8_layout)l, packed, ws));
                        found = true;
                    }
                    packed[b] ^= 1;
                }
                cr_assert(found);
                free(u);
            }
            free(packed);
        }
        free(src);
        free(back);
    }
}

/* Runs a .q8 on x [1][2][6][6] (the fuzzing seeds' model): output bytes. */
static void run_tiny(const char *path, const float *x, float y[4], q8_memory_info *mi) {
    q8_model *m = NULL;
    q8_session *s = NULL;
    q8_error err = {0};
    q8_session_options so = {.n_threads = 1, .device = Q8_DEVICE_CPU};
    const int64_t dims[4] = {1, 2, 6, 6};
    q8_tensor_info info;
    const void *out;
    cr_assert_eq(q8_model_load(path, NULL, &m, &err), Q8_OK, "%s: %s", path, err.msg);
    cr_assert_eq(q8_session_create(m, &so, &s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_set_input(s, NULL, Q8_F32, dims, 4, x, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_run(s, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_session_output(s, 0, &info, &out, &err), Q8_OK, "%s", err.msg);
    memcpy(y, out, 4 * sizeof(float));
    q8_session_memory(s, mi);
    q8_session_free(s);
    q8_model_free(m);
}

/* A version 2 file (no layouts: the session packs) still loads, and gives
 * the outputs of the same model written as version 3 (its conv weight, K =
 * 18, stored as rows4 and read in place); both are old seeds, made by the
 * q8 of their time. */
Test(layouts, version_2_files_still_run) {
    const char *v2 = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny_v2.q8";
    const char *v3 = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny_v3.q8";
    size_t len;
    uint8_t *buf = (uint8_t *)q8t_slurp(v3, &len);
    cr_assert_gt(count_layout(buf, len, Q8_LAYOUT_ROWS4), 0);
    uint32_t ver;
    memcpy(&ver, buf + 8, 4);
    cr_assert_eq(ver, 3);
    free(buf);
    float x[72], y2[4], y3[4];
    q8t_rng r = q8t_seed(3);
    q8t_fill(&r, x, 72, -2, 2);
    q8_memory_info m2, m3;
    run_tiny(v2, x, y2, &m2);
    run_tiny(v3, x, y3, &m3);
    cr_assert(memcmp(y2, y3, sizeof y2) == 0);
    cr_assert_lt(m3.weights_bytes, m2.weights_bytes, "rows4 in place: %zu vs %zu",
                 m3.weights_bytes, m2.weights_bytes);
}

/* Version 4 (compact GRAPH and META) and the same model written as version
 * 3: a smaller file, the same outputs and the same resident weights. The
 * version 6 seed (tiny_v6.q8, made from the same model by a q8 before
 * 16-bit scales) gives the same outputs too. */
Test(layouts, version_4_runs_as_version_3) {
    const char *v4 = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny_v4.q8";
    const char *now = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny_v6.q8";
    size_t len4, len3;
    uint8_t *buf = (uint8_t *)q8t_slurp(v4, &len4), *b3;
    uint32_t ver;
    memcpy(&ver, buf + 8, 4);
    cr_assert_eq(ver, 4);
    q8_graph *g = NULL;
    q8_meta meta = {0};
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(buf, len4, &g, &meta, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_file_encode_version(g, &meta, 3, &b3, &len3, &err), Q8_OK, "%s", err.msg);
    cr_assert_lt(len4 * 2, len3, "version 4: %zu bytes, version 3: %zu", len4, len3);
    char *dir = q8t_tmpdir("layouts"), v3[512];
    snprintf(v3, sizeof v3, "%s/tiny_v3.q8", dir);
    q8t_write_file(v3, b3, len3);
    float x[72], y3[4], y4[4];
    q8t_rng r = q8t_seed(3);
    q8t_fill(&r, x, 72, -2, 2);
    q8_memory_info m3, m4;
    run_tiny(v3, x, y3, &m3);
    run_tiny(v4, x, y4, &m4);
    cr_assert(memcmp(y3, y4, sizeof y3) == 0);
    cr_assert_eq(m4.weights_bytes, m3.weights_bytes);
    float y_now[4];
    q8_memory_info m_now;
    run_tiny(now, x, y_now, &m_now);
    cr_assert(memcmp(y_now, y4, sizeof y4) == 0);
    uint8_t *b_now = (uint8_t *)q8t_slurp(now, &len3);
    memcpy(&ver, b_now + 8, 4);
    cr_assert_eq(ver, 6);
    free(b_now);
    q8_meta_free(&meta);
    q8_graph_free(g);
    free(buf);
    free(b3);
    q8t_rm_rf(dir);
    free(dir);
}

/* Version 7: its seed (tiny_v7.q8, the seed of version 7's time) stores
 * its weight scales in 16 bits; written again as version 6 (float32
 * scales) it gives the same outputs byte for byte: the widened scales are
 * the floats quantize chose. This q8's seed (tiny.q8, this version) and
 * the same graph written as version 7 give the same outputs, and so do
 * version 8's and 9's seeds (tiny_v8.q8, tiny_v9.q8). */
Test(layouts, scales16_run_as_float32_scales) {
    const char *now = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny_v7.q8";
    const char *v8 = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny.q8";
    const char *old8 = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny_v8.q8";
    const char *old9 = Q8_SOURCE_DIR "/tests/fuzz/seeds_q8/tiny_v9.q8";
    size_t len, len6;
    uint8_t *buf = (uint8_t *)q8t_slurp(now, &len), *b6;
    uint32_t ver;
    memcpy(&ver, buf + 8, 4);
    cr_assert_eq(ver, 7);
    q8_graph *g = NULL;
    q8_meta meta = {0};
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(buf, len, &g, &meta, &err), Q8_OK, "%s", err.msg);
    int n16 = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        uint32_t base;
        const q8_tensor *t = g->tensors[i];
        n16 += t->data && t->q.n > 1 && q8_scale16_fits(t->q.scale, t->q.n, &base);
    }
    cr_assert_eq(n16, 2, "the conv's and the Gemm's weights");
    cr_assert_eq(q8_file_encode_version(g, &meta, 6, &b6, &len6, &err), Q8_OK, "%s", err.msg);
    char *dir = q8t_tmpdir("layouts"), v6[512];
    snprintf(v6, sizeof v6, "%s/tiny_as_v6.q8", dir);
    q8t_write_file(v6, b6, len6);
    float x[72], y6[4], y7[4];
    q8t_rng r = q8t_seed(3);
    q8t_fill(&r, x, 72, -2, 2);
    q8_memory_info m6, m7;
    run_tiny(v6, x, y6, &m6);
    run_tiny(now, x, y7, &m7);
    cr_assert(memcmp(y6, y7, sizeof y6) == 0);
    cr_assert_eq(m6.weights_bytes, m7.weights_bytes);
    /* the version 8 seed (this q8's quantize: other numbers) and the same
     * graph written as version 7 */
    size_t len8, len7;
    uint8_t *buf8 = (uint8_t *)q8t_slurp(v8, &len8), *b7;
    q8_graph *g8 = NULL;
    q8_meta meta8 = {0};
    memcpy(&ver, buf8 + 8, 4);
    cr_assert_eq(ver, Q8_FILE_VERSION);
    cr_assert_eq(q8_file_parse(buf8, len8, &g8, &meta8, &err), Q8_OK, "%s", err.msg);
    cr_assert_eq(q8_file_encode_version(g8, &meta8, 7, &b7, &len7, &err), Q8_OK, "%s", err.msg);
    char v7[512];
    snprintf(v7, sizeof v7, "%s/tiny_as_v7.q8", dir);
    q8t_write_file(v7, b7, len7);
    float y8[4], y8as7[4];
    q8_memory_info m8, m87;
    run_tiny(v8, x, y8, &m8);
    run_tiny(v7, x, y8as7, &m87);
    cr_assert(memcmp(y8, y8as7, sizeof y8) == 0, "this version's seed as version 7");
    float yold[4];
    q8_memory_info mold;
    run_tiny(old8, x, yold, &mold);
    cr_assert(memcmp(y8, yold, sizeof y8) == 0, "the version 8 seed");
    run_tiny(old9, x, yold, &mold);
    cr_assert(memcmp(y8, yold, sizeof y8) == 0, "the version 9 seed");
    q8_meta_free(&meta8);
    q8_graph_free(g8);
    free(buf8);
    free(b7);
    q8_meta_free(&meta);
    q8_graph_free(g);
    free(buf);
    free(b6);
    q8t_rm_rf(dir);
    free(dir);
}

/* A layout tag that parses (the sizes agree) but is not what the weight's
 * readers read is refused at load, naming the tensor. */
Test(layouts, wrong_layout_for_the_readers_is_refused, .timeout = 300) {
    char *dir = q8t_tmpdir("layouts");
    char path[512], bad[512];
    quantize("mlp", dir, path, sizeof path);
    size_t len;
    uint8_t *buf = (uint8_t *)q8t_slurp(path, &len);
    q8_graph *g = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_file_parse(buf, len, &g, NULL, &err), Q8_OK, "%s", err.msg);
    const q8_tensor *t = NULL;
    for (int i = 0; i < g->n_tensors && !t; i++) { /* lanes16 of the size of rows4 */
        int64_t n, k;
        const q8_tensor *c = g->tensors[i];
        if (c->layout == Q8_LAYOUT_LANES16 && q8_layout_nk(c, &n, &k) && n % 16 == 0 && k % 4 == 0)
            t = c;
    }
    cr_assert(t);
    /* written again as version 3, whose records are fixed-width (the check
     * is the loader's, the same for every version) */
    uint8_t *v3;
    cr_assert_eq(q8_file_encode_version(g, NULL, 3, &v3, &len, &err), Q8_OK, "%s", err.msg);
    free(buf);
    buf = v3;
    /* the GRAPH section: the second entry of the table at 64 */
    uint64_t goff, gsize;
    memcpy(&goff, buf + 64 + 32 + 8, 8);
    memcpy(&gsize, buf + 64 + 32 + 16, 8);
    size_t nl = strlen(t->name);
    uint8_t *p = memmem(buf + goff, gsize, t->name, nl);
    cr_assert(p);
    cr_assert_eq(p[nl + 4], Q8_LAYOUT_LANES16);
    p[nl + 4] = Q8_LAYOUT_ROWS4;
    uint32_t c = q8_crc32c(0, buf + goff, gsize);
    memcpy(buf + 64 + 32 + 24, &c, 4);
    char name[256];
    snprintf(name, sizeof name, "%s", t->name);
    q8_graph_free(g);
    snprintf(bad, sizeof bad, "%s/bad.q8", dir);
    q8t_write_file(bad, buf, len);
    q8_model *m = NULL;
    cr_assert_neq(q8_model_load(bad, NULL, &m, &err), Q8_OK);
    cr_assert(strstr(err.msg, name) && strstr(err.msg, "stored in layout rows4") &&
                  strstr(err.msg, "read layout lanes16"),
              "%s", err.msg);
    free(buf);
    q8t_rm_rf(dir);
    free(dir);
}

/* Pruned weights stay compact in the file (bitmask-encoded or deflated) and
 * are expanded once at load straight into the kernels' layout: a session
 * holds no more than the dense model's weights (before: the expansion plus
 * a packed copy). Where the CPU has the compressed kernels (igemv_sparse.h:
 * AVX-512 VBMI2), a session that owns its model, as q8run's, keeps the
 * pruned q8.QGemm and q8.QConv weights compressed instead of the
 * expanded copy, and holds less than the dense model (the MNIST MLP at
 * 50%: about 0.65); one that shares the model, whose expanded copy stays,
 * adds nothing to it. */
Test(layouts, pruned_weights_are_expanded_once, .timeout = 300) {
    char *dir = q8t_tmpdir("layouts");
    char dense[512], pruned[512];
    quantize("mlp", dir, dense, sizeof dense);
    quantize_pruned("mlp", dir, 0.5, pruned, sizeof pruned);
    size_t nd, np, dense_len, pruned_len;
    free(q8t_slurp(dense, &dense_len));
    free(q8t_slurp(pruned, &pruned_len));
    cr_assert_lt(pruned_len, dense_len * 3 / 4, "the pruned file is not smaller");
    for (int owning = 0; owning < 2; owning++) {
        q8_memory_info md, mp;
        free(run_sample_as(dense, owning, &nd, &md));
        free(run_sample_as(pruned, owning, &np, &mp));
        double most = owning && q8_isp_kept(Q8_IGEMM_AUTO) ? 0.75 : 1.02;
        cr_assert_leq((double)mp.weights_bytes, most * (double)md.weights_bytes,
                      "owning %d, pruned: %zu weight bytes, dense: %zu", owning, mp.weights_bytes,
                      md.weights_bytes);
    }
    q8t_rm_rf(dir);
    free(dir);
}

/* --compress-weights: a pruned model's dense weights (its protected first
 * and last layers) are deflated too by default (auto), a dense model's
 * only when asked (on); either way the file is smaller than without it,
 * the outputs are the same bytes, and the session holds the same weight
 * bytes (inflated into memory instead of mapped). */
Test(layouts, compressed_weights_same_outputs_smaller_file, .timeout = 300) {
    char *dir = q8t_tmpdir("layouts");
    for (int pruned = 0; pruned < 2; pruned++) {
        char plain[512], small[512];
        double prune = pruned ? 0.5 : 0;
        quantize_with("mlp", dir, prune, true, Q8_COMPRESS_OFF, plain, sizeof plain);
        quantize_with("mlp", dir, prune, true, pruned ? Q8_COMPRESS_AUTO : Q8_COMPRESS_ON, small,
                      sizeof small);
        size_t plain_len, small_len, n1, n2;
        free(q8t_slurp(plain, &plain_len));
        free(q8t_slurp(small, &small_len));
        cr_assert_lt(small_len, plain_len * 15 / 16, "pruned %d: %zu bytes compressed, %zu not",
                     pruned, small_len, plain_len);
        q8_memory_info m1, m2;
        void *y1 = run_sample(plain, &n1, &m1), *y2 = run_sample(small, &n2, &m2);
        cr_assert_eq(n1, n2);
        cr_assert_eq(memcmp(y1, y2, n1), 0, "pruned %d: outputs differ", pruned);
        cr_assert_eq(m1.weights_bytes, m2.weights_bytes, "pruned %d: %zu vs %zu", pruned, m1.weights_bytes, m2.weights_bytes);
        free(y1);
        free(y2);
    }
    char dense[512];
    quantize_with("mlp", dir, 0, false, Q8_COMPRESS_AUTO, dense, sizeof dense);
    char off[512];
    quantize_with("mlp", dir, 0, false, Q8_COMPRESS_OFF, off, sizeof off);
    size_t a, b;
    char *da = q8t_slurp(dense, &a), *db = q8t_slurp(off, &b);
    cr_assert(a == b && !memcmp(da, db, a), "auto on a dense model: as off");
    free(da);
    free(db);
    q8t_rm_rf(dir);
    free(dir);
}
